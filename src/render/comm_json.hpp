// JSON of the multi-card model (ftplan scale, POST /api/scale).
#pragma once

#include <nlohmann/json.hpp>

#include "comm/traffic.hpp"
#include "memory/fit.hpp"
#include "perf/step.hpp"

namespace ftplan {

struct ScaleResult {
  Placement placement;
  Topology topology;
  MemoryEstimate memory;  // per card
  StepEstimate step;      // compute of one card
  CommPlan comm;
  ScaleEstimate scale;
  double tokens_per_second = 0;  // all cards together
};

nlohmann::json topology_json(const Topology& t);
nlohmann::json comm_plan_json(const CommPlan& c, const Topology& t);
nlohmann::json scale_json(const ScaleResult& r);

}  // namespace ftplan
