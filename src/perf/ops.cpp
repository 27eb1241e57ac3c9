#include "perf/ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "memory/activations.hpp"
#include "memory/model_states.hpp"
#include "workload/objective.hpp"
#include "workload/roles.hpp"

namespace ftplan {

std::string_view attention_kernel_name(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::kFlash2:
      return "flash2";
    case AttentionKernel::kNone:
      break;
  }
  return "none";
}

std::string_view op_class_name(OpClass c) {
  switch (c) {
    case OpClass::kGemm:
      return "gemm";
    case OpClass::kAttention:
      return "attention";
    case OpClass::kAdapter:
      return "adapter";
    case OpClass::kDequant:
      return "dequant";
    case OpClass::kNorm:
      return "norm";
    case OpClass::kElementwise:
      return "elementwise";
    case OpClass::kEmbedding:
      return "embedding";
    case OpClass::kLoss:
      return "loss";
    case OpClass::kOptimizer:
      return "optimizer";
  }
  return "?";
}

const std::vector<std::string>& op_class_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (auto c : kAllOpClasses)
      v.emplace_back(op_class_name(c));
    return v;
  }();
  return names;
}

std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::kForward:
      return "forward";
    case Phase::kBackward:
      return "backward";
    case Phase::kRecompute:
      return "recompute";
    case Phase::kOptimizer:
      return "optimizer";
  }
  return "?";
}

GemmCost gemm_cost(const GemmShape& s, double a_bytes, double b_bytes, double c_bytes) {
  // 2·M·N·K FLOPs; A[M×K], B[K×N] read once, C[M×N] written once (NVIDIA Matrix Multiplication
  // Background user guide, "Math and Memory Bounds").
  return {Flops(2.0 * s.m * s.n * s.k),
          Bytes(a_bytes * s.m * s.k + b_bytes * s.k * s.n + c_bytes * s.m * s.n)};
}

double element_bytes(TensorPrecision p) {
  switch (p) {
    case TensorPrecision::kFP64:
      return 8;
    case TensorPrecision::kTF32:
      return 4;  // stored as FP32
    case TensorPrecision::kBF16:
    case TensorPrecision::kFP16:
      return 2;
    case TensorPrecision::kFP8:
    case TensorPrecision::kINT8:
      return 1;
    case TensorPrecision::kFP6:
      return 0.75;
    case TensorPrecision::kFP4:
      return 0.5;
  }
  return 2;
}

TensorPrecision tensor_precision_of(ComputeFormat f) {
  switch (f) {
    case ComputeFormat::kBF16:
      return TensorPrecision::kBF16;
    case ComputeFormat::kFP16:
      return TensorPrecision::kFP16;
    case ComputeFormat::kFP8:
    case ComputeFormat::kMXFP8:
      return TensorPrecision::kFP8;
    case ComputeFormat::kNVFP4:
      return TensorPrecision::kFP4;
  }
  return TensorPrecision::kBF16;
}

double operand_bytes(ComputeFormat f) {
  switch (f) {
    case ComputeFormat::kBF16:
    case ComputeFormat::kFP16:
      return 2;
    case ComputeFormat::kFP8:
      return 1;  // E4M3 / E5M2 with one FP32 scale per tensor
    case ComputeFormat::kMXFP8:
      return 1.0 + 1.0 / 32;  // OCP MX v1.0: one E8M0 scale per block of 32
    case ComputeFormat::kNVFP4:
      return 0.5 + 1.0 / 16;  // NVFP4: one E4M3 scale per block of 16 (+ an FP32 tensor scale)
  }
  return 2;
}

double causal_pairs(std::int64_t seq, std::int64_t window) {
  // Query i (0-based) attends to keys max(0, i - W + 1) .. i: min(i + 1, W) keys.
  // Σ_{i<s} min(i+1, W) = s(s+1)/2 when s <= W, else W(W+1)/2 + (s - W)·W.
  const double s = static_cast<double>(seq);
  if (window <= 0 || window >= seq) return s * (s + 1) / 2;
  const double w = static_cast<double>(window);
  return w * (w + 1) / 2 + (s - w) * w;
}

double causal_pairs_at(double s, double w) {
  if (w <= 0 || w >= s) return s * (s + 1) / 2;
  return w * (w + 1) / 2 + (s - w) * w;
}

Flops StepOps::micro_batch_flops() const {
  Flops f;
  for (const auto& op : ops)
    if (op.phase != Phase::kOptimizer) f += op.total_flops();
  return f;
}

Bytes StepOps::micro_batch_bytes() const {
  Bytes b;
  for (const auto& op : ops)
    if (op.phase != Phase::kOptimizer) b += op.total_bytes();
  return b;
}

Flops StepOps::model_flops_per_micro_batch() const {
  Flops f;
  for (const auto& op : ops)
    if (op.model_flops) f += op.total_flops();
  return f;
}

