#include "plan/planner.hpp"

#include "parallel/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/error.hpp"
#include "core/work_budget.hpp"
#include "plan/fleet.hpp"
#include "workload/objective.hpp"
#include "workload/roles.hpp"

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
  // Layer-wise checkpointing is full recomputation of some blocks.
  if (run.workload.recompute_layers > 0) return {Recompute::kFull};
  return {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
}

const PreparedStep& prepared_for(const PreparedVariant& v, const GpuSpec& gpu,
                                 const PlanningData& data) {
  for (std::size_t i = 0; i < data.calibrations.size(); ++i)
    if (data.calibrations[i].card() == gpu.id) return v.prepared_calibrated[i];
  return v.prepared_default;
}

Placement placement_of(const Candidate& c) {
  Placement p;
  p.gpu = c.card->gpu;
  p.count = c.count;
  p.sharding = c.sharding;
  p.mig = c.card->mig;
  p.layout = c.layout;
  p.shard_group = c.sharding == Sharding::kHsdp ? c.shard_group : 0;
  return p;
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

Reason rank_reason(RankBy r) {
  switch (r) {
    case RankBy::kCardHours:
      break;
    case RankBy::kTime:
      return Reason(ReasonCode::kRankTime);
    case RankBy::kCost:
      return Reason(ReasonCode::kRankCost);
    case RankBy::kEnergy:
      return Reason(ReasonCode::kRankEnergy);
  }
  return Reason(ReasonCode::kRankCardHours);
}

Reason recommendation_reason(const RunPlan& rp, RankBy r) {
  const Option& o = *rp.recommendation;
  Reason text(o.count == 1 ? ReasonCode::kRecommendOneCard : ReasonCode::kRecommendManyCards);
  text.count("count", o.count)
      .name("card", o.gpu->name)
      .nested("rank", rank_reason(r))
      .number("card_hours", o.card_hours, 1)
      .number("hours", o.time_to_train_hours, 2);
  if (o.count > 1)
    text.name("strategy", option_split(o, comm_strategy_name(o.strategy)))
        .name("topology", std::string(o.topology))
        .percent("efficiency", o.scaling_efficiency);
  if (!o.rollout_chosen) return text;
  return Reason(ReasonCode::kRecommendWithRollout)
      .nested("recommendation", std::move(text))
      .count("rollout_count", o.rollout_cards)
      .name("rollout_card", o.rollout_gpu->name)
      .count("tried", o.rollout_choices_tried);
}

Reason close_call_reason(const Option& chosen, const Option& other, RankBy r) {
  const double a = rank_value(chosen, r), b = rank_value(other, r);
  const int decimals = std::max(a, b) >= 100 ? 0 : (std::max(a, b) >= 10 ? 1 : 2);
  return Reason(ReasonCode::kTooCloseToCall)
      .count("count", other.count)
      .name("card", other.gpu->name)
      .nested("rank", rank_reason(r))
      .number("low", a * chosen.range_low, decimals)
      .number("high", a * chosen.range_high, decimals)
      .number("other_low", b * other.range_low, decimals)
      .number("other_high", b * other.range_high, decimals);
}

}  // namespace

std::string option_split(const Option& o, std::string_view strategy) {
  if (o.layout.trivial()) return std::string(strategy);
  const std::string layout = layout_label(o.layout);
  return o.layout.dp(o.count) > 1 ? layout + " · " + std::string(strategy) : layout;
}

double rank_value(const Option& o, RankBy r) {
  return std::get<0>(rank_key(o, r));
}

bool ranges_overlap(const Option& a, const Option& b, RankBy r) {
  const double va = rank_value(a, r), vb = rank_value(b, r);
  if (!std::isfinite(va) || !std::isfinite(vb)) return false;
  return va * a.range_low <= vb * b.range_high && vb * b.range_low <= va * a.range_high;
}

