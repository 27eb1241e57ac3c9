#include "cli/cli.hpp"
#include "cli/from_files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

#include "catalog/preparsed_yaml.hpp"
#include "cli/hf_hub.hpp"
#include "cli/numbers.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/utf8.hpp"
#include "core/work_budget.hpp"
#include "embedded_files.hpp"
#include "model/checkpoint.hpp"
#include "model/config_reader.hpp"
#include "plan/runs.hpp"
#include "render/reason_words.hpp"
#include "render/table.hpp"

namespace ftplan::cli {

namespace fs = std::filesystem;

namespace {

std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

// The output of kSmiQuery; a missing nvidia-smi (or one that fails) is a UserError saying so.
std::string run_nvidia_smi() {
  const std::string command = std::string(kSmiQuery) + " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe)
    throw UserError(ErrorCode::kUnsupported, "could not start nvidia-smi to detect the cards",
                    "detect");
  std::string out;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0 && out.size() < (1u << 20))
    out.append(buffer, n);
  const int status = ::pclose(pipe);
  const int code = status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 127)
    throw UserError(ErrorCode::kUnsupported,
                    "nvidia-smi was not found: this machine has no NVIDIA driver (or it is not on "
                    "PATH). Run `" +
                        std::string(kSmiQuery) +
                        "` where the cards are and pass its output with --detect FILE (or "
                        "--gpu local:FILE), or name the card with --gpu ID",
                    "detect");
  if (code != 0)
    throw UserError(ErrorCode::kUnsupported,
                    fmt::format("nvidia-smi failed (exit status {}): {}", code, out.substr(0, 300)),
                    "detect");
  return out;
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.find('\\') != std::string::npos ||
         (s.size() > 5 && (s.ends_with(".json") || s.ends_with(".yaml") || s.ends_with(".yml")));
}

}  // namespace

bool register_command(Command c) {
  registry().push_back(std::move(c));
  return true;
}

std::vector<DataFile> builtin_data_files() {
  // Their YAML was parsed at build time: parse_document() reads them in that form.
  static const bool registered = [] {
    std::map<std::string_view, std::string_view> forms;
    for (const auto& f : embedded::preparsed_files())
      forms.emplace(f.path, f.text);
    for (const auto& f : embedded::files())
      if (auto it = forms.find(f.path); it != forms.end()) register_preparsed(f.text, it->second);
    return true;
  }();
  (void)registered;
  std::vector<DataFile> files;
  for (const auto& f : embedded::files())
    if (f.path.starts_with("data/")) files.push_back({std::string(f.path), f.text, {}});
  return files;
}

namespace {

constexpr std::uintmax_t kMaxInputBytes = 64u << 20;

// All of `in`, at most kMaxInputBytes (false when there was more, or reading failed).
bool read_stream(std::istream& in, std::string& text) {
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes) return false;
  }
  return in.eof();
}

}  // namespace

std::string Context::read_file(const std::string& path, const std::string& field) {
  if (auto it = inline_files.find(path); it != inline_files.end()) return it->second;
  const std::string given_for = field.empty() ? "input" : field;
  if (!allow_files)
    throw UserError(
        ErrorCode::kUnsupported,
        fmt::format("{} '{}': files cannot be read through the API; give a catalog id or pass the "
                    "document's content in the request",
                    given_for, path),
        field);
  if (path == kStandardInput) {
    // Read once; the same option may read it again (a runs file's --from is read twice).
    if (!stdin_field_.empty() && stdin_field_ != given_for)
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("'-' (standard input) is given for {} and for {}: standard "
                                  "input can be read by one of them only",
                                  stdin_field_, given_for),
                      field);
    if (stdin_field_.empty()) {
      stdin_field_ = given_for;
      if (!read_stream(in_ ? *in_ : std::cin, stdin_text_))
        throw UserError(ErrorCode::kBadFile,
                        fmt::format("standard input (given as '-' for {}): cannot read it, or "
                                    "it is larger than 64 MiB",
                                    given_for),
                        field);
    }
    return stdin_text_;
  }
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status))
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: no such file (given for {})", path, given_for), field);
  if (fs::is_directory(status))
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: is a directory, not a file (given for {})", path, given_for),
                    field);
  if (!fs::is_regular_file(status) && !fs::is_fifo(status) && !fs::is_character_file(status))
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: is not a file, a pipe or a character device (given for {})",
                                path, given_for),
                    field);
  // A regular file's size is known before reading; a pipe's only by reading it.
  if (fs::is_regular_file(status) && fs::file_size(path, ec) > kMaxInputBytes)
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: larger than 64 MiB (given for {})", path, given_for), field);
  std::ifstream in(path, std::ios::binary);
  std::string text;
  if (!in || !read_stream(in, text))
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: cannot read it, or it is larger than 64 MiB (given for {})",
                                path, given_for),
                    field);
  return text;
}