namespace {

// Activations between layers stay BF16 (2 B) in every format: Transformer Engine quantizes only
// the inputs of its GEMMs (TE documentation, "Using FP8 with Transformer Engine").
constexpr double kAct = 2.0;
constexpr double kFp32 = 4.0;
constexpr double kIndex = 8.0;     // int64 token ids and expert indices (PyTorch's default)
constexpr double kMaskByte = 1.0;  // a dropout mask: one byte per element

// FLOPs per element of the element-wise kernels, counted from their formulas (one FLOP per
// add, multiply, divide, exp, rsqrt or tanh).
// RMSNorm y = x · rsqrt(mean(x²) + ε) · w: square, sum, scale by rstd, scale by w.
constexpr double kRmsNormFlops = 4;
// Its backward dx = rstd · (w·dy − x · rstd² · mean(w·dy·x)): about twice the forward.
constexpr double kRmsNormBackwardFlops = 8;
// Bytes per element of an RMSNorm. A fused kernel (torch.compile, Triton, Apex) reads x and
// writes y in 16 bit, and its backward reads x and dy and writes dx. Eager PyTorch runs the
// composite of Hugging Face's LlamaRMSNorm (torchtune's RMSNorm and ATen's rms_norm alike) as
// separate kernels on an FP32 copy: x.float() (2 + 4), pow (4 + 4), mean (4), x·rstd (4 + 4),
// .to(bf16) (4 + 2), ·w (2 + 2) = 36 B; autograd runs the chain back: dy·w (2 + 2), the cast to
// FP32 (2 + 4), ·rstd (4 + 4) and the row sum of dy·x (4 + 4 + 4), mean's expansion (4), pow's
// 2x·dy (4 + 4 + 4), the sum of the two paths (4 + 4 + 4), dx to 16 bit (4 + 2) = 68 B.
constexpr double kFusedRmsNormBytes = 2 * kAct;
constexpr double kFusedRmsNormBackwardBytes = 3 * kAct;
constexpr double kEagerRmsNormBytes = 36;
constexpr double kEagerRmsNormBackwardBytes = 68;
// Bytes per element of the gated activation act(g)·u. Fused: reads g and u, writes the product;
// its backward reads g, u and the gradient, writes d(g) and d(u). Eager PyTorch runs act(g) (2 +
// 2) and the product (2 + 2 + 2) as two kernels, 10 B, and autograd three: d(u) = dy·act(g) and
// d(act) = dy·u (2 + 2 + 2 each), d(g) = act'(g)·d(act) (2 + 2 + 2), 18 B.
constexpr double kFusedGatedActBytes = 3 * kAct;
constexpr double kFusedGatedActBackwardBytes = 5 * kAct;
constexpr double kEagerGatedActBytes = 10;
constexpr double kEagerGatedActBackwardBytes = 18;
// SwiGLU silu(g)·u = g / (1 + exp(−g)) · u: negate, exp, add, divide, multiply.
constexpr double kSwiGluFlops = 5;
// GeGLU with the tanh GELU: 0.5·g·(1 + tanh(√(2/π)·(g + 0.044715·g³)))·u: 10 operations.
constexpr double kGeGluFlops = 10;
// The tanh GELU of a non-gated MLP, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))): 9 operations.
// One kernel (PyTorch's gelu with approximate='tanh', StarCoder2's gelu_pytorch_tanh) reads x and
// writes y; its backward reads x and the gradient, writes dx. Phi's gelu_new is the same formula
// written in PyTorch ops, which eager mode runs as several kernels: counted here as one.
constexpr double kGeluFlops = 9;
constexpr double kGeluBytes = 2 * kAct;
constexpr double kGeluBackwardBytes = 3 * kAct;
// Sigmoid 1 / (1 + exp(−x)): negate, exp, add, divide.
constexpr double kSigmoidFlops = 4;
// Rotary embedding x·cos + rotate_half(x)·sin: two multiplies and an add.
constexpr double kRotaryFlops = 3;
// Softmax over a row (max, subtract, exp, sum, divide) and log-softmax + NLL for the loss.
constexpr double kSoftmaxFlops = 5;
// FP8/FP4 quantization of a GEMM operand: amax and scale-multiply per element.
constexpr double kCastFlops = 2;

std::string replace_suffix(const std::string& name, std::string_view from, std::string_view to) {
  if (name.size() >= from.size() && name.compare(name.size() - from.size(), from.size(), from) == 0)
    return name.substr(0, name.size() - from.size()) + std::string(to);
  return name + std::string(to);
}

// The short, stable name of a block linear layer.
// The module of a Hugging Face weight name: "model.layers.{L}.self_attn.q_a_proj.weight" ->
// "q_a_proj"; empty unless the name holds `part` (".self_attn.", ".shared_experts.").
std::string module_after(const std::string& name, const std::string& part) {
  const auto at = name.find(part);
  if (at == std::string::npos) return "";
  const auto begin = at + part.size();
  return name.substr(begin, name.find('.', begin) - begin);
}

std::string linear_name(const TensorSpec& t) {
  const bool expert = t.kind == TensorKind::kExpert;
  if (t.kind == TensorKind::kRouter) return "moe.router";
  // Attention modules by their own names (q_proj, ..., MLA's q_a_proj, kv_b_proj), shared
  // experts apart from the dense MLP.
  if (const std::string m = module_after(t.name, ".self_attn."); !m.empty()) return "attn." + m;
  // Qwen2-MoE's mlp.shared_expert_gate [1, H]: the sigmoid gate on the shared expert's output.
  if (t.name.find(".shared_expert_gate.") != std::string::npos) return "moe.shared.expert_gate";
  for (const char* shared : {".shared_experts.", ".shared_mlp.", ".shared_expert."})
    if (const std::string m = module_after(t.name, shared); !m.empty()) return "moe.shared." + m;
  const char* prefix = expert ? "moe.expert." : nullptr;
  auto mlp = [&](const char* n) { return std::string(prefix ? prefix : "mlp.") + n; };
  switch (t.projections) {
    case kProjQ:
      return "attn.q_proj";
    case kProjK:
      return "attn.k_proj";
    case kProjV:
      return "attn.v_proj";
    case kProjQ | kProjK | kProjV:
      return "attn.qkv_proj";
    case kProjO:
      return "attn.o_proj";
    case kProjGate:
      return mlp("gate_proj");
    case kProjUp:
      return mlp("up_proj");
    case kProjGate | kProjUp:
      return mlp("gate_up_proj");
    case kProjDown:
      return mlp("down_proj");
    default:
      return expert ? "moe.expert.linear" : "linear";
  }
}

// A shared expert of a MoE layer (DeepSeek's shared_experts, Qwen2-MoE's shared_expert), apart
// from the dense MLP of dense layers.
bool is_shared_expert(const TensorSpec& t) {
  return t.kind == TensorKind::kLinear && linear_name(t).starts_with("moe.shared.");
}

class Builder {
 public:
  Builder(const Workload& w, const TrainedSet& set) : w_(w), set_(set), a_(w.model->arch) {
    T_ = static_cast<double>(w.tokens_per_micro_batch());
    out_.tokens_per_micro_batch = w.tokens_per_micro_batch();
    if (w.lengths.varies()) {
      // Variable lengths (workload/lengths.hpp): the step runs on the tokens a micro-batch
      // processes (padding included), the rate counts the real ones.
      const double b = static_cast<double>(w.sequences_per_micro_batch());
      lengths_ = length_distribution(w.lengths, w.seq);
      if (!w.lengths.packing && !w.lengths.padding_free)
        // Each micro-batch padded to its longest sample (dynamic padding, Hugging Face's
        // DataCollatorWithPadding): b rows of the batch maximum.
        batch_max_ = batch_max_distribution(lengths_, w.sequences_per_micro_batch());
      T_ = b * (w.lengths.packing    ? static_cast<double>(w.seq)
                : batch_max_.empty() ? expectation(lengths_, [](double s) { return s; })
                                     : expectation(batch_max_, [](double s) { return s; }));
      out_.tokens_per_micro_batch = std::llround(b * w.tokens_per_sequence());
    }
    out_.grad_accum = w.grad_accum;
    out_.layers = a_.layers;
    out_.precision = w.precision;
    out_.compiled = w.options.compile;
    // A base the stack prepared for k-bit training (TrainedSet::fp32_unquantized) runs its
    // residual stream, norms' outputs and MLP intermediates in FP32, as memory counts them
    // (memory/activations.cpp, ActivationSettings::fp32_stream).
    const ActivationSettings act = activation_settings(w, set);
    stream_ = act.stream_bytes();
    // The element-wise chain around eager adapters (emit_lora_chain) follows the same settings as
    // the activations they keep.
    act_ = act;
    eager_lora_ = !act.compiled && !act.fused_lora;
    weight_casts_ = act.autocast && !act.compiled && w.stack && w.stack->autocast_weight_casts;
    out_.micro_batch_overhead = !w.stack || w.stack->micro_batch_overhead;
    // QLoRA's base GEMMs run in the 16-bit compute dtype after dequantization (seed T7).
    base_format_ = set.any_quantized ? (w.precision == ComputeFormat::kFP16 ? ComputeFormat::kFP16
                                                                            : ComputeFormat::kBF16)
                                     : w.precision;
    out_.mfu_precision = tensor_precision_of(base_format_);
    low_precision_ = base_format_ != ComputeFormat::kBF16 && base_format_ != ComputeFormat::kFP16;
  }

  StepOps build() {
    emit_embedding();
    emit_block();
    emit_head();
    emit_no_grad_passes();
    emit_optimizer();
    for (const auto& op : out_.ops)
      if (op.unit == ComputeUnit::kTensor)
        out_.tensor_precisions_used |= 1u << static_cast<unsigned>(op.precision);
    return std::move(out_);
  }

 private:
  // Forward passes without gradient (workload/objective.hpp): the reference model's — a frozen copy
  // of the model, or with adapters the base with them switched off — and the policy's own for
  // KTO's KL batch, each the micro-batch's forward ops again. Their FLOPs count as model FLOPs:
  // the objective needs them as it needs the forward pass.
  void emit_no_grad_passes() {
    const int reference = reference_forward_passes(w_);
    const int policy = policy_no_grad_passes(w_);
    if (reference + policy == 0) return;
    const std::size_t n = out_.ops.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (out_.ops[i].phase != Phase::kForward) continue;
      Op copy = out_.ops[i];
      const int passes = (copy.op_class == OpClass::kAdapter ? 0 : reference) + policy;
      if (passes == 0) continue;
      copy.name = "no_grad." + copy.name;
      copy.count *= passes;
      out_.ops.push_back(std::move(copy));
    }
  }