std::vector<Layout> candidate_layouts(const Workload& w, int count, const Topology& t) {
  std::vector<Layout> out;
  if (count < 2) return out;
  const ModelArch& a = w.model->arch;
  const int domain = t.domain_cards > 1 ? t.domain_size() : 1;
  const std::vector<int> cps = w.seq >= 16384 ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1};
  for (int tp = 1; tp <= std::min(domain, 8); tp *= 2)
    for (int pp = 1; pp <= std::min<std::int64_t>(a.layers, 32) && tp * pp <= count; pp *= 2)
      for (int cp : cps)
        for (int ep = 1; ep <= (a.is_moe() ? std::min<std::int64_t>(a.num_experts, 64) : 1);
             ep *= 2)
          // Interleaved 1F1B with two model chunks per stage halves the bubble for more
          // point-to-point traffic (Narayanan et al. 2021 §2.2).
          for (int vpp = 1; vpp <= (pp > 1 ? 2 : 1); ++vpp) {
            Layout l;
            l.tp = tp;
            l.pp = pp;
            l.vpp = vpp;
            l.cp = cp;
            l.ep = ep;
            if (l.trivial() || count % l.model_parallel() != 0) continue;
            Placement p;
            p.count = count;
            p.layout = l;
            try {
              check_layout(w, p);
              check_layout_topology(l, t);
            } catch (const UserError&) {
              continue;  // does not divide the model, the cards or the node
            }
            out.push_back(l);
          }
  return out;
}

std::vector<Sharding> candidate_shardings(const Workload& w, const Topology& t) {
  if (t.cards <= 1) return {Sharding::kNone};
  std::vector<Sharding> out{Sharding::kDdp};
  // ZeRO-1 moves what ZeRO-2 moves and keeps more on each card: ZeRO-2 dominates it.
  if (method_traits(w.method).trains_base) out.push_back(Sharding::kZero2);
  out.push_back(Sharding::kFsdp);
  // Across nodes: shard within each node, replicate across (the gathers stay on the node's links).
  if (t.nodes() > 1) out.push_back(Sharding::kHsdp);
  return out;
}

Workload planned_workload(const PlannedRun& run, const PlanningData& data) {
  Workload w = run.workload;
  if (!w.overheads) w.overheads = &data.overheads;
  if (!w.stack) w.stack = &data.stacks.fallback();
  return w;
}

PreparedRun prepare_run(const PlannedRun& run, const PlanningData& data) {
  PreparedRun out;
  out.run = &run;
  out.replica = model_states(run.workload);
  for (auto mb : micro_batches(run))
    for (auto rc : recomputes(run)) {
      PreparedVariant v;
      v.workload = run.with_recompute(planned_workload(run, data), rc);
      v.workload.micro_batch = mb;
      v.ops = build_step_ops(v.workload);
      v.activations = activation_profile(v.workload);
      v.prepared_default = prepare_step(v.ops, data.default_efficiency);
      for (const auto& t : data.calibrations)
        v.prepared_calibrated.push_back(prepare_step(v.ops, t));
      out.variants.push_back(std::move(v));
    }
  return out;
}

PreparedCard prepare_card(const PreparedRun& run, const GpuSpec& gpu, const MigProfile* mig,
                          const PlanningData& data, const RunsFile& file) {
  PreparedCard out;
  out.gpu = &gpu;
  out.mig = mig;
  out.device = apply_power_limit(mig ? make_device(gpu, *mig) : make_device(gpu),
                                 file.card_power_limit_W, data.power, "card_power_limit_W");
  out.steps.reserve(run.variants.size());
  for (const auto& v : run.variants)
    out.steps.push_back(estimate_step(prepared_for(v, gpu, data), out.device));
  out.prices = prices_for(file.prices, gpu);
  return out;
}

std::string_view topology_name(const Topology& t, const PlanningData& data) {
  for (const auto& preset : data.comm.presets)
    if (preset.name == t.preset) return preset.name;
  return {};
}

