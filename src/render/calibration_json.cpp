#include "render/calibration_json.hpp"

#include "render/json.hpp"
#include "render/reason_words.hpp"

namespace ftplan {

using nlohmann::json;

namespace {

json optional_number(const std::optional<double>& v, int decimals) {
  return v ? json(round_to(*v, decimals)) : json(nullptr);
}

json optional_bytes(const std::optional<Bytes>& b) {
  return b ? json(b->value) : json(nullptr);
}

}  // namespace

json calibration_header_json(const CalibrationHeader& h) {
  json j = {{"card", h.card}, {"measurement", h.measurement}, {"date", h.date}};
  for (const auto& [key, value] : {std::pair{"device", &h.device}, std::pair{"driver", &h.driver},
                                   std::pair{"results", &h.results}, std::pair{"note", &h.note}})
    if (!value->empty()) j[key] = *value;
  return j;
}

json bench_predictions_json(const CardMatch& card, const std::string& calibration,
                            const std::vector<BenchMeasurement>& measurements,
                            const std::vector<BenchPrediction>& predictions) {
  json rows = json::array();
  for (const auto& p : predictions) {
    const BenchMeasurement& m = *p.measurement;
    json r = {{"id", m.bench->id},
              {"class", m.bench->bench_class},
              {"op", m.bench->op},
              {"bound", curve_name(m.curve)},
              {"size", round_to(m.size, 6)},
              {"unit", m.curve == Curve::kCompute ? "GFLOP" : "MB"},
              {"efficiency", round_to(m.efficiency, 6)},
              {"measured_seconds", m.measured().value},
              {"default_seconds", p.with_defaults.time().value},
              {"default_error", round_to(p.error_defaults, 6)},
              {"calibrated_seconds", p.with_calibration.time().value},
              {"calibrated_error", round_to(p.error_calibration, 6)}};
    if (!m.excluded.empty()) r["excluded"] = word_reason(m.excluded);
    rows.push_back(r);
  }
  json not_timed = json::array();
  for (const auto& m : measurements)
    if (!m.timed) not_timed.push_back({{"id", m.bench->id}, {"reason", word_reason(m.excluded)}});
  json summary = json::array();
  for (const auto& s : summarize_errors(predictions))
    summary.push_back({{"group", s.group},
                       {"count", s.count},
                       {"default_median_abs_error", round_to(s.median_abs_defaults, 6)},
                       {"default_worst_abs_error", round_to(s.worst_abs_defaults, 6)},
                       {"calibrated_median_abs_error", round_to(s.median_abs_calibration, 6)},
                       {"calibrated_worst_abs_error", round_to(s.worst_abs_calibration, 6)}});
  return {{"card", card.gpu->id}, {"card_basis", card.basis}, {"calibration", calibration},
          {"benchmarks", rows},   {"summary", summary},       {"not_timed", not_timed}};
}

json step_checks_json(const CardMatch& card, const std::string& efficiency,
                      const std::vector<StepCheck>& checks) {
  json rows = json::array();
  for (const auto& c : checks) {
    const StepRow& row = *c.row;
    json r = {{"id", row.id}, {"status", row.status}};
    if (!row.reason.empty()) r["reason"] = row.reason;
    r["measured"] = {{"step_seconds", row.ok() ? json(row.median.value) : json(nullptr)},
                     {"peak_allocated_bytes", optional_bytes(row.peak_allocated)},
                     {"peak_reserved_bytes", optional_bytes(row.peak_reserved)}};
    r["predicted"] = {{"step_seconds", c.predicted ? json(c.step.value) : json(nullptr)},
                      {"peak_allocated_bytes", c.allocated.peak.value},
                      {"peak_reserved_bytes", c.reserved.peak.value},
                      {"verdict", verdict_name(c.reserved.verdict)}};
    if (!c.predicted) r["predicted"]["reason"] = word_reason(c.reason);
    r["error"] = {{"step_seconds", optional_number(c.error_step, 6)},
                  {"peak_allocated_bytes", optional_number(c.error_allocated, 6)},
                  {"peak_reserved_bytes", optional_number(c.error_reserved, 6)}};
    rows.push_back(r);
  }
  json summary = json::array();
  for (const auto& s : summarize_step_errors(checks))
    summary.push_back({{"figure", s.figure},
                       {"count", s.count},
                       {"median_abs_error", round_to(s.median_abs, 6)},
                       {"worst_abs_error", round_to(s.worst_abs, 6)}});
  return {{"card", card.gpu->id},
          {"card_basis", card.basis},
          {"efficiency", efficiency},
          {"rows", rows},
          {"summary", summary}};
}

}  // namespace ftplan