  // ---- helpers -------------------------------------------------------------------------------
  Op vector_op(std::string name, OpClass cls, Phase phase, double flops, double bytes,
               std::int64_t count) const {
    Op op;
    op.name = std::move(name);
    op.op_class = cls;
    op.phase = phase;
    op.unit = ComputeUnit::kVector;
    op.flops = Flops(flops);
    op.bytes = Bytes(bytes);
    op.count = count;
    return op;
  }

  Op gemm_op(std::string name, OpClass cls, Phase phase, GemmShape shape, double a_bytes,
             double b_bytes, double c_bytes, TensorPrecision p, std::int64_t count,
             bool model_flops) const {
    Op op;
    op.name = std::move(name);
    op.op_class = cls;
    op.phase = phase;
    op.unit = ComputeUnit::kTensor;
    op.precision = p;
    const GemmCost c = gemm_cost(shape, a_bytes, b_bytes, c_bytes);
    op.flops = c.flops;
    op.bytes = c.bytes;
    op.gemm = shape;
    op.count = count;
    op.model_flops = model_flops;
    return op;
  }

  void forward(Op op) { block_fwd_.push_back(std::move(op)); }
  // A matrix product of the blocks in forward order, numbered for the per-op policy within each
  // kind of block that runs it: attention in every block, the dense MLP in dense blocks, the
  // router and the shared experts in MoE blocks. Routed experts run grouped products, which the
  // policy does not keep.
  enum BlockKinds : unsigned { kDenseBlock = 1, kMoeBlock = 2, kEveryBlock = 3 };
  void note_product(const Op& op, const TensorSpec& t) {
    if (t.kind == TensorKind::kExpert) return;
    const bool attention = (t.projections & (kProjQ | kProjK | kProjV | kProjO)) != 0;
    unsigned kinds = kDenseBlock;
    if (attention)
      kinds = kEveryBlock;
    else if (t.kind == TensorKind::kRouter || is_shared_expert(t))
      kinds = kMoeBlock;
    bool kept = false;
    for (unsigned kind : {kDenseBlock, kMoeBlock})
      if (kinds & kind) kept |= per_op_keeps_product(per_op_index_[kind - 1]++);
    if (kept) per_op_kept_.insert(op.name);
  }
  // Backward ops of one forward group, in the order the backward pass runs them.
  void backward_group(std::vector<Op> ops) { block_bwd_groups_.push_back(std::move(ops)); }

  bool has_bias(const TensorSpec& t) const {
    if (t.kind == TensorKind::kRouter) return a_.router_bias;
    if (t.kind == TensorKind::kExpert) return a_.expert_bias;
    if (t.projections & (kProjQ | kProjK | kProjV)) return a_.qkv_bias;
    if (t.projections == kProjO) return a_.o_bias;
    return a_.mlp_bias;
  }

