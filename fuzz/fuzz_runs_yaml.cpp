// Fuzzes the runs-file reader (ftplan plan/sweep/report, POST /api/plan) and, for small accepted
// files, the planner on what it accepted.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/catalog.hpp"
#include "cli/cli.hpp"
#include "core/error.hpp"
#include "plan/planner.hpp"
#include "plan/runs.hpp"

namespace {
const ftplan::Catalog& catalog() {
  static const ftplan::Catalog c = ftplan::Catalog::load(ftplan::cli::builtin_data_files());
  return c;
}
const ftplan::PlanningData& planning_data() {
  static const ftplan::PlanningData d = ftplan::PlanningData::load(catalog());
  return d;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // Catalog models only: the fuzzer must not read files.
    static const ftplan::Stacks stacks = ftplan::load_stacks(catalog());
    ftplan::RunsFile f =
        ftplan::parse_runs_file(text, "fuzz.yaml", catalog(), stacks,
                                [](const std::string& id) { return catalog().model(id); });
    // An accepted file has runs, candidates and counts, and every run a positive amount to train.
    if (f.runs.empty() || f.gpus.empty() || f.counts.empty()) __builtin_trap();
    for (const auto& run : f.runs) {
      if (run.name.empty() || !run.workload.model || run.global_batch < 1 || run.count < 1)
        __builtin_trap();
      const double steps = run.steps();
      if (!(run.tokens > 0) || !std::isfinite(steps) || steps < 1) __builtin_trap();
      for (const auto* g : run.gpus)
        if (!g) __builtin_trap();
    }
    for (const auto* g : f.gpus)
      if (!g) __builtin_trap();
    // The planner on a bounded part of it (two card types, few runs): no crash, no exception but
    // a UserError, and every recommendation feasible with finite figures.
    if (f.runs.size() <= 2) {
      if (f.gpus.size() > 2) f.gpus.resize(2);
      for (auto& run : f.runs)
        if (run.gpus.size() > 2) run.gpus.resize(2);
      ftplan::PlanOptions options;
      options.fleet = false;
      const ftplan::Plan plan = ftplan::make_plan(f, planning_data(), options);
      for (const auto& rp : plan.runs)
        if (rp.recommendation && (!rp.recommendation->feasible ||
                                  !std::isfinite(rp.recommendation->step_seconds.value) ||
                                  !(rp.recommendation->time_to_train_hours > 0)))
          __builtin_trap();
    }
  } catch (const ftplan::UserError&) {
    // Rejected input is the expected outcome for most of the corpus.
  }
  return 0;
}
