#include "plan/evaluate.hpp"

#include <algorithm>
#include <optional>

#include "core/format.hpp"
#include "core/work_budget.hpp"
#include "memory/activations.hpp"
#include "workload/objective.hpp"

namespace ftplan {

PlanningData PlanningData::load(const Catalog& catalog, std::vector<EfficiencyTable> calibrations,
                                std::vector<LinkCalibration> links) {
  PlanningData d;
  d.catalog = &catalog;
  d.comm = load_comm_constants(catalog);
  d.comm.link_calibrations = std::move(links);
  d.overheads = load_runtime_overheads(catalog);
  d.formats = load_training_formats(catalog);
  d.power = load_power_scaling(catalog);
  d.stacks = load_stacks(catalog);
  const EfficiencyTable defaults = ftplan::default_efficiency(catalog);
  d.default_efficiency = defaults;
  for (auto& t : calibrations) {
    inherit_host_and_fit(t, defaults);
    if (t.is_calibration())
      d.calibrations.push_back(std::move(t));
    else
      d.default_efficiency = std::move(t);
  }
  return d;
}

const EfficiencyTable& PlanningData::efficiency(const GpuSpec& gpu) const {
  for (const auto& t : calibrations)
    if (t.card() == gpu.id) return t;
  return default_efficiency;
}

ComputeTimes compute_times(const StepEstimate& step, const Placement& placement,
                           const OffloadTime& offload) {
  const Placement p = sharding_view(placement);  // hybrid: the optimizer over one shard group
  // The framework's fixed time per micro-batch runs beside the forward pass (collectives of the
  // backward pass cannot hide behind it).
  ComputeTimes c{step.forward + (step.micro_batch - step.forward - step.backward), step.backward,
                 step.optimizer};
  const bool sharded_optimizer = p.sharding == Sharding::kZero1 || p.sharding == Sharding::kZero2 ||
                                 p.sharding == Sharding::kFsdp;
  if (sharded_optimizer && p.count > 1) c.optimizer = c.optimizer / static_cast<double>(p.count);
  if (offload.any) {
    c.forward = std::max(c.forward, offload.forward_copies);
    c.backward = std::max(c.backward, offload.backward_copies);
    if (offload.update_on_host) c.optimizer = offload.update + offload.step_copies;
  }
  return c;
}

namespace {

// An online objective's step: the rollout and the weight sync before the training evaluated so
// far, its scoring passes split out (plan/rl_step); the step time and the throughput then count
// them all.
void add_rollouts(const Workload& w, ScaleResult& r, const PlanningData& data, Trace* trace) {
  if (!is_online(w) || !r.step.feasible) return;
  r.rl = rl_step(w, r, data);
  if (trace) trace_rl_step(w, r.rl, *trace);
  if (!r.rl.feasible) {
    r.step.feasible = false;
    r.step.reason = r.rl.reason;
    return;
  }
  if (r.scale.step_seconds.value > 0 && r.rl.total.value > 0)
    r.tokens_per_second *= r.scale.step_seconds / r.rl.total;
  r.scale.step_seconds = r.rl.total;
}

// What `cache` holds for `key` (null: nothing, or no cache).
template <class Value>
const Value* cached(const std::map<StageKey, Value>* cache, const StageKey& key) {
  if (!cache) return nullptr;
  const auto it = cache->find(key);
  return it == cache->end() ? nullptr : &it->second;
}

// A model-parallel layout: each edge stage's card computes its share of the micro-batch and
// exchanges activations with its tensor-, context-, expert-parallel and pipeline neighbours; the
// slower stage sets the pace, the bubble adds (pp − 1)/vpp of its micro-batch time, and the
// data-parallel group reduces the gradients of what its cards hold.

void evaluate_layout(const Workload& w, const ModelStates& replica, const StepOps& ops,
                     const Device& device, const EfficiencyTable& efficiency,
                     const PlanningData& data, ScaleResult& r, Trace* trace,
                     const LayoutStates* known, const StageCaches& caches) {
  const Placement& p = r.placement;
  const Layout& l = p.layout;
  const ModelArch& a = w.model->arch;
  check_layout_topology(l, r.topology);
  std::optional<LayoutStates> own;
  if (!known) own = layout_states(w, trained_set(w), l);
  const LayoutStates& states = known ? *known : *own;
  const EdgeStages& edges = states.stages;
  const Placement group = data_parallel_group(p);
  const Topology dp_topology = group_topology(r.topology, group.count, l.tp);
  const double m = static_cast<double>(w.grad_accum);
  Seconds slowest;
  ModelStates held;
  StepOps timed;  // the slower stage's card's ops (for the trace)
  for (int i = 0; i < edges.count(); ++i) {
    const Stage& st = edges[i];
    const ModelStates stage = states.states[static_cast<std::size_t>(i)].total();
    // The stage's step on this card type and its ops (the same on every card type), as timed or
    // built before; with a trace the ops are timed again, to record how.
    const StageKey key(&ops, l, st.index);
    const StepEstimate* timed_before = trace ? nullptr : cached(caches.steps, key);
    const StepOps* stage_ops = cached(caches.ops, key);
    CardWork built;
    StepEstimate step;
    if (timed_before) {
      step = *timed_before;
    } else {
      if (!stage_ops) {
        built = card_work(stage, replica, ops, a, l, st);
        stage_ops =
            caches.ops ? &caches.ops->emplace(key, std::move(built.ops)).first->second : &built.ops;
      }
      step = estimate_step(*stage_ops, device, efficiency);
      if (caches.steps) caches.steps->emplace(key, step);
    }
    if (!step.feasible) {
      r.step = step;
      return;
    }
    const LayoutTraffic traffic = layout_traffic(w, l, st, r.topology, data.comm);
    // Ring attention hides behind the attention core it feeds.
    const Seconds attention = step.of(OpClass::kAttention) / m;
    const Seconds cp_exposed =
        traffic.cp.seconds > attention ? traffic.cp.seconds - attention : Seconds(0);
    const Seconds exchanges =
        traffic.tp.seconds + traffic.ep.seconds + traffic.pp.seconds + cp_exposed;
    const Seconds per_micro_batch = step.micro_batch + exchanges;
    if (i == 0 || per_micro_batch > slowest) {
      slowest = per_micro_batch;
      r.step = step;
      r.layout = traffic;
      r.stage = st.index;
      r.layout_exposed_per_step = exchanges * m;
      held = stage;
      if (trace) timed = *stage_ops;  // (timed above: with a trace no kept step is used)
    }
  }
  if (trace) trace_step(timed, device, efficiency, r.step, *trace);
  r.comm = plan_communication(w, held, group, dp_topology, data.comm, trace);
  r.offload = offload_time(w, held, group, Bytes(), data.comm);
  r.scale = estimate_scaling(r.comm, compute_times(r.step, group, r.offload), w, dp_topology,
                             data.comm, trace);
  r.bubble_per_step = slowest * (pipeline_bubble_fraction(l, w.grad_accum) * m);
  r.scale.comm_per_step +=
      (r.layout.tp.seconds + r.layout.cp.seconds + r.layout.ep.seconds + r.layout.pp.seconds) * m;
  r.scale.exposed_per_step += r.layout_exposed_per_step;
  r.scale.step_seconds = r.scale.compute_per_step + r.bubble_per_step + r.scale.exposed_per_step;
  r.scale.scaling_efficiency =
      r.scale.step_seconds.value > 0 ? r.scale.compute_per_step / r.scale.step_seconds : 1.0;
  // Throughput and MFU over the whole model: every replica's tokens, each card's share of the
  // model FLOPs.
  const double replicas = l.dp(p.count);
  const double tokens = static_cast<double>(ops.tokens_per_micro_batch) * m;
  r.tokens_per_second =
      r.scale.step_seconds.value > 0 ? replicas * tokens / r.scale.step_seconds.value : 0;
  const double card_flops =
      ops.model_flops_per_micro_batch().value * m / static_cast<double>(l.model_parallel());
  r.step.model_flops = Flops(card_flops);
  r.step.tokens = static_cast<std::int64_t>(tokens);
  r.step.mfu = r.scale.step_seconds.value > 0 && r.step.peak.value > 0
                   ? card_flops / (r.scale.step_seconds.value * r.step.peak.value)
                   : 0;
}

// evaluate_placement with the memory per card known; `known` and `caches` as evaluate_layout's.
ScaleResult evaluate_with_memory(const Workload& w, const ModelStates& replica, const StepOps& ops,
                                 const Placement& p, const Topology& t, const PlanningData& data,
                                 MemoryEstimate memory, Trace* trace, const LayoutStates* known,
                                 const StageCaches& caches) {
  charge_evaluation();
  ScaleResult r;
  r.placement = p;
  r.topology = t;
  r.memory = std::move(memory);
  const FormatSupport support = data.formats.check(*p.gpu, w.precision);
  if (!support.supported) {
    r.step.feasible = false;
    r.step.reason = Reason(ReasonCode::kFormatUnsupported).quote("why", support.reason);
    return r;
  }
  const Device device = apply_power_limit(make_device(p), p.power_limit_W, data.power);
  const EfficiencyTable& efficiency = data.efficiency(*p.gpu);
  if (!p.layout.trivial()) {
    evaluate_layout(w, replica, ops, device, efficiency, data, r, trace, known, caches);
    add_rollouts(w, r, data, trace);
    return r;
  }
  r.step = estimate_step(ops, device, efficiency);
  if (!r.step.feasible) return r;
  if (trace) trace_step(ops, device, efficiency, r.step, *trace);
  r.comm = plan_communication(w, replica, p, r.topology, data.comm, trace);
  const Bytes saved = w.options.offload_activations ? activation_profile(w).placed(p).saved_all.at(
                                                          w.seq, w.sequences_per_micro_batch())
                                                    : Bytes();
  r.offload = offload_time(w, replica, p, saved, data.comm);
  r.scale = estimate_scaling(r.comm, compute_times(r.step, p, r.offload), w, r.topology, data.comm,
                             trace);
  const double cards = p.mig ? 1.0 : static_cast<double>(p.count);
  r.tokens_per_second =
      r.scale.step_seconds.value > 0
          ? cards * static_cast<double>(r.step.tokens) / r.scale.step_seconds.value
          : 0;
  if (trace && r.comm.strategy != CommStrategy::kSingleCard)
    trace->add({"scale.tokens_per_second",
                "training throughput of the cards together",
                r.tokens_per_second,
                "tokens/s",
                "cards × tokens per card and step / step time",
                {{"cards", format_number(cards)},
                 {"tokens per card and step", group_digits(r.step.tokens)},
                 {"step time", format_seconds(r.scale.step_seconds)}},
                "definition",
                {"scale.step_seconds"}});
  add_rollouts(w, r, data, trace);
  return r;
}

}  // namespace

ScaleResult evaluate_placement(const Workload& w, const ModelStates& replica, const StepOps& ops,
                               const Placement& p, const Topology& t, const PlanningData& data,
                               Trace* trace) {
  return evaluate_with_memory(w, replica, ops, p, t, data, estimate_memory(w, replica, p, trace),
                              trace, nullptr, StageCaches{});
}

ScaleResult evaluate_placement(const Workload& w, const ModelStates& replica, const StepOps& ops,
                               const Placement& p, const Topology& t, const PlanningData& data,
                               MemoryEstimate memory, const LayoutStates* states,
                               const StageCaches& caches) {
  return evaluate_with_memory(w, replica, ops, p, t, data, std::move(memory), nullptr, states,
                              caches);
}

}  // namespace ftplan
