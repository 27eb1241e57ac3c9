// What ftplan-bench reports: one record per benchmark plus the card it ran on, and their JSON
// form (schema "ftplan-bench/1", documented in bench/README.md; `ftplan calibrate import` reads
// it). Plain C++, no CUDA: the test suite checks the writer against the checked-in sample.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ftplan::bench {

inline constexpr std::string_view kResultsSchema = "ftplan-bench/1";

// Median, fastest and slowest of the per-launch times of the timed repeats.
struct TimingStats {
  double median_s = 0.0;
  double min_s = 0.0;
  double max_s = 0.0;
  int repeats = 0;              // timed repeats
  int launches_per_repeat = 0;  // back-to-back launches each repeat times (per-launch s = / this)
  int warmup_launches = 0;
  int input_sets = 0;       // buffers rotated between launches so that the L2 holds no input
  bool cuda_graph = false;  // repeats replayed as a captured CUDA graph (no host launch gaps)
};

// Per-launch times (seconds) → median, min, max. The median of an even count is the mean of the
// two middle values.
TimingStats summarize(std::vector<double> per_launch_s);

struct CheckResult {
  bool passed = false;
  std::string metric;  // how one error is measured
  double max_error = 0.0;
  double bound = 0.0;
  std::int64_t samples = 0;  // compared values
};

enum class Status { kOk, kFailed, kSkipped };
std::string_view status_name(Status s);

struct Dimension {
  std::string name;
  std::int64_t value = 0;
};

struct BenchResult {
  std::string id;           // unique, stable: e.g. gemm.bf16.llama-3.1-8b.up.fwd.t2048
  std::string bench_class;  // gemm | bandwidth | adapter | dequant | norm | optimizer
  std::string op;           // e.g. fwd, bwd_dx, bwd_dw, d2d_copy, read, lora_pair, ...
  std::string dtype;        // input format: bf16 | fp8_e4m3 | fp32 | nf4 | bytes
  std::string output_dtype;
  std::string accumulate;  // fp32 where a sum is accumulated; empty otherwise
  std::string model;       // gemm and adapter: the catalog model the shape is taken from
  std::string projection;  // gemm: q | kv | o | gate_up | down
  std::vector<Dimension> shape;
  std::string layout;         // gemm: cuBLASLt operand transposes, e.g. TN
  double flops = 0.0;         // floating-point operations per launch (0 for pure copies)
  double bytes = 0.0;         // bytes per launch, read + written, each operand counted once
  std::string bytes_counted;  // what `bytes` counts, in words
  TimingStats timing;
  CheckResult check;
  Status status = Status::kSkipped;
  std::string reason;  // why skipped or failed

  double achieved_TFLOPS() const;  // flops / median_s / 1e12 (0 when not timed)
  double achieved_GBps() const;    // bytes / median_s / 1e9 (GB = 10^9 B)
};

struct DeviceReport {
  std::string name;
  std::string compute_capability;  // "9.0"
  int sm_count = 0;
  std::int64_t memory_total_bytes = 0;
  std::int64_t l2_cache_bytes = 0;
  int memory_bus_width_bits = 0;
  std::string pci_bus_id;
  std::optional<std::string> driver_version;  // e.g. "580.65.06" (NVML); null without NVML
  std::string cuda_driver_api_version;        // what the driver supports, e.g. "13.0"
  std::string cuda_runtime_version;
  std::string cublaslt_version;
  std::string clocks_source;  // "nvml" or "cudaDeviceGetAttribute"
  std::optional<double> sm_clock_max_MHz;
  std::optional<double> memory_clock_max_MHz;
  std::optional<double> sm_clock_start_MHz;  // SM clock when the run began / ended (NVML only)
  std::optional<double> sm_clock_end_MHz;
  std::optional<double> power_limit_W;
  std::optional<double> temperature_end_C;
};

struct RunSettings {
  bool quick = false;
  int warmup = 0;
  int repeats = 0;
  double min_repeat_s = 0.0;
  std::string filter;
  std::string command_line;
};

struct RunReport {
  std::optional<std::string> note;  // e.g. the label of a synthetic sample
  std::string tool_version;
  std::string timestamp_utc;  // ISO 8601, e.g. 2026-01-31T12:00:00Z
  double elapsed_s = 0.0;
  RunSettings settings;
  DeviceReport device;
  std::vector<BenchResult> benchmarks;
};

std::string to_json(const RunReport& report);

// JSON string literal of `text` (quotes included), escaping as RFC 8259 requires.
std::string json_quote(std::string_view text);

}  // namespace ftplan::bench
