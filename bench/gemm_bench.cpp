// GEMM rates through cuBLASLt for the projections of a training step.
//
// A projection with in_features K_in and out_features N_out over T tokens, PyTorch layout
// (X [T, K_in], W [N_out, K_in], Y [T, N_out], all row-major), makes three products per step:
//   forward   Y  = X · Wᵀ     cuBLASLt m = N_out, n = T,     k = K_in   "TN"
//   bwd_dx    dX = dY · W     cuBLASLt m = K_in,  n = T,     k = N_out  "NN"
//   bwd_dw    dW = dYᵀ · X    cuBLASLt m = K_in,  n = N_out, k = T      "NT"
// (a row-major [r, c] tensor is cuBLASLt's column-major c×r matrix). Each is 2·m·n·k FLOPs.
// FP8 E4M3 on Hopper and Ada takes only the "TN" layout; Transformer Engine keeps transposed FP8
// copies of W (for dX) and of X and dY (for dW), made while casting, so every FP8 product here
// runs as TN on operands in that layout. FP8 accumulation as Transformer Engine's default recipe:
// fast accumulation for the forward product, full FP32 accumulation for the two backward ones.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "bench_models.hpp"
#include "benchmarks.hpp"
#include "kernels.hpp"
#include "lt_gemm.hpp"

namespace ftplan::bench {

namespace {

// Error bounds, relative to max(|ref|, sqrt(Σ (a_p·b_p)²)) (reference.hpp, dot_reference):
// BF16 has 8 significant bits, so output rounding is at most 2^-8 of |ref|; FP32 accumulation
// adds far less; 2^-6 leaves room for |ref| a few times the scale. FP8 fast accumulation keeps
// partial sums at reduced precision (about 2^-14 per addition), which over k = 28672 terms of
// random sign stays near 2^-7 of the scale; 2^-5 bounds it. A wrong layout or operand gives
// errors of order 1.
constexpr double kBf16GemmBound = 1.0 / 64.0;
constexpr double kFp8GemmBound = 1.0 / 32.0;

// Per-tensor FP8 scales, distinct so that a scale applied twice or not at all shows.
constexpr float kFp8ScaleA = 0.5f;
constexpr float kFp8ScaleB = 0.25f;
// Floats between the two scales on the card: 16 bytes each.
constexpr std::int64_t kScaleStride = 4;

enum class Pass { kForward, kBackwardInput, kBackwardWeight };

const char* pass_name(Pass p) {
  switch (p) {
    case Pass::kForward:
      return "fwd";
    case Pass::kBackwardInput:
      return "bwd_dx";
    case Pass::kBackwardWeight:
      return "bwd_dw";
  }
  return "fwd";
}

struct Projection {
  const char* name;
  std::int64_t in_features;
  std::int64_t out_features;
};

// The distinct projection shapes of a decoder block: k and v share one, gate and up another.
std::vector<Projection> projections(const ModelShape& m) {
  return {{"q", m.hidden, m.q_dim},
          {"kv", m.hidden, m.kv_dim},
          {"o", m.q_dim, m.hidden},
          {"gate_up", m.hidden, m.intermediate},
          {"down", m.intermediate, m.hidden}};
}

GemmSpec spec_for(const Projection& p, std::int64_t tokens, Pass pass, GemmType type) {
  GemmSpec s;
  s.type = type;
  switch (pass) {
    case Pass::kForward:
      s.m = p.out_features;
      s.n = tokens;
      s.k = p.in_features;
      s.transpose_a = true;
      s.transpose_b = false;
      break;
    case Pass::kBackwardInput:
      s.m = p.in_features;
      s.n = tokens;
      s.k = p.out_features;
      s.transpose_a = false;
      s.transpose_b = false;
      break;
    case Pass::kBackwardWeight:
      s.m = p.in_features;
      s.n = p.out_features;
      s.k = tokens;
      s.transpose_a = false;
      s.transpose_b = true;
      break;
  }
  if (type == GemmType::kFP8E4M3) {
    s.transpose_a = true;
    s.transpose_b = false;
    s.fast_accumulation = pass == Pass::kForward;
  }
  return s;
}

float decode(const std::vector<std::uint8_t>& raw, std::size_t i, GemmType type) {
  if (type == GemmType::kFP8E4M3) return fp8_e4m3_bits_to_float(raw[i]);
  std::uint16_t bits = 0;
  bits = static_cast<std::uint16_t>(raw[2 * i] | (raw[2 * i + 1] << 8));
  return bf16_bits_to_float(bits);
}

class GemmBenchmark : public Benchmark {
 public:
  GemmBenchmark(const ModelShape& model, const Projection& p, std::int64_t tokens, Pass pass,
                GemmType type)
      : Benchmark(describe(model, p, tokens, pass, type)), spec_(spec_for(p, tokens, pass, type)) {}