void write_whole_file(const std::string& path, std::string_view text, const std::string& field) {
  std::error_code ec;
  const bool existed = fs::exists(path, ec);
  const auto fail = [&](const std::string& what) {
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: {} (given for {}); {}", path, what, field,
                                existed ? "the file is unchanged" : "nothing was written"),
                    field);
  };
  fs::path target(path);
  if (fs::is_symlink(target, ec)) target = fs::weakly_canonical(target, ec);  // write what it names
  const auto status = fs::status(target, ec);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A device or pipe (-o /dev/stdout): written in place, nothing to rename over.
    std::ofstream file(target, std::ios::binary);
    file << text;
    file.close();
    if (!file) fail("cannot write to it");
    return;
  }
  if (fs::is_directory(status)) fail("is a folder, not a file");
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  if (!fs::is_directory(dir, ec)) fail(fmt::format("its folder '{}' does not exist", dir.string()));
  // Written whole to a temporary file beside it, then renamed over it: a write that fails leaves
  // the old file as it was.
  std::string temp = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0)
    fail(fmt::format("cannot create a temporary file in '{}': {}", dir.string(),
                     std::strerror(errno)));
  const auto abandon = [&](const std::string& what) {
    ::close(fd);
    ::unlink(temp.c_str());
    fail(what);
  };
  // The permissions the file has, or those a new file gets (mkstemp makes it private).
  mode_t mode = 0666;
  struct stat old {};
  if (::stat(target.c_str(), &old) == 0) {
    mode = old.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode &= ~mask;
  }
  ::fchmod(fd, mode);
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      abandon(fmt::format("writing failed after {} of {} bytes: {}", written, text.size(),
                          n < 0 ? std::strerror(errno) : "nothing written"));
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) abandon(fmt::format("writing failed: {}", std::strerror(errno)));
  if (::close(fd) != 0) {
    ::unlink(temp.c_str());
    fail(fmt::format("writing failed: {}", std::strerror(errno)));
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp.c_str());
    fail(fmt::format("cannot replace it: {}", std::strerror(error)));
  }
}

void Context::write_file(const std::string& path, std::string_view text, const std::string& field) {
  if (!allow_files)
    throw UserError(ErrorCode::kUnsupported, "files cannot be written through the API", field);
  write_whole_file(path, text, field);
}

std::vector<std::string> Context::list_files(const std::string& dir, std::string_view suffix,
                                             const std::string& field) {
  if (!allow_files)
    throw UserError(ErrorCode::kUnsupported, "folders cannot be read through the API", field);
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UserError(ErrorCode::kBadFile, fmt::format("{}: not a folder (given as {})", dir, field),
                    field);
  std::vector<std::string> found;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    if (it->is_regular_file() && it->path().filename().string().ends_with(suffix))
      found.push_back(it->path().generic_string());
  std::sort(found.begin(), found.end());
  return found;
}

const Catalog& builtin_catalog() {
  static const Catalog catalog = Catalog::load(builtin_data_files());
  return catalog;
}

namespace {
// Renderers called outside a command (tests, benchmarks) word reasons in English from the
// built-in data.
const bool kDefaultReasonWords = [] {
  set_default_reason_words([] { return load_translations(builtin_catalog(), ReportLang::kEn); });
  return true;
}();
}  // namespace