// The time figures of a feasible memory and step: throughput, time to train, card-hours, energy,
// cost, the deadline.
void finish_option(Option& o, const PlannedRun& run, const Candidate& c, const ScaleEstimate& scale,
                   Bytes received_per_card_per_step, const StepEstimate& step, const Workload& w,
                   const RlStep* rl, const RunsFile& file) {
  o.step_seconds = scale.step_seconds;
  o.exposed_seconds = scale.exposed_per_step;
  o.received_per_card_per_step = received_per_card_per_step;
  o.scaling_efficiency = scale.scaling_efficiency;
  // Real tokens: padding is not counted.
  const double tokens_per_step = static_cast<double>(run.global_batch) * w.tokens_per_example();
  o.tokens_per_second = tokens_per_step / o.step_seconds.value;
  const RunTotals totals =
      run_totals(run, o.step_seconds, *c.card->gpu, c.count, c.card->mig, c.card->prices);
  o.time_to_train_hours = totals.time_to_train_hours;
  if (step.step.value > 0) {
    o.range_low = step.step_low / step.step;
    o.range_high = step.step_high / step.step;
  }
  o.card_hours = totals.card_hours;
  o.energy_kWh = totals.energy_kWh;
  o.cost_USD = totals.cost_USD;
  // Cards that only generate (a separate rollout) are rented and powered for the run too.
  if (rl && rl->mode == RolloutMode::kSeparate && rl->rollout_gpu && rl->rollout_cards > 0) {
    const RunTotals rollout = run_totals(run, o.step_seconds, *rl->rollout_gpu, rl->rollout_cards,
                                         nullptr, prices_for(file.prices, *rl->rollout_gpu));
    o.card_hours += rollout.card_hours;
    o.energy_kWh += rollout.energy_kWh;
    if (o.cost_USD && rollout.cost_USD)
      *o.cost_USD += *rollout.cost_USD;
    else
      o.cost_USD.reset();  // a card without a price: the run's cost is unknown
  }
  if (run.deadline_hours && o.time_to_train_hours > *run.deadline_hours) {
    o.failed = Constraint::kDeadline;
    return;
  }
  o.feasible = true;
}

// Memory per card and the power limit: fills `o`'s memory figures; false (with the constraint
// that failed) unless the run fits and its cards stay within the file's power limit.
bool memory_and_power_ok(Option& o, const MemoryEstimate& m, const RunsFile& file) {
  o.verdict = m.verdict;
  o.model_states = m.states.total();
  o.peak = m.peak;
  o.capacity = m.capacity;
  o.free = m.free;
  if (m.verdict != Verdict::kFits) {
    o.failed = Constraint::kMemory;
    return false;
  }
  const double tdp = o.gpu->tdp_W.value.value_or(0);
  if (file.power_limit_W && tdp * o.count > *file.power_limit_W) {
    o.failed = Constraint::kPowerLimit;
    return false;
  }
  return true;
}

