#include "render/max_text.hpp"

#include <fmt/format.h>

#include "core/format.hpp"
#include "render/reason_words.hpp"
#include "workload/objective.hpp"

namespace ftplan {

void print_max(std::ostream& out, const Workload& w, const Placement& p, const SolveResult& r) {
  const bool seq = r.what == SolveFor::kSequence;
  out << fmt::format("{} · {} on {}{}{}\n", w.model->arch.name, run_method_short(w),
                     p.count > 1 ? fmt::format("each of {} × ", p.count) : "", p.gpu->name,
                     p.mig ? fmt::format(", one MIG instance {}", p.mig->name) : "");
  out << fmt::format("{}: {} (in steps of {}{})\n",
                     seq ? "longest sequence that fits" : "largest micro-batch that fits",
                     r.largest > 0 ? group_digits(r.largest) : "none", group_digits(r.step),
                     seq ? " tokens" : "");
  if (r.largest_tight > r.largest)
    out << fmt::format("  up to {} fit with under 10 % of the card left (tight)\n",
                       group_digits(r.largest_tight));
  if (seq && r.largest > w.model->arch.max_position && w.model->arch.max_position > 0)
    out << fmt::format("  note: beyond the model's max_position_embeddings ({})\n",
                       group_digits(w.model->arch.max_position));
  out << fmt::format("binding: {}\n", r.binding);
  out << word_reason(r.reason) << "\n";
}

}  // namespace ftplan
