// ftplan validate: the memory and step models against published measurements of fine-tuning runs,
// and the generation model against published serving measurements (data/measured/*.yaml, or a
// user's file of either schema).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "infer/measured_generation.hpp"
#include "memory/measured_runs.hpp"
#include "plan/throughput.hpp"
#include "render/json.hpp"
#include "render/validate_generation.hpp"
#include "render/validate_text.hpp"

namespace ftplan::cli {
namespace {

constexpr const char* kBuiltinRuns = "measured/published.yaml";

// The built-in files: published.yaml first, then the others of data/measured/ by name; a run id
// is unique over all of them. Files of serving measurements (root key `inference`) go to
// `generation`.
std::vector<MeasuredRun> builtin_runs(Context& ctx, std::string& shown,
                                      std::vector<MeasuredGeneration>& generation) {
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
  std::set<std::string> generation_ids;
  for (const DataFile* f : files) {
    shown += shown.empty() ? f->path : ", " + f->path;
    if (is_measured_generation_file(*f)) {
      for (auto& row : parse_measured_generation(*f, catalog)) {
        if (!generation_ids.insert(row.id).second)
          throw UserError(ErrorCode::kBadFile,
                          fmt::format("{}: row id '{}' is listed in another data/measured file too",
                                      f->path, row.id),
                          "id");
        generation.push_back(std::move(row));
      }
      continue;
    }
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

const bool registered_validate = register_command(
    {"validate",
     "The models against published measurements: peak memory and speed of fine-tuning runs, KV "
     "cache and decode time of serving engines",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<ValidateOptions>();
       app.add_option("file", o->file,
                      "A measured-runs or measured-generation file in the data/measured schema "
                      "(default: the built-in files data/measured/*.yaml)");
       app.add_flag("--json", o->json, "Print JSON");
       return [&ctx, o] {
         const Catalog& catalog = ctx.catalog();
         std::vector<MeasuredRun> runs;
         std::vector<MeasuredGeneration> generation;
         std::string shown, text;
         if (o->file.empty()) {
           runs = builtin_runs(ctx, shown, generation);
         } else {
           text = ctx.read_file(o->file, "file");
           const DataFile file{o->file, text, {}};
           if (is_measured_generation_file(file))
             generation = parse_measured_generation(file, catalog);
           else
             runs = parse_measured_runs(
                 file, catalog, ctx.overheads(), ctx.stacks(),
                 [&](const std::string& m) { return ctx.resolve_model_beside(o->file, m); });
           shown = o->file;
         }
         const PlanningData data = PlanningData::load(catalog);
         // A user's file holds one kind: the other kind's text sections are left out, its JSON
         // sections are empty.
         const bool with_runs = !runs.empty();
         const ValidationReport report = validate_runs(runs);
         const ThroughputReport speed =
             with_runs ? validate_throughput(runs, data, true) : ThroughputReport{};
         const GenerationValidationReport serving = validate_generation(generation, data);
         const OnlineReport online = validate_online(runs, data);
         if (o->json) {
           nlohmann::json j = validation_json(report);
           j["throughput"] = throughput_json(speed);
           j["online"] = online_json(online);
           if (!generation.empty()) j["inference"] = generation_validation_json(serving);
           print_json(ctx, "validate", std::move(j));
         } else {
           if (with_runs) {
             print_validation(ctx.out, shown, report);
             print_throughput_validation(ctx.out, speed);
             print_online_validation(ctx.out, online);
           } else {
             ctx.out << fmt::format("Published measurements ({})\n", shown);
           }
           if (!generation.empty()) print_generation_validation(ctx.out, serving);
         }
       };
     },
     60});

}  // namespace
}  // namespace ftplan::cli
