// The memory-bound parts of a training step the seed names (§ "Warum die Bandbreite beim
// Training weniger zählt": activations, norms, optimizer step, adapters, NF4 dequantization),
// and the two bandwidth references they are compared with.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "bench_models.hpp"
#include "benchmarks.hpp"
#include "kernels.hpp"
#include "lt_gemm.hpp"

namespace ftplan::bench {

namespace {

// Bound for a BF16 result of a short FP32 computation (no long sums): BF16 has 8 significant
// bits, so output rounding is at most 2^-8 of the value; 2^-7 leaves room for FP32 differences
// in what is rounded.
constexpr double kBf16ElementwiseBound = 1.0 / 128.0;
// Bound for a BF16 result of an FP32-accumulated sum, relative to max(|ref|, the sum's scale)
// (reference.hpp, dot_reference): as the BF16 GEMM benchmarks (gemm_bench.cpp).
constexpr double kBf16SumBound = 1.0 / 64.0;
// FP32 state of an optimizer step against FP64: a handful of FP32 roundings (2^-24 each) of the
// largest term of each update; 1e-5 is about 170 of them.
constexpr double kFp32StepBound = 1e-5;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr int kLoraRank = 16;  // the seed's rank

const ModelShape& first_model() {
  return kBenchModels[0];
}
const ModelShape& last_model() {
  return kBenchModels[std::size(kBenchModels) - 1];
}

// Parameters of a rank-r LoRA on all seven projections of every block: r·(in + out) each
// (Hu et al. 2021; memory/model_states.cpp counts the same for the planner).
std::int64_t lora_adapter_params(const ModelShape& m, std::int64_t rank) {
  const std::int64_t per_block = (m.hidden + m.q_dim) + 2 * (m.hidden + m.kv_dim) +
                                 (m.q_dim + m.hidden) + 2 * (m.hidden + m.intermediate) +
                                 (m.intermediate + m.hidden);
  return m.layers * rank * per_block;
}

std::vector<std::uint16_t> copy_bf16(const std::uint16_t* device, std::int64_t count) {
  return copy_to_host(device, count);
}

std::vector<float> to_float(const std::vector<std::uint16_t>& bits) {
  std::vector<float> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i)
    out[i] = bf16_bits_to_float(bits[i]);
  return out;
}

// Evenly spaced indices into [0, n): at most `count` of them, first and last included.
std::vector<std::int64_t> spread(std::int64_t n, std::int64_t count) {
  std::vector<std::int64_t> out;
  if (n <= 0) return out;
  const std::int64_t step = std::max<std::int64_t>(1, n / std::max<std::int64_t>(1, count));
  for (std::int64_t i = 0; i < n; i += step)
    out.push_back(i);
  if (out.back() != n - 1) out.push_back(n - 1);
  return out;
}

// ---- bandwidth: device-to-device copy -----------------------------------------------------------

class CopyBandwidth : public Benchmark {
 public:
  explicit CopyBandwidth(std::int64_t bytes) : Benchmark(describe(bytes)), bytes_(bytes) {}

  std::int64_t set_bytes() const override { return 2 * footprint(bytes_); }

  void setup(Context& ctx, int sets) override {
    buffers_.clear();
    for (int s = 0; s < sets; ++s) {
      auto* src = ctx.arena->take_elements<std::uint32_t>(bytes_ / 4);
      auto* dst = ctx.arena->take_elements<std::uint32_t>(bytes_ / 4);
      kernels::fill_random_words(src, bytes_ / 4, seed_for(info_.id, static_cast<std::uint64_t>(s)),
                                 ctx.stream);
      buffers_.push_back({src, dst});
    }
  }

