// Published measurements of fine-tuning memory (data/measured/*.yaml, or a user's file of the
// same schema) and the validation of the memory model against them: each run is predicted from
// its stated settings and compared with the peak its source reports, in the kind of peak
// (allocated, active, reserved, nvidia-smi) and the unit (GB, GiB) the source uses.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "memory/fit.hpp"
#include "memory/overheads.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// Which peak a source reports. PyTorch's "active" bytes are allocated blocks plus blocks freed
// but still in use by a stream; the model counts them as allocated.
enum class MeasuredPeak { kActive, kAllocated, kReserved, kNvidiaSmi };
std::string_view measured_peak_name(MeasuredPeak k);  // "active", ..., "nvidia-smi"

struct MeasuredRun {
  std::string id;
  std::string source;  // source id (data/sources*.yaml)
  std::string note;
  int line = 0;       // line of the run in its file
  std::string model;  // catalog id as written
  std::string gpu;    // catalog id as written
  // Why the memory model cannot predict it (settings it does not cover, a setting the source
  // does not state, no memory figure); empty: predicted.
  std::string skip;
  Workload workload;    // valid when not skipped
  Placement placement;  // valid when not skipped
  MeasuredPeak peak = MeasuredPeak::kAllocated;
  bool peak_stated = true;  // false: the source does not say which peak; the file assumes one
  std::optional<double> measured;  // in `unit`
  std::string unit;                // "GB" or "GiB"
  Bytes measured_bytes() const;
};

// Parses a measured-runs file strictly: unknown keys, wrong types, unknown model, GPU, method,
// optimizer or source ids are UserErrors naming the file, the key and the line.
std::vector<MeasuredRun> parse_measured_runs(const DataFile& file, const Catalog& catalog,
                                             const RuntimeOverheads& overheads);

// The predicted figure of the kind a source reports: allocated and active count the tensors
// and the workspaces inside PyTorch's allocator; reserved adds the allocator's reserve;
// nvidia-smi adds the CUDA context and NCCL's buffers outside the allocator.
Bytes predicted_peak(const MemoryEstimate& m, MeasuredPeak kind);

struct ValidationRow {
  const MeasuredRun* run = nullptr;
  bool skipped = false;
  std::string reason;  // skipped: why
  MemoryEstimate estimate;
  Bytes predicted;
  Bytes measured;
  double error = 0;  // (predicted - measured) / measured
};

struct ErrorSummary {
  std::string source;  // empty: all sources
  int rows = 0;
  double median_abs_error = 0;
  double worst_abs_error = 0;
  std::string worst_id;
};

struct ValidationReport {
  std::vector<ValidationRow> rows;       // in file order, skipped ones included
  std::vector<ErrorSummary> per_source;  // in order of first appearance
  ErrorSummary overall;
  int skipped = 0;
};

ValidationReport validate_runs(const std::vector<MeasuredRun>& runs);

}  // namespace ftplan
