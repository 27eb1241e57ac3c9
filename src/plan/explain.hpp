// Every figure of one run on one placement with its derivation (ftplan explain, POST /api/explain):
// the same models as fit, step and scale, each recording into one Trace.
#pragma once

#include "core/trace.hpp"
#include "plan/evaluate.hpp"
#include "plan/planner.hpp"
#include "workload/workload.hpp"

namespace ftplan {

struct ExplainRequest {
  Workload workload;
  Placement placement;         // its topology: a preset name, or empty for the card's best
  double tokens_to_train = 0;  // > 0: also the run's totals (time to train, card-hours, energy)
  CardPrices prices;           // with a price per card-hour: the cost too
};

// Model states (params.*, memory.*), memory per card (memory.*), the step on one card (perf.*),
// traffic, overlap and scaling on several cards (comm.*, scale.*) and the run's totals (plan.*).
// A card that cannot be timed records the memory figures only (its reason in `step_reason`).
struct ExplainResult {
  Trace trace;
  ScaleResult result;
  Reason step_reason;  // why the step has no time on this card (empty when it has)
};
ExplainResult explain_placement(const ExplainRequest& r, const PlanningData& data);

}  // namespace ftplan
