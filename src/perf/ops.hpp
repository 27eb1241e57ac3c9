// The operation model of one training micro-batch on one card: every GEMM, attention core,
// adapter, dequantization, norm, element-wise op, embedding, loss and optimizer update, with its
// FLOPs, the bytes it moves (each input read once, each output written once), the precision it runs
// at and how many times it runs. Built once per workload; timing it on a card is perf/step.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/gpu.hpp"
#include "core/units.hpp"
#include "workload/workload.hpp"

namespace ftplan {

enum class OpClass {
  kGemm,         // a linear layer's matrix product (forward, input gradient, weight gradient)
  kAttention,    // the attention core: scores, softmax, weighted sum of values
  kAdapter,      // LoRA A and B products
  kDequant,      // NF4 -> BF16 dequantization of a QLoRA base weight
  kNorm,         // RMSNorm (also the q/k norms of Qwen3 and Gemma 3)
  kElementwise,  // activations, residual adds, rotary embedding, adapter adds, format casts, MoE
                 // routing
  kEmbedding,    // token embedding lookup and its gradient
  kLoss,         // log-softmax and cross-entropy over the vocabulary
  kOptimizer,    // the update of the trained states
};
inline constexpr std::size_t kOpClassCount = 9;
inline constexpr std::array<OpClass, kOpClassCount> kAllOpClasses = {
    OpClass::kGemm,      OpClass::kAttention, OpClass::kAdapter,
    OpClass::kDequant,   OpClass::kNorm,      OpClass::kElementwise,
    OpClass::kEmbedding, OpClass::kLoss,      OpClass::kOptimizer};
std::string_view op_class_name(OpClass c);  // "gemm", "attention", ...
const std::vector<std::string>& op_class_names();

enum class Phase { kForward, kBackward, kRecompute, kOptimizer };
inline constexpr std::size_t kPhaseCount = 4;
std::string_view phase_name(Phase p);  // "forward", "backward", "recompute", "optimizer"

// The attention kernel an attention-core op runs as, where its achieved fraction of the tensor
// rate depends on the card's architecture (data/efficiency/default.yaml, attention_kernels).
// PyTorch SDPA's flash backend and the flash-attn package are FlashAttention-2 on Ampere, Ada and
// Hopper; eager attention is plain GEMMs and softmax, timed with its class's curve (kNone).
enum class AttentionKernel : std::int8_t { kNone = -1, kFlash2 = 0 };
inline constexpr std::size_t kAttentionKernelCount = 1;
std::string_view attention_kernel_name(AttentionKernel k);  // "flash2"

// Where an op's arithmetic runs: the tensor cores at a tensor precision, or the CUDA cores in FP32
// (element-wise work; its rate is the card's plain FP32 figure).
enum class ComputeUnit { kTensor, kVector };

// C[M×N] = A[M×K] · B[K×N]. For a linear layer's forward pass M = tokens, N = output features,
// K = input features. M may be fractional for the experts of a MoE layer (routed tokens per
// expert, an average).
struct GemmShape {
  double m = 0;
  double n = 0;
  double k = 0;
  bool valid() const { return m > 0 && n > 0 && k > 0; }
};

// FLOPs and bytes of one GEMM. NVIDIA "Matrix Multiplication Background" user guide: a GEMM does
// M·N·K fused multiply-adds = 2·M·N·K FLOPs and, at best, reads A and B once and writes C once:
// bytes = a·M·K + b·K·N + c·M·N for element sizes a, b, c. Arithmetic intensity = FLOPs / bytes
// (seed R1: 2MNK / (bytes · (MK + KN + MN)) when all three share one element size).
struct GemmCost {
  Flops flops;
  Bytes bytes;
};
GemmCost gemm_cost(const GemmShape& s, double a_bytes, double b_bytes, double c_bytes);
inline GemmCost gemm_cost(const GemmShape& s, double element_bytes) {
  return gemm_cost(s, element_bytes, element_bytes, element_bytes);
}

// Bytes of one element of a tensor precision as a GEMM reads it (fp8: 1, bf16: 2, fp4: 0.5, ...).
double element_bytes(TensorPrecision p);
// The tensor rate a training format runs at: MXFP8 at the FP8 rate, NVFP4 at the FP4 rate.
TensorPrecision tensor_precision_of(ComputeFormat f);
// Bytes per element of a GEMM operand in a training format, block scales included: BF16/FP16 2;
// FP8 1; MXFP8 1 + 1/32 (one 8-bit E8M0 scale per 32 elements, OCP Microscaling spec v1.0);
// NVFP4 0.5 + 1/16 (one FP8 E4M3 scale per 16 elements; the per-tensor FP32 scale is negligible;
// NVIDIA's NVFP4 description).
double operand_bytes(ComputeFormat f);

struct Op {
  std::string name;  // stable: "attn.q_proj.fwd", "mlp.up_proj.wgrad", "attention.core.bwd", ...
  OpClass op_class = OpClass::kElementwise;
  Phase phase = Phase::kForward;
  ComputeUnit unit = ComputeUnit::kVector;
  TensorPrecision precision = TensorPrecision::kBF16;  // tensor ops: the rate used
  Flops flops;                                         // per execution
  Bytes bytes;               // per execution: inputs read once, outputs written once
  std::int64_t count = 1;    // executions per micro-batch (optimizer: per step)
  GemmShape gemm;            // GEMMs and adapter products; m = 0 otherwise
  bool model_flops = false;  // counts towards the useful model FLOPs (MFU numerator)
  // Kernel launches per execution; negative: as its class launches (the efficiency table's host
  // costs, eager or compiled).
  double launches = -1;
  AttentionKernel kernel = AttentionKernel::kNone;  // attention-core ops: the kernel they run as

