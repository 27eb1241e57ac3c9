// The whole online step (GRPO, PPO, RLOO: rollout, weight sync, scoring, training; plan/rl_step)
// against published step times of reinforcement-learning runs (data/measured/*.yaml runs with an
// online method and a throughput in step_seconds). Kept apart from the training-throughput fit
// (plan/throughput): no constant is fitted to these rows; their error is reported as it is.
#pragma once

#include <string>
#include <vector>

#include "memory/measured_runs.hpp"
#include "plan/evaluate.hpp"

namespace ftplan {

struct OnlineRow {
  const MeasuredRun* run = nullptr;
  bool compared = false;
  std::string reason;    // not compared for a stated cause (the source's skip, its unit)
  Reason no_step;        // not compared: the model finds no step (code kNone otherwise)
  double measured = 0;   // seconds per step, as the source gives it
  double predicted = 0;  // the whole step, as `ftplan scale` times it
  double error = 0;      // (predicted - measured) / measured
  RlStep step;           // the predicted parts
};

struct OnlineReport {
  std::vector<OnlineRow> rows;  // every online run with a throughput, in file order
  int compared = 0;
  int sources = 0;
  double median_abs_error = 0;
  double worst_abs_error = 0;
  std::string worst_id;
  double median_error = 0;  // signed: below 0, the model is faster than the measurement
};

// Whether a measured run is one the online comparison takes (an online objective with a
// throughput, compared or not): the training-throughput comparison leaves these out.
bool is_online_measurement(const MeasuredRun& run);

OnlineReport validate_online(const std::vector<MeasuredRun>& runs, const PlanningData& data);

}  // namespace ftplan
