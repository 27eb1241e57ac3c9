// Software stacks as data (data/stacks/*.yaml): what a training framework runs for the choices a
// run leaves open: the attention kernel, whether the model is compiled, how the optimizer update
// is implemented. The step model reads the profile (perf/ops, perf/step); the constants fitted to
// measured runs live in the efficiency table (data/efficiency/default.yaml), not here.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "core/choices.hpp"

namespace ftplan {

// How the optimizer update runs: one fused kernel over all tensors (torch fused=True, DeepSpeed
// FusedAdam, bitsandbytes 8-bit kernels), multi-tensor element-wise kernels (torch foreach, the
// default on CUDA) or one set of kernels per tensor (foreach=False).
enum class OptimizerImpl { kFused, kForeach, kForLoop };

// How a mixture-of-experts layer runs its experts: all routed tokens in grouped products
// (Megatron's GroupedMLP, torch grouped_mm: Transformers 5 with torch 2.9+, torchtitan, torchtune)
// or one expert after the other on its share of the tokens (Transformers' "eager" experts, the
// only implementation before version 5; LitGPT's LLaMAMoE). Autograd then runs the experts'
// backward one at a time too, so an expert's activation gradients are held for its share only.
enum class ExpertsImpl { kGrouped, kLoop };
std::string_view experts_impl_name(ExpertsImpl i);
const std::vector<std::string>& experts_impl_names();
ExpertsImpl parse_experts_impl(std::string_view name, std::string_view field = "experts_impl");
std::string_view optimizer_impl_name(OptimizerImpl i);
const std::vector<std::string>& optimizer_impl_names();
OptimizerImpl parse_optimizer_impl(std::string_view name,
                                   std::string_view field = "optimizer_impl");

// What "selective" activation checkpointing keeps (data/stacks `recompute.selective`):
// - attention-core: everything but the attention core (softmax and the product with V), which is
//   rebuilt in the backward pass (Korthikanti et al. 2022 §5; Megatron, Hugging Face);
// - per-op: torchtitan's per-op policy: a block keeps its input, the attention kernel's outputs
//   and the output of every other matrix product in forward order (the 1st, 3rd, 5th...); the
//   rest of the block is rebuilt in its backward pass.
enum class SelectivePolicy { kAttentionCore, kPerOp };
std::string_view selective_policy_name(SelectivePolicy p);
const std::vector<std::string>& selective_policy_names();
// Under the per-op policy: whether the block's matrix product number `index` (0-based, in forward
// order, counted afresh in each block) keeps its output.
constexpr bool per_op_keeps_product(int index) {
  return index % 2 == 0;
}

struct StackProfile {
  std::string name;   // "hf"
  std::string title;  // "Hugging Face Transformers Trainer (TRL, PEFT)"
  std::string file;
  Attention attention = Attention::kSdpa;  // the kernel its attention runs unless --attention
  bool compile = false;                    // torch.compile on unless the run says otherwise
  OptimizerImpl optimizer = OptimizerImpl::kForeach;
  // Memory passes of the update relative to one fused pass (each foreach kernel reads and writes
  // its operands once).
  double optimizer_passes = 1;
  std::string optimizer_basis;
  ExpertsImpl experts = ExpertsImpl::kGrouped;  // data/stacks `experts:` (default grouped)
  std::string experts_basis;
  SelectivePolicy selective = SelectivePolicy::kAttentionCore;  // what "selective" keeps
  // Full recomputation moves the checkpointed inputs to host memory (Unsloth's
  // use_gradient_checkpointing="unsloth"): the run's --offload-activations unless it says not.
  bool offload_checkpoints = false;
  std::string offload_basis;
  std::string selective_basis;                 // empty: the default policy, no section in the file
  std::vector<std::string> selective_sources;  // the `recompute` section's sources
  // Kernel launches per trained tensor and update (for-loop implementations launch per tensor).
  double optimizer_launches_per_tensor = 0;
  // Memory (data/stacks `memory:`): the loss unless --loss says otherwise, and how the weights
  // reach the card when the run starts (memory/step_memory.cpp, the load phase).
  bool memory_stated = false;  // false: no `memory:` section; the default stack's values apply
  LossKind loss = LossKind::kFp32Upcast;
  std::string loss_basis;
  // Bytes per logit of the model's returned logits that the training loop keeps alive through
  // the backward pass (`output = model(...)` held until after `loss.backward()`): 4 where the
  // model upcasts its own logits to FP32, 2 for 16-bit logits, 0 where only the loss is kept.
  double held_logits_bytes = 0;
  // The loop keeps its output (the returned logits) bound until the model returns the next
  // micro-batch's, and with it the last micro-batch's autograd graph: the previous logits and what
  // that graph's nodes hold as plain attributes rather than saved tensors (bitsandbytes'
  // MatMul4Bit before 0.43.2, ctx.tensors = (A, B): TrainingOptions::quant_keeps_input) outlive
  // the backward pass into the next forward pass (ActivationProfile::previous_graph_inputs).
  bool previous_graph_held = false;
  bool load_full_on_each_card = false;  // each card holds the whole replica before sharding
  double load_bytes_per_param = 2;      // dtype the weights are loaded in before any cast
  std::string load_basis;
  // Buffers the framework keeps beyond the ZeRO accounting (memory/states_on_card.cpp):
  bool fsdp_root_unsharded = false;  // FSDP2: the root module's parameters (embeddings, final
                                     // norm, output layer) stay gathered from forward to backward
  bool ddp_gradient_copy = false;    // DDP gradient_as_bucket_view=False: the buckets hold a
                                     // second copy of every gradient
  bool fp32_main_gradients = false;  // Megatron: gradients in a persistent FP32 main-grad buffer
  // FSDP means PyTorch's FullyShardedDataParallel (FSDP1): its collectives allocate on streams of
  // their own and the allocator caches more (RuntimeOverheads::reserve_fsdp1).
  bool fsdp1 = false;
  // Gradient accumulation under FSDP1 runs its micro-batches before the last in no_sync (the
  // loop's own no_sync, Accelerate's, Fabric's no_backward_sync): no reduce-scatter until the
  // last, so every card accumulates the unsharded gradients of the whole model.
  bool fsdp_no_sync = false;
  // FSDP1 with use_orig_params wraps adapters in the same unit as the frozen weights of their
  // block (no separate policy for them): the unit's one flat gradient covers the frozen weights
  // too, which then take gradient memory as if they were trained.
  bool fsdp_unit_gradients = false;
  // The loop checkpoints each block reentrantly around its FSDP1 unit (the Trainer's default
  // use_reentrant=True, the checkpoint outside the unit). A unit whose weights are all frozen
  // (adapters in units of their own) hooks the recomputed block's detached input for its reshard,
  // and the hook lives until the backward pass ends: each finished block's input and that
  // input's gradient stay until then (memory/step_memory.cpp).
  bool fsdp1_reentrant_checkpoint = false;
  // FSDP over FP32 parameters with a 16-bit mixed-precision policy (torchtitan builds the model in
  // FP32; Accelerate casts a 16-bit model's trained flat parameters to FP32 when it prepares FSDP
  // in mixed precision): no resident 16-bit copy, FP32 gradient shards.
  bool fsdp_fp32_parameters = false;
  // DeepSpeed's own estimate of a mixed-precision Adam full fine-tune per trained parameter
  // (estimate_zero2/3_model_states_mem_needs): ZeRO-2 replicated + sharded / N bytes, ZeRO-3
  // sharded / N bytes + bytes per parameter of the largest layer (gather buffers). 0: not used.
  double zero2_replicated_bytes = 0;
  double zero2_sharded_bytes = 0;
  double zero3_sharded_bytes = 0;
  double zero3_largest_layer_bytes = 0;
  std::string buffers_basis;
  // How the trainer prepares a quantized base (`memory.quantized_base`): the --base-quant formats
  // beside which it casts every parameter left in 16 bits to FP32 (PEFT's
  // prepare_model_for_kbit_training): TrainedSet::fp32_unquantized.
  // LoRA through fused autograd functions (`memory.lora.fused_kernels`, Unsloth's LoRA_QKV,
  // LoRA_W and LoRA_MLP): ActivationSettings::fused_lora.
  bool fused_lora = false;
  // PEFT 0.12+ (get_peft_model's autocast_adapter_dtype=True) keeps the adapters of a 16-bit
  // model in FP32 also when the run trains without autocast (pure BF16): `memory.lora`
  // `fp32_adapters`. Otherwise the adapters follow the model's dtype (ActivationSettings).
  bool fp32_adapters = false;
  std::string lora_basis;
  std::vector<std::string> fp32_unquantized_for;
  // ...and then casts the embeddings and the output layer back to BF16 (TRL with bf16).
  bool bf16_embeddings = false;
  // ...but not when the base is sharded over several cards by FSDP (`skipped_when_sharded`:
  // TRL's is_sharded_qlora, a 4-bit base loaded on the host or the meta device for FSDP, which it
  // leaves as loaded): ActivationProfile::sharded.
  bool kbit_skipped_when_sharded = false;
  std::string quantized_base_basis;
  bool fp32_unquantized_with(std::string_view base_format) const;
  // The host's fixed time per micro-batch (data/efficiency `host.micro_batch_ms`: a trainer's
  // data loading, hooks and logging) applies; false for a bare training loop (`host:`).
  bool micro_batch_overhead = true;
  // Full fine-tunes under autocast over FP32 weights on each card (a bare loop around an FP32
  // model): every product casts its weight to 16 bits each forward pass (again when recomputed),
  // and the backward pass casts its 16-bit weight gradient back to FP32 (perf/ops).
  bool autocast_weight_casts = false;
  std::string host_basis;
  std::string note;
  std::vector<std::string> sources;
};

// One optimizer update as an implementation runs it: passes over the states relative to one
// fused pass, and kernel launches per trained tensor (0: a few for all tensors together).
struct OptimizerKernels {
  double passes = 1;
  double launches_per_tensor = 0;
};
// The stack's own figures where it runs `impl` (data/stacks `optimizer:`), the implementation's
// generic ones where a run names another (--optimizer-impl), counted from torch/optim/adamw.py:
// the fused kernel reads and writes each state once; the foreach path makes about 20 state-sized
// reads and writes where the fused kernel makes 7 (about 3 passes); the for-loop path the same
// passes, with about 8 kernels per tensor (decay, the two moment updates, the square root, its
// scaling and epsilon, the final addcdiv).
OptimizerKernels optimizer_kernels(OptimizerImpl impl, const StackProfile* stack);

// Whether the stack moves a run's checkpointed inputs to host memory by default (full
// recomputation under a stack with `recompute.offload_checkpoints`).
bool stack_offloads_checkpoints(const StackProfile& stack, Recompute recompute);

using SourceTable = std::map<std::string, SourceInfo, std::less<>>;

// Parses one profile strictly (unknown keys, names and source ids are errors naming the file);
// `base_formats`: the --base-quant ids `memory.quantized_base` may name (empty: not checked).
StackProfile parse_stack(const DataFile& file, const SourceTable& sources,
                         const std::vector<std::string>& base_formats = {});

// Every profile under data/stacks/ of the catalog, sorted by name; the default first.
struct Stacks {
  std::vector<StackProfile> profiles;
  // The profile named `name` (UserError naming `field` and the closest name otherwise).
  const StackProfile& find(std::string_view name, std::string_view field = "stack") const;
  const StackProfile& fallback() const { return find(kDefaultStack); }
  std::vector<std::string> names() const;
  static constexpr std::string_view kDefaultStack = "hf";
};
Stacks load_stacks(const Catalog& catalog);

}  // namespace ftplan
