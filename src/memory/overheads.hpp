// Runtime memory of a training process per card besides model states and activations: the CUDA
// context, library workspaces, NCCL buffers and the caching allocator's reserve. The figures are
// data (data/runtime/overheads.yaml), parsed strictly here.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "core/units.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// One size rule of a library workspace: applies from a compute capability (and card memory) on.
struct WorkspaceRule {
  int min_cc_major = 0;
  int min_cc_minor = 0;
  double min_memory_GiB = 0;
  Bytes size;
  std::string basis;
};

struct RuntimeOverheads {
  std::string file;    // where the table was read from
  Bytes cuda_context;  // outside the allocator
  std::string cuda_context_basis;
  std::vector<WorkspaceRule> cublas;    // through the allocator, first matching rule
  std::vector<WorkspaceRule> cublaslt;  // through the allocator, first matching rule
  std::string cudnn_reason;             // why no cuDNN workspace is counted
  Bytes nccl_buffer;                    // per buffer
  int nccl_buffers_per_channel = 0;
  int nccl_channels = 0;
  std::string nccl_basis;
  // The allocator's reserve as a share of the step's memory (activations, temporaries, buffers
  // and gradients): the measured median, and its 10th and 90th percentile (the peak's range).
  struct ReserveShare {
    double low = 0, median = 0, high = 0;
  };
  ReserveShare reserve_with_recompute, reserve_without_recompute;
  std::string allocator_reserve_basis;
  std::vector<std::string> allocator_reserve_sources;  // what the shares were measured on
  // The share under PyTorch's FullyShardedDataParallel (FSDP1: a stack's StackProfile::fsdp1)
  // sharding over several cards with recomputation, drawn from published runs: each run's
  // nvidia-smi row (`run`), the row of its allocated peak (`allocated_run`) and the model states
  // it held at the end of training. Absent: the share with recomputation applies.
  struct Fsdp1Run {
    std::string run, allocated_run;
    Bytes resident;
  };
  struct Fsdp1Share {
    ReserveShare share;
    std::vector<Fsdp1Run> runs;
    std::vector<std::string> sources;  // the rows' source: its reserve-counting rows are fitted
    std::string basis;
    bool present() const { return !runs.empty(); }
  };
  Fsdp1Share reserve_fsdp1;
  // How far measured peaks fall from the memory model's on published runs of sources none of its
  // figures was taken from (every source but allocator_reserve_sources): the 10th and 90th
  // percentile of (predicted - measured) / measured, as `ftplan validate` computes them (a test
  // holds this record to it). Absent (rows 0) in a table that gives none.
  struct ErrorSpread {
    int rows = 0;
    int sources = 0;
    double median_abs_error = 0;
    double low = 0, high = 0;
    std::string basis;
    bool present() const { return rows > 0; }
  };
  ErrorSpread model_error;
};

// Parses data/runtime/overheads.yaml against the known source ids.
RuntimeOverheads parse_runtime_overheads(
    const DataFile& file, const std::map<std::string, SourceInfo, std::less<>>& sources);
// The table of a catalog (built-in data or a --data folder's replacement); UserError if missing.
RuntimeOverheads load_runtime_overheads(const Catalog& catalog);

// The overheads of one card of a placement. `step_memory` is what the step allocates and frees
// (activations, buffers and gradients), on which the allocator reserve is counted: a larger share
// when blocks are recomputed (`recomputes`), whose allocations interleave with the gradients'.
struct OverheadBreakdown {
  Bytes cuda_context;        // outside the allocator
  Bytes cublas_workspace;    // inside
  Bytes cublaslt_workspace;  // inside
  Bytes nccl_buffers;        // outside, several cards only
  Bytes allocator_reserve;   // reserved - allocated
  // The reserve at the 10th and 90th percentile of its measured share: the range of a reserved
  // peak (equal to allocator_reserve when the table states no spread).
  Bytes allocator_reserve_low, allocator_reserve_high;
  bool reserve_fsdp1 = false;  // the share is FSDP1's (RuntimeOverheads::reserve_fsdp1)
  // A reserved peak's range around `peak`, which holds the median reserve.
  Bytes reserved_low(Bytes peak) const { return peak - allocator_reserve + allocator_reserve_low; }
  Bytes reserved_high(Bytes peak) const {
    return peak - allocator_reserve + allocator_reserve_high;
  }
  // The memory model's error spread (RuntimeOverheads::model_error): its 10th and 90th percentile.
  double error_low = 0, error_high = 0;
  // A peak's range: where a measured peak falls around `peak`, from the model's error spread on
  // published runs ([peak / (1 + high), peak / (1 + low)]), widened for a peak that counts the
  // allocator's reserve to the reserve at its 10th and 90th percentile.
  Bytes range_low(Bytes peak, bool with_reserve) const {
    Bytes low = peak * (1.0 / (1.0 + error_high));
    if (with_reserve && reserved_low(peak) < low) low = reserved_low(peak);
    return low;
  }
  Bytes range_high(Bytes peak, bool with_reserve) const {
    Bytes high = peak * (1.0 / (1.0 + error_low));
    if (with_reserve && high < reserved_high(peak)) high = reserved_high(peak);
    return high;
  }
  Bytes inside_allocator() const { return cublas_workspace + cublaslt_workspace; }
  Bytes outside_allocator() const { return cuda_context + nccl_buffers; }
  // A run's peak counts what sits outside the allocator whatever the kind (it is on the card):
  // active and allocated the same, reserved and nvidia-smi also the allocator's reserve.
  Bytes total(PeakKind kind) const {
    return inside_allocator() + outside_allocator() +
           (counts_reserve(kind) ? allocator_reserve : Bytes(0));
  }
  static bool counts_reserve(PeakKind kind) {
    return kind == PeakKind::kReserved || kind == PeakKind::kNvidiaSmi;
  }
};
// `fsdp1`: the stack shards through FSDP1 (StackProfile::fsdp1); its share applies where the
// placement shards over several cards (ZeRO-2 as SHARD_GRAD_OP, FSDP, HSDP) and blocks are
// recomputed, the only runs it was measured on.
OverheadBreakdown overheads_for(const RuntimeOverheads& table, const Placement& p,
                                Bytes step_memory, bool recomputes, bool fsdp1 = false);

}  // namespace ftplan