  // ---- a linear layer: base GEMMs, QLoRA dequantization, FP8 casts, LoRA adapters ------------
  void emit_linear(const TensorSpec& t) {
    const std::string base = linear_name(t);
    const bool expert = t.kind == TensorKind::kExpert;
    const bool router = t.kind == TensorKind::kRouter;
    // Tokens through this weight: all of them, or for an expert its share of the T·k routed
    // copies under balanced routing (each token goes to experts_per_token of num_experts).
    const double M = expert ? T_ * static_cast<double>(a_.experts_per_token) /
                                  static_cast<double>(a_.num_experts)
                            : T_;
    const double in = static_cast<double>(t.in_features);
    const double outf = static_cast<double>(t.out_features);
    const std::int64_t count = t.layers * t.experts;  // one GEMM per layer (and expert)
    const TensorRole& role = set_.role_of(t);
    const bool trained = role.trained();
    // The MoE router stays in BF16 under FP8 recipes (Megatron keeps it in higher precision).
    const ComputeFormat fmt_used = router ? ComputeFormat::kBF16 : base_format_;
    const TensorPrecision p = tensor_precision_of(fmt_used);
    const double opnd = operand_bytes(fmt_used);
    const bool cast = low_precision_ && !router;
    const double numel = in * outf;

    std::vector<Op> bwd;
    // QLoRA: the quantized weight is dequantized to BF16 before every use (bitsandbytes
    // MatMul4Bit: dequantize_4bit, then a BF16 matmul; GPTQ/AWQ/HQQ likewise where the adapter
    // trains on them): reads the stored codes and constants, writes the 16-bit weight.
    if (role.quantized()) {
      const DequantCost q = dequant_cost(t.out_features, t.in_features, role.quant);
      const std::string name = base + "." + role.quant.format + "_dequant";
      const double bytes = q.bytes_read + q.bytes_written;
      forward(vector_op(name + ".fwd", OpClass::kDequant, Phase::kForward, q.flops, bytes, count));
      bwd.push_back(
          vector_op(name + ".bwd", OpClass::kDequant, Phase::kBackward, q.flops, bytes, count));
    }
    // An FP32 stream (stream_): autocast casts each product's FP32 input to 16 bits, and a 4-bit
    // layer returns its output in its input's dtype (bitsandbytes Linear4bit: out.to(inp_dtype)),
    // a second cast; the backward pass casts the gradients back the same way. Read 4 B and write
    // 2 (or the reverse) per element.
    if (stream_ > kAct && !router) {
      const double elems = M * (in + (role.quantized() ? outf : 0.0));
      forward(vector_op(base + ".fp32_stream_cast.fwd", OpClass::kElementwise, Phase::kForward,
                        elems, (kFp32 + kAct) * elems, count));
      bwd.push_back(vector_op(base + ".fp32_stream_cast.bwd", OpClass::kElementwise,
                              Phase::kBackward, elems, (kFp32 + kAct) * elems, count));
    }
    // FP8/FP4 recipes quantize the GEMM operands: the input activation and the weight in the
    // forward pass, the output gradient in the backward pass (Transformer Engine).
    const std::string cast_name = std::string(compute_format_name(fmt_used)) + "_cast";
    if (cast) {
      const double elems = M * in + numel;
      forward(vector_op(base + "." + cast_name + ".fwd", OpClass::kElementwise, Phase::kForward,
                        kCastFlops * elems, (kAct + opnd) * elems, count));
    }
    // A trained FP32 weight under autocast (StackProfile::autocast_weight_casts): cast to 16 bits
    // before the product (read 4 B, write 2 per weight), its 16-bit gradient cast back to FP32.
    // FP8/FP4 recipes quantize the weight in their own operand cast above instead.
    if (trained && weight_casts_ && !cast) {
      forward(vector_op(base + ".weight_cast.fwd", OpClass::kElementwise, Phase::kForward, numel,
                        (kFp32 + kAct) * numel, count));
      bwd.push_back(vector_op(base + ".weight_cast.bwd", OpClass::kElementwise, Phase::kBackward,
                              numel, (kFp32 + kAct) * numel, count));
    }
    // Forward: Y[M×out] = X[M×in] · Wᵀ, plus the bias in the GEMM epilogue.
    Op fwd = gemm_op(base + ".fwd", OpClass::kGemm, Phase::kForward, {M, outf, in}, opnd, opnd,
                     kAct, p, count, true);
    if (has_bias(t)) {
      fwd.flops += Flops(M * outf);
      fwd.bytes += Bytes(kAct * outf);
    }
    note_product(fwd, t);
    forward(fwd);

    // LoRA (Hu et al. 2021): Y += s · (X·Aᵀ)·Bᵀ with A[r×in], B[out×r], in BF16.
    const bool lora = role.adapted();
    const double r = static_cast<double>(role.rank);
    const TensorPrecision bf16 = TensorPrecision::kBF16;
    if (lora) {
      for (Op op : {gemm_op(base + ".lora_a.fwd", OpClass::kAdapter, Phase::kForward, {M, r, in},
                            kAct, kAct, kAct, bf16, count, true),
                    gemm_op(base + ".lora_b.fwd", OpClass::kAdapter, Phase::kForward, {M, outf, r},
                            kAct, kAct, kAct, bf16, count, true)}) {
        note_product(op, t);
        forward(std::move(op));
      }
      emit_lora_chain(base, M, in, outf, count, Phase::kForward, nullptr);
      // Y = base + s·adapter: reads both, writes Y.
      forward(vector_op(base + ".lora_add.fwd", OpClass::kElementwise, Phase::kForward,
                        2 * M * outf, 3 * kAct * M * outf, count));
      if (role.adapter == AdapterKind::kDora) {
        // DoRA (Liu et al. 2024; PEFT DoraLinearLayer): the row norms of W + s·B·A, taken as
        // constants in the backward pass: B·A [out × in] on the tensor cores, then scale, add,
        // square and sum per element (4 FLOPs), reading W and B·A, writing the sum.
        forward(gemm_op(base + ".dora_weight.fwd", OpClass::kAdapter, Phase::kForward,
                        {outf, in, r}, kAct, kAct, kFp32, bf16, count, false));
        forward(vector_op(base + ".dora_norm.fwd", OpClass::kElementwise, Phase::kForward,
                          4 * numel, (kAct + 2 * kFp32) * numel, count));
        // Y = (m/‖·‖ − 1)·base + (m/‖·‖)·s·adapter: reads both outputs, writes Y.
        forward(vector_op(base + ".dora_scale.fwd", OpClass::kElementwise, Phase::kForward,
                          3 * M * outf, 3 * kAct * M * outf, count));
      }
    }

    // Backward.
    if (cast)
      bwd.push_back(vector_op(base + "." + cast_name + ".bwd", OpClass::kElementwise,
                              Phase::kBackward, kCastFlops * M * outf, (kAct + opnd) * M * outf,
                              count));
    // Input gradient dX[M×in] = dY[M×out] · W: every layer, frozen or not (the gradient must
    // reach the adapters and layers below).
    bwd.push_back(gemm_op(base + ".dgrad", OpClass::kGemm, Phase::kBackward, {M, in, outf}, opnd,
                          opnd, kAct, p, count, true));
    // Weight gradient dW[out×in] = dYᵀ · X: trained weights only (the bias gradient, a column
    // sum of dY, rides in the epilogue).
    if (trained) {
      Op wgrad = gemm_op(base + ".wgrad", OpClass::kGemm, Phase::kBackward, {outf, in, M}, opnd,
                         opnd, kAct, p, count, true);
      if (has_bias(t)) {
        wgrad.flops += Flops(M * outf);
        wgrad.bytes += Bytes(kAct * outf);
      }
      bwd.push_back(wgrad);
    }
    if (lora) {
      // dB = dYᵀ·(X·Aᵀ), d(X·Aᵀ) = dY·B, dA = d(X·Aᵀ)ᵀ·X, dX_adapter = d(X·Aᵀ)·A.
      bwd.push_back(gemm_op(base + ".lora_b.wgrad", OpClass::kAdapter, Phase::kBackward,
                            {outf, r, M}, kAct, kAct, kAct, bf16, count, true));
      bwd.push_back(gemm_op(base + ".lora_b.dgrad", OpClass::kAdapter, Phase::kBackward,
                            {M, r, outf}, kAct, kAct, kAct, bf16, count, true));
      bwd.push_back(gemm_op(base + ".lora_a.wgrad", OpClass::kAdapter, Phase::kBackward, {r, in, M},
                            kAct, kAct, kAct, bf16, count, true));
      bwd.push_back(gemm_op(base + ".lora_a.dgrad", OpClass::kAdapter, Phase::kBackward, {M, in, r},
                            kAct, kAct, kAct, bf16, count, true));
      emit_lora_chain(base, M, in, outf, count, Phase::kBackward, &bwd);
      // dX = dX_base + dX_adapter.
      bwd.push_back(vector_op(base + ".lora_add.bwd", OpClass::kElementwise, Phase::kBackward,
                              M * in, 3 * kAct * M * in, count));
      if (role.adapter == AdapterKind::kDora)
        // The magnitude's gradient Σ_tokens dY·(base + s·adapter)/‖·‖ and the scaled gradients
        // of the base and adapter outputs: reads dY and both outputs, writes two gradients.
        bwd.push_back(vector_op(base + ".dora_scale.bwd", OpClass::kElementwise, Phase::kBackward,
                                4 * M * outf, 5 * kAct * M * outf, count));
    }
    backward_group(std::move(bwd));
  }

  // The element-wise kernels eager adapter code runs around the two products (PEFT's and
  // torchtune's LoRA layers alike): dropout on the adapter's input where lora_dropout > 0 (reads
  // it, writes the dropped copy and a one-byte mask; its backward reads the gradient and the mask),
  // and the product's scaling, lora_B(...) * scaling, a separate multiply before the add. Adapters
  // in FP32 (ActivationSettings::fp32_adapters) get their 16-bit input cast to FP32 first and
  // autocast casts it back to 16 bits for lora_A: two casts forward, their two backward (one each
  // where the input already is FP32, an FP32 stream; a 16-bit adapter on an FP32 stream gets its
  // input cast down); without autocast the FP32 output is cast down instead. Compiled and fused
  // adapters fold all of it into the neighbouring kernels.
  void emit_lora_chain(const std::string& base, double M, double in, double outf,
                       std::int64_t count, Phase phase, std::vector<Op>* bwd) {
    if (!eager_lora_) return;
    const bool backward = phase == Phase::kBackward;
    const std::string pass = backward ? ".bwd" : ".fwd";
    const auto emit = [&](Op op) {
      if (backward)
        bwd->push_back(std::move(op));
      else
        forward(std::move(op));
    };
    const double x = M * in;
    const double width =
        act_.fp32_adapters ? kFp32 : kAct;  // the adapter input's bytes per element
    // PEFT casts the input to the adapters' dtype where it differs (an FP32 stream already is).
    if (act_.fp32_adapters != (stream_ > kAct))
      emit(vector_op(base + ".lora_in_cast" + pass, OpClass::kElementwise, phase, x,
                     (kFp32 + kAct) * x, count));
    // Under autocast lora_A gets its input cast back to 16 bits. Without autocast (pure BF16
    // with PEFT's FP32 adapters) the adapters run in FP32: lora_B's output is FP32, so the scaling
    // multiply works on FP32 and the sum with the 16-bit base output is cast back to 16 bits
    // (result.to(torch_result_dtype)).
    const bool fp32_chain = act_.fp32_adapters && !act_.autocast;
    if (act_.fp32_adapters && act_.autocast)
      emit(vector_op(base + ".lora_autocast" + pass, OpClass::kElementwise, phase, x,
                     (kFp32 + kAct) * x, count));
    if (act_.lora_dropout > 0)
      emit(vector_op(base + ".lora_dropout" + pass, OpClass::kElementwise, phase, x,
                     (2 * width + kMaskByte) * x, count));
    const double y = M * outf;
    emit(vector_op(base + ".lora_scale" + pass, OpClass::kElementwise, phase, y,
                   2 * (fp32_chain ? kFp32 : kAct) * y, count));
    if (fp32_chain)
      emit(vector_op(base + ".lora_out_cast" + pass, OpClass::kElementwise, phase, y,
                     (kFp32 + kAct) * y, count));
  }