const Catalog& Context::catalog() {
  if (catalog_) return *catalog_;
  if (data_dirs.empty()) {
    catalog_ = &builtin_catalog();
    return *catalog_;
  }
  std::vector<DataFile> files = builtin_data_files();
  for (const auto& dir : data_dirs) {
    if (!allow_files)
      throw UserError(ErrorCode::kUnsupported, "data folders cannot be read through the API",
                      "data");
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      throw UserError(ErrorCode::kBadFile, fmt::format("{}: not a folder (given with --data)", dir),
                      "data");
    std::vector<fs::path> paths;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file()) paths.push_back(it->path());
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths) {
      const std::string ext = p.extension().string();
      if (ext != ".yaml" && ext != ".json") continue;
      texts_.push_back(std::make_unique<std::string>(read_file(p.string(), "data")));
      files.push_back({p.generic_string(), *texts_.back(), fs::relative(p, dir).generic_string()});
    }
  }
  own_ = std::make_unique<Catalog>(Catalog::load(files));
  catalog_ = own_.get();
  return *catalog_;
}

const RuntimeOverheads& Context::overheads() {
  if (&catalog() == &builtin_catalog()) {
    static const RuntimeOverheads builtin = load_runtime_overheads(builtin_catalog());
    return builtin;
  }
  if (!overheads_)
    overheads_ = std::make_unique<RuntimeOverheads>(load_runtime_overheads(catalog()));
  return *overheads_;
}

const Stacks& Context::stacks() {
  if (&catalog() == &builtin_catalog()) {
    static const Stacks builtin = load_stacks(builtin_catalog());
    return builtin;
  }
  if (!stacks_) stacks_ = std::make_unique<Stacks>(load_stacks(catalog()));
  return *stacks_;
}

const QuantFormats& Context::quant_formats() {
  if (&catalog() == &builtin_catalog()) {
    static const QuantFormats builtin = load_quant_formats(builtin_catalog());
    return builtin;
  }
  if (!quant_formats_)
    quant_formats_ = std::make_unique<QuantFormats>(load_quant_formats(catalog()));
  return *quant_formats_;
}

namespace {

void attach_checkpoint(ModelSource& s, const ModelFiles& files) {
  s.checkpoint = std::make_shared<const CheckpointInventory>(read_checkpoint(files));
  s.checkpoint_origin = files.origin;
}

}  // namespace

ModelPtr Context::resolve_model(const std::string& arg) {
  return resolve_model_source(arg, false).model;
}

ModelPtr Context::resolve_model_beside(const std::string& file, const std::string& model) {
  const std::string joined = beside_runs_file(file, model);
  if (joined == model || !allow_files || catalog().find_model(model)) return resolve_model(model);
  const bool path = model.ends_with(".json") || model.ends_with(".yaml") ||
                    model.ends_with(".yml") || model.starts_with("./") || model.starts_with("../");
  std::error_code ec;
  return resolve_model(path || std::filesystem::exists(joined, ec) ? joined : model);
}

