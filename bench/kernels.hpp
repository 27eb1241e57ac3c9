// The CUDA kernels ftplan-bench times (and the fills that make their inputs), behind plain host
// functions: BF16 values travel as their 16-bit patterns, FP8 E4M3 values as bytes, so host code
// needs no CUDA type headers. Every launcher enqueues on `stream` and returns at once.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace ftplan::bench::kernels {

// ---- deterministic inputs ----------------------------------------------------------------------
// Element i of a fill is a function of (seed, i) only (a SplitMix64 hash), so a fill is the same
// on every card and launch configuration. Values are uniform in [lo, hi) before rounding.
void fill_uniform_bf16(std::uint16_t* out, std::int64_t n, std::uint64_t seed, float lo, float hi,
                       cudaStream_t stream);
void fill_uniform_fp8_e4m3(std::uint8_t* out, std::int64_t n, std::uint64_t seed, float lo,
                           float hi, cudaStream_t stream);
void fill_uniform_f32(float* out, std::int64_t n, std::uint64_t seed, float lo, float hi,
                      cudaStream_t stream);
void fill_random_words(std::uint32_t* out, std::int64_t n, std::uint64_t seed, cudaStream_t stream);

// Copies elements src[first + i·stride], i < count, of `element_bytes` (1 or 2) bytes each, into
// dst[i]: a row or column of a matrix for the CPU reference.
void gather_strided(const void* src, std::int64_t first, std::int64_t stride, std::int64_t count,
                    int element_bytes, void* dst, cudaStream_t stream);

// ---- read bandwidth ----------------------------------------------------------------------------
// *sum += Σ of the 32-bit words of `bytes` bytes of data (bytes a multiple of 64, data 16-byte
// aligned), modulo 2^64: every byte is loaded (16-byte vector loads, four in flight per thread)
// and the sum keeps the compiler from dropping the loads.
void read_sum(const void* data, std::int64_t bytes, unsigned long long* sum, cudaStream_t stream);

// ---- NF4 dequantization (layout of reference.hpp: Nf4Tensor) ------------------------------------
// out[i] = bf16(level[code i] · (absmax_code[i/block] · scale[i/(block·second_block)]/127 +
// offset)) n must be a multiple of 16 and of `block`; `codes` 8-byte aligned.
void nf4_dequantize(const std::uint8_t* codes, const std::int8_t* absmax_codes,
                    const float* absmax_scales, float absmax_offset, std::int64_t n, int block,
                    int second_block, std::uint16_t* out_bf16, cudaStream_t stream);

// ---- RMSNorm forward, BF16 in and out, FP32 sums ------------------------------------------------
// y[r][i] = bf16(x[r][i] · rsqrt(mean_i x[r][i]² + eps) · weight[i]); hidden a multiple of 8,
// at most 8192; one thread block per row, one 16-byte load per thread.
void rmsnorm_forward(const std::uint16_t* x, const std::uint16_t* weight, std::int64_t rows,
                     int hidden, float eps, std::uint16_t* y, cudaStream_t stream);

// ---- fused AdamW: FP32 master weights and moments, BF16 gradient in, BF16 weight out -----------
struct AdamWScalars {
  float lr;
  float beta1;
  float beta2;
  float eps;
  float weight_decay;
  float bias_correction1;       // 1 − β1^step
  float bias_correction2_sqrt;  // sqrt(1 − β2^step)
};
// Per element (torch.optim.AdamW's order): p ← p·(1 − lr·wd); m ← β1·m + (1−β1)·g;
// v ← β2·v + (1−β2)·g²; p ← p − (lr/bc1) · m / (sqrt(v)/sqrt(bc2) + eps); w ← bf16(p).
// n a multiple of 4, all arrays 16-byte aligned.
void adamw_step(float* param, float* m, float* v, const std::uint16_t* grad_bf16,
                std::uint16_t* weight_bf16, std::int64_t n, const AdamWScalars& s,
                cudaStream_t stream);

}  // namespace ftplan::bench::kernels