  // ---- element-wise parts of a block ---------------------------------------------------------
  double norm_bytes(bool backward) const {
    if (out_.compiled) return backward ? kFusedRmsNormBackwardBytes : kFusedRmsNormBytes;
    return backward ? kEagerRmsNormBackwardBytes : kEagerRmsNormBytes;
  }

  void emit_norms() {
    // RMSNorm over H per token: reads x and the weight, writes y and the FP32 rstd it saves.
    const double H = static_cast<double>(a_.hidden);
    const std::int64_t count = a_.norms_per_layer * a_.layers;
    forward(vector_op("norm.fwd", OpClass::kNorm, Phase::kForward, kRmsNormFlops * T_ * H,
                      norm_bytes(false) * T_ * H + kAct * H + kFp32 * T_, count));
    backward_group(
        {vector_op("norm.bwd", OpClass::kNorm, Phase::kBackward, kRmsNormBackwardFlops * T_ * H,
                   norm_bytes(true) * T_ * H + kAct * H + kFp32 * T_, count)});
  }

  void emit_qk_norm() {
    if (a_.mla) {
      // MLA: RMSNorm on the query latent (q_a_layernorm) and the key/value latent
      // (kv_a_layernorm), one row each per token.
      const double width = static_cast<double>(a_.q_lora_rank + a_.kv_lora_rank);
      const double elems = T_ * width;
      const double rows = T_ * (a_.q_lora_rank > 0 ? 2 : 1);
      forward(vector_op("attn.latent_norm.fwd", OpClass::kNorm, Phase::kForward,
                        kRmsNormFlops * elems,
                        norm_bytes(false) * elems + kAct * width + kFp32 * rows, a_.layers));
      backward_group({vector_op(
          "attn.latent_norm.bwd", OpClass::kNorm, Phase::kBackward, kRmsNormBackwardFlops * elems,
          norm_bytes(true) * elems + kAct * width + kFp32 * rows, a_.layers)});
      return;
    }
    if (!a_.qk_norm) return;
    // Qwen3 / Gemma 3: RMSNorm over head_dim on every query and key head (OLMo 2: over the
    // whole projection, one row per token).
    const double elems = T_ * static_cast<double>(a_.q_dim() + a_.kv_dim());
    const double rows =
        a_.qk_norm_full_width ? 2 * T_ : T_ * static_cast<double>(a_.heads + a_.kv_heads);
    const double d = a_.qk_norm_full_width ? static_cast<double>(a_.q_dim() + a_.kv_dim()) / 2
                                           : static_cast<double>(a_.head_dim);
    forward(vector_op("attn.qk_norm.fwd", OpClass::kNorm, Phase::kForward, kRmsNormFlops * elems,
                      norm_bytes(false) * elems + 2 * kAct * d + kFp32 * rows, a_.layers));
    backward_group({vector_op("attn.qk_norm.bwd", OpClass::kNorm, Phase::kBackward,
                              kRmsNormBackwardFlops * elems,
                              norm_bytes(true) * elems + 2 * kAct * d + kFp32 * rows, a_.layers)});
  }

  void emit_rotary() {
    // Rotary position embedding on q and k (Su et al. 2021): reads x and the cos/sin tables of
    // the sequence's positions, writes the rotated x; the backward rotates by −θ (same cost).
    // MLA rotates only the qk_rope_head_dim part: per head of q, and once for the shared key.
    const double rotated = a_.mla ? static_cast<double>((a_.heads + 1) * a_.qk_rope_head_dim)
                                  : static_cast<double>(a_.q_dim() + a_.kv_dim());
    const double elems = T_ * rotated;
    const std::int64_t table_width = a_.mla ? a_.qk_rope_head_dim : a_.head_dim;
    const double tables = 2 * kAct * static_cast<double>(w_.seq * table_width);
    const double bytes = 2 * kAct * elems + tables;
    forward(vector_op("attn.rotary.fwd", OpClass::kElementwise, Phase::kForward,
                      kRotaryFlops * elems, bytes, a_.layers));
    backward_group({vector_op("attn.rotary.bwd", OpClass::kElementwise, Phase::kBackward,
                              kRotaryFlops * elems, bytes, a_.layers)});
  }

  void emit_attention_core() {
    const std::int64_t sliding = std::min(a_.sliding_window > 0 ? a_.sliding_layers : 0, a_.layers);
    emit_attention_group("attention.core", a_.layers - sliding, 0);
    emit_attention_group("attention.sliding", sliding, a_.sliding_window);
  }

  // Σ f(length) over the attention spans of one micro-batch: each row (b rows of `seq` fixed or
  // packed, of the batch's longest padded), or with padding-free attention each sample (a packed
  // row holds seq / mean samples).
  template <class F>
  double attention_sum(F f) const {
    const double b = static_cast<double>(w_.sequences_per_micro_batch());
    const double seq = static_cast<double>(w_.seq);
    if (!w_.lengths.padding_free)
      return b * (batch_max_.empty() ? f(seq) : expectation(batch_max_, f));
    const double per_sample = expectation(lengths_, f);
    if (!w_.lengths.packing) return b * per_sample;
    return b * seq / expectation(lengths_, [](double s) { return s; }) * per_sample;
  }

