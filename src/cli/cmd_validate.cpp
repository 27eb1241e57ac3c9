// ftplan validate: the memory model against published measurements (data/measured/*.yaml, or a
// user's file of the same schema).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "memory/measured_runs.hpp"
#include "plan/throughput.hpp"
#include "render/json.hpp"
#include "render/validate_text.hpp"

namespace ftplan::cli {
namespace {

constexpr const char* kBuiltinRuns = "measured/published.yaml";

// The built-in files: published.yaml first, then the others of data/measured/ by name; a run id
// is unique over all of them.
std::vector<MeasuredRun> builtin_runs(Context& ctx, std::string& shown) {
  const Catalog& catalog = ctx.catalog();
  std::vector<const DataFile*> files = catalog.files_under("measured");
  files.erase(std::remove_if(files.begin(), files.end(),
                             [](const DataFile* f) {
                               return f->path.size() < 5 ||
                                      f->path.compare(f->path.size() - 5, 5, ".yaml") != 0;
                             }),
              files.end());
  const DataFile* published = catalog.file(kBuiltinRuns);
  if (!published)
    throw UserError(ErrorCode::kBadFile, fmt::format("data/{} is missing", kBuiltinRuns), "file");
  std::sort(files.begin(), files.end(), [&](const DataFile* a, const DataFile* b) {
    if ((a == published) != (b == published)) return a == published;
    return a->path < b->path;
  });
  std::vector<MeasuredRun> runs;
  std::set<std::string> ids;
  for (const DataFile* f : files) {
    shown += shown.empty() ? f->path : ", " + f->path;
    for (auto& run : parse_measured_runs(*f, catalog, ctx.overheads(), ctx.stacks())) {
      if (!ids.insert(run.id).second)
        throw UserError(ErrorCode::kBadFile,
                        fmt::format("{}: run id '{}' is listed in another data/measured file too",
                                    f->path, run.id),
                        "id");
      runs.push_back(std::move(run));
    }
  }
  return runs;
}

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
                      "files data/measured/*.yaml)");
       app.add_flag("--json", o->json, "Print JSON");
       return [&ctx, o] {
         const Catalog& catalog = ctx.catalog();
         std::vector<MeasuredRun> runs;
         std::string shown, text;
         if (o->file.empty()) {
           runs = builtin_runs(ctx, shown);
         } else {
           text = ctx.read_file(o->file, "file");
           runs = parse_measured_runs({o->file, text, {}}, catalog, ctx.overheads(), ctx.stacks());
           shown = o->file;
         }
         const ValidationReport report = validate_runs(runs);
         const PlanningData data = PlanningData::load(catalog);
         const ThroughputReport speed = validate_throughput(runs, data, true);
         if (o->json) {
           nlohmann::json j = validation_json(report);
           j["throughput"] = throughput_json(speed);
           print_json(ctx, "validate", std::move(j));
         } else {
           print_validation(ctx.out, shown, report);
           print_throughput_validation(ctx.out, speed);
         }
       };
     },
     60});

}  // namespace
}  // namespace ftplan::cli