Option evaluate_option(const PreparedRun& prepared, std::size_t variant, const Candidate& c,
                       const PlanningData& data, const RunsFile& file) {
  const PlannedRun& run = *prepared.run;
  const PreparedVariant& v = prepared.variants[variant];
  // A model-parallel layout or an online run is evaluated whole (evaluate_placement charges it).
  const bool whole = !c.layout.trivial() || is_online(v.workload);
  if (!whole) charge_evaluation();
  const GpuSpec& gpu = *c.card->gpu;
  Option o;
  o.gpu = &gpu;
  o.count = c.count;
  o.sharding = c.sharding;
  o.shard_group = c.sharding == Sharding::kHsdp ? c.shard_group : 0;
  o.mig = c.card->mig;
  o.topology = c.topology_name;
  o.nodes = c.topology->nodes();
  o.cards_per_node = c.topology->node_cards();
  o.micro_batch = v.workload.micro_batch;
  o.recompute = v.workload.recompute;
  o.layout = c.layout;
  const std::int64_t per_step = v.workload.micro_batch * std::max(1, c.layout.dp(c.count));
  if (run.global_batch % per_step != 0) {
    o.failed = Constraint::kGlobalBatch;
    return o;
  }
  o.grad_accum = run.global_batch / per_step;
  Workload w = v.workload;
  w.grad_accum = o.grad_accum;
  for (const auto& choice : w.rollout.choices)
    if (choice.gpu == &gpu) w.rollout.training_weight = choice.weight;
  Placement p = placement_of(c);
  if (whole) {
    // The whole evaluation for this placement: a layout's stage ops, groups' traffic and bubble;
    // an online run's rollouts, weight sync and scoring.
    if (c.layout.vpp > 1 && w.grad_accum % c.layout.pp != 0) {
      o.failed = Constraint::kGlobalBatch;
      return o;
    }
    p.power_limit_W = file.card_power_limit_W;
    // Memory first: only a placement that fits is timed.
    std::optional<LayoutStates> own;
    const LayoutStates* states = c.layout_states;
    if (!c.layout.trivial() && !states) {
      own = layout_states(w, trained_set(w), c.layout);
      states = &*own;
    }
    MemoryEstimate memory = memory_figures(w, prepared.replica, v.activations, p, states);
    if (!memory_and_power_ok(o, memory, file)) {
      charge_evaluation();
      // The data-parallel group's strategy, as the evaluation names it.
      o.strategy = comm_strategy(w, data_parallel_group(p));
      return o;
    }
    memory.reason = memory_reason(memory, p);
    // (evaluate_placement charges the evaluation to the work budget.)
    const ScaleResult r =
        evaluate_placement(w, prepared.replica, v.ops, p, *c.topology, data, std::move(memory),
                           states, StageCaches{&prepared.stage_ops, &c.card->stage_steps});
    o.strategy = r.comm.strategy;
    if (r.rl.online && r.rl.mode == RolloutMode::kSeparate) {
      o.rollout_gpu = r.rl.rollout_gpu;
      o.rollout_cards = r.rl.rollout_cards;
      o.rollout_chosen = r.rl.chosen;
      o.rollout_choices_tried = r.rl.choices_tried;
    }
    if (!r.step.feasible) {
      o.failed = Constraint::kStepTime;
      if (r.rl.online) o.reason = r.step.reason;  // the rollout's, which no card step carries
      return o;
    }
    const LayoutTraffic& x = r.layout;
    const Bytes exchanged = (x.tp.received + x.cp.received + x.ep.received + x.pp.received) *
                            static_cast<double>(w.grad_accum);
    finish_option(o, run, c, r.scale, r.comm.received_per_card_per_step + exchanged, r.step, w,
                  r.rl.online ? &r.rl : nullptr, file);
    if (r.rl.online) o.rl = std::make_shared<const RlStep>(r.rl);
    return o;
  }
  o.strategy = comm_strategy(w, p);
  if (!memory_and_power_ok(o, memory_figures(w, prepared.replica, v.activations, p), file))
    return o;
  const StepEstimate& step = c.card->steps[variant];
  if (!step.feasible) {
    o.failed = Constraint::kStepTime;
    return o;
  }
  const CommPlan comm = plan_communication(w, prepared.replica, p, *c.topology, data.comm);
  const Bytes saved = w.options.offload_activations
                          ? v.activations.saved_all.at(w.seq, w.sequences_per_micro_batch())
                          : Bytes();
  const OffloadTime offload = offload_time(w, prepared.replica, p, saved, data.comm);
  const ScaleEstimate scale =
      estimate_scaling(comm, compute_times(step, p, offload), w, *c.topology, data.comm);
  finish_option(o, run, c, scale, comm.received_per_card_per_step, step, w, nullptr, file);
  return o;
}

Reason option_reason(const Option& o, const PreparedRun& prepared, const Candidate& c,
                     const RunsFile& file) {
  const PlannedRun& run = *prepared.run;
  switch (o.failed) {
    case Constraint::kNone:
      return {};
    case Constraint::kGlobalBatch:
      return Reason(ReasonCode::kGlobalBatch)
          .count("global_batch", run.global_batch)
          .count("micro_batch", o.micro_batch)
          .count("cards", o.count);
    case Constraint::kMemory: {
      MemoryEstimate m;
      m.peak = o.peak;
      m.capacity = o.capacity;
      m.headroom = o.capacity - o.peak;
      m.verdict = o.verdict;
      return memory_reason(m, placement_of(c));
    }
    case Constraint::kPowerLimit:
      return Reason(ReasonCode::kPowerLimit)
          .count("cards", o.count)
          .number("tdp", o.gpu->tdp_W.value.value_or(0))
          .number("limit", file.power_limit_W.value_or(0));
    case Constraint::kStepTime:
      if (!o.reason.empty()) return o.reason;  // set where the option was evaluated
      for (std::size_t i = 0; i < prepared.variants.size(); ++i) {
        const Workload& w = prepared.variants[i].workload;
        if (w.micro_batch == o.micro_batch && w.recompute == o.recompute)
          return c.card->steps[i].reason;
      }
      return Reason(ReasonCode::kStepUnknown);
    case Constraint::kDeadline:
      return Reason(ReasonCode::kDeadline)
          .number("hours", o.time_to_train_hours, 1)
          .number("deadline", run.deadline_hours.value_or(0), 1);
  }
  return {};
}