  void launch(Context& ctx, int set) override {
    const auto& [src, dst] = buffers_[static_cast<std::size_t>(set)];
    FTPLAN_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(bytes_),
                                      cudaMemcpyDeviceToDevice, ctx.stream));
  }

  CheckResult check(Context& ctx) override {
    FTPLAN_CUDA_CHECK(
        cudaMemsetAsync(buffers_[0].second, 0, static_cast<std::size_t>(bytes_), ctx.stream));
    launch(ctx, 0);
    FTPLAN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    ErrorTally tally;
    tally.metric = "mismatching 32-bit words (source vs copy) in 16 evenly spaced 1 MiB slices";
    tally.bound = 0.0;
    const std::int64_t slice_words = (std::int64_t{1} << 20) / 4;
    for (std::int64_t slice : spread(bytes_ / 4 / slice_words, 16)) {
      const std::vector<std::uint32_t> a =
          copy_to_host(buffers_[0].first + slice * slice_words, slice_words);
      const std::vector<std::uint32_t> b =
          copy_to_host(buffers_[0].second + slice * slice_words, slice_words);
      std::int64_t mismatches = 0;
      for (std::size_t i = 0; i < a.size(); ++i)
        mismatches += a[i] != b[i] ? 1 : 0;
      tally.add(static_cast<double>(mismatches));
    }
    return to_check(tally);
  }

 private:
  static BenchResult describe(std::int64_t bytes) {
    BenchResult r;
    r.id = "bandwidth.d2d_copy." + std::to_string(bytes / kGiB) + "gib";
    r.bench_class = "bandwidth";
    r.op = "d2d_copy";
    r.shape = {{"bytes", bytes}};
    r.dtype = "bytes";
    r.output_dtype = "bytes";
    r.bytes = 2.0 * static_cast<double>(bytes);
    r.bytes_counted = "bytes read + bytes written (2 x the copy size)";
    return r;
  }

  std::int64_t bytes_;
  std::vector<std::pair<std::uint32_t*, std::uint32_t*>> buffers_;
};

// ---- bandwidth: read-dominated kernel -----------------------------------------------------------

class ReadBandwidth : public Benchmark {
 public:
  explicit ReadBandwidth(std::int64_t bytes) : Benchmark(describe(bytes)), bytes_(bytes) {}

  std::int64_t set_bytes() const override { return footprint(bytes_); }
  std::int64_t shared_bytes() const override { return footprint(sizeof(unsigned long long)); }

  void setup(Context& ctx, int sets) override {
    sum_ = ctx.arena->take_elements<unsigned long long>(1);
    buffers_.clear();
    for (int s = 0; s < sets; ++s) {
      auto* data = static_cast<std::uint32_t*>(ctx.arena->take(static_cast<std::size_t>(bytes_)));
      kernels::fill_random_words(data, bytes_ / 4,
                                 seed_for(info_.id, static_cast<std::uint64_t>(s)), ctx.stream);
      buffers_.push_back(data);
    }
  }

  void launch(Context& ctx, int set) override {
    kernels::read_sum(buffers_[static_cast<std::size_t>(set)], bytes_, sum_, ctx.stream);
  }

  CheckResult check(Context& ctx) override {
    FTPLAN_CUDA_CHECK(cudaMemsetAsync(sum_, 0, sizeof(unsigned long long), ctx.stream));
    launch(ctx, 0);
    FTPLAN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    const std::vector<unsigned long long> got = copy_to_host(sum_, 1);
    const std::vector<std::uint32_t> words = copy_to_host(buffers_[0], bytes_ / 4);
    unsigned long long want = 0;
    for (std::uint32_t w : words)
      want += w;
    ErrorTally tally;
    tally.metric = "|gpu sum - cpu sum| of all 32-bit words (mod 2^64)";
    tally.bound = 0.0;
    tally.add(got[0] == want ? 0.0 : 1.0);
    return to_check(tally);
  }

 private:
  static BenchResult describe(std::int64_t bytes) {
    BenchResult r;
    r.id = "bandwidth.read." + std::to_string(bytes / kGiB) + "gib";
    r.bench_class = "bandwidth";
    r.op = "read";
    r.shape = {{"bytes", bytes}};
    r.dtype = "bytes";
    r.output_dtype = "u64";
    r.flops = 0.0;
    r.bytes = static_cast<double>(bytes);
    r.bytes_counted = "bytes read (the 8-byte sum written per block is not counted)";
    return r;
  }

