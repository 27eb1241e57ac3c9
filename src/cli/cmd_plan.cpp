// ftplan plan [FILE]: the planned runs in, the cards, their number, the time and the reasons out.
// ftplan sweep [FILE]: the planner over the whole catalog, reporting how many configurations it
// evaluated and how fast.
#include <fmt/format.h>

#include <chrono>
#include <ctime>

#include "cli/cli.hpp"
#include "cli/perf_options.hpp"
#include "cli/runs_options.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "embedded_files.hpp"
#include "plan/planner.hpp"
#include "render/plan_json.hpp"
#include "render/table.hpp"

namespace ftplan::cli {

// The runs file FILE, or the built-in seed runs when none is given.
RunsFile load_runs(Context& ctx, const std::string& path) {
  std::string text;
  std::string name = path;
  if (path.empty()) {
    name = std::string(kSeedRunsPath);
    for (const auto& f : embedded::files())
      if (f.path == kSeedRunsPath) text = std::string(f.text);
  } else {
    text = ctx.read_file(path, "runs");
  }
  RunsFile file = parse_runs_file(text, name, ctx.catalog(),
                                  [&](const std::string& m) { return ctx.resolve_model(m); });
  // The runtime overheads (CUDA context, workspaces, NCCL, allocator reserve), as `ftplan fit`
  // counts them: without them a plan's peaks and verdicts would differ from fit's.
  for (auto& run : file.runs)
    run.workload.overheads = &ctx.overheads();
  return file;
}

void restrict_gpus(Context& ctx, RunsFile& file, const std::vector<std::string>& ids) {
  if (ids.empty()) return;
  file.gpus.clear();
  for (const auto& id : ids)
    file.gpus.push_back(&ctx.resolve_gpu(id));
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
  bool json = false;
  CalibrationOptions calibration;
};

std::string short_option(const Option& o) {
  std::string s = fmt::format("{} × {}", o.count, o.gpu->id);
  if (o.count > 1) s += fmt::format(" ({}, {})", sharding_name(o.sharding), o.topology);
  return s;
}

void print_plan(Context& ctx, const Plan& plan, const RunsFile& file) {
  std::ostream& out = ctx.out;
  std::vector<std::string> names;
  for (const auto* g : file.gpus)
    names.push_back(g->name);
  out << fmt::format("ftplan plan — {} runs from {}; candidates: {}; counts {}; ranked by {}\n\n",
                     plan.runs.size(), file.file, fmt::join(names, ", "),
                     fmt::join(file.counts, "/"), rank_by_name(plan.rank_by));
  // Which card for which run: per card type the fewest cards that hold the run.
  std::vector<std::string> headers = {"run"};
  for (const auto* g : file.gpus)
    headers.push_back(g->id);
  TextTable which(headers);
  for (const auto& rp : plan.runs) {
    std::vector<std::string> row = {rp.run->name};
    for (const auto* g : file.gpus) {
      std::string cell = "-";
      for (const auto& pg : rp.per_gpu) {
        if (pg.gpu != g) continue;
        if (!pg.minimum) {
          cell = "does not fit";
          continue;
        }
        const Option& m = *pg.minimum;
        cell = m.count == 1 ? fmt::format("1 card, {:.0f} GB free, {:.1f} h", to_GB(m.free),
                                          m.time_to_train_hours)
                            : fmt::format("{} cards {}, {:.1f} GB/card, {:.1f} h", m.count,
                                          sharding_name(m.sharding), to_GB(m.model_states),
                                          m.time_to_train_hours);
      }
      row.push_back(cell);
    }
    which.row(row);
  }
  out << "Which card for which run (fewest cards that fit; free = capacity − model states, GB = "
         "1e9 B)\n";
  which.print(out);

  out << "\nRecommendations\n";
  TextTable rec({"run", "choice", "micro-batch>", "recompute", "step s>", "tokens/s>", "hours>",
                 "card-hours>"});
  for (const auto& rp : plan.runs) {
    if (!rp.recommendation) {
      rec.row({rp.run->name, "none fits", "", "", "", "", "", ""});
      continue;
    }
    const Option& o = *rp.recommendation;
    rec.row({rp.run->name, short_option(o), std::to_string(o.micro_batch),
             std::string(recompute_name(o.recompute)), format_fixed(o.step_seconds.value, 3),
             format_fixed(o.tokens_per_second, 0), format_fixed(o.time_to_train_hours, 2),
             format_fixed(o.card_hours, 2)});
  }
  rec.print(out);
  out << "\nWhy\n";
  for (const auto& rp : plan.runs)
    out << "- " << rp.run->name << ": " << rp.recommendation_reason << "\n";
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

const bool registered_plan = register_command(
    {"plan",
     "Planned runs in (YAML; default: the seed's runs): cards, count, time, cost and reasons out",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<PlanCliOptions>();
       app.add_option("file", o->file,
                      "Runs file (YAML, see examples/); default: the seed article's runs");
       app.add_option(
           "--rank-by", o->rank_by,
           "card-hours | time | cost | energy (default card-hours; cost needs prices in the file)");
       app.add_option("--gpu", o->gpus,
                      "Candidate card (repeatable); default: the file's candidates");
       app.add_flag("--json", o->json, "Print JSON: {\"runs\": [...], \"fleet\": [...]}");
       o->calibration.add_to(app);
       return [&ctx, o] {
         RunsFile file = load_runs(ctx, o->file);
         restrict_gpus(ctx, file, o->gpus);
         const PlanningData data = planning_data(ctx, o->calibration);
         PlanOptions options;
         options.rank_by = parse_rank_by(o->rank_by);
         const Plan plan = make_plan(file, data, options);
         if (o->json)
           ctx.out << plan_json(plan, file).dump(2) << "\n";
         else
           print_plan(ctx, plan, file);
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
         const double seconds =
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
         const double evaluations = static_cast<double>(plan.evaluations);
         const double rate = seconds > 0 ? evaluations / seconds : 0;
         const double cpu_rate = cpu_seconds > 0 ? evaluations / cpu_seconds : 0;
         if (o->json) {
           ctx.out << nlohmann::json{{"evaluations", plan.evaluations},
                                     {"runs", plan.runs.size()},
                                     {"gpus", file.gpus.size()},
                                     {"seconds", seconds},
                                     {"evaluations_per_second", rate},
                                     {"cpu_seconds", cpu_seconds},
                                     {"evaluations_per_cpu_second", cpu_rate}}
                          .dump(2)
                   << "\n";
         } else {
           ctx.out << fmt::format(
               "{} configurations ({} runs × {} card types × counts {} × strategies × "
               "micro-batches × recompute, and MIG profiles) evaluated in {:.3f} s ({:.3f} s of "
               "processor time): {:.0f} evaluations per second, {:.0f} per processor-second "
               "(one thread; per-run and per-card preparation included)\n",
               plan.evaluations, plan.runs.size(), file.gpus.size(), fmt::join(file.counts, "/"),
               seconds, cpu_seconds, rate, cpu_rate);
         }
       };
     },
     72});

}  // namespace
}  // namespace ftplan::cli
