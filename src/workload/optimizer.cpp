#include "workload/optimizer.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace ftplan {

namespace {

// Update FLOPs per parameter, one FLOP per add, multiply, divide, sqrt, sign:
// AdamW: m = β1·m + (1−β1)·g (3); v = β2·v + (1−β2)·g² (4); w −= lr·(m/(√v + ε) + λ·w) (7)
//   (Loshchilov & Hutter 2019); bias corrections are per tensor.
constexpr double kAdamWFlops = 14;
// 8-bit AdamW: as AdamW, plus dequantizing and requantizing m and v (Dettmers et al. 2022): 2 each.
constexpr double kAdamW8bitFlops = 18;

const std::vector<OptimizerRow> kRows = {
    // ZeRO paper (Rajbhandari et al. 2020, §3.1): mixed-precision Adam keeps 2Ψ + 2Ψ + KΨ bytes,
    // K = 12 (FP32 master, momentum, variance): 16 B per parameter, the seed's count.
    {Optimizer::kAdamW, "adamw", 2, 2, 4, 2, 8, "FP32", true, false, false, true, kAdamWFlops, 1, 1,
     MatrixRule::kEvery, Optimizer::kAdamW, 0,
     "mixed-precision AdamW, ZeRO count: 2 + 2 + 4 + 4 + 4 = 16 B"},
    // bitsandbytes 8-bit Adam (Dettmers et al. 2022): m and v as 8-bit codes, 1 B each; the seed's
    // count 2 + 2 + 4 + 1 + 1 = 10 B. Block-wise absmax constants (4 B per 256 values and state,
    // +0.03 B) are left out, as in the seed.
    {Optimizer::kAdamW8bit, "adamw-8bit", 2, 2, 4, 2, 2, "8-bit blockwise", false, false, false,
     false, kAdamW8bitFlops, 1, 0, MatrixRule::kEvery, Optimizer::kAdamW8bit, 0,
     "8-bit AdamW, seed/ZeRO count: 2 + 2 + 4 + 1 + 1 = 10 B"},
    {Optimizer::kPagedAdamW, "paged-adamw", 2, 2, 4, 2, 8, "FP32", true, false, true, true,
     kAdamWFlops, 1, 0, MatrixRule::kEvery, Optimizer::kPagedAdamW, 0,
     "bitsandbytes PagedAdamW: as AdamW, states in unified memory"},
    {Optimizer::kPagedAdamW8bit, "paged-adamw-8bit", 2, 2, 4, 2, 2, "8-bit blockwise", false, false,
     true, false, kAdamW8bitFlops, 1, 0, MatrixRule::kEvery, Optimizer::kPagedAdamW8bit, 0,
     "bitsandbytes PagedAdamW8bit: as 8-bit AdamW, paged"},
    // Pure BF16 training (e.g. Hugging Face PEFT's MetaMathQA runs, torchtune dtype=bf16):
    // weight, gradient, m and v all in BF16, no FP32 master: 8 B.
    {Optimizer::kAdamWBf16, "adamw-bf16", 2, 2, 0, 2, 4, "BF16", true, false, false, true,
     kAdamWFlops, 1, 1, MatrixRule::kEvery, Optimizer::kAdamWBf16, 0,
     "pure-BF16 AdamW: 2 + 2 + 2 + 2 = 8 B"},
    // buf = μ·buf + g (2); w −= lr·(buf + λ·w) (4).
    {Optimizer::kSgdMomentum, "sgd-momentum", 2, 2, 4, 1, 4, "FP32", true, false, false, true, 6, 1,
     0, MatrixRule::kEvery, Optimizer::kSgdMomentum, 0,
     "SGD with momentum, mixed precision: 2 + 2 + 4 + 4 = 12 B"},
    // w −= lr·(g + λ·w).
    {Optimizer::kSgd, "sgd", 2, 2, 4, 0, 0, "-", false, false, false, true, 4, 1, 0,
     MatrixRule::kEvery, Optimizer::kSgd, 0, "plain SGD, mixed precision: 2 + 2 + 4 = 8 B"},
    // Shazeer & Stern 2018: no first moment (beta1 = None, the Hugging Face default); the second
    // moment of an r x c matrix is kept as r + c FP32 values (state_bytes: per kept value);
    // vectors keep it in full. Update: row/column mean squares (≈4), the factored estimate (≈3),
    // rsqrt update and clipping (≈5).
    {Optimizer::kAdafactor, "adafactor", 2, 2, 4, 1, 4, "FP32 row + column", false, true, false,
     false, 12, 1, 0, MatrixRule::kEvery, Optimizer::kAdafactor, 0,
     "Adafactor: 2 + 2 + 4 B plus 4 B x (rows + cols) per matrix"},
    // Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms", Algorithm 2): one
    // momentum. c = β1·m + (1−β1)·g (3); w −= lr·(sign(c) + λ·w) (1 + 4); m = β2·m + (1−β2)·g (3).
    {Optimizer::kLion, "lion", 2, 2, 4, 1, 4, "FP32", true, false, false, true, 11, 1, 0,
     MatrixRule::kEvery, Optimizer::kLion, 0,
     "Lion, mixed precision: 2 + 2 + 4 + 4 (momentum) = 12 B"},
    // Muon (Jordan et al. 2024; Liu et al. 2025, "Muon is Scalable for LLM Training"): 2-D hidden
    // weights keep one momentum; each update is the Nesterov momentum (4), scaled to unit
    // Frobenius norm (2) and orthogonalised by 5 Newton-Schulz iterations in BF16, then applied
    // with decoupled weight decay and the shape scale (3). Embeddings, the output layer, norms
    // and biases are trained with AdamW.
    {Optimizer::kMuon, "muon", 2, 2, 4, 1, 4, "FP32", true, false, false, false, 9, 1, 0,
     MatrixRule::kHiddenMatrices, Optimizer::kAdamW, 5,
     "Muon: hidden matrices 2 + 2 + 4 + 4 (momentum) = 12 B; others AdamW, 16 B"},
};

}  // namespace