  std::int64_t bytes_;
  unsigned long long* sum_ = nullptr;
  std::vector<std::uint32_t*> buffers_;
};

// ---- adapter: a rank-r LoRA pair, h = x·Aᵀ then y += h·Bᵀ --------------------------------------
// x [T, H], A [r, H], h [T, r], B [H, r], y [T, H] (row-major, PyTorch layout); the adapter's
// output is added to the base layer's output y in the second product's epilogue (beta = 1).

class LoraPair : public Benchmark {
 public:
  LoraPair(const ModelShape& model, std::int64_t tokens)
      : Benchmark(describe(model, tokens)), tokens_(tokens), hidden_(model.hidden) {}

  std::int64_t set_bytes() const override {
    return footprint(tokens_ * hidden_ * 2) + footprint(tokens_ * kLoraRank * 2) +
           footprint(tokens_ * hidden_ * 2);
  }
  std::int64_t shared_bytes() const override { return 2 * footprint(kLoraRank * hidden_ * 2); }

  void setup(Context& ctx, int sets) override {
    a_ = ctx.arena->take_elements<std::uint16_t>(kLoraRank * hidden_);
    b_ = ctx.arena->take_elements<std::uint16_t>(hidden_ * kLoraRank);
    kernels::fill_uniform_bf16(a_, kLoraRank * hidden_, seed_for(info_.id, 1000), -0.05f, 0.05f,
                               ctx.stream);
    kernels::fill_uniform_bf16(b_, hidden_ * kLoraRank, seed_for(info_.id, 1001), -0.05f, 0.05f,
                               ctx.stream);
    sets_.clear();
    for (int s = 0; s < sets; ++s) {
      Buffers b;
      b.x = ctx.arena->take_elements<std::uint16_t>(tokens_ * hidden_);
      b.h = ctx.arena->take_elements<std::uint16_t>(tokens_ * kLoraRank);
      b.y = ctx.arena->take_elements<std::uint16_t>(tokens_ * hidden_);
      const auto salt = 2 * static_cast<std::uint64_t>(s);
      kernels::fill_uniform_bf16(b.x, tokens_ * hidden_, seed_for(info_.id, salt), -1.0f, 1.0f,
                                 ctx.stream);
      kernels::fill_uniform_bf16(b.y, tokens_ * hidden_, seed_for(info_.id, salt + 1), -1.0f, 1.0f,
                                 ctx.stream);
      sets_.push_back(b);
    }
    GemmSpec down;  // h (r×T) = Aᵀ-view: m = r, n = T, k = H
    down.m = kLoraRank;
    down.n = tokens_;
    down.k = hidden_;
    down.transpose_a = true;
    GemmSpec up;  // y (H×T) += B-view · h: m = H, n = T, k = r
    up.m = hidden_;
    up.n = tokens_;
    up.k = kLoraRank;
    up.transpose_a = true;
    up.accumulate_into_d = true;
    down_ = std::make_unique<LtGemm>(ctx.lt, down, ctx.workspace_bytes);
    up_ = std::make_unique<LtGemm>(ctx.lt, up, ctx.workspace_bytes);
  }

  void launch(Context& ctx, int set) override {
    const Buffers& b = sets_[static_cast<std::size_t>(set)];
    down_->run(a_, b.x, b.h, ctx.workspace, ctx.stream);
    up_->run(b_, b.h, b.y, ctx.workspace, ctx.stream);
  }

