#include "reference.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

namespace ftplan::bench {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

std::size_t index(std::int64_t i) {
  assert(i >= 0);
  return static_cast<std::size_t>(i);
}

// Index of the NF4 level nearest to a normalised weight x in [-1, 1] (ties go to the lower level).
std::uint8_t nearest_nf4_level(float x) {
  const auto& levels = nf4_code_table();
  std::uint8_t best = 0;
  float best_distance = std::numeric_limits<float>::infinity();
  for (std::size_t k = 0; k < levels.size(); ++k) {
    const float distance = std::fabs(x - levels[k]);
    if (distance < best_distance) {
      best_distance = distance;
      best = static_cast<std::uint8_t>(k);
    }
  }
  return best;
}

}  // namespace

// ---- number formats ----------------------------------------------------------------------------

std::uint16_t float_to_bf16_bits(float x) {
  std::uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)  // NaN: keep the sign and the top payload bits, set quiet
    return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  // Round to nearest, ties to even: add half an ulp of the result (0x7fff) plus the parity bit.
  const std::uint32_t parity = (u >> 16) & 1u;
  u += 0x7fffu + parity;
  return static_cast<std::uint16_t>(u >> 16);
}

float bf16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float x = 0.0f;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

float fp8_e4m3_bits_to_float(std::uint8_t bits) {
  const bool negative = (bits & 0x80u) != 0;
  const int exponent = (bits >> 3) & 0xf;
  const int mantissa = bits & 0x7;
  if (exponent == 0xf && mantissa == 0x7) return std::numeric_limits<float>::quiet_NaN();
  // Subnormal: 0.mmm · 2^(1 − 7); normal: 1.mmm · 2^(e − 7).
  const float magnitude =
      exponent == 0 ? std::ldexp(static_cast<float>(mantissa) / 8.0f, -6)
                    : std::ldexp(1.0f + static_cast<float>(mantissa) / 8.0f, exponent - 7);
  return negative ? -magnitude : magnitude;
}

// ---- NF4 ---------------------------------------------------------------------------------------

const std::array<float, 16>& nf4_code_table() {
  // QLoRA appendix E; the same 16 values as bitsandbytes' NF4 map.
  static const std::array<float, 16> levels = {
      -1.0f,
      -0.6961928009986877f,
      -0.5250730514526367f,
      -0.39491748809814453f,
      -0.28444138169288635f,
      -0.18477343022823334f,
      -0.09105003625154495f,
      0.0f,
      0.07958029955625534f,
      0.16093020141124725f,
      0.24611230194568634f,
      0.33791524171829224f,
      0.44070982933044434f,
      0.5626170039176941f,
      0.7229568362236023f,
      1.0f,
  };
  return levels;
}

double nf4_max_half_gap() {
  const auto& levels = nf4_code_table();
  double widest = 0.0;
  for (std::size_t k = 1; k < levels.size(); ++k)
    widest = std::max(widest, static_cast<double>(levels[k]) - static_cast<double>(levels[k - 1]));
  return widest / 2.0;
}

std::int64_t Nf4Tensor::blocks() const {
  return ceil_div(numel, layout.block);
}

std::int64_t Nf4Tensor::bytes() const {
  return static_cast<std::int64_t>(codes.size() + absmax_codes.size() +
                                   absmax_scales.size() * sizeof(float));
}

Nf4Tensor nf4_quantize(const float* weights, std::int64_t n, Nf4Layout layout) {
  assert(n >= 0 && layout.block > 0 && layout.second_block > 0);
  Nf4Tensor t;
  t.numel = n;
  t.layout = layout;
  const std::int64_t blocks = t.blocks();
  t.codes.assign(index(ceil_div(n, 2)), 0);
  t.absmax_codes.assign(index(blocks), 0);
  t.absmax_scales.assign(index(ceil_div(blocks, layout.second_block)), 0.0f);

  // First level: absmax per block, codes from the exact (FP32) absmax.
  std::vector<float> absmax(index(blocks), 0.0f);
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t end = std::min(n, (b + 1) * layout.block);
    float a = 0.0f;
    for (std::int64_t i = b * layout.block; i < end; ++i)
      a = std::max(a, std::fabs(weights[i]));
    absmax[index(b)] = a;
    for (std::int64_t i = b * layout.block; i < end; ++i) {
      const std::uint8_t level = nearest_nf4_level(a > 0.0f ? weights[i] / a : 0.0f);
      t.codes[index(i / 2)] |= static_cast<std::uint8_t>(i % 2 == 0 ? level << 4 : level);
    }
  }

  // Second level: centre the absmax values on their mean, then one scale per group.
  double sum = 0.0;
  for (float a : absmax)
    sum += a;
  t.absmax_offset = blocks > 0 ? static_cast<float>(sum / static_cast<double>(blocks)) : 0.0f;
  for (std::size_t g = 0; g < t.absmax_scales.size(); ++g) {
    const std::size_t begin = g * static_cast<std::size_t>(layout.second_block);
    const std::size_t end = std::min(absmax.size(), begin + index(layout.second_block));
    float scale = 0.0f;
    for (std::size_t b = begin; b < end; ++b)
      scale = std::max(scale, std::fabs(absmax[b] - t.absmax_offset));
    t.absmax_scales[g] = scale;
    for (std::size_t b = begin; b < end; ++b) {
      const float code =
          scale > 0.0f ? std::round(127.0f * (absmax[b] - t.absmax_offset) / scale) : 0.0f;
      t.absmax_codes[b] = static_cast<std::int8_t>(std::clamp(code, -127.0f, 127.0f));
    }
  }
  return t;
}

