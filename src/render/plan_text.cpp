#include "render/plan_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/format.hpp"
#include "parallel/layout.hpp"
#include "render/reason_words.hpp"
#include "render/table.hpp"

namespace ftplan {

namespace {

std::string short_option(const Option& o) {
  std::string s = fmt::format("{} × {}", o.count, o.gpu->id);
  if (o.count > 1)
    s += o.layout.trivial()
             ? fmt::format(" ({}, {})", sharding_label(o.sharding, o.shard_group), o.topology)
             : fmt::format(" ({}, {}, {})", layout_label(o.layout),
                           sharding_label(o.sharding, o.shard_group), o.topology);
  if (o.rollout_gpu)
    s += fmt::format(" + {} × {} generating{}", o.rollout_cards, o.rollout_gpu->id,
                     o.rollout_chosen ? " (chosen)" : "");
  return s;
}

// Why no allowed count of `gpu` holds the run, in a few words: "does not fit", or that the card
// cannot be timed for want of a published rate (memory alone would not tell).
std::string why_no_count(const RunPlan& rp, const GpuSpec& gpu) {
  for (const auto& o : rp.rejected) {
    if (o.gpu != &gpu || o.failed != Constraint::kStepTime) continue;
    const bool no_rate = o.reason.code == ReasonCode::kNoDenseRate ||
                         o.reason.code == ReasonCode::kNoDenseRateBecause;
    const ReasonArg* format = o.reason.arg("format");
    if (no_rate && format != nullptr)
      return fmt::format("not timed: no published {} rate", format->text);
    return "not timed";
  }
  return "does not fit";
}

}  // namespace

void print_plan(std::ostream& out, const Plan& plan, const RunsFile& file) {
  std::vector<std::string> names;
  for (const auto* g : file.gpus)
    names.push_back(g->name);
  out << fmt::format("ftplan plan — {} runs from {}; candidates: {}; counts {}; ranked by {}\n\n",
                     plan.runs.size(), file.file, fmt::join(names, ", "),
                     fmt::join(file.counts, "/"), rank_by_name(plan.rank_by));
  // Which card for which run: per card type the fewest cards that hold the run, a row each.
  TextTable which(
      {"run", "card", "cards>", "model states GB/card>", "free GB/card>", "hours>", "how"});
  for (const auto& rp : plan.runs) {
    std::string run = rp.run->name;
    for (const auto* g : file.gpus) {
      for (const auto& pg : rp.per_gpu) {
        if (pg.gpu != g) continue;
        if (!pg.minimum) {
          which.row({run, g->id, "", "", "", "", why_no_count(rp, *g)});
        } else {
          const Option& m = *pg.minimum;
          which.row({run, g->id, std::to_string(m.count), format_fixed(to_GB(m.model_states), 1),
                     format_fixed(to_GB(m.free), 0), format_fixed(m.time_to_train_hours, 1),
                     m.count == 1 ? "one card"
                     : m.layout.trivial()
                         ? sharding_label(m.sharding, m.shard_group)
                         : fmt::format("{}, {}", layout_label(m.layout),
                                       sharding_label(m.sharding, m.shard_group))});
        }
        run.clear();
      }
    }
  }
  out << "Which card for which run (fewest cards that fit; free = capacity − model states, GB = "
         "1e9 B)\n";
  which.print(out);

  out << "\nRecommendations\n";
  TextTable rec({"run", "choice", "micro-batch>", "recompute", "step s>", "tokens/s>", "hours>",
                 "range h>", "card-hours>"});
  for (const auto& rp : plan.runs) {
    if (!rp.recommendation) {
      rec.row({rp.run->name, "none fits", "", "", "", "", "", "", ""});
      continue;
    }
    const Option& o = *rp.recommendation;
    rec.row({rp.run->name, short_option(o), std::to_string(o.micro_batch),
             std::string(recompute_name(o.recompute)), format_fixed(o.step_seconds.value, 3),
             format_fixed(o.tokens_per_second, 0), format_fixed(o.time_to_train_hours, 2),
             fmt::format("{}–{}", format_fixed(o.time_to_train_hours * o.range_low, 2),
                         format_fixed(o.time_to_train_hours * o.range_high, 2)),
             format_fixed(o.card_hours, 2)});
  }
  rec.print(out);
  out << "\nWhy (range h: where measured runs fall around the step model)\n";
  for (const auto& rp : plan.runs) {
    out << "- " << rp.run->name << ": " << word_reason(rp.recommendation_reason);
    if (rp.close_call) out << "; " << word_reason(rp.close_call_reason);
    out << "\n";
  }
  out << "\nFleet: every run at once (one job per card where a run fits one card, MIG where small "
         "runs share)\n";
  for (const auto& f : plan.fleet) {
    out << fmt::format("- {}: {} cards ({} without MIG sharing)", f.gpu->id, f.cards,
                       f.cards_without_mig);
    if (!f.unplaced.empty()) out << fmt::format("; cannot hold: {}", fmt::join(f.unplaced, ", "));
    out << "\n";
  }
  out << fmt::format(
      "\n{} configurations evaluated. ftplan plan --json lists alternatives and rejected options "
      "with "
      "their reasons.\n",
      plan.evaluations);
}

void print_sweep(std::ostream& out, const Plan& plan, const RunsFile& file,
                 const SearchTiming& timing) {
  out << fmt::format(
      "{} configurations ({} runs × {} card types × counts {} × strategies × "
      "micro-batches × recompute, and MIG profiles) evaluated in {:.3f} s ({:.3f} s of "
      "processor time): {:.0f} evaluations per second, {:.0f} per processor-second "
      "(one thread; per-run and per-card preparation included)\n",
      plan.evaluations, plan.runs.size(), file.gpus.size(), fmt::join(file.counts, "/"),
      timing.seconds, timing.cpu_seconds, timing.evaluations_per_second,
      timing.evaluations_per_cpu_second);
}

}  // namespace ftplan
