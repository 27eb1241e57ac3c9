// Text renderings of `ftplan calibrate`: what an import measured (efficiency per size range, or a
// link's achieved fraction), predicted vs measured per benchmark (`show`), and measured training
// steps against ftplan's prediction (`step`).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "catalog/device_match.hpp"
#include "comm/link_calibration.hpp"
#include "perf/calibration.hpp"
#include "plan/measured_step.hpp"

namespace ftplan {

// The card the benchmarks ran on and each measured size range against `defaults`.
void print_bench_import_summary(std::ostream& out, const CardMatch& card, const CalibrationFit& fit,
                                const EfficiencyTable& defaults);
// The card the NCCL run was on, the bus bandwidth and the achieved fraction of `level` against
// the one used without a calibration (`default_fraction`).
void print_link_import_summary(std::ostream& out, const CardMatch& card, const LinkFit& fit,
                               LinkLevel level, double default_fraction);
// That a calibration file was written to `path`, and how to use it.
void print_calibration_written(std::ostream& out, const std::string& path);

// Per benchmark the measured time and the predictions with the default and the calibrated
// efficiencies (`label`: which calibration), then the absolute errors per group (`summary`).
void print_bench_predictions(std::ostream& out, const CardMatch& card, const std::string& label,
                             const std::vector<BenchMeasurement>& measurements,
                             const std::vector<BenchPrediction>& predictions,
                             const std::vector<BenchErrorSummary>& summary);

// Per measured row ftplan's step time and peaks against the measured ones, then the absolute
// errors per figure (`summary`).
void print_step_checks(std::ostream& out, const StepResults& r, const CardMatch& card,
                       const EfficiencyTable& e, const std::vector<StepCheck>& checks,
                       const std::vector<StepErrorSummary>& summary);

}  // namespace ftplan
