// The ftplan command line: a registry of subcommands (one file each) over the core library.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "catalog/smi_csv.hpp"
#include "memory/overheads.hpp"
#include "server/commands.hpp"
#include "workload/quant_format.hpp"
#include "workload/trainer_file.hpp"

namespace ftplan {
struct RunsFile;
struct CheckpointInventory;
}  // namespace ftplan

namespace ftplan::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitUserError = 2;

// A model with where it came from and, when asked for or needed, its checkpoint's inventory read
// from safetensors headers.
struct ModelSource {
  ModelPtr model;
  std::string origin;  // "catalog", "folder …", "Hugging Face cache …", "downloaded …", a path
  std::shared_ptr<const CheckpointInventory> checkpoint;  // null: no safetensors headers at hand
  std::string checkpoint_origin;
  bool counted_from_checkpoint = false;  // a model_type ftplan does not know, counted from headers
};

// What a subcommand works with: the catalog (built-in data plus --data folders) and the streams.
class Context {
 public:
  // `in_stream`: what a file option given as `-` reads (null: std::cin).
  Context(std::ostream& out_stream, std::ostream& err_stream, std::istream* in_stream = nullptr)
      : out(out_stream), err(err_stream), in_(in_stream) {}

  std::ostream& out;
  std::ostream& err;

  const Catalog& catalog();
  // The runtime overheads table of the catalog (data/runtime/overheads.yaml), parsed once.
  const RuntimeOverheads& overheads();
  // The software stacks of the catalog (data/stacks/), parsed once.
  const Stacks& stacks();
  // The quantized base formats of the catalog (data/quant_formats.yaml), parsed once.
  const QuantFormats& quant_formats();
  // A catalog id, a Hugging Face id (org/name[@revision]), a folder holding config.json, or a
  // path to a Hugging Face config.json (see resolve_model_source).
  ModelPtr resolve_model(const std::string& id_or_path);
  // A model a file (runs file, measured runs) names: a path (a config.json, a folder holding
  // one) relative to that file's folder; a catalog id, a Hugging Face id or a path that is not
  // there beside the file stays as written.
  ModelPtr resolve_model_beside(const std::string& file, const std::string& id_or_path);
  // The model and its files. In order: a catalog id; a catalog model whose hf_repo is the id
  // (case-insensitive, no revision); a config.json file (safetensors beside it are its
  // checkpoint); the Hugging Face cache; ftplan's cache; a folder holding config.json; online, a
  // download of config.json and the safetensors headers. `want_checkpoint`: read the headers
  // when there are any (a catalog model's only from the local caches). `safetensors`: a
  // .safetensors file or index to read instead.
  ModelSource resolve_model_source(const std::string& id_or_path, bool want_checkpoint,
                                   const std::string& safetensors = {});
  // A catalog id (or a name nvidia-smi prints), a path to a card file in the data/gpus schema, or
  // `local` (the card of this machine, from nvidia-smi) / `local:FILE` (from a saved output).
  const GpuSpec& resolve_gpu(const std::string& id_or_path);
  // The cards of this machine: the output of nvidia-smi (kSmiQuery), or of FILE when given. A
  // missing nvidia-smi is a UserError saying so. Parsed once per file.
  const DetectedMachine& detect_machine(const std::string& csv_file = "");
  // `local` or `local:FILE` (see resolve_gpu).
  static bool is_local_gpu(const std::string& arg) {
    return arg == "local" || arg.starts_with("local:");
  }
  // For `--gpu local` / `local:FILE`: the machine's one kind of card and its count (a UserError
  // for a machine with several kinds, or with a card the catalog lacks).
  const DetectedGroup& local_card(const std::string& arg);
  // Reads a whole file; `-` is standard input (read once: a second option that names it is a
  // UserError). A missing file, a directory or an unreadable file is a UserError naming it; a
  // pipe or device (/dev/stdin, <(command)) is read like a file.
  std::string read_file(const std::string& path, const std::string& field);

  // Writes a whole file (replacing it, see write_whole_file); not through the API.
  void write_file(const std::string& path, std::string_view text, const std::string& field);
  // The regular files directly in `dir` whose names end in `suffix`, sorted; a missing folder is
  // a UserError naming `field`.
  std::vector<std::string> list_files(const std::string& dir, std::string_view suffix,
                                      const std::string& field);

