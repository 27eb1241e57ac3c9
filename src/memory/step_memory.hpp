// The step's memory beyond the resident model states, and the runtime overheads, per card. The
// step's peak is the larger of two phases:
//   loss phase:   every block's saved activations + the output layer's logits and loss, or
//                 its backward that follows (the logits' gradient, the head's weight gradient
//                 and, where it is accumulated, a second head-sized partial), the larger;
//   block phase:  the backward pass of one block (its recomputed activations and gradients of
//                 its activations) while the model's gradients are produced;
//   update phase: the optimizer step after the backward pass: every gradient and the update's
//                 temporaries (torch's foreach AdamW: sqrt(v) for every trained tensor).
#pragma once

#include <string_view>

#include "core/trace.hpp"
#include "core/units.hpp"
#include "memory/activations.hpp"
#include "memory/model_states.hpp"
#include "memory/overheads.hpp"
#include "memory/states_on_card.hpp"
#include "workload/workload.hpp"

namespace ftplan {

enum class StepPhase { kLoss, kBlockBackward, kOptimizerUpdate };
std::string_view step_phase_name(StepPhase phase);  // "backward pass of a block"
std::string_view step_phase_id(StepPhase phase);    // "block-backward" (JSON)
std::string_view step_phase_word(StepPhase phase);  // "backward" (tables)

// The step's memory beyond the resident model states, per card, at its peak phase.
struct StepMemory {
  StepPhase phase = StepPhase::kLoss;
  Bytes saved_activations;   // saved activations of the blocks on the card
  Bytes logits_and_loss;     // output layer: inputs, logits, loss, gradient of the hidden state
  Bytes recompute;           // activations rebuilt for the block whose backward runs
  Bytes backward_transient;  // gradients of that block's activations
  Bytes gradients;           // model gradients produced during the backward pass
  Bytes dequant_buffer;      // QLoRA dequantized weight
  Bytes gathered_params;     // FSDP / offload: all-gathered parameters and unsharded gradients
  // Preference objectives: the logits of a forward pass without gradient (the reference model's,
  // KTO's KL batch), made while the policy's are held for its backward.
  Bytes scoring_logits;
  Bytes update_temporaries;  // the optimizer update's temporaries (OnCardStates)
  Bytes other_phase;         // the larger of the other phases' totals, for comparison
  Bytes total() const {
    return saved_activations + logits_and_loss + recompute + backward_transient + gradients +
           dequant_buffer + gathered_params + scoring_logits + update_temporaries;
  }
  // The largest term, in words ("logits and loss of the output layer").
  std::string_view largest_term() const;
};
StepMemory step_memory(const ActivationProfile& profile, const OnCardStates& states,
                       const Workload& w, const Placement& p);

// The load phase: the weights reaching the card before the first step (the stack's load
// behaviour: the whole replica on each card before sharding, or its shard; a dtype before the
// cast), and the largest tensor in transit (cast or quantized at load). Master weights, gradients
// and optimizer states do not exist yet.
struct LoadMemory {
  Bytes weights;    // on the card once loaded (whole replica or shard)
  Bytes transient;  // the largest tensor in its load dtype (and its 16-bit copy when quantized)
  Bytes outside;    // CUDA context and NCCL, outside the allocator
  Bytes total() const { return weights + transient + outside; }
};

LoadMemory load_memory(const Workload& w, const ActivationProfile& profile,
                       const ModelStates& per_card, const Placement& p,
                       const OverheadBreakdown& overheads);

struct RuntimeMemory {
  Bytes activations;  // step memory at the peak: activations, logits, gradients, buffers
  Bytes overhead;     // CUDA context, library workspaces, NCCL, allocator reserve (if reserved)
  OnCardStates states;
  StepMemory step;
  OverheadBreakdown overheads;
  LoadMemory load;
};

// Everything beyond the model states for `w` on one card of `p`; `per_card` are the model states
// of one card (after sharding). The profile overload lets callers that evaluate many sequence
// lengths or placements of one workload compute the profile once.
RuntimeMemory runtime_memory(const Workload& w, const ModelStates& per_card, const Placement& p,
                             Trace* trace = nullptr);
RuntimeMemory runtime_memory(const Workload& w, const ActivationProfile& profile,
                             const ModelStates& per_card, const Placement& p,
                             Trace* trace = nullptr);

}  // namespace ftplan
