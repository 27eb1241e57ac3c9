#include "plan/evaluate.hpp"

#include <algorithm>

#include "core/format.hpp"
#include "core/work_budget.hpp"
#include "memory/activations.hpp"

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

ComputeTimes compute_times(const StepEstimate& step, const Placement& p,
                           const OffloadTime& offload) {
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

ScaleResult evaluate_placement(const Workload& w, const ModelStates& replica, const StepOps& ops,
                               const Placement& p, const Topology& t, const PlanningData& data,
                               Trace* trace) {
  charge_evaluation();
  ScaleResult r;
  r.placement = p;
  r.topology = t;
  r.memory = estimate_memory(w, replica, p, trace);
  const FormatSupport support = data.formats.check(*p.gpu, w.precision);
  if (!support.supported) {
    r.step.feasible = false;
    r.step.reason = Reason(ReasonCode::kFormatUnsupported).quote("why", support.reason);
    return r;
  }
  const Device device = apply_power_limit(make_device(p), p.power_limit_W, data.power);
  const EfficiencyTable& efficiency = data.efficiency(*p.gpu);
  r.step = estimate_step(ops, device, efficiency);
  if (!r.step.feasible) return r;
  if (trace) trace_step(ops, device, efficiency, r.step, *trace);
  r.comm = plan_communication(w, replica, p, r.topology, data.comm, trace);
  const Bytes saved = w.options.offload_activations
                          ? activation_profile(w).saved_all.at(w.seq, w.micro_batch)
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
  return r;
}

}  // namespace ftplan
