// ftplan max: the largest micro-batch or the longest sequence that fits a card.
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "core/format.hpp"
#include "memory/solve.hpp"
#include "render/json.hpp"

namespace ftplan::cli {
namespace {

struct MaxOptions {
  WorkloadOptions workload;
  PlacementOptions placement;
  std::string solve;
  long long step = kSequenceStep;
  bool json = false;
};

void print_result(Context& ctx, const Workload& w, const Placement& p, const SolveResult& r) {
  std::ostream& out = ctx.out;
  const bool seq = r.what == SolveFor::kSequence;
  out << fmt::format("{} · {} on {}{}{}\n", w.model->arch.name, method_name(w.method),
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
  out << r.reason << "\n";
}

const bool registered = register_command(
    {"max", "The largest micro-batch or the longest sequence that fits, and what binds it",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<MaxOptions>();
       o->workload.add_to(app);
       o->placement.add_to(app, true, true, false);
       app.add_option("--solve", o->solve,
                      "What to maximise: seq (the other settings as given, e.g. --micro-batch) | "
                      "micro-batch (at --seq)")
           ->required();
       app.add_option("--step", o->step,
                      fmt::format("Sequence search step in tokens (default {}: kernel tiles and "
                                  "packing lengths are multiples of 128)",
                                  kSequenceStep));
       app.add_flag("--json", o->json, "Print JSON");
       return [&ctx, o] {
         const SolveFor what = parse_solve_for(o->solve);
         Workload w = o->workload.build(ctx);
         const Placement p = o->placement.build(ctx);
         const SolveResult r =
             what == SolveFor::kSequence ? max_sequence(w, p, o->step) : max_micro_batch(w, p);
         if (o->json)
           ctx.out << solve_json(w, p, r).dump(2) << "\n";
         else
           print_result(ctx, w, p, r);
       };
     },
     25});

}  // namespace
}  // namespace ftplan::cli
