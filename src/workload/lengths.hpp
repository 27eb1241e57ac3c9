// Variable sequence lengths: the lengths a dataset's samples have, how they are batched (padded to
// the batch's longest, packed to a fixed length, with or without padding-free attention), and the
// expectations the step model times a micro-batch with. The memory peak stays at Workload::seq,
// the longest batch; the step time follows the distribution (perf/ops.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ftplan {

// `count` samples of `tokens` tokens (a histogram bin; after normalisation, a probability).
struct LengthBin {
  double tokens = 0;
  double count = 0;
};

struct SequenceLengths {
  // The dataset's lengths (--lengths FILE); empty: only `mean` is known, or nothing.
  std::vector<LengthBin> histogram;
  std::optional<double> mean;  // --seq-mean: mean tokens per sample (without a histogram)
  bool packing = false;        // samples concatenated into rows of exactly Workload::seq tokens
  // Padding-free attention (FlashAttention varlen, position ids restarting per sample): attention
  // stays within each sample, and unpacked batches are concatenated without padding.
  bool padding_free = false;

  // Any setting that makes a micro-batch differ from micro_batch rows of seq real tokens.
  bool varies() const { return !histogram.empty() || mean.has_value() || padding_free; }
};

// Reads a lengths file: a YAML/JSON list of {tokens, count} bins, a JSONL dataset with one object
// per line holding a token count (num_tokens, n_tokens, length, tokens, input_length or
// token_count), or one integer per line. Strict: an error names the file, line and key.
std::vector<LengthBin> parse_lengths(std::string_view text, const std::string& file);

// The probability of each length, in increasing order, samples longer than `seq` cut to `seq`
// (truncation to max_length). A histogram gives itself. With only a mean m and the longest M,
// the lengths are taken as spread evenly over [2m − M, M] when m ≥ M/2, else over [1, 2m − 1]
// (64 equally weighted points keeping the mean exact); with neither, every sample is `seq` long.
std::vector<LengthBin> length_distribution(const SequenceLengths& l, std::int64_t seq);

// Generated lengths with mean `mean` and at most `longest` tokens, nothing else known: the
// distribution of greatest entropy (Jaynes) on 64 equal steps of (0, longest], p ∝ exp(−λ·t)
// with λ set so the mean is exact — a decaying tail toward the limit below half of it (most
// completions short, a few running long, as sampling produces), rising above. `mean` ≥ `longest`:
// every one `longest` long.
std::vector<LengthBin> max_entropy_lengths(double mean, std::int64_t longest);

// Real (non-pad) tokens per row of a micro-batch: `seq` when packed or fixed, else the mean.
double real_tokens_per_row(const SequenceLengths& l, std::int64_t seq);

// The distribution of the longest of `batch` samples drawn independently from `dist`:
// P(max = s_k) = F(s_k)^b − F(s_{k−1})^b.
std::vector<LengthBin> batch_max_distribution(const std::vector<LengthBin>& dist,
                                              std::int64_t batch);

// Σ p·f(tokens) over a distribution.
template <class F>
double expectation(const std::vector<LengthBin>& dist, F f) {
  double e = 0;
  for (const auto& b : dist)
    e += b.count * f(b.tokens);
  return e;
}

}  // namespace ftplan
