// Measured training steps (bench/step/measure_step.py, schema "ftplan-step/1", bench/README.md)
// against ftplan's prediction for the same settings: the step time from the step model
// (perf/step) and the peak memory from estimate_memory (memory/fit) with the row's peak kind,
// allocated and reserved. The parser is strict like parse_bench_results.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "catalog/device_match.hpp"
#include "memory/fit.hpp"
#include "perf/efficiency.hpp"
#include "perf/step.hpp"
#include "workload/workload.hpp"

namespace ftplan {

inline constexpr std::string_view kStepResultsSchema = "ftplan-step/1";

struct StepRow {
  std::string id;      // <model>.<method>.mb<N>.ckpt-{on,off}
  std::string model;   // catalog id
  std::string method;  // lora | qlora
  std::int64_t seq = 0;
  std::int64_t micro_batch = 0;
  std::int64_t grad_accum = 1;
  std::string recompute;  // full | none
  int lora_rank = 0;
  std::string status;  // ok | oom | failed | skipped
  std::string reason;
  // Measured (status ok): median step time; peaks over the timed steps (null on a CPU run).
  Seconds median;
  std::optional<Bytes> peak_allocated;
  std::optional<Bytes> peak_reserved;
  std::string adapter_dtype;  // as PEFT kept the adapters ("float32")
  std::string where;          // "file: key 'rows[i]'" for messages

  bool ok() const { return status == "ok"; }
};

struct StepResults {
  std::string file;
  std::string note;  // only in synthetic files
  std::string timestamp_utc;
  DeviceIdentity device;
  std::string ftplan_gpu_id;  // the script's match ("" where it found none)
  std::string ftplan_gpu_id_basis;
  std::vector<std::string> lora_targets;  // Hugging Face module names
  std::string attention;                  // "sdpa"
  std::string lora_impl;                  // "peft" | "builtin"
  std::vector<StepRow> rows;
};

StepResults parse_step_results(const DataFile& file);

// The workload a row measured, as ftplan describes it: the row's model, method, rank, sequence,
// micro-batch and recompute, the file's LoRA targets, AdamW, BF16, FlashAttention (PyTorch's
// SDPA runs the FlashAttention kernels on these cards), NF4 blocks of 64 with double
// quantization in blocks of 256 (nf4_torch.py), `peak`, and the runtime overheads `o` (kept by
// pointer: `o` must outlive the workload), on `stack` (the bare PyTorch loop the script runs:
// data/stacks/pytorch.yaml; kept by pointer).
Workload measured_workload(const StepResults& r, const StepRow& row, const Catalog& catalog,
                           const RuntimeOverheads& o, const StackProfile& stack, PeakKind peak);

struct StepCheck {
  const StepRow* row = nullptr;
  bool predicted = false;  // false: the step model cannot time it (`reason`)
  Reason reason;
  Seconds step;                           // predicted step time
  MemoryEstimate allocated;               // predicted, peak kind allocated
  MemoryEstimate reserved;                // predicted, peak kind reserved
  std::optional<double> error_step;       // (predicted − measured) / measured; ok rows
  std::optional<double> error_allocated;  // ok rows with a measured peak
  std::optional<double> error_reserved;
};

// Every row predicted on `gpu` with efficiencies `e` and runtime overheads `o` (measured rows get
// their errors).
std::vector<StepCheck> check_measured_steps(const StepResults& r, const Catalog& catalog,
                                            const RuntimeOverheads& o, const StackProfile& stack,
                                            const GpuSpec& gpu, const EfficiencyTable& e);
// The stack measure_step.py runs on.
inline constexpr std::string_view kMeasuredStepStack = "pytorch";

// Median and worst absolute error of one figure over the rows that have it.
struct StepErrorSummary {
  std::string figure;  // "step time", "peak allocated", "peak reserved"
  std::size_t count = 0;
  double median_abs = 0;
  double worst_abs = 0;
};
std::vector<StepErrorSummary> summarize_step_errors(const std::vector<StepCheck>& checks);

}  // namespace ftplan
