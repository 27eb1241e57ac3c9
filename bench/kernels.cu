// The CUDA kernels of ftplan-bench. Each is a plain memory-bound loop; what they compute is
// spelled out in kernels.hpp and checked against reference.hpp before any timing.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cassert>

#include "cuda_util.hpp"
#include "kernels.hpp"

namespace ftplan::bench::kernels {

namespace {

constexpr int kThreads = 256;

// NF4 levels (QLoRA appendix E), the same table as reference.cpp's nf4_code_table().
__constant__ float kNf4Levels[16] = {
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

void check_launch(const char* kernel) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) throw_cuda_error(error, kernel, __FILE__, __LINE__);
}

int sm_count() {
  static const int count = [] {
    int device = 0;
    int sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
      return 1;
    return sms > 0 ? sms : 1;
  }();
  return count;
}

// Blocks for `items` work items at `threads` per block, at most `cap` (grid-stride loops).
unsigned int grid_for(std::int64_t items, int threads, std::int64_t cap) {
  std::int64_t blocks = (items + threads - 1) / threads;
  if (blocks > cap) blocks = cap;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned int>(blocks);
}

std::int64_t fill_grid_cap() {
  return static_cast<std::int64_t>(sm_count()) * 16;
}

__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ std::uint64_t hash(std::uint64_t seed, std::int64_t i) {
  return splitmix64(seed ^ (static_cast<std::uint64_t>(i) * 0xd1b54a32d192ed03ull));
}

// Uniform in [lo, hi): the top 24 bits of the hash as a fraction.
__device__ __forceinline__ float uniform(std::uint64_t seed, std::int64_t i, float lo, float hi) {
  const float unit = static_cast<float>(hash(seed, i) >> 40) * (1.0f / 16777216.0f);
  return lo + (hi - lo) * unit;
}

__device__ __forceinline__ std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ std::int64_t grid_threads() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

__global__ void fill_bf16_kernel(__nv_bfloat16* out, std::int64_t n, std::uint64_t seed, float lo,
                                 float hi) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    out[i] = __float2bfloat16_rn(uniform(seed, i, lo, hi));
}

__global__ void fill_fp8_kernel(__nv_fp8_e4m3* out, std::int64_t n, std::uint64_t seed, float lo,
                                float hi) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    out[i] = __nv_fp8_e4m3(uniform(seed, i, lo, hi));  // round to nearest, saturating
}

__global__ void fill_f32_kernel(float* out, std::int64_t n, std::uint64_t seed, float lo,
                                float hi) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    out[i] = uniform(seed, i, lo, hi);
}

__global__ void fill_words_kernel(std::uint32_t* out, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads())
    out[i] = static_cast<std::uint32_t>(hash(seed, i) >> 32);
}

template <class T>
__global__ void gather_kernel(const T* src, std::int64_t first, std::int64_t stride,
                              std::int64_t count, T* dst) {
  for (std::int64_t i = global_thread(); i < count; i += grid_threads())
    dst[i] = src[first + i * stride];
}

__device__ __forceinline__ unsigned long long word_sum(uint4 v) {
  return static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
}

// Sum over the block; every thread gets the total. blockDim.x must be a multiple of 32.
template <class T>
__device__ __forceinline__ T block_sum(T value) {
  __shared__ T partial[32];
  for (int offset = 16; offset > 0; offset >>= 1)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  const unsigned int warp = threadIdx.x / 32;
  const unsigned int lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = value;
  __syncthreads();
  value = lane < blockDim.x / 32 ? partial[lane] : T(0);
  for (int offset = 16; offset > 0; offset >>= 1)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

__global__ void read_sum_kernel(const uint4* __restrict__ data, std::int64_t vectors,
                                unsigned long long* sum) {
  const std::int64_t stride = grid_threads();
  std::int64_t i = global_thread();
  unsigned long long total = 0;
  // Four independent 16-byte loads in flight per thread.
  for (; i + 3 * stride < vectors; i += 4 * stride) {
    const uint4 a = __ldg(data + i);
    const uint4 b = __ldg(data + i + stride);
    const uint4 c = __ldg(data + i + 2 * stride);
    const uint4 d = __ldg(data + i + 3 * stride);
    total += word_sum(a) + word_sum(b) + word_sum(c) + word_sum(d);
  }
  for (; i < vectors; i += stride)
    total += word_sum(__ldg(data + i));
  total = block_sum(total);
  if (threadIdx.x == 0) atomicAdd(sum, total);
}

// One thread per 16 weights: 8 code bytes in, 32 bytes of BF16 out.
__global__ void nf4_dequantize_kernel(const uint2* __restrict__ codes,
                                      const std::int8_t* __restrict__ absmax_codes,
                                      const float* __restrict__ absmax_scales, float absmax_offset,
                                      std::int64_t groups, int block, int second_block,
                                      uint4* __restrict__ out) {
  __shared__ float levels[16];
  if (threadIdx.x < 16) levels[threadIdx.x] = kNf4Levels[threadIdx.x];
  __syncthreads();
  const std::int64_t g = global_thread();
  if (g >= groups) return;
  const std::int64_t b = g * 16 / block;
  // Exactly reference.cpp's nf4_block_absmax: code · (scale / 127) + offset, no fused multiply-add.
  const float absmax = __fadd_rn(
      __fmul_rn(static_cast<float>(absmax_codes[b]), absmax_scales[b / second_block] / 127.0f),
      absmax_offset);
  const uint2 packed = __ldg(codes + g);
  uint4 result[2];  // 16 BF16 values; uint4 for 16-byte alignment
  __nv_bfloat162* values = reinterpret_cast<__nv_bfloat162*>(result);
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const unsigned int word = k < 4 ? packed.x : packed.y;
    const unsigned int byte = (word >> (8 * (k % 4))) & 0xffu;
    // Element 2k sits in the high nibble and goes to the lower address (.x).
    values[k] = __floats2bfloat162_rn(__fmul_rn(levels[byte >> 4], absmax),
                                      __fmul_rn(levels[byte & 0xfu], absmax));
  }
  out[2 * g] = result[0];
  out[2 * g + 1] = result[1];
}

