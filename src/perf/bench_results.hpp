// ftplan-bench's results file (schema "ftplan-bench/1", bench/README.md), read strictly: an
// unknown schema version, a missing or unknown key, a value of the wrong type, a rate that does
// not follow from the file's own FLOPs, bytes and seconds (a unit mistake), or a benchmark whose
// check against the CPU reference failed is a UserError naming the file and the key.
// The writer is bench/results.cpp; tests/test_bench_results.cpp keeps the sample in its schema.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catalog/catalog.hpp"
#include "catalog/device_match.hpp"
#include "core/units.hpp"

namespace ftplan {

inline constexpr std::string_view kBenchResultsSchema = "ftplan-bench/1";

// The benchmark classes ftplan-bench writes (bench/README.md).
const std::vector<std::string>& bench_class_names();

struct BenchRecord {
  std::string id;           // e.g. gemm.bf16.llama-3.1-8b.gate_up.fwd.t2048
  std::string bench_class;  // gemm | bandwidth | adapter | dequant | norm | optimizer
  std::string op;           // fwd, bwd_dx, bwd_dw, d2d_copy, read, lora_pair, nf4_dequant, ...
  std::string model;        // catalog model the shape comes from ("" where none)
  std::string projection;
  std::vector<std::pair<std::string, std::int64_t>> shape;  // named sizes, in file order
  std::string dtype;               // input format: bf16 | fp8_e4m3 | fp32 | nf4 | bytes
  std::string output_dtype;        // bf16, bytes, u64, ...
  Flops flops;                     // per launch
  Bytes bytes;                     // per launch: read + written, each operand once
  std::string status;              // ok | failed | skipped
  std::string reason;              // why failed or skipped
  Seconds median, min, max;        // per launch, over the repeats (status ok only)
  std::string where;               // "file: key 'benchmarks[i]' (line N)" for messages
  std::int64_t check_samples = 0;  // outputs compared with the CPU reference (0: never ran)

  bool ok() const { return status == "ok"; }
  std::optional<std::int64_t> dimension(std::string_view name) const;
};

struct BenchResults {
  std::string file;
  std::string note;  // only in synthetic files
  std::string tool_version;
  std::string timestamp_utc;  // ISO 8601
  DeviceIdentity device;
  std::string driver_version;  // "" where NVML was absent
  std::string cuda_runtime_version;
  std::string cublaslt_version;
  std::vector<BenchRecord> benchmarks;

  std::string date() const { return timestamp_utc.substr(0, 10); }  // YYYY-MM-DD
};

// The `schema` key of a results file (ftplan-bench/1, ftplan-step/1, ftplan-nccl/1), to choose its
// reader; a file that is no map or has no `schema` is a UserError.
std::string results_schema(const DataFile& file);

// What to do with a benchmark whose check against the CPU reference failed (status "failed").
enum class FailedBenchmarks { kReject, kKeep };

// Parses `file` (JSON). With kReject, a failed benchmark is a UserError naming it and why.
BenchResults parse_bench_results(const DataFile& file,
                                 FailedBenchmarks failed = FailedBenchmarks::kReject);

}  // namespace ftplan
