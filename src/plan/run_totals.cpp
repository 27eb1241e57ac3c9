#include "plan/run_totals.hpp"

#include <fmt/format.h>

#include <string>

#include "core/format.hpp"

namespace ftplan {

namespace {

// The share of a card an option occupies: a MIG instance its compute slices, else the whole card.
double card_share(const GpuSpec& gpu, const MigProfile* mig) {
  return mig ? static_cast<double>(mig->compute_slices) / gpu.mig.compute_slices : 1.0;
}

}  // namespace

CardPrices prices_for(const Prices& prices, const GpuSpec& gpu) {
  CardPrices out;
  if (auto it = prices.per_card_hour_USD.find(gpu.id); it != prices.per_card_hour_USD.end())
    out.per_card_hour_USD = it->second;
  out.per_kWh_USD = prices.per_kWh_USD;
  return out;
}

RunTotals run_totals(const PlannedRun& run, Seconds step_seconds, const GpuSpec& gpu, int count,
                     const MigProfile* mig, const CardPrices& prices, Trace* trace) {
  RunTotals t;
  t.steps = run.steps();
  t.time_to_train_hours = t.steps * step_seconds.value / 3600.0;
  const double share = card_share(gpu, mig);
  t.card_hours = count * share * t.time_to_train_hours;
  const double tdp = gpu.tdp_W.value.value_or(0);
  t.energy_kWh = count * share * tdp * t.time_to_train_hours / 1000.0;
  if (prices.per_card_hour_USD)
    t.cost_USD =
        *prices.per_card_hour_USD * t.card_hours + prices.per_kWh_USD.value_or(0) * t.energy_kWh;
  if (!trace) return t;
  const std::string cards = mig ? fmt::format("1 × {} instance ({}/{} compute slices)", mig->name,
                                              mig->compute_slices, gpu.mig.compute_slices)
                                : std::to_string(count);
  trace->add({"plan.steps",
              "optimizer steps to train",
              t.steps,
              "steps",
              "⌈tokens to train / (global batch × sequence length)⌉",
              {{"tokens to train", format_si(run.tokens, "tokens")},
               {"global batch", fmt::format("{} sequences", run.global_batch)},
               {"sequence length", fmt::format("{} tokens", run.workload.seq)}},
              "definition (runs file: tokens, or epochs × dataset_tokens)"});
  trace->add({"plan.time_to_train_hours",
              "time to train",
              t.time_to_train_hours,
              "h",
              "optimizer steps × step time / 3600 s",
              {{"optimizer steps", group_digits(static_cast<std::int64_t>(t.steps))},
               {"step time", format_seconds(step_seconds)}},
              "definition",
              {"plan.steps", count > 1 && !mig ? "scale.step_seconds" : "perf.step_seconds"}});
  trace->add({"plan.card_hours",
              "card-hours",
              t.card_hours,
              "card-h",
              "cards × share of each card × time to train",
              {{"cards", cards},
               {"share of each card", format_number(share, 3)},
               {"time to train", fmt::format("{} h", format_number(t.time_to_train_hours, 3))}},
              "definition (MIG: an instance occupies its compute slices' share of the card)",
              {"plan.time_to_train_hours"}});
  trace->add({"plan.energy_kWh",
              "energy (upper bound)",
              t.energy_kWh,
              "kWh",
              "card-hours × TDP / 1000: every card at its power limit for the whole run",
              {{"card-hours", format_number(t.card_hours, 3)},
               {"TDP", fmt::format("{} W", format_number(tdp))}},
              "GPU data file (tdp_W)",
              {"plan.card_hours"}});
  if (t.cost_USD)
    trace->add({"plan.cost_USD",
                "cost of the run",
                *t.cost_USD,
                "USD",
                "card-hours × price per card-hour + energy × price per kWh",
                {{"card-hours", format_number(t.card_hours, 3)},
                 {"price per card-hour", fmt::format("{} USD", *prices.per_card_hour_USD)},
                 {"energy", fmt::format("{} kWh", format_number(t.energy_kWh, 3))},
                 {"price per kWh", fmt::format("{} USD", prices.per_kWh_USD.value_or(0))}},
                "runs file prices",
                {"plan.card_hours", "plan.energy_kWh"}});
  return t;
}

}  // namespace ftplan
