// A bound on the work one request may cause: planner evaluations and wall time, checked where the
// engine evaluates a workload on a placement. The bound holds for the calling thread while a
// ScopedWorkBudget lives; without one, work is unbounded (the command line).
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

namespace ftplan {

struct WorkBudget {
  long long max_evaluations = 0;  // 0: no bound
  double max_seconds = 0;         // 0: no bound
};

// Thrown when a budget is spent: which one ("evaluations" or "time") and the bound.
class OverBudget : public std::runtime_error {
 public:
  OverBudget(std::string which, std::string message)
      : std::runtime_error(std::move(message)), which_(std::move(which)) {}
  const std::string& which() const { return which_; }

 private:
  std::string which_;
};

class ScopedWorkBudget {
 public:
  explicit ScopedWorkBudget(const WorkBudget& budget);
  ~ScopedWorkBudget();
  ScopedWorkBudget(const ScopedWorkBudget&) = delete;
  ScopedWorkBudget& operator=(const ScopedWorkBudget&) = delete;

  long long evaluations() const { return evaluations_; }

 private:
  friend void charge_evaluation();
  friend void check_work_time();
  WorkBudget budget_;
  std::chrono::steady_clock::time_point deadline_;
  long long evaluations_ = 0;
  ScopedWorkBudget* outer_;
};

// Counts one evaluation against the calling thread's budget; throws OverBudget when it is spent.
void charge_evaluation();
// Checks the time budget only, for work between evaluations (preparing a run or a card).
void check_work_time();

}  // namespace ftplan