  double intensity() const { return ftplan::intensity(flops, bytes); }
  Flops total_flops() const { return flops * static_cast<double>(count); }
  Bytes total_bytes() const { return bytes * static_cast<double>(count); }
};

// One micro-batch's operations (and the optimizer update), for one workload.
struct StepOps {
  std::vector<Op> ops;
  std::int64_t tokens_per_micro_batch = 0;         // real tokens: seq × micro_batch, or the mean's
  std::int64_t grad_accum = 1;                     // micro-batches per optimizer step
  std::int64_t layers = 0;                         // decoder layers
  ComputeFormat precision = ComputeFormat::kBF16;  // of the block linear layers
  // The peak that model FLOPs utilisation is measured against: the block GEMMs' tensor rate.
  TensorPrecision mfu_precision = TensorPrecision::kBF16;
  // Tensor precisions any op runs at (bit i = TensorPrecision i): what a card must publish.
  std::uint32_t tensor_precisions_used = 0;
  bool compiled = false;             // torch.compile or fused kernels: fewer launches per op
  bool micro_batch_overhead = true;  // the stack adds the host's fixed time per micro-batch

  // Sums per micro-batch over the forward, backward and recompute phases (not the optimizer).
  Flops micro_batch_flops() const;
  Bytes micro_batch_bytes() const;
  // Useful model FLOPs per micro-batch: 6·N_active·tokens for a full fine-tune (Kaplan et al.
  // 2020; Narayanan et al. 2021): forward 2N, input gradient 2N, weight gradient 2N per token. For
  // LoRA/QLoRA the frozen base gets no weight gradient: forward + input gradient (4·N_active per
  // token) + the adapters' forward and both gradients. Attention scores, element-wise work and
  // recomputation are not counted (they are hardware FLOPs, not model FLOPs).
  Flops model_flops_per_micro_batch() const;
  bool uses(TensorPrecision p) const {
    return (tensor_precisions_used >> static_cast<unsigned>(p)) & 1u;
  }
};

// The op list of one micro-batch of `w`. Throws UserError for a combination the model does not
// cover (QLoRA with an FP8/FP4 compute format: bitsandbytes dequantizes NF4 to BF16 and multiplies
// in BF16, seed T7).
StepOps build_step_ops(const Workload& w);

// The number of (query, key) pairs causal attention evaluates in one sequence of `seq` tokens
// when each query sees at most `window` keys (window <= 0: no window): Σ_i min(i + 1, window).
double causal_pairs(std::int64_t seq, std::int64_t window);
// The same for a (mean) length that need not be whole.
double causal_pairs_at(double seq, double window);

}  // namespace ftplan
