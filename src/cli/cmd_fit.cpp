// ftplan fit: does a run fit a card (or each of several cards), with how much room, and why.
#include "cli/cli.hpp"
#include "cli/from_files.hpp"
#include "cli/options.hpp"
#include "memory/fit.hpp"
#include "memory/suggest.hpp"
#include "render/fit_text.hpp"
#include "render/json.hpp"

namespace ftplan::cli {
namespace {

struct FitOptions {
  WorkloadOptions workload;
  PlacementOptions placement;
  bool json = false;
};

const bool registered_fit = register_command(
    {"fit", "Memory per card: model states, activations, free memory and a fit verdict",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<FitOptions>();
       o->workload.add_to(app);
       o->placement.add_to(app, true, true, false);
       app.add_flag("--json", o->json, "Print JSON (memory_GB per card, GB = 1e9 B)");
       return [&ctx, o] {
         Workload w = o->workload.build(ctx);
         Placement p = o->placement.build(ctx, w);
         o->workload.resolve_rollouts(w, p);
         MemoryEstimate m = estimate_memory(w, p);
         // How to make it fit: the same evaluation with each change (memory/suggest).
         const std::vector<Suggestion> suggestions = suggest_fits(w, p);
         if (o->json) {
           nlohmann::json j = fit_json(w, p, m, suggestions);
           print_json(ctx, "fit", std::move(j));
         } else {
           print_fit(ctx.out, w, p, trainable_params(w), m, suggestions);
         }
       };
     },
     20});

}  // namespace
}  // namespace ftplan::cli
