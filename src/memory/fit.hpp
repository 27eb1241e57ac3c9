// Does a workload fit a card (or each card of several, or one MIG instance), and with how much
// room.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/reason.hpp"
#include "core/trace.hpp"
#include "core/units.hpp"
#include "memory/activations.hpp"
#include "memory/model_states.hpp"
#include "memory/step_memory.hpp"
#include "workload/workload.hpp"

namespace ftplan {

struct LayoutStates;  // parallel/layout.hpp

enum class Verdict { kFits, kTight, kDoesNotFit };
std::string_view verdict_name(Verdict v);  // "fits", "tight", "does-not-fit"

// Below this share of the card's memory left after the estimated peak, a run is `tight`: too
// little to plan with. Basis: the seed calls 6.4 GB free on a 150.8 GB H200 NVL (4 %) too little
// for a 70B LoRA, and plans with 22 GB (15 %) for the 8B full fine-tune; the margin has to absorb
// allocator fragmentation, transient spikes (optimizer step, NCCL buffers) and the error of the
// activation estimate (validated at <= 15 % median, 30 % worst; memory/activations).
inline constexpr double kTightHeadroomFraction = 0.10;

struct MemoryEstimate {
  ModelStates states;    // per card: the seed's accounting of what the run keeps
  Bytes states_on_card;  // per card: the part of it on the card during the step (offload, paged
                         // optimizer states and gradients produced in backward taken out)
  Bytes activations;     // per card: one micro-batch's memory at its peak (saved activations,
                         // logits and loss, backward temporaries, gradients produced,
                         // dequantization/FSDP buffers)
  Bytes overhead;        // per card: CUDA context, library workspaces, NCCL, allocator reserve
  // Online objectives with a colocated rollout engine: the share of the card the engine holds
  // (weights, KV cache, its working reserve) beside training; 0 otherwise. A sleeping engine
  // frees it while the step trains, and the rollout then peaks on its own (`rollout_peak`).
  Bytes rollout_engine;
  Bytes rollout_peak;     // the policy's states on the card, the overheads and the awake engine
  RuntimeMemory runtime;  // the breakdown of the three above
  Bytes capacity;         // per card, or per MIG instance
  Bytes free;             // capacity - model states: the seed's "free for activations"
  Bytes step_peak;        // states on the card + activations + overhead
  Bytes load_peak;        // the load phase (runtime.load): weights before the first step
  Bytes peak;             // the larger of step_peak and load_peak
  // Where a measured peak falls around `peak`: the model's error spread on published runs
  // (OverheadBreakdown::range_low/high), widened for a reserved or nvidia-smi peak of the step to
  // the allocator's reserve at the 10th and 90th percentile of its measured share.
  Bytes peak_low, peak_high;
  bool load_is_peak = false;
  Bytes headroom;  // capacity - peak
  Verdict verdict = Verdict::kFits;
  // Tight only because the allocator's reserve (cached blocks: reserved minus allocated) does not
  // fit beside the allocated peak: PyTorch frees cached blocks and retries before it fails.
  bool tight_by_reserve = false;
  Reason reason;  // one sentence a user can act on
  // Under pipeline parallelism (Placement::layout): the first and the last stage, each on one of
  // its cards; the figures above are the stage whose peak is higher. stage_count 0: no pipeline.
  struct StageMemory {
    int stage = 0;
    std::int64_t layers = 0;
    Bytes states_on_card, activations, overhead, peak;
  };
  std::array<StageMemory, 2> stages{};
  int stage_count = 0;
  int peak_stage = 0;
};

// Per-card memory of `w` placed as `p`. `replica` lets a caller that evaluates many placements of
// one workload (the planner) compute the model states once.
MemoryEstimate estimate_memory(const Workload& w, const Placement& p, Trace* trace = nullptr);

// `--shard auto`: how `p`'s cards split the run. One card: none; a model-parallel layout: its
// sharding (layout_sharding); else data parallel (ddp) when the replica fits on one card, and
// FSDP, which splits every state, when it does not.
Sharding auto_sharding(const Workload& w, const ModelStates& replica, const Placement& p);
MemoryEstimate estimate_memory(const Workload& w, const ModelStates& replica, const Placement& p,
                               Trace* trace = nullptr);
// As above with the workload's activation profile computed once (solvers, planner).
MemoryEstimate estimate_memory(const Workload& w, const ModelStates& replica,
                               const ActivationProfile& profile, const Placement& p,
                               Trace* trace = nullptr);

// The figures alone, without the reason text or a trace: the planner's allocation-free path.
// `layout`: the layout's stage states when already known (layout_states for p.layout).
MemoryEstimate memory_figures(const Workload& w, const ModelStates& replica,
                              const ActivationProfile& profile, const Placement& p,
                              const LayoutStates* layout = nullptr);
// The one sentence a user can act on, for figures from memory_figures().
Reason memory_reason(const MemoryEstimate& m, const Placement& p);

// Where a placement puts the run: the card, each of N cards, or one MIG instance of the card.
Reason placement_where(const Placement& p);

// The verdict rule, on its own (used by MIG per profile and by the planner).
Verdict verdict_for(Bytes capacity, Bytes peak);
// Whether the peak with everything it counts, the allocator's reserve included, fits: not
// `does-not-fit`, and not tight only by releasing cached blocks.
inline bool fits_with_reserve(const MemoryEstimate& m) {
  return m.verdict != Verdict::kDoesNotFit && !m.tight_by_reserve;
}

}  // namespace ftplan
