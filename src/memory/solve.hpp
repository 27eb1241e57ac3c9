// The largest micro-batch and the longest sequence that fit a card (each card of several under
// sharding, or one MIG instance), with what runs out first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "memory/fit.hpp"
#include "workload/workload.hpp"

namespace ftplan {

enum class SolveFor { kMicroBatch, kSequence };
std::string_view solve_for_name(SolveFor s);  // "micro-batch", "seq"
SolveFor parse_solve_for(std::string_view name, std::string_view field = "solve");

// Sequence lengths are searched in multiples of this many tokens: FlashAttention's and the
// matrix kernels' tiles, and the packing lengths recipes use, are multiples of 128.
inline constexpr std::int64_t kSequenceStep = 128;

struct SolveResult {
  SolveFor what = SolveFor::kMicroBatch;
  std::int64_t step = 1;           // the search's granularity
  std::int64_t largest = 0;        // largest value whose verdict is `fits`; 0: none fits
  std::int64_t largest_tight = 0;  // largest value whose peak is within the capacity (`tight`)
  bool at_limit = false;           // the search reached the largest value ftplan accepts
  MemoryEstimate at_largest;       // at `largest` (at one step when none fits)
  MemoryEstimate beyond;           // at `largest` + one step: the first value that does not fit
  std::string binding;             // what runs out first, in words
  Reason reason;                   // one sentence a user can act on
};

// The other settings of `w` stay as given (for the sequence search: the micro-batch; for the
// micro-batch search: the sequence length).
SolveResult max_micro_batch(const Workload& w, const Placement& p);
SolveResult max_sequence(const Workload& w, const Placement& p, std::int64_t step = kSequenceStep);

}  // namespace ftplan
