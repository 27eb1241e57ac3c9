// Command-line conventions: --version, help, completion scripts, numbers in any usual form, `-`
// for standard input, precise file errors, paths in a runs file relative to its folder, and the
// options every command spells alike (--gpu all, --network-gbps).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include "cli/cli.hpp"
#include "cli/numbers.hpp"
#include "cli/runs_options.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The CLI with `input` as its standard input.
test::CliResult run_with_input(const std::vector<std::string>& args, const std::string& input) {
  std::istringstream in(input);
  std::ostringstream out, err;
  const int code = cli::run(args, out, err, in);
  return {code, out.str(), err.str()};
}

std::string source_text(const std::string& relative) {
  std::ifstream in(fs::path(FTPLAN_SOURCE_DIR) / relative);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh folder for one test's files (of this process: test runs may overlap), removed after.
struct ScratchFolder {
  explicit ScratchFolder(const std::string& name)
      : path(fs::temp_directory_path() /
             ("ftplan-conventions-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchFolder() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  fs::path path;
};

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

const std::vector<std::string> kFit = {"fit",  "--model", "llama-3.1-8b", "--method",
                                       "lora", "--gpu",   "h200-nvl",     "--json"};

std::vector<std::string> fit_with(std::vector<std::string> extra) {
  std::vector<std::string> args = kFit;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

constexpr const char* kSmallRuns = R"(candidates:
  gpus: [h200-nvl]
  counts: [1]
runs:
  - name: from standard input
    model: llama-3.1-8b
    method: lora
    tokens: 1e6
)";

// ---- version and help ----------------------------------------------------------------------

TEST(Conventions, VersionPrintsTheProjectVersion) {
  EXPECT_TRUE(std::regex_match(cli::version(), std::regex(R"(\d+\.\d+\.\d+)"))) << cli::version();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--version"}, std::vector<std::string>{"version"}}) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "ftplan " + cli::version() + "\n");
  }
}

TEST(Conventions, HelpIsTheOverviewOrTheCommandsHelp) {
  const auto overview = test::run_cli({"help"});
  EXPECT_EQ(overview.code, 0) << overview.err;
  EXPECT_EQ(overview.out, test::run_cli({"--help"}).out);
  EXPECT_NE(overview.out.find("completion"), std::string::npos);
  const auto fit = test::run_cli({"help", "fit"});
  EXPECT_EQ(fit.code, 0) << fit.err;
  EXPECT_EQ(fit.out, test::run_cli({"fit", "--help"}).out);
  EXPECT_NE(fit.out.find("--micro-batch"), std::string::npos);
  const auto nested = test::run_cli({"help", "calibrate", "import"});
  EXPECT_EQ(nested.code, 0) << nested.err;
  EXPECT_EQ(nested.out, test::run_cli({"calibrate", "import", "--help"}).out);
}

TEST(Conventions, HelpForAnUnknownCommandSuggestsTheClosest) {
  const auto r = test::run_cli({"help", "fti"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown command 'fti'; did you mean fit"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// ---- completion ------------------------------------------------------------------------------

std::vector<std::string> command_names() {
  std::ostringstream out, err;
  cli::Context ctx(out, err);
  CLI::App app;
  cli::add_all_commands(app, ctx);
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({}))
    names.push_back(sub->get_name());
  return names;
}

TEST(Conventions, CompletionScriptsNameEveryCommandAndOption) {
  const auto names = command_names();
  ASSERT_GT(names.size(), 15u);
  for (const std::string shell : {"bash", "zsh", "fish"}) {
    const auto r = test::run_cli({"completion", shell});
    ASSERT_EQ(r.code, 0) << shell << ": " << r.err;
    for (const auto& name : names)
      EXPECT_NE(r.out.find(" " + name), std::string::npos) << shell << " lacks " << name;
    const std::string option = shell == "fish" ? "-l micro-batch" : "--micro-batch";
    EXPECT_NE(r.out.find(option), std::string::npos) << shell;
    const std::string alias = shell == "fish" ? "-l network-gbps" : "--network-gbps";
    EXPECT_NE(r.out.find(alias), std::string::npos) << shell;
    // Card ids complete after --gpu.
    EXPECT_NE(r.out.find("h200-nvl"), std::string::npos) << shell;
  }
  EXPECT_EQ(test::run_cli({"completion", "zsh"}).out.rfind("#compdef ftplan\n", 0), 0u);
}

TEST(Conventions, CompletionForAnUnknownShellNamesTheShells) {
  const auto r = test::run_cli({"completion", "bsh"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown shell 'bsh'; did you mean bash"), std::string::npos) << r.err;
}

// ---- reference -------------------------------------------------------------------------------

// Every option of every command, with its command's path ("calibrate import").
std::vector<std::pair<std::string, std::string>> every_option() {
  std::ostringstream out, err;
  cli::Context ctx(out, err);
  CLI::App app;
  cli::add_all_commands(app, ctx);
  std::vector<std::pair<std::string, std::string>> options;
  const std::function<void(const CLI::App&, const std::string&)> walk =
      [&](const CLI::App& a, const std::string& path) {
        for (const CLI::Option* o : a.get_options())
          for (const auto& l : o->get_lnames())
            options.emplace_back(path, "--" + l);
        for (const CLI::App* sub : a.get_subcommands({}))
          walk(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name());
      };
  walk(app, "");
  return options;
}

TEST(Conventions, ReferenceNamesEveryCommandOptionEndpointAndJsonOutput) {
  const auto r = test::run_cli({"reference"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto options = every_option();
  ASSERT_GT(options.size(), 300u);
  for (const auto& [path, option] : options) {
    if (option == "--help") continue;
    // The option's row sits in its command's section.
    const std::string heading = path.empty() ? "## Global options" : "# ftplan " + path + "\n";
    const auto section = r.out.find(heading);
    ASSERT_NE(section, std::string::npos) << heading;
    const auto next = r.out.find("\n#", section + heading.size());
    // The option's names in a row: "`--a`" or "`--a, --b`" (an alias).
    bool found = false;
    for (const std::string& form :
         {"`" + option + "`", "`" + option + ", ", ", " + option + "`", ", " + option + ", "}) {
      const auto at = r.out.find(form, section);
      found = found || (at != std::string::npos && at < next);
    }
    EXPECT_TRUE(found) << path << " " << option;
  }
  for (const std::string endpoint : {"`/api/fit`", "`/api/plan`", "`/healthz`"})
    EXPECT_NE(r.out.find(endpoint), std::string::npos) << endpoint;
  // Every JSON output, and keys below objects and inside arrays.
  const auto schemas = test::run_cli({"schema"});
  std::istringstream names(schemas.out);
  std::string line;
  std::getline(names, line);  // the heading
  int outputs = 0;
  while (std::getline(names, line)) {
    const std::string name = line.substr(line.find_first_not_of(' '));
    EXPECT_NE(r.out.find("### JSON: " + name + "\n"), std::string::npos) << name;
    ++outputs;
  }
  EXPECT_GT(outputs, 20);
  EXPECT_NE(r.out.find("| `memory_GB.free` | number |"), std::string::npos);
  EXPECT_NE(r.out.find("| `from.used` | array of object |"), std::string::npos);
  EXPECT_NE(r.out.find("| `from.used[].key` | string |"), std::string::npos);
}

TEST(Conventions, ManPageHasEveryCommandFromTheSameSource) {
  ::setenv("SOURCE_DATE_EPOCH", "1764806400", 1);  // 2025-12-04
  const auto r = test::run_cli({"reference", "--format", "man"});
  ::unsetenv("SOURCE_DATE_EPOCH");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind(".TH FTPLAN 1 \"2025-12-04\" \"ftplan " + cli::version() + "\"", 0), 0u)
      << r.out.substr(0, 80);
  for (const auto& name : command_names())
    EXPECT_NE(r.out.find(".SS \"ftplan " + name + "\"\n"), std::string::npos) << name;
  EXPECT_NE(r.out.find(".SS \"ftplan calibrate import\"\n"), std::string::npos);
  EXPECT_NE(r.out.find("\\fB\\-\\-micro\\-batch\\fR \\fIINT\\fR"), std::string::npos);
  // No line starts with a dot or quote that is not a request.
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty() && (line[0] == '.' || line[0] == '\''))
      EXPECT_TRUE(std::regex_match(line, std::regex(R"(^\.(TH|SH|SS|TP|B|PP)( .*)?$)"))) << line;
  const auto bad = test::run_cli({"reference", "--format", "mann"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("did you mean man"), std::string::npos) << bad.err;
}

// ---- numbers ---------------------------------------------------------------------------------

TEST(Conventions, WholeNumbersInAnyUsualForm) {
  for (const auto& [given, read] : std::vector<std::pair<std::string, std::string>>{
           {"4096", "4096"},
           {"1e4", "10000"},
           {"1.5e3", "1500"},
           {"100e6", "100000000"},
           {" 42 ", "42"},
           {"+7", "7"},
           {"2E0", "2"},
           {"12345678901234567890", "12345678901234567890"}}) {
    std::string text = given;
    EXPECT_EQ(cli::read_whole_number(text), "") << given;
    EXPECT_EQ(text, read) << given;
  }
  for (const auto& [given, error] : std::vector<std::pair<std::string, std::string>>{
           {"1.5", "expected a whole number, got 1.5"},
           {"nan", "not a finite number"},
           {"inf", "not a finite number"},
           {"-8", "(0 or more), got -8"},
           {"sixteen", "expected a whole number, got 'sixteen'"},
           {"1e300", "too large to be exact"},
           {"", "expected a whole number"}}) {
    std::string text = given;
    const std::string wrong = cli::read_whole_number(text);
    EXPECT_NE(wrong.find(error), std::string::npos) << given << ": " << wrong;
  }
  std::string real = "2.5e-1";
  EXPECT_EQ(cli::read_real_number(real), "");
  for (std::string bad : {"nan", "-inf", "-0.5", "abc"})
    EXPECT_NE(cli::read_real_number(bad), "") << bad;
}

TEST(Conventions, IntegerOptionsTakeScientificNotation) {
  const auto plain = test::run_cli(fit_with({"--seq", "10000", "--micro-batch", "2"}));
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(json::parse(plain.out)["seq"], 10000);
  EXPECT_EQ(json::parse(plain.out)["micro_batch"], 2);
  const auto scientific = test::run_cli(fit_with({"--seq", "1e4", "--micro-batch", "2e0"}));
  ASSERT_EQ(scientific.code, 0) << scientific.err;
  EXPECT_EQ(scientific.out, plain.out);
  const auto decimal = test::run_cli(fit_with({"--seq", "1.5e3"}));
  ASSERT_EQ(decimal.code, 0) << decimal.err;
  EXPECT_EQ(json::parse(decimal.out)["seq"], 1500);
}

TEST(Conventions, BadNumbersNameTheOptionAndWhatWasExpected) {
  for (const auto& [args, error] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {fit_with({"--seq", "1.5"}), "--seq: expected a whole number, got 1.5"},
           {fit_with({"--micro-batch", "nan"}), "--micro-batch: expected a whole number"},
           {fit_with({"--lora-dropout", "nan"}), "--lora-dropout: expected a number, got nan"},
           {{"explain", "memory.peak", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
             "h200-nvl", "--tokens", "nan"},
            "--tokens: expected a number, got nan (not a finite number)"},
           {{"explain", "memory.peak", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
             "h200-nvl", "--price-per-card-hour", "-2"},
            "--price-per-card-hour: expected a number (0 or more), got -2"}}) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 2) << error;
    EXPECT_NE(r.err.find(error), std::string::npos) << r.err;
  }
  const auto tokens =
      test::run_cli({"explain", "plan.card_hours", "--model", "llama-3.1-8b", "--method", "lora",
                     "--gpu", "h200-nvl", "--tokens", "100e6", "--json"});
  EXPECT_EQ(tokens.code, 0) << tokens.err;
}

// ---- consistent options ----------------------------------------------------------------------

TEST(Conventions, GpuAllIsEveryCardOnce) {
  std::ostringstream out, err;
  cli::Context ctx(out, err);
  RunsFile file;
  cli::restrict_gpus(ctx, file, {"h200-nvl", "all"});
  EXPECT_EQ(file.gpus.size(), ctx.catalog().gpus().size());
  EXPECT_EQ(file.gpus.front()->id, "h200-nvl");
  const auto r = run_with_input({"plan", "-", "--gpu", "all", "--json"}, kSmallRuns);
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(Conventions, NetworkBandwidthTakesTheLowerCaseSpelling) {
  const std::vector<std::string> scale = {"scale", "--model", "llama-3.1-8b", "--method",
                                          "full",  "--gpu",   "h200-nvl",     "--gpus",
                                          "16",    "--json"};
  auto with = [&](const std::string& option, const std::string& value) {
    std::vector<std::string> args = scale;
    args.insert(args.end(), {option, value});
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out;
  };
  const std::string lower = with("--network-gbps", "5");
  EXPECT_EQ(lower, with("--network-GBps", "5"));
  EXPECT_NE(lower, with("--network-gbps", "400"));  // the value is used
}

// ---- files -----------------------------------------------------------------------------------

TEST(Conventions, DashReadsTheRunsFileFromStandardInput) {
  const auto r = run_with_input({"plan", "-", "--json"}, kSmallRuns);
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 1u);
  EXPECT_EQ(j["runs"][0]["run"], "from standard input");
}

TEST(Conventions, DashReadsATrainerFileAndAConfigFromStandardInput) {
  const auto from =
      run_with_input({"fit", "--from", "-", "--method", "lora", "--gpu", "h200-nvl", "--json"},
                     source_text("tests/data/trainers/adapter_config.json"));
  ASSERT_EQ(from.code, 0) << from.err;
  EXPECT_EQ(json::parse(from.out)["rank"], 64);  // the file's r
  const std::string config = "tests/cases/configs/tiny_llama.json";
  const auto piped = run_with_input({"params", "--model", "-", "--json"}, source_text(config));
  const auto named =
      test::run_cli({"params", "--model", std::string(FTPLAN_SOURCE_DIR) + "/" + config, "--json"});
  ASSERT_EQ(piped.code, 0) << piped.err;
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_EQ(json::parse(piped.out)["total"], json::parse(named.out)["total"]);
}

TEST(Conventions, StandardInputServesOneOptionOnly) {
  const auto r = run_with_input({"plan", "-", "--from", "-"}, kSmallRuns);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("standard input can be read by one of them only"), std::string::npos)
      << r.err;
}

TEST(Conventions, ADirectoryIsNotAFile) {
  const ScratchFolder scratch("directory");
  const fs::path& dir = scratch.path;
  const auto runs = test::run_cli({"plan", dir.string()});
  EXPECT_EQ(runs.code, 2);
  EXPECT_NE(runs.err.find(dir.string() + ": is a directory, not a file (given for runs)"),
            std::string::npos)
      << runs.err;
  const auto lengths = test::run_cli(fit_with({"--lengths", dir.string()}));
  EXPECT_EQ(lengths.code, 2);
  EXPECT_NE(lengths.err.find("is a directory, not a file (given for lengths)"), std::string::npos)
      << lengths.err;
  const auto missing = test::run_cli({"plan", (dir / "nope.yaml").string()});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("nope.yaml: no such file (given for runs)"), std::string::npos)
      << missing.err;
}

TEST(Conventions, ANamedPipeIsReadLikeAFile) {
  const ScratchFolder scratch("fifo");
  const fs::path& dir = scratch.path;
  const fs::path fifo = dir / "runs.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo) << kSmallRuns; });
  const auto r = test::run_cli({"plan", fifo.string(), "--json"});
  // Should the command not have opened the pipe, open it here so that the writer finishes.
  const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  writer.join();
  if (fd >= 0) ::close(fd);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["runs"][0]["run"], "from standard input");
}

TEST(Conventions, PathsInARunsFileAreRelativeToItsFolder) {
  const ScratchFolder scratch("relative");
  const fs::path& dir = scratch.path;
  write_text(dir / "trainers/adapter_config.json",
             source_text("tests/data/trainers/adapter_config.json"));
  write_text(dir / "model/config.json", source_text("tests/cases/configs/tiny_llama.json"));
  write_text(dir / "lengths.txt", "512\n1024\n");
  write_text(dir / "plans/runs.yaml", R"(candidates:
  gpus: [h200-nvl]
  counts: [1]
runs:
  - name: beside
    model: ../model/config.json
    method: lora
    from: ../trainers/adapter_config.json
    lengths: ../lengths.txt
    tokens: 1e6
)");
  const auto r = test::run_cli({"plan", (dir / "plans/runs.yaml").string(), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json run = json::parse(r.out)["runs"][0];
  EXPECT_EQ(run["rank"], 64);   // from the trainer file
  EXPECT_EQ(run["seq"], 1024);  // the longest of the lengths file
  // An absolute path stays as it is.
  write_text(dir / "plans/absolute.yaml",
             std::string(kSmallRuns) +
                 "    from: " + (dir / "trainers/adapter_config.json").string() + "\n");
  const auto absolute = test::run_cli({"plan", (dir / "plans/absolute.yaml").string(), "--json"});
  ASSERT_EQ(absolute.code, 0) << absolute.err;
  EXPECT_EQ(json::parse(absolute.out)["runs"][0]["rank"], 64);
}

TEST(Conventions, BesideRunsFileIsPathArithmetic) {
  EXPECT_EQ(beside_runs_file("plans/runs.yaml", "t.yaml"), "plans/t.yaml");
  EXPECT_EQ(beside_runs_file("plans/runs.yaml", "../t.yaml"), "t.yaml");
  EXPECT_EQ(beside_runs_file("/a/b/runs.yaml", "c/t.yaml"), "/a/b/c/t.yaml");
  EXPECT_EQ(beside_runs_file("plans/runs.yaml", "/abs/t.yaml"), "/abs/t.yaml");
  EXPECT_EQ(beside_runs_file("runs.yaml", "t.yaml"), "t.yaml");
  EXPECT_EQ(beside_runs_file("plans/runs.yaml", "-"), "-");
  EXPECT_EQ(beside_runs_file("-", "t.yaml"), "t.yaml");
}

TEST(Conventions, TheCommandsFromStaysRelativeToTheWorkingFolder) {
  // A runs file in a folder; --from names a file by a path that exists only from here.
  std::vector<std::string> asked;
  const FileReader reader = [&](const std::string& p, const std::string&) {
    asked.push_back(p);
    return source_text("tests/data/trainers/adapter_config.json");
  };
  const ModelResolver resolve = [](const std::string& id) { return test::catalog().model(id); };
  const std::string runs = R"(runs:
  - name: a
    model: llama-3.1-8b
    method: lora
    from: mine.json
    tokens: 1e6
)";
  parse_runs_file(runs, "plans/runs.yaml", test::catalog(), test::stacks(), resolve, reader,
                  {"given.json"});
  EXPECT_EQ(asked, (std::vector<std::string>{"plans/mine.json", "given.json"}));
}

}  // namespace
}  // namespace ftplan
