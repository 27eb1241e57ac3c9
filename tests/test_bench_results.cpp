// ftplan-bench's results (bench/results.hpp): the JSON writer, and the checked-in synthetic
// sample (bench/results/sample/) that the calibration import is tested on, which must have
// exactly the writer's schema.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "results.hpp"

namespace ftplan::bench {
namespace {

using nlohmann::json;

RunReport example_report() {
  RunReport r;
  r.note = "test";
  r.tool_version = "0.1.0";
  r.timestamp_utc = "2026-01-01T00:00:00Z";
  r.elapsed_s = 12.5;
  r.settings = {false, 10, 30, 1e-3, "", "ftplan-bench"};
  r.device.name = "Test \"GPU\"\n";
  r.device.compute_capability = "9.0";
  r.device.clocks_source = "nvml";
  r.device.sm_clock_max_MHz = 1980.0;
  r.device.power_limit_W = std::numeric_limits<double>::quiet_NaN();  // JSON has no NaN: null
  BenchResult ok;
  ok.id = "gemm.bf16.m.up.fwd.t2048";
  ok.bench_class = "gemm";
  ok.op = "fwd";
  ok.model = "m";
  ok.projection = "gate_up";
  ok.shape = {{"m", 14336}, {"n", 2048}, {"k", 4096}};
  ok.layout = "TN";
  ok.dtype = "bf16";
  ok.output_dtype = "bf16";
  ok.accumulate = "fp32";
  ok.flops = 2.0 * 14336 * 2048 * 4096;
  ok.bytes = 1e8;
  ok.bytes_counted = "minimum";
  ok.timing = summarize({4e-4, 3e-4, 5e-4});
  ok.timing.launches_per_repeat = 3;
  ok.check = {true, "metric", 1e-3, 1.0 / 128, 24};
  ok.status = Status::kOk;
  BenchResult skipped = ok;
  skipped.id = "gemm.fp8.m.up.fwd.t2048";
  skipped.status = Status::kSkipped;
  skipped.reason = "no FP8";
  skipped.timing = {};
  skipped.check = {};
  r.benchmarks = {ok, skipped};
  return r;
}

std::set<std::string> keys(const json& object) {
  std::set<std::string> out;
  for (const auto& [key, value] : object.items())
    out.insert(key);
  return out;
}

json load_sample() {
  const std::string path =
      std::string(FTPLAN_SOURCE_DIR) + "/bench/results/sample/ftplan-bench-sample.json";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return json::parse(in);
}

TEST(BenchResults, MedianOfOddAndEvenCounts) {
  const TimingStats odd = summarize({3.0, 1.0, 2.0});
  EXPECT_DOUBLE_EQ(odd.median_s, 2.0);
  EXPECT_DOUBLE_EQ(odd.min_s, 1.0);
  EXPECT_DOUBLE_EQ(odd.max_s, 3.0);
  EXPECT_EQ(odd.repeats, 3);
  EXPECT_DOUBLE_EQ(summarize({4.0, 1.0, 3.0, 2.0}).median_s, 2.5);
  EXPECT_EQ(summarize({}).repeats, 0);
}

TEST(BenchResults, JsonQuoteEscapesWhatRfc8259Requires) {
  EXPECT_EQ(json_quote("a\"b\\c\nd\te\x01"), "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
  EXPECT_EQ(json::parse(json_quote("x\"\n\x1f")).get<std::string>(), "x\"\n\x1f");
}

TEST(BenchResults, WriterOutputParsesWithRatesFromTheMedian) {
  const RunReport report = example_report();
  const json j = json::parse(to_json(report));
  EXPECT_EQ(j["schema"], std::string(kResultsSchema));
  EXPECT_EQ(j["device"]["name"], "Test \"GPU\"\n");
  EXPECT_TRUE(j["device"]["power_limit_W"].is_null());
  EXPECT_TRUE(j["device"]["driver_version"].is_null());
  EXPECT_EQ(j["device"]["clocks"]["sm_max_MHz"], 1980);
  const json& ok = j["benchmarks"][0];
  EXPECT_EQ(ok["status"], "ok");
  EXPECT_DOUBLE_EQ(ok["median_s"].get<double>(), 4e-4);
  EXPECT_NEAR(ok["achieved_TFLOPS"].get<double>(), 2.0 * 14336 * 2048 * 4096 / 4e-4 / 1e12, 1e-6);
  EXPECT_NEAR(ok["achieved_GBps"].get<double>(), 1e8 / 4e-4 / 1e9, 1e-9);
  EXPECT_EQ(ok["flops"].get<std::int64_t>(), std::int64_t{2} * 14336 * 2048 * 4096);  // exact
  EXPECT_EQ(ok["shape"]["m"], 14336);
  const json& skipped = j["benchmarks"][1];
  EXPECT_EQ(skipped["status"], "skipped");
  EXPECT_EQ(skipped["reason"], "no FP8");
  EXPECT_TRUE(skipped["median_s"].is_null());
  EXPECT_TRUE(skipped["achieved_TFLOPS"].is_null());
  EXPECT_TRUE(ok["reason"].is_null());
}

TEST(BenchResults, SampleHasExactlyTheWritersKeys) {
  const json written = json::parse(to_json(example_report()));
  const json sample = load_sample();
  EXPECT_EQ(keys(sample), keys(written));
  EXPECT_EQ(keys(sample["settings"]), keys(written["settings"]));
  EXPECT_EQ(keys(sample["device"]), keys(written["device"]));
  EXPECT_EQ(keys(sample["device"]["clocks"]), keys(written["device"]["clocks"]));
  ASSERT_FALSE(sample["benchmarks"].empty());
  for (const json& b : sample["benchmarks"]) {
    EXPECT_EQ(keys(b), keys(written["benchmarks"][0])) << b["id"];
    EXPECT_EQ(keys(b["check"]), keys(written["benchmarks"][0]["check"])) << b["id"];
  }
}

TEST(BenchResults, SampleIsLabelledSyntheticAndInternallyConsistent) {
  const json sample = load_sample();
  EXPECT_EQ(sample["schema"], std::string(kResultsSchema));
  EXPECT_NE(sample["note"].get<std::string>().find("SYNTHETIC"), std::string::npos);
  const std::set<std::string> classes = {"gemm",    "bandwidth", "adapter",
                                         "dequant", "norm",      "optimizer"};
  std::set<std::string> ids, seen_classes;
  for (const json& b : sample["benchmarks"]) {
    const std::string id = b["id"];
    EXPECT_TRUE(ids.insert(id).second) << "duplicate id " << id;
    EXPECT_TRUE(classes.count(b["class"].get<std::string>())) << id;
    seen_classes.insert(b["class"].get<std::string>());
    ASSERT_EQ(b["status"], "ok") << id;
    const double median = b["median_s"], lo = b["min_s"], hi = b["max_s"];
    EXPECT_LE(lo, median) << id;
    EXPECT_LE(median, hi) << id;
    EXPECT_NEAR(b["achieved_TFLOPS"].get<double>(), b["flops"].get<double>() / median / 1e12,
                1e-6 * b["achieved_TFLOPS"].get<double>() + 1e-9)
        << id;
    EXPECT_NEAR(b["achieved_GBps"].get<double>(), b["bytes"].get<double>() / median / 1e9,
                1e-6 * b["achieved_GBps"].get<double>())
        << id;
    EXPECT_TRUE(b["check"]["passed"].get<bool>()) << id;
    EXPECT_LE(b["check"]["max_error"].get<double>(), b["check"]["bound"].get<double>()) << id;
    if (b["class"] == "gemm") {  // 2·m·n·k
      const json& s = b["shape"];
      EXPECT_DOUBLE_EQ(b["flops"].get<double>(),
                       2.0 * s["m"].get<double>() * s["n"].get<double>() * s["k"].get<double>())
          << id;
    }
  }
  EXPECT_EQ(seen_classes, classes);  // the sample covers every class
}

}  // namespace
}  // namespace ftplan::bench