  void emit_attention_group(const std::string& name, std::int64_t layers, std::int64_t window) {
    if (layers <= 0) return;
    const double q = T_ * static_cast<double>(a_.q_dim());              // elements of Q (and dQ)
    const double k = T_ * static_cast<double>(a_.kv_dim());             // elements of K (and dK)
    const double v = T_ * static_cast<double>(a_.v_dim());              // elements of V (and dV)
    const double o = T_ * static_cast<double>(a_.attention_out_dim());  // O and dO
    // Per (query, key) pair and head: QKᵀ is 2·d_qk FLOPs, P·V 2·d_v (d_qk = d_v = head_dim
    // except under MLA, where d_qk = qk_nope + qk_rope and d_v = v_head_dim).
    const double d_qk = static_cast<double>(a_.head_dim);
    const double d_v = static_cast<double>(a_.mla ? a_.v_head_dim : a_.head_dim);
    const double heads = static_cast<double>(a_.heads);
    const double b = static_cast<double>(w_.sequences_per_micro_batch());
    const double lse = kFp32 * T_ * heads;  // the log-sum-exp FlashAttention saves per row
    Op fwd, bwd;
    if (w_.attention != Attention::kEager) {
      // PyTorch SDPA runs the same FlashAttention-2 kernels (PyTorch 2.2 and later) on K and V
      // repeated to every query head (Hugging Face repeat_kv, torchtune's expand): the kernel
      // reads them q_dim wide, and the copies are made (and their gradients summed back) first.
      const bool repeated = w_.attention == Attention::kSdpa && k < q;
      if (repeated) emit_repeat_kv(name, q, k, layers);
      const double k_read = repeated ? q : k;
      const double v_read = repeated ? q : v;
      // FlashAttention (Dao et al. 2022): tiles in on-chip memory, no s² traffic. Causal
      // masking skips the masked tiles, and a sliding window limits each query to its last W
      // keys (Dao 2023, FlashAttention-2).
      const double pairs = (w_.lengths.varies() ? attention_sum([&](double s) {
                             return causal_pairs_at(s, static_cast<double>(window));
                           })
                                                : causal_pairs(w_.seq, window) * b) *
                           heads;
      const double flops = 2 * (d_qk + d_v) * pairs;
      fwd = vector_op(name + ".fwd", OpClass::kAttention, Phase::kForward, flops,
                      kAct * (q + k_read + v_read + o) + lse, layers);
      // Backward recomputes S = QKᵀ and computes dV, dP, dQ, dK: five products of the forward's
      // size against two, 2.5× the forward FLOPs (FlashAttention-2 §4 counts it so). Reads Q, K,
      // V, O, dO and the log-sum-exp; writes dQ, dK, dV.
      bwd = vector_op(name + ".bwd", OpClass::kAttention, Phase::kBackward, 2.5 * flops,
                      kAct * (q + k_read + v_read + 2 * o) + lse + kAct * (q + k_read + v_read),
                      layers);
    } else {
      // Eager attention (Hugging Face "eager"): the full s×s score matrix per head is computed
      // (the mask is applied, not skipped), written and read back. Forward: write S, read S and
      // write P (softmax), read P for P·V: 4 passes of 2 B per score.
      const double s = static_cast<double>(w_.seq);
      const double scores = w_.lengths.varies()
                                ? attention_sum([](double t) { return t * t; }) * heads
                                : b * heads * s * s;
      fwd = vector_op(name + ".fwd", OpClass::kAttention, Phase::kForward,
                      2 * (d_qk + d_v) * scores + kSoftmaxFlops * scores,
                      kAct * (q + k + v + o) + 4 * kAct * scores, layers);
      // Backward: dV = Pᵀ·dO, dP = dO·Vᵀ, dS = softmax'(dP), dQ = dS·K, dK = dSᵀ·Q: read P, write
      // dP, read dP and P, write dS, read dS twice: 7 passes of 2 B per score.
      bwd = vector_op(name + ".bwd", OpClass::kAttention, Phase::kBackward,
                      4 * (d_qk + d_v) * scores + 4 * scores,
                      kAct * (q + k + v + o) + 7 * kAct * scores + kAct * (q + k + v), layers);
    }
    // The attention core runs on the tensor cores in BF16 (FlashAttention-2/3's training path).
    // Flash and SDPA attention run FlashAttention-2's kernels: PyTorch SDPA's flash backend is
    // FlashAttention-2 (PyTorch 2.2 and later), and so is the flash-attn package the stacks call.
    const AttentionKernel kernel =
        w_.attention == Attention::kEager ? AttentionKernel::kNone : AttentionKernel::kFlash2;
    for (Op* op : {&fwd, &bwd}) {
      op->unit = ComputeUnit::kTensor;
      op->precision = TensorPrecision::kBF16;
      op->kernel = kernel;
    }
    attention_fwd_.push_back(fwd);
    attention_kernels_.insert(fwd.name);
    forward(std::move(fwd));
    backward_group({std::move(bwd)});
  }

  // K and V repeated from kv_dim to q_dim wide before SDPA: read K and V, write the copies; the
  // backward pass sums the copies' gradients back (read 2·q, write 2·kv).
  void emit_repeat_kv(const std::string& name, double q, double kv, std::int64_t layers) {
    forward(vector_op(name + ".repeat_kv.fwd", OpClass::kElementwise, Phase::kForward, 0,
                      kAct * (2 * kv + 2 * q), layers));
    backward_group({vector_op(name + ".repeat_kv.bwd", OpClass::kElementwise, Phase::kBackward,
                              2 * q, kAct * (2 * q + 2 * kv), layers)});
  }

  void emit_residuals() {
    // Two residual adds per layer: read both inputs, write the sum. In the backward pass the
    // gradients of the two branches are summed the same way.
    const double H = static_cast<double>(a_.hidden);
    const std::int64_t count = 2 * a_.layers;
    forward(vector_op("residual.fwd", OpClass::kElementwise, Phase::kForward, T_ * H,
                      3 * stream_ * T_ * H, count));
    backward_group({vector_op("residual.bwd", OpClass::kElementwise, Phase::kBackward, T_ * H,
                              3 * stream_ * T_ * H, count)});
  }

  void emit_activation(const std::string& name, double tokens, double width, std::int64_t count) {
    if (a_.activation == MlpActivation::kGelu) {
      // Non-gated MLP: GELU over fc1's output.
      const double elems = tokens * width;
      forward(vector_op(name + ".fwd", OpClass::kElementwise, Phase::kForward, kGeluFlops * elems,
                        kGeluBytes * elems, count));
      backward_group({vector_op(name + ".bwd", OpClass::kElementwise, Phase::kBackward,
                                2 * kGeluFlops * elems, kGeluBackwardBytes * elems, count)});
      return;
    }
    // Gated MLP: act(gate)·up reads gate and up, writes one tensor; the backward reads gate, up
    // and the output gradient, writes d(gate) and d(up), about twice the forward's arithmetic.
    const double per = a_.activation == MlpActivation::kGeGLU ? kGeGluFlops : kSwiGluFlops;
    const double elems = tokens * width;
    const bool fused = out_.compiled;
    // In an FP32 stream the gate and up products arrive in FP32: every byte count doubles.
    const double wide = stream_ / kAct;
    forward(vector_op(name + ".fwd", OpClass::kElementwise, Phase::kForward, per * elems,
                      wide * (fused ? kFusedGatedActBytes : kEagerGatedActBytes) * elems, count));
    backward_group({vector_op(
        name + ".bwd", OpClass::kElementwise, Phase::kBackward, 2 * per * elems,
        wide * (fused ? kFusedGatedActBackwardBytes : kEagerGatedActBackwardBytes) * elems,
        count)});
  }

  // The sigmoid of the one-wide gate and the product with the shared expert's output: reads the
  // output (T×H) and the gate (T), writes T×H. The backward reads the output gradient, the output
  // and the gate, writes the gradients of both factors.
  void emit_shared_expert_scale() {
    const double H = static_cast<double>(a_.hidden);
    const std::int64_t L = a_.moe_layers;
    forward(vector_op("moe.shared.scale.fwd", OpClass::kElementwise, Phase::kForward,
                      T_ * H + kSigmoidFlops * T_, 2 * kAct * T_ * H + kAct * T_, L));
    backward_group(
        {vector_op("moe.shared.scale.bwd", OpClass::kElementwise, Phase::kBackward,
                   3 * T_ * H + kSigmoidFlops * T_, 3 * kAct * T_ * H + 2 * kAct * T_, L)});
  }

  void emit_moe_routing(bool before_experts) {
    const double H = static_cast<double>(a_.hidden);
    const double E = static_cast<double>(a_.num_experts);
    const double k = static_cast<double>(a_.experts_per_token);
    const std::int64_t L = a_.moe_layers;
    if (before_experts) {
      // Softmax over E router logits and top-k: reads T×E, writes k weights (FP32) and indices.
      forward(vector_op("moe.route.fwd", OpClass::kElementwise, Phase::kForward,
                        kSoftmaxFlops * T_ * E, kAct * T_ * E + (kFp32 + kIndex) * T_ * k, L));
      // Gather each token's hidden state once per chosen expert.
      forward(vector_op("moe.dispatch.fwd", OpClass::kElementwise, Phase::kForward, 0,
                        2 * kAct * T_ * k * H, L));
      backward_group({vector_op("moe.dispatch.bwd", OpClass::kElementwise, Phase::kBackward,
                                T_ * k * H, kAct * T_ * k * H + kAct * T_ * H, L),
                      vector_op("moe.route.bwd", OpClass::kElementwise, Phase::kBackward,
                                kSoftmaxFlops * T_ * E, kAct * T_ * E * 2 + kFp32 * T_ * k, L)});
    } else {
      // Weighted sum of the k expert outputs per token.
      forward(vector_op("moe.combine.fwd", OpClass::kElementwise, Phase::kForward, 2 * T_ * k * H,
                        kAct * T_ * k * H + kFp32 * T_ * k + kAct * T_ * H, L));
      backward_group(
          {vector_op("moe.combine.bwd", OpClass::kElementwise, Phase::kBackward, 3 * T_ * k * H,
                     kAct * T_ * H + kAct * T_ * k * H + kAct * T_ * k * H + kFp32 * T_ * k, L)});
    }
  }