ModelSource Context::resolve_model_source(const std::string& arg, bool want_checkpoint,
                                          const std::string& safetensors) {
  const Catalog& c = catalog();
  // A name ending in .json or .yaml is a file, never a hub id.
  const bool file_name = arg.ends_with(".json") || arg.ends_with(".yaml") || arg.ends_with(".yml");
  const auto id = file_name ? std::nullopt : parse_hub_id(arg);
  const auto unknown = [&]() -> UserError {
    auto near = closest_names(arg, c.model_ids());
    return UserError(
        ErrorCode::kUnknownName,
        fmt::format("unknown model '{}'{}; give a catalog id (ftplan models), a Hugging Face id "
                    "(org/name), a folder holding config.json or a path to a Hugging Face "
                    "config.json",
                    arg,
                    near.empty() ? "" : fmt::format("; did you mean {}?", fmt::join(near, ", "))),
        "model", near);
  };
  // A chat or instruction-tuned variant of a catalog model, where no config of its own is at hand
  // (not cached, or no files may be read): read as the base it was fine-tuned from, which has its
  // architecture, and said so.
  const auto as_base = [&](ModelSource& src) {
    if (!id || id->revision_given) return false;
    src.model = c.find_base_model_of(id->repo);
    if (!src.model) return false;
    src.origin = fmt::format("catalog {} (the base of {})", src.model->arch.id, id->repo);
    if (!based_.insert(id->repo).second) return true;
    err << fmt::format(
        "note: {} is read as the catalog's {} ({}), the model it was tuned from, whose "
        "architecture it shares; give its config.json (--model PATH) for its own\n",
        id->repo, src.model->arch.id, src.model->hf_repo);
    return true;
  };
  ModelSource s;
  s.model = c.find_model(arg);
  if (!s.model && id && !id->revision_given) s.model = c.find_model_by_hf_repo(id->repo);
  if (s.model) {
    s.origin = "catalog";
    if (!safetensors.empty()) {
      attach_checkpoint(s, checkpoint_files(safetensors));
    } else if (want_checkpoint && allow_files && !s.model->hf_repo.empty()) {
      // A catalog model's headers only from the local caches: no download for a known model.
      if (const auto repo = parse_hub_id(s.model->hf_repo)) {
        const HubSettings hub = HubSettings::from_environment();
        auto files = find_in_hf_cache(*repo, hub);
        if (!files || !files->has_checkpoint()) files = find_in_ftplan_cache(*repo, hub);
        if (files && files->has_checkpoint()) attach_checkpoint(s, *files);
      }
    }
    return s;
  }
  if (allow_files && arg == kStandardInput) {
    // A config.json piped in: no folder, so no checkpoint beside it.
    s.model = make_model(read_hf_config(read_file(arg, "model"), "standard input", "stdin"));
    s.origin = "standard input";
    return s;
  }
  if (!allow_files || inline_files.count(arg)) {
    // Requests from the network: a pasted config.json, never a file, a cache or a download.
    if (!looks_like_path(arg)) {
      if (as_base(s)) return s;
      throw unknown();
    }
    std::string text = read_file(arg, "model");
    s.model = make_model(read_hf_config(text, arg, arg));
    s.origin = arg;
    return s;
  }
  std::error_code ec;
  std::optional<ModelFiles> files;
  if (fs::is_regular_file(arg, ec)) {
    // A config.json: safetensors beside it (its folder's) are its checkpoint.
    const fs::path dir =
        fs::path(arg).parent_path().empty() ? fs::path(".") : fs::path(arg).parent_path();
    std::optional<ModelFiles> folder;
    try {
      folder = files_in_folder(dir.string());
    } catch (const UserError&) {
      if (want_checkpoint) throw;  // a broken index beside it matters only to its headers
    }
    if (folder && fs::path(arg).filename() == "config.json") {
      files = std::move(folder);
    } else {
      files = ModelFiles{};
    }
    files->config = arg;
    files->origin = arg;
  }
  const HubSettings hub = HubSettings::from_environment();
  if (!files && id) files = find_in_hf_cache(*id, hub);
  if (!files && id) files = find_in_ftplan_cache(*id, hub);
  if (!files && fs::is_directory(arg, ec)) {
    files = files_in_folder(arg);
    if (!files)
      throw UserError(ErrorCode::kBadFile,
                      fmt::format("{}: the folder holds no config.json (given for --model)", arg),
                      "model");
  }
  if (!files && id && as_base(s)) return s;
  if (!files && id) files = download_model_files(*id, hub, c.model_repos());
  if (!files) {
    if (looks_like_path(arg)) read_file(arg, "model");  // "no such file"
    throw unknown();
  }
  if (!safetensors.empty()) {
    const std::string config = files->config;
    files = checkpoint_files(safetensors);
    files->config = config;
  }

  const std::string name = id && !fs::exists(arg, ec) ? id->text() : arg;
  s.origin = files->origin;
  const std::string text = read_file(files->config, "model");
  try {
    s.model = make_model(read_hf_config(text, files->config, name));
  } catch (const UserError& e) {
    // A model_type ftplan does not know: counted from its safetensors headers when there are any.
    if (e.code() != ErrorCode::kUnsupported || e.field() != "model_type" ||
        !files->has_checkpoint())
      throw;
    attach_checkpoint(s, *files);
    s.model = model_from_checkpoint(text, files->config, name, *s.checkpoint);
    s.counted_from_checkpoint = true;
  }
  if (want_checkpoint && !s.checkpoint && files->has_checkpoint()) attach_checkpoint(s, *files);
  return s;
}

