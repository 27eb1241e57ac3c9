// One workload on one hardware choice, all models together: memory per card, compute time per
// card, traffic between cards and what of it hides behind compute. The single home of that
// combination: `ftplan scale`, the planner, the report and the web page all call it.
#pragma once

#include <map>
#include <vector>

#include "comm/offload.hpp"
#include "comm/traffic.hpp"
#include "memory/fit.hpp"
#include "memory/overheads.hpp"
#include "parallel/layout.hpp"
#include "perf/device.hpp"
#include "perf/efficiency.hpp"
#include "perf/step.hpp"
#include "plan/rl_step.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// What every evaluation reads from the data files: parsed once, then shared read-only.
struct PlanningData {
  const Catalog* catalog = nullptr;
  CommConstants comm;
  // The runtime overheads (CUDA context, workspaces, NCCL, allocator reserve) the planner counts
  // for a run whose workload carries none (runs files), as fit counts them.
  RuntimeOverheads overheads;
  TrainingFormats formats;
  PowerScaling power;                  // how a power cap lowers the clock
  Stacks stacks;                       // data/stacks/: a workload without one runs on the default
  EfficiencyTable default_efficiency;  // or a given table without a calibration header
  std::vector<EfficiencyTable> calibrations;  // measured tables, each for one card

  // `calibrations`: measured tables (each for the card its header names; one without a header
  // replaces the defaults for every card); `links`: measured link fractions, into comm.
  static PlanningData load(const Catalog& catalog, std::vector<EfficiencyTable> calibrations = {},
                           std::vector<LinkCalibration> links = {});
  // The table for a card: its calibration if one was given, else the defaults.
  const EfficiencyTable& efficiency(const GpuSpec& gpu) const;
};

// One workload evaluated on one hardware choice: memory per card, the step of one card, the
// traffic between cards and what the overlap leaves; the one result `ftplan scale`, the planner's
// explain, the report and the page share. Feasibility: memory.verdict and step.feasible (with
// step.reason); the planner's Option keeps the constraint that failed.
struct Evaluation {
  Placement placement;
  Topology topology;
  MemoryEstimate memory;  // per card
  StepEstimate step;      // compute of one card
  CommPlan comm;
  OffloadTime offload;  // CPU offload: host copies and the host's optimizer step
  ScaleEstimate scale;
  // Under a model-parallel layout (placement.layout): the groups' exchanges per micro-batch on a
  // card of the slower edge stage (`stage`), and the pipeline's bubble per step. `step` is that
  // card's compute; `comm` the gradient traffic of its data-parallel group.
  LayoutTraffic layout;
  int stage = 0;
  Seconds layout_exposed_per_step;  // tensor, expert, pipeline and unhidden context exchanges
  Seconds bubble_per_step;          // pipeline fill and drain
  double tokens_per_second = 0;     // all cards together
  // An online objective (GRPO, PPO, RLOO): the rollout, weight sync, scoring and training parts.
  // scale.step_seconds and tokens_per_second then count the whole step, rollout included.
  RlStep rl;
  bool feasible() const { return step.feasible && memory.verdict != Verdict::kDoesNotFit; }
};
using ScaleResult = Evaluation;

// The compute time one card spends per micro-batch and per step, for the overlap model. Under
// ZeRO-1/2 and FSDP each card updates 1/N of the optimizer states. With CPU offload, a pass takes
// at least as long as the copies it prefetches, and the update is the host's step and the copies
// around it.
ComputeTimes compute_times(const StepEstimate& step, const Placement& p,
                           const OffloadTime& offload = {});

// Evaluates `w` on `p` (topology `t`, built with build_topology for p's card and count).
// `replica` = model_states(w). A step that cannot be timed (a rate the vendor does not publish,
// a format the card lacks) leaves step.feasible false with the reason; memory is still filled in.
// With `trace`, every model records how its figures were derived (explain, the report).
ScaleResult evaluate_placement(const Workload& w, const ModelStates& replica, const StepOps& ops,
                               const Placement& p, const Topology& t, const PlanningData& data,
                               Trace* trace = nullptr);
// One edge stage of a model-parallel layout for one whole step (one per prepared variant).
struct StageKey {
  const StepOps* whole = nullptr;
  int tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1;
  int stage = 0;
  StageKey(const StepOps* w, const Layout& l, int s)
      : whole(w), tp(l.tp), pp(l.pp), vpp(l.vpp), cp(l.cp), ep(l.ep), stage(s) {}
  auto operator<=>(const StageKey&) const = default;
};
// What the planner computed for model-parallel stages, kept for the next placement that needs it:
// a layout is evaluated at several card counts (and its stages' ops on every card type), and a
// stage's work depends on the whole step, the layout and the stage, not on the data-parallel group.
struct StageCaches {
  std::map<StageKey, StepOps>* ops = nullptr;         // a run's, for every card type
  std::map<StageKey, StepEstimate>* steps = nullptr;  // one card type's (and power limit's)
};

// The same with the memory per card already estimated (memory_figures(w, replica, profile, p,
// states) with its reason): the planner checks memory first and times only the placements that
// fit. `states`: layout_states for a model-parallel p.layout (null otherwise); `caches`: stage
// ops and steps computed so far (found there, or added).
ScaleResult evaluate_placement(const Workload& w, const ModelStates& replica, const StepOps& ops,
                               const Placement& p, const Topology& t, const PlanningData& data,
                               MemoryEstimate memory, const LayoutStates* states,
                               const StageCaches& caches);

}  // namespace ftplan
