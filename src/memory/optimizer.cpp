#include "memory/optimizer.hpp"

namespace ftplan {

OptimizerBytes optimizer_bytes(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW:
      // ZeRO paper (Rajbhandari et al. 2020, §3.1): mixed-precision Adam keeps 2Ψ + 2Ψ + KΨ bytes,
      // K = 12 (FP32 master, momentum, variance): 16 B per parameter, the seed's count.
      return {
          2, 2, 4, 8, false, false, "mixed-precision AdamW, ZeRO count: 2 + 2 + 4 + 4 + 4 = 16 B"};
    case Optimizer::kPagedAdamW:
      return {
          2, 2, 4, 8, false, true, "bitsandbytes PagedAdamW: as AdamW, states in unified memory"};
    case Optimizer::kAdamW8bit:
      // bitsandbytes 8-bit Adam (Dettmers et al. 2022): m and v as 8-bit codes, 1 B each; the
      // seed's count 2 + 2 + 4 + 1 + 1 = 10 B. Block-wise absmax constants (4 B per 256 values and
      // state, +0.03 B) are left out, as in the seed.
      return {2, 2, 4, 2, false, false, "8-bit AdamW, seed/ZeRO count: 2 + 2 + 4 + 1 + 1 = 10 B"};
    case Optimizer::kPagedAdamW8bit:
      return {2, 2, 4, 2, false, true, "bitsandbytes PagedAdamW8bit: as 8-bit AdamW, paged"};
    case Optimizer::kAdamWBf16:
      // Pure BF16 training (e.g. Hugging Face PEFT's MetaMathQA runs, torchtune dtype=bf16):
      // weight, gradient, m and v all in BF16, no FP32 master: 8 B.
      return {2, 2, 0, 4, false, false, "pure-BF16 AdamW: 2 + 2 + 2 + 2 = 8 B"};
    case Optimizer::kSgdMomentum:
      return {2, 2, 4, 4, false, false, "SGD with momentum, mixed precision: 2 + 2 + 4 + 4 = 12 B"};
    case Optimizer::kSgd:
      return {2, 2, 4, 0, false, false, "plain SGD, mixed precision: 2 + 2 + 4 = 8 B"};
    case Optimizer::kAdafactor:
      // Shazeer & Stern 2018: no first moment (beta1 = None, the Hugging Face default); the second
      // moment of an r x c matrix is kept as r + c FP32 values; vectors keep it in full.
      return {
          2, 2, 4, 0, true, false, "Adafactor: 2 + 2 + 4 B plus 4 B x (rows + cols) per matrix"};
  }
  return {2, 2, 4, 8, false, false, ""};
}

}  // namespace ftplan