const DetectedMachine& Context::detect_machine(const std::string& csv_file) {
  if (auto it = machines_.find(csv_file); it != machines_.end()) return it->second;
  std::string text;
  std::string where = csv_file;
  if (!csv_file.empty()) {
    text = read_file(csv_file, "detect");
  } else {
    if (!allow_files)
      throw UserError(ErrorCode::kUnsupported,
                      "the local machine's cards are not detected through the API; name the "
                      "card with --gpu ID",
                      "gpu");
    text = run_nvidia_smi();
    where = "nvidia-smi";
  }
  DetectedMachine m = detect_cards(catalog(), parse_smi_csv(text, where), where);
  return machines_.emplace(csv_file, std::move(m)).first->second;
}

const DetectedGroup& Context::local_card(const std::string& arg) {
  return detect_machine(arg == "local" ? "" : arg.substr(std::string_view("local:").size()))
      .single_card();
}

const GpuSpec& Context::resolve_gpu(const std::string& arg) {
  if (const GpuSpec* g = catalog().find_gpu(arg)) return *g;
  if (is_local_gpu(arg)) return *local_card(arg).gpu;
  if (looks_like_path(arg)) {
    std::string text = read_file(arg, "gpu");
    if (!own_) {  // extend a private copy; the shared built-in catalog stays untouched
      own_ = std::make_unique<Catalog>(*catalog_);
      catalog_ = own_.get();
    }
    texts_.push_back(std::make_unique<std::string>(std::move(text)));
    return own_->add_gpu_file({arg, *texts_.back(), {}});
  }
  return catalog().gpu(arg);  // throws with the closest ids
}

namespace {

// The registered commands' names, in --help order: by `order`, then by name (the order in which
// the files register theirs depends on how they were linked).
std::vector<Command> sorted_commands() {
  auto commands = registry();
  std::sort(commands.begin(), commands.end(), [](const Command& a, const Command& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  return commands;
}

// Builds the app with the registered commands (only `chosen` when one was named: the others'
// options are never read; with none named, as for --version or --help, their names and
// descriptions only, unless `all_options`); `actions` receives what runs for each.
void build_app(CLI::App& app, Context& ctx,
               std::vector<std::pair<CLI::App*, std::function<void()>>>& actions,
               const std::string& chosen, bool& wide, bool all_options = false) {
  app.name("ftplan");
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", "ftplan " + version(), "Print the version (ftplan X.Y.Z)");
  app.add_option("--data", ctx.data_dirs,
                 "Folder of extra data files (gpus/*.yaml, models/catalog.yaml + config files, "
                 "sources*.yaml)");
  app.add_option("--lang", ctx.lang,
                 "Language of the reasons (why a run fits, why a plan chose): en | de "
                 "(default en)");
  app.add_flag("--wide", wide,
               "Text output in lines as long as they come: tables unwrapped (default: lines of at "
               "most " +
                   std::to_string(kTerminalColumns) + " characters)");
  for (auto& c : sorted_commands()) {
    if (!chosen.empty() && c.name != chosen) continue;
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    if (chosen.empty() && !all_options) continue;
    actions.emplace_back(sub, c.setup(*sub, ctx));
    check_number_options(*sub);
  }
}

// The command `args` name ("" when none); an unknown one gets a suggestion (CLI11 alone would
// only say that one is required).
std::string check_command_name(const std::vector<std::string>& args,
                               const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--data" || args[i] == "--lang") {
      ++i;
      continue;
    }
    if (args[i].starts_with("-")) continue;
    if (std::find(names.begin(), names.end(), args[i]) == names.end()) {
      auto near = closest_names(args[i], names, 2);
      const std::string message =
          fmt::format("unknown command '{}'{}\nCommands: {}", args[i],
                      near.empty() ? "" : fmt::format("; did you mean {}?", fmt::join(near, ", ")),
                      fmt::join(names, ", "));
      throw UserError(ErrorCode::kUnknownName, message, "command", std::move(near));
    }
    return args[i];
  }
  return {};
}

// The commands whose text output is read in a terminal: wrapped to text_width() (the others write
// scripts, schemas, documents and files that keep their lines).
bool writes_terminal_text(const CLI::App& sub) {
  static const std::vector<std::string> commands = {
      "gpus",    "models", "params", "fit",      "max",  "mig",   "roofline", "pack", "step",
      "compare", "stacks", "scale",  "validate", "plan", "sweep", "explain",  "infer"};
  if (std::find(commands.begin(), commands.end(), sub.get_name()) == commands.end()) return false;
  const CLI::Option* json = sub.get_option_no_throw("--json");
  return json == nullptr || json->count() == 0;
}

// Runs `action` with what it writes to ctx.out wrapped to text_width(): tables fit by themselves,
// sentences longer than a line are broken at spaces.
void run_wrapped(Context& ctx, const std::function<void()>& action) {
  std::ostringstream text;
  struct Restore {
    Context& ctx;
    std::ostringstream& text;
    std::streambuf* to;
    ~Restore() {
      ctx.out.rdbuf(to);
      ctx.out << wrap_lines(text.str(), text_width());
    }
  } restore{ctx, text, ctx.out.rdbuf(text.rdbuf())};
  action();
}

constexpr const char* kAppDescription =
    "ftplan: which GPUs, how many and how fast for a fine-tuning or training run.\n"
    "Units: GB = 10^9 bytes, GiB = 2^30 bytes.";

}  // namespace