  CheckResult check(Context& ctx) override {
    const Buffers& b = sets_[0];
    FTPLAN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    const std::vector<std::int64_t> tokens = spread(tokens_, 8);
    // y before the launch, at the sampled tokens (full rows).
    std::vector<std::vector<float>> y_before;
    for (std::int64_t t : tokens)
      y_before.push_back(to_float(copy_bf16(b.y + t * hidden_, hidden_)));
    launch(ctx, 0);
    FTPLAN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    const std::vector<float> a = to_float(copy_bf16(a_, kLoraRank * hidden_));
    const std::vector<float> bw = to_float(copy_bf16(b_, hidden_ * kLoraRank));

    ErrorTally tally;
    tally.metric =
        "|gpu - ref| / max(|ref|, sqrt(sum of squared terms)), FP64 reference, h at "
        "sampled tokens and y over sampled output features";
    tally.bound = kBf16SumBound;
    for (std::size_t s = 0; s < tokens.size(); ++s) {
      const std::int64_t t = tokens[s];
      const std::vector<float> x = to_float(copy_bf16(b.x + t * hidden_, hidden_));
      const std::vector<float> h = to_float(copy_bf16(b.h + t * kLoraRank, kLoraRank));
      const std::vector<float> y = to_float(copy_bf16(b.y + t * hidden_, hidden_));
      for (int q = 0; q < kLoraRank; ++q) {  // h[t][q] = Σ_i x[t][i] · A[q][i]
        const DotReference ref =
            dot_reference(x.data(), a.data() + static_cast<std::ptrdiff_t>(q) * hidden_, hidden_);
        tally.add(relative_error(h[static_cast<std::size_t>(q)], ref.value, ref.scale));
      }
      for (std::int64_t i : spread(hidden_, 64)) {  // y[t][i] = y0 + Σ_q h[t][q] · B[i][q]
        const DotReference ref = dot_reference(h.data(), bw.data() + i * kLoraRank, kLoraRank);
        const double y0 = y_before[s][static_cast<std::size_t>(i)];
        const double want = y0 + ref.value;
        tally.add(relative_error(y[static_cast<std::size_t>(i)], want,
                                 std::sqrt(y0 * y0 + ref.scale * ref.scale)));
      }
    }
    return to_check(tally);
  }

  void release() override {
    down_.reset();
    up_.reset();
  }

 private:
  static BenchResult describe(const ModelShape& model, std::int64_t tokens) {
    BenchResult r;
    r.id = "adapter.lora_r" + std::to_string(kLoraRank) + "." + model.id + ".t" +
           std::to_string(tokens);
    r.bench_class = "adapter";
    r.op = "lora_pair";
    r.model = model.id;
    r.shape = {{"tokens", tokens}, {"hidden", model.hidden}, {"rank", kLoraRank}};
    r.layout = "TN,TN";
    r.dtype = "bf16";
    r.output_dtype = "bf16";
    r.accumulate = "fp32";
    const double t = static_cast<double>(tokens), h = static_cast<double>(model.hidden),
                 rank = kLoraRank;
    r.flops = 2.0 * t * h * rank * 2.0;
    // x·Aᵀ: read x and A, write h; h·Bᵀ + y: read h, B and y, write y. BF16 = 2 B.
    r.bytes = 2.0 * (t * h + rank * h + t * rank) + 2.0 * (t * rank + h * rank + 2.0 * t * h);
    r.bytes_counted = "x, A read and h written; h, B, y read and y written (2 B each)";
    return r;
  }

  struct Buffers {
    std::uint16_t* x = nullptr;
    std::uint16_t* h = nullptr;
    std::uint16_t* y = nullptr;
  };
  std::int64_t tokens_;
  std::int64_t hidden_;
  std::uint16_t* a_ = nullptr;
  std::uint16_t* b_ = nullptr;
  std::vector<Buffers> sets_;
  std::unique_ptr<LtGemm> down_;
  std::unique_ptr<LtGemm> up_;
};

// ---- dequant: NF4 with double-quantized constants → BF16 ---------------------------------------

class Nf4Dequant : public Benchmark {
 public:
  Nf4Dequant(const ModelShape& model, const char* projection, std::int64_t rows, std::int64_t cols)
      : Benchmark(describe(model, projection, rows, cols)), numel_(rows * cols) {}

  std::int64_t set_bytes() const override {
    return footprint(numel_ / 2) + footprint(blocks()) + footprint(4 * groups()) +
           footprint(2 * numel_);
  }

