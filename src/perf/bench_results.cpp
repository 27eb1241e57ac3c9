#include "perf/bench_results.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
#include "core/numeric.hpp"

namespace ftplan {

const std::vector<std::string>& bench_class_names() {
  static const std::vector<std::string> names = {"gemm",    "bandwidth", "adapter",
                                                 "dequant", "norm",      "optimizer"};
  return names;
}

std::optional<std::int64_t> BenchRecord::dimension(std::string_view name) const {
  for (const auto& [key, value] : shape)
    if (key == name) return value;
  return std::nullopt;
}

namespace {

void read_schema(StrictMap& root) {
  const std::string schema = root.required_string("schema");
  if (schema == kBenchResultsSchema) return;
  const bool ours = schema.rfind("ftplan-bench/", 0) == 0;
  root.fail("schema", ours ? fmt::format("schema '{}' is not supported; this ftplan reads '{}' "
                                         "(update ftplan, or rerun the benchmarks with the "
                                         "ftplan-bench of this version)",
                                         schema, kBenchResultsSchema)
                           : fmt::format("'{}' is not an ftplan-bench results file (schema '{}')",
                                         schema, kBenchResultsSchema));
}

void read_settings(StrictMap m) {
  m.required_bool("quick");
  m.required_integer("warmup", 0, 1000000);
  m.required_integer("repeats", 0, 1000000);
  m.required_number("min_repeat_s", 0, 1e4);
  m.any_string("filter");
  m.any_string("command_line");
  m.finish();
}

void read_clocks(StrictMap m) {
  m.required_choice("source", {"nvml", "cudaDeviceGetAttribute"});
  for (const char* key : {"sm_max_MHz", "memory_max_MHz", "sm_at_start_MHz", "sm_at_end_MHz"})
    m.nullable_number(key, 0, 1e5);
  m.finish();
}

void read_device(StrictMap m, BenchResults& r) {
  r.device.name = m.required_string("name");
  r.device.compute_capability = m.required_string("compute_capability");
  int major = 0, minor = 0;
  if (!parse_compute_capability(r.device.compute_capability, major, minor))
    m.fail("compute_capability", fmt::format("expected a compute capability like \"9.0\", got "
                                             "'{}'",
                                             r.device.compute_capability));
  m.required_integer("sm_count", 1, 100000);
  const double memory = m.required_number("memory_total_bytes", 0, 1e15);
  if (memory < kBytesPerGiB)
    m.fail(
        "memory_total_bytes",
        fmt::format("{} is less than 1 GiB: the key is in bytes (was MiB or GB written?)", memory));
  r.device.memory = Bytes(memory);
  m.required_integer("l2_cache_bytes", 0, 1LL << 40);
  m.required_integer("memory_bus_width_bits", 0, 1000000);
  m.any_string("pci_bus_id");
  r.driver_version = m.nullable_string("driver_version").value_or("");
  m.any_string("cuda_driver_api_version");
  r.cuda_runtime_version = m.any_string("cuda_runtime_version");
  r.cublaslt_version = m.any_string("cublaslt_version");
  read_clocks(m.required_map("clocks"));
  m.nullable_number("power_limit_W", 0, 1e5);
  m.nullable_number("temperature_at_end_C", -100, 1000);
  m.finish();
}

std::vector<std::pair<std::string, std::int64_t>> read_shape(StrictMap& m) {
  StrictMap s = m.required_map("shape");
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const std::string& name : s.keys()) {
    out.emplace_back(name, s.required_integer(name, 0, 1LL << 50));
  }
  s.finish();
  return out;
}

void read_check(StrictMap c, BenchRecord& b, StrictMap& parent) {
  const bool passed = c.required_bool("passed");
  c.any_string("metric");
  c.required_number("max_error", 0, 1e300);
  c.required_number("bound", 0, 1e300);
  b.check_samples = c.required_integer("samples", 0, 1LL << 50);
  c.finish();
  if (b.ok() && !passed)
    parent.fail("check", "status 'ok' with a check that did not pass: the file contradicts itself");
}

// Rates of a timed benchmark must follow from its own FLOPs, bytes and median time.
void check_rates(StrictMap& m, const BenchRecord& b, std::optional<double> tflops,
                 std::optional<double> gbps) {
  const double flops_rate = b.flops.value / b.median.value / 1e12;
  const double bytes_rate = b.bytes.value / b.median.value / 1e9;
  if (!agrees(*tflops, flops_rate))
    m.fail("achieved_TFLOPS",
           fmt::format("{} is not flops / median_s / 10^12 = {:.9g}: rates are in TFLOPS "
                       "(10^12 FLOP/s) and times in seconds",
                       *tflops, flops_rate));
  if (!agrees(*gbps, bytes_rate))
    m.fail("achieved_GBps", fmt::format("{} is not bytes / median_s / 10^9 = {:.9g}: rates are in "
                                        "GB/s (10^9 B/s) and times in seconds",
                                        *gbps, bytes_rate));
}

void read_timing(StrictMap& m, BenchRecord& b) {
  const auto median = m.nullable_number("median_s", 1e-9, 1e3);
  const auto min = m.nullable_number("min_s", 1e-9, 1e3);
  const auto max = m.nullable_number("max_s", 1e-9, 1e3);
  const auto tflops = m.nullable_number("achieved_TFLOPS", 0, 1e9);
  const auto gbps = m.nullable_number("achieved_GBps", 0, 1e9);
  m.required_integer("repeats", 0, 1LL << 40);
  m.required_integer("launches_per_repeat", 0, 1LL << 40);
  m.required_integer("warmup_launches", 0, 1LL << 40);
  m.required_integer("input_sets", 0, 1LL << 40);
  m.required_bool("cuda_graph");
  if (!b.ok()) return;
  for (const auto& [key, v] :
       {std::pair{"median_s", median}, std::pair{"min_s", min}, std::pair{"max_s", max},
        std::pair{"achieved_TFLOPS", tflops}, std::pair{"achieved_GBps", gbps}})
    if (!v)
      m.fail(key, "a benchmark with status 'ok' needs this figure (seconds per launch, rate)");
  b.median = Seconds(*median);
  b.min = Seconds(*min);
  b.max = Seconds(*max);
  if (!(b.min <= b.median && b.median <= b.max))
    m.fail("median_s", fmt::format("expected min_s <= median_s <= max_s, got {} <= {} <= {}", *min,
                                   *median, *max));
  check_rates(m, b, tflops, gbps);
}

BenchRecord read_benchmark(StrictMap& m, FailedBenchmarks failed) {
  BenchRecord b;
  b.id = m.required_string("id");
  b.where = fmt::format("{}: benchmark '{}' (key '{}')", m.file(), b.id, m.path());
  b.bench_class = m.required_choice("class", bench_class_names());
  b.op = m.required_string("op");
  b.model = m.nullable_string("model").value_or("");
  b.projection = m.nullable_string("projection").value_or("");
  b.shape = read_shape(m);
  m.nullable_string("layout");
  b.dtype = m.required_choice("dtype", {"bf16", "fp8_e4m3", "fp32", "nf4", "bytes"});
  b.output_dtype = m.required_string("output_dtype");
  m.nullable_string("accumulate");
  b.flops = Flops(m.required_number("flops", 0, 1e18));
  b.bytes = Bytes(m.required_number("bytes", 1, 1e16));
  m.any_string("bytes_counted");
  b.status = m.required_choice("status", {"ok", "failed", "skipped"});
  b.reason = m.nullable_string("reason").value_or("");
  read_timing(m, b);
  read_check(m.required_map("check"), b, m);
  m.finish();
  if (b.status == "failed" && failed == FailedBenchmarks::kReject)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: {} ({}); its result cannot calibrate anything. Rerun it, or "
                                "pass --skip-failed to calibrate without it",
                                b.where,
                                b.check_samples > 0 ? "failed its check against the CPU reference"
                                                    : "failed before it was checked",
                                b.reason.empty() ? "no reason given" : b.reason),
                    "status");
  return b;
}

}  // namespace

