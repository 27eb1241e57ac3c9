// The step model against published throughputs (plan/throughput): the leave-one-source-out error
// the README states, the fit record the ranges come from, software stacks, and SDPA timed as the
// kernel it runs.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "memory/measured_runs.hpp"
#include "perf/ops.hpp"
#include "perf/step.hpp"
#include "plan/throughput.hpp"
#include "render/calibration_yaml.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

const PlanningData& data() {
  static const PlanningData d = PlanningData::load(test::catalog());
  return d;
}

const std::vector<MeasuredRun>& published() {
  static const std::vector<MeasuredRun> runs = [] {
    const DataFile* f = test::catalog().file("measured/published.yaml");
    return parse_measured_runs(*f, test::catalog(), test::overheads(), test::stacks());
  }();
  return runs;
}

TEST(Throughput, LeaveOneSourceOutErrorMeetsTheStatedFigures) {
  const ThroughputReport r = validate_throughput(published(), data(), true);
  EXPECT_GE(r.compared, 20);
  EXPECT_GE(r.sources, 4);
  // The goal of the step model: median |error| at most 15 % on sources it was not fitted to.
  EXPECT_LE(r.loso_median_abs_error, 0.15);
  EXPECT_GE(r.loso_within_25, 0.75);
  // The table's fit record (what the ranges are made of) is what validate computes, within two
  // points: a change of model or data without a refit fails here.
  const FitRecord& fit = data().default_efficiency.fit;
  EXPECT_EQ(fit.runs, r.compared);
  EXPECT_EQ(fit.sources, r.sources);
  EXPECT_NEAR(fit.loso_median_abs_error, r.loso_median_abs_error, 0.02);
  EXPECT_NEAR(fit.median_abs_error, r.median_abs_error, 0.02);
  EXPECT_NEAR(fit.error_low, r.loso_error_p10, 0.03);
  EXPECT_NEAR(fit.error_high, r.loso_error_p90, 0.03);
  // Every compared run is predicted, with a finite error.
  for (const auto& row : r.rows)
    if (row.compared) {
      EXPECT_GT(row.predicted, 0) << row.run->id;
      EXPECT_TRUE(std::isfinite(row.loso_error)) << row.run->id;
    } else {
      EXPECT_FALSE(row.reason.empty()) << row.run->id;
    }
}

TEST(Throughput, StepTimesCarryTheFittedRange) {
  Workload w = test::workload("llama-3.1-8b", Method::kLora);
  w.stack = &test::stacks().fallback();
  const StepEstimate s =
      estimate_step(build_step_ops(w), make_device(test::catalog().gpu("a100-80gb-sxm")),
                    data().default_efficiency);
  ASSERT_TRUE(s.feasible);
  const FitRecord& fit = data().default_efficiency.fit;
  EXPECT_NEAR(s.step_low.value, s.step.value * (1 + fit.error_low), 1e-12);
  EXPECT_NEAR(s.step_high.value, s.step.value * (1 + fit.error_high), 1e-12);
  EXPECT_LT(s.tokens_per_second_low, s.tokens_per_second);
  EXPECT_GT(s.tokens_per_second_high, s.tokens_per_second);
  // The host's time: the fixed time per micro-batch at least.
  EXPECT_GE(s.host.value, data().default_efficiency.host.seconds_per_micro_batch);
}

TEST(Throughput, SdpaIsTimedAsTheFlashKernelOnRepeatedKeysAndValues) {
  // At 8k tokens eager attention writes s×s scores; SDPA runs FlashAttention-2 on K and V
  // repeated to every head: a few % from flash, not 2×.
  Workload w = test::workload("llama-3.1-8b", Method::kLora);
  w.seq = 8192;
  const Device d = make_device(test::catalog().gpu("h100-sxm"));
  auto step = [&](Attention a) {
    w.attention = a;
    return estimate_step(build_step_ops(w), d, test::roofline_efficiency()).step.value;
  };
  const double flash = step(Attention::kFlash), sdpa = step(Attention::kSdpa),
               eager = step(Attention::kEager);
  EXPECT_GT(sdpa, flash);
  EXPECT_LT(sdpa / flash, 1.05);
  EXPECT_GT(eager / flash, 1.3);
}