  void setup(Context& ctx, int sets) override {
    sets_.clear();
    for (int s = 0; s < sets; ++s) {
      Buffers b;
      b.codes = ctx.arena->take_elements<std::uint8_t>(numel_ / 2);
      b.absmax_codes = ctx.arena->take_elements<std::int8_t>(blocks());
      b.scales = ctx.arena->take_elements<float>(groups());
      b.out = ctx.arena->take_elements<std::uint16_t>(numel_);
      const auto salt = 3 * static_cast<std::uint64_t>(s);
      // Any byte is a valid pair of NF4 codes and any signed byte a valid absmax code.
      kernels::fill_random_words(reinterpret_cast<std::uint32_t*>(b.codes), numel_ / 8,
                                 seed_for(info_.id, salt), ctx.stream);
      kernels::fill_random_words(reinterpret_cast<std::uint32_t*>(b.absmax_codes),
                                 (blocks() + 3) / 4, seed_for(info_.id, salt + 1), ctx.stream);
      // Absmax of 64 weights of standard deviation 0.02 is about 0.05: offset 0.05, spread ±0.02.
      kernels::fill_uniform_f32(b.scales, groups(), seed_for(info_.id, salt + 2), 0.01f, 0.02f,
                                ctx.stream);
      sets_.push_back(b);
    }
  }

  void launch(Context& ctx, int set) override {
    const Buffers& b = sets_[static_cast<std::size_t>(set)];
    kernels::nf4_dequantize(b.codes, b.absmax_codes, b.scales, kOffset, numel_, layout_.block,
                            layout_.second_block, b.out, ctx.stream);
  }

  CheckResult check(Context& ctx) override {
    launch(ctx, 0);
    FTPLAN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    const Buffers& b = sets_[0];
    Nf4Tensor t;
    t.numel = numel_;
    t.layout = layout_;
    t.codes = copy_to_host(b.codes, numel_ / 2);
    t.absmax_codes = copy_to_host(b.absmax_codes, blocks());
    t.absmax_scales = copy_to_host(b.scales, groups());
    t.absmax_offset = kOffset;
    const std::vector<std::uint16_t> out = copy_bf16(b.out, numel_);
    ErrorTally tally;
    tally.metric =
        "|gpu - ref| / |ref| (0 where both are 0), ref = reference.cpp "
        "nf4_dequantize_element, at 2^20 evenly spaced weights";
    tally.bound = kBf16ElementwiseBound;
    for (std::int64_t i : spread(numel_, std::int64_t{1} << 20)) {
      const double want = nf4_dequantize_element(t, i);
      const double got = bf16_bits_to_float(out[static_cast<std::size_t>(i)]);
      tally.add(want == 0.0 ? std::fabs(got) : relative_error(got, want, 0.0));
    }
    return to_check(tally);
  }

 private:
  static constexpr float kOffset = 0.05f;

  std::int64_t blocks() const { return numel_ / layout_.block; }
  std::int64_t groups() const {
    return (blocks() + layout_.second_block - 1) / layout_.second_block;
  }

  static BenchResult describe(const ModelShape& model, const char* projection, std::int64_t rows,
                              std::int64_t cols) {
    const Nf4Layout layout;
    const std::int64_t n = rows * cols;
    const std::int64_t blocks = n / layout.block;
    const std::int64_t groups = (blocks + layout.second_block - 1) / layout.second_block;
    BenchResult r;
    r.id = std::string("dequant.nf4_dq.") + model.id + "." + projection;
    r.bench_class = "dequant";
    r.op = "nf4_dequant";
    r.model = model.id;
    r.projection = projection;
    r.shape = {{"rows", rows},
               {"cols", cols},
               {"numel", n},
               {"block", layout.block},
               {"second_block", layout.second_block}};
    r.dtype = "nf4";
    r.output_dtype = "bf16";
    // One multiply per weight, and code·scale + offset once per block.
    r.flops = static_cast<double>(n) + 2.0 * static_cast<double>(blocks);
    r.bytes = static_cast<double>(n / 2 + blocks + 4 * groups + 2 * n);
    r.bytes_counted =
        "4-bit codes + 8-bit absmax codes + FP32 second-level scales read, BF16 "
        "weights written";
    return r;
  }

