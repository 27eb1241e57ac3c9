// CPU reference implementations of what ftplan-bench runs on the GPU: number formats (BF16,
// FP8 E4M3), NF4 with double quantization, RMSNorm, one AdamW step, and the error measures the
// GPU results are checked with. Plain C++17, no CUDA: the test suite exercises them without a GPU.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ftplan::bench {

// ---- number formats ----------------------------------------------------------------------------

// BF16 is the upper half of an IEEE-754 binary32: 1 sign, 8 exponent, 7 mantissa bits. Rounding
// to nearest, ties to even (what __float2bfloat16_rn does); a NaN stays a (quiet) NaN.
std::uint16_t float_to_bf16_bits(float x);
float bf16_bits_to_float(std::uint16_t bits);
inline float round_to_bf16(float x) {
  return bf16_bits_to_float(float_to_bf16_bits(x));
}

// FP8 E4M3 (OCP 8-bit floating point specification v1.0, the "FN" variant NVIDIA implements):
// 1 sign, 4 exponent bits with bias 7, 3 mantissa bits, subnormals, no infinities; S.1111.111 is
// NaN, so the largest finite magnitude is 1.75 · 2^8 = 448.
float fp8_e4m3_bits_to_float(std::uint8_t bits);

// ---- NF4 with double quantization (Dettmers et al. 2023, "QLoRA", §3 and appendix E) ----------

// The 16 NF4 levels: quantiles of N(0, 1) normalised to [-1, 1], with an exact zero (QLoRA §3;
// the table bitsandbytes ships).
const std::array<float, 16>& nf4_code_table();

struct Nf4Layout {
  int block = 64;          // weights per first-level block (one absmax each)
  int second_block = 256;  // first-level absmax values per second-level FP32 constant
};

// A weight tensor in NF4 with double-quantized constants, laid out as the GPU kernel reads it:
//   codes          ceil(n/2) bytes: two 4-bit level indices per byte, element 2i in the high nibble
//                  (bitsandbytes' packing);
//   absmax_codes   one signed byte per block of `block` weights: the block's absmax, less the
//                  tensor-wide offset, as a symmetric 8-bit code: round(127·(absmax −
//                  offset)/scale);
//   absmax_scales  one FP32 per `second_block` blocks: max |absmax − offset| over them;
//   absmax_offset  one FP32 per tensor: the mean of all block absmax values (QLoRA centres the
//                  constants before quantizing them, since absmax values are all positive).
// QLoRA quantizes the first-level constants to 8-bit floats (bitsandbytes' dynamic map); this
// reference uses a linear 8-bit code instead. Bytes stored and bytes a dequantization moves are
// the same, which is what the benchmark measures.
struct Nf4Tensor {
  std::int64_t numel = 0;
  Nf4Layout layout;
  std::vector<std::uint8_t> codes;
  std::vector<std::int8_t> absmax_codes;
  std::vector<float> absmax_scales;
  float absmax_offset = 0.0f;

  std::int64_t blocks() const;
  // Bytes of codes + constants: ceil(n/2) + blocks + 4·ceil(blocks/second_block); the one FP32
  // offset per tensor is not counted (4 B per weight matrix, as memory/model_states leaves it out).
  std::int64_t bytes() const;
};

// Quantizes n weights: per block, absmax = max |w|; each weight becomes the nearest NF4 level of
// w / absmax; then the absmax values are double-quantized as above.
Nf4Tensor nf4_quantize(const float* weights, std::int64_t n, Nf4Layout layout = {});
// The block's absmax as the kernel reconstructs it: code · (scale / 127) + offset, in FP32.
float nf4_block_absmax(const Nf4Tensor& t, std::int64_t block);
// Weight i: level[code] · absmax of its block, in FP32 (the GPU kernel then rounds it to BF16).
float nf4_dequantize_element(const Nf4Tensor& t, std::int64_t i);
std::vector<float> nf4_dequantize(const Nf4Tensor& t);
// Half the widest gap between adjacent NF4 levels: the largest error, relative to the block's
// absmax, of rounding a normalised weight to its nearest level.
double nf4_max_half_gap();

// ---- RMSNorm (Zhang & Sennrich 2019) -----------------------------------------------------------

// Row r of `rows` rows of `hidden` values, in double:
//   y[r][i] = x[r][i] / sqrt(mean_i x[r][i]² + eps) · weight[i]
void rmsnorm(const float* x, const float* weight, std::int64_t rows, std::int64_t hidden,
             double eps, double* y);

// ---- AdamW (Loshchilov & Hutter 2019), in the order torch.optim.AdamW applies it -------------

struct AdamWHyper {
  double lr = 1e-4;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
};

// Step `step` (1-based) on n parameters, in place, in double:
//   p ← p · (1 − lr·wd)                          decoupled weight decay
//   m ← β1·m + (1 − β1)·g ;  v ← β2·v + (1 − β2)·g²
//   p ← p − lr · (m / (1 − β1^step)) / (sqrt(v / (1 − β2^step)) + eps)
void adamw_step(const AdamWHyper& h, std::int64_t step, const float* grad, double* param, double* m,
                double* v, std::int64_t n);

// ---- error measures ----------------------------------------------------------------------------

// One element of a matrix product, Σ_p a[p]·b[p] in double, with the scale its rounding error is
// measured against: sqrt(Σ_p (a[p]·b[p])²), the size of a sum of k terms of random sign. An error
// relative to max(|value|, scale) stays meaningful when the sum cancels to near zero.
struct DotReference {
  double value = 0.0;
  double scale = 0.0;
};
DotReference dot_reference(const float* a, const float* b, std::int64_t k);

// |got − want| / max(|want|, floor).
double relative_error(double got, double want, double floor);

// The worst error over a set of compared values, against a bound stated by the caller.
struct ErrorTally {
  std::string metric;  // how one error is measured, e.g. "|gpu - ref| / max(|ref|, 1e-3)"
  double bound = 0.0;
  double max_error = 0.0;
  std::int64_t samples = 0;
  std::int64_t over_bound = 0;  // compared values whose error exceeds the bound (or is NaN)

  void add(double error);
  bool passed() const { return samples > 0 && over_bound == 0; }
};

}  // namespace ftplan::bench
