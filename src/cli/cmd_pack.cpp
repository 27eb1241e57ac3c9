// ftplan pack: the fewest cards of a type whose MIG layouts hold a queue of small runs, with the
// layout of each card, compared with one job per whole card.
#include <fmt/format.h>

#include <sstream>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "core/error.hpp"
#include "mig/layout.hpp"
#include "mig/pack.hpp"
#include "mig/pack_file.hpp"
#include "mig/rules.hpp"
#include "render/json.hpp"
#include "render/mig_json.hpp"
#include "render/mig_text.hpp"

namespace ftplan::cli {
namespace {

struct PackOptions {
  std::string file;
  std::vector<std::string> gpus;
  bool json = false;
};

// Runs `f`; a UserError it throws gets `where` (file, key, line) in front.
template <class F>
auto at(const std::string& where, const std::string& field, F f) {
  try {
    return f();
  } catch (const UserError& e) {
    throw UserError(e.code(), fmt::format("{}: {}", where, e.what()), field);
  }
}

std::vector<PackJob> resolve_jobs(Context& ctx, const PackFile& pf) {
  std::vector<PackJob> jobs;
  for (std::size_t i = 0; i < pf.experiments.size(); ++i) {
    const PackFileExperiment& x = pf.experiments[i];
    const std::string field = fmt::format("experiments[{}].model", i);
    PackJob job;
    job.name = x.name;
    job.count = x.count;
    job.workload = x.workload;
    job.workload.model = at(x.model_where, field, [&] { return ctx.resolve_model(x.model); });
    // The workload check names its own key (recompute_layers, seq, ...) under the experiment.
    try {
      validate(job.workload);
    } catch (const UserError& e) {
      const std::string key =
          e.field().empty() ? field : fmt::format("experiments[{}].{}", i, e.field());
      throw UserError(e.code(), fmt::format("{}: {}", x.model_where, e.what()), key);
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

const bool registered_pack = register_command(
    {"pack",
     "Fewest cards whose MIG layouts hold a queue of small runs (YAML), with each card's layout",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<PackOptions>();
       app.add_option("file", o->file,
                      "YAML file: `experiments:` list of runs (name, model, method, count, ...) "
                      "and an optional `gpu:`; see examples/mig-queue.yaml")
           ->required();
       app.add_option("--gpu", o->gpus,
                      "Card type with MIG to pack onto (repeat to compare types); default: the "
                      "file's `gpu:`");
       app.add_flag("--json", o->json, "Print JSON (one `packings` entry per card type)");
       return [&ctx, o] {
         const std::string text = ctx.read_file(o->file, "pack file");
         const PackFile pf = parse_pack_file(text, o->file);
         const std::vector<PackJob> jobs = resolve_jobs(ctx, pf);
         std::vector<const GpuSpec*> gpus;
         for (const auto& g : o->gpus)
           gpus.push_back(&ctx.resolve_gpu(g));
         if (gpus.empty() && !pf.gpu.empty())
           gpus.push_back(at(pf.gpu_where, "gpu", [&] { return &ctx.resolve_gpu(pf.gpu); }));
         if (gpus.empty())
           throw UserError(ErrorCode::kMissingKey,
                           fmt::format("{}: no card type to pack onto; give --gpu or a `gpu:` "
                                       "key in the file",
                                       o->file),
                           "gpu");
         for (const GpuSpec* g : gpus)
           require_mig(ctx, *g, "gpu");
         const MigRules rules = load_mig_rules(ctx.catalog());

         // Rendered in full before printing: an error half-way leaves stdout empty.
         std::ostringstream text_out;
         nlohmann::json packings = nlohmann::json::array();
         if (!o->json) print_pack_heading(text_out, o->file, jobs, pf.total_jobs());
         for (const GpuSpec* g : gpus) {
           const MigCard card = make_mig_card(*g);
           const PackResult r = pack(jobs, card, rules);
           if (o->json) {
             packings.push_back(pack_json(jobs, r, card));
           } else {
             text_out << "\n";
             print_pack(text_out, jobs, r, card);
           }
         }
         if (o->json) {
           nlohmann::json experiments = nlohmann::json::array();
           for (const auto& job : jobs) {
             nlohmann::json x = workload_json(job.workload);
             x["name"] = job.name;
             x["count"] = job.count;
             experiments.push_back(x);
           }
           print_json(ctx, "pack",
                      nlohmann::json{{"file", o->file},
                                     {"jobs", pf.total_jobs()},
                                     {"experiments", experiments},
                                     {"packings", packings}});
         } else {
           ctx.out << text_out.str();
         }
       };
     },
     31});

}  // namespace
}  // namespace ftplan::cli
