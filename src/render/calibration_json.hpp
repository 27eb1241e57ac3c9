// JSON renderings of calibration: the header of a calibration file, predicted vs measured per
// benchmark (ftplan calibrate show --json) and per measured step (ftplan calibrate step --json).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catalog/calibration_header.hpp"
#include "catalog/device_match.hpp"
#include "perf/calibration.hpp"
#include "plan/measured_step.hpp"

namespace ftplan {

nlohmann::json calibration_header_json(const CalibrationHeader& h);

// Keys: card, card_basis, calibration (its label), benchmarks (id, class, op, bound, size, unit,
// measured_seconds, default_seconds, default_error, calibrated_seconds, calibrated_error,
// efficiency, excluded), summary (group, count, median/worst absolute error with the defaults
// and with the calibration), not_timed (id, reason).
nlohmann::json bench_predictions_json(const CardMatch& card, const std::string& calibration,
                                      const std::vector<BenchMeasurement>& measurements,
                                      const std::vector<BenchPrediction>& predictions);

// Keys: card, card_basis, efficiency, rows (id, status, reason, measured and predicted step
// seconds and peaks in bytes, errors, ftplan's verdicts), summary (figure, count, median and
// worst absolute error).
nlohmann::json step_checks_json(const CardMatch& card, const std::string& efficiency,
                                const std::vector<StepCheck>& checks);

}  // namespace ftplan
