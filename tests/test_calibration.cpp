// Calibration: ftplan-bench, NCCL and measured-step results read strictly, the card matched, the
// efficiency and link fits (median per size range), the file written and read back by the parser
// of --calibration, predictions checked against the measurements, FTPLAN_CALIBRATION_DIR.
// Everything runs on the checked-in SYNTHETIC samples of bench/results/sample/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "catalog/device_match.hpp"
#include "cli/perf_options.hpp"
#include "comm/collectives.hpp"
#include "comm/link_calibration.hpp"
#include "core/error.hpp"
#include "perf/calibration.hpp"
#include "plan/measured_step.hpp"
#include "render/calibration_yaml.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

std::string sample_path(const std::string& name) {
  return std::string(FTPLAN_SOURCE_DIR) + "/bench/results/sample/" + name;
}

const std::string& bench_text() {
  static const std::string t = slurp(sample_path("ftplan-bench-sample.json"));
  return t;
}

const EfficiencyTable& defaults() {
  static const EfficiencyTable e = default_efficiency(test::catalog());
  return e;
}

BenchResults parse_bench(const std::string& text,
                         FailedBenchmarks failed = FailedBenchmarks::kReject) {
  return parse_bench_results({"results.json", text, {}}, failed);
}

// The error text of parsing `text` ("" when it parses).
std::string bench_error(const std::string& text) {
  try {
    parse_bench(text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// The sample with one change.
std::string edited(const std::function<void(json&)>& change) {
  json j = json::parse(bench_text());
  change(j);
  return j.dump(2);
}

json& first_gemm(json& j) {
  return j["benchmarks"][0];
}

// Everything a test needs from one import of a results text.
struct Imported {
  BenchResults results;
  CardMatch card;
  Device device;
  std::vector<BenchMeasurement> measurements;
  CalibrationFit fit;
};

std::unique_ptr<Imported> import(const std::string& text,
                                 TensorPrecision gemm = TensorPrecision::kBF16) {
  auto out = std::make_unique<Imported>();
  out->results = parse_bench(text);
  out->card = match_card(test::catalog(), out->results.device, "results.json");
  out->device = make_device(*out->card.gpu);
  out->measurements = measure_benchmarks(out->results, out->device, defaults(), gemm);
  out->fit = fit_calibration(out->measurements, defaults(),
                             bench_calibration_header(out->results, *out->card.gpu, "test"));
  return out;
}

// ---- the card --------------------------------------------------------------------------------

DeviceIdentity device(const std::string& name, const std::string& cc, double mib) {
  return {name, cc, mib > 0 ? std::optional<Bytes>(bytes_from_MiB(mib)) : std::nullopt};
}

std::string match_error(const DeviceIdentity& d) {
  try {
    match_card(test::catalog(), d, "r.json");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(CalibrationCard, ThePlainNameIsTheSxmModuleAndExactNamesWin) {
  EXPECT_EQ(match_card(test::catalog(), device("NVIDIA H200", "9.0", 143771), "r").gpu->id,
            "h200-sxm");
  EXPECT_EQ(match_card(test::catalog(), device("NVIDIA H200 NVL", "9.0", 143771), "r").gpu->id,
            "h200-nvl");
  EXPECT_EQ(
      match_card(test::catalog(), device("NVIDIA GeForce RTX 4090", "8.9", 24564), "r").gpu->id,
      "rtx-4090");
  // A name nvidia-smi prints, from the card files' smi_names.
  const CardMatch h100 =
      match_card(test::catalog(), device("NVIDIA H100 80GB HBM3", "9.0", 81559), "r");
  EXPECT_EQ(h100.gpu->id, "h100-sxm");
  EXPECT_NE(h100.basis.find("smi_names"), std::string::npos) << h100.basis;
  // No name matches: the only card of that compute capability and memory.
  const CardMatch ada = match_card(test::catalog(), device("Some RTX 6000", "8.9", 49140), "r");
  EXPECT_EQ(ada.gpu->id, "rtx-6000-ada");
  EXPECT_NE(ada.basis.find("49140 MiB"), std::string::npos) << ada.basis;
}

TEST(CalibrationCard, AmbiguousAndContradictoryDevicesAreErrorsListingTheCandidates) {
  // A name no card lists: PCIe and SXM share compute capability and memory (and the L40 and
  // L40S theirs).
  const std::string h100 = match_error(device("Some H100", "9.0", 81559));
  EXPECT_NE(h100.find("matches several catalog cards: h100-pcie, h100-sxm"), std::string::npos)
      << h100;
  EXPECT_NE(match_error(device("Some L40S", "8.9", 46068)).find("l40, l40s"), std::string::npos);
  EXPECT_NE(h100.find("--gpu ID"), std::string::npos);
  const std::string rtx = match_error(device("NVIDIA RTX PRO 6000 Blackwell", "12.0", 97887));
  for (const char* id : {"rtx-pro-6000;", "rtx-pro-6000-maxq", "rtx-pro-6000-server"})
    EXPECT_NE(rtx.find(id), std::string::npos) << rtx;
  EXPECT_NE(rtx.find("matches several catalog cards"), std::string::npos) << rtx;
  const std::string cc = match_error(device("NVIDIA H200", "8.0", 143771));
  EXPECT_NE(cc.find("reports compute capability 8.0, but its catalog card h200-sxm has 9.0"),
            std::string::npos)
      << cc;
  const std::string none = match_error(device("Unknown GPU", "9.0", 1000));
  EXPECT_NE(none.find("matches no catalog card"), std::string::npos) << none;
}

// ---- the results file ------------------------------------------------------------------------

TEST(CalibrationResults, TheSampleParsesAndSaysItIsSynthetic) {
  const BenchResults r = parse_bench(bench_text());
  EXPECT_EQ(r.device.name, "NVIDIA H200");
  EXPECT_EQ(r.date(), "2026-01-01");
  EXPECT_NE(r.note.find("SYNTHETIC"), std::string::npos);
  EXPECT_EQ(r.benchmarks.size(), json::parse(bench_text())["benchmarks"].size());
}

TEST(CalibrationResults, BadFilesAreRejectedNamingTheKey) {
  struct Case {
    const char* what;
    std::function<void(json&)> change;
    const char* error;
  };
  const std::vector<Case> cases = {
      {"unknown schema version", [](json& j) { j["schema"] = "ftplan-bench/2"; },
       "schema 'ftplan-bench/2' is not supported"},
      {"missing key", [](json& j) { j["device"].erase("sm_count"); },
       "required key 'device.sm_count' is missing"},
      {"unknown key", [](json& j) { first_gemm(j)["medain_s"] = 1; },
       "unknown key 'benchmarks[0].medain_s'"},
      {"rate in GFLOPS", [](json& j) { first_gemm(j)["achieved_TFLOPS"] = 692650.0; },
       "rates are in TFLOPS (10^12 FLOP/s) and times in seconds"},
      {"time in ms",
       [](json& j) {
         for (const char* k : {"median_s", "min_s", "max_s"})
           first_gemm(j)[k] = first_gemm(j)[k].get<double>() * 1e3;
       },
       "key 'benchmarks[0].achieved_TFLOPS'"},
      {"memory in MiB", [](json& j) { j["device"]["memory_total_bytes"] = 143771; },
       "the key is in bytes"},
      {"ok with a failed check", [](json& j) { first_gemm(j)["check"]["passed"] = false; },
       "contradicts itself"},
      {"unknown class", [](json& j) { first_gemm(j)["class"] = "gemv"; }, "unknown value 'gemv'"},
      {"no benchmarks", [](json& j) { j["benchmarks"] = json::array(); }, "holds no benchmark"},
      {"duplicate id", [](json& j) { j["benchmarks"][1]["id"] = first_gemm(j)["id"]; },
       "appears twice"},
  };
  for (const auto& c : cases) {
    const std::string e = bench_error(edited(c.change));
    EXPECT_NE(e.find(c.error), std::string::npos) << c.what << ": " << e;
    EXPECT_NE(e.find("results.json"), std::string::npos) << c.what << ": " << e;
  }
}

std::string with_failed_first_gemm() {
  return edited([](json& j) {
    json& b = first_gemm(j);
    b["status"] = "failed";
    b["reason"] = "12 of 24 sampled outputs outside the bound";
    for (const char* k : {"median_s", "min_s", "max_s", "achieved_TFLOPS", "achieved_GBps"})
      b[k] = nullptr;
    b["check"]["passed"] = false;
  });
}

TEST(CalibrationResults, AFailedCheckIsRefusedUnlessSkipped) {
  const std::string e = bench_error(with_failed_first_gemm());
  EXPECT_NE(e.find("benchmark 'gemm.bf16.llama-3.1-8b.gate_up.fwd.t2048'"), std::string::npos) << e;
  EXPECT_NE(e.find("failed its check against the CPU reference (12 of 24"), std::string::npos);
  EXPECT_NE(e.find("--skip-failed"), std::string::npos);
  const BenchResults kept = parse_bench(with_failed_first_gemm(), FailedBenchmarks::kKeep);
  EXPECT_FALSE(kept.benchmarks[0].ok());
  const auto m = measure_benchmarks(kept, make_device(test::catalog().gpu("h200-sxm")), defaults(),
                                    TensorPrecision::kBF16);
  for (const auto& x : m)
    EXPECT_NE(x.bench->id, kept.benchmarks[0].id);  // not measured
}

TEST(CalibrationResults, AGemmWhoseFlopsAreNotTwoMnkIsRejected) {
  const std::string text = edited([](json& j) {
    json& b = first_gemm(j);
    b["flops"] = b["flops"].get<double>() / 2;
    b["achieved_TFLOPS"] = b["achieved_TFLOPS"].get<double>() / 2;
  });
  try {
    import(text);
    FAIL() << "accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("is not 2·m·n·k"), std::string::npos) << e.what();
  }
}

TEST(CalibrationResults, ARateAboveTheDatasheetNamesTheCard) {
  // The sample's GEMMs reach up to 74 % of the H200 SXM's 989.5 TFLOPS: on the RTX PRO 6000
  // (503.8 TFLOPS dense BF16) they would exceed its peak.
  const BenchResults r = parse_bench(bench_text());
  try {
    measure_benchmarks(r, make_device(test::catalog().gpu("rtx-pro-6000")), defaults(),
                       TensorPrecision::kBF16);
    FAIL() << "accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the datasheet dense bf16 rate"),
              std::string::npos)
        << e.what();
  }
}

// ---- the fit ---------------------------------------------------------------------------------

// Efficiency of each benchmark as the file states it: achieved / the card's datasheet figure.
double stated_efficiency(const json& b, const GpuSpec& g) {
  if (b["class"] == "gemm")
    return b["achieved_TFLOPS"].get<double>() /
           *g.tensor_figure(b["dtype"] == "bf16" ? TensorPrecision::kBF16 : TensorPrecision::kFP8)
                .value;
  return b["achieved_GBps"].get<double>() / *g.bandwidth_GBps.value;
}

TEST(CalibrationFitTest, EachMeasuredRangeIsTheMedianOfItsBenchmarks) {
  const auto im = import(bench_text());
  const GpuSpec& g = *im->card.gpu;
  EXPECT_EQ(g.id, "h200-sxm");
  // The BF16 GEMMs of at least 128 GFLOP per call: the sample's five.
  std::vector<double> big;
  const json sample = json::parse(bench_text());
  for (const auto& b : sample["benchmarks"])
    if (b["class"] == "gemm" && b["dtype"] == "bf16" && b["flops"].get<double>() >= 128e9)
      big.push_back(stated_efficiency(b, g));
  ASSERT_EQ(big.size(), 5u);
  EXPECT_NEAR(im->fit.table.compute(OpClass::kGemm, Flops(240e9)), median_of(big), 1e-6);
  // One GEMM of 17.2 GFLOP: the 16-128 GFLOP range is its efficiency.
  EXPECT_NEAR(im->fit.table.compute(OpClass::kGemm, Flops(17.2e9)), 0.45, 1e-6);
  // Unmeasured ranges and classes keep the defaults and say so.
  EXPECT_EQ(im->fit.table.compute(OpClass::kGemm, Flops(2e9)),
            defaults().compute(OpClass::kGemm, Flops(2e9)));
  EXPECT_EQ(im->fit.table.of(OpClass::kGemm).compute.range_for(2).basis.rfind("not measured", 0),
            0u);
  for (auto c : {OpClass::kAttention, OpClass::kEmbedding, OpClass::kLoss})
    for (double size : {0.5, 5.0, 50.0, 500.0}) {
      EXPECT_EQ(im->fit.table.of(c).compute.at(size), defaults().of(c).compute.at(size));
      EXPECT_EQ(im->fit.table.of(c).memory.at(size), defaults().of(c).memory.at(size));
    }
  const std::string kept = [&] {
    std::string s;
    for (const auto& k : im->fit.kept_defaults)
      s += k + ";";
    return s;
  }();
  EXPECT_NE(kept.find("attention: compute, memory"), std::string::npos) << kept;
  // The copy and the read make the element-wise memory curve: median of 0.85 and 0.90.
  EXPECT_NEAR(im->fit.table.memory(OpClass::kElementwise, Bytes(1e9)), 0.875, 1e-6);
  EXPECT_EQ(im->fit.table.of(OpClass::kGemm).compute.range_for(500).sources,
            std::vector<std::string>{std::string(kBenchMeasurementSource)});
}

TEST(CalibrationFitTest, EachMeasuredRangeIsTraced) {
  const BenchResults r = parse_bench(bench_text());
  const GpuSpec& g = test::catalog().gpu("h200-sxm");
  const auto m = measure_benchmarks(r, make_device(g), defaults(), TensorPrecision::kBF16);
  Trace trace;
  const CalibrationFit fit =
      fit_calibration(m, defaults(), bench_calibration_header(r, g, "test"), &trace);
  EXPECT_EQ(trace.items().size(), fit.ranges.size());
  const Derivation* big = trace.find("calibration.gemm.compute.3");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->inputs.size(), 5u);  // the five BF16 GEMMs from 128 GFLOP per call
  EXPECT_NEAR(big->value, fit.table.compute(OpClass::kGemm, Flops(240e9)), 1e-12);
  EXPECT_NE(big->formula.find("989.5 TFLOPS"), std::string::npos) << big->formula;
  EXPECT_EQ(big->source, r.file);
}

TEST(CalibrationFitTest, OnlyTheChosenGemmPrecisionMakesTheGemmCurve) {
  const auto bf16 = import(bench_text());
  std::size_t fp8_excluded = 0;
  for (const auto& m : bf16->measurements)
    if (m.bench->dtype == "fp8_e4m3") fp8_excluded += m.excluded.empty() ? 0 : 1;
  EXPECT_EQ(fp8_excluded, 2u);
  const auto fp8 = import(bench_text(), TensorPrecision::kFP8);
  // The sample's two FP8 GEMMs (58 % and 66 % of 1979 TFLOPS) both exceed 128 GFLOP.
  EXPECT_NEAR(fp8->fit.table.compute(OpClass::kGemm, Flops(240e9)), 0.62, 1e-6);
}

TEST(CalibrationFitTest, TheWrittenFileLoadsWithTheParserOfCalibrationAndRoundTrips) {
  const auto im = import(bench_text());
  const std::string text = efficiency_yaml(im->fit.table, {"test"});
  const EfficiencyTable back = parse_efficiency({"cal.yaml", text, {}}, test::catalog().sources());
  EXPECT_EQ(back.card(), "h200-sxm");
  EXPECT_EQ(back.calibration.date, "2026-01-01");
  EXPECT_EQ(back.calibration.driver, "synthetic");
  EXPECT_EQ(back.calibration.results, im->results.file);
  EXPECT_EQ(back.calibration.device, "NVIDIA H200");
  for (auto c : kAllOpClasses)
    for (bool compute : {true, false}) {
      const auto& a = compute ? im->fit.table.of(c).compute : im->fit.table.of(c).memory;
      const auto& b = compute ? back.of(c).compute : back.of(c).memory;
      ASSERT_EQ(a.ranges.size(), b.ranges.size());
      for (std::size_t i = 0; i < a.ranges.size(); ++i) {
        EXPECT_NEAR(b.ranges[i].fraction, a.ranges[i].fraction, 1e-8 * a.ranges[i].fraction);
        EXPECT_EQ(b.ranges[i].below, a.ranges[i].below);
        EXPECT_EQ(b.ranges[i].basis, a.ranges[i].basis);
        EXPECT_EQ(b.ranges[i].sources, a.ranges[i].sources);
      }
    }
}

// ---- predicted vs measured -------------------------------------------------------------------

TEST(CalibrationShow, TheCalibrationReproducesTheGemmsItWasMadeFromUpToTheRangeMedian) {
  const auto im = import(bench_text());
  // Through the written file, as `ftplan calibrate show --calibration FILE` sees it.
  const EfficiencyTable back = parse_efficiency(
      {"cal.yaml", efficiency_yaml(im->fit.table, {}), {}}, test::catalog().sources());
  const auto predictions = predict_benchmarks(im->measurements, im->device, defaults(), back);
  std::size_t checked = 0;
  for (const auto& p : predictions) {
    const BenchMeasurement& m = *p.measurement;
    if (m.bench->bench_class != "gemm" || !m.excluded.empty()) continue;
    const double median = back.compute(OpClass::kGemm, m.op.flops);
    // Calibrated time = FLOPs / (peak × median) = measured × efficiency / median.
    EXPECT_NEAR(p.error_calibration, m.efficiency / median - 1, 1e-7) << m.bench->id;
    ++checked;
  }
  EXPECT_EQ(checked, 6u);
  // The one GEMM alone in its range, and the GEMMs at the range median, are reproduced.
  for (const auto& p : predictions) {
    const std::string& id = p.measurement->bench->id;
    if (id == "gemm.bf16.llama-3.1-8b.kv.fwd.t2048" ||
        id == "gemm.bf16.llama-3.1-8b.gate_up.fwd.t2048")
      EXPECT_NEAR(p.error_calibration, 0.0, 1e-7) << id;
  }
}

TEST(CalibrationShow, SummaryHasMedianAndWorstPerClass) {
  const auto im = import(bench_text());
  const auto predictions =
      predict_benchmarks(im->measurements, im->device, defaults(), im->fit.table);
  const auto summary = summarize_errors(predictions);
  ASSERT_FALSE(summary.empty());
  EXPECT_EQ(summary.back().group, "all");
  EXPECT_EQ(summary.back().count, predictions.size());
  for (const auto& s : summary) {
    EXPECT_LE(s.median_abs_defaults, s.worst_abs_defaults) << s.group;
    EXPECT_LE(s.median_abs_calibration, s.worst_abs_calibration) << s.group;
  }
  // The defaults (0.74 of the peak for this size, times the Hopper multiplier) miss the sample's
  // 0.45 GEMM, in time: 0.45 / (0.74 × multiplier) − 1.
  const double hopper = defaults().compute_scale("hopper", OpClass::kGemm);
  for (const auto& p : predictions)
    if (p.measurement->bench->id == "gemm.bf16.llama-3.1-8b.kv.fwd.t2048")
      EXPECT_NEAR(p.error_defaults, 0.45 / (0.74 * hopper) - 1, 1e-6);
}

TEST(CalibrationShow, TheCliPrintsBothPredictionsAndTheSummary) {
  // --wide: benchmark ids and headers unwrapped, as they are searched here.
  const auto r =
      test::run_cli({"--wide", "calibrate", "show", sample_path("ftplan-bench-sample.json")});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"h200-sxm", "fitted from", "gemm.bf16.llama-3.1-8b.kv.fwd.t2048",
                        "calibrated µs", "absolute error", "gemm bf16", "all"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  const auto j =
      test::run_cli({"calibrate", "show", sample_path("ftplan-bench-sample.json"), "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const json doc = json::parse(j.out);
  EXPECT_EQ(doc["card"], "h200-sxm");
  EXPECT_EQ(doc["benchmarks"].size(), json::parse(bench_text())["benchmarks"].size());
}

// ---- the calibration in the step model -------------------------------------------------------

// The sample with every GEMM `factor` times slower: its calibration has each measured GEMM
// fraction divided by `factor`.
std::string gemms_slower(double factor) {
  return edited([factor](json& j) {
    for (json& b : j["benchmarks"]) {
      if (b["class"] != "gemm") continue;
      for (const char* k : {"median_s", "min_s", "max_s"})
        b[k] = b[k].get<double>() * factor;
      for (const char* k : {"achieved_TFLOPS", "achieved_GBps"})
        b[k] = b[k].get<double>() / factor;
    }
  });
}

TEST(CalibrationStep, LowerGemmEfficiencyLengthensTheStepProportionally) {
  const auto base = import(bench_text());
  const auto slow = import(gemms_slower(2.0));
  EXPECT_NEAR(slow->fit.table.compute(OpClass::kGemm, Flops(240e9)),
              base->fit.table.compute(OpClass::kGemm, Flops(240e9)) / 2, 1e-9);
  // Llama 3.1 8B full fine-tune, 16384 tokens per micro-batch, no recomputation: every GEMM call
  // is at least 16 GFLOP (the 8B's k/v projections at 16384 tokens: 137 GFLOP), so every one
  // falls in a measured range, and the step is dominated by them (compiled: fused norms, whose
  // eager FP32 chain would move nine times the bytes).
  Workload w = test::workload("llama-3.1-8b", Method::kFull);
  w.options.compile = true;
  w.micro_batch = 8;
  w.recompute = Recompute::kNone;
  w.grad_accum = 8;
  const StepOps ops = build_step_ops(w);
  const StepEstimate a = estimate_step(ops, base->device, base->fit.table);
  const StepEstimate b = estimate_step(ops, slow->device, slow->fit.table);
  // All-GEMM part: exactly twice the time.
  EXPECT_NEAR(b.of(OpClass::kGemm) / a.of(OpClass::kGemm), 2.0, 1e-9);
  for (auto c : {OpClass::kAttention, OpClass::kNorm, OpClass::kElementwise, OpClass::kOptimizer})
    EXPECT_DOUBLE_EQ(b.of(c).value, a.of(c).value) << op_class_name(c);
  // The step: 1/efficiency on its GEMM share s, the rest unchanged: ratio = 1 + s. Stated
  // tolerance for "scales as 1/efficiency": the non-GEMM share of this workload, below 20 %
  // (FlashAttention-2 at its Hopper utilisation takes most of it).
  const double s = a.of(OpClass::kGemm) / a.step;
  EXPECT_GT(s, 0.80);
  EXPECT_NEAR(b.step / a.step, 1 + s, 1e-9);
  EXPECT_NEAR(b.step / a.step, 2.0, 0.20);
}

TEST(CalibrationStep, ImportThenStepThroughTheCli) {
  const auto dir = std::filesystem::temp_directory_path() / "ftplan-test-calibration-cli";
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "h200-sxm.yaml").string();
  const auto r =
      test::run_cli({"calibrate", "import", sample_path("ftplan-bench-sample.json"), "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("kept the defaults"), std::string::npos) << r.out;
  const std::string text = slurp(out);
  EXPECT_NE(text.find("# Not measured, the defaults kept:"), std::string::npos);
  EXPECT_NE(text.find("SYNTHETIC"), std::string::npos);
  const auto step = test::run_cli({"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                   "h200-sxm", "--calibration", out, "--json"});
  ASSERT_EQ(step.code, 0) << step.err;
  EXPECT_EQ(json::parse(step.out)["efficiency"]["card"], "h200-sxm");
  const auto show = test::run_cli(
      {"calibrate", "show", sample_path("ftplan-bench-sample.json"), "--calibration", out});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("calibration: calibrated on h200-sxm (" + out), std::string::npos)
      << show.out;
  // Without -o the file goes to stdout, byte for byte the same.
  const auto printed =
      test::run_cli({"calibrate", "import", sample_path("ftplan-bench-sample.json")});
  ASSERT_EQ(printed.code, 0) << printed.err;
  EXPECT_EQ(printed.out, text);
  std::filesystem::remove_all(dir);
}

// ---- FTPLAN_CALIBRATION_DIR ------------------------------------------------------------------

struct DirRun {
  int code;
  std::string out;
  std::string err;
};

DirRun run_with_dir(const std::string& dir, const std::vector<std::string>& args) {
  std::ostringstream out, err;
  cli::Context ctx(out, err);
  ctx.calibration_dir = dir;
  try {
    cli::execute(args, ctx);
  } catch (const UserError& e) {
    return {2, out.str(), e.what()};
  }
  return {0, out.str(), err.str()};
}

TEST(CalibrationDirectory, FilesThereApplyToTheCardsTheyNameWhenNoCalibrationIsGiven) {
  const auto dir = std::filesystem::temp_directory_path() / "ftplan-test-calibration-dir";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_EQ(test::run_cli({"calibrate", "import", sample_path("ftplan-bench-sample.json"), "-o",
                           (dir / "h200-sxm.yaml").string()})
                .code,
            0);
  ASSERT_EQ(test::run_cli({"calibrate", "import", sample_path("ftplan-nccl-sample.json"), "--link",
                           "nvlink", "-o", (dir / "h200-sxm-nvlink.yaml").string()})
                .code,
            0);
  const std::vector<std::string> lora = {"--model", "llama-3.1-8b", "--method", "lora", "--json"};
  auto step_on = [&](const std::string& gpu) {
    std::vector<std::string> args = {"step", "--gpu", gpu};
    args.insert(args.end(), lora.begin(), lora.end());
    const DirRun r = run_with_dir(dir.string(), args);
    EXPECT_EQ(r.code, 0) << r.err;
    return json::parse(r.out);
  };
  EXPECT_EQ(step_on("h200-sxm")["efficiency"]["card"], "h200-sxm");
  EXPECT_FALSE(step_on("h200-nvl")["efficiency"].contains("card"));  // defaults, no error
  // compare and scale read the same folder: the link calibration names itself in scale.
  const DirRun scale = run_with_dir(dir.string(), {"scale", "--model", "llama-3.1-8b", "--method",
                                                   "full", "--gpu", "h200-sxm", "--gpus", "8"});
  ASSERT_EQ(scale.code, 0) << scale.err;
  EXPECT_NE(scale.out.find("nvlink achieved fraction 0.81 measured on this card"),
            std::string::npos)
      << scale.out;
  const DirRun compare =
      run_with_dir(dir.string(), {"compare", "--gpu", "h200-sxm", "--gpu", "h200-nvl", "--model",
                                  "llama-3.1-8b", "--method", "lora", "--json"});
  ASSERT_EQ(compare.code, 0) << compare.err;
  // An explicit --calibration replaces the folder.
  const DirRun explicit_file = run_with_dir(
      dir.string(),
      {"step", "--gpu", "h200-nvl", "--model", "llama-3.1-8b", "--method", "lora", "--calibration",
       std::string(FTPLAN_SOURCE_DIR) + "/tests/cases/calibration/h200-half-gemm.yaml", "--json"});
  ASSERT_EQ(explicit_file.code, 0) << explicit_file.err;
  EXPECT_EQ(json::parse(explicit_file.out)["efficiency"]["card"], "h200-nvl");
  // A file there without a header naming its card is refused.
  std::filesystem::copy_file(std::string(FTPLAN_SOURCE_DIR) + "/data/efficiency/default.yaml",
                             dir / "general.yaml");
  const DirRun bad = run_with_dir(
      dir.string(), {"step", "--gpu", "h200-sxm", "--model", "llama-3.1-8b", "--method", "lora"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("must name its card"), std::string::npos) << bad.err;
  std::filesystem::remove_all(dir);
}

// ---- link calibration ------------------------------------------------------------------------

TEST(CalibrationLink, TheFractionIsTheMedianLargeMessageBusBandwidthOverTheNominalRate) {
  const std::string text = slurp(sample_path("ftplan-nccl-sample.json"));
  const NcclResults r = parse_nccl_results({"nccl.json", text, {}});
  const GpuSpec& g = test::catalog().gpu("h200-sxm");
  const CommConstants k = load_comm_constants(test::catalog());
  const LinkFit fit = fit_link_calibration(r, g, LinkLevel::kNvlink, "test", k);
  std::vector<double> large;
  const json doc = json::parse(text);
  for (const auto& row : doc["rows"])
    if (row["collective"] == "all_reduce" && row["bytes"].get<double>() >= 256.0 * (1 << 20))
      large.push_back(row["busbw_GBps"].get<double>());
  ASSERT_EQ(large.size(), 5u);  // 256 MiB to 4 GiB
  EXPECT_NEAR(fit.calibration.achieved_fraction, median_of(large) / 450.0, 1e-9);
  // Written and read back as --calibration reads it.
  const LinkCalibrationFile back = parse_link_calibration(
      {"link.yaml", link_calibration_yaml(fit, {}), {}}, test::catalog().sources());
  ASSERT_EQ(back.links.size(), 1u);
  EXPECT_EQ(back.links[0].card, "h200-sxm");
  EXPECT_EQ(back.links[0].level, LinkLevel::kNvlink);
  EXPECT_NEAR(back.links[0].achieved_fraction, fit.calibration.achieved_fraction, 1e-8);
}

TEST(CalibrationLink, TheCommModelUsesTheMeasuredFractionForThatCardOnly) {
  CommConstants k = load_comm_constants(test::catalog());
  const double measured = 0.5;
  k.link_calibrations.push_back({"h200-sxm", LinkLevel::kNvlink, measured, "x.yaml", "test"});
  const GpuSpec& sxm = test::catalog().gpu("h200-sxm");
  const GpuSpec& b200 = test::catalog().gpu("b200");
  const CommConstants plain = load_comm_constants(test::catalog());
  const Topology calibrated = build_topology(sxm, 8, "", k);
  const Topology nominal = build_topology(sxm, 8, "", plain);
  EXPECT_EQ(calibrated.intra_domain.achieved_fraction, measured);
  EXPECT_EQ(build_topology(b200, 8, "", k).intra_domain.achieved_fraction, plain.nvlink_fraction);
  // The bandwidth term of a ring all-reduce scales as 1 / fraction.
  const Bytes gradients = bytes_from_GB(16);
  auto bandwidth_term = [&](const Topology& t, const CommConstants& c) {
    const CollectiveCost cost = collective_cost(Collective::kAllReduce, gradients, t, c);
    return cost.estimated_seconds - c.base_latency -
           t.slowest().step_latency * ring_steps(Collective::kAllReduce, 8);
  };
  EXPECT_NEAR(bandwidth_term(calibrated, k) / bandwidth_term(nominal, plain),
              plain.nvlink_fraction / measured, 1e-9);
}

TEST(CalibrationLink, ImpossibleLinksAreErrors) {
  const std::string nccl = sample_path("ftplan-nccl-sample.json");
  const auto no_link = test::run_cli({"calibrate", "import", nccl});
  EXPECT_EQ(no_link.code, 2);
  EXPECT_NE(no_link.err.find("--link nvlink or --link pcie"), std::string::npos) << no_link.err;
  const auto pcie = test::run_cli({"calibrate", "import", nccl, "--link", "pcie"});
  EXPECT_EQ(pcie.code, 2);
  EXPECT_NE(pcie.err.find("exceeds the nominal 64 GB/s per direction of pcie"), std::string::npos)
      << pcie.err;
  const auto no_nvlink =
      test::run_cli({"calibrate", "import", nccl, "--gpu", "rtx-pro-6000", "--link", "nvlink"});
  EXPECT_EQ(no_nvlink.code, 2);
  EXPECT_NE(no_nvlink.err.find("has no NVLink"), std::string::npos) << no_nvlink.err;
}

// ---- measured steps --------------------------------------------------------------------------

// The `ftplan ...` command line of a row, as arguments.
std::vector<std::string> command_args(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> args;
  for (std::string word; in >> word;)
    args.push_back(word);
  args.erase(args.begin());  // "ftplan"
  return args;
}

TEST(CalibrationMeasuredStep, PredictionsAreWhatFtplanSaysForTheRowsOwnCommandLines) {
  const std::string text = slurp(sample_path("ftplan-step-sample.json"));
  const StepResults r = parse_step_results({"step.json", text, {}});
  EXPECT_NE(r.note.find("SYNTHETIC"), std::string::npos);
  const GpuSpec& g = test::catalog().gpu(r.ftplan_gpu_id);
  const auto checks = check_measured_steps(r, test::catalog(), test::overheads(),
                                           test::stacks().find(kMeasuredStepStack), g, defaults());
  const json rows = json::parse(text)["rows"];
  ASSERT_EQ(checks.size(), rows.size());
  std::size_t measured = 0;
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const StepCheck& c = checks[i];
    const json& cmd = rows[i]["ftplan"];
    const auto step = test::run_cli(command_args(cmd["step"]));
    ASSERT_EQ(step.code, 0) << step.err;
    EXPECT_NEAR(c.step.value, json::parse(step.out)["step_seconds"].get<double>(),
                1e-12 * c.step.value)
        << c.row->id;
    const auto fit = test::run_cli(command_args(cmd["fit"]));
    const auto fit_allocated = test::run_cli(command_args(cmd["fit_allocated"]));
    ASSERT_EQ(fit.code, 0) << fit.err;
    EXPECT_NEAR(to_GB(c.reserved.peak), json::parse(fit.out)["memory_GB"]["peak"].get<double>(),
                5e-4)
        << c.row->id;
    EXPECT_NEAR(to_GB(c.allocated.peak),
                json::parse(fit_allocated.out)["memory_GB"]["peak"].get<double>(), 5e-4)
        << c.row->id;
    if (!c.row->ok()) {
      EXPECT_FALSE(c.error_step);
      continue;
    }
    ++measured;
    EXPECT_NEAR(*c.error_step, c.step.value / rows[i]["median_s"].get<double>() - 1, 1e-12);
    EXPECT_NEAR(*c.error_reserved,
                c.reserved.peak.value / rows[i]["peak_reserved_bytes"].get<double>() - 1, 1e-12);
    EXPECT_NEAR(*c.error_allocated,
                c.allocated.peak.value / rows[i]["peak_allocated_bytes"].get<double>() - 1, 1e-12);
  }
  EXPECT_EQ(measured, 4u);
  const auto summary = summarize_step_errors(checks);
  ASSERT_EQ(summary.size(), 3u);
  EXPECT_EQ(summary[0].count, 4u);
}

// The error parse_step_results gives for `doc` changed by `change` ("" when it parses).
std::string step_file_error(json doc, const std::function<void(json&)>& change) {
  change(doc);
  try {
    parse_step_results({"step.json", doc.dump(), {}});
  } catch (const UserError& e) {
    return std::string(e.what());
  }
  return std::string();
}

TEST(CalibrationMeasuredStep, BadStepFilesAreRejected) {
  const json doc = json::parse(slurp(sample_path("ftplan-step-sample.json")));
  auto error = [&](const std::function<void(json&)>& change) {
    return step_file_error(doc, change);
  };
  EXPECT_NE(error([](json& j) {
              j["schema"] = "ftplan-step/9";
            }).find("schema 'ftplan-step/9' is not supported"),
            std::string::npos);
  EXPECT_NE(error([](json& j) {
              j["rows"][0]["peak_alloc_bytes"] = 1;
            }).find("unknown key 'rows[0].peak_alloc_bytes'"),
            std::string::npos);
  EXPECT_NE(error([](json& j) {
              j["rows"][0].erase("peak_reserved_bytes");
            }).find("required key 'rows[0].peak_reserved_bytes' is missing"),
            std::string::npos);
  EXPECT_NE(error([](json& j) {
              for (const char* k : {"median_s", "min_s", "max_s"})
                j["rows"][0][k] = j["rows"][0][k].get<double>() * 1e3;  // milliseconds
            }).find("times are in seconds"),
            std::string::npos);
  EXPECT_NE(error([](json& j) {
              j["rows"][0]["recompute"] = "none";
            }).find("contradicts activation_checkpointing"),
            std::string::npos);
}

TEST(CalibrationMeasuredStep, TheCliTableNamesTheCardAndTheErrors) {
  const auto r = test::run_cli({"calibrate", "step", sample_path("ftplan-step-sample.json")});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* s : {"h200-sxm", "qwen3-0.6b.lora.mb1.ckpt-on", "step time", "peak reserved",
                        "skipped", "SYNTHETIC", "sdpa"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  const auto j =
      test::run_cli({"calibrate", "step", sample_path("ftplan-step-sample.json"), "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_EQ(json::parse(j.out)["rows"].size(), 5u);
}

// The first measured run on a real card (H200 SXM, bench/run-all.sh and a seq 8192 follow-up):
// every row is read, full fine-tunes included, and the memory model holds the allocated peak
// of the runs without recomputation (the activations' largest share) within 12 %.
TEST(CalibrationMeasuredStep, TheH200RunIsReadAndItsPeaksArePredicted) {
  const std::string dir = std::string(FTPLAN_SOURCE_DIR) + "/bench/results/h200-sxm-20261204/";
  std::size_t ok = 0, full = 0, oom = 0, checked = 0, near_capacity = 0;
  for (const char* name : {"step.json", "step-seq8192.json"}) {
    const StepResults r = parse_step_results({name, slurp(dir + name), {}});
    EXPECT_TRUE(r.note.empty()) << "a measured file carries no synthetic note";
    EXPECT_EQ(r.ftplan_gpu_id, "h200-sxm");
    const GpuSpec& g = test::catalog().gpu(r.ftplan_gpu_id);
    for (const StepCheck& c :
         check_measured_steps(r, test::catalog(), test::overheads(),
                              test::stacks().find(kMeasuredStepStack), g, defaults())) {
      ok += c.row->ok();
      oom += c.row->status == "oom";
      // Near the card's capacity: a run out of memory is never called a fit, and the one that
      // ran at 141 GB allocated (149 GB reserved) is tight only by the allocator's reserve.
      if (c.row->status == "oom") EXPECT_NE(c.reserved.verdict, Verdict::kFits) << c.row->id;
      if (c.row->id == "qwen3-4b.lora.mb2.ckpt-off") {
        ++near_capacity;
        EXPECT_EQ(c.reserved.verdict, Verdict::kTight);
        EXPECT_TRUE(c.reserved.tight_by_reserve);
        EXPECT_GT(c.reserved.peak.value, c.reserved.capacity.value);
      }
      if (c.row->method == "full") {
        ++full;
        EXPECT_EQ(c.row->lora_rank, 0) << c.row->id;
      }
      if (!c.row->ok() || c.row->recompute != "none" || c.row->method == "qlora") continue;
      ++checked;
      ASSERT_TRUE(c.error_allocated) << c.row->id;
      EXPECT_LT(std::abs(*c.error_allocated), 0.12) << c.row->id;
      // At 8192 tokens the card, not the host, sets the pace: the step time within 15 %.
      if (c.row->seq == 8192) EXPECT_LT(std::abs(*c.error_step), 0.15) << c.row->id;
    }
  }
  EXPECT_EQ(ok, 50u);
  EXPECT_EQ(full, 20u);
  EXPECT_EQ(oom, 2u);
  EXPECT_EQ(checked, 18u);
  EXPECT_EQ(near_capacity, 1u);
  // The command line says why.
  const auto fit =
      test::run_cli({"fit", "--model", "qwen3-4b", "--method", "lora", "--targets",
                     "q,k,v,o,gate,up,down", "--seq", "8192", "--micro-batch", "2", "--recompute",
                     "none", "--attention", "flash", "--stack", "pytorch", "--gpu", "h200-sxm"});
  EXPECT_EQ(fit.code, 0) << fit.err;
  EXPECT_NE(fit.out.find("releases cached blocks"), std::string::npos) << fit.out;
}

// The H200's first micro-benchmark run: its FP8 GEMMs failed before they were checked (a misaligned
// scale pointer); import says so, and imports the rest with --skip-failed. The rerun has them all.
TEST(CalibrationResults, TheH200RunsImport) {
  const std::string dir = std::string(FTPLAN_SOURCE_DIR) + "/bench/results/h200-sxm-20261204/";
  const auto failed = test::run_cli({"calibrate", "import", dir + "ftplan-bench.json"});
  EXPECT_EQ(failed.code, 2);
  EXPECT_NE(failed.err.find("'gemm.fp8.llama-3.1-8b.q.fwd.t2048' (key 'benchmarks[148]'): failed "
                            "before it was checked (cublasLtMatmul"),
            std::string::npos)
      << failed.err;
  const auto skipped =
      test::run_cli({"calibrate", "show", dir + "ftplan-bench.json", "--skip-failed", "--json"});
  EXPECT_EQ(skipped.code, 0) << skipped.err;
  const auto rerun = test::run_cli(
      {"calibrate", "show", dir + "ftplan-bench-rerun.json", "--gemm-precision", "fp8", "--json"});
  ASSERT_EQ(rerun.code, 0) << rerun.err;
  EXPECT_NE(rerun.out.find("gemm.fp8.llama-3.3-70b.down.bwd_dw.t8192"), std::string::npos);
}

TEST(CalibrationMeasuredStep, AFullFineTuneRowHasNoAdapter) {
  const std::string dir = std::string(FTPLAN_SOURCE_DIR) + "/bench/results/h200-sxm-20261204/";
  const json doc = json::parse(slurp(dir + "step-seq8192.json"));
  std::size_t full_row = 0;
  while (doc["rows"][full_row]["method"] != "full")
    ++full_row;
  auto error = [&](const std::function<void(json&)>& change) {
    return step_file_error(doc, change);
  };
  EXPECT_NE(error([&](json& j) {
              j["rows"][full_row]["lora_rank"] = 16;
            }).find("expected null for a full fine-tune"),
            std::string::npos);
  EXPECT_NE(error([&](json& j) {
              j["rows"][full_row]["lora_impl"] = "peft";
            }).find("'none' exactly for a full fine-tune"),
            std::string::npos);
  EXPECT_NE(error([&](json& j) {
              j["rows"][0]["lora_impl"] = "none";
            }).find("'none' exactly for a full fine-tune"),
            std::string::npos);
}

}  // namespace
}  // namespace ftplan