namespace {

// What one card-hour of `gpu` adds to the ranked figure (rank_value): 1 for card-hours, its
// energy for energy, its rental and energy for cost (none without a price), 0 for time.
std::optional<double> card_hour_weight(const GpuSpec& gpu, RankBy rank, const PlannedRun& run,
                                       const RunsFile& file) {
  if (rank == RankBy::kTime) return 0.0;
  // One card for one hour, through the one home of the totals' formulas.
  const RunTotals one = run_totals(run, Seconds(3600.0 / std::max(1.0, run.steps())), gpu, 1,
                                   nullptr, prices_for(file.prices, gpu));
  switch (rank) {
    case RankBy::kCardHours:
      return one.card_hours;
    case RankBy::kEnergy:
      return one.energy_kWh;
    case RankBy::kCost:
      return one.cost_USD;
    case RankBy::kTime:
      break;
  }
  return 0.0;
}

// `rollout_gpu: auto`: the run's candidate cards become the rollout's choices (RolloutSettings),
// each weighted by the ranking; under cost, cards without a price are left out (all of them,
// when none has one: then they are weighted by card-hours).
void offer_rollout_cards(PreparedRun& prepared, const std::vector<const GpuSpec*>& gpus,
                         RankBy rank, const RunsFile& file) {
  std::vector<RolloutSettings::Choice> choices;
  for (const GpuSpec* gpu : gpus)
    if (const auto weight = card_hour_weight(*gpu, rank, *prepared.run, file))
      choices.push_back({gpu, *weight});
  if (choices.empty())
    for (const GpuSpec* gpu : gpus)
      choices.push_back({gpu, *card_hour_weight(*gpu, RankBy::kCardHours, *prepared.run, file)});
  for (auto& v : prepared.variants)
    v.workload.rollout.choices = choices;
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
    check_work_time();
    PreparedRun prepared = prepare_run(run, data);
    if (run.workload.rollout.choose_gpu) offer_rollout_cards(prepared, gpus, options.rank_by, file);
    std::optional<TrainedSet> run_set;  // the run's trained tensors, once a layout needs them
    const std::size_t variants = prepared.variants.size();
    std::vector<Option> feasible;
    for (const GpuSpec* gpu : gpus) {
      RunPlan::PerGpu pg;
      pg.gpu = gpu;
      const FormatSupport support = data.formats.check(*gpu, run.workload.precision);
      if (!support.supported) {
        pg.why_not = Reason(ReasonCode::kFormatNotOnCard)
                         .name("format", std::string(compute_format_name(run.workload.precision)))
                         .name("card", gpu->name)
                         .quote("why", support.reason);
        rp.per_gpu.push_back(std::move(pg));
        continue;
      }
      check_work_time();
      const PreparedCard card = prepare_card(prepared, *gpu, nullptr, data, file);
      std::optional<Option> closest_miss;
      for (int count : file.counts) {
        std::optional<Topology> topology;
        try {
          topology = build_topology(*gpu, count, count > 1 ? file.topology : "", data.comm, 0, 0,
                                    file.p2p);
        } catch (const UserError& e) {
          Option o;
          o.gpu = gpu;
          o.count = count;
          o.reason = Reason(ReasonCode::kTopologyRejected).quote("why", e.what());
          rp.rejected.push_back(std::move(o));
          continue;
        }
        Candidate c{&card, count, Sharding::kNone, &*topology, topology_name(*topology, data), {}};
        std::optional<Option> best_here, miss_here;
        std::vector<Option> best_per_sharding;
        // Data parallel under each sharding, then each model-parallel layout with its own.
        std::vector<std::pair<Sharding, Layout>> layouts;
        if (run.layout && !run.layout->trivial()) {
          // The file's own layout, on the counts it divides.
          if (count % run.layout->model_parallel() == 0)
            layouts.push_back({layout_sharding(run.workload), *run.layout});
        } else {
          for (Sharding sh : candidate_shardings(run.workload, *topology))
            layouts.push_back({sh, Layout{}});
          c.shard_group = default_shard_group(count, topology->cards_per_node);
        }
        // Model parallelism where data parallelism has to shard anyway: one replica's states
        // exceed the card (practitioners keep smaller runs data parallel).
        if (!run.layout && prepared.replica.total() > gpu->capacity())
          for (const Layout& l : candidate_layouts(run.workload, count, *topology))
            layouts.push_back({layout_sharding(run.workload), l});
        for (const auto& [sh, layout] : layouts) {
          c.sharding = sh;
          c.layout = layout;
          // A layout's stage states, once for all its variants.
          std::optional<LayoutStates> states;
          if (!layout.trivial()) {
            if (!run_set) run_set = trained_set(run.workload);
            states = layout_states(run.workload, *run_set, layout);
          }
          c.layout_states = states ? &*states : nullptr;
          std::optional<Option> best_sharding;
          for (std::size_t v = 0; v < variants; ++v) {
            ++rp.evaluations;
            Option o = evaluate_option(prepared, v, c, data, file);
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
          c.sharding = miss_here->sharding;
          c.layout = miss_here->layout;
          c.layout_states = nullptr;
          miss_here->reason = option_reason(*miss_here, prepared, c, file);
          if (!closest_miss || miss(*miss_here) < miss(*closest_miss)) closest_miss = miss_here;
          rp.rejected.push_back(std::move(*miss_here));
        }
      }
      if (file.allow_mig && gpu->mig.supported) {
        const Topology single = build_topology(*gpu, 1, "", data.comm);
        for (const auto& profile : gpu->mig.profiles) {
          const PreparedCard instance = prepare_card(prepared, *gpu, &profile, data, file);
          const Candidate c{&instance, 1, Sharding::kNone, &single, topology_name(single, data),
                            {}};
          for (std::size_t v = 0; v < variants; ++v) {
            ++rp.evaluations;
            Option o = evaluate_option(prepared, v, c, data, file);
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
        pg.why_not = closest_miss ? Reason(ReasonCode::kNoCountFitsClosest)
                                        .count("count", closest_miss->count)
                                        .name("card", gpu->name)
                                        .nested("reason", closest_miss->reason)
                                  : Reason(ReasonCode::kNoCountFits);
      }
      rp.per_gpu.push_back(std::move(pg));
    }
    std::stable_sort(feasible.begin(), feasible.end(), [&](const Option& a, const Option& b) {
      return better(a, b, options.rank_by);
    });
    if (!feasible.empty()) {
      rp.recommendation = feasible.front();
      rp.recommendation_reason = recommendation_reason(rp, options.rank_by);
    } else {
      std::vector<Reason> why;
      for (const auto& pg : rp.per_gpu)
        if (!pg.why_not.empty()) why.push_back(pg.why_not);
      rp.recommendation_reason =
          why.empty() ? Reason(ReasonCode::kNoCandidate)
                      : Reason(ReasonCode::kNoCandidateBecause).list("why", std::move(why));
    }
    // Alternatives: the best option of each (card type, count), in ranking order.
    for (const auto& o : feasible) {
      if (rp.alternatives.size() >= options.alternatives) break;
      bool seen = false;
      for (const auto& a : rp.alternatives)
        seen |= a.gpu == o.gpu && a.count == o.count;
      if (!seen) rp.alternatives.push_back(o);
    }
    // Options on cards of one architecture share the step model's error (the fit's scatter is
    // that of the stack and architecture), so their order stands; another architecture's range is
    // independent: overlapping ranges mean the model cannot tell which card is better.
    for (const Option& other : feasible) {
      if (other.gpu->architecture == feasible.front().gpu->architecture) continue;
      if (ranges_overlap(feasible.front(), other, options.rank_by)) {
        rp.close_call = other;
        rp.close_call_reason = close_call_reason(feasible.front(), other, options.rank_by);
      }
      break;
    }
    plan.evaluations += rp.evaluations;
    plan.runs.push_back(std::move(rp));
  }
  if (!options.fleet) return plan;
  plan.fleet = plan_fleet(plan.runs, file, data);
  return plan;
}

}  // namespace ftplan
