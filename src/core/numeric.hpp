// Small numeric helpers shared by the importers of measurements and the validations
// (perf/calibration, comm/link_calibration, plan/measured_step, memory/measured_runs,
// plan/throughput).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace ftplan {

// The median of `values`: the middle one, or for an even count the mean of the two middle ones
// (the rule ftplan-bench's own summaries use); 0 when empty.
inline double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The q-quantile of `values` (q in [0, 1]), interpolated linearly between the two nearest
// order statistics; 0 when empty.
inline double quantile_of(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto i = static_cast<std::size_t>(pos);
  const double f = pos - static_cast<double>(i);
  return i + 1 < values.size() ? values[i] * (1 - f) + values[i + 1] * f : values[i];
}

// (predicted − measured) / measured.
inline double relative_error(double predicted, double measured) {
  return (predicted - measured) / measured;
}

// Whether two figures of one results file agree up to its writer's rounding (9 significant
// digits, or a full double): a larger mismatch is a unit or bookkeeping error.
inline constexpr double kResultsRelativeTolerance = 1e-6;
inline bool agrees(double a, double b) {
  const double scale = std::max(std::fabs(a), std::fabs(b));
  return scale < 1e-12 || std::fabs(a - b) <= kResultsRelativeTolerance * scale;
}

}  // namespace ftplan
