// JSON of the planner (ftplan plan, ftplan sweep, POST /api/plan).
#pragma once

#include <nlohmann/json.hpp>

#include "plan/planner.hpp"

namespace ftplan {

nlohmann::json option_json(const Option& o);
nlohmann::json plan_json(const Plan& plan, const RunsFile& file);

}  // namespace ftplan
