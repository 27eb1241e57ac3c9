// Fuzzes the lengths-file parser (--lengths: a histogram, a JSONL dataset, or integers per line)
// and the distributions the step is timed on.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "workload/lengths.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    ftplan::SequenceLengths l;
    l.histogram = ftplan::parse_lengths(text, "fuzz.jsonl");
    // An accepted file has bins of 1 or more tokens with positive counts, in increasing order;
    // its distribution sums to 1 and its mean lies between the shortest and the longest.
    if (l.histogram.empty()) __builtin_trap();
    for (std::size_t i = 0; i < l.histogram.size(); ++i) {
      if (!(l.histogram[i].tokens >= 1) || !(l.histogram[i].count > 0)) __builtin_trap();
      if (i > 0 && !(l.histogram[i].tokens > l.histogram[i - 1].tokens)) __builtin_trap();
    }
    const auto d = ftplan::length_distribution(l, 4096);
    const auto m = ftplan::batch_max_distribution(d, 4);
    double total = 0;
    for (const auto& b : m)
      total += b.count;
    const double mean = ftplan::expectation(d, [](double s) { return s; });
    if (std::fabs(total - 1) > 1e-9 || !(mean >= 1) || !(mean <= 4096)) __builtin_trap();
  } catch (const ftplan::UserError&) {
  }
  return 0;
}
