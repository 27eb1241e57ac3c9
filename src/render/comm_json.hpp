// JSON of the multi-card model (ftplan scale, POST /api/scale).
#pragma once

#include <nlohmann/json.hpp>

#include "comm/traffic.hpp"
#include "plan/evaluate.hpp"

namespace ftplan {

nlohmann::json topology_json(const Topology& t);
nlohmann::json comm_plan_json(const CommPlan& c, const Topology& t);
// An online objective's step parts (plan/rl_step): rollout, weight sync, scoring, training.
nlohmann::json rl_step_json(const RlStep& r);
nlohmann::json scale_json(const ScaleResult& r);

}  // namespace ftplan
