// Inputs and outputs of the command line at their edges: duplicate keys in config.json and runs
// files, text that is not UTF-8, and -o FILE written whole or not at all.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "support.hpp"

namespace ftplan {
namespace {

namespace fs = std::filesystem;

// A fresh folder for one test, removed after it.
class Folder {
 public:
  explicit Folder(const std::string& name)
      : path_(fs::temp_directory_path() / ("ftplan-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~Folder() { fs::remove_all(path_); }
  std::string file(const std::string& name, const std::string& text = "") const {
    const std::string p = (path_ / name).string();
    if (!text.empty()) std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(
        std::distance(fs::directory_iterator(path_), fs::directory_iterator()));
  }

 private:
  fs::path path_;
};

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(InputChecks, DuplicateKeysInConfigJsonNameBothLines) {
  const Folder dir("dup-config");
  const std::string config = dir.file("config.json", R"({
  "model_type": "llama", "hidden_size": 256, "intermediate_size": 688,
  "num_hidden_layers": 4,
  "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000,
  "num_hidden_layers": 40
})");
  const auto r = test::run_cli({"params", "--model", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(
      contains(r.err, "key 'num_hidden_layers' appears twice in one object (lines 3 and 5)"))
      << r.err;
}

TEST(InputChecks, DuplicateKeysAndLatin1InRunsFilesAreErrors) {
  const Folder dir("dup-runs");
  const auto dup = test::run_cli({"plan", dir.file("runs.yaml",
                                                   "runs:\n  - name: a\n"
                                                   "    model: llama-3.1-8b\n"
                                                   "    method: lora\n"
                                                   "    method: full\n"
                                                   "    tokens: 1e8\n")});
  EXPECT_EQ(dup.code, 2);
  EXPECT_TRUE(contains(dup.err, "key 'method' appears twice in one map (lines 4 and 5)"))
      << dup.err;
  const auto latin1 =
      test::run_cli({"plan", dir.file("latin1.yaml",
                                      "runs:\n  - name: Gr\xf6\xdf"
                                      "e\n    model: llama-3.1-8b\n    method: lora\n")});
  EXPECT_EQ(latin1.code, 2);
  EXPECT_TRUE(contains(latin1.err, "not UTF-8 text: byte 18 (line 2, column 13)")) << latin1.err;
  const auto arg = test::run_cli({"fit", "--model", "llama\xe9", "--gpu", "h200-nvl"});
  EXPECT_EQ(arg.code, 2);
  EXPECT_TRUE(contains(arg.err, "argument 3 ('llama?') is not UTF-8 text")) << arg.err;
}

TEST(InputChecks, OutputReplacesTheFileWholeKeepingItsMode) {
  const Folder dir("output");
  const std::string out = dir.file("report.md", "old report\n");
  ::chmod(out.c_str(), 0640);
  const auto r = test::run_cli({"report", "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read(out), test::run_cli({"report"}).out);
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(dir.entries(), 1u);  // no temporary file left
}

TEST(InputChecks, AFailedWriteLeavesTheOldFileAndSaysWhatFailed) {
  const Folder dir("output-fails");
  const std::string out = dir.file("report.md", "old report\n");
  // Files may grow to 4 KiB only: the report (larger) fails midway.
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  rlimit small = before;
  small.rlim_cur = 4096;
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const auto r = test::run_cli({"report", "-o", out});
  ::setrlimit(RLIMIT_FSIZE, &before);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "writing failed after 4096 of")) << r.err;
  EXPECT_TRUE(contains(r.err, "File too large")) << r.err;
  EXPECT_TRUE(contains(r.err, "the file is unchanged")) << r.err;
  EXPECT_EQ(read(out), "old report\n");
  EXPECT_EQ(dir.entries(), 1u);

  const auto missing = test::run_cli({"report", "-o", dir.file("no/such/folder/r.md")});
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(contains(missing.err, "does not exist")) << missing.err;
}

}  // namespace
}  // namespace ftplan