const std::vector<OptimizerRow>& optimizer_table() {
  return kRows;
}

const OptimizerRow& optimizer_row(Optimizer o) {
  for (const auto& r : kRows)
    if (r.id == o) return r;
  return kRows.front();  // unreachable: every enumerator has a row (tested)
}

std::string_view optimizer_name(Optimizer o) {
  return optimizer_row(o).name;
}

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& r : kRows)
      v.emplace_back(r.name);
    return v;
  }();
  return names;
}

Optimizer parse_optimizer(std::string_view name, std::string_view field) {
  for (const auto& r : kRows)
    if (r.name == name) return r.id;
  throw_unknown_name("optimizer", field, name, optimizer_names());
}

const OptimizerRow& row_for(Optimizer o, const TrainedMatrix& m) {
  const OptimizerRow& r = optimizer_row(o);
  if (r.rule == MatrixRule::kHiddenMatrices && !(m.matrix && m.hidden))
    return optimizer_row(r.others);
  return r;
}

double newton_schulz_flops_per_step(std::int64_t rows, std::int64_t cols) {
  const double m = static_cast<double>(std::min(rows, cols));
  const double n = static_cast<double>(std::max(rows, cols));
  return 4 * m * m * n + 2 * m * m * m + 3 * m * m + 2 * m * n;
}

OptimizerCost optimizer_cost(Optimizer o, const TrainedMatrix& m) {
  const OptimizerRow& r = row_for(o, m);
  const double n = static_cast<double>(m.numel());
  OptimizerCost c;
  c.weight_bytes = r.weight_bytes * n;
  c.gradient_bytes = r.gradient_bytes * n;
  c.master_bytes = r.master_bytes * n;
  if (r.factored)
    c.state_bytes =
        r.state_bytes * (m.matrix ? static_cast<double>((m.rows + m.cols) * m.copies) : n);
  else
    c.state_bytes = r.state_bytes * n;
  c.update_flops = r.update_flops * n;
  if (r.orthogonalize_steps > 0 && m.matrix)
    c.orthogonalize_flops = r.orthogonalize_steps * newton_schulz_flops_per_step(m.rows, m.cols) *
                            static_cast<double>(m.copies);
  return c;
}

OptimizerCost optimizer_cost(Optimizer o, const TrainedMatrix& m, ParamPrecision p) {
  OptimizerCost c = optimizer_cost(o, m);
  const OptimizerRow& r = row_for(o, m);
  if (p == ParamPrecision::kMixed || r.master_bytes <= 0) return c;
  const double n = static_cast<double>(m.numel());
  c.master_bytes = 0;
  if (p == ParamPrecision::kFp32) {
    c.weight_bytes = r.master_bytes * n;
    c.gradient_bytes = r.master_bytes * n;
  } else if (r.states_follow_parameter_dtype) {
    c.state_bytes /= 2.0;
  }
  return c;
}

}  // namespace ftplan
