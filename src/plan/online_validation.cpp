#include "plan/online_validation.hpp"

#include <cmath>
#include <set>

#include "core/numeric.hpp"
#include "memory/model_states.hpp"
#include "perf/ops.hpp"

namespace ftplan {

bool is_online_measurement(const MeasuredRun& run) {
  return run.throughput && run.online;
}

OnlineReport validate_online(const std::vector<MeasuredRun>& runs, const PlanningData& data) {
  OnlineReport report;
  std::vector<double> abs_errors, errors;
  std::set<std::string> sources;
  for (const auto& run : runs) {
    if (!is_online_measurement(run)) continue;
    OnlineRow row;
    row.run = &run;
    const MeasuredThroughput& t = *run.throughput;
    if (!t.skip.empty() || !run.settings_complete) {
      row.reason = !t.skip.empty() ? t.skip : run.skip.empty() ? "settings incomplete" : run.skip;
    } else if (t.unit != ThroughputUnit::kStepSeconds) {
      row.reason =
          "an online run is compared by its step time: give the throughput in "
          "step_seconds";
    } else {
      Workload w = run.workload;
      if (!w.overheads) w.overheads = &data.overheads;
      if (!w.stack) w.stack = &data.stacks.fallback();
      const Placement& p = run.placement;
      const Topology topology = build_topology(*p.gpu, p.count, p.topology, data.comm, run.nodes);
      const Evaluation e =
          evaluate_placement(w, model_states(w), build_step_ops(w), p, topology, data);
      if (!e.step.feasible || !e.rl.feasible) {
        row.no_step = e.rl.online && !e.rl.feasible ? e.rl.reason : e.step.reason;
      } else {
        row.compared = true;
        row.measured = t.value;
        row.predicted = e.rl.total.value;
        row.error = relative_error(row.predicted, row.measured);
        row.step = e.rl;
        abs_errors.push_back(std::fabs(row.error));
        errors.push_back(row.error);
        sources.insert(run.source);
        if (std::fabs(row.error) > report.worst_abs_error) {
          report.worst_abs_error = std::fabs(row.error);
          report.worst_id = run.id;
        }
      }
    }
    report.rows.push_back(std::move(row));
  }
  report.compared = static_cast<int>(abs_errors.size());
  report.sources = static_cast<int>(sources.size());
  if (!abs_errors.empty()) {
    report.median_abs_error = median_of(abs_errors);
    report.median_error = median_of(errors);
  }
  return report;
}

}  // namespace ftplan
