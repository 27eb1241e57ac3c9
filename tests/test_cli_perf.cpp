// The documented interfaces of `ftplan roofline`, `ftplan step` and `ftplan compare`: flags, JSON
// keys and the figures they carry.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "perf/efficiency.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;

std::string read_source_file(const std::string& relative) {
  std::ifstream in(std::string(FTPLAN_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

json run_json(const std::vector<std::string>& args) {
  auto r = test::run_cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

TEST(CliPerf, RooflineJsonHasTheDocumentedKeys) {
  const json j = run_json(
      {"roofline", "--gemm", "512,4096,1024", "--dtype", "fp16", "--gpu", "h200-nvl", "--json"});
  EXPECT_EQ(j["flops"].get<double>(), 2.0 * 512 * 4096 * 1024);
  EXPECT_EQ(j["bytes"].get<double>(), 2.0 * (512 * 1024 + 1024 * 4096 + 512 * 4096));
  EXPECT_NEAR(j["intensity"].get<double>(), 315.08, 0.01);
  EXPECT_NEAR(j["ops_per_byte"].get<double>(), 174.06, 0.01);
  EXPECT_EQ(j["bound"], "compute");
  EXPECT_EQ(j["m"], 512);
  const json one = run_json(
      {"roofline", "--gemm", "1,4096,1024", "--dtype", "fp16", "--gpu", "h200-nvl", "--json"});
  EXPECT_EQ(one["bound"], "memory");
  // Attainable rate at intensity 1 is the bandwidth times 1 FLOP/B.
  EXPECT_NEAR(one["attainable_TFLOPS"].get<double>(), 4.8 * one["intensity"].get<double>(), 0.01);
}

TEST(CliPerf, RooflineTextNamesTheBound) {
  const auto r = test::run_cli({"roofline", "--gemm", "2048,16,4096", "--gpu", "rtx-pro-6000"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("15.8 FLOP/B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("281.1 FLOP/B"), std::string::npos);
  EXPECT_NE(r.out.find("bound: memory"), std::string::npos);
  EXPECT_NE(r.out.find("268 MFLOP"), std::string::npos);  // 2·2048·16·4096
  EXPECT_NE(r.out.find("17 MB"), std::string::npos);      // 2·(2048·4096 + 4096·16 + 2048·16)
}

TEST(CliPerf, StepJsonHasTheDocumentedKeysAndAddsUp) {
  const json j = run_json({"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                           "h200-nvl", "--seq", "2048", "--recompute", "full", "--json"});
  for (const char* key : {"step_seconds", "tokens_per_second", "mfu", "forward_seconds",
                          "backward_seconds", "optimizer_seconds", "classes", "ops"})
    EXPECT_TRUE(j.contains(key)) << key;
  double sum = 0;
  for (const auto& op : j["ops"]) {
    for (const char* key : {"name", "flops", "bytes", "intensity", "bound", "seconds"})
      EXPECT_TRUE(op.contains(key)) << key;
    sum += op["seconds"].get<double>();
  }
  // The ops' roofline times plus the host's (launch waits, fixed time per micro-batch);
  // grad-accum 1.
  EXPECT_NEAR(sum + j["host_seconds"].get<double>(), j["step_seconds"].get<double>(), 1e-9);
  EXPECT_GT(j["host_seconds"].get<double>(), 0);
  EXPECT_EQ(j["stack"], "hf");
  ASSERT_EQ(j["step_seconds_range"].size(), 2u);
  EXPECT_LT(j["step_seconds_range"][0].get<double>(), j["step_seconds"].get<double>());
  EXPECT_GT(j["step_seconds_range"][1].get<double>(), j["step_seconds"].get<double>());
  EXPECT_NEAR(j["tokens_per_second"].get<double>(), 2048 / j["step_seconds"].get<double>(), 0.01);
  EXPECT_GT(j["mfu"].get<double>(), 0.1);
  EXPECT_LT(j["mfu"].get<double>(), 0.8);
  EXPECT_EQ(j["layers"], 32);
}

TEST(CliPerf, StepTextShowsTheSplitAndTopOps) {
  const auto r =
      test::run_cli({"step", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu", "h200-nvl"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s :
       {"op class", "gemm", "dequant", "tokens per second", "MFU", "mlp.up_proj.fwd", "--all-ops"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST(CliPerf, StepAcceptsPrecisionRecomputeMigAndCalibration) {
  const json fp8 = run_json({"step", "--model", "llama-3.1-8b", "--method", "full", "--gpu",
                             "h200-nvl", "--precision", "fp8", "--recompute", "none", "--json"});
  const json bf16 = run_json({"step", "--model", "llama-3.1-8b", "--method", "full", "--gpu",
                              "h200-nvl", "--recompute", "none", "--json"});
  EXPECT_LT(fp8["step_seconds"].get<double>(), bf16["step_seconds"].get<double>());
  const json mig = run_json({"step", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu",
                             "h200-nvl", "--mig", "1g.18gb", "--json"});
  EXPECT_EQ(mig["device"]["mig"], "1g.18gb");
  const std::string src = FTPLAN_SOURCE_DIR;
  const json cal =
      run_json({"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl",
                "--calibration", src + "/tests/cases/calibration/h200-half-gemm.yaml", "--json"});
  EXPECT_EQ(cal["efficiency"]["card"], "h200-nvl");
  const json def = run_json(
      {"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl", "--json"});
  // Half the defaults' fractions, measured on the card: the defaults' multiplier for Hopper (fitted
  // to whole steps) does not apply to a calibration.
  const double hopper = default_efficiency(test::catalog()).compute_scale("hopper", OpClass::kGemm);
  EXPECT_NEAR(cal["classes"]["gemm"]["seconds"].get<double>() /
                  def["classes"]["gemm"]["seconds"].get<double>(),
              2.0 * hopper, 1e-3);  // GEMMs shorter than their launches keep the launch time
}

TEST(CliPerf, CompareJsonHasRatesRatiosFormatsAndTheStep) {
  const json j = run_json({"compare", "--gpu", "h200-nvl", "--gpu", "rtx-pro-6000", "--model",
                           "llama-3.1-8b", "--method", "lora", "--json"});
  bool saw_bf16 = false;
  for (const auto& row : j["dense_rates"])
    if (row["precision"] == "bf16") {
      saw_bf16 = true;
      EXPECT_NEAR(row["ratio"].get<double>(), 1.6584, 1e-4);
    }
  EXPECT_TRUE(saw_bf16);
  EXPECT_NEAR(j["bandwidth_GBps"]["ratio"].get<double>(), 2.6786, 1e-4);
  EXPECT_EQ(j["training_formats"].size(), 5u);
  const json& step = j["step"];
  const double overall = step["overall_ratio"].get<double>();
  // Large GEMMs go by the tensor rate times the architectures' multipliers (Hopper's fitted to
  // measured runs, Blackwell's 1): the effective ratio, below which the overall one cannot fall.
  const EfficiencyTable e = default_efficiency(test::catalog());
  const double effective = 1.6584 * e.compute_scale("hopper", OpClass::kGemm) /
                           e.compute_scale("blackwell", OpClass::kGemm);
  EXPECT_NEAR(step["tensor_rate_ratio"].get<double>(), 1.6584, 1e-4);
  EXPECT_NEAR(step["effective_tensor_ratio"].get<double>(), effective, 1e-4);
  EXPECT_GT(overall, step["effective_tensor_ratio"].get<double>());
  EXPECT_LT(overall, step["bandwidth_ratio"].get<double>());
  EXPECT_NEAR(step["class_ratio"]["gemm"].get<double>(), effective, 1e-4);
  EXPECT_NEAR(step["class_ratio"]["norm"].get<double>(), 2.6786, 1e-4);
}

TEST(CliPerf, CompareTextExplainsTheRatio) {
  const auto r = test::run_cli({"--wide", "compare", "--gpu", "h200-nvl", "--gpu", "rtx-pro-6000",
                                "--model", "llama-3.1-8b", "--method", "lora"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"1.66×", "2.68×", "ops:byte bf16", "174", "281", "MXFP8", "NVFP4",
                        "(1.66× at datasheet rates, times the efficiency each architecture "
                        "reaches in measured runs) and the bandwidth ratio 2.68×"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(CliPerf, ReadmeStepTimeSectionMatchesTheModel) {
  // docs/method.md states what `ftplan step` predicts for the seed's 8B LoRA run; keep it true.
  const std::string readme = read_source_file("docs/method.md");
  double steps[2];
  int i = 0;
  for (const char* gpu : {"h200-nvl", "rtx-pro-6000"}) {
    const json j =
        run_json({"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", gpu, "--json"});
    steps[i++] = j["step_seconds"].get<double>();
    const std::string ms = std::to_string(static_cast<int>(std::lround(steps[i - 1] * 1e3)));
    EXPECT_NE(readme.find("| " + ms + " ms"), std::string::npos) << gpu << " " << ms;
  }
  char ratio[16];
  std::snprintf(ratio, sizeof ratio, "%.2f×", steps[1] / steps[0]);
  EXPECT_NE(readme.find(std::string("| ") + ratio + " |"), std::string::npos) << ratio;
}

}  // namespace
}  // namespace ftplan