void print_json(Context& ctx, std::string_view schema, nlohmann::json doc) {
  doc["schema"] = schema;
  doc["schema_version"] = kJsonSchemaVersion;
  ctx.out << with_from(ctx, doc).dump(2) << "\n";
}

namespace {

// The long options of the app and its chosen subcommands: "--micro-batch", ...
std::vector<const CLI::Option*> options_of(const CLI::App& app) {
  std::vector<const CLI::Option*> out;
  for (const CLI::App* a : {&app}) {
    for (const CLI::Option* o : a->get_options())
      out.push_back(o);
    for (const CLI::App* sub : a->get_subcommands([](const CLI::App*) { return true; }))
      for (const CLI::Option* o : sub->get_options())
        out.push_back(o);
  }
  return out;
}

// Options a command leaves out on purpose, with what to give instead (the API's words for the
// same case are in server/api.cpp).
constexpr std::tuple<std::string_view, std::string_view, std::string_view> kLeftOut[] = {
    {"matrix", "--gpu",
     "the matrix evaluates every card of the catalog: leave out --gpu, and keep fewer cards with "
     "--nvlink, --rentable, --max-price, --min-memory or --vendor"},
};

// An argument CLI11 did not expect, as an error that names it and the closest options of the
// command: "unknown option '--micro-btch' for fit; did you mean --micro-batch?".
[[noreturn]] void throw_unexpected(const CLI::ParseError& e, const CLI::App& app,
                                   const std::vector<std::string>& args,
                                   const std::string& command) {
  std::vector<std::string> known;
  for (const CLI::Option* o : options_of(app))
    for (const auto& l : o->get_lnames())
      known.push_back("--" + l);
  for (const auto& a : args) {
    if (!a.starts_with("--")) continue;
    const std::string name = a.substr(0, a.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    for (const auto& [left_command, option, instead] : kLeftOut)
      if (left_command == command && option == name)
        throw UserError(ErrorCode::kUnknownName, std::string(instead), name.substr(2));
    auto near = closest_names(name, known, 3);
    const std::string message = fmt::format(
        "unknown option '{}'{}{}", name, command.empty() ? "" : fmt::format(" for {}", command),
        near.empty() ? "" : fmt::format("; did you mean {}?", fmt::join(near, ", ")));
    throw UserError(ErrorCode::kUnknownName, message, name.substr(2), std::move(near));
  }
  throw e;
}

}  // namespace

std::string option_of_parse_error(const std::string& message) {
  auto at = message.find("--");
  if (at == std::string::npos) return {};
  auto end = message.find_first_of(" :,='\"", at);
  return message.substr(at + 2, end == std::string::npos ? std::string::npos : end - at - 2);
}

bool execute(const std::vector<std::string>& args, Context& ctx) {
  CLI::App app{kAppDescription};
  std::vector<std::pair<CLI::App*, std::function<void()>>> actions;
  std::vector<std::string> names;
  for (const auto& c : sorted_commands())
    names.push_back(c.name);
  const std::string command = check_command_name(args, names);
  bool wide = false;
  build_app(app, ctx, actions, command, wide);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ExtrasError& e) {
    throw_unexpected(e, app, args, command);
  } catch (const CLI::CallForHelp&) {
    ctx.out << app.help();
    return false;
  } catch (const CLI::CallForAllHelp&) {
    ctx.out << app.help("", CLI::AppFormatMode::All);
    return false;
  } catch (const CLI::CallForVersion& e) {
    ctx.out << e.what() << "\n";
    return false;
  }
  // Reasons in the language asked for, its file read from the catalog when a reason is worded.
  const ReportLang lang = ctx.lang.empty() ? ReportLang::kEn : parse_report_lang(ctx.lang, "lang");
  const ScopedReasonWords words([&ctx, lang] {
    // The built-in languages are parsed once per process (the server words every request).
    if (&ctx.catalog() == &builtin_catalog()) {
      static const Translations en = load_translations(builtin_catalog(), ReportLang::kEn);
      static const Translations de = load_translations(builtin_catalog(), ReportLang::kDe);
      return lang == ReportLang::kDe ? de : en;
    }
    return load_translations(ctx.catalog(), lang);
  });
  for (auto& [sub, action] : actions)
    if (sub->parsed()) apply_from_files(*sub, ctx);
  const ScopedTextWidth width(wide ? 0 : kTerminalColumns);
  for (auto& [sub, action] : actions) {
    if (!sub->parsed()) continue;
    if (writes_terminal_text(*sub))
      run_wrapped(ctx, action);
    else
      action();
  }
  return true;
}

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const auto& c : sorted_commands())
    names.push_back(c.name);
  return names;
}

