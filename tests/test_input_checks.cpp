// Inputs and outputs of the command line at their edges: duplicate keys in config.json, runs, card,
// pack and trainer files, text that is not UTF-8, -o FILE written whole or not at all, and options
// that would do nothing (an error, or a warning where the result stands).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
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

std::string fmt_lines(const std::string& head, int first, int second) {
  return head + " (lines " + std::to_string(first) + " and " + std::to_string(second) + ")";
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

TEST(InputChecks, DuplicateKeysInCardPackAndTrainerFilesNameTheFileKeyAndBothLines) {
  const Folder dir("dup-files");
  // A card file: the catalog's A10 with its TDP given twice.
  std::string card = read(std::string(FTPLAN_SOURCE_DIR) + "/data/gpus/a10.yaml");
  card += "tdp_W: {value: 300, source: gpu-specs-table}\n";
  const std::string card_path = dir.file("a10-twice.yaml", card);
  const int tdp_line = [&] {
    int line = 1;
    for (std::size_t i = 0; i < card.find("tdp_W:"); ++i)
      line += card[i] == '\n';
    return line;
  }();
  const int last_line = static_cast<int>(std::count(card.begin(), card.end(), '\n'));
  const auto c =
      test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", card_path});
  EXPECT_EQ(c.code, 2);
  EXPECT_TRUE(contains(c.err, fmt_lines("a10-twice.yaml: key 'tdp_W' appears twice in one map",
                                        tdp_line, last_line)))
      << c.err;

  const auto pack = test::run_cli({"pack",
                                   dir.file("pack.yaml",
                                            "experiments:\n"
                                            "  - name: a\n"
                                            "    model: llama-3.1-8b\n"
                                            "    method: lora\n"
                                            "    count: 2\n"
                                            "    count: 3\n"),
                                   "--gpu", "h200-nvl"});
  EXPECT_EQ(pack.code, 2);
  EXPECT_TRUE(contains(pack.err, "pack.yaml: key 'count' appears twice in one map (lines 5 and 6)"))
      << pack.err;

  const auto trainer = test::run_cli({"fit", "--from",
                                      dir.file("axolotl.yaml",
                                               "base_model: meta-llama/Llama-3.1-8B\n"
                                               "adapter: lora\n"
                                               "lora_r: 8\n"
                                               "sequence_len: 1024\n"
                                               "lora_r: 64\n"),
                                      "--gpu", "h200-nvl"});
  EXPECT_EQ(trainer.code, 2);
  EXPECT_TRUE(
      contains(trainer.err, "axolotl.yaml: key 'lora_r' appears twice in one map (lines 3 and 5)"))
      << trainer.err;
}

// Options a method does not read: an error when typed (tests/cases/cli_errors.yaml has the texts),
// nothing when left at their defaults.
TEST(InputChecks, OnlyTypedOptionsAreCheckedAgainstTheMethod) {
  for (const char* method : {"full", "lora", "dora"}) {
    const auto r =
        test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", method, "--gpu", "h200-nvl"});
    EXPECT_EQ(r.code, 0) << method << ": " << r.err;
    EXPECT_TRUE(r.err.empty()) << method << ": " << r.err;
  }
  // The options each method reads are accepted.
  const auto qlora =
      test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "qlora", "--rank", "8",
                     "--quant-block", "64", "--no-double-quant", "--gpu", "h200-nvl"});
  EXPECT_EQ(qlora.code, 0) << qlora.err;
  const auto lora =
      test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--rank", "8",
                     "--targets", "q,v", "--lora-dropout", "0.1", "--gpu", "h200-nvl"});
  EXPECT_EQ(lora.code, 0) << lora.err;
}

