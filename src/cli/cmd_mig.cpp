// ftplan mig: a run in one instance of each MIG profile of a card: fits, free memory, how many
// such jobs run at once, and the MIG rules as notes.
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "cli/perf_options.hpp"
#include "mig/fit.hpp"
#include "mig/layout.hpp"
#include "mig/rules.hpp"
#include "render/labels.hpp"
#include "render/mig_json.hpp"
#include "render/mig_text.hpp"

namespace ftplan::cli {
namespace {

struct MigOptions {
  WorkloadOptions workload;
  std::string gpu;
  std::string profile;
  bool json = false;
};

const bool registered_mig = register_command(
    {"mig", "A run in one MIG instance of each profile: fit, free memory, jobs per card, rules",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<MigOptions>();
       o->workload.add_to(app);
       app.add_option("--gpu", o->gpu,
                      "GPU id with MIG (ftplan gpus) or path to a card file in the data/gpus "
                      "schema")
           ->required();
       app.add_option("--profile,--mig", o->profile,
                      "Show only this MIG profile (e.g. 1g.24gb); default: every profile");
       app.add_flag("--json", o->json,
                    "Print JSON (`instances`: one entry per profile; GB = 1e9 B)");
       return [&ctx, o] {
         const Workload w = o->workload.build(ctx);
         const GpuSpec& gpu = ctx.resolve_gpu(o->gpu);
         require_mig(ctx, gpu, "gpu");
         load_training_formats(ctx.catalog()).require(gpu, w.precision);
         const MigProfile* only =
             o->profile.empty() ? nullptr : &require_mig_profile(gpu, o->profile, "profile");
         const MigRules rules = load_mig_rules(ctx.catalog());
         const MigCard card = make_mig_card(gpu);
         MigFitReport report = fit_mig(w, card, rules);
         if (o->json) {
           nlohmann::json j = mig_fit_json(w, report, card);
           if (only) {
             nlohmann::json kept = nlohmann::json::array();
             for (const auto& inst : j["instances"])
               if (inst["profile"] == only->name) kept.push_back(inst);
             j["instances"] = kept;
           }
           print_json(ctx, "mig", std::move(j));
         } else {
           print_mig_fit(ctx.out, run_title(w), report, card, only);
         }
       };
     },
     29});

}  // namespace
}  // namespace ftplan::cli
