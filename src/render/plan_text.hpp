// Text renderings of the planner: `ftplan plan` (which card for which run, the recommendations,
// why, the fleet) and `ftplan sweep` (configurations evaluated and how fast).
#pragma once

#include <ostream>

#include "plan/planner.hpp"

namespace ftplan {

void print_plan(std::ostream& out, const Plan& plan, const RunsFile& file);

// How long a search took: wall-clock and processor seconds, and evaluations per second of each.
struct SearchTiming {
  double seconds = 0;
  double cpu_seconds = 0;
  double evaluations_per_second = 0;
  double evaluations_per_cpu_second = 0;
};
// `plan`: the search over every card of `file`.
void print_sweep(std::ostream& out, const Plan& plan, const RunsFile& file,
                 const SearchTiming& timing);

}  // namespace ftplan
