// The CPU references ftplan-bench checks its GPU kernels against (bench/reference.hpp): number
// formats, NF4 with double quantization, RMSNorm, AdamW; they run here without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "memory/model_states.hpp"
#include "reference.hpp"

namespace ftplan::bench {
namespace {

std::vector<float> normal_weights(std::int64_t n, float stddev, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> w(static_cast<std::size_t>(n));
  for (float& x : w)
    x = dist(rng);
  return w;
}

// ---- number formats ----------------------------------------------------------------------------

TEST(BenchReference, Bf16RoundsToNearestTiesToEven) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  // 1 + 2^-8 lies halfway between 1 (mantissa ...0, even) and 1 + 2^-7: goes to 1.
  EXPECT_EQ(round_to_bf16(1.0f + 1.0f / 256.0f), 1.0f);
  // 1 + 3·2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even): goes up.
  EXPECT_EQ(round_to_bf16(1.0f + 3.0f / 256.0f), 1.0f + 1.0f / 64.0f);
  // Just above a half-way point rounds up.
  EXPECT_EQ(round_to_bf16(1.0f + 1.0f / 256.0f + 1.0f / 65536.0f), 1.0f + 1.0f / 128.0f);
  EXPECT_EQ(round_to_bf16(-2.5f), -2.5f);  // exactly representable
  EXPECT_TRUE(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isinf(round_to_bf16(std::numeric_limits<float>::infinity())));
}

TEST(BenchReference, Bf16RelativeRoundingErrorIsAtMostTwoToMinusEight) {
  // 8 significant bits: half an ulp is at most 2^-8 of the value.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
  for (int i = 0; i < 100000; ++i) {
    const float x = dist(rng);
    if (x == 0.0f) continue;
    EXPECT_LE(std::fabs(round_to_bf16(x) - x) / std::fabs(x), 1.0 / 256.0) << x;
  }
}

TEST(BenchReference, Fp8E4M3DecodesTheOcpFormat) {
  EXPECT_EQ(fp8_e4m3_bits_to_float(0x38), 1.0f);     // 0.0111.000: 2^(7-7)
  EXPECT_EQ(fp8_e4m3_bits_to_float(0xb8), -1.0f);    // sign bit
  EXPECT_EQ(fp8_e4m3_bits_to_float(0x7e), 448.0f);   // 0.1111.110: 1.75 · 2^8, the largest
  EXPECT_EQ(fp8_e4m3_bits_to_float(0x01), 0x1p-9f);  // smallest subnormal: 1/8 · 2^-6
  EXPECT_EQ(fp8_e4m3_bits_to_float(0x08), 0x1p-6f);  // smallest normal
  EXPECT_EQ(fp8_e4m3_bits_to_float(0x00), 0.0f);
  EXPECT_TRUE(std::isnan(fp8_e4m3_bits_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_bits_to_float(0xff)));
  // 254 finite codes (all but the two NaNs), strictly increasing over the positive half.
  for (int b = 1; b < 0x7f; ++b)
    EXPECT_GT(fp8_e4m3_bits_to_float(static_cast<std::uint8_t>(b)),
              fp8_e4m3_bits_to_float(static_cast<std::uint8_t>(b - 1)));
}

// ---- NF4 ---------------------------------------------------------------------------------------

TEST(BenchReference, Nf4TableIsSixteenSortedLevelsWithExactZeroAndEnds) {
  const auto& levels = nf4_code_table();
  EXPECT_EQ(levels.front(), -1.0f);
  EXPECT_EQ(levels.back(), 1.0f);
  EXPECT_EQ(levels[7], 0.0f);
  for (std::size_t k = 1; k < levels.size(); ++k)
    EXPECT_LT(levels[k - 1], levels[k]);
  // The widest gap is between the two most negative levels: (−0.6961928 − (−1)) / 2.
  EXPECT_NEAR(nf4_max_half_gap(), (1.0 - 0.6961928009986877) / 2.0, 1e-7);
}

TEST(BenchReference, Nf4DoubleQuantBytesMatchTheModelsCount) {
  // QLoRA §3 / seed: 4 + 8/64 + 32/(64·256) = 4.127 bits per parameter. The bytes the reference
  // stores equal memory/model_states' count exactly, partial blocks included.
  const QuantConfig defaults;
  for (std::int64_t n : {std::int64_t{1000}, std::int64_t{64 * 256}, std::int64_t{64 * 256 + 64},
                         std::int64_t{4096} * 4096 / 8}) {
    const std::vector<float> w = normal_weights(n, 0.02f, 1);
    const Nf4Tensor t = nf4_quantize(w.data(), n);
    const QuantizedBytes q = quantized_weight_bytes(n, defaults);
    EXPECT_EQ(static_cast<double>(t.bytes()), q.codes.value + q.constants.value) << n;
  }
  const std::int64_t n = std::int64_t{64} * 256 * 16;  // whole second-level blocks
  const std::vector<float> w = normal_weights(n, 0.02f, 2);
  const double bits =
      8.0 * static_cast<double>(nf4_quantize(w.data(), n).bytes()) / static_cast<double>(n);
  EXPECT_DOUBLE_EQ(bits, quantized_bits_per_param(defaults));
  EXPECT_NEAR(bits, 4.127, 0.0005);
}

TEST(BenchReference, Nf4RoundTripErrorWithinHalfAGapPlusAbsmaxError) {
  // Per weight: |w − deq| ≤ absmax·half_gap (nearest level) + |absmax − deq_absmax| (the
  // double-quantized constant; |level| ≤ 1), with FP32 slack.
  const std::int64_t n = 64 * 256 * 3 + 40;  // a partial block and a partial second-level block
  const std::vector<float> w = normal_weights(n, 0.02f, 3);
  const Nf4Tensor t = nf4_quantize(w.data(), n);
  const std::vector<float> back = nf4_dequantize(t);
  const double half_gap = nf4_max_half_gap();
  double sum_squared_error = 0.0, sum_squared = 0.0;
  for (std::int64_t b = 0; b < t.blocks(); ++b) {
    const std::int64_t begin = b * 64, end = std::min<std::int64_t>(n, begin + 64);
    double absmax = 0.0;
    for (std::int64_t i = begin; i < end; ++i)
      absmax = std::max(absmax, std::fabs(static_cast<double>(w[static_cast<std::size_t>(i)])));
    const double constant_error = std::fabs(absmax - nf4_block_absmax(t, b));
    // The 8-bit code of the centred absmax is off by at most half a step: scale / 127 / 2.
    EXPECT_LE(constant_error, t.absmax_scales[static_cast<std::size_t>(b / 256)] / 254.0 + 1e-7);
    for (std::int64_t i = begin; i < end; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const double error = std::fabs(static_cast<double>(w[k]) - back[k]);
      EXPECT_LE(error, absmax * half_gap + constant_error + 1e-7) << i;
      sum_squared_error += error * error;
      sum_squared += static_cast<double>(w[k]) * w[k];
    }
  }
  // NF4 keeps normal weights to about a tenth of their RMS (QLoRA §3: 4-bit quantile levels).
  EXPECT_LT(std::sqrt(sum_squared_error / sum_squared), 0.12);
}

TEST(BenchReference, Nf4LevelsTimesAbsmaxRoundTripToTheirOwnCode) {
  // A block whose weights are exactly levels · absmax quantizes to those levels.
  const auto& levels = nf4_code_table();
  std::vector<float> w(64);
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = 0.5f * levels[(i * 7) % 16];
  w[3] = 0.5f;  // absmax 0.5 present
  const Nf4Tensor t = nf4_quantize(w.data(), 64);
  // One block: offset = its absmax, centred value 0, so the constant is exact.
  EXPECT_EQ(nf4_block_absmax(t, 0), 0.5f);
  for (std::int64_t i = 0; i < 64; ++i)
    EXPECT_EQ(nf4_dequantize_element(t, i), w[static_cast<std::size_t>(i)]) << i;
  // Packing: element 0 in the high nibble of byte 0.
  EXPECT_EQ(t.codes[0] >> 4, 0);    // levels[0] = -1 → code 0
  EXPECT_EQ(t.codes[0] & 0x0f, 7);  // levels[7] = 0 → code 7
}

// ---- RMSNorm -----------------------------------------------------------------------------------

TEST(BenchReference, RmsNormHandComputed) {
  // x = (1, 2, 3, 4): mean of squares 30/4 = 7.5, rms = 2.738613; weight (1, 1, 2, 0.5).
  const float x[4] = {1, 2, 3, 4};
  const float w[4] = {1, 1, 2, 0.5f};
  double y[4];
  rmsnorm(x, w, 1, 4, 0.0, y);
  const double rms = std::sqrt(7.5);
  EXPECT_NEAR(y[0], 1 / rms, 1e-12);
  EXPECT_NEAR(y[1], 2 / rms, 1e-12);
  EXPECT_NEAR(y[2], 6 / rms, 1e-12);
  EXPECT_NEAR(y[3], 2 / rms, 1e-12);
  EXPECT_NEAR(y[0], 0.3651484, 1e-7);
}

TEST(BenchReference, RmsNormRowsHaveUnitRmsUpToEps) {
  // With unit weights every row's output has RMS 1 / sqrt(1 + eps / mean(x²)).
  const std::int64_t rows = 3, hidden = 256;
  const std::vector<float> x = normal_weights(rows * hidden, 1.5f, 4);
  const std::vector<float> ones(hidden, 1.0f);
  std::vector<double> y(static_cast<std::size_t>(rows * hidden));
  const double eps = 1e-2;
  rmsnorm(x.data(), ones.data(), rows, hidden, eps, y.data());
  for (std::int64_t r = 0; r < rows; ++r) {
    double in = 0.0, out = 0.0;
    for (std::int64_t i = 0; i < hidden; ++i) {
      const auto k = static_cast<std::size_t>(r * hidden + i);
      in += static_cast<double>(x[k]) * x[k];
      out += y[k] * y[k];
    }
    in /= hidden;
    out /= hidden;
    EXPECT_NEAR(std::sqrt(out), 1.0 / std::sqrt(1.0 + eps / in), 1e-12);
  }
}

// ---- AdamW -------------------------------------------------------------------------------------

TEST(BenchReference, AdamWTwoStepsHandComputed) {
  // lr 1e-3, β1 0.9, β2 0.999, eps 1e-8, weight decay 0.01; p = 1, m = v = 0.
  // Step 1, g = 0.5: p = 1·(1 − 1e-5) = 0.99999; m = 0.05; v = 0.00025;
  //   m̂ = 0.05/0.1 = 0.5; v̂ = 0.00025/0.001 = 0.25; p = 0.99999 − 1e-3·0.5/(0.5 + 1e-8)
  //   = 0.99999 − 0.00099999998 = 0.99899000002.
  // Step 2, g = 0.25: p = 0.99899000002·(1 − 1e-5) = 0.99898001012; m = 0.045 + 0.025 = 0.07;
  //   v = 0.00024975 + 0.0000625 = 0.00031225; m̂ = 0.07/0.19 = 0.368421053;
  //   v̂ = 0.00031225/0.001999 = 0.156203102, sqrt 0.395225381; update 1e-3·0.932179615;
  //   p = 0.99898001012 − 0.000932179615 = 0.998047830505.
  const AdamWHyper h{1e-3, 0.9, 0.999, 1e-8, 0.01};
  double p = 1.0, m = 0.0, v = 0.0;
  const float g1 = 0.5f, g2 = 0.25f;
  adamw_step(h, 1, &g1, &p, &m, &v, 1);
  EXPECT_NEAR(p, 0.99899000002, 1e-12);
  EXPECT_NEAR(m, 0.05, 1e-15);
  EXPECT_NEAR(v, 0.00025, 1e-15);
  adamw_step(h, 2, &g2, &p, &m, &v, 1);
  EXPECT_NEAR(m, 0.07, 1e-15);
  EXPECT_NEAR(v, 0.00031225, 1e-15);
  EXPECT_NEAR(p, 0.998047830505, 1e-11);
}

TEST(BenchReference, AdamWFirstStepMovesEachWeightByAboutLr) {
  // At step 1, m̂ = g and v̂ = g², so the update is lr·g/(|g| + eps) ≈ lr·sign(g), whatever |g|.
  const AdamWHyper h{1e-3, 0.9, 0.999, 1e-8, 0.0};
  const std::vector<float> g = {1e-3f, -2.0f, 50.0f};
  std::vector<double> p(3, 0.0), m(3, 0.0), v(3, 0.0);
  adamw_step(h, 1, g.data(), p.data(), m.data(), v.data(), 3);
  EXPECT_NEAR(p[0], -1e-3, 1e-8);
  EXPECT_NEAR(p[1], 1e-3, 1e-8);
  EXPECT_NEAR(p[2], -1e-3, 1e-8);
}

// ---- error measures ----------------------------------------------------------------------------

TEST(BenchReference, DotReferenceScaleIsTheRootSumOfSquaredTerms) {
  const float a[3] = {1, -2, 3};
  const float b[3] = {4, 5, -6};
  const DotReference r = dot_reference(a, b, 3);
  EXPECT_DOUBLE_EQ(r.value, 4 - 10 - 18);
  EXPECT_DOUBLE_EQ(r.scale, std::sqrt(16.0 + 100.0 + 324.0));
  EXPECT_NEAR(relative_error(1.01, 1.0, 0.5), 0.01, 1e-15);  // |ref| above the floor
  EXPECT_NEAR(relative_error(0.01, 0.0, 0.5), 0.02, 1e-15);  // the floor applies
}

TEST(BenchReference, ErrorTallyFailsOnNanOverBoundOrNoSamples) {
  ErrorTally empty;
  empty.bound = 1.0;
  EXPECT_FALSE(empty.passed());
  ErrorTally t;
  t.bound = 0.1;
  t.add(0.05);
  EXPECT_TRUE(t.passed());
  t.add(std::numeric_limits<double>::quiet_NaN());
  EXPECT_FALSE(t.passed());
  EXPECT_EQ(t.over_bound, 1);
  EXPECT_TRUE(std::isinf(t.max_error));
  ErrorTally over;
  over.bound = 0.1;
  over.add(0.2);
  EXPECT_FALSE(over.passed());
  EXPECT_DOUBLE_EQ(over.max_error, 0.2);
}

}  // namespace
}  // namespace ftplan::bench
