// Text rendering of `ftplan max`: the largest micro-batch or the longest sequence that fits a
// card, and what binds it.
#pragma once

#include <ostream>

#include "memory/solve.hpp"
#include "workload/workload.hpp"

namespace ftplan {

void print_max(std::ostream& out, const Workload& w, const Placement& p, const SolveResult& r);

}  // namespace ftplan