__device__ __forceinline__ void unpack_bf16x8(uint4 packed, float* out) {
  const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&packed);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = __bfloat1622float2(pairs[k]);
    out[2 * k] = f.x;
    out[2 * k + 1] = f.y;
  }
}

__device__ __forceinline__ uint4 pack_bf16x8(const float* in) {
  uint4 packed;
  __nv_bfloat162* pairs = reinterpret_cast<__nv_bfloat162*>(&packed);
#pragma unroll
  for (int k = 0; k < 4; ++k)
    pairs[k] = __floats2bfloat162_rn(in[2 * k], in[2 * k + 1]);
  return packed;
}

// One block per row, blockDim.x = hidden / 8, one 16-byte vector per thread.
__global__ void rmsnorm_kernel(const uint4* __restrict__ x, const uint4* __restrict__ weight,
                               float inverse_hidden, float eps, uint4* __restrict__ y) {
  const std::int64_t at = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float values[8];
  unpack_bf16x8(x[at], values);
  float sum_squares = 0.0f;
#pragma unroll
  for (int k = 0; k < 8; ++k)
    sum_squares = fmaf(values[k], values[k], sum_squares);
  sum_squares = block_sum(sum_squares);
  const float inverse_rms = rsqrtf(sum_squares * inverse_hidden + eps);
  float w[8];
  unpack_bf16x8(__ldg(weight + threadIdx.x), w);
#pragma unroll
  for (int k = 0; k < 8; ++k)
    values[k] = values[k] * inverse_rms * w[k];
  y[at] = pack_bf16x8(values);
}

__device__ __forceinline__ void adamw_element(float& p, float& m, float& v, float g,
                                              const AdamWScalars& s) {
  p *= 1.0f - s.lr * s.weight_decay;
  m = s.beta1 * m + (1.0f - s.beta1) * g;
  v = s.beta2 * v + (1.0f - s.beta2) * g * g;
  const float denominator = sqrtf(v) / s.bias_correction2_sqrt + s.eps;
  p -= (s.lr / s.bias_correction1) * (m / denominator);
}

// One thread per 4 parameters: 3 × 16 B of FP32 state and 8 B of BF16 gradient in, the same
// state and 8 B of BF16 weight out.
__global__ void adamw_kernel(float4* __restrict__ param, float4* __restrict__ m,
                             float4* __restrict__ v, const uint2* __restrict__ grad,
                             uint2* __restrict__ weight, std::int64_t quads, AdamWScalars s) {
  const std::int64_t q = global_thread();
  if (q >= quads) return;
  float4 p4 = param[q];
  float4 m4 = m[q];
  float4 v4 = v[q];
  const uint2 g2 = __ldg(grad + q);
  const float2 g01 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&g2.x));
  const float2 g23 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&g2.y));
  adamw_element(p4.x, m4.x, v4.x, g01.x, s);
  adamw_element(p4.y, m4.y, v4.y, g01.y, s);
  adamw_element(p4.z, m4.z, v4.z, g23.x, s);
  adamw_element(p4.w, m4.w, v4.w, g23.y, s);
  param[q] = p4;
  m[q] = m4;
  v[q] = v4;
  uint2 w;
  *reinterpret_cast<__nv_bfloat162*>(&w.x) = __floats2bfloat162_rn(p4.x, p4.y);
  *reinterpret_cast<__nv_bfloat162*>(&w.y) = __floats2bfloat162_rn(p4.z, p4.w);
  weight[q] = w;
}

}  // namespace