  // ---- one decoder block (aggregated over layers) --------------------------------------------
  void emit_block() {
    const auto& tensors = w_.model->params.tensors;
    auto each = [&](auto pred) {
      for (const auto& t : tensors)
        if (t.in_blocks &&
            (t.kind == TensorKind::kLinear || t.kind == TensorKind::kExpert ||
             t.kind == TensorKind::kRouter) &&
            pred(t))
          emit_linear(t);
    };
    const ProjectionSet qkv = kProjQ | kProjK | kProjV;
    const ProjectionSet gate_up = kProjGate | kProjUp;
    emit_norms();
    each([&](const TensorSpec& t) {
      return t.kind == TensorKind::kLinear && (t.projections & qkv) != 0;
    });
    emit_qk_norm();
    emit_rotary();
    emit_attention_core();
    each([&](const TensorSpec& t) {
      return t.kind == TensorKind::kLinear && t.projections == kProjO;
    });
    emit_residuals();
    // A gated MLP: the dense MLP of dense layers, or the shared experts of MoE layers; a
    // non-gated MLP (Phi, StarCoder2) in the same order: fc1 (the up projection), GELU, fc2.
    auto gated_mlp = [&](bool shared, const char* act, double width, std::int64_t layers) {
      auto mine = [&](const TensorSpec& t) {
        return t.kind == TensorKind::kLinear && is_shared_expert(t) == shared;
      };
      each([&](const TensorSpec& t) { return mine(t) && (t.projections & gate_up) != 0; });
      emit_activation(act, T_, width, layers);
      each([&](const TensorSpec& t) { return mine(t) && t.projections == kProjDown; });
    };
    if (a_.dense_layers() > 0)
      gated_mlp(false, "mlp.act", static_cast<double>(a_.intermediate), a_.dense_layers());
    // Mixture-of-experts layers, in their forward order: router, routing, experts, combine, then
    // the shared experts, a gated MLP every token passes (DeepSeek-V2 §2.2, Qwen2-MoE, Llama 4).
    if (a_.is_moe() && a_.moe_layers > 0) {
      each([&](const TensorSpec& t) { return t.kind == TensorKind::kRouter; });
      emit_moe_routing(true);
      each([&](const TensorSpec& t) {
        return t.kind == TensorKind::kExpert && (t.projections & gate_up) != 0;
      });
      const double per_expert =
          T_ * static_cast<double>(a_.experts_per_token) / static_cast<double>(a_.num_experts);
      emit_activation("moe.expert.act", per_expert, static_cast<double>(a_.moe_intermediate),
                      a_.moe_layers * a_.num_experts);
      each([&](const TensorSpec& t) {
        return t.kind == TensorKind::kExpert && t.projections == kProjDown;
      });
      emit_moe_routing(false);
      if (a_.shared_expert_intermediate > 0)
        gated_mlp(true, "moe.shared.act", static_cast<double>(a_.shared_expert_intermediate),
                  a_.moe_layers);
      if (a_.shared_expert_gate) {
        // Qwen2-MoE (modeling_qwen2_moe.py): sigmoid(shared_expert_gate(x)) · shared_expert(x),
        // a one-wide product, then a per-token scale of the shared expert's output.
        each([&](const TensorSpec& t) {
          return t.kind == TensorKind::kLinear && is_shared_expert(t) && t.projections == 0;
        });
        emit_shared_expert_scale();
      }
    }

    for (auto& op : block_fwd_)
      out_.ops.push_back(op);
  }

  void emit_embedding() {
    const double H = static_cast<double>(a_.hidden);
    // Lookup: reads the token ids and T rows of the table, writes T×H.
    out_.ops.push_back(vector_op("embedding.fwd", OpClass::kEmbedding, Phase::kForward, 0,
                                 kIndex * T_ + 2 * kAct * T_ * H, 1));
  }

  void emit_head() {
    const double H = static_cast<double>(a_.hidden);
    const double V = static_cast<double>(a_.output_width());
    const bool trained = set_.output_role().trained();
    const TensorPrecision bf16 = TensorPrecision::kBF16;
    // Final RMSNorm, output layer and loss. The output layer stays in BF16 under FP8 recipes
    // (Transformer Engine / Megatron keep embedding and output layers in higher precision).
    const double norm_fwd_bytes = norm_bytes(false) * T_ * H + kAct * H + kFp32 * T_;
    out_.ops.push_back(vector_op("norm.final.fwd", OpClass::kNorm, Phase::kForward,
                                 kRmsNormFlops * T_ * H, norm_fwd_bytes, 1));
    // The output layer's FP32 weight cast under autocast, and its gradient's cast back (see
    // emit_linear).
    const bool head_casts = trained && weight_casts_;
    if (head_casts)
      out_.ops.push_back(vector_op("lm_head.weight_cast.fwd", OpClass::kElementwise,
                                   Phase::kForward, V * H, (kFp32 + kAct) * V * H, 1));
    out_.ops.push_back(gemm_op("lm_head.fwd", OpClass::kGemm, Phase::kForward, {T_, V, H}, kAct,
                               kAct, kAct, bf16, 1, true));
    // Cross-entropy: log-softmax over V per token in FP32 (reads the BF16 logits, writes FP32
    // log-probabilities) and the NLL of the labels; the backward reads the log-probabilities and
    // writes the BF16 logit gradient (softmax − one-hot). A fused kernel's traffic; unfused
    // upcasts move more.
    const double logits = T_ * V;
    out_.ops.push_back(vector_op("loss.fwd", OpClass::kLoss, Phase::kForward,
                                 kSoftmaxFlops * logits, (kAct + kFp32) * logits + kIndex * T_, 1));

    // Backward, in execution order.
    out_.ops.push_back(vector_op("loss.bwd", OpClass::kLoss, Phase::kBackward, 2 * logits,
                                 (kFp32 + kAct) * logits, 1));
    out_.ops.push_back(gemm_op("lm_head.dgrad", OpClass::kGemm, Phase::kBackward, {T_, H, V}, kAct,
                               kAct, kAct, bf16, 1, true));
    if (trained)
      out_.ops.push_back(gemm_op("lm_head.wgrad", OpClass::kGemm, Phase::kBackward, {V, H, T_},
                                 kAct, kAct, kAct, bf16, 1, true));
    if (head_casts)
      out_.ops.push_back(vector_op("lm_head.weight_cast.bwd", OpClass::kElementwise,
                                   Phase::kBackward, V * H, (kFp32 + kAct) * V * H, 1));
    out_.ops.push_back(vector_op("norm.final.bwd", OpClass::kNorm, Phase::kBackward,
                                 kRmsNormBackwardFlops * T_ * H,
                                 norm_bytes(true) * T_ * H + kAct * H + kFp32 * T_, 1));

    // Recomputation of the blocks' forward in the backward pass (activation checkpointing):
    // full = every block's forward once more (Hugging Face gradient checkpointing, Megatron
    // "full"); selective = the attention core only (Korthikanti et al. 2022 §5), or under the
    // per-op policy everything but the kept products and the attention kernel.
    const bool per_op = w_.recompute == Recompute::kSelective && w_.stack &&
                        w_.stack->selective == SelectivePolicy::kPerOp;
    if (w_.recompute == Recompute::kFull) {
      // Layer-wise checkpointing rebuilds only its share of each kind of block.
      for (const auto& op : block_fwd_) {
        Op r = recompute_copy(op);
        r.count = w_.recomputed_blocks(op.count);
        if (r.count > 0) out_.ops.push_back(std::move(r));
      }
    } else if (per_op) {
      const bool kernel_kept = w_.attention != Attention::kEager;
      for (const auto& op : block_fwd_) {
        if (per_op_kept_.contains(op.name) || (kernel_kept && attention_kernels_.contains(op.name)))
          continue;
        out_.ops.push_back(recompute_copy(op));
      }
    } else if (w_.recompute == Recompute::kSelective) {
      for (const auto& op : attention_fwd_)
        out_.ops.push_back(recompute_copy(op));
    }
    for (auto it = block_bwd_groups_.rbegin(); it != block_bwd_groups_.rend(); ++it)
      for (auto& op : *it)
        out_.ops.push_back(std::move(op));

    if (const TensorRole* embedding = set_.embedding_role(); embedding && embedding->trained()) {
      // Embedding gradient: PyTorch's dense embedding backward zero-fills the V×H gradient and
      // adds the T rows of dY into it (read-modify-write).
      out_.ops.push_back(vector_op("embedding.wgrad", OpClass::kEmbedding, Phase::kBackward, T_ * H,
                                   kAct * V * H + 3 * kAct * T_ * H, 1));
    }
  }

