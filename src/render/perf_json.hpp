// JSON renderings of the roofline and step-time model (CLI --json and the HTTP API).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "perf/device.hpp"
#include "perf/efficiency.hpp"
#include "perf/ops.hpp"
#include "perf/step.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// Rates per precision (TFLOPS, null where unknown, with the reason), bandwidth and ops:byte.
nlohmann::json device_json(const Device& d);
// Keys: gpu, dtype, m, n, k, flops, bytes, intensity, ops_per_byte, bound ("compute"/"memory"),
// peak_TFLOPS, bandwidth_GBps, attainable_TFLOPS, min_seconds, estimated_seconds.
nlohmann::json roofline_json(const Device& d, const GemmRoofline& r);
// Keys: step_seconds, micro_batch_seconds, forward_seconds, backward_seconds, recompute_seconds,
// optimizer_seconds, tokens_per_second, mfu, compute_bound_share, classes, layers and `ops`
// (per micro-batch: name, class, phase, precision, count, flops, bytes, intensity, bound,
// seconds; the optimizer per step).
nlohmann::json step_json(const Workload& w, const Device& d, const StepOps& ops,
                         const StepEstimate& s, const EfficiencyTable& e);
// Two cards: rates per precision with ratios, bandwidth, ops:byte, training-format support; and,
// when given, the step comparison of one workload.
struct StepPair {
  const Workload* workload;
  const StepOps* ops;
  StepEstimate a;
  StepEstimate b;
  StepComparison comparison;
};
nlohmann::json compare_json(const Device& a, const Device& b, const TrainingFormats& formats,
                            const std::optional<StepPair>& step);
nlohmann::json efficiency_json(const EfficiencyTable& e);

}  // namespace ftplan
