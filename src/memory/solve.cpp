#include "memory/solve.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/format.hpp"

namespace ftplan {

namespace {

// The largest values validate(Workload) accepts.
constexpr std::int64_t kMaxMicroBatch = 65536;
constexpr std::int64_t kMaxSequence = std::int64_t{1} << 24;

// What runs out: the model states when they alone leave no room, else the largest term of the
// step memory at the first value that does not fit (named with its phase).
std::string binding_term(const MemoryEstimate& m) {
  if (verdict_for(m.capacity, m.states_on_card + m.overhead) != Verdict::kFits)
    return "model states on the card";
  return fmt::format("{} ({} phase)", m.runtime.step.largest_term(),
                     m.runtime.step.phase == StepPhase::kBlockBackward
                         ? std::string_view("block backward")
                         : step_phase_word(m.runtime.step.phase));
}

SolveResult solve(const Workload& base, const Placement& p, SolveFor what, std::int64_t step) {
  SolveResult r;
  r.what = what;
  r.step = step;
  const ModelStates replica = model_states(base);
  const ActivationProfile profile = activation_profile(base);
  const std::int64_t limit = what == SolveFor::kSequence ? kMaxSequence : kMaxMicroBatch;
  const std::int64_t max_k = limit / step;
  auto estimate = [&](std::int64_t k) {
    Workload w = base;
    (what == SolveFor::kSequence ? w.seq : w.micro_batch) = k * step;
    return estimate_memory(w, replica, profile, p);
  };
  // Memory grows with both the sequence and the micro-batch, so the verdicts along k are
  // fits... then tight... then does-not-fit: binary search for the last k of each.
  auto last_k = [&](auto ok) {
    std::int64_t lo = 0, hi = max_k;  // ok(lo) holds (lo = 0: vacuously), find the last
    if (ok(hi)) return hi;
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      (ok(mid) ? lo : hi) = mid;
    }
    return lo;
  };
  const std::int64_t k_fits =
      last_k([&](std::int64_t k) { return estimate(k).verdict == Verdict::kFits; });
  const std::int64_t k_tight =
      last_k([&](std::int64_t k) { return fits_with_reserve(estimate(k)); });
  r.largest = k_fits * step;
  r.largest_tight = k_tight * step;
  r.at_limit = k_fits == max_k;
  r.at_largest = estimate(k_fits > 0 ? k_fits : 1);
  const Reason noun(what == SolveFor::kSequence ? ReasonCode::kSolveSequence
                                                : ReasonCode::kSolveMicroBatch);
  const Reason unit =
      what == SolveFor::kSequence
          ? Reason(ReasonCode::kSolveUnitTokens).count("micro_batch", base.micro_batch)
          : Reason(sequences_per_example(base.objective) == 2 ? ReasonCode::kSolveUnitPairs
                                                              : ReasonCode::kSolveUnitSequences)
                .count("seq", base.seq);
  if (r.at_limit) {
    r.beyond = r.at_largest;
    r.binding = "none: the search reached ftplan's largest accepted value";
    r.reason = Reason(ReasonCode::kSolveLargest)
                   .nested("what", noun)
                   .digits("value", r.largest)
                   .nested("unit", unit);
    return r;
  }
  r.beyond = estimate(k_fits + 1);
  r.binding = binding_term(r.beyond);
  if (k_fits == 0) {
    r.reason = Reason(ReasonCode::kSolveNotEven)
                   .nested("what", noun)
                   .digits("value", step)
                   .nested("unit", unit)
                   .nested("reason", r.beyond.reason)
                   .name("binding", r.binding);
    return r;
  }
  r.reason = Reason(ReasonCode::kSolveFound)
                 .nested("what", noun)
                 .digits("value", r.largest)
                 .nested("unit", unit)
                 .bytes("peak", r.at_largest.peak)
                 .bytes("capacity", r.at_largest.capacity)
                 .digits("next", r.largest + step)
                 .bytes("next_peak", r.beyond.peak)
                 .name("verdict", std::string(verdict_name(r.beyond.verdict)))
                 .name("binding", r.binding);
  return r;
}

}  // namespace

std::string_view solve_for_name(SolveFor s) {
  return s == SolveFor::kSequence ? "seq" : "micro-batch";
}

SolveFor parse_solve_for(std::string_view name, std::string_view field) {
  if (name == "seq") return SolveFor::kSequence;
  if (name == "micro-batch") return SolveFor::kMicroBatch;
  throw_unknown_name("quantity to solve for", field, name, {"seq", "micro-batch"});
}

SolveResult max_micro_batch(const Workload& w, const Placement& p) {
  return solve(w, p, SolveFor::kMicroBatch, 1);
}

SolveResult max_sequence(const Workload& w, const Placement& p, std::int64_t step) {
  if (step < 1 || step > kMaxSequence)
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("the sequence step must be 1 to {} tokens, got {}", kMaxSequence, step),
        "step");
  return solve(w, p, SolveFor::kSequence, step);
}

}  // namespace ftplan
