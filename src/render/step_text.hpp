// Text rendering of `ftplan step`: the time of one training step on one card, split by op class,
// the headline figures and the slowest ops.
#pragma once

#include <ostream>
#include <vector>

#include "perf/step.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// `timings[i]`: ops.ops[i] timed on `d` with `e`. `all_ops`: list every op, not only the slowest.
void print_step(std::ostream& out, const Workload& w, const Device& d, const StepOps& ops,
                const StepEstimate& s, const EfficiencyTable& e,
                const std::vector<OpTiming>& timings, bool all_ops);

}  // namespace ftplan
