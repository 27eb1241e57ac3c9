// The benchmark lists: GEMMs of the catalog models' projections (gemm_bench.cpp) and the
// memory-bound parts of a training step (memory_bench.cpp).
#pragma once

#include "harness.hpp"

namespace ftplan::bench {

// For every catalog model of FTPLAN_BENCH_MODELS, every distinct projection shape (q, kv for k
// and v, o, gate_up for gate and up, down), 2048, 4096 and 8192 tokens, the forward product and
// both backward products, in BF16 and in FP8 E4M3.
BenchmarkList make_gemm_benchmarks();

// Device-to-device copy and a read kernel (bandwidth), a rank-16 LoRA adapter pair (adapter),
// NF4 dequantization of projection weights (dequant), RMSNorm forward (norm) and a fused AdamW
// step (optimizer).
BenchmarkList make_memory_benchmarks();

}  // namespace ftplan::bench
