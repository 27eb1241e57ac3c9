// Text renderings of `ftplan scale`: one run on several cards (strategy, collectives, link time,
// exposed time, scaling), and the sweep over 1, 2, 4 and 8 cards.
#pragma once

#include <ostream>
#include <vector>

#include "render/comm_json.hpp"
#include "workload/workload.hpp"

namespace ftplan {

void print_scale(std::ostream& out, const Workload& w, const ScaleResult& r);
// An online objective's step: its parts in a table, and the bottleneck (nothing otherwise).
void print_rl_step(std::ostream& out, const Workload& w, const RlStep& r);
// `rows[g]`: the results on gpus[g], one per card count.
void print_scale_sweep(std::ostream& out, const Workload& w,
                       const std::vector<std::vector<ScaleResult>>& rows,
                       const std::vector<const GpuSpec*>& gpus);

}  // namespace ftplan
