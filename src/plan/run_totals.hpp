// What a run takes in total at a given step time and on a given placement: optimizer steps, time
// to train, card-hours, energy and cost (the planner's ranking and `ftplan explain` both use it).
#pragma once

#include <optional>

#include "catalog/catalog.hpp"
#include "core/trace.hpp"
#include "core/units.hpp"
#include "plan/runs.hpp"

namespace ftplan {

// Prices that apply to one card type.
struct CardPrices {
  std::optional<double> per_card_hour_USD;
  std::optional<double> per_kWh_USD;
};
CardPrices prices_for(const Prices& prices, const GpuSpec& gpu);

// What a run takes at a given step time (the one home of these formulas): optimizer steps =
// ⌈tokens / (global batch × seq)⌉; time to train = steps × step time; card-hours = cards ×
// (MIG: the instance's compute share) × time; energy = card-hours × TDP (an upper bound: every
// card at its power limit for the whole run); cost = card-hours × price + energy × price per kWh
// (only with a price per card-hour). With `trace`, records each figure (explain).
struct RunTotals {
  double steps = 0;
  double time_to_train_hours = 0;
  double card_hours = 0;
  double energy_kWh = 0;
  std::optional<double> cost_USD;
};
RunTotals run_totals(const PlannedRun& run, Seconds step_seconds, const GpuSpec& gpu, int count,
                     const MigProfile* mig, const CardPrices& prices, Trace* trace = nullptr);

}  // namespace ftplan