  std::int64_t set_bytes() const override {
    const std::int64_t in = spec_.input_bytes();
    return footprint(spec_.m * spec_.k * in) + footprint(spec_.k * spec_.n * in) +
           footprint(spec_.m * spec_.n * 2);
  }
  std::int64_t shared_bytes() const override {
    // FP8 scales, and two vectors of k elements gathered for the check.
    return footprint(kScaleStride * 2 * sizeof(float)) +
           2 * footprint(spec_.k * spec_.input_bytes());
  }

  std::string unsupported(const Context& ctx) const override {
    if (spec_.type == GemmType::kFP8E4M3 && ctx.cc_major * 10 + ctx.cc_minor < 89)
      return "FP8 tensor cores need compute capability 8.9 or later (Ada, Hopper, Blackwell)";
    return {};
  }

  void setup(Context& ctx, int sets) override {
    const std::int64_t in = spec_.input_bytes();
    scales_ = ctx.arena->take_elements<float>(2 * kScaleStride);
    scratch_a_ = ctx.arena->take(static_cast<std::size_t>(spec_.k * in));
    scratch_b_ = ctx.arena->take(static_cast<std::size_t>(spec_.k * in));
    // Each scale on its own 16 bytes: cuBLASLt 13 refuses (CUBLAS_STATUS_NOT_SUPPORTED, at the
    // matmul, not the heuristic) a B scale pointer only 4-byte aligned.
    float scales[2 * kScaleStride] = {};
    scales[0] = kFp8ScaleA;
    scales[kScaleStride] = kFp8ScaleB;
    FTPLAN_CUDA_CHECK(cudaMemcpy(scales_, scales, sizeof scales, cudaMemcpyHostToDevice));
    sets_.clear();
    for (int s = 0; s < sets; ++s) {
      Buffers b;
      b.a = ctx.arena->take(static_cast<std::size_t>(spec_.m * spec_.k * in));
      b.b = ctx.arena->take(static_cast<std::size_t>(spec_.k * spec_.n * in));
      b.d = ctx.arena->take(static_cast<std::size_t>(spec_.m * spec_.n * 2));
      fill(ctx, b.a, spec_.m * spec_.k, seed_for(info_.id, 2 * static_cast<std::uint64_t>(s)));
      fill(ctx, b.b, spec_.k * spec_.n, seed_for(info_.id, 2 * static_cast<std::uint64_t>(s) + 1));
      sets_.push_back(b);
    }
    gemm_ = std::make_unique<LtGemm>(ctx.lt, spec_, ctx.workspace_bytes, scales_,
                                     scales_ + kScaleStride);
  }

  void launch(Context& ctx, int set) override {
    const Buffers& b = sets_[static_cast<std::size_t>(set)];
    gemm_->run(b.a, b.b, b.d, ctx.workspace, ctx.stream);
  }

  CheckResult check(Context& ctx) override {
    launch(ctx, 0);
    FTPLAN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    const Buffers& b = sets_[0];
    const bool fp8 = spec_.type == GemmType::kFP8E4M3;
    const double scale = fp8 ? static_cast<double>(kFp8ScaleA) * kFp8ScaleB : 1.0;
    ErrorTally tally;
    tally.metric =
        "|gpu - ref| / max(|ref|, sqrt(sum_p (a_p b_p)^2)), ref in FP64 from the "
        "device's inputs, at sampled outputs";
    tally.bound = fp8 ? kFp8GemmBound : kBf16GemmBound;
    std::uint64_t state = seed_for(info_.id, 99);
    for (int s = 0; s < ctx.check_samples; ++s) {
      // The two corners, then positions from a linear congruential sequence.
      std::int64_t i = 0, j = 0;
      if (s == 1) {
        i = spec_.m - 1;
        j = spec_.n - 1;
      } else if (s > 1) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        i = static_cast<std::int64_t>((state >> 33) % static_cast<std::uint64_t>(spec_.m));
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        j = static_cast<std::int64_t>((state >> 33) % static_cast<std::uint64_t>(spec_.n));
      }
      // Row i of op(A) and column j of op(B), from the column-major stored matrices.
      const std::vector<float> row = spec_.transpose_a ? fetch(ctx, b.a, i * spec_.k, 1, scratch_a_)
                                                       : fetch(ctx, b.a, i, spec_.m, scratch_a_);
      const std::vector<float> column = spec_.transpose_b
                                            ? fetch(ctx, b.b, j, spec_.n, scratch_b_)
                                            : fetch(ctx, b.b, j * spec_.k, 1, scratch_b_);
      std::uint16_t out = 0;
      FTPLAN_CUDA_CHECK(cudaMemcpy(&out, static_cast<const std::uint16_t*>(b.d) + i + j * spec_.m,
                                   sizeof out, cudaMemcpyDeviceToHost));
      const DotReference ref = dot_reference(row.data(), column.data(), spec_.k);
      tally.add(relative_error(static_cast<double>(bf16_bits_to_float(out)), ref.value * scale,
                               ref.scale * scale));
    }
    return to_check(tally);
  }

