// The step model against measured speeds: every measured run with a comparable throughput
// (data/measured/*.yaml) predicted as `ftplan scale` predicts it (compute, traffic and overlap),
// the constants of the efficiency table fitted to them (per-architecture multipliers of the
// tensor-core fractions, host launch and per-micro-batch costs), and the honest error: each
// source predicted by constants fitted without it (leave-one-source-out).
#pragma once

#include <string>
#include <vector>

#include "memory/measured_runs.hpp"
#include "plan/evaluate.hpp"

namespace ftplan {

// The constants a fit adjusts, applied to a copy of an efficiency table.
struct ThroughputParams {
  std::vector<std::pair<std::string, double>> architecture_scale;  // tensor-core classes
  double launch_us = 0;
  double micro_batch_ms = 0;
  void apply(EfficiencyTable& t) const;
  static ThroughputParams of(const EfficiencyTable& t, const std::vector<std::string>& archs);
};

struct ThroughputRow {
  const MeasuredRun* run = nullptr;
  bool compared = false;
  std::string reason;         // not compared: why
  double measured = 0;        // tokens per second per card (converted from the source's unit)
  double predicted = 0;       // with the table's constants
  double error = 0;           // (predicted - measured) / measured
  double loso_predicted = 0;  // with constants fitted without this run's source
  double loso_error = 0;
};

// One source's compared runs: the error with the table's constants and leave-one-source-out.
struct ThroughputSourceSummary {
  std::string source;
  int runs = 0;
  double median_abs_error = 0;  // with the table's constants
  double worst_abs_error = 0;
  std::string worst_id;
  double loso_median_abs_error = 0;  // 0 without a fit
};

struct ThroughputReport {
  std::vector<ThroughputRow> rows;  // every run with a throughput, in file order
  int compared = 0;
  int sources = 0;
  double median_abs_error = 0;         // with the table's constants
  double fitted_median_abs_error = 0;  // with `fitted` (in sample)
  double loso_median_abs_error = 0;
  double loso_within_25 = 0;  // share of runs within 25 %
  double loso_error_p10 = 0, loso_error_p90 = 0;
  ThroughputParams fitted;                          // on every compared run
  std::vector<ThroughputSourceSummary> per_source;  // in order of first appearance
};

// Predicts every comparable run with `data` (its default efficiency table) and, with `fit`,
// fits the constants on all runs (`fitted`) and on all but each source (LOSO errors).
ThroughputReport validate_throughput(const std::vector<MeasuredRun>& runs, const PlanningData& data,
                                     bool fit);

}  // namespace ftplan