  struct Buffers {
    std::uint8_t* codes = nullptr;
    std::int8_t* absmax_codes = nullptr;
    float* scales = nullptr;
    std::uint16_t* out = nullptr;
  };
  std::int64_t numel_;
  Nf4Layout layout_;
  std::vector<Buffers> sets_;
};

// ---- norm: RMSNorm forward, BF16
// -----------------------------------------------------------------

class RmsNorm : public Benchmark {
 public:
  RmsNorm(const ModelShape& model, std::int64_t tokens)
      : Benchmark(describe(model, tokens)), tokens_(tokens), hidden_(model.hidden) {}

  std::int64_t set_bytes() const override { return 2 * footprint(tokens_ * hidden_ * 2); }
  std::int64_t shared_bytes() const override { return footprint(hidden_ * 2); }
  std::string unsupported(const Context&) const override {
    if (hidden_ % 256 != 0 || hidden_ > 8192)
      return "the RMSNorm kernel takes hidden sizes that are multiples of 256, up to 8192";
    return {};
  }

  void setup(Context& ctx, int sets) override {
    weight_ = ctx.arena->take_elements<std::uint16_t>(hidden_);
    kernels::fill_uniform_bf16(weight_, hidden_, seed_for(info_.id, 1000), 0.5f, 1.5f, ctx.stream);
    sets_.clear();
    for (int s = 0; s < sets; ++s) {
      auto* x = ctx.arena->take_elements<std::uint16_t>(tokens_ * hidden_);
      auto* y = ctx.arena->take_elements<std::uint16_t>(tokens_ * hidden_);
      kernels::fill_uniform_bf16(x, tokens_ * hidden_,
                                 seed_for(info_.id, static_cast<std::uint64_t>(s)), -1.0f, 1.0f,
                                 ctx.stream);
      sets_.emplace_back(x, y);
    }
  }

  void launch(Context& ctx, int set) override {
    const auto& [x, y] = sets_[static_cast<std::size_t>(set)];
    kernels::rmsnorm_forward(x, weight_, tokens_, static_cast<int>(hidden_), kEps, y, ctx.stream);
  }

  CheckResult check(Context& ctx) override {
    launch(ctx, 0);
    FTPLAN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    const auto& [x, y] = sets_[0];
    const std::vector<float> w = to_float(copy_bf16(weight_, hidden_));
    ErrorTally tally;
    tally.metric = "|gpu - ref| / |ref|, FP64 reference, every element of 16 evenly spaced rows";
    tally.bound = kBf16ElementwiseBound;
    std::vector<double> want(static_cast<std::size_t>(hidden_));
    for (std::int64_t row : spread(tokens_, 16)) {
      const std::vector<float> in = to_float(copy_bf16(x + row * hidden_, hidden_));
      const std::vector<float> got = to_float(copy_bf16(y + row * hidden_, hidden_));
      rmsnorm(in.data(), w.data(), 1, hidden_, static_cast<double>(kEps), want.data());
      for (std::size_t i = 0; i < want.size(); ++i)
        tally.add(want[i] == 0.0 ? std::fabs(got[i]) : relative_error(got[i], want[i], 0.0));
    }
    return to_check(tally);
  }

 private:
  static constexpr float kEps = 1e-5f;  // Llama's rms_norm_eps

  static BenchResult describe(const ModelShape& model, std::int64_t tokens) {
    BenchResult r;
    r.id = std::string("norm.rmsnorm_fwd.") + model.id + ".t" + std::to_string(tokens);
    r.bench_class = "norm";
    r.op = "rmsnorm_fwd";
    r.model = model.id;
    r.shape = {{"tokens", tokens}, {"hidden", model.hidden}};
    r.dtype = "bf16";
    r.output_dtype = "bf16";
    r.accumulate = "fp32";
    const double n = static_cast<double>(tokens) * static_cast<double>(model.hidden);
    r.flops = 4.0 * n;  // square and add, times 1/rms, times weight
    r.bytes = 2.0 * n + 2.0 * n + 2.0 * static_cast<double>(model.hidden);
    r.bytes_counted = "x read, y written (2 B each), the weight vector read once";
    return r;
  }

