#include "core/work_budget.hpp"

#include <fmt/format.h>

namespace ftplan {

namespace {
thread_local ScopedWorkBudget* current = nullptr;
}  // namespace

ScopedWorkBudget::ScopedWorkBudget(const WorkBudget& budget) : budget_(budget), outer_(current) {
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(budget.max_seconds));
  current = this;
}

ScopedWorkBudget::~ScopedWorkBudget() {
  current = outer_;
}

void charge_evaluation() {
  ScopedWorkBudget* b = current;
  if (!b) return;
  ++b->evaluations_;
  if (b->budget_.max_evaluations > 0 && b->evaluations_ > b->budget_.max_evaluations)
    throw OverBudget("evaluations",
                     fmt::format("the request needs more than {} planner evaluations (its work "
                                 "budget)",
                                 b->budget_.max_evaluations));
  check_work_time();
}

void check_work_time() {
  ScopedWorkBudget* b = current;
  if (!b) return;
  if (b->budget_.max_seconds > 0 && std::chrono::steady_clock::now() > b->deadline_)
    throw OverBudget("time", fmt::format("the request ran longer than {:g} s (its time budget)",
                                         b->budget_.max_seconds));
}

}  // namespace ftplan
