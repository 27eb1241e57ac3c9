#include "memory/activations.hpp"

#include <algorithm>
#include <bit>

#include "memory/model_states.hpp"
#include "workload/roles.hpp"

namespace ftplan {

namespace {

// Activations are kept in the 16-bit compute format (BF16/FP16); FP8 recipes also keep 16-bit
// copies for the non-matmul operations, which this count assumes throughout.
constexpr double kActivationBytes = 2;
constexpr double kFp32Bytes = 4;
constexpr double kMaskBytes = 1;  // a dropout mask: one byte per element (Korthikanti et al. §4.1)
// What an adapter's product keeps per element. PEFT casts the input to the adapters' FP32, but
// training in mixed precision runs them under autocast, which casts that copy back to 16 bits for
// the product, and autograd keeps the 16-bit operand: each adapted module holds its own 16-bit copy
// (and x·A, the adapter output, in 16 bits too). Measured on an H200 (torch 2.11, PEFT 0.21,
// bench/results/h200-sxm-20261204): LoRA on all seven projections without checkpointing allocates
// what 16-bit copies predict; FP32 copies overstated the peak by a quarter.
constexpr double kAdapterTensorBytes = kActivationBytes;

double d(std::int64_t v) {
  return static_cast<double>(v);
}

// Bytes per token a norm over `width` values keeps. Fused kernels (Megatron's LayerNorm, Liger,
// torch.compile) and PyTorch's native LayerNorm keep only their 16-bit input (the per-token mean
// and 1/rms, 4-8 B per token, are left out as in Korthikanti et al.). The RMSNorm of Hugging Face
// and torchtune is written in PyTorch ops and upcasts: in eager mode it keeps the FP32 copy of its
// input (for pow and mul) and, when its weight is trained, the normalised 16-bit tensor that the
// weight's gradient needs (transformers LlamaRMSNorm; PyTorch autograd saved tensors).
// nn.LayerNorm is one native kernel that keeps its input: under autocast that input is the FP32
// copy autocast makes (layer_norm is on its FP32 list), in pure 16-bit training the 16-bit tensor
// itself; its fused backward computes the weight's gradient from that input, so no normalised copy
// is kept in a full fine-tune.
// With an FP32 stream (ActivationSettings::fp32_stream) a norm's input is already FP32: the kept
// input is that tensor, 4 B per element, whichever kernel runs it.
double norm_bytes(const BlockShape& shape, const ActivationSettings& s, std::int64_t width) {
  if (s.compiled || !shape.norm_upcasts) return s.stream_bytes() * d(width);
  if (shape.layer_norm)
    return (s.autocast || s.fp32_stream ? kFp32Bytes : kActivationBytes) * d(width);
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
// weight gradient), once in 16-bit, or one copy per adapted module when the adapters are kept in
// FP32 (PEFT casts the input to the adapter's dtype; kAdapterTensorBytes).
// With LoRA dropout (PEFT lora_dropout > 0) each adapted module drops its own copy of the input:
// nn.Dropout keeps its mask (one byte per element) and lora_A keeps the dropped copy instead of
// the shared or cast input.
double dropout_input_bytes(int modules, std::int64_t width) {
  return (kAdapterTensorBytes + kMaskBytes) * d(width) * modules;
}

// What the adapters of a group keep of its input (above), 0 without adapters.
double adapter_input_bytes(const ActivationSettings& s, ProjectionSet group, bool fused,
                           std::int64_t width) {
  const int modules = adapted_modules(s.adapted, group, fused);
  if (modules == 0) return 0;
  if (s.fused_lora) return kActivationBytes * d(width);
  if (s.lora_dropout > 0) return dropout_input_bytes(modules, width);
  return s.fp32_adapters ? kAdapterTensorBytes * d(width) * modules : kActivationBytes * d(width);
}

// A quantized base that keeps its layers' inputs (ActivationSettings::quant_keeps_input): the
// 16-bit input each layer multiplies, beside what the adapters keep. Without an FP32 stream the
// layers of a group multiply the same tensor, which an adapter reading the shared input (no
// dropout, 16-bit adapters) keeps already; in an FP32 stream each layer casts its own copy.
double group_input_bytes(const ActivationSettings& s, ProjectionSet group, bool fused,
                         std::int64_t width) {
  if (s.full_finetune) return kActivationBytes * d(width);
  const double adapters = adapter_input_bytes(s, group, fused, width);
  if (!s.quant_keeps_input) return adapters;
  if (!s.fp32_stream) {
    const bool shared = adapters > 0 && !s.fused_lora && s.lora_dropout == 0 && !s.fp32_adapters;
    return adapters + (shared ? 0.0 : kActivationBytes * d(width));
  }
  const int layers = fused ? 1 : std::popcount(static_cast<unsigned>(group));
  return adapters + kActivationBytes * d(width) * layers;
}

// The input of a single projection (o, down) when it needs one.
double single_input_bytes(const ActivationSettings& s, ProjectionSet proj, std::int64_t width) {
  return group_input_bytes(s, proj, false, width);
}

// LoRA intermediates: each adapted module keeps x·A (r values) as lora_B's input (Hu et al. 2021).
double adapter_bytes(const ActivationSettings& s, int modules) {
  if (s.full_finetune || s.fused_lora) return 0;
  return kAdapterTensorBytes * s.rank * modules;
}

// DoRA: each adapted module keeps its base output and its adapter output (16-bit under autocast),
// both `out` wide, for the magnitude's gradient (Liu et al. 2024; PEFT DoraLinearLayer).
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
  return (kActivationBytes + kAdapterTensorBytes) * d(out);
}

int mlp_adapters(const ActivationSettings& s, const BlockShape& shape) {
  return adapted_modules(s.adapted, kProjGate | kProjUp, shape.fused_gate_up) +
         adapted_modules(s.adapted, kProjDown, false);
}

// LoRA modules on the attention projections: a fused module counts once; MLA has two modules
// on the query path when it has a q latent (q_a_proj, q_b_proj) and two on the key/value path
// (kv_a_proj_with_mqa, kv_b_proj), each producing keys and values together.
int attention_adapters(const ActivationSettings& s, const BlockShape& shape) {
  if (shape.kv_latent == 0)
    return adapted_modules(s.adapted, kProjQ | kProjK | kProjV, shape.fused_qkv);
  int modules = 0;
  if (s.adapted & kProjQ) modules += shape.q_latent > 0 ? 2 : 1;
  if (s.adapted & (kProjK | kProjV)) modules += 2;
  return modules;
}

// The attention sublayer's saved tensors (Korthikanti et al. §4.1, with the kernels' own rules).
void attention_part(const BlockShape& shape, const ActivationSettings& s, BlockActivations& out) {
  const double e = kActivationBytes;
  const std::int64_t h = shape.hidden, q = shape.q_dim, a = shape.heads;
  const std::int64_t o = shape.output_width();
  // K and V as the attention kernel keeps them: FlashAttention handles grouped-query attention
  // natively (kv_dim wide); PyTorch SDPA and eager attention receive K and V repeated to every
  // query head (transformers repeat_kv, torchtune's expand), q_dim wide.
  const bool repeated = s.attention != Attention::kFlash;
  const std::int64_t k = repeated ? q : shape.kv_dim;
  const std::int64_t v = repeated ? shape.value_width() * (q / shape.kv_dim) : shape.value_width();
  double t = norm_bytes(shape, s, h);  // input norm
  // q, k, v read the norm's output (Korthikanti: "their shared input, 2sbh").
  t += group_input_bytes(s, kProjQ | kProjK | kProjV, shape.fused_qkv, h);
  if (shape.qk_norm) t += norm_bytes(shape, s, q) + norm_bytes(shape, s, shape.kv_dim);
  if (shape.kv_latent > 0) {
    // MLA (DeepSeek-V2 §2.1): q_b_proj and kv_b_proj read the normed latents; each norm keeps
    // its input and each up-projection its own input when it needs one.
    if (shape.q_latent > 0)
      t += norm_bytes(shape, s, shape.q_latent) + single_input_bytes(s, kProjQ, shape.q_latent);
    t += norm_bytes(shape, s, shape.kv_latent) +
         single_input_bytes(s, kProjK | kProjV, shape.kv_latent);
  }
  // Q and K for QK^T and V for the product with the probabilities: Korthikanti's 4sbh + 2sbh,
  // here with the widths the kernel keeps. RoPE multiplies by constant tables: nothing more.
  t += e * d(q + k + v);
  if (s.attention == Attention::kEager) {
    // softmax(QK^T) keeps its output, a x s x s per sequence (2as²b); with dropout, the mask
    // (as²b) and the dropped probabilities (2as²b): Korthikanti's 5as²b. The product with V
    // then keeps the probabilities, already counted.
    const bool dropped = shape.dropout || shape.attention_dropout;
    const double core = e * d(a) + (dropped ? (kMaskBytes + e) * d(a) : 0);
    out.saved.per_seq_squared += core;
    out.attention_core.per_seq_squared += core;
    // The output projection keeps its input, the attention output (Korthikanti's 2sbh).
    t += single_input_bytes(s, kProjO, o);
  } else {
    // FlashAttention and SDPA's kernels keep their output O and one FP32 logsumexp per row and
    // head (Dao et al. 2022 §3.1): no s x s matrix. With FlashAttention's [b, s, heads, d]
    // layout O is the output projection's input itself; SDPA's [b, heads, s, d] output is
    // transposed into a new tensor that the projection keeps when it needs its input.
    t += e * d(o) + kFp32Bytes * d(a);
    if (s.attention == Attention::kSdpa)
      t += single_input_bytes(s, kProjO, o);
    else if (!s.full_finetune && s.lora_dropout > 0 && (s.adapted & kProjO))
      t += dropout_input_bytes(1, o);  // the dropped copy an adapted o_proj keeps
    else if (!s.full_finetune && s.fp32_adapters && (s.adapted & kProjO))
      t += kAdapterTensorBytes * d(o);  // the copy an adapted o_proj casts its input to
  }
  t += adapter_bytes(s, attention_adapters(s, shape) + adapted_modules(s.adapted, kProjO, false));
  t += dora_bytes(s, shape, kProjQ | kProjK | kProjV | kProjO, 0);
  // Dropout after the attention block (sbh): the mask.
  if (shape.dropout || shape.residual_dropout) t += kMaskBytes * d(h);
  if (shape.norms >= 4) t += norm_bytes(shape, s, h);  // Gemma: norm on the attention output
  out.saved.per_token += t;
}

// The dense MLP's saved tensors.
void dense_mlp_part(const BlockShape& shape, const ActivationSettings& s, BlockActivations& out) {
  const std::int64_t h = shape.hidden, I = shape.mlp_width;
  double t = 0;
  if (shape.parallel_block) {
    // Phi (modeling_phi.py PhiDecoderLayer.forward): the MLP reads the input norm's output, the
    // tensor q, k and v read. That norm is counted with the attention, and autograd keeps one
    // tensor however many products save it: the MLP adds only what the union of the attention's
    // and the MLP's first projection keeps beyond what q, k and v keep alone (nothing in a full
    // fine-tune; one copy when only fc1 carries a 16-bit adapter; one per adapted module when
    // each module casts or drops its own copy).
    const ProjectionSet qkv = kProjQ | kProjK | kProjV;
    t += group_input_bytes(s, qkv | kProjUp, false, h) -
         group_input_bytes(s, qkv, shape.fused_qkv, h);
  } else {
    t += norm_bytes(shape, s, h);  // post-attention (Gemma: pre-feedforward) norm
    t += group_input_bytes(s, kProjGate | kProjUp, shape.fused_gate_up, h);
  }
  // The MLP's intermediates are FP32 under an FP32 stream: a quantized projection returns its
  // output in its input's dtype (bitsandbytes Linear4bit, Linear8bitLt).
  const double m = s.stream_bytes();
  if (shape.gated_mlp) {
    // act(gate) * up: the activation function keeps its input (gate, I wide); the product keeps
    // both factors, act(gate) and up; down keeps the product as its input. Fused or compiled
    // kernels recompute act(gate) from gate in the backward pass instead of keeping it.
    t += m * d(I) * 2;
    if (!s.compiled) t += m * d(I);
    if (!s.fused_lora) t += single_input_bytes(s, kProjDown, I);
  } else {
    // GPT: fc1 -> GeLU -> fc2. GeLU keeps its input (8sbh at I = 4h); fc2 keeps GeLU's output
    // (8sbh) as its input (Korthikanti §4.1).
    t += m * d(I);
    t += single_input_bytes(s, kProjDown, I);
  }
  t += adapter_bytes(s, mlp_adapters(s, shape));
  t += dora_bytes(s, shape, kProjGate | kProjUp | kProjDown, I);
  if (shape.dropout || shape.residual_dropout) t += kMaskBytes * d(h);  // after the MLP (sbh)
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
  const double m = s.stream_bytes();
  double per_expert_token = m * d(I) * 2 + (s.compiled ? 0 : m * d(I));
  per_expert_token += single_input_bytes(s, kProjDown, I);
  per_expert_token += adapter_bytes(s, mlp_adapters(s, shape));  // adapters run per routed token
  per_expert_token += dora_bytes(s, shape, kProjGate | kProjUp | kProjDown, I);
  t += k * per_expert_token;
  // The routing weights multiply each expert's output: that product keeps the output (k·h).
  t += k * m * d(h);
  if (shape.shared_expert_width > 0) {
    // Shared experts (DeepSeek-V2 §2.2): a gated MLP every token passes, reading the norm's
    // output, with the saved tensors of a dense MLP of that width.
    const std::int64_t S = shape.shared_expert_width;
    t += group_input_bytes(s, kProjGate | kProjUp, shape.fused_gate_up, h);
    t += m * d(S) * 2 + (s.compiled ? 0 : m * d(S));
    t += single_input_bytes(s, kProjDown, S);
    t += adapter_bytes(s, mlp_adapters(s, shape));
    t += dora_bytes(s, shape, kProjGate | kProjUp | kProjDown, S);
    if (shape.shared_expert_gated) {
      // Qwen2-MoE (transformers modeling_qwen2_moe.py, Qwen2MoeSparseMoeBlock.forward):
      // sigmoid(shared_expert_gate(x)) * shared_expert(x). The gate reads the norm's output,
      // already kept above; the sigmoid keeps its one-wide output, and the product keeps both
      // factors: that output and the shared expert's output (h wide), which the dense layout
      // only adds to the residual stream and need not keep.
      t += m * d(h) + m * 1.0;
    }
  }
  if (shape.norms >= 4) t += norm_bytes(shape, s, h);
  out.saved.per_token += t;
}

// What the per-op selective policy keeps of a block (torchtitan's selective_ac_option "op"): the
// block's input, the attention kernel's outputs (O and the FP32 logsumexp; eager attention's
// products are not on its list and are rebuilt) and the output of every other matrix product in
// forward order: the base projections, and each adapter's lora_A and lora_B products after its
// base (PEFT's forward). Routed experts run grouped products, which the policy rebuilds; the
// router and the shared experts are plain products.
//
// Eager PyTorch caches the output of every product the policy marks must-save until the block's
// backward pass. Compiled blocks (torch.compile's min-cut partitioner) only ban those products
// from being recomputed: an output the backward pass never reads is not kept at all. Such are
// the products whose output is only added to the residual stream: the attention output
// projection and the dense MLP's down projection (with an adapter, the base product and lora_B's;
// lora_A's output is read by lora_B's weight gradient), unless a post-norm reads them (Gemma's
// four norms per block). Shared experts are left kept: some models gate their output.
TokenBytes per_op_part(const BlockShape& shape, const ActivationSettings& s) {
  const double e = kActivationBytes;
  double t = s.stream_bytes() * d(shape.hidden);  // the checkpoint's input
  int index = 0;
  auto product = [&](std::int64_t width, bool read_by_backward) {
    if (per_op_keeps_product(index++) && read_by_backward) t += e * d(width);
  };
  const bool drops_residual_outputs = s.compiled && shape.norms < 4;
  // A projection (or a fused module) `width` wide, with its adapter when one reads it; `residual`:
  // its output is only added to the residual stream.
  auto projection = [&](ProjectionSet proj, std::int64_t width, bool residual = false) {
    const bool read = !(residual && drops_residual_outputs);
    product(width, read);
    if (!s.full_finetune && (s.adapted & proj) != 0) {
      product(s.rank, true);
      product(width, read);
    }
  };
  const std::int64_t v = shape.value_width();
  if (shape.kv_latent > 0) {
    if (shape.q_latent > 0) projection(kProjQ, shape.q_latent);
    projection(kProjQ, shape.q_dim);
    projection(kProjK | kProjV, shape.kv_latent + shape.kv_rope);  // kv_a: latent and rotary key
    // kv_b expands the latent to each head's key without its rotary part, and its value.
    projection(kProjK | kProjV, shape.kv_dim - shape.heads * shape.kv_rope + v);
  } else if (shape.fused_qkv) {
    projection(kProjQ | kProjK | kProjV, shape.q_dim + shape.kv_dim + v);
  } else {
    projection(kProjQ, shape.q_dim);
    projection(kProjK, shape.kv_dim);
    projection(kProjV, v);
  }
  if (s.attention != Attention::kEager)
    t += e * d(shape.output_width()) + kFp32Bytes * d(shape.heads);
  projection(kProjO, shape.hidden, true);
  auto gated = [&](std::int64_t width, bool residual) {
    if (shape.fused_gate_up) {
      projection(kProjGate | kProjUp, 2 * width);
    } else {
      projection(kProjGate, width);
      projection(kProjUp, width);
    }
    projection(kProjDown, shape.hidden, residual);
  };
  if (shape.experts > 0) {
    product(shape.experts, true);  // the router
    if (shape.shared_expert_width > 0) gated(shape.shared_expert_width, false);
    if (shape.shared_expert_gated) product(1, true);  // Qwen2-MoE's shared_expert_gate [1, H]
  } else if (shape.gated_mlp) {
    gated(shape.mlp_width, true);
  } else {
    projection(kProjGate | kProjUp, shape.mlp_width);
    projection(kProjDown, shape.hidden, true);
  }
  return TokenBytes{t, 0};
}

}  // namespace

BlockShape dense_block_shape(const ModelArch& a) {
  BlockShape b;
  b.hidden = a.hidden;
  b.q_dim = a.q_dim();
  b.kv_dim = a.kv_dim();
  b.v_dim = a.v_dim();
  b.attention_out_dim = a.attention_out_dim();
  if (a.mla) {
    b.q_latent = a.q_lora_rank;
    b.kv_latent = a.kv_lora_rank;
    b.kv_rope = a.qk_rope_head_dim;
  }
  b.heads = a.heads;
  b.mlp_width = a.intermediate;
  b.gated_mlp = a.gated_mlp();  // SwiGLU or GeGLU; Phi, StarCoder2: fc1 -> GELU -> fc2
  b.norms = a.norms_per_layer;
  b.parallel_block = a.parallel_block;
  // RMSNorm in PyTorch ops in transformers and torchtune; nn.LayerNorm where the norms carry a
  // bias (Phi, StarCoder2, Phi-3.5-MoE: norm_bytes).
  b.norm_upcasts = true;
  b.layer_norm = a.norm_bias;
  b.qk_norm = a.qk_norm;
  // Dropout where config.json sets a probability above 0: on the attention probabilities
  // (StarCoder2-3B attention_dropout 0.1; FlashAttention and SDPA drop inside the kernel and keep
  // only a seed) and after each sublayer (Phi-2 resid_pdrop 0.1, StarCoder2-3B residual_dropout
  // 0.1: modeling_phi.py resid_dropout, modeling_starcoder2.py residual_dropout).
  b.dropout = false;
  b.attention_dropout = a.attention_dropout;
  b.residual_dropout = a.residual_dropout;
  b.fused_qkv = a.fused_qkv;
  b.fused_gate_up = a.fused_gate_up;
  return b;
}

BlockShape moe_block_shape(const ModelArch& a) {
  BlockShape b = dense_block_shape(a);
  b.experts = a.num_experts;
  b.experts_per_token = a.experts_per_token;
  b.expert_width = a.moe_intermediate;
  b.shared_expert_width = a.shared_expert_intermediate;
  b.shared_expert_gated = a.shared_expert_gate;
  b.mlp_width = 0;
  return b;
}

ActivationSettings activation_settings(const Workload& w) {
  return activation_settings(w, trained_set(w));
}

ActivationSettings activation_settings(const Workload& w, const TrainedSet& set) {
  ActivationSettings s;
  s.full_finetune = set.any_trained_base;
  s.autocast = optimizer_row(w.optimizer).master_bytes > 0 && !w.options.pure_bf16;
  if (set.any_adapter) {
    s.adapted = w.lora.targets;
    s.rank = set.rank;
    s.dora = set.adapter == AdapterKind::kDora;
    // Adapters are FP32 under mixed precision (FP32 parameters, or PEFT's autocast_adapter_dtype
    // on a 16-bit model); pure-BF16 training keeps them in BF16 (torchtune, LitGPT, PEFT before
    // 0.12) unless the stack's PEFT casts them to FP32 anyway (StackProfile::fp32_adapters).
    s.fp32_adapters = s.autocast || (w.stack && w.stack->fp32_adapters);
    s.lora_dropout = w.lora.dropout;
  }
  s.compiled = w.options.compile;
  s.attention = w.attention;
  // A quantized base the stack prepares with FP32 norms (data/stacks `memory.quantized_base`).
  s.fp32_stream = set.fp32_unquantized;
  s.experts_one_at_a_time = experts_impl(w) == ExpertsImpl::kLoop;
  s.quant_keeps_input = w.options.quant_keeps_input && set.any_quantized && !s.full_finetune;
  // Fused LoRA kernels (data/stacks `memory.lora`) run where the adapters are plain LoRA without
  // dropout (Unsloth patches only those); they keep the adapters in the model's 16-bit dtype.
  if (set.any_adapter && !s.dora && s.lora_dropout == 0 && w.stack && w.stack->fused_lora) {
    s.fused_lora = true;
    s.fp32_adapters = false;
  }
  return s;
}

BlockActivations block_activations(const BlockShape& shape, const ActivationSettings& settings) {
  BlockActivations out;
  // A non-gated MLP has no gate projection: a target list naming it (`all`, `mlp`) adapts only
  // the projections that exist.
  ActivationSettings s = settings;
  if (!shape.gated_mlp && shape.experts == 0) s.adapted &= ~kProjGate;
  const double e = kActivationBytes;
  attention_part(shape, s, out);
  if (shape.experts > 0)
    moe_mlp_part(shape, s, out);
  else
    dense_mlp_part(shape, s, out);
  // Full recomputation keeps the block's input only (Korthikanti §5: 2sbh per layer), FP32 under
  // an FP32 stream (the first block's 16-bit input is counted as FP32 with the rest).
  out.input.per_token = s.stream_bytes() * d(shape.hidden);
  out.per_op = per_op_part(shape, s);
  // While a block's backward runs: the gradient of its input and output (2 x h) and the widest
  // gradients of its activations at once: dQ, dK, dV, dO in attention, or the gradients of the
  // product, gate and up in a gated MLP (fc1/fc2 outputs in a GPT MLP); eager attention also
  // holds the gradients of the probabilities and scores (2 x a x s²).
  const bool repeated = s.attention != Attention::kFlash;
  const std::int64_t k = repeated ? shape.q_dim : shape.kv_dim;
  const std::int64_t v =
      repeated ? shape.value_width() * (shape.q_dim / shape.kv_dim) : shape.value_width();
  double attention = e * d(shape.q_dim + k + v + shape.output_width());
  if (s.attention != Attention::kEager) {
    // The FlashAttention backward kernel (FlashAttention-2's mha_bwd, and PyTorch's port behind
    // SDPA) accumulates dQ in an FP32 buffer, q_dim wide; with grouped-query heads it writes dK
    // and dV for every query head and sums them over each group afterwards (dk_expanded,
    // dv_expanded), so they are q_dim wide while it runs.
    attention += kFp32Bytes * d(shape.q_dim);
    if (!repeated && shape.kv_dim < shape.q_dim)
      attention += e * d(shape.q_dim - shape.kv_dim +
                         shape.value_width() * (shape.q_dim / shape.kv_dim) - shape.value_width());
  }
  double mlp = 0;
  // The gradients of FP32 tensors (an FP32 stream's residual and MLP intermediates) are FP32.
  const double m = s.stream_bytes();
  if (shape.experts > 0) {
    // Routed copies whose gradients are held at once: all k per token in grouped products, one
    // expert's share (k / E per token under balanced routing) when the experts run one by one.
    const double copies = s.experts_one_at_a_time ? d(shape.experts_per_token) / d(shape.experts)
                                                  : d(shape.experts_per_token);
    mlp = copies * (3 * m * d(shape.expert_width) + m * d(shape.hidden)) +
          3 * m * d(shape.shared_expert_width);
  } else if (s.fused_lora && shape.gated_mlp)
    mlp = m * d(shape.mlp_width);  // down's input gradient; gate's and up's written in place
  else
    mlp = (shape.gated_mlp ? 3 : 2) * m * d(shape.mlp_width);
  out.backward_transient.per_token = 2 * m * d(shape.hidden) + std::max(attention, mlp);
  if (s.attention == Attention::kEager)
    out.backward_transient.per_seq_squared = 2 * e * d(shape.heads);
  return out;
}

namespace {

// Bytes of one layer's share of a block tensor as stored (QLoRA: codes and constants of its
// format).
double stored_bytes_per_layer(const TensorRole& r) {
  const TensorSpec& t = *r.tensor;
  const double per_layer = static_cast<double>(t.total()) / static_cast<double>(t.layers);
  if (r.quantized()) {
    const QuantizedBytes q = quantized_tensor_bytes(t, r.quant);
    return (q.codes + q.constants).value * static_cast<double>(t.copies()) /
           static_cast<double>(t.layers);
  }
  return per_layer * 2.0;  // BF16
}

bool is_moe_tensor(const TensorSpec& t) {
  return t.experts > 1 || t.kind == TensorKind::kRouter || t.kind == TensorKind::kExpert;
}
bool is_dense_mlp_tensor(const TensorSpec& t) {
  return !is_moe_tensor(t) && (t.projections & (kProjGate | kProjUp | kProjDown)) != 0;
}

// The 16-bit inputs a block's quantized layers hold themselves (quant_keeps_input): each
// distinct input once, or once per layer under an FP32 stream, whatever the adapters keep beside
// them. It is what quant_keeps_input adds to a block without adapters, plus, under
// FlashAttention, the attention output the output projection reads (which the kernel keeps too,
// so it adds nothing to the saved set).
TokenBytes quantized_inputs(const BlockShape& shape, const ActivationSettings& settings) {
  ActivationSettings bare = settings;
  bare.adapted = 0;
  bare.dora = false;
  bare.lora_dropout = 0;
  bare.fused_lora = false;
  bare.quant_keeps_input = true;
  TokenBytes held = block_activations(shape, bare).saved;
  bare.quant_keeps_input = false;
  held += block_activations(shape, bare).saved * -1.0;
  if (settings.attention == Attention::kFlash)
    held.per_token += kActivationBytes * d(shape.output_width());
  return held;
}

}  // namespace

ActivationProfile activation_profile(const Workload& w) {
  const ModelArch& arch = w.model->arch;
  const TrainedSet set = trained_set(w);
  const ActivationSettings s = activation_settings(w, set);
  const OptimizerRow& opt = optimizer_row(w.optimizer);
  ActivationProfile p;
  if (w.options.pure_bf16) {
    double master[2] = {0, 0}, states[2] = {0, 0};  // {mixed precision, as held}
    for (const TrainedMatrix& m : set.trained) {
      const OptimizerCost mixed = optimizer_cost(w.optimizer, m);
      const OptimizerCost held = optimizer_cost(w.optimizer, m, s.precision_of(m, true));
      // An FP32 parameter has no master copy but is itself 2 B wider, as is its gradient: the
      // mixed-precision count's weight and gradient rows stay, the difference lands here.
      master[0] += mixed.master_bytes;
      master[1] += held.master_bytes + (held.weight_bytes - mixed.weight_bytes) +
                   (held.gradient_bytes - mixed.gradient_bytes);
      states[0] += mixed.state_bytes;
      states[1] += held.state_bytes;
    }
    if (master[0] > 0) p.master_scale = master[1] / master[0];
    if (states[0] > 0) p.states_scale = states[1] / states[0];
  }
  p.blocks = arch.layers;

  // Saved activations per recompute mode, over the dense and MoE blocks. Under layer-wise
  // checkpointing the kinds share the rebuilt blocks so that they add up to exactly the count
  // rebuilt over the whole model: the dense blocks take their rounded share, the MoE blocks the
  // rest.
  const std::int64_t rebuilt_in_model = w.recomputed_blocks(arch.layers);
  // A block run without recomputation leaves its quantized layers' inputs on its graph; a
  // recomputed block's forward pass runs without a graph and its rebuilt graph is gone by the
  // next micro-batch.
  const bool held_graph = s.quant_keeps_input && w.stack && w.stack->previous_graph_held;
  std::int64_t rebuilt_so_far = 0;
  auto add_blocks = [&](const BlockShape& shape, std::int64_t count, bool last_kind) {
    if (count <= 0) return;
    const BlockActivations b = block_activations(shape, s);
    TokenBytes saved, rebuilt;
    std::int64_t rebuilt_blocks = count;  // the blocks `saved` applies to; the rest keep b.saved
    switch (w.recompute) {
      case Recompute::kNone:
        saved = b.saved;
        break;
      case Recompute::kSelective:
        if (w.stack && w.stack->selective == SelectivePolicy::kPerOp) {
          // The kept products stay; the rest of the block is rebuilt in its backward pass.
          saved = b.per_op;
          rebuilt = b.saved;
          break;
        }
        // Korthikanti §5: the attention core (softmax, dropout, product with V) is recomputed in
        // the backward pass; with FlashAttention or SDPA there is none to drop.
        saved = b.saved + b.attention_core * -1.0;
        rebuilt = b.attention_core;
        break;
      case Recompute::kFull:
        // Layer-wise checkpointing rebuilds only some blocks; the others keep everything.
        saved = b.input;
        rebuilt = b.saved;
        rebuilt_blocks = last_kind
                             ? std::clamp<std::int64_t>(rebuilt_in_model - rebuilt_so_far, 0, count)
                             : w.recomputed_blocks(count);
        rebuilt_so_far += rebuilt_blocks;
        break;
    }
    const std::int64_t kept_blocks = count - rebuilt_blocks;
    // Blocks with a graph from their forward pass: all but those full recomputation rebuilds.
    const std::int64_t graph_blocks = w.recompute == Recompute::kFull ? kept_blocks : count;
    if (held_graph && graph_blocks > 0)
      p.previous_graph_inputs += quantized_inputs(shape, s) * static_cast<double>(graph_blocks);
    p.saved_all +=
        saved * static_cast<double>(rebuilt_blocks) + b.saved * static_cast<double>(kept_blocks);
    if (rebuilt_blocks > 0 && saved.per_token > p.saved_one.per_token) p.saved_one = saved;
    if (kept_blocks > 0 && b.saved.per_token > p.saved_one.per_token) p.saved_one = b.saved;
    if (rebuilt_blocks > 0 && rebuilt.per_token + rebuilt.per_seq_squared >
                                  p.recompute.per_token + p.recompute.per_seq_squared)
      p.recompute = rebuilt;
    if (b.backward_transient.per_token > p.backward_transient.per_token)
      p.backward_transient = b.backward_transient;
  };
  add_blocks(dense_block_shape(arch), arch.dense_layers(), !arch.is_moe());
  if (arch.is_moe()) add_blocks(moe_block_shape(arch), arch.moe_layers, true);

  // The output layer: the final norm keeps its input; the output projection keeps its input when
  // its weight is trained (full fine-tune).
  const double e = kActivationBytes, h = d(arch.hidden), V = d(arch.output_width());
  const BlockShape dense = dense_block_shape(arch);
  p.output_saved.per_token = norm_bytes(dense, s, arch.hidden) + (s.full_finetune ? e * h : 0);
  // Dropout on the embedding output (StarCoder2: embedding_dropout) keeps its mask.
  if (arch.embedding_dropout) p.output_saved.per_token += kMaskBytes * h;
  // modules_to_save on the output layer: its trained copy keeps its input; a LoRA adapter on it
  // keeps its input in the adapter's dtype (or the dropped copy and mask) and x·A.
  const TensorRole& out_role = set.output_role();
  if (!s.full_finetune && out_role.trained_copy) p.output_saved.per_token += e * h;
  if (out_role.adapted() && !out_role.tensor->in_blocks &&
      (out_role.tensor->kind == TensorKind::kOutput || w.lora.target_output)) {
    const double a = kAdapterTensorBytes;
    p.output_saved.per_token +=
        (s.lora_dropout > 0 ? dropout_input_bytes(1, arch.hidden) : a * h) + a * out_role.rank;
  }
  // An adapter on the embedding keeps the looked-up rows of lora_embedding_A (r values).
  if (const TensorRole* emb = set.embedding_role();
      emb && emb->adapted() && w.lora.target_embedding)
    p.output_saved.per_token += kAdapterTensorBytes * emb->rank;
  switch (w.options.effective_loss()) {
    case LossKind::kChunked:
      // Chunked cross-entropy (torchtune CEWithChunkedOutputLoss with its compiled per-chunk
      // loss): the 16-bit logits of all chunks stay saved for the loss's backward; the FP32
      // upcast is fused into the loss kernel, so the transient is one chunk's 16-bit gradient.
      p.logits.per_token = e * V + e * V / w.options.loss_chunks;
      break;
    case LossKind::kFp32Upcast:
      // Forward: the 16-bit logits, their FP32 copy and the FP32 log-probabilities that
      // cross-entropy keeps (2V + 4V + 4V). The trainer keeps only the loss of the model's output
      // (Trainer.compute_loss, torchtune's recipes `del logits`), so by the backward the 16-bit
      // logits and the FP32 copy are gone; the log-softmax backward holds the log-probabilities,
      // their gradient and its result, all FP32: 3 x 4V bytes per token, the larger of the two.
      p.logits.per_token = std::max(e * V + 2 * kFp32Bytes * V, 3 * kFp32Bytes * V);
      break;
    case LossKind::kBf16:
      // Cross-entropy on the 16-bit logits: the logits, the 16-bit log-probabilities, and in the
      // backward their gradient and the logits' gradient, each 2V bytes per token.
      p.logits.per_token = 4 * e * V;
      break;
    case LossKind::kFused:
      // Output projection and loss fused (Liger FusedLinearCrossEntropy, Cut Cross-Entropy): no
      // full logits; Liger's token chunks hold about tokens x hidden FP32 logits and their
      // gradient at a time.
      p.logits.per_token = 2 * kFp32Bytes * h;
      break;
  }
  p.hidden_gradient.per_token = s.stream_bytes() * h;
  if (w.options.effective_loss() != LossKind::kFused) p.logits_gradient.per_token = e * V;
  // A loop that keeps the model's output (`output = model(...)`, freed after `loss.backward()`)
  // holds its logits through the whole backward pass: in FP32 where the model upcasts them
  // itself. In the forward pass they are among the loss's own tensors above.
  if (w.stack && w.options.effective_loss() != LossKind::kFused)
    p.held_logits.per_token = w.stack->held_logits_bytes * V;
  p.scoring_logits.per_token =
      w.options.effective_loss() == LossKind::kFused ? p.logits.per_token : e * V;

  // Buffers and per-layer figures for QLoRA, FSDP and the optimizer step in backward.
  double shared = 0, dense_mlp = 0, moe_mlp = 0;
  double largest_tensor = 0, largest_materialised = 0;
  for (const TensorRole& r : set.roles) {
    const TensorSpec& t = *r.tensor;
    const double per_copy = static_cast<double>(t.total()) / static_cast<double>(t.copies()) /
                            (t.shape_has_experts ? static_cast<double>(t.experts) : 1.0);
    largest_tensor = std::max(largest_tensor, per_copy);
    if (!t.in_blocks) continue;
    // A frozen 16-bit weight in a block that also holds adapters (FSDP1 use_orig_params: one flat
    // parameter for both) gets a gradient of its own size (StackProfile::fsdp_unit_gradients).
    if (set.any_adapter && r.base == BaseRole::kFrozen16)
      p.block_frozen_gradients += Bytes((set.frozen_in_fp32(t) ? kFp32Bytes : kActivationBytes) *
                                        static_cast<double>(t.total()));
    // A quantized weight is dequantized to BF16 for each product; DoRA's norm also builds B·A
    // and W + s·B·A in the adapter's dtype (PEFT get_weight_norm), one module at a time.
    double materialised = r.quantized() ? r.quant.dequant_output_bytes * per_copy : 0.0;
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
  for (const auto& t : w.model->params.tensors)
    if (!t.in_blocks) p.root_params += Bytes(2.0 * static_cast<double>(t.total()));
  if (s.autocast && out_role.base == BaseRole::kFrozen16 && set.frozen_in_fp32(*out_role.tensor))
    p.head_cast = Bytes(kActivationBytes * V * h);
  if (set.fp32_unquantized && w.stack && w.stack->kbit_skipped_when_sharded) {
    Workload as_loaded = w;
    as_loaded.options.kbit_preparation_skipped = true;
    p.sharded = std::make_shared<const ActivationProfile>(activation_profile(as_loaded));
  }
  return p;
}

const ActivationProfile& ActivationProfile::placed(const Placement& p) const {
  const bool sharded_base =
      !p.mig && p.count > 1 && (p.sharding == Sharding::kFsdp || p.sharding == Sharding::kHsdp);
  return sharded && sharded_base ? *sharded : *this;
}

}  // namespace ftplan