  std::int64_t tokens_;
  std::int64_t hidden_;
  std::uint16_t* weight_ = nullptr;
  std::vector<std::pair<std::uint16_t*, std::uint16_t*>> sets_;
};

// ---- optimizer: fused AdamW over FP32 master weights and moments --------------------------------

class AdamWStep : public Benchmark {
 public:
  // The adapter parameters of a rank-16 LoRA of `model`.
  explicit AdamWStep(const ModelShape& model)
      : Benchmark(describe(model, lora_adapter_params(model, kLoraRank))),
        params_(lora_adapter_params(model, kLoraRank)) {}

  std::int64_t set_bytes() const override {
    return 3 * footprint(4 * params_) + 2 * footprint(2 * params_);
  }

  void setup(Context& ctx, int sets) override {
    sets_.clear();
    for (int s = 0; s < sets; ++s) {
      State st;
      st.p = ctx.arena->take_elements<float>(params_);
      st.m = ctx.arena->take_elements<float>(params_);
      st.v = ctx.arena->take_elements<float>(params_);
      st.g = ctx.arena->take_elements<std::uint16_t>(params_);
      st.w = ctx.arena->take_elements<std::uint16_t>(params_);
      const auto salt = 4 * static_cast<std::uint64_t>(s);
      // Magnitudes of a run in progress: |g| ~ 1e-2, v ~ g², m ~ g.
      kernels::fill_uniform_f32(st.p, params_, seed_for(info_.id, salt), -1.0f, 1.0f, ctx.stream);
      kernels::fill_uniform_f32(st.m, params_, seed_for(info_.id, salt + 1), -1e-2f, 1e-2f,
                                ctx.stream);
      kernels::fill_uniform_f32(st.v, params_, seed_for(info_.id, salt + 2), 1e-6f, 1e-4f,
                                ctx.stream);
      kernels::fill_uniform_bf16(st.g, params_, seed_for(info_.id, salt + 3), -1e-2f, 1e-2f,
                                 ctx.stream);
      sets_.push_back(st);
    }
  }

  void launch(Context& ctx, int set) override {
    const State& st = sets_[static_cast<std::size_t>(set)];
    kernels::adamw_step(st.p, st.m, st.v, st.g, st.w, params_, scalars(), ctx.stream);
  }