  void release() override {
    gemm_.reset();
    sets_.clear();
  }

 private:
  struct Buffers {
    void* a = nullptr;
    void* b = nullptr;
    void* d = nullptr;
  };

  static BenchResult describe(const ModelShape& model, const Projection& p, std::int64_t tokens,
                              Pass pass, GemmType type) {
    const GemmSpec s = spec_for(p, tokens, pass, type);
    const bool fp8 = type == GemmType::kFP8E4M3;
    BenchResult r;
    std::ostringstream id;
    id << "gemm." << (fp8 ? "fp8" : "bf16") << "." << model.id << "." << p.name << "."
       << pass_name(pass) << ".t" << tokens;
    r.id = id.str();
    r.bench_class = "gemm";
    r.op = pass_name(pass);
    r.model = model.id;
    r.projection = p.name;
    r.shape = {{"tokens", tokens},
               {"in_features", p.in_features},
               {"out_features", p.out_features},
               {"m", s.m},
               {"n", s.n},
               {"k", s.k}};
    r.layout = s.layout();
    r.dtype = fp8 ? "fp8_e4m3" : "bf16";
    r.output_dtype = "bf16";
    r.accumulate = s.fast_accumulation ? "fp32_fast" : "fp32";
    const double m = static_cast<double>(s.m), n = static_cast<double>(s.n),
                 k = static_cast<double>(s.k);
    r.flops = 2.0 * m * n * k;
    r.bytes = (m * k + k * n) * s.input_bytes() + m * n * 2.0;
    r.bytes_counted = "A and B read once, D written once (minimum traffic)";
    return r;
  }

  void fill(Context& ctx, void* data, std::int64_t count, std::uint64_t seed) const {
    if (spec_.type == GemmType::kFP8E4M3)
      kernels::fill_uniform_fp8_e4m3(static_cast<std::uint8_t*>(data), count, seed, -2.0f, 2.0f,
                                     ctx.stream);
    else
      kernels::fill_uniform_bf16(static_cast<std::uint16_t*>(data), count, seed, -1.0f, 1.0f,
                                 ctx.stream);
  }

  // k elements first + p·stride of a device matrix, decoded to float.
  std::vector<float> fetch(Context& ctx, const void* matrix, std::int64_t first,
                           std::int64_t stride, void* scratch) const {
    const int element = spec_.input_bytes();
    kernels::gather_strided(matrix, first, stride, spec_.k, element, scratch, ctx.stream);
    FTPLAN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    const std::vector<std::uint8_t> raw =
        copy_to_host(static_cast<const std::uint8_t*>(scratch), spec_.k * element);
    std::vector<float> out(static_cast<std::size_t>(spec_.k));
    for (std::size_t p = 0; p < out.size(); ++p)
      out[p] = decode(raw, p, spec_.type);
    return out;
  }

  GemmSpec spec_;
  std::unique_ptr<LtGemm> gemm_;
  std::vector<Buffers> sets_;
  float* scales_ = nullptr;
  void* scratch_a_ = nullptr;
  void* scratch_b_ = nullptr;
};

}  // namespace

BenchmarkList make_gemm_benchmarks() {
  BenchmarkList out;
  for (GemmType type : {GemmType::kBF16, GemmType::kFP8E4M3})
    for (const ModelShape& model : kBenchModels)
      for (const Projection& p : projections(model))
        for (std::int64_t tokens : {2048, 4096, 8192})
          for (Pass pass : {Pass::kForward, Pass::kBackwardInput, Pass::kBackwardWeight})
            out.push_back(std::make_unique<GemmBenchmark>(model, p, tokens, pass, type));
  return out;
}

}  // namespace ftplan::bench