// A trainer file's adapter keys beside a full fine-tune are listed as not applied, with why: such
// keys are template leftovers the trainer ignores too. Typed beside the same file, they fail.
TEST(InputChecks, TrainerFileAdapterKeysBesideAFullFineTuneAreNotAppliedAndSaySo) {
  const std::string adapter =
      std::string(FTPLAN_SOURCE_DIR) + "/tests/data/trainers/adapter_config.json";
  const auto r = test::run_cli({"fit", "--from", adapter, "--model", "llama-3.1-8b", "--method",
                                "full", "--gpu", "h200-nvl", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "full");
  std::vector<std::string> not_applied;
  for (const auto& u : j["from"]["used"])
    if (u["as"] == "rank" || u["as"] == "targets" || u["as"] == "lora_dropout") {
      EXPECT_FALSE(u["applied"].get<bool>()) << u;
      EXPECT_EQ(u["why"],
                "applies to LoRA-family methods (lora, qlora, dora, qdora); method full trains "
                "every weight")
          << u;
      not_applied.push_back(u["as"]);
    }
  EXPECT_EQ(not_applied.size(), 3u);  // r, target_modules, lora_dropout
  // The same memory as a full fine-tune without the file.
  const auto plain = test::run_cli(
      {"fit", "--model", "llama-3.1-8b", "--method", "full", "--gpu", "h200-nvl", "--json"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(j["memory_GB"], nlohmann::json::parse(plain.out)["memory_GB"]);
  // An axolotl file without an adapter is a full fine-tune: its lora_r is not applied.
  const Folder dir("from-full");
  const auto axolotl = test::run_cli({"fit", "--from",
                                      dir.file("full.yaml",
                                               "base_model: meta-llama/Llama-3.1-8B\n"
                                               "lora_r: 32\n"
                                               "sequence_len: 1024\n"),
                                      "--gpu", "h200-nvl", "--json"});
  ASSERT_EQ(axolotl.code, 0) << axolotl.err;
  bool rank_listed = false;
  const auto axolotl_json = nlohmann::json::parse(axolotl.out);
  for (const auto& u : axolotl_json["from"]["used"])
    if (u["key"] == "lora_r") {
      rank_listed = true;
      EXPECT_FALSE(u["applied"].get<bool>()) << u;
    }
  EXPECT_TRUE(rank_listed);
  // Typed, the option is the user's choice: an error.
  const auto typed = test::run_cli({"fit", "--from", adapter, "--model", "llama-3.1-8b", "--method",
                                    "full", "--rank", "8", "--gpu", "h200-nvl"});
  EXPECT_EQ(typed.code, 2);
  EXPECT_TRUE(contains(typed.err, "--rank applies to LoRA-family methods")) << typed.err;
}

// A TRL config that loads the model in BF16: a full fine-tune on one card trains BF16 weights with
// BF16 AdamW states (pure BF16, 8 B per parameter less than mixed precision's 16); under FSDP with
// --bf16 Accelerate casts the trained parameters to FP32, and DeepSpeed keeps FP32 partitions, so
// the default count stays; an adapter's base is counted in 16 bits anyway.
TEST(InputChecks, TrainerFileModelDtypeIsPureBf16WhereNothingKeepsFp32Copies) {
  const Folder dir("from-dtype");
  const std::string trl = dir.file("sft.yaml",
                                   "torch_dtype: bfloat16\n"
                                   "bf16: true\n"
                                   "per_device_train_batch_size: 2\n"
                                   "gradient_checkpointing: true\n"
                                   "max_length: 2048\n");
  const auto fit = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"fit",          "--from", trl,        "--model",
                                     "llama-3.2-3b", "--gpu",  "h100-sxm", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto dtype_entry = [](const nlohmann::json& j) {
    for (const auto& u : j["from"]["used"])
      if (u["as"] == "model_dtype") return u;
    return nlohmann::json();
  };
  const auto one = fit({"--method", "full"});
  EXPECT_TRUE(dtype_entry(one)["applied"].get<bool>()) << dtype_entry(one);
  const auto pure =
      test::run_cli({"fit", "--model", "llama-3.2-3b", "--method", "full", "--gpu", "h100-sxm",
                     "--micro-batch", "2", "--seq", "2048", "--pure-bf16", "--json"});
  ASSERT_EQ(pure.code, 0) << pure.err;
  EXPECT_EQ(one["memory_GB"], nlohmann::json::parse(pure.out)["memory_GB"]);
  const auto fsdp = fit({"--method", "full", "--gpus", "2", "--shard", "fsdp"});
  EXPECT_FALSE(dtype_entry(fsdp)["applied"].get<bool>());
  EXPECT_NE(dtype_entry(fsdp)["why"].get<std::string>().find("Accelerate casts"),
            std::string::npos);
  const auto deepspeed =
      fit({"--method", "full", "--gpus", "2", "--shard", "zero2", "--stack", "deepspeed"});
  EXPECT_NE(dtype_entry(deepspeed)["why"].get<std::string>().find("DeepSpeed"), std::string::npos);
  const auto lora = fit({"--method", "lora"});
  EXPECT_NE(dtype_entry(lora)["why"].get<std::string>().find("method lora trains adapters"),
            std::string::npos);
  const auto typed = fit({"--method", "full", "--pure-bf16"});
  EXPECT_EQ(dtype_entry(typed)["why"], "--pure-bf16 given on the command line");
}

// In a runs file the run's own key fails (cli_errors.yaml); a default describes several runs and
// applies where it can.
TEST(InputChecks, RunsFileDefaultsOnlyApplyToTheMethodsThatReadThem) {
  const Folder dir("runs-defaults");
  const auto r = test::run_cli({"plan",
                                dir.file("runs.yaml",
                                         "candidates:\n"
                                         "  gpus: [h200-nvl]\n"
                                         "defaults:\n"
                                         "  rank: 8\n"
                                         "  quant_block: 128\n"
                                         "runs:\n"
                                         "  - name: full\n"
                                         "    model: llama-3.1-8b\n"
                                         "    method: full\n"
                                         "    tokens: 1e8\n"
                                         "  - name: qlora\n"
                                         "    model: llama-3.1-8b\n"
                                         "    method: qlora\n"
                                         "    tokens: 1e8\n"),
                                "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][1]["rank"], 8);  // the default reached the run that reads it
}

// The core rule behind those errors: which method reads which setting.
TEST(InputChecks, EachMethodReadsItsOwnSettingsOnly) {
  const std::vector<std::string> adapter = {"rank", "targets", "lora_dropout", "train_modules"};
  const std::vector<std::string> quant = {"base_quant", "quant_group", "quant_block",
                                          "quant_second_block", "double_quant"};
  const auto reads = [](Method m, const std::string& setting) {
    return setting_not_read(m, setting, "method m").empty();
  };
  for (const auto& s : adapter) {
    EXPECT_FALSE(reads(Method::kFull, s)) << s;
    for (Method m : {Method::kLora, Method::kQlora, Method::kDora, Method::kQdora})
      EXPECT_TRUE(reads(m, s)) << s;
  }
  for (const auto& s : quant) {
    for (Method m : {Method::kFull, Method::kLora, Method::kDora})
      EXPECT_FALSE(reads(m, s)) << s;
    for (Method m : {Method::kQlora, Method::kQdora})
      EXPECT_TRUE(reads(m, s)) << s;
  }
  // Settings every method reads are never refused.
  for (const char* s : {"seq", "micro_batch", "optimizer", "precision"})
    EXPECT_TRUE(reads(Method::kFull, s)) << s;
  try {
    check_setting_applies(Method::kFull, "rank", "--rank", "--method full");
    ADD_FAILURE() << "a rank beside a full fine-tune was accepted";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "--rank applies to LoRA-family methods (lora, qlora, dora, qdora); --method full "
                 "trains every weight");
    EXPECT_EQ(e.field(), "rank");
  }
}

// --shard on one card: a warning on stderr, the figures of one unsharded card, exit code 0.
TEST(InputChecks, ShardingOnOneCardWarnsAndChangesNothing) {
  const std::vector<std::string> run = {"fit",  "--model", "llama-3.1-8b", "--method",
                                        "full", "--gpu",   "h200-nvl",     "--json"};
  const auto plain = test::run_cli(run);
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_FALSE(contains(plain.err, "warning")) << plain.err;
  for (const char* shard : {"fsdp", "zero1", "zero2"}) {
    auto args = run;
    args.insert(args.end(), {"--shard", shard});
    const auto r = test::run_cli(args);
    ASSERT_EQ(r.code, 0) << shard << ": " << r.err;
    EXPECT_TRUE(
        contains(r.err, std::string("warning: --shard ") + shard + " on one card shards nothing"))
        << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["memory_GB"],
              nlohmann::json::parse(plain.out)["memory_GB"])
        << shard;
  }
  // Two cards: sharding does something, no warning.
  auto two = run;
  two.insert(two.end(), {"--gpus", "2", "--shard", "fsdp"});
  const auto r = test::run_cli(two);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(contains(r.err, "warning")) << r.err;
  // scale with one card says the same.
  const auto scale = test::run_cli({"scale", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                    "h200-nvl", "--gpus", "1", "--shard", "fsdp"});
  ASSERT_EQ(scale.code, 0) << scale.err;
  EXPECT_TRUE(contains(scale.err, "warning: --shard fsdp on one card shards nothing")) << scale.err;
}

// DeepSpeed's stage 3 is FSDP's full sharding by another name: --shard zero3 gives fsdp's figures
// and reports itself as fsdp; a wrong name lists zero3 beside the table's names.
TEST(InputChecks, Zero3ReadsAsFsdp) {
  const std::vector<std::string> run = {"fit",   "--model",  "llama-3.1-8b", "--method", "full",
                                        "--gpu", "h200-nvl", "--gpus",       "4",        "--json"};
  auto with = [&](const char* shard) {
    auto args = run;
    args.insert(args.end(), {"--shard", shard});
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 0) << shard << ": " << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto zero3 = with("zero3");
  const auto fsdp = with("fsdp");
  EXPECT_EQ(zero3["memory_GB"], fsdp["memory_GB"]);
  EXPECT_EQ(zero3["shard"], "fsdp");
  EXPECT_LT(zero3["memory_GB"]["model_states"].get<double>(),
            with("zero2")["memory_GB"]["model_states"].get<double>());
  auto bad = run;
  bad.insert(bad.end(), {"--shard", "zero4"});
  const auto r = test::run_cli(bad);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "unknown sharding strategy 'zero4'")) << r.err;
  EXPECT_TRUE(contains(r.err, "zero3")) << r.err;
}

}  // namespace
}  // namespace ftplan
