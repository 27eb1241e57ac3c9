// Where the model states sit during a training step on one card: what stays resident, what moves
// to host memory or to paged memory, and when the gradients live.
#pragma once

#include "memory/activations.hpp"
#include "memory/model_states.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// Model states during the step, after the options that move them: offload to host memory,
// paged optimizer states, pure-BF16 training, gradients freed between steps or consumed in the
// backward pass. The seed's `model_states()` stays the accounting of what a run keeps; this is
// where it sits.
struct OnCardStates {
  Bytes resident;            // on the card for the whole step
  Bytes gradients_produced;  // gradients produced during the backward pass (not in `resident`)
  Bytes gradients_first;     // the part of them produced first (output layer)
  Bytes paged;               // paged optimizer states: host-evictable, not counted in the peak
  Bytes host;                // moved to host memory
  Bytes pure_bf16_saving;    // no FP32 master copy, optimizer states in BF16 (pure BF16)
  // FSDP over FP32 parameters (StackProfile::fsdp_fp32_parameters): the 16-bit weights that are
  // not resident, and the same bytes the FP32 gradient shards add beyond 16-bit gradients.
  Bytes fp32_parameter_shift;
  Bytes gradients_in_step;  // gradients not resident: produced (and freed) during the step
  bool gradients_persistent = false;  // gradients live across the whole step (in `resident`)
  Bytes stack_buffers;  // the stack's own buffers (DDP bucket copy, FP32 main grads), in `resident`
  // FSDP1 no_sync accumulation: the unsharded gradients beyond the card's shard of them (and the
  // frozen weights' of units that mix them with trained ones), in `resident`
  Bytes unsharded_gradients;
  // The optimizer update's temporaries, made after the backward pass while every gradient lives
  // (OptimizerRow::update_temporaries): all trained tensors' under foreach kernels, the largest
  // tensor's under a for-loop update; none fused, offloaded or stepped in the backward pass.
  Bytes update_temporaries;
};
OnCardStates on_card_states(const Workload& w, const ActivationProfile& profile,
                            const ModelStates& per_card, const Placement& p);

}  // namespace ftplan