std::string results_schema(const DataFile& file) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  return root.required_string("schema");
}

BenchResults parse_bench_results(const DataFile& file, FailedBenchmarks failed) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  read_schema(root);
  BenchResults r;
  r.file = file.path;
  r.note = root.optional_string("note").value_or("");
  if (root.required_string("tool") != "ftplan-bench") root.fail("tool", "expected 'ftplan-bench'");
  r.tool_version = root.required_string("tool_version");
  r.timestamp_utc = root.required_string("timestamp_utc");
  if (r.timestamp_utc.size() < 10 || r.timestamp_utc[4] != '-' || r.timestamp_utc[7] != '-')
    root.fail("timestamp_utc", fmt::format("expected an ISO 8601 time like 2026-01-31T12:00:00Z, "
                                           "got '{}'",
                                           r.timestamp_utc));
  root.required_number("elapsed_s", 0, 1e9);
  read_settings(root.required_map("settings"));
  read_device(root.required_map("device"), r);
  std::set<std::string, std::less<>> ids;
  for (auto& m : root.map_list("benchmarks", true)) {
    r.benchmarks.push_back(read_benchmark(m, failed));
    if (!ids.insert(r.benchmarks.back().id).second)
      m.fail("id", fmt::format("benchmark id '{}' appears twice", r.benchmarks.back().id));
  }
  if (r.benchmarks.empty()) root.fail("benchmarks", "the file holds no benchmark");
  root.finish();
  return r;
}

}  // namespace ftplan
