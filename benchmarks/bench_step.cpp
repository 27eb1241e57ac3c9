// The planner's hot path: timing a prepared op list on one card (estimate_step), and building the
// op list once per workload (build_step_ops).
#include <benchmark/benchmark.h>

#include "cli/cli.hpp"
#include "perf/step.hpp"

namespace {

const ftplan::Catalog& catalog() {
  static const ftplan::Catalog c = ftplan::Catalog::load(ftplan::cli::builtin_data_files());
  return c;
}

ftplan::Workload lora_8b() {
  ftplan::Workload w;
  w.model = catalog().model("llama-3.1-8b");
  w.method = ftplan::Method::kLora;
  return w;
}

// One placement: a prepared op list timed on one card (allocation-free).
void BM_EstimateStep(benchmark::State& state) {
  const ftplan::StepOps ops = ftplan::build_step_ops(lora_8b());
  const ftplan::PreparedStep p = ftplan::prepare_step(ops, ftplan::default_efficiency(catalog()));
  const ftplan::Device d = ftplan::make_device(catalog().gpu("h200-nvl"));
  for (auto _ : state) {
    ftplan::StepEstimate s = ftplan::estimate_step(p, d);
    benchmark::DoNotOptimize(s);
  }
  state.counters["ops"] = static_cast<double>(ops.ops.size());
  state.counters["estimates_per_second"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EstimateStep);

void BM_BuildStepOps(benchmark::State& state) {
  const ftplan::Workload w = lora_8b();
  for (auto _ : state) {
    ftplan::StepOps ops = ftplan::build_step_ops(w);
    benchmark::DoNotOptimize(ops);
  }
}
BENCHMARK(BM_BuildStepOps);

}  // namespace