  Op recompute_copy(const Op& op) const {
    Op r = op;
    r.name = replace_suffix(op.name, ".fwd", ".recompute");
    r.phase = Phase::kRecompute;
    r.model_flops = false;  // hardware FLOPs, not model FLOPs
    return r;
  }

  void emit_optimizer() {
    // One pass over the trained states: reads weight, gradient, master copy and optimizer
    // states; writes weight, master copy and states back (a fused multi-tensor update), priced
    // per trained tensor by the optimizer table.
    double flops = 0, bytes = 0, tensors = 0;
    for (const TrainedMatrix& m : set_.trained) {
      // Pure BF16 drops the master copy (and halves states that follow the parameter's dtype),
      // as memory/states_on_card counts them; PEFT's FP32 adapters stay FP32 there.
      const ParamPrecision precision = act_.precision_of(m, w_.options.pure_bf16);
      const OptimizerCost c = optimizer_cost(w_.optimizer, m, precision);
      const double read = c.weight_bytes + c.gradient_bytes + c.master_bytes + c.state_bytes;
      const double written = c.weight_bytes + c.master_bytes + c.state_bytes;
      flops += c.update_flops;
      bytes += row_for(w_.optimizer, m).memory_passes * (read + written);
      tensors += static_cast<double>(m.copies);
    }
    // The run's implementation (its stack's unless it names one): multi-pass kernels move the
    // states several times, per-tensor loops launch kernels per trained tensor.
    Op update =
        vector_op("optimizer.update", OpClass::kOptimizer, Phase::kOptimizer, flops, bytes, 1);
    const OptimizerKernels k = optimizer_kernels(optimizer_impl(w_), w_.stack);
    update.bytes = update.bytes * k.passes;
    if (k.launches_per_tensor > 0) update.launches = k.launches_per_tensor * tensors;
    out_.ops.push_back(std::move(update));
    emit_orthogonalization();
  }

  // Muon: each update of a hidden matrix X [m × n] (m <= n) is orthogonalised by Newton-Schulz
  // iterations in BF16 (Jordan et al. 2024): A = X·Xᵀ, B = b·A + c·A·A, X = a·X + B·X.
  void emit_orthogonalization() {
    const OptimizerRow& row = optimizer_row(w_.optimizer);
    if (row.orthogonalize_steps == 0) return;
    const TensorPrecision bf16 = TensorPrecision::kBF16;
    // Matrices of one shape are orthogonalised alike: one op per shape.
    std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, std::int64_t>> shapes;
    for (const TrainedMatrix& m : set_.trained) {
      if (row_for(w_.optimizer, m).orthogonalize_steps == 0 || !m.matrix) continue;
      const auto key = std::make_pair(std::min(m.rows, m.cols), std::max(m.rows, m.cols));
      auto it =
          std::find_if(shapes.begin(), shapes.end(), [&](const auto& e) { return e.first == key; });
      if (it == shapes.end())
        shapes.push_back({key, m.copies});
      else
        it->second += m.copies;
    }
    for (const auto& [key, copies] : shapes) {
      const double rows = static_cast<double>(key.first), cols = static_cast<double>(key.second);
      const std::int64_t count = copies * row.orthogonalize_steps;
      const std::string base = fmt::format("optimizer.newton_schulz.{}x{}", key.first, key.second);
      out_.ops.push_back(gemm_op(base + ".gram", OpClass::kGemm, Phase::kOptimizer,
                                 {rows, rows, cols}, kAct, kAct, kAct, bf16, count, false));
      out_.ops.push_back(gemm_op(base + ".square", OpClass::kGemm, Phase::kOptimizer,
                                 {rows, rows, rows}, kAct, kAct, kAct, bf16, count, false));
      out_.ops.push_back(gemm_op(base + ".apply", OpClass::kGemm, Phase::kOptimizer,
                                 {rows, cols, rows}, kAct, kAct, kAct, bf16, count, false));
    }
  }

  const Workload& w_;
  const TrainedSet& set_;
  const ModelArch& a_;
  double T_ = 0;                      // tokens a micro-batch processes (padding included)
  double stream_ = kAct;              // bytes per element of the residual stream (FP32: 4)
  ActivationSettings act_;            // the settings the activations are counted with
  bool eager_lora_ = false;           // adapters run as separate eager kernels (no compile/fusion)
  bool weight_casts_ = false;         // StackProfile::autocast_weight_casts for this run
  std::vector<LengthBin> lengths_;    // the samples' lengths (variable lengths only)
  std::vector<LengthBin> batch_max_;  // the longest of a padded micro-batch (unpacked, padded)
  bool low_precision_ = false;
  ComputeFormat base_format_ = ComputeFormat::kBF16;
  StepOps out_;
  std::vector<Op> block_fwd_;
  std::vector<Op> attention_fwd_;
  std::vector<std::vector<Op>> block_bwd_groups_;
  // The per-op selective policy (workload/stack.hpp): the block's matrix products in forward
  // order, and the forward ops whose outputs it keeps.
  int per_op_index_[2] = {0, 0};  // dense blocks, MoE blocks
  std::set<std::string, std::less<>> per_op_kept_;
  std::set<std::string, std::less<>> attention_kernels_;  // the attention cores' forward ops
};

}  // namespace

StepOps build_step_ops(const Workload& w) {
  validate(w);
  const TrainedSet set = trained_set(w);  // rejects LoRA targets that split a fused module
  if (set.any_quantized && w.precision != ComputeFormat::kBF16 &&
      w.precision != ComputeFormat::kFP16)
    throw UserError(ErrorCode::kUnsupported,
                    fmt::format("QLoRA multiplies in BF16 (bitsandbytes dequantizes each NF4 "
                                "weight to BF16 for every GEMM), so --precision {} does not apply; "
                                "use bf16, or LoRA/full fine-tuning for {}",
                                compute_format_name(w.precision), compute_format_name(w.precision)),
                    "precision");
  return Builder(w, set).build();
}

}  // namespace ftplan