namespace {

// The options of one command, read from a CLI app built for it.
std::vector<server::OptionInfo> read_command_options(const std::string& command) {
  std::ostringstream sink;
  Context ctx(sink, sink);
  CLI::App app{kAppDescription};
  std::vector<std::pair<CLI::App*, std::function<void()>>> actions;
  bool wide = false;
  build_app(app, ctx, actions, command, wide);
  std::vector<server::OptionInfo> out;
  for (const CLI::Option* o : options_of(app)) {
    // Every long name of an option is a key (--seq and --seq-max: seq and seq_max).
    std::vector<std::pair<std::string, std::string>> names;  // (option, key)
    for (const auto& l : o->get_lnames())
      names.emplace_back("--" + l, l);
    if (names.empty() && o->get_positional()) names.emplace_back("", o->get_name(true, false));
    for (auto& [option, key] : names) {  // none: -h only
      if (key == "help" || key == "help-all" || key == "data" || key == "version" || key == "wide")
        continue;
      server::OptionInfo info;
      info.option = option;
      info.key = key;
      std::replace(info.key.begin(), info.key.end(), '-', '_');
      info.flag = o->get_expected_max() == 0;  // CLI11 flags expect no value
      info.list = o->get_expected_max() > 1 || o->get_items_expected_max() > 1;
      out.push_back(std::move(info));
    }
  }
  return out;
}

}  // namespace

std::vector<server::OptionInfo> command_options(const std::string& command) {
  // The registry does not change once the process runs: each command's options are read once
  // (the server asks on every request, from several threads).
  static std::mutex lock;
  static std::map<std::string, std::vector<server::OptionInfo>> known;
  const std::lock_guard<std::mutex> guard(lock);
  auto it = known.find(command);
  if (it == known.end()) it = known.emplace(command, read_command_options(command)).first;
  return it->second;
}

namespace {

// A message of the command line as the API words it: each option of the command ("--micro-batch")
// by its key ("micro_batch").
std::string in_api_words(const std::string& message, const std::string& command) {
  if (message.find("--") == std::string::npos) return message;
  const auto options = command_options(command);
  std::string out;
  std::size_t i = 0;
  while (i < message.size()) {
    if (message.compare(i, 2, "--") == 0) {
      std::size_t end = i + 2;
      while (end < message.size() &&
             (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '-'))
        ++end;
      const std::string option = message.substr(i, end - i);
      const auto it = std::find_if(options.begin(), options.end(),
                                   [&](const server::OptionInfo& o) { return o.option == option; });
      if (it != options.end()) {
        out += it->key;
        i = end;
        continue;
      }
    }
    out += message[i++];
  }
  return out;
}

}  // namespace