  std::vector<std::string> data_dirs;  // --data (and FTPLAN_DATA)
  // --lang: the language reasons are worded in (en when empty); `report` and `words` have their
  // own --lang for all their words.
  std::string lang;
  // Calibration files used when a command gets no --calibration (FTPLAN_CALIBRATION_DIR): every
  // *.yaml in it, each for the card it names. Empty: none.
  std::string calibration_dir;
  // False for requests from the network: no file is read, only catalog ids and `inline_files`.
  bool allow_files = true;
  // Texts handed in with a request (a pasted config.json, a runs document), by the name the
  // command line uses for them (server::CommandCall::inline_files). read_file() looks here first.
  std::map<std::string, std::string, std::less<>> inline_files;
  // What --from read: each trainer file, and per used setting why it was not applied ("" when it
  // was).
  struct FromFile {
    TrainerFile file;
    std::vector<std::string> not_applied;
    // A file another one names by path (a DeepSpeed config): that file and its key.
    std::string named_by_file, named_by_key;
  };
  std::vector<FromFile> from_files;

 private:
  const Catalog* catalog_ = nullptr;  // the shared built-in catalog, or own_
  std::unique_ptr<Catalog> own_;      // built when --data or a card file extends the catalog
  std::unique_ptr<RuntimeOverheads> overheads_;
  std::unique_ptr<Stacks> stacks_;
  std::unique_ptr<QuantFormats> quant_formats_;
  std::vector<std::unique_ptr<std::string>> texts_;               // file texts that outlive parsing
  std::map<std::string, DetectedMachine, std::less<>> machines_;  // by CSV file ("": nvidia-smi)
  std::istream* in_ = nullptr;  // standard input for `-` (null: std::cin)
  // Hugging Face ids already read as their base model: the note is written once per command,
  // however many runs name the id.
  std::set<std::string, std::less<>> based_;
  std::string stdin_field_;  // the option that read standard input ("": none yet)
  std::string stdin_text_;
};

// The file name that means standard input.
inline constexpr std::string_view kStandardInput = "-";

// Writes `text` as the whole file `path`: to a temporary file in the same folder, then renamed
// over it, so that a failed write leaves the old file as it was (a device such as /dev/stdout is
// written in place). A failure is a UserError (field `field`) that says what failed.
void write_whole_file(const std::string& path, std::string_view text, const std::string& field);

// The built-in catalog, parsed once per process and shared (read-only) by every command.
const Catalog& builtin_catalog();

// A subcommand: `setup` adds it to the app and returns what runs when it was chosen.
struct Command {
  std::string name;
  std::string description;
  std::function<std::function<void()>(CLI::App& sub, Context& ctx)> setup;
  int order = 100;  // position in --help
};

// Subcommand files register themselves at start-up: `static const bool r =
// register_command({...});`
bool register_command(Command c);

// Runs the command line `args` (without the program name). Returns the exit code. `in`: what a
// file given as `-` reads.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        std::istream& in);

// "X.Y.Z": the version of ftplan (CMake's project version).
std::string version();

// Every registered command added to `app` as `ftplan` has them (their actions are dropped: for
// help texts and completion scripts that walk the options).
void add_all_commands(CLI::App& app, Context& ctx);

// Runs one command with output to ctx.out and lets errors through as exceptions (UserError,
// CLI::ParseError), for front ends that report them in their own way (the HTTP API).
// Returns false when only help was printed.
bool execute(const std::vector<std::string>& args, Context& ctx);

// The commands as the HTTP API runs them: no file is read (only catalog ids and the texts handed
// in), output to the given stream, a parse error as a UserError naming its option; the built-in
// catalog is parsed before the first request.
server::Commands server_commands();
// The same commands, once per process, with what they read loaded (for in-process callers that
// hand every request to the API's handler: the Python module, the page's WebAssembly engine).
const server::Commands& loaded_server_commands();

// The version of every JSON document ftplan prints (schemas/*.schema.json): raised when a key is
// removed, renamed or changes its type; adding a key keeps it.
inline constexpr int kJsonSchemaVersion = 1;

// Prints `doc`, the JSON output of schema `schema` (schemas/<schema>.schema.json), with its
// schema_version and, when trainer files were read (--from), what was taken from them.
void print_json(Context& ctx, std::string_view schema, nlohmann::json doc);

// The registered commands' names, in --help order.
std::vector<std::string> command_names();

// The options `command` takes, as the HTTP API names them (snake_case keys).
std::vector<server::OptionInfo> command_options(const std::string& command);

// The option an unexpected-argument or conversion error of CLI11 is about ("--rank"), if any.
std::string option_of_parse_error(const std::string& message);

// A runs file (ftplan plan/report/sweep): FILE, or the built-in seed runs when `path` is empty.
// (ftplan::RunsFile is declared in plan/runs.hpp.)
// `from`: trainer files whose settings every run takes where it sets nothing itself.
ftplan::RunsFile load_runs(Context& ctx, const std::string& path,
                           const std::vector<std::string>& from = {});

// The built-in data as DataFiles (embedded at build time).
std::vector<DataFile> builtin_data_files();

}  // namespace ftplan::cli
