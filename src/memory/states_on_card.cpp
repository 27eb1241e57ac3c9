#include "memory/states_on_card.hpp"

#include <algorithm>

#include "workload/optimizer.hpp"
#include "workload/roles.hpp"

namespace ftplan {

OnCardStates on_card_states(const Workload& w, const ActivationProfile& profile,
                            const ModelStates& per_card, const Placement& p) {
  const OptimizerRow& opt = optimizer_row(w.optimizer);
  const TrainingOptions& o = w.options;
  ModelStates s = per_card;
  OnCardStates out;
  const bool fsdp = p.sharding == Sharding::kFsdp && p.count > 1 && !p.mig;
  const double shards = fsdp ? static_cast<double>(p.count) : 1.0;

  // Pure BF16: no FP32 master copy; optimizers whose states follow the parameter dtype (torch
  // AdamW, SGD momentum) keep them in BF16; 8-bit and factored states are unchanged. Adapters the
  // stack keeps in FP32 anyway (PEFT 0.12+) keep the mixed-precision count: an FP32 weight,
  // gradient and states are its 16 B per parameter. The optimizer table prices each tensor
  // (ParamPrecision); the profile carries the sums as scales.
  if (o.pure_bf16) {
    const Bytes before = s.master_weights + s.optimizer_states;
    s.master_weights = s.master_weights * profile.master_scale;
    s.optimizer_states = s.optimizer_states * profile.states_scale;
    out.pure_bf16_saving = before - s.master_weights - s.optimizer_states;
  }
  // Offloaded optimizer (ZeRO-Offload, FSDP CPUOffloadPolicy): master weights and optimizer
  // states live in host memory, where the step runs.
  if (o.offload_optimizer) {
    out.host += s.master_weights + s.optimizer_states;
    s.master_weights = s.optimizer_states = Bytes(0);
  }
  // Paged optimizer states live in unified memory and are paged to the host under pressure
  // (QLoRA §3); PyTorch's allocator statistics do not see them either. They take card memory
  // only when it is free, so they are not counted in the peak.
  if (opt.paged && !o.offload_optimizer) {
    out.paged = s.optimizer_states;
    s.optimizer_states = Bytes(0);
  }
  // The update's temporaries: one optimizer state's worth per temporary, in the states' dtype
  // (pure BF16 halves them with the states), over the card's shard of the trained parameters.
  // The offloaded update runs on the host, paged rows are bitsandbytes kernels, and an update
  // stepped in the backward pass handles one tensor at a time.
  if (opt.update_temporaries > 0 && opt.states > 0 && !o.offload_optimizer &&
      !o.optimizer_in_backward && !opt.paged) {
    const Bytes one_state = s.optimizer_states / static_cast<double>(opt.states);
    const OptimizerImpl impl = optimizer_impl(w);
    if (impl == OptimizerImpl::kForeach) {
      out.update_temporaries = one_state * static_cast<double>(opt.update_temporaries);
    } else if (impl == OptimizerImpl::kForLoop && opt.gradient_bytes > 0) {
      // The largest trained tensor's state: its gradient's bytes at the state's width.
      const double per_param = opt.state_bytes / opt.states * profile.states_scale;
      const Bytes largest = profile.largest_gradient / shards * (per_param / opt.gradient_bytes);
      out.update_temporaries =
          std::min(one_state, largest) * static_cast<double>(opt.update_temporaries);
    }
  }
  // Offloaded parameters (FSDP CPUOffloadPolicy): weights and gradients live in host memory; the
  // card holds the all-gathered working set (StepMemory::gathered_params).
  if (o.offload_parameters) {
    out.host += s.frozen_weights + s.trained_weights + s.quantization_constants + s.gradients +
                s.reference_weights;
    s.frozen_weights = s.trained_weights = s.quantization_constants = s.reference_weights =
        s.reward_weights = Bytes(0);
  }
  // FSDP over FP32 parameters with a 16-bit mixed-precision policy (torchtitan builds its model in
  // FP32; Accelerate casts the trained flat parameters to FP32): the sharded parameter is the FP32
  // copy, the 16-bit weights exist only all-gathered per block (StepMemory::gathered_params), and
  // gradients are reduced into FP32 shards. The same 16 B per parameter, but 2 B of them move from
  // the resident weights to the gradients, which the backward pass produces.
  double gradient_scale = 1.0;
  if (w.stack && w.stack->fsdp_fp32_parameters && fsdp && !o.pure_bf16 && !o.offload_parameters &&
      opt.weight_bytes == 2 && opt.gradient_bytes == 2 && opt.master_bytes == 4) {
    out.fp32_parameter_shift = s.trained_weights;
    s.gradients += s.trained_weights;
    s.trained_weights = Bytes(0);
    gradient_scale = 2.0;
  }
  // Gradients: they persist across the step when micro-batches accumulate into them, or when
  // DDP / ZeRO-1/2 keep them in communication buckets; otherwise zero_grad(set_to_none=True)
  // frees them between steps and the backward pass produces them (PyTorch 2 default).
  const Bytes gradients = s.gradients;
  s.gradients = Bytes(0);
  if (!o.offload_parameters) out.gradients_in_step = gradients;
  const bool bucketed = p.count > 1 && !p.mig &&
                        (p.sharding == Sharding::kDdp || p.sharding == Sharding::kZero1 ||
                         p.sharding == Sharding::kZero2);
  if (o.offload_parameters) {
    // Gradients leave for the host block by block: the unsharded block gradient is counted
    // with the gathered working set.
    out.gradients_in_step = Bytes(0);
  } else if (o.offload_optimizer && !(w.stack && w.stack->fp32_main_gradients)) {
    // ZeRO-Offload: gradients are copied to the host as the backward pass produces them; one
    // block's gradients are on the card at a time. (Megatron's optimizer offload keeps its
    // main-grad buffer on the card: below.)
    out.host += gradients;
    out.gradients_in_step = Bytes(0);
    out.gradients_produced = profile.layer_gradients / shards;
    out.gradients_first = out.gradients_produced;
  } else if (o.optimizer_in_backward) {
    // One optimizer per parameter, stepped as soon as its gradient is ready, which it then frees
    // (torchtune register_optim_in_bwd_hooks): one parameter's gradient at a time.
    out.gradients_produced = profile.largest_gradient / shards;
    out.gradients_first = out.gradients_produced;
  } else if (w.grad_accum > 1 || bucketed) {
    out.gradients_persistent = true;
    s.gradients = gradients;
    out.gradients_in_step = Bytes(0);
    // FSDP1's no_sync (StackProfile::fsdp_no_sync): the micro-batches before the last keep their
    // gradients unsharded and add them up; the reduce-scatter waits for the last. Every card then
    // holds the whole model's gradients, and where a unit mixes frozen and trained parameters
    // (fsdp_unit_gradients) the frozen ones' as well.
    if (fsdp && fsdp_no_sync_accumulation(w)) {
      out.unsharded_gradients = gradients * (shards - 1.0);
      if (w.stack->fsdp_unit_gradients) out.unsharded_gradients += profile.block_frozen_gradients;
    }
  } else {
    out.gradients_produced = gradients;
    out.gradients_first = std::min(gradients, profile.head_gradients * gradient_scale / shards);
  }
  // The stack's own buffers. DDP without gradient_as_bucket_view keeps its buckets beside the
  // gradients: a second copy of them. (FSDP's gathered root unit is a buffer of the forward and
  // backward passes only: StepMemory::gathered_params.)
  // Megatron accumulates and reduces gradients in a contiguous FP32 main-grad buffer, allocated
  // once and zeroed between iterations: the gradients persist, at 4 B per trained parameter.
  // Its optimizer offload (HybridDeviceOptimizer under the distributed optimizer) moves only the
  // master weights and the states: the step copies the gradients from that buffer to the host,
  // and the buffer stays on the card.
  if (w.stack && w.stack->fp32_main_gradients && !o.offload_parameters &&
      !o.optimizer_in_backward) {
    if (!out.gradients_persistent) {
      out.gradients_persistent = true;
      s.gradients = gradients;
      out.gradients_in_step = out.gradients_produced = out.gradients_first = Bytes(0);
    }
    if (opt.gradient_bytes > 0 && opt.gradient_bytes < 4)
      out.stack_buffers += gradients * (4.0 / opt.gradient_bytes - 1.0);
  }
  if (w.stack && w.stack->ddp_gradient_copy && p.sharding == Sharding::kDdp && p.count > 1 &&
      !p.mig)
    out.stack_buffers += gradients;
  // DeepSpeed's estimator for a mixed-precision Adam full fine-tune (16 B per parameter in the
  // ZeRO paper's count) asks for more: ZeRO-2 keeps whole 16-bit gradients beside FP32 gradient
  // partitions, ZeRO-3 counts 18 B per parameter and gathers the largest layer in FP32.
  const StackProfile* st = w.stack;
  const bool mixed_adam = opt.weight_bytes + opt.gradient_bytes + opt.master_bytes +
                              (opt.factored ? 0.0 : opt.state_bytes) ==
                          16.0;
  if (st && method_traits(w.method).trains_base && mixed_adam && !o.offload_optimizer &&
      !o.offload_parameters && !o.pure_bf16 && p.count > 1 && !p.mig &&
      (p.sharding == Sharding::kZero2 || p.sharding == Sharding::kFsdp)) {
    const double n = static_cast<double>(p.count);
    const double params = static_cast<double>(w.model->params.total);
    const double ours = (per_card.trained_weights + per_card.gradients + per_card.master_weights +
                         per_card.optimizer_states)
                            .value;
    double estimate = 0;
    if (p.sharding == Sharding::kZero2 && st->zero2_sharded_bytes > 0) {
      estimate = params * (st->zero2_replicated_bytes + st->zero2_sharded_bytes / n);
    } else if (p.sharding == Sharding::kFsdp && st->zero3_sharded_bytes > 0) {
      double largest = 0;
      for (const auto& t : w.model->params.tensors)
        largest = std::max(largest, static_cast<double>(t.numel()));
      estimate = params * st->zero3_sharded_bytes / n + st->zero3_largest_layer_bytes * largest;
    }
    if (estimate > ours) out.stack_buffers += Bytes(estimate - ours);
  }
  out.resident = s.total() + out.stack_buffers + out.unsharded_gradients;
  return out;
}

}  // namespace ftplan
