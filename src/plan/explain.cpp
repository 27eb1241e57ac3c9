#include "plan/explain.hpp"

namespace ftplan {

ExplainResult explain_placement(const ExplainRequest& r, const PlanningData& data) {
  ExplainResult out;
  const Workload& w = r.workload;
  const Placement& p = r.placement;
  const ModelStates replica = model_states(w, &out.trace);
  const StepOps ops = build_step_ops(w);
  const int cards = p.mig ? 1 : p.count;
  const Topology t = build_topology(*p.gpu, cards, p.topology, data.comm);
  Placement placed = p;
  placed.topology = t.preset;
  out.result = evaluate_placement(w, replica, ops, placed, t, data, &out.trace);
  if (!out.result.step.feasible) {
    out.step_reason = out.result.step.reason;
    return out;
  }
  if (r.tokens_to_train > 0) {
    // The run as the planner sees it: every card takes micro-batch × grad_accum sequences a step.
    PlannedRun run;
    run.workload = w;
    run.global_batch = w.micro_batch * w.grad_accum * cards;
    run.tokens = r.tokens_to_train;
    run_totals(run, out.result.scale.step_seconds, *p.gpu, cards, p.mig, r.prices, &out.trace);
  }
  return out;
}

}  // namespace ftplan