void fill_uniform_bf16(std::uint16_t* out, std::int64_t n, std::uint64_t seed, float lo, float hi,
                       cudaStream_t stream) {
  fill_bf16_kernel<<<grid_for(n, kThreads, fill_grid_cap()), kThreads, 0, stream>>>(
      reinterpret_cast<__nv_bfloat16*>(out), n, seed, lo, hi);
  check_launch("fill_bf16_kernel");
}

void fill_uniform_fp8_e4m3(std::uint8_t* out, std::int64_t n, std::uint64_t seed, float lo,
                           float hi, cudaStream_t stream) {
  fill_fp8_kernel<<<grid_for(n, kThreads, fill_grid_cap()), kThreads, 0, stream>>>(
      reinterpret_cast<__nv_fp8_e4m3*>(out), n, seed, lo, hi);
  check_launch("fill_fp8_kernel");
}

void fill_uniform_f32(float* out, std::int64_t n, std::uint64_t seed, float lo, float hi,
                      cudaStream_t stream) {
  fill_f32_kernel<<<grid_for(n, kThreads, fill_grid_cap()), kThreads, 0, stream>>>(out, n, seed, lo,
                                                                                   hi);
  check_launch("fill_f32_kernel");
}

void fill_random_words(std::uint32_t* out, std::int64_t n, std::uint64_t seed,
                       cudaStream_t stream) {
  fill_words_kernel<<<grid_for(n, kThreads, fill_grid_cap()), kThreads, 0, stream>>>(out, n, seed);
  check_launch("fill_words_kernel");
}

void gather_strided(const void* src, std::int64_t first, std::int64_t stride, std::int64_t count,
                    int element_bytes, void* dst, cudaStream_t stream) {
  const unsigned int grid = grid_for(count, kThreads, fill_grid_cap());
  if (element_bytes == 1) {
    gather_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const std::uint8_t*>(src), first,
                                                 stride, count, static_cast<std::uint8_t*>(dst));
  } else {
    assert(element_bytes == 2);
    gather_kernel<<<grid, kThreads, 0, stream>>>(static_cast<const std::uint16_t*>(src), first,
                                                 stride, count, static_cast<std::uint16_t*>(dst));
  }
  check_launch("gather_kernel");
}

void read_sum(const void* data, std::int64_t bytes, unsigned long long* sum, cudaStream_t stream) {
  assert(bytes % 64 == 0);
  const std::int64_t vectors = bytes / 16;
  // Full occupancy (2048 threads per SM) with grid-stride loops: 64 B in flight per thread.
  const std::int64_t cap = static_cast<std::int64_t>(sm_count()) * (2048 / kThreads);
  read_sum_kernel<<<grid_for(vectors / 4, kThreads, cap), kThreads, 0, stream>>>(
      static_cast<const uint4*>(data), vectors, sum);
  check_launch("read_sum_kernel");
}

void nf4_dequantize(const std::uint8_t* codes, const std::int8_t* absmax_codes,
                    const float* absmax_scales, float absmax_offset, std::int64_t n, int block,
                    int second_block, std::uint16_t* out_bf16, cudaStream_t stream) {
  assert(n % 16 == 0 && block % 16 == 0 && n % block == 0);
  const std::int64_t groups = n / 16;
  nf4_dequantize_kernel<<<grid_for(groups, kThreads, groups), kThreads, 0, stream>>>(
      reinterpret_cast<const uint2*>(codes), absmax_codes, absmax_scales, absmax_offset, groups,
      block, second_block, reinterpret_cast<uint4*>(out_bf16));
  check_launch("nf4_dequantize_kernel");
}

void rmsnorm_forward(const std::uint16_t* x, const std::uint16_t* weight, std::int64_t rows,
                     int hidden, float eps, std::uint16_t* y, cudaStream_t stream) {
  assert(hidden % 256 == 0 && hidden <= 8192);
  rmsnorm_kernel<<<static_cast<unsigned int>(rows), static_cast<unsigned int>(hidden / 8), 0,
                   stream>>>(reinterpret_cast<const uint4*>(x),
                             reinterpret_cast<const uint4*>(weight),
                             1.0f / static_cast<float>(hidden), eps, reinterpret_cast<uint4*>(y));
  check_launch("rmsnorm_kernel");
}

void adamw_step(float* param, float* m, float* v, const std::uint16_t* grad_bf16,
                std::uint16_t* weight_bf16, std::int64_t n, const AdamWScalars& s,
                cudaStream_t stream) {
  assert(n % 4 == 0);
  const std::int64_t quads = n / 4;
  adamw_kernel<<<grid_for(quads, kThreads, quads), kThreads, 0, stream>>>(
      reinterpret_cast<float4*>(param), reinterpret_cast<float4*>(m), reinterpret_cast<float4*>(v),
      reinterpret_cast<const uint2*>(grad_bf16), reinterpret_cast<uint2*>(weight_bf16), quads, s);
  check_launch("adamw_kernel");
}

}  // namespace ftplan::bench::kernels
