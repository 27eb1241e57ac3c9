// ftplan plan [FILE]: the planned runs in, the cards, their number, the time and the reasons out.
// ftplan sweep [FILE]: the planner over the whole catalog, reporting how many configurations it
// evaluated and how fast.
#include <algorithm>
#include <chrono>
#include <ctime>

#include "cli/cli.hpp"
#include "cli/from_files.hpp"
#include "cli/perf_options.hpp"
#include "cli/runs_options.hpp"
#include "core/error.hpp"
#include "embedded_files.hpp"
#include "plan/planner.hpp"
#include "render/plan_json.hpp"
#include "render/plan_text.hpp"

namespace ftplan::cli {

// The runs file FILE (`-`: standard input), or the built-in seed runs when none is given.
RunsFile load_runs(Context& ctx, const std::string& path, const std::vector<std::string>& from) {
  std::string text;
  std::string name = path;
  if (path.empty()) {
    name = std::string(kSeedRunsPath);
    for (const auto& f : embedded::files())
      if (f.path == kSeedRunsPath) text = std::string(f.text);
  } else {
    text = ctx.read_file(path, "runs");
    if (path == kStandardInput && ctx.allow_files) name = "standard input";
  }
  RunsFile file = parse_runs_file(
      text, name, ctx.catalog(), ctx.stacks(),
      [&](const std::string& m) { return ctx.resolve_model_beside(name, m); },
      [&](const std::string& p, const std::string& field) { return ctx.read_file(p, field); },
      from);
  // What --from read, for the JSON: each run takes the settings it does not set itself.
  for (const auto& p : from) {
    std::vector<Context::FromFile> files = read_from_file(ctx, p);
    for (auto& f : files) {
      for (const auto& s : f.file.used) {
        const bool run_key = s.as != "grad_accum" && s.as != "shard" && s.as != "shard_group" &&
                             s.as != "gpu_count" && s.as != "pure_bf16";
        f.not_applied.push_back(run_key ? "" : "the planner chooses it");
      }
      ctx.from_files.push_back(std::move(f));
    }
  }
  // The runtime overheads (CUDA context, workspaces, NCCL, allocator reserve), as `ftplan fit`
  // counts them: without them a plan's peaks and verdicts would differ from fit's.
  for (auto& run : file.runs)
    run.workload.overheads = &ctx.overheads();
  return file;
}

void restrict_gpus(Context& ctx, RunsFile& file, const std::vector<std::string>& ids) {
  if (ids.empty()) return;
  file.gpus.clear();
  const auto add = [&](const GpuSpec* g) {
    if (std::find(file.gpus.begin(), file.gpus.end(), g) == file.gpus.end()) file.gpus.push_back(g);
  };
  for (const auto& id : ids) {
    if (id == "all") {  // as a runs file's `gpus: [all]`
      for (const auto& g : ctx.catalog().gpus())
        add(&g);
    } else {
      add(&ctx.resolve_gpu(id));
    }
  }
}

// Every calibration in force (--calibration, else $FTPLAN_CALIBRATION_DIR): each applies to the
// card it names, links included.
PlanningData planning_data(Context& ctx, const CalibrationOptions& calibration) {
  Calibrations cal = calibration.load(ctx);
  return PlanningData::load(ctx.catalog(), std::move(cal.efficiency), std::move(cal.links));
}

namespace {

struct PlanCliOptions {
  std::string file;
  std::string rank_by = "card-hours";
  std::vector<std::string> gpus;
  std::vector<std::string> from;
  bool json = false;
  CalibrationOptions calibration;
};

const bool registered_plan = register_command(
    {"plan",
     "Planned runs in (YAML; default: the seed's runs): cards, count, time, cost and reasons out",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<PlanCliOptions>();
       app.add_option("file", o->file,
                      "Runs file (YAML, see examples/; - reads standard input); default: the "
                      "seed article's runs");
       app.add_option(
           "--rank-by", o->rank_by,
           "card-hours | time | cost | energy (default card-hours; cost needs prices in the file)");
       app.add_option("--gpu", o->gpus,
                      "Candidate card (repeatable; all: every card of the catalog); default: the "
                      "file's candidates");
       app.add_flag("--json", o->json, "Print JSON: {\"runs\": [...], \"fleet\": [...]}");
       app.add_option("--from", o->from,
                      "Trainer file (repeatable) whose settings every run takes where neither "
                      "the run nor the file's defaults set the key (as a run's from: key)");
       o->calibration.add_to(app);
       return [&ctx, o] {
         RunsFile file = load_runs(ctx, o->file, o->from);
         restrict_gpus(ctx, file, o->gpus);
         const PlanningData data = planning_data(ctx, o->calibration);
         PlanOptions options;
         options.rank_by = parse_rank_by(o->rank_by);
         const Plan plan = make_plan(file, data, options);
         if (o->json) {
           nlohmann::json j = plan_json(plan, file);
           print_json(ctx, "plan", std::move(j));
         } else {
           print_plan(ctx.out, plan, file);
         }
       };
     },
     70});

const bool registered_sweep = register_command(
    {"sweep", "The planner over the whole GPU catalog: configurations evaluated and the rate",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<PlanCliOptions>();
       app.add_option("file", o->file, "Runs file (default: the seed article's runs)");
       app.add_flag("--json", o->json, "Print JSON: evaluations, seconds, evaluations_per_second");
       return [&ctx, o] {
         RunsFile file = load_runs(ctx, o->file);
         file.gpus.clear();
         for (const auto& g : ctx.catalog().gpus())
           file.gpus.push_back(&g);
         const PlanningData data = planning_data(ctx, o->calibration);
         PlanOptions options;
         options.fleet = false;
         // Wall-clock time, and the processor time of this (single-threaded) search: on a
         // shared machine the second is what the code costs.
         const auto start = std::chrono::steady_clock::now();
         const std::clock_t cpu_start = std::clock();
         const Plan plan = make_plan(file, data, options);
         const double cpu_seconds =
             static_cast<double>(std::clock() - cpu_start) / static_cast<double>(CLOCKS_PER_SEC);
         SearchTiming timing;
         timing.cpu_seconds = cpu_seconds;
         timing.seconds =
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
         const double evaluations = static_cast<double>(plan.evaluations);
         timing.evaluations_per_second = timing.seconds > 0 ? evaluations / timing.seconds : 0;
         timing.evaluations_per_cpu_second = cpu_seconds > 0 ? evaluations / cpu_seconds : 0;
         if (o->json) {
           print_json(
               ctx, "sweep",
               nlohmann::json{{"evaluations", plan.evaluations},
                              {"runs", plan.runs.size()},
                              {"gpus", file.gpus.size()},
                              {"seconds", timing.seconds},
                              {"evaluations_per_second", timing.evaluations_per_second},
                              {"cpu_seconds", cpu_seconds},
                              {"evaluations_per_cpu_second", timing.evaluations_per_cpu_second}});
         } else {
           print_sweep(ctx.out, plan, file, timing);
         }
       };
     },
     72});

}  // namespace
}  // namespace ftplan::cli
