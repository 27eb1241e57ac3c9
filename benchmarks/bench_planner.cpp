// The planner's hot path, over the whole GPU catalog for the seed article's runs (as ftplan sweep
// does): evaluate_option for every placement (card type × count × strategy × micro-batch ×
// recompute, and every MIG instance), with the per-run and per-card preparation done once
// outside the timed loop; and the whole search (make_plan) end to end, preparation included.
#include <benchmark/benchmark.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "plan/planner.hpp"

namespace {

const ftplan::Catalog& catalog() {
  return ftplan::cli::builtin_catalog();
}

// The built-in seed runs with every catalog card as a candidate (ftplan sweep).
const ftplan::RunsFile& sweep_file() {
  static const ftplan::RunsFile file = [] {
    std::ostringstream out, err;
    ftplan::cli::Context ctx(out, err);
    ftplan::RunsFile f = ftplan::cli::load_runs(ctx, "");
    f.gpus.clear();
    for (const auto& g : catalog().gpus())
      f.gpus.push_back(&g);
    return f;
  }();
  return file;
}

const ftplan::PlanningData& planning_data() {
  static const ftplan::PlanningData d = ftplan::PlanningData::load(catalog());
  return d;
}

// Every placement make_plan evaluates, set up as make_plan sets them up.
struct Sweep {
  std::deque<ftplan::PreparedRun> runs;
  std::deque<ftplan::PreparedCard> cards;
  std::deque<ftplan::Topology> topologies;
  struct Item {
    const ftplan::PreparedRun* run;
    ftplan::Candidate candidate;
  };
  std::vector<Item> items;
  std::size_t evaluations = 0;
};

Sweep build_sweep() {
  const ftplan::RunsFile& file = sweep_file();
  const ftplan::PlanningData& data = planning_data();
  Sweep s;
  for (const auto& run : file.runs) {
    const ftplan::PreparedRun& pr = s.runs.emplace_back(ftplan::prepare_run(run, data));
    for (const ftplan::GpuSpec* gpu : file.gpus) {
      if (!data.formats.check(*gpu, run.workload.precision).supported) continue;
      const ftplan::PreparedCard& card =
          s.cards.emplace_back(ftplan::prepare_card(pr, *gpu, nullptr, data, file));
      for (int count : file.counts) {
        try {
          s.topologies.push_back(
              ftplan::build_topology(*gpu, count, count > 1 ? file.topology : "", data.comm));
        } catch (const ftplan::UserError&) {
          continue;  // a count the card cannot be joined at: make_plan rejects it too
        }
        const ftplan::Topology& t = s.topologies.back();
        const int group = ftplan::default_shard_group(count, t.cards_per_node);
        for (auto sh : ftplan::candidate_shardings(run.workload, t))
          s.items.push_back(
              {&pr, {&card, count, sh, &t, ftplan::topology_name(t, data), {}, group}});
      }
      if (!file.allow_mig || !gpu->mig.supported) continue;
      s.topologies.push_back(ftplan::build_topology(*gpu, 1, "", data.comm));
      const ftplan::Topology& single = s.topologies.back();
      for (const auto& profile : gpu->mig.profiles) {
        const ftplan::PreparedCard& instance =
            s.cards.emplace_back(ftplan::prepare_card(pr, *gpu, &profile, data, file));
        s.items.push_back({&pr,
                           {&instance, 1, ftplan::Sharding::kNone, &single,
                            ftplan::topology_name(single, data)}});
      }
    }
  }
  for (const auto& item : s.items)
    s.evaluations += item.run->variants.size();
  return s;
}

// Configuration evaluations per second: the per-placement path alone.
void BM_EvaluateOption(benchmark::State& state) {
  const Sweep s = build_sweep();
  const ftplan::RunsFile& file = sweep_file();
  const ftplan::PlanningData& data = planning_data();
  std::size_t feasible = 0;
  for (auto _ : state) {
    for (const auto& item : s.items)
      for (std::size_t v = 0; v < item.run->variants.size(); ++v) {
        ftplan::Option o = ftplan::evaluate_option(*item.run, v, item.candidate, data, file);
        feasible += o.feasible ? 1 : 0;
        benchmark::DoNotOptimize(o);
      }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * s.evaluations));
  state.counters["evaluations_per_sweep"] = static_cast<double>(s.evaluations);
  state.counters["feasible_per_sweep"] =
      static_cast<double>(feasible) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_EvaluateOption)->Unit(benchmark::kMillisecond);

// The whole search as ftplan sweep runs it: per-run and per-card preparation, every evaluation,
// ranking and the per-card-type summaries (no fleet).
void BM_SweepMakePlan(benchmark::State& state) {
  const ftplan::RunsFile& file = sweep_file();
  const ftplan::PlanningData& data = planning_data();
  ftplan::PlanOptions options;
  options.fleet = false;
  std::size_t evaluations = 0;
  for (auto _ : state) {
    ftplan::Plan plan = ftplan::make_plan(file, data, options);
    evaluations += plan.evaluations;
    benchmark::DoNotOptimize(plan);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(evaluations));
}
BENCHMARK(BM_SweepMakePlan)->Unit(benchmark::kMillisecond);

// A 70B full fine-tune on 8 to 512 cards of every catalog card type: the layout search (tensor ×
// pipeline × interleaving × context × data parallel and sharding × micro-batch × recompute),
// whole, as ftplan plan runs it. The wall rate beside the rate per CPU-second.
void BM_Plan70BFullLayouts(benchmark::State& state) {
  static const ftplan::RunsFile file = [] {
    const auto path = std::filesystem::temp_directory_path() / "ftplan-bench-70b-full.yaml";
    std::ofstream(path) << "candidates: {gpus: [all], counts: [8, 16, 32, 64, 128, 256, 512]}\n"
                           "runs:\n"
                           "  - {name: 70B full, model: llama-3.1-70b, method: full, seq: 4096,\n"
                           "     global_batch: 1024, tokens: 1e9}\n";
    std::ostringstream out, err;
    ftplan::cli::Context ctx(out, err);
    ftplan::RunsFile f = ftplan::cli::load_runs(ctx, path.string());
    std::filesystem::remove(path);
    return f;
  }();
  const ftplan::PlanningData& data = planning_data();
  ftplan::PlanOptions options;
  options.fleet = false;
  std::size_t evaluations = 0;
  double wall = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    ftplan::Plan plan = ftplan::make_plan(file, data, options);
    wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    evaluations += plan.evaluations;
    benchmark::DoNotOptimize(plan);
  }
  // items_per_second: per CPU-second of the process (MeasureProcessCPUTime).
  state.SetItemsProcessed(static_cast<std::int64_t>(evaluations));
  state.counters["configurations"] =
      static_cast<double>(evaluations) / static_cast<double>(state.iterations());
  state.counters["per_wall_second"] = wall > 0 ? static_cast<double>(evaluations) / wall : 0;
}
BENCHMARK(BM_Plan70BFullLayouts)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// The per-run preparation alone: model states, and per variant the op list, activation profile
// and prepared step.
void BM_PrepareRun(benchmark::State& state) {
  const ftplan::RunsFile& file = sweep_file();
  const ftplan::PlanningData& data = planning_data();
  for (auto _ : state)
    for (const auto& run : file.runs) {
      ftplan::PreparedRun pr = ftplan::prepare_run(run, data);
      benchmark::DoNotOptimize(pr);
    }
}
BENCHMARK(BM_PrepareRun)->Unit(benchmark::kMillisecond);

}  // namespace
