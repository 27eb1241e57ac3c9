// Variable sequence lengths: the lengths files, the distributions the step is timed on, and the
// step and memory they give (workload/lengths.hpp, perf/ops.cpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "core/error.hpp"
#include "memory/fit.hpp"
#include "perf/device.hpp"
#include "perf/ops.hpp"
#include "perf/step.hpp"
#include "support.hpp"
#include "workload/lengths.hpp"

namespace ftplan {
namespace {

double mean_of(const std::vector<LengthBin>& d) {
  return expectation(d, [](double s) { return s; });
}
double square_mean_of(const std::vector<LengthBin>& d) {
  return expectation(d, [](double s) { return s * s; });
}

// Three samples of 100 tokens and one of 300: mean (300 + 300) / 4 = 150,
// E[s²] = (3 · 10 000 + 90 000) / 4 = 30 000.
constexpr std::string_view kHistogram = "- {tokens: 100, count: 3}\n- {tokens: 300, count: 1}\n";

SequenceLengths histogram() {
  SequenceLengths l;
  l.histogram = parse_lengths(kHistogram, "h.yaml");
  return l;
}

TEST(Lengths, HistogramGivesMeanAndMeanSquare) {
  const auto d = length_distribution(histogram(), 4096);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_DOUBLE_EQ(mean_of(d), 150);
  EXPECT_DOUBLE_EQ(square_mean_of(d), 30000);
  // Cut to seq 200: (3 · 100 + 200) / 4 = 125.
  EXPECT_DOUBLE_EQ(mean_of(length_distribution(histogram(), 200)), 125);
}

TEST(Lengths, JsonHistogramJsonlAndIntegersAgree) {
  const auto json = parse_lengths(
      R"({"lengths": [{"tokens": 100, "count": 3}, {"tokens": 300, "count": 1}]})", "h.json");
  const auto jsonl = parse_lengths(
      "{\"num_tokens\": 100}\n{\"length\": 300, \"text\": \"x\"}\n\n{\"n_tokens\": 100}\n"
      "{\"num_tokens\": 100}\n",
      "d.jsonl");
  const auto lines = parse_lengths("# lengths\n100\n300\n100\n100\n", "d.txt");
  for (const auto* d : {&json, &jsonl, &lines}) {
    SequenceLengths l;
    l.histogram = *d;
    EXPECT_DOUBLE_EQ(mean_of(length_distribution(l, 4096)), 150);
    EXPECT_DOUBLE_EQ(square_mean_of(length_distribution(l, 4096)), 30000);
  }
}

std::string error_of(std::string_view text, const std::string& file) {
  try {
    parse_lengths(text, file);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(Lengths, BadFilesNameFileLineAndKey) {
  EXPECT_NE(error_of("{\"num_tokens\": 5}\n{\"num_token\": 7}\n", "d.jsonl")
                .find("d.jsonl: line 2: no token count"),
            std::string::npos);
  EXPECT_NE(error_of("{\"num_tokens\": 5}\n{\"num_token\": 7}\n", "d.jsonl")
                .find("did you mean 'num_tokens'"),
            std::string::npos);
  EXPECT_NE(error_of("{\"length\": 2.5}\n", "d.jsonl").find("line 1: key 'length' is 2.5"),
            std::string::npos);
  EXPECT_NE(error_of("1\n\n12x\n", "d.txt").find("d.txt: line 3: '12x'"), std::string::npos);
  EXPECT_NE(error_of("- {tokens: 100, cout: 3}\n", "h.yaml").find("cout"), std::string::npos);
  EXPECT_NE(error_of("- {tokens: 0, count: 3}\n", "h.yaml").find("tokens"), std::string::npos);
  EXPECT_NE(error_of("\n# nothing\n", "e.txt").find("e.txt: no lengths"), std::string::npos);
}

TEST(Lengths, BatchMaximumOfTwoSamples) {
  // Two samples from {100: 3/4, 300: 1/4}: both 100 with probability 9/16, else the longest is
  // 300: E[max] = (9 · 100 + 7 · 300) / 16 = 187.5.
  const auto m = batch_max_distribution(length_distribution(histogram(), 4096), 2);
  EXPECT_DOUBLE_EQ(mean_of(m), 187.5);
}

TEST(Lengths, MeanOnlySpreadsEvenlyAndKeepsTheMean) {
  SequenceLengths l;
  l.mean = 1024;
  const auto d = length_distribution(l, 4096);  // 1024 < 4096 / 2: over [1, 2047]
  EXPECT_NEAR(mean_of(d), 1024, 1e-9);
  EXPECT_GE(d.front().tokens, 1);
  EXPECT_LE(d.back().tokens, 2047);
  l.mean = 3072;  // over [2048, 4096]: E[s²] = 3072² + 2048² / 12 (uniform), to the grid's error
  EXPECT_NEAR(square_mean_of(length_distribution(l, 4096)) / (3072.0 * 3072 + 2048.0 * 2048 / 12),
              1, 1e-3);
}

const Op* find(const StepOps& ops, const std::string& name) {
  for (const auto& op : ops.ops)
    if (op.name == name) return &op;
  return nullptr;
}

double attention_pairs(const Workload& w) {
  const StepOps ops = build_step_ops(w);
  const Op* op = find(ops, "attention.core.fwd");
  EXPECT_NE(op, nullptr);
  const ModelArch& a = w.model->arch;
  return op ? op->flops.value / (4 * static_cast<double>(a.head_dim * a.heads)) : 0;
}

Workload llama(std::int64_t seq) {
  Workload w = test::workload("llama-3.1-8b", Method::kLora);
  w.seq = seq;
  w.attention = Attention::kFlash;
  return w;
}

TEST(Lengths, PackedPaddingFreeAttentionIsPerDocument) {
  Workload w = llama(600);
  w.lengths = histogram();
  w.lengths.packing = true;
  w.lengths.padding_free = true;
  // A 600-token row holds 600 / 150 = 4 samples: three of 100 and one of 300 on average,
  // Σ s(s + 1) / 2 = 3 · 5050 + 45150 = 60300 causal pairs.
  EXPECT_NEAR(attention_pairs(w), 60300, 1e-6);
  // Without padding-free attention, the row attends across its samples: 600 · 601 / 2.
  w.lengths.padding_free = false;
  EXPECT_NEAR(attention_pairs(w), 180300, 1e-6);
  // Packed rows are full: 600 real tokens per row.
  EXPECT_EQ(build_step_ops(w).tokens_per_micro_batch, 600);
}

TEST(Lengths, UnpackedBatchesArePaddedToTheirLongest) {
  Workload w = llama(4096);
  w.micro_batch = 2;
  w.lengths = histogram();
  // Two rows of the batch's longest: E[max(s)(max(s) + 1) / 2] = (9 · 5050 + 7 · 45150) / 16.
  EXPECT_NEAR(attention_pairs(w), 2 * (9 * 5050.0 + 7 * 45150.0) / 16, 1e-6);
  // Real tokens: 2 × 150; padded tokens processed: 2 × 187.5 (one norm FLOP count per token).
  const StepOps padded = build_step_ops(w);
  EXPECT_EQ(padded.tokens_per_micro_batch, 300);
  w.lengths.padding_free = true;  // concatenated without padding: 2 × E[s(s + 1) / 2]
  EXPECT_NEAR(attention_pairs(w), 2 * (3 * 5050.0 + 45150.0) / 4, 1e-6);
  const StepOps free = build_step_ops(w);
  EXPECT_NEAR(find(padded, "norm.fwd")->flops.value / find(free, "norm.fwd")->flops.value,
              187.5 / 150, 1e-12);
}

TEST(Lengths, MeanTimesTheStepLongestSetsTheMemory) {
  const Device d = make_device(test::catalog().gpu("h200-nvl"));
  const EfficiencyTable& e = test::roofline_efficiency();
  Workload mixed = llama(4096);
  mixed.lengths.mean = 1024;
  const Workload short_run = llama(1024), long_run = llama(4096);
  const double t_mixed = estimate_step(build_step_ops(mixed), d, e).step.value;
  const double t_short = estimate_step(build_step_ops(short_run), d, e).step.value;
  const double t_long = estimate_step(build_step_ops(long_run), d, e).step.value;
  EXPECT_GT(t_mixed, t_short);
  EXPECT_LT(t_mixed, t_long);
  // The real tokens per step are the mean's.
  EXPECT_EQ(estimate_step(build_step_ops(mixed), d, e).tokens, 1024);
  const Placement p = test::on("h200-nvl");
  EXPECT_EQ(estimate_memory(mixed, p).peak.value, estimate_memory(long_run, p).peak.value);
}

TEST(Lengths, FixedLengthsChangeNothing) {
  // Packing samples of exactly seq tokens without padding-free attention is the fixed run.
  Workload fixed = llama(2048);
  Workload packed = fixed;
  packed.lengths.packing = true;
  const StepOps a = build_step_ops(fixed), b = build_step_ops(packed);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    EXPECT_EQ(a.ops[i].flops.value, b.ops[i].flops.value) << a.ops[i].name;
    EXPECT_EQ(a.ops[i].bytes.value, b.ops[i].bytes.value) << a.ops[i].name;
  }
}

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Lengths, CliReadsTheFileAndTakesTheLongestFromIt) {
  const std::string path = temp_file("lengths_ok.txt", "100\n300\n100\n100\n");
  const auto r = test::run_cli({"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                "h200-nvl", "--lengths", path, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["seq"], 300);
  EXPECT_EQ(j["seq_mean"], 150);
  EXPECT_EQ(j["tokens_per_step"], 150);
  const auto text = test::run_cli({"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                   "h200-nvl", "--lengths", path, "--seq", "4096"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("the longest 4096"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("tokens per second count real tokens"), std::string::npos);
}

// --seq-max (the longest sample) is --seq under the issue's name: the same run, and with
// --seq-mean the step timed on the mean while the peak stays at the longest.
TEST(Lengths, SeqMaxIsSeq) {
  const std::vector<std::string> run = {
      "scale",  "--model", "llama-3.1-8b", "--method", "full",       "--gpu", "h100-sxm",
      "--gpus", "8",       "--shard",      "fsdp",     "--seq-mean", "1500",  "--json"};
  auto with = [&](const char* option) {
    std::vector<std::string> args = run;
    args.insert(args.end(), {option, "8192"});
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto as_max = with("--seq-max");
  EXPECT_EQ(as_max, with("--seq"));
  EXPECT_EQ(as_max["seq"], 8192);
  EXPECT_EQ(as_max["seq_mean"], 1500);
}

// In a runs file `seq_max` is `seq` too; a default `seq` does not override a run's `seq_max`, and
// a run that gives both is told to give one.
TEST(Lengths, RunsFileSeqMaxIsSeq) {
  auto plan = [](const std::string& name, const std::string& text) {
    const auto r = test::run_cli({"plan", temp_file(name, text), "--gpu", "h200-nvl", "--json"});
    return std::pair{r, r.code == 0 ? nlohmann::json::parse(r.out)["runs"][0] : nlohmann::json()};
  };
  const std::string run = "  - {name: r, model: llama-3.1-8b, method: lora, tokens: 1e8, ";
  const auto [as_seq, seq_json] = plan("runs_seq.yaml", "runs:\n" + run + "seq: 8192}\n");
  ASSERT_EQ(as_seq.code, 0) << as_seq.err;
  const auto [as_max, max_json] = plan("runs_seq_max.yaml", "runs:\n" + run + "seq_max: 8192}\n");
  ASSERT_EQ(as_max.code, 0) << as_max.err;
  EXPECT_EQ(max_json, seq_json);
  const auto [under_default, default_json] =
      plan("runs_seq_default.yaml", "defaults: {seq: 1024}\nruns:\n" + run + "seq_max: 8192}\n");
  ASSERT_EQ(under_default.code, 0) << under_default.err;
  EXPECT_EQ(default_json, seq_json);
  const auto [shorter, shorter_json] =
      plan("runs_seq_short.yaml", "runs:\n" + run + "seq: 1024}\n");
  ASSERT_EQ(shorter.code, 0) << shorter.err;
  EXPECT_NE(shorter_json, seq_json);  // the length is used
  const auto [both, both_json] =
      plan("runs_seq_both.yaml", "runs:\n" + run + "seq: 1024, seq_max: 8192}\n");
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("seq_max is another name for seq: give one of them"), std::string::npos)
      << both.err;
  EXPECT_NE(both.err.find("runs_seq_both.yaml"), std::string::npos) << both.err;
}

TEST(Lengths, CliBadFileExits2NamingFileLineAndKey) {
  const std::string path =
      temp_file("lengths_bad.jsonl", "{\"num_tokens\": 5}\n{\"tokens\": -1}\n");
  const auto r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                "h200-nvl", "--lengths", path});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(path + ": line 2: key 'tokens' is -1"), std::string::npos) << r.err;
  const auto m = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                "h200-nvl", "--seq", "1024", "--seq-mean", "2048"});
  EXPECT_EQ(m.code, 2);
  EXPECT_NE(m.err.find("mean tokens per sample must be 1 to the longest (1024), got 2048"),
            std::string::npos)
      << m.err;
}

}  // namespace
}  // namespace ftplan
