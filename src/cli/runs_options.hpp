// What the commands that read a runs file share (plan, sweep, report): the candidate cards named
// on the command line, and the data every evaluation reads.
#pragma once

#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "cli/perf_options.hpp"
#include "plan/evaluate.hpp"
#include "plan/runs.hpp"

namespace ftplan::cli {

// --gpu ID (repeatable) replaces the file's candidate cards; nothing given keeps them.
void restrict_gpus(Context& ctx, RunsFile& file, const std::vector<std::string>& ids);

// The data files every evaluation reads, with every calibration in force (--calibration, else
// $FTPLAN_CALIBRATION_DIR): each applies to the card it names, links included.
PlanningData planning_data(Context& ctx, const CalibrationOptions& calibration);

}  // namespace ftplan::cli
