// Published measurements of fine-tuning runs (data/measured/*.yaml, or a user's file of the same
// schema): their memory figure, their speed (throughput) and the software stack they ran on, and
// the validation of the memory model against them: each run with a memory figure is predicted from
// its stated settings and compared with the peak its source reports, in the kind of peak
// (allocated, active, reserved, nvidia-smi) and the unit (GB, GiB, MB, MiB) the source uses.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "comm/topology.hpp"
#include "memory/fit.hpp"
#include "memory/overheads.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// Which peak a source reports. PyTorch's "active" bytes are allocated blocks plus blocks freed
// but still in use by a stream; the model counts them as allocated.
enum class MeasuredPeak { kActive, kAllocated, kReserved, kNvidiaSmi };
std::string_view measured_peak_name(MeasuredPeak k);  // "active", ..., "nvidia-smi"

// How a source states a run's speed.
enum class ThroughputUnit {
  kTokensPerSecondPerGpu,  // tokens processed per second by one card
  kTokensPerSecond,        // by all the run's cards together
  kStepSeconds,            // seconds per optimizer step
  kMfu                     // model FLOP utilisation, a fraction in (0, 1]
};
std::string_view throughput_unit_name(ThroughputUnit u);  // "tokens_per_second_per_gpu", ...
const std::vector<std::string>& throughput_unit_names();

struct MeasuredThroughput {
  double value = 0;  // in `unit`, above 0 (an MFU at most 1)
  ThroughputUnit unit = ThroughputUnit::kTokensPerSecondPerGpu;
  // false: the source does not say whether its tokens/s are per card or for all cards; the note
  // says which the file assumes.
  bool stated_per_gpu = true;
  std::string note;  // how the source measured it
  // Why the step model cannot reproduce it (a layout it does not model, an unstated setting);
  // empty: comparable.
  std::string skip;
};

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
  // The node network the source ran on (network, nics_per_node; empty: the default of
  // data/comm), for runs beyond one node.
  NodeOptions nodes;
  MeasuredPeak peak = MeasuredPeak::kAllocated;
  bool peak_stated = true;  // false: the source does not say which peak; the file assumes one
  std::optional<double> measured;  // in `unit`
  std::string unit;                // kMemoryUnitNames: "GB", "GiB", "MB" or "MiB"
  Bytes measured_bytes() const;

  // The software stack it was measured with (data/stacks/); null: not stated. Also the
  // workload's stack when stated.
  const StackProfile* stack = nullptr;
  std::optional<MeasuredThroughput> throughput;  // the source's speed figure
  // Unpacked data: the mean number of real tokens per sample the source gives (`workload.seq` is
  // the padded or maximum length it states).
  std::optional<double> seq_mean;
  // The run has a throughput and no memory figure: it is left out of the memory comparison.
  bool throughput_only = false;
  // `workload` and `placement` hold every setting of the run (sequence length, batch, optimizer,
  // recompute, attention, cards), whether or not its memory is predicted.
  bool settings_complete = false;
  // An online objective (GRPO, PPO, RLOO): its throughput is the whole step with its rollout.
  bool online = false;
};

// Parses a measured-runs file strictly: unknown keys, wrong types, unknown model, GPU, method,
// optimizer, stack, throughput unit or source ids, a throughput not above 0 or an MFU above 1 are
// UserErrors naming the file, the key and the line.
// `stacks` (data/stacks/) must outlive the runs: their workloads point into it.
// `resolve_model`: how a model outside the catalog is found (a user's file: a config.json path or
// a Hugging Face id, as --model takes them); empty: such a run needs a `skip` reason.
std::vector<MeasuredRun> parse_measured_runs(
    const DataFile& file, const Catalog& catalog, const RuntimeOverheads& overheads,
    const Stacks& stacks,
    const std::function<ModelPtr(const std::string& id_or_path)>& resolve_model = {});

// The predicted figure of the kind a source reports: allocated and active count the tensors
// and the workspaces inside PyTorch's allocator; reserved adds the allocator's reserve;
// nvidia-smi adds the CUDA context and NCCL's buffers outside the allocator.
Bytes predicted_peak(const MemoryEstimate& m, MeasuredPeak kind);
// The peak a card can show: predicted_peak, with the allocator's reserve (reserved, nvidia-smi)
// at most what fits beside the allocated peak on the card. `validate` compares measured peaks
// with it.
Bytes observable_peak(const MemoryEstimate& m, MeasuredPeak kind);

struct ValidationRow {
  const MeasuredRun* run = nullptr;
  bool skipped = false;
  std::string reason;  // skipped: why
  MemoryEstimate estimate;
  Bytes predicted;
  Bytes measured;
  double error = 0;  // (predicted - measured) / measured
  // The prediction's range (OverheadBreakdown::range_low/high): the model's error spread, and
  // for a reserved or nvidia-smi peak the allocator's reserve spread.
  Bytes predicted_low, predicted_high;
};

// The memory model's error over the compared rows of the sources none of its figures was taken
// from (every source but the allocator reserve's): the record data/runtime/overheads.yaml keeps
// as `model_error`, and how often a measured peak falls inside its range when the spread is drawn
// from the other sources' rows only (leave-one-source-out).
struct ErrorSpreadReport {
  int rows = 0;
  int sources = 0;
  double median_abs_error = 0;
  double low = 0, high = 0;  // 10th and 90th percentile of the signed error
  int loso_inside = 0;       // of `rows`
};

struct ErrorSummary {
  std::string source;  // empty: all sources
  int rows = 0;
  double median_abs_error = 0;
  double worst_abs_error = 0;
  std::string worst_id;
};

struct ValidationReport {
  // In file order, skipped ones included; runs with only a throughput are not listed.
  std::vector<ValidationRow> rows;
  std::vector<ErrorSummary> per_source;  // in order of first appearance
  // The same per software stack (`source` holds the stack's name, "not stated" without one).
  std::vector<ErrorSummary> per_stack;
  ErrorSummary overall;
  int skipped = 0;
  // Compared rows, and how many of them measured inside their predicted range.
  int ranged = 0;
  int inside_range = 0;
  ErrorSpreadReport spread;
};

ValidationReport validate_runs(const std::vector<MeasuredRun>& runs);

}  // namespace ftplan
