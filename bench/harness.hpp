// What every benchmark shares: the device context, the Benchmark interface, input-set rotation,
// and the timing loop (CUDA events around CUDA-graph replays, median of repeats).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cuda_util.hpp"
#include "reference.hpp"
#include "results.hpp"

namespace ftplan::bench {

struct Context {
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  DeviceArena* arena = nullptr;
  void* workspace = nullptr;  // cuBLASLt workspace
  std::size_t workspace_bytes = 0;
  int cc_major = 0;
  int cc_minor = 0;
  std::int64_t l2_bytes = 0;
  int check_samples = 0;  // sampled outputs per GEMM check
};

// One measurement. Describing it (id, class, shape, FLOPs, bytes) needs no GPU, so `--list`
// runs anywhere; setup, launch and check run on the device.
class Benchmark {
 public:
  explicit Benchmark(BenchResult info) : info_(std::move(info)) {}
  virtual ~Benchmark() = default;
  Benchmark(const Benchmark&) = delete;
  Benchmark& operator=(const Benchmark&) = delete;

  const BenchResult& info() const { return info_; }
  // Device bytes of one input set (every buffer a launch reads or writes), and of the buffers
  // all sets share.
  virtual std::int64_t set_bytes() const = 0;
  virtual std::int64_t shared_bytes() const { return 0; }
  // Non-empty: why this card cannot run it (the benchmark is reported as skipped).
  virtual std::string unsupported(const Context&) const { return {}; }
  // Takes `sets` input sets (and the shared buffers) from ctx.arena and fills them.
  virtual void setup(Context& ctx, int sets) = 0;
  // Enqueues one launch on input set `set`; nothing else (it is captured into a CUDA graph).
  virtual void launch(Context& ctx, int set) = 0;
  // Runs once on set 0 and compares the output with the CPU reference.
  virtual CheckResult check(Context& ctx) = 0;
  // Frees what setup made outside the arena (cuBLASLt descriptors).
  virtual void release() {}

 protected:
  BenchResult info_;
};

using BenchmarkList = std::vector<std::unique_ptr<Benchmark>>;

// Input sets to rotate so that no launch finds its inputs in the L2 cache: enough sets that
// the others add up to at least three times the L2 size, at most 64. One set already larger
// than that needs no rotation.
int input_sets_for(std::int64_t set_bytes, std::int64_t l2_bytes);

struct TimingPlan {
  int warmup = 10;             // untimed launches first (clocks, code caches, cuBLASLt set-up)
  int repeats = 30;            // timed repeats
  double min_repeat_s = 1e-3;  // each repeat runs back-to-back launches for at least this long
};

// Times `b` on `sets` input sets: warm-up, then `repeats` repeats of N back-to-back launches
// (N a multiple of `sets`, chosen so that a repeat lasts at least min_repeat_s), each repeat a
// replay of one captured CUDA graph (falls back to direct launches if capture fails), timed by
// CUDA events recorded between replays; per-launch seconds = repeat time / N.
TimingStats time_benchmark(Context& ctx, Benchmark& b, int sets, const TimingPlan& plan);

// A deterministic seed per benchmark and buffer (FNV-1a of the id, mixed with `salt`).
std::uint64_t seed_for(std::string_view id, std::uint64_t salt);

// The check of a set of compared values.
CheckResult to_check(const ErrorTally& tally);

// Bytes a buffer of `bytes` takes in the arena.
inline std::int64_t footprint(std::int64_t bytes) {
  return static_cast<std::int64_t>(DeviceArena::footprint(static_cast<std::size_t>(bytes)));
}

}  // namespace ftplan::bench