server::Commands server_commands() {
  server::Commands commands;
  commands.run = [](const server::CommandCall& call, std::ostream& out) {
    std::ostringstream err;
    Context ctx(out, err);
    ctx.allow_files = false;
    ctx.inline_files = call.inline_files;
    const ScopedWorkBudget budget(call.budget);
    try {
      // Help and the version are text for a terminal: through the API they are options like
      // any unknown one.
      if (!execute(call.args, ctx)) {
        const bool version =
            std::find(call.args.begin(), call.args.end(), "--version") != call.args.end();
        const std::string key = version ? "version" : "help";
        throw UserError(ErrorCode::kInvalidValue,
                        key +
                            " is not an option of the API: the options are the CLI's (ftplan "
                            "<command> --help), given as JSON keys or query parameters",
                        key);
      }
    } catch (const CLI::ParseError& e) {
      throw UserError(ErrorCode::kInvalidValue, in_api_words(e.what(), call.args.front()),
                      option_of_parse_error(e.what()));
    } catch (const UserError& e) {
      std::vector<std::string> suggestions = e.suggestions();
      for (auto& s : suggestions)
        if (s.starts_with("--")) s = in_api_words(s, call.args.front());
      throw UserError(e.code(), in_api_words(e.what(), call.args.front()), e.field(),
                      std::move(suggestions));
    }
  };
  commands.options = command_options;
  commands.prepare = [] { builtin_catalog(); };
  return commands;
}

const server::Commands& loaded_server_commands() {
  static const server::Commands all = [] {
    server::Commands c = server_commands();
    if (c.prepare) c.prepare();
    return c;
  }();
  return all;
}

void add_all_commands(CLI::App& app, Context& ctx) {
  std::vector<std::pair<CLI::App*, std::function<void()>>> actions;
  static bool wide = false;  // the app is only read (completion, conventions), never run
  build_app(app, ctx, actions, "", wide, true);
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return run(args, out, err, std::cin);
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        std::istream& in) {
  Context ctx(out, err, &in);
  if (const char* env = std::getenv("FTPLAN_DATA"); env && *env) ctx.data_dirs.emplace_back(env);
  if (const char* env = std::getenv("FTPLAN_CALIBRATION_DIR"); env && *env)
    ctx.calibration_dir = env;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (!valid_utf8(args[i])) {
      err << "error: argument " << i + 1 << " ('" << cut_utf8(printable_utf8(args[i]), 60)
          << "') is not UTF-8 text; give names and values in UTF-8\n";
      return kExitUserError;
    }
  // With --json, errors are JSON too (on stderr): {"error": {code, message, field, suggestions}}.
  const bool json_errors = std::find(args.begin(), args.end(), "--json") != args.end();
  const auto report = [&](std::string_view code, const std::string& message,
                          const std::string& field, const std::vector<std::string>& suggestions,
                          std::string_view text_prefix) {
    if (json_errors)
      err << nlohmann::json{{"error",
                             {{"code", code},
                              {"message", message},
                              {"field", field},
                              {"suggestions", suggestions}}}}
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
          << "\n";
    else
      err << text_prefix << message << "\n";
  };
  try {
    execute(args, ctx);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return kExitOk;
    report(error_code_name(ErrorCode::kInvalidValue), e.what(), option_of_parse_error(e.what()), {},
           "error: ");
    if (!json_errors) err << "Run 'ftplan --help' or 'ftplan <command> --help' for the options.\n";
    return kExitUserError;
  } catch (const UserError& e) {
    report(error_code_name(e.code()), e.what(), e.field(), e.suggestions(), "error: ");
    return kExitUserError;
  } catch (const std::exception& e) {
    report("internal", e.what(), "", {}, "internal error: ");
    return kExitInternal;
  }
}

}  // namespace ftplan::cli