TEST(Throughput, StacksAreDataWithTheirChoices) {
  const Stacks& s = test::stacks();
  EXPECT_EQ(s.profiles.front().name, "hf");
  EXPECT_EQ(s.find("hf").attention, Attention::kSdpa);
  EXPECT_TRUE(s.find("unsloth").compile);
  EXPECT_EQ(s.find("megatron").attention, Attention::kFlash);
  try {
    s.find("torchtun");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("torchtune"), std::string::npos) << e.what();
  }
  // A compiled stack launches fewer kernels: less host time for the same run.
  Workload w = test::workload("llama-3.2-1b", Method::kLora);
  w.seq = 256;
  const Device d = make_device(test::catalog().gpu("h100-sxm"));
  const StepEstimate eager = estimate_step(build_step_ops(w), d, data().default_efficiency);
  w.options.compile = true;
  const StepEstimate compiled = estimate_step(build_step_ops(w), d, data().default_efficiency);
  EXPECT_LT(compiled.host, eager.host);
  EXPECT_LT(compiled.step, eager.step);
}

TEST(Throughput, AnArchitectureNoCardHasIsAnErrorWithTheClosestName) {
  EfficiencyTable t = data().default_efficiency;
  ArchitectureScale typo;
  typo.architecture = "hoper";
  typo.compute.fill(0.9);
  t.architectures.push_back(typo);
  try {
    check_architectures(t, test::catalog());
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("key 'architectures.hoper'"), std::string::npos) << what;
    EXPECT_NE(what.find("did you mean hopper?"), std::string::npos) << what;
  }
}

TEST(Throughput, TheTableWithItsHostArchitecturesAndFitReadsBackUnchanged) {
  const EfficiencyTable& d = data().default_efficiency;
  const EfficiencyTable back = parse_efficiency(
      {"back.yaml", efficiency_yaml(d, {"round trip"}), {}}, test::catalog().sources());
  EXPECT_NEAR(back.host.seconds_per_launch, d.host.seconds_per_launch, 1e-12);
  EXPECT_NEAR(back.host.seconds_per_micro_batch, d.host.seconds_per_micro_batch, 1e-12);
  for (std::size_t i = 0; i < kOpClassCount; ++i) {
    EXPECT_EQ(back.host.launches_eager[i], d.host.launches_eager[i]);
    EXPECT_EQ(back.host.launches_compiled[i], d.host.launches_compiled[i]);
  }
  ASSERT_EQ(back.architectures.size(), d.architectures.size());
  for (const auto& a : d.architectures)
    EXPECT_EQ(back.compute_scale(a.architecture, OpClass::kGemm),
              d.compute_scale(a.architecture, OpClass::kGemm));
  EXPECT_EQ(back.fit.runs, d.fit.runs);
  EXPECT_EQ(back.fit.error_low, d.fit.error_low);
  EXPECT_EQ(back.fit.error_high, d.fit.error_high);
}

TEST(Throughput, CalibrateFitWritesAFileTheOtherCommandsTake) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "ftplan-test-calibrate-fit";
  fs::create_directories(dir);
  const std::string out = (dir / "fitted.yaml").string();
  const std::string src = FTPLAN_SOURCE_DIR;
  auto r = test::run_cli({"calibrate", "fit", src + "/data/measured/published.yaml", "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("leave-one-source-out"), std::string::npos) << r.out;
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  const EfficiencyTable t = parse_efficiency({out, text.str(), {}}, test::catalog().sources());
  // The residuals it reports are those validate computes on the same runs.
  const ThroughputReport v = validate_throughput(published(), data(), true);
  EXPECT_EQ(t.fit.runs, v.compared);
  EXPECT_NEAR(t.fit.loso_median_abs_error, v.loso_median_abs_error, 1e-6);
  EXPECT_NEAR(t.host.seconds_per_launch, v.fitted.launch_us * 1e-6, 1e-9);
  // The other commands take it.
  r = test::run_cli({"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                     "a100-80gb-sxm", "--calibration", out, "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  // A file without a comparable throughput has nothing to fit: a user error that says why.
  r = test::run_cli({"calibrate", "fit", src + "/tests/cases/measured/my-runs.yaml"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nothing to fit"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ftplan
