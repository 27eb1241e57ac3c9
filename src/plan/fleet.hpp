// The fleet a plan needs: per card type, how many cards hold every planned run at once.
#pragma once

#include <vector>

#include "plan/evaluate.hpp"
#include "plan/planner.hpp"
#include "plan/runs.hpp"

namespace ftplan {

// Per card type of the runs file, from each run's fewest cards of that type: runs that fit one
// card packed onto MIG instances where the card allows it (else one job per card), runs that need
// several cards on cards of their own, and the runs the type cannot hold.
std::vector<FleetEntry> plan_fleet(const std::vector<RunPlan>& runs, const RunsFile& file,
                                   const PlanningData& data);

}  // namespace ftplan