  CheckResult check(Context& ctx) override {
    const State& st = sets_[0];
    const std::int64_t n = std::min<std::int64_t>(params_, std::int64_t{1} << 20);
    FTPLAN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    const std::vector<float> p0 = copy_to_host(st.p, n);
    const std::vector<float> m0 = copy_to_host(st.m, n);
    const std::vector<float> v0 = copy_to_host(st.v, n);
    const std::vector<float> g = to_float(copy_bf16(st.g, n));
    launch(ctx, 0);
    FTPLAN_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    const std::vector<float> p1 = copy_to_host(st.p, n);
    const std::vector<float> m1 = copy_to_host(st.m, n);
    const std::vector<float> v1 = copy_to_host(st.v, n);
    const std::vector<float> w1 = to_float(copy_bf16(st.w, n));

    std::vector<double> p(p0.begin(), p0.end()), m(m0.begin(), m0.end()), v(v0.begin(), v0.end());
    adamw_step(kHyper, kStep, g.data(), p.data(), m.data(), v.data(), n);

    // One tally of errors in units of their own bound. FP32 state: error relative to the
    // largest term of its update (a difference of two terms may cancel far below the rounding
    // of either); BF16 weight: error relative to the FP64 weight.
    ErrorTally tally;
    tally.metric =
        "worst of error / its bound: FP32 p, m, v as |gpu - ref| / largest term of "
        "the update (bound 1e-5), BF16 weight as |gpu - ref| / |ref| (bound 2^-7); "
        "FP64 reference, first 2^20 parameters";
    tally.bound = 1.0;
    const double b1 = kHyper.beta1, b2 = kHyper.beta2;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double gi = g[i];
      const double p_term = std::max(std::fabs(static_cast<double>(p0[i])), std::fabs(p[i]));
      const double m_term =
          std::max(b1 * std::fabs(static_cast<double>(m0[i])), (1 - b1) * std::fabs(gi));
      const double v_term = std::max(b2 * static_cast<double>(v0[i]), (1 - b2) * gi * gi);
      tally.add(std::fabs(p1[i] - p[i]) / std::max(p_term, 1e-30) / kFp32StepBound);
      tally.add(std::fabs(m1[i] - m[i]) / std::max(m_term, 1e-30) / kFp32StepBound);
      tally.add(std::fabs(v1[i] - v[i]) / std::max(v_term, 1e-30) / kFp32StepBound);
      const double w_error = p[i] == 0.0 ? std::fabs(w1[i]) : relative_error(w1[i], p[i], 0.0);
      tally.add(w_error / kBf16ElementwiseBound);
    }
    return to_check(tally);
  }

 private:
  static constexpr AdamWHyper kHyper{1e-3, 0.9, 0.999, 1e-8, 0.01};
  static constexpr std::int64_t kStep = 10;

  static kernels::AdamWScalars scalars() {
    kernels::AdamWScalars s{};
    s.lr = static_cast<float>(kHyper.lr);
    s.beta1 = static_cast<float>(kHyper.beta1);
    s.beta2 = static_cast<float>(kHyper.beta2);
    s.eps = static_cast<float>(kHyper.eps);
    s.weight_decay = static_cast<float>(kHyper.weight_decay);
    s.bias_correction1 = static_cast<float>(1.0 - std::pow(kHyper.beta1, kStep));
    s.bias_correction2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(kHyper.beta2, kStep)));
    return s;
  }

  static BenchResult describe(const ModelShape& model, std::int64_t params) {
    BenchResult r;
    r.id = "optimizer.adamw_fused.lora_r" + std::to_string(kLoraRank) + "." + model.id;
    r.bench_class = "optimizer";
    r.op = "adamw";
    r.model = model.id;
    r.shape = {{"params", params}};
    r.dtype = "fp32";
    r.output_dtype = "bf16";
    const double n = static_cast<double>(params);
    // Per parameter: decay 1, m 3, v 4, denominator 3, update 4 (kernels.cu adamw_element).
    r.flops = 15.0 * n;
    // Read p, m, v (FP32) and g (BF16): 14 B; write p, m, v and the BF16 weight: 14 B.
    r.bytes = 28.0 * n;
    r.bytes_counted =
        "FP32 p, m, v and BF16 grad read (14 B/param); FP32 p, m, v and BF16 "
        "weight written (14 B/param)";
    return r;
  }

  struct State {
    float* p = nullptr;
    float* m = nullptr;
    float* v = nullptr;
    std::uint16_t* g = nullptr;
    std::uint16_t* w = nullptr;
  };
  std::int64_t params_;
  std::vector<State> sets_;
};

}  // namespace

BenchmarkList make_memory_benchmarks() {
  BenchmarkList out;
  out.push_back(std::make_unique<CopyBandwidth>(kGiB));
  out.push_back(std::make_unique<ReadBandwidth>(kGiB));
  const ModelShape& small = first_model();
  const ModelShape& large = last_model();
  for (std::int64_t tokens : {2048, 4096, 8192})
    out.push_back(std::make_unique<LoraPair>(small, tokens));
  out.push_back(std::make_unique<Nf4Dequant>(small, "q", small.q_dim, small.hidden));
  out.push_back(std::make_unique<Nf4Dequant>(small, "gate_up", small.intermediate, small.hidden));
  out.push_back(std::make_unique<Nf4Dequant>(large, "gate_up", large.intermediate, large.hidden));
  for (std::int64_t tokens : {2048, 4096, 8192})
    out.push_back(std::make_unique<RmsNorm>(small, tokens));
  // The trained parameters of a rank-16 LoRA (Llama 3.1 8B: 41,943,040, seed M2).
  out.push_back(std::make_unique<AdamWStep>(small));
  out.push_back(std::make_unique<AdamWStep>(large));
  return out;
}

}  // namespace ftplan::bench
