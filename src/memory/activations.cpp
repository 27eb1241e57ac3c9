#include "memory/activations.hpp"

#include <algorithm>
#include <bit>

#include "core/format.hpp"
#include "workload/roles.hpp"

namespace ftplan {

namespace {

// Activations are kept in the 16-bit compute format (BF16/FP16); FP8 recipes also keep 16-bit
// copies for the non-matmul operations, which this count assumes throughout.
constexpr double kActivationBytes = 2;
constexpr double kFp32Bytes = 4;
constexpr double kMaskBytes = 1;  // a dropout mask: one byte per element (Korthikanti et al. §4.1)

double d(std::int64_t v) {
  return static_cast<double>(v);
}

// Bytes per token a norm over `width` values keeps. Fused kernels (Megatron's LayerNorm, Liger,
// torch.compile) and PyTorch's native LayerNorm keep only their 16-bit input (the per-token mean
// and 1/rms, 4-8 B per token, are left out as in Korthikanti et al.). The RMSNorm of Hugging Face
// and torchtune is written in PyTorch ops and upcasts: in eager mode it keeps the FP32 copy of its
// input (for pow and mul) and, when its weight is trained, the normalised 16-bit tensor that the
// weight's gradient needs (transformers LlamaRMSNorm; PyTorch autograd saved tensors).
double norm_bytes(const BlockShape& shape, const ActivationSettings& s, std::int64_t width) {
  if (s.compiled || !shape.norm_upcasts) return kActivationBytes * d(width);
  return kFp32Bytes * d(width) + (s.full_finetune ? kActivationBytes * d(width) : 0);
}

// Number of LoRA modules among `group` (q,k,v or gate,up): a fused module counts once.
int adapted_modules(ProjectionSet adapted, ProjectionSet group, bool fused) {
  const ProjectionSet hit = adapted & group;
  if (hit == 0) return 0;
  return fused ? 1 : std::popcount(static_cast<unsigned>(hit));
}

// Bytes per token kept for the shared input of a group of projections (q,k,v read the norm's
// output; gate and up read theirs). A matrix product keeps its input only when its weight needs a
// gradient (PyTorch autograd: the input gradient needs the weight, the weight gradient needs the
// input): a full fine-tune keeps it once; LoRA keeps it when an adapter reads it (lora_A's
// weight gradient), once in 16-bit, or one FP32 copy per adapted module when the adapters run in
// FP32 (PEFT casts the input to the adapter's dtype).
double group_input_bytes(const ActivationSettings& s, ProjectionSet group, bool fused,
                         std::int64_t width) {
  if (s.full_finetune) return kActivationBytes * d(width);
  const int modules = adapted_modules(s.adapted, group, fused);
  if (modules == 0) return 0;
  return s.fp32_adapters ? kFp32Bytes * d(width) * modules : kActivationBytes * d(width);
}

// The input of a single projection (o, down) when it needs one.
double single_input_bytes(const ActivationSettings& s, ProjectionSet proj, std::int64_t width) {
  if (s.full_finetune) return kActivationBytes * d(width);
  if ((s.adapted & proj) == 0) return 0;
  return (s.fp32_adapters ? kFp32Bytes : kActivationBytes) * d(width);
}

// LoRA intermediates: each adapted module keeps x·A (r values) as lora_B's input (Hu et al. 2021).
double adapter_bytes(const ActivationSettings& s, int modules) {
  if (s.full_finetune) return 0;
  return (s.fp32_adapters ? kFp32Bytes : kActivationBytes) * s.rank * modules;
}

// DoRA: each adapted module keeps its base output (16-bit) and its adapter output (the adapter's
// dtype), both `out` wide, for the magnitude's gradient (Liu et al. 2024; PEFT DoraLinearLayer).
double dora_bytes(const ActivationSettings& s, const BlockShape& shape, ProjectionSet group,
                  std::int64_t mlp_width) {
  if (!s.dora) return 0;
  const ProjectionSet hit = s.adapted & group;
  std::int64_t out = 0;
  if (hit & kProjQ) out += shape.q_dim;
  if (hit & kProjK) out += shape.kv_dim;
  if (hit & kProjV) out += shape.kv_dim;
  if (hit & kProjO) out += shape.hidden;
  if (hit & kProjGate) out += mlp_width;
  if (hit & kProjUp) out += mlp_width;
  if (hit & kProjDown) out += shape.hidden;
  return (kActivationBytes + (s.fp32_adapters ? kFp32Bytes : kActivationBytes)) * d(out);
}

int mlp_adapters(const ActivationSettings& s, const BlockShape& shape) {
  return adapted_modules(s.adapted, kProjGate | kProjUp, shape.fused_gate_up) +
         adapted_modules(s.adapted, kProjDown, false);
}

// The attention sublayer's saved tensors (Korthikanti et al. §4.1, with the kernels' own rules).
void attention_part(const BlockShape& shape, const ActivationSettings& s, BlockActivations& out) {
  const double e = kActivationBytes;
  const std::int64_t h = shape.hidden, q = shape.q_dim, a = shape.heads;
  // K and V as the attention kernel keeps them: FlashAttention handles grouped-query attention
  // natively (kv_dim wide); PyTorch SDPA and eager attention receive K and V repeated to every
  // query head (transformers repeat_kv, torchtune's expand), q_dim wide.
  const std::int64_t kv = s.attention == Attention::kFlash ? shape.kv_dim : q;
  double t = norm_bytes(shape, s, h);  // input norm
  // q, k, v read the norm's output (Korthikanti: "their shared input, 2sbh").
  t += group_input_bytes(s, kProjQ | kProjK | kProjV, shape.fused_qkv, h);
  if (shape.qk_norm) t += norm_bytes(shape, s, q) + norm_bytes(shape, s, shape.kv_dim);
  // Q and K for QK^T and V for the product with the probabilities: Korthikanti's 4sbh + 2sbh,
  // here with the widths the kernel keeps. RoPE multiplies by constant tables: nothing more.
  t += e * d(q + 2 * kv);
  if (s.attention == Attention::kEager) {
    // softmax(QK^T) keeps its output, a x s x s per sequence (2as²b); with dropout, the mask
    // (as²b) and the dropped probabilities (2as²b): Korthikanti's 5as²b. The product with V
    // then keeps the probabilities, already counted.
    const double core = e * d(a) + (shape.dropout ? (kMaskBytes + e) * d(a) : 0);
    out.saved.per_seq_squared += core;
    out.attention_core.per_seq_squared += core;
    // The output projection keeps its input, the attention output (Korthikanti's 2sbh).
    t += single_input_bytes(s, kProjO, q);
  } else {
    // FlashAttention and SDPA's kernels keep their output O and one FP32 logsumexp per row and
    // head (Dao et al. 2022 §3.1): no s x s matrix. With FlashAttention's [b, s, heads, d]
    // layout O is the output projection's input itself; SDPA's [b, heads, s, d] output is
    // transposed into a new tensor that the projection keeps when it needs its input.
    t += e * d(q) + kFp32Bytes * d(a);
    if (s.attention == Attention::kSdpa)
      t += single_input_bytes(s, kProjO, q);
    else if (!s.full_finetune && s.fp32_adapters && (s.adapted & kProjO))
      t += kFp32Bytes * d(q);  // the FP32 copy an adapted o_proj casts its input to
  }
  t += adapter_bytes(s, adapted_modules(s.adapted, kProjQ | kProjK | kProjV, shape.fused_qkv) +
                            adapted_modules(s.adapted, kProjO, false));
  t += dora_bytes(s, shape, kProjQ | kProjK | kProjV | kProjO, 0);
  if (shape.dropout) t += kMaskBytes * d(h);           // dropout after the attention block (sbh)
  if (shape.norms >= 4) t += norm_bytes(shape, s, h);  // Gemma: norm on the attention output
  out.saved.per_token += t;
}

// The dense MLP's saved tensors.
void dense_mlp_part(const BlockShape& shape, const ActivationSettings& s, BlockActivations& out) {
  const double e = kActivationBytes;
  const std::int64_t h = shape.hidden, I = shape.mlp_width;
  double t = norm_bytes(shape, s, h);  // post-attention (Gemma: pre-feedforward) norm
  t += group_input_bytes(s, kProjGate | kProjUp, shape.fused_gate_up, h);
  if (shape.gated_mlp) {
    // act(gate) * up: the activation function keeps its input (gate, I wide); the product keeps
    // both factors, act(gate) and up; down keeps the product as its input. Fused or compiled
    // kernels recompute act(gate) from gate in the backward pass instead of keeping it.
    t += e * d(I) * 2;
    if (!s.compiled) t += e * d(I);
    t += single_input_bytes(s, kProjDown, I);
  } else {
    // GPT: fc1 -> GeLU -> fc2. GeLU keeps its input (8sbh at I = 4h); fc2 keeps GeLU's output
    // (8sbh) as its input (Korthikanti §4.1).
    t += e * d(I);
    t += single_input_bytes(s, kProjDown, I);
  }
  t += adapter_bytes(s, mlp_adapters(s, shape));
  t += dora_bytes(s, shape, kProjGate | kProjUp | kProjDown, I);
  if (shape.dropout) t += kMaskBytes * d(h);           // dropout after the MLP (sbh)
  if (shape.norms >= 4) t += norm_bytes(shape, s, h);  // Gemma: post-feedforward norm
  out.saved.per_token += t;
}

// A mixture-of-experts MLP: a router, and each token processed by k experts.
void moe_mlp_part(const BlockShape& shape, const ActivationSettings& s, BlockActivations& out) {
  const double e = kActivationBytes;
  const std::int64_t h = shape.hidden, I = shape.expert_width, E = shape.experts;
  const double k = d(shape.experts_per_token);
  double t = norm_bytes(shape, s, h);
  // The router reads the norm's output (kept when the router is trained) and keeps its softmax
  // probabilities in FP32 (Qwen3-MoE, Mixtral: softmax(router_logits, dtype=float)).
  if (s.full_finetune) t += e * d(h);
  t += kFp32Bytes * d(E);
  // Each token is copied to its k experts; the copies are the experts' inputs.
  t += k * group_input_bytes(s, kProjGate | kProjUp, shape.fused_gate_up, h);
  // Per routed token as in a dense gated MLP, expert_width wide.
  double per_expert_token = e * d(I) * 2 + (s.compiled ? 0 : e * d(I));
  per_expert_token += single_input_bytes(s, kProjDown, I);
  per_expert_token += adapter_bytes(s, mlp_adapters(s, shape));  // adapters run per routed token
  per_expert_token += dora_bytes(s, shape, kProjGate | kProjUp | kProjDown, I);
  t += k * per_expert_token;
  // The routing weights multiply each expert's output: that product keeps the output (k·h).
  t += k * e * d(h);
  if (shape.norms >= 4) t += norm_bytes(shape, s, h);
  out.saved.per_token += t;
}

}  // namespace

BlockShape dense_block_shape(const ModelArch& a) {
  BlockShape b;
  b.hidden = a.hidden;
  b.q_dim = a.q_dim();
  b.kv_dim = a.kv_dim();
  b.heads = a.heads;
  b.mlp_width = a.intermediate;
  b.gated_mlp = true;  // every supported architecture: SwiGLU or GeGLU
  b.norms = a.norms_per_layer;
  b.norm_upcasts = true;  // RMSNorm in PyTorch ops in transformers and torchtune
  b.qk_norm = a.qk_norm;
  b.dropout = false;  // attention_dropout 0.0 in every supported config
  b.fused_qkv = a.fused_qkv;
  b.fused_gate_up = a.fused_gate_up;
  return b;
}

BlockShape moe_block_shape(const ModelArch& a) {
  BlockShape b = dense_block_shape(a);
  b.experts = a.num_experts;
  b.experts_per_token = a.experts_per_token;
  b.expert_width = a.moe_intermediate;
  b.mlp_width = 0;
  return b;
}

ActivationSettings activation_settings(const Workload& w) {
  return activation_settings(w, trained_set(w));
}

ActivationSettings activation_settings(const Workload& w, const TrainedSet& set) {
  ActivationSettings s;
  s.full_finetune = set.any_trained_base;
  if (set.any_adapter) {
    s.adapted = w.lora.targets;
    s.rank = set.rank;
    s.dora = set.adapter == AdapterKind::kDora;
    // PEFT keeps adapters of a 16-bit model in FP32 (autocast_adapter_dtype=True) when training
    // in mixed precision; pure-BF16 training (torchtune, an optimizer without FP32 master
    // weights) keeps them in BF16.
    s.fp32_adapters = optimizer_row(w.optimizer).master_bytes > 0 && !w.options.pure_bf16;
  }
  s.compiled = w.options.compile;
  s.attention = w.attention;
  return s;
}

BlockActivations block_activations(const BlockShape& shape, const ActivationSettings& s) {
  BlockActivations out;
  const double e = kActivationBytes;
  attention_part(shape, s, out);
  if (shape.experts > 0)
    moe_mlp_part(shape, s, out);
  else
    dense_mlp_part(shape, s, out);
  // Full recomputation keeps the block's input only (Korthikanti §5: 2sbh per layer).
  out.input.per_token = e * d(shape.hidden);
  // While a block's backward runs: the gradient of its input and output (2 x h) and the widest
  // gradients of its activations at once: dQ, dK, dV, dO in attention, or the gradients of the
  // product, gate and up in a gated MLP (fc1/fc2 outputs in a GPT MLP); eager attention also
  // holds the gradients of the probabilities and scores (2 x a x s²).
  const std::int64_t kv = s.attention == Attention::kFlash ? shape.kv_dim : shape.q_dim;
  const double attention = e * d(2 * shape.q_dim + 2 * kv);
  double mlp = 0;
  if (shape.experts > 0)
    mlp = d(shape.experts_per_token) * (3 * e * d(shape.expert_width) + e * d(shape.hidden));
  else
    mlp = (shape.gated_mlp ? 3 : 2) * e * d(shape.mlp_width);
  out.backward_transient.per_token = 2 * e * d(shape.hidden) + std::max(attention, mlp);
  if (s.attention == Attention::kEager)
    out.backward_transient.per_seq_squared = 2 * e * d(shape.heads);
  return out;
}

namespace {

// Bytes of one layer's share of a block tensor as stored (QLoRA: NF4 codes and constants).
double stored_bytes_per_layer(const TensorRole& r) {
  const TensorSpec& t = *r.tensor;
  const double per_layer = static_cast<double>(t.total()) / static_cast<double>(t.layers);
  if (r.quantized()) return per_layer * quantized_bits_per_param(r.quant) / 8.0;
  return per_layer * 2.0;  // BF16
}

bool is_moe_tensor(const TensorSpec& t) {
  return t.experts > 1 || t.kind == TensorKind::kRouter || t.kind == TensorKind::kExpert;
}
bool is_dense_mlp_tensor(const TensorSpec& t) {
  return !is_moe_tensor(t) && (t.projections & (kProjGate | kProjUp | kProjDown)) != 0;
}

}  // namespace

ActivationProfile activation_profile(const Workload& w) {
  const ModelArch& arch = w.model->arch;
  const TrainedSet set = trained_set(w);
  const ActivationSettings s = activation_settings(w, set);
  const OptimizerRow& opt = optimizer_row(w.optimizer);
  ActivationProfile p;
  p.blocks = arch.layers;

  // Saved activations per recompute mode, over the dense and MoE blocks.
  auto add_blocks = [&](const BlockShape& shape, std::int64_t count) {
    if (count <= 0) return;
    const BlockActivations b = block_activations(shape, s);
    TokenBytes saved, rebuilt;
    switch (w.recompute) {
      case Recompute::kNone:
        saved = b.saved;
        break;
      case Recompute::kSelective:
        // Korthikanti §5: the attention core (softmax, dropout, product with V) is recomputed in
        // the backward pass; with FlashAttention or SDPA there is none to drop.
        saved = b.saved + b.attention_core * -1.0;
        rebuilt = b.attention_core;
        break;
      case Recompute::kFull:
        saved = b.input;
        rebuilt = b.saved;
        break;
    }
    p.saved_all += saved * static_cast<double>(count);
    if (saved.per_token > p.saved_one.per_token) p.saved_one = saved;
    if (rebuilt.per_token + rebuilt.per_seq_squared >
        p.recompute.per_token + p.recompute.per_seq_squared)
      p.recompute = rebuilt;
    if (b.backward_transient.per_token > p.backward_transient.per_token)
      p.backward_transient = b.backward_transient;
  };
  add_blocks(dense_block_shape(arch), arch.dense_layers());
  if (arch.is_moe()) add_blocks(moe_block_shape(arch), arch.moe_layers);

  // The output layer: the final norm keeps its input; the output projection keeps its input when
  // its weight is trained (full fine-tune).
  const double e = kActivationBytes, h = d(arch.hidden), V = d(arch.vocab);
  const BlockShape dense = dense_block_shape(arch);
  p.output_saved.per_token = norm_bytes(dense, s, arch.hidden) + (s.full_finetune ? e * h : 0);
  if (w.options.chunked_loss) {
    // Chunked cross-entropy (torchtune CEWithChunkedOutputLoss with its compiled per-chunk
    // loss): the 16-bit logits of all chunks stay saved for the loss's backward; the FP32 upcast
    // is fused into the loss kernel, so the transient is one chunk's 16-bit gradient.
    p.logits.per_token = e * V + e * V / w.options.loss_chunks;
  } else {
    // Unchunked: the 16-bit logits (held by the model's output), the FP32 log-probabilities that
    // cross-entropy keeps, and in its backward their gradient and the gradient of its input, all
    // FP32 and vocabulary-wide: 2V + 3 x 4V bytes per token.
    p.logits.per_token = e * V + 3 * kFp32Bytes * V;
  }
  p.hidden_gradient.per_token = e * h;

  // Buffers and per-layer figures for QLoRA, FSDP and the optimizer step in backward.
  double shared = 0, dense_mlp = 0, moe_mlp = 0;
  double largest_tensor = 0, largest_materialised = 0;
  for (const TensorRole& r : set.roles) {
    const TensorSpec& t = *r.tensor;
    const double per_copy = static_cast<double>(t.total()) / static_cast<double>(t.copies()) /
                            (t.shape_has_experts ? static_cast<double>(t.experts) : 1.0);
    largest_tensor = std::max(largest_tensor, per_copy);
    if (!t.in_blocks) continue;
    // A quantized weight is dequantized to BF16 for each product; DoRA's norm also builds B·A
    // and W + s·B·A in the adapter's dtype (PEFT get_weight_norm), one module at a time.
    double materialised = r.quantized() ? 2.0 * per_copy : 0.0;
    if (r.adapter == AdapterKind::kDora)
      materialised += 2.0 * (s.fp32_adapters ? kFp32Bytes : kActivationBytes) * per_copy;
    largest_materialised = std::max(largest_materialised, materialised);
    const double bytes = stored_bytes_per_layer(r);
    if (is_moe_tensor(t))
      moe_mlp += bytes;
    else if (is_dense_mlp_tensor(t))
      dense_mlp += bytes;
    else
      shared += bytes;
  }
  // bitsandbytes / torchao dequantize one NF4 weight to BF16 for each matrix product, forward
  // and backward (QLoRA §3): the largest such weight is the buffer.
  p.dequant_buffer = Bytes(largest_materialised);
  p.layer_params = Bytes(shared + std::max(dense_mlp, moe_mlp));
  if (s.full_finetune) {
    // 16-bit weights per layer: the stored bytes halved give the parameter count.
    p.layer_gradients = Bytes(opt.gradient_bytes * (shared + std::max(dense_mlp, moe_mlp)) / 2.0);
    p.largest_gradient = Bytes(opt.gradient_bytes * largest_tensor);
    p.head_gradients = Bytes(opt.gradient_bytes * V * h);
  } else {
    // Adapters: the average block's share (exact when every block holds the same targets).
    p.layer_gradients = Bytes(opt.gradient_bytes * static_cast<double>(set.trained_params) /
                              static_cast<double>(std::max<std::int64_t>(arch.layers, 1)));
    p.largest_gradient = p.layer_gradients;
  }
  p.output_params = Bytes(2.0 * V * h);
  return p;
}

OnCardStates on_card_states(const Workload& w, const ActivationProfile& profile,
                            const ModelStates& per_card, const Placement& p) {
  const OptimizerRow& opt = optimizer_row(w.optimizer);
  const TrainingOptions& o = w.options;
  ModelStates s = per_card;
  OnCardStates out;
  const bool fsdp = p.sharding == Sharding::kFsdp && p.count > 1 && !p.mig;
  const double shards = fsdp ? static_cast<double>(p.count) : 1.0;

  // Pure BF16: no FP32 master copy; optimizers whose states follow the parameter dtype (torch
  // AdamW, SGD momentum) keep them in BF16; 8-bit and factored states are unchanged.
  if (o.pure_bf16 && opt.master_bytes > 0) {
    const Bytes before = s.master_weights + s.optimizer_states;
    s.master_weights = Bytes(0);
    if (opt.states_follow_parameter_dtype) s.optimizer_states /= 2.0;
    out.pure_bf16_saving = before - s.optimizer_states;
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
  // Offloaded parameters (FSDP CPUOffloadPolicy): weights and gradients live in host memory; the
  // card holds the all-gathered working set (StepMemory::gathered_params).
  if (o.offload_parameters) {
    out.host += s.frozen_weights + s.trained_weights + s.quantization_constants + s.gradients;
    s.frozen_weights = s.trained_weights = s.quantization_constants = Bytes(0);
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
  } else if (o.offload_optimizer) {
    // ZeRO-Offload: gradients are copied to the host as the backward pass produces them; one
    // block's gradients are on the card at a time.
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
  } else {
    out.gradients_produced = gradients;
    out.gradients_first = std::min(gradients, profile.head_gradients / shards);
  }
  out.resident = s.total();
  return out;
}

std::string_view step_phase_name(StepPhase phase) {
  return phase == StepPhase::kLoss ? "loss (end of the forward pass)" : "backward pass of a block";
}

std::string_view StepMemory::largest_term() const {
  const std::pair<Bytes, std::string_view> terms[] = {
      {saved_activations, "saved activations of the decoder blocks"},
      {logits_and_loss, "logits and loss of the output layer"},
      {recompute, "recomputed activations of one block"},
      {backward_transient, "gradients of one block's activations"},
      {gradients, "model gradients produced in the backward pass"},
      {dequant_buffer, "dequantized weight buffer"},
      {gathered_params, "all-gathered parameters (FSDP)"},
  };
  const auto* best =
      std::max_element(std::begin(terms), std::end(terms),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
  return best->second;
}

StepMemory step_memory(const ActivationProfile& prof, const OnCardStates& states, const Workload& w,
                       const Placement& p) {
  const std::int64_t s = w.seq, b = w.micro_batch;
  const bool gathered =
      (p.sharding == Sharding::kFsdp && p.count > 1 && !p.mig) || w.options.offload_parameters;
  // Saved activations on the card: all blocks', or, offloaded, one block's worth in flight
  // (torchtune OffloadActivations moves them to host memory as they are produced).
  const Bytes saved_one = prof.saved_one.at(s, b);
  const Bytes saved = w.options.offload_activations ? saved_one : prof.saved_all.at(s, b);

  // Loss phase: every block's saved activations, the output layer's inputs, the logits and the
  // loss, and the gradient of the final hidden state; under FSDP the output layer's weight is
  // all-gathered.
  StepMemory loss;
  loss.phase = StepPhase::kLoss;
  loss.saved_activations = saved;
  loss.logits_and_loss =
      prof.output_saved.at(s, b) + prof.logits.at(s, b) + prof.hidden_gradient.at(s, b);
  if (gathered) loss.gathered_params = prof.output_params;

  // Block phase: one block's backward (recomputed activations and the gradients of its
  // activations), the dequantized weight, the FSDP working set (this block and the prefetched
  // next one, FSDP2's default, plus this block's unsharded gradients), while the model's
  // gradients are produced. Saved activations shrink and gradients grow block by block, so the
  // phase peaks at one end: its start (every block's activations, the output layer's gradients)
  // or its end (all gradients, the first block's activations).
  StepMemory block;
  block.phase = StepPhase::kBlockBackward;
  block.recompute = prof.recompute.at(s, b);
  block.backward_transient = prof.backward_transient.at(s, b);
  block.dequant_buffer = prof.dequant_buffer;  // zero unless a weight is materialised
  if (gathered) block.gathered_params = prof.layer_params * 2.0 + prof.layer_gradients;
  const Bytes start = saved + states.gradients_first;
  const Bytes end = saved_one + states.gradients_produced;
  if (start >= end) {
    block.saved_activations = saved;
    block.gradients = states.gradients_first;
  } else {
    block.saved_activations = saved_one;
    block.gradients = states.gradients_produced;
  }

  if (loss.total() >= block.total()) {
    loss.other_phase = block.total();
    return loss;
  }
  block.other_phase = loss.total();
  return block;
}

RuntimeMemory runtime_memory(const Workload& w, const ModelStates& per_card, const Placement& p,
                             Trace* trace) {
  return runtime_memory(w, activation_profile(w), per_card, p, trace);
}

RuntimeMemory runtime_memory(const Workload& w, const ActivationProfile& profile,
                             const ModelStates& per_card, const Placement& p, Trace* trace) {
  RuntimeMemory r;
  r.states = on_card_states(w, profile, per_card, p);
  r.step = step_memory(profile, r.states, w, p);
  r.activations = r.step.total();
  if (w.overheads) {
    r.overheads = overheads_for(*w.overheads, p, r.step.transient());
    r.overhead = r.overheads.total(w.peak);
  }
  if (trace) {
    const StepMemory& m = r.step;
    trace->add({"memory.activations",
                "step memory at its peak (activations, logits, gradients, buffers)",
                to_GB(r.activations),
                "GB",
                "the larger of the loss phase (all saved activations + logits and loss) and a "
                "block's backward (recomputed activations + activation gradients + model "
                "gradients produced), plus dequantization and FSDP buffers",
                {{"peak phase", std::string(step_phase_name(m.phase))},
                 {"saved activations", format_GB(m.saved_activations, 3)},
                 {"logits and loss", format_GB(m.logits_and_loss, 3)},
                 {"recomputed block", format_GB(m.recompute, 3)},
                 {"activation gradients", format_GB(m.backward_transient, 3)},
                 {"model gradients", format_GB(m.gradients, 3)},
                 {"dequantization buffer", format_GB(m.dequant_buffer, 3)},
                 {"gathered parameters", format_GB(m.gathered_params, 3)},
                 {"other phase", format_GB(m.other_phase, 3)},
                 {"tokens per micro-batch", group_digits(w.tokens_per_micro_batch())},
                 {"recompute", std::string(recompute_name(w.recompute))},
                 {"attention", std::string(attention_name(w.attention))}},
                "Korthikanti et al. 2022 §4-5 per tensor shape; FlashAttention (Dao et al. "
                "2022); PyTorch autograd saved tensors"});
    trace->add({"memory.states_on_card",
                "model states on the card during the step",
                to_GB(r.states.resident),
                "GB",
                "model states per card − offloaded − paged optimizer states − gradients "
                "produced in the backward pass (counted in the step memory)",
                {{"offloaded to host", format_GB(r.states.host, 3)},
                 {"paged (host-evictable)", format_GB(r.states.paged, 3)},
                 {"gradients persist", r.states.gradients_persistent ? "yes" : "no"}},
                "ZeRO-Offload / FSDP CPU offload; QLoRA §3 paged optimizers; PyTorch zero_grad",
                {"memory.states_per_card"}});
    if (w.overheads)
      trace->add({"memory.overhead",
                  "runtime overhead per card",
                  to_GB(r.overhead),
                  "GB",
                  "CUDA context + cuBLAS and cuBLASLt workspaces + NCCL buffers (several cards) "
                  "+ allocator reserve (peak reserved: a fraction of the step memory)",
                  {{"CUDA context", format_GB(r.overheads.cuda_context, 3)},
                   {"cuBLAS + cuBLASLt workspaces", format_GB(r.overheads.inside_allocator(), 3)},
                   {"NCCL buffers", format_GB(r.overheads.nccl_buffers, 3)},
                   {"allocator reserve", format_GB(r.overheads.allocator_reserve, 3)},
                   {"peak kind", std::string(peak_kind_name(w.peak))}},
                  w.overheads->file,
                  {"memory.activations"}});
  }
  return r;
}

}  // namespace ftplan
