#include "plan/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/error.hpp"
#include "core/format.hpp"
#include "mig/layout.hpp"
#include "mig/rules.hpp"

namespace ftplan {

std::string_view rank_by_name(RankBy r) {
  switch (r) {
    case RankBy::kCardHours:
      return "card-hours";
    case RankBy::kTime:
      return "time";
    case RankBy::kCost:
      return "cost";
    case RankBy::kEnergy:
      return "energy";
  }
  return "?";
}

RankBy parse_rank_by(std::string_view name) {
  for (RankBy r : {RankBy::kCardHours, RankBy::kTime, RankBy::kCost, RankBy::kEnergy})
    if (rank_by_name(r) == name) return r;
  throw_unknown_name("ranking", "rank_by", name, {"card-hours", "time", "cost", "energy"});
}

namespace {

// The micro-batches tried: powers of two up to the global batch (and 64 sequences per card).
std::vector<std::int64_t> micro_batches(const PlannedRun& run) {
  if (run.micro_batch) return {*run.micro_batch};
  std::vector<std::int64_t> out;
  for (std::int64_t mb = 1; mb <= std::min<std::int64_t>(run.global_batch, 64); mb *= 2)
    out.push_back(mb);
  return out;
}

std::vector<Recompute> recomputes(const PlannedRun& run) {
  if (run.recompute) return {*run.recompute};
  return {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
}

std::vector<Sharding> shardings(const Workload& w, int count) {
  if (count <= 1) return {Sharding::kNone};
  // ZeRO-1 moves what ZeRO-2 moves and keeps more on each card: ZeRO-2 dominates it.
  if (w.method == Method::kFull) return {Sharding::kDdp, Sharding::kZero2, Sharding::kFsdp};
  return {Sharding::kDdp, Sharding::kFsdp};
}

// One (micro-batch, recompute) variant of a run, prepared once for every card that is timed.
struct Variant {
  Workload workload;
  ActivationProfile activations;
  StepOps ops;
  PreparedStep prepared_default;
  std::vector<PreparedStep> prepared_calibrated;  // parallel to PlanningData::calibrations
};

const PreparedStep& prepared_for(const Variant& v, const GpuSpec& gpu, const PlanningData& data) {
  for (std::size_t i = 0; i < data.calibrations.size(); ++i)
    if (data.calibrations[i].card() == gpu.id) return v.prepared_calibrated[i];
  return v.prepared_default;
}

double price_per_card_hour(const RunsFile& f, const GpuSpec& g) {
  auto it = f.prices.per_card_hour_USD.find(g.id);
  return it == f.prices.per_card_hour_USD.end() ? std::nan("") : it->second;
}

// Evaluates one configuration. Allocation-free on the feasible path but for `reason`, which is
// filled only for infeasible options (the caller keeps few of them).
Option evaluate_option(const PlannedRun& run, const Variant& v, const ModelStates& replica,
                       const GpuSpec& gpu, int count, Sharding sharding, const MigProfile* mig,
                       const Topology& topology, const Device& device, const PlanningData& data,
                       const RunsFile& file) {
  Option o;
  o.gpu = &gpu;
  o.count = count;
  o.sharding = sharding;
  o.mig = mig;
  // The preset's name as PlanningData holds it (the Topology itself is short-lived).
  for (const auto& preset : data.comm.presets)
    if (preset.name == topology.preset) o.topology = preset.name;
  o.micro_batch = v.workload.micro_batch;
  o.recompute = v.workload.recompute;
  const std::int64_t per_step = v.workload.micro_batch * count;
  if (run.global_batch % per_step != 0) {
    o.reason = fmt::format(
        "the global batch of {} sequences is not a multiple of micro-batch {} × {} cards",
        run.global_batch, v.workload.micro_batch, count);
    return o;
  }
  o.grad_accum = run.global_batch / per_step;
  Workload w = v.workload;
  w.grad_accum = o.grad_accum;
  Placement p;
  p.gpu = &gpu;
  p.count = count;
  p.sharding = sharding;
  p.mig = mig;
  o.strategy = comm_strategy(w, p);
  const MemoryEstimate m = memory_figures(w, replica, v.activations, p);
  o.verdict = m.verdict;
  o.model_states = m.states.total();
  o.peak = m.peak;
  o.capacity = m.capacity;
  o.free = m.free;
  if (m.verdict != Verdict::kFits) {
    o.reason = memory_reason(m, p);
    return o;
  }
  const double tdp = gpu.tdp_W.value.value_or(0);
  if (file.power_limit_W && tdp * count > *file.power_limit_W) {
    o.reason = fmt::format("{} cards at {} W exceed the power limit of {} W", count, tdp,
                           *file.power_limit_W);
    return o;
  }
  const StepEstimate step = estimate_step(prepared_for(v, gpu, data), device);
  if (!step.feasible) {
    o.reason = step.reason;
    return o;
  }
  const CommPlan comm = plan_communication(w, replica, p, topology, data.comm);
  const ScaleEstimate scale =
      estimate_scaling(comm, compute_times(step, p), w, topology, data.comm);
  o.step_seconds = scale.step_seconds;
  o.exposed_seconds = scale.exposed_per_step;
  o.received_per_card_per_step = comm.received_per_card_per_step;
  o.scaling_efficiency = scale.scaling_efficiency;
  const double tokens_per_step = static_cast<double>(run.global_batch * w.seq);
  o.tokens_per_second = tokens_per_step / o.step_seconds.value;
  o.time_to_train_hours = run.steps() * o.step_seconds.value / 3600.0;
  // A MIG instance occupies its share of the card (compute slices).
  const double share =
      mig ? static_cast<double>(mig->compute_slices) / gpu.mig.compute_slices : 1.0;
  o.card_hours = count * share * o.time_to_train_hours;
  // Energy: the cards drawing their power limit for the whole run (an upper bound: training keeps
  // the tensor cores busy, but not always at the limit).
  o.energy_kWh = count * share * tdp * o.time_to_train_hours / 1000.0;
  const double price = price_per_card_hour(file, gpu);
  if (!std::isnan(price) || file.prices.per_kWh_USD) {
    double cost = std::isnan(price) ? 0 : price * o.card_hours;
    if (file.prices.per_kWh_USD) cost += *file.prices.per_kWh_USD * o.energy_kWh;
    if (!std::isnan(price)) o.cost_USD = cost;
  }
  if (run.deadline_hours && o.time_to_train_hours > *run.deadline_hours) {
    o.reason = fmt::format("takes {:.1f} h, past the deadline of {:.1f} h", o.time_to_train_hours,
                           *run.deadline_hours);
    return o;
  }
  o.feasible = true;
  return o;
}

// Smaller is better.
auto rank_key(const Option& o, RankBy r) {
  const double cost = o.cost_USD.value_or(std::numeric_limits<double>::infinity());
  switch (r) {
    case RankBy::kTime:
      return std::make_tuple(o.time_to_train_hours, static_cast<double>(o.count), o.card_hours);
    case RankBy::kCost:
      return std::make_tuple(cost, o.time_to_train_hours, static_cast<double>(o.count));
    case RankBy::kEnergy:
      return std::make_tuple(o.energy_kWh, o.time_to_train_hours, static_cast<double>(o.count));
    case RankBy::kCardHours:
      break;
  }
  return std::make_tuple(o.card_hours, o.time_to_train_hours, static_cast<double>(o.count));
}

bool better(const Option& a, const Option& b, RankBy r) {
  return rank_key(a, r) < rank_key(b, r);
}

// How far an infeasible option is from fitting (for "the closest miss").
double miss(const Option& o) {
  return o.capacity.value > 0 ? o.peak.value / o.capacity.value : 1e9;
}

std::string recommendation_reason(const RunPlan& rp, RankBy r) {
  const Option& o = *rp.recommendation;
  std::string why;
  switch (r) {
    case RankBy::kCardHours:
      why = "fewest card-hours";
      break;
    case RankBy::kTime:
      why = "shortest time to train";
      break;
    case RankBy::kCost:
      why = "lowest cost";
      break;
    case RankBy::kEnergy:
      why = "least energy";
      break;
  }
  std::string text = fmt::format("{} × {}: {} ({:.1f} card-hours, {:.2f} h to train)", o.count,
                                 o.gpu->name, why, o.card_hours, o.time_to_train_hours);
  if (o.count == 1)
    text += "; it fits one card, so one job per card sidesteps the interconnect";
  else
    text += fmt::format("; {} over {}, scaling efficiency {:.0f} %", comm_strategy_name(o.strategy),
                        o.topology, 100 * o.scaling_efficiency);
  return text;
}

}  // namespace

Plan make_plan(const RunsFile& file, const PlanningData& data, const PlanOptions& options) {
  if (options.rank_by == RankBy::kCost && file.prices.per_card_hour_USD.empty())
    throw UserError(ErrorCode::kInvalidValue,
                    "ranking by cost needs prices: add prices.per_card_hour_USD to the runs file",
                    "rank_by");
  Plan plan;
  plan.rank_by = options.rank_by;
  for (const auto& run : file.runs) {
    RunPlan rp;
    rp.run = &run;
    const std::vector<const GpuSpec*>& gpus = run.gpus.empty() ? file.gpus : run.gpus;
    const ModelStates replica = model_states(run.workload);
    std::vector<Variant> variants;
    for (auto mb : micro_batches(run))
      for (auto rc : recomputes(run)) {
        Variant v;
        v.workload = run.workload;
        v.workload.micro_batch = mb;
        v.workload.recompute = rc;
        v.ops = build_step_ops(v.workload);
        v.activations = activation_profile(v.workload);
        v.prepared_default = prepare_step(v.ops, data.default_efficiency);
        for (const auto& t : data.calibrations)
          v.prepared_calibrated.push_back(prepare_step(v.ops, t));
        variants.push_back(std::move(v));
      }
    std::vector<Option> feasible;
    for (const GpuSpec* gpu : gpus) {
      RunPlan::PerGpu pg;
      pg.gpu = gpu;
      const FormatSupport support = data.formats.check(*gpu, run.workload.precision);
      if (!support.supported) {
        pg.why_not =
            fmt::format("{} is not supported on {}: {}",
                        compute_format_name(run.workload.precision), gpu->name, support.reason);
        rp.per_gpu.push_back(std::move(pg));
        continue;
      }
      const Device device = make_device(*gpu);
      std::optional<Option> closest_miss;
      for (int count : file.counts) {
        std::optional<Topology> topology;
        try {
          topology = build_topology(*gpu, count, count > 1 ? file.topology : "", data.comm);
        } catch (const UserError& e) {
          Option o;
          o.gpu = gpu;
          o.count = count;
          o.reason = e.what();
          rp.rejected.push_back(std::move(o));
          continue;
        }
        std::optional<Option> best_here, miss_here;
        std::vector<Option> best_per_sharding;
        for (Sharding sh : shardings(run.workload, count)) {
          std::optional<Option> best_sharding;
          for (const auto& v : variants) {
            ++rp.evaluations;
            Option o = evaluate_option(run, v, replica, *gpu, count, sh, nullptr, *topology, device,
                                       data, file);
            if (o.feasible) {
              if (!best_sharding || better(o, *best_sharding, RankBy::kTime)) best_sharding = o;
              feasible.push_back(std::move(o));
            } else if (!miss_here || miss(o) < miss(*miss_here)) {
              miss_here = std::move(o);
            }
          }
          if (best_sharding) {
            if (!best_here || better(*best_sharding, *best_here, RankBy::kTime))
              best_here = best_sharding;
            best_per_sharding.push_back(std::move(*best_sharding));
          }
        }
        if (best_here) {
          if (!pg.minimum) {  // counts are tried in increasing order
            pg.minimum = best_here;
            pg.minimum_options = std::move(best_per_sharding);
          }
          if (!pg.fastest || better(*best_here, *pg.fastest, RankBy::kTime)) pg.fastest = best_here;
        } else if (miss_here) {
          if (!closest_miss || miss(*miss_here) < miss(*closest_miss)) closest_miss = miss_here;
          rp.rejected.push_back(std::move(*miss_here));
        }
      }
      if (file.allow_mig && gpu->mig.supported) {
        const Topology single = build_topology(*gpu, 1, "", data.comm);
        for (const auto& profile : gpu->mig.profiles) {
          const Device instance = make_device(*gpu, profile);
          for (const auto& v : variants) {
            ++rp.evaluations;
            Option o = evaluate_option(run, v, replica, *gpu, 1, Sharding::kNone, &profile, single,
                                       instance, data, file);
            if (!o.feasible) continue;
            const bool smaller =
                pg.best_mig && profile.memory_slices < pg.best_mig->mig->memory_slices;
            const bool same =
                pg.best_mig && profile.memory_slices == pg.best_mig->mig->memory_slices;
            if (!pg.best_mig || smaller || (same && better(o, *pg.best_mig, RankBy::kTime)))
              pg.best_mig = o;
          }
        }
      }
      if (!pg.minimum) {
        pg.why_not = closest_miss
                         ? fmt::format("no allowed count fits; closest: {} × {}: {}",
                                       closest_miss->count, gpu->name, closest_miss->reason)
                         : "no allowed count fits";
      }
      rp.per_gpu.push_back(std::move(pg));
    }
    std::sort(feasible.begin(), feasible.end(),
              [&](const Option& a, const Option& b) { return better(a, b, options.rank_by); });
    if (!feasible.empty()) {
      rp.recommendation = feasible.front();
      rp.recommendation_reason = recommendation_reason(rp, options.rank_by);
    } else {
      rp.recommendation_reason = "no candidate card, count and strategy holds this run";
      for (const auto& pg : rp.per_gpu)
        if (!pg.why_not.empty()) rp.recommendation_reason += "; " + pg.why_not;
    }
    // Alternatives: the best option of each (card type, count), in ranking order.
    for (const auto& o : feasible) {
      if (rp.alternatives.size() >= options.alternatives) break;
      bool seen = false;
      for (const auto& a : rp.alternatives)
        seen |= a.gpu == o.gpu && a.count == o.count;
      if (!seen) rp.alternatives.push_back(o);
    }
    plan.evaluations += rp.evaluations;
    plan.runs.push_back(std::move(rp));
  }
  if (!options.fleet) return plan;

  // The fleet: every run at once, per card type.
  const MigRules rules = load_mig_rules(*data.catalog);
  for (const GpuSpec* gpu : file.gpus) {
    FleetEntry f;
    f.gpu = gpu;
    std::vector<PackJob> jobs;
    for (const auto& rp : plan.runs) {
      const RunPlan::PerGpu* pg = nullptr;
      for (const auto& each : rp.per_gpu)
        if (each.gpu == gpu) pg = &each;
      if (!pg || !pg->minimum) {
        f.unplaced.push_back(rp.run->name);
        continue;
      }
      if (pg->minimum->count == 1) {
        Workload w = rp.run->workload;
        w.micro_batch = pg->minimum->micro_batch;
        w.recompute = pg->minimum->recompute;
        jobs.push_back({rp.run->name, w, rp.run->count});
        f.cards_without_mig += rp.run->count;
      } else {
        f.multi_card_runs_cards += pg->minimum->count * rp.run->count;
      }
    }
    if (!jobs.empty() && file.allow_mig && gpu->mig.supported) {
      const PackResult packed = pack(jobs, make_mig_card(*gpu), rules);
      f.mig_cards = packed.total_cards();
    } else {
      f.mig_cards = f.cards_without_mig;
    }
    f.cards_without_mig += f.multi_card_runs_cards;
    f.cards = f.mig_cards + f.multi_card_runs_cards;
    plan.fleet.push_back(std::move(f));
  }
  return plan;
}

}  // namespace ftplan
