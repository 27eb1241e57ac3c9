// ftplan validate: the memory model against published measurements (data/measured/published.yaml
// or a user's file of the same schema).
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "memory/measured_runs.hpp"
#include "plan/throughput.hpp"
#include "render/json.hpp"
#include "render/validate_text.hpp"

namespace ftplan::cli {
namespace {

constexpr const char* kBuiltinRuns = "measured/published.yaml";

struct ValidateOptions {
  std::string file;
  bool json = false;
};

const bool registered = register_command(
    {"validate",
     "The memory model against published measurements: predicted vs measured peak per run",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<ValidateOptions>();
       app.add_option("file", o->file,
                      "A measured-runs file in the data/measured schema (default: the built-in "
                      "data/measured/published.yaml)");
       app.add_flag("--json", o->json, "Print JSON");
       return [&ctx, o] {
         const Catalog& catalog = ctx.catalog();
         std::string text;
         DataFile file;
         if (o->file.empty()) {
           const DataFile* builtin = catalog.file(kBuiltinRuns);
           if (!builtin)
             throw UserError(ErrorCode::kBadFile, fmt::format("data/{} is missing", kBuiltinRuns),
                             "file");
           file = *builtin;
         } else {
           text = ctx.read_file(o->file, "file");
           file = {o->file, text, {}};
         }
         const std::vector<MeasuredRun> runs =
             parse_measured_runs(file, catalog, ctx.overheads(), ctx.stacks());
         const ValidationReport report = validate_runs(runs);
         const PlanningData data = PlanningData::load(catalog);
         const ThroughputReport speed = validate_throughput(runs, data, true);
         if (o->json) {
           nlohmann::json j = validation_json(report);
           j["throughput"] = throughput_json(speed);
           print_json(ctx, "validate", std::move(j));
         } else {
           print_validation(ctx.out, file.path, report);
           print_throughput_validation(ctx.out, speed);
         }
       };
     },
     60});

}  // namespace
}  // namespace ftplan::cli