float nf4_block_absmax(const Nf4Tensor& t, std::int64_t block) {
  const float scale = t.absmax_scales[index(block / t.layout.second_block)];
  return static_cast<float>(t.absmax_codes[index(block)]) * (scale / 127.0f) + t.absmax_offset;
}

float nf4_dequantize_element(const Nf4Tensor& t, std::int64_t i) {
  const std::uint8_t byte = t.codes[index(i / 2)];
  const std::uint8_t level =
      i % 2 == 0 ? static_cast<std::uint8_t>(byte >> 4) : static_cast<std::uint8_t>(byte & 0x0fu);
  return nf4_code_table()[level] * nf4_block_absmax(t, i / t.layout.block);
}

std::vector<float> nf4_dequantize(const Nf4Tensor& t) {
  std::vector<float> out(index(t.numel));
  for (std::int64_t i = 0; i < t.numel; ++i)
    out[index(i)] = nf4_dequantize_element(t, i);
  return out;
}

// ---- RMSNorm -----------------------------------------------------------------------------------

void rmsnorm(const float* x, const float* weight, std::int64_t rows, std::int64_t hidden,
             double eps, double* y) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * hidden;
    double sum_squares = 0.0;
    for (std::int64_t i = 0; i < hidden; ++i)
      sum_squares += static_cast<double>(row[i]) * static_cast<double>(row[i]);
    const double inverse_rms = 1.0 / std::sqrt(sum_squares / static_cast<double>(hidden) + eps);
    for (std::int64_t i = 0; i < hidden; ++i)
      y[r * hidden + i] =
          static_cast<double>(row[i]) * inverse_rms * static_cast<double>(weight[i]);
  }
}

// ---- AdamW -------------------------------------------------------------------------------------

void adamw_step(const AdamWHyper& h, std::int64_t step, const float* grad, double* param, double* m,
                double* v, std::int64_t n) {
  assert(step >= 1);
  const double t = static_cast<double>(step);
  const double bias1 = 1.0 - std::pow(h.beta1, t);
  const double bias2 = 1.0 - std::pow(h.beta2, t);
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(grad[i]);
    param[i] *= 1.0 - h.lr * h.weight_decay;
    m[i] = h.beta1 * m[i] + (1.0 - h.beta1) * g;
    v[i] = h.beta2 * v[i] + (1.0 - h.beta2) * g * g;
    param[i] -= h.lr * (m[i] / bias1) / (std::sqrt(v[i] / bias2) + h.eps);
  }
}

// ---- error measures ----------------------------------------------------------------------------

DotReference dot_reference(const float* a, const float* b, std::int64_t k) {
  DotReference out;
  double sum_squares = 0.0;
  for (std::int64_t p = 0; p < k; ++p) {
    const double term = static_cast<double>(a[p]) * static_cast<double>(b[p]);
    out.value += term;
    sum_squares += term * term;
  }
  out.scale = std::sqrt(sum_squares);
  return out;
}

double relative_error(double got, double want, double floor) {
  return std::fabs(got - want) / std::max(std::fabs(want), floor);
}

void ErrorTally::add(double error) {
  ++samples;
  if (!(error <= bound)) ++over_bound;  // also counts a NaN
  if (std::isnan(error))
    max_error = std::numeric_limits<double>::infinity();
  else
    max_error = std::max(max_error, error);
}

}  // namespace ftplan::bench
