// ftplan max: the largest micro-batch or the longest sequence that fits a card.
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/from_files.hpp"
#include "cli/options.hpp"
#include "memory/solve.hpp"
#include "render/json.hpp"
#include "render/max_text.hpp"

namespace ftplan::cli {
namespace {

struct MaxOptions {
  WorkloadOptions workload;
  PlacementOptions placement;
  std::string solve;
  long long step = kSequenceStep;
  bool json = false;
};

const bool registered_max = register_command(
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
         const Placement p = o->placement.build(ctx, w);
         o->workload.resolve_rollouts(w, p);
         const SolveResult r =
             what == SolveFor::kSequence ? max_sequence(w, p, o->step) : max_micro_batch(w, p);
         if (o->json) {
           nlohmann::json j = solve_json(w, p, r);
           print_json(ctx, "max", std::move(j));
         } else {
           print_max(ctx.out, w, p, r);
         }
       };
     },
     25});

}  // namespace
}  // namespace ftplan::cli
