#include "render/report_model.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "memory/model_states.hpp"
#include "workload/roles.hpp"

namespace ftplan {

namespace {

// The run as the report evaluates it on `count` cards: its micro-batch (1 unless the file fixes
// it), its recomputation (full unless fixed) and gradient accumulation up to the global batch, as
// the planner sets it (plan/planner.cpp). Zero accumulation: the global batch does not divide.
Workload at_count(const PlannedRun& run, int count) {
  Workload w = run.workload;
  const std::int64_t per_step = w.micro_batch * count;
  w.grad_accum = run.global_batch % per_step == 0 ? run.global_batch / per_step : 0;
  return w;
}

Placement placement(const GpuSpec& gpu, int count, Sharding sharding) {
  Placement p;
  p.gpu = &gpu;
  p.count = count;
  p.sharding = count > 1 ? sharding : Sharding::kNone;
  return p;
}

const RunPlan::PerGpu* per_gpu(const RunPlan& rp, const GpuSpec* gpu) {
  for (const auto& pg : rp.per_gpu)
    if (pg.gpu == gpu) return &pg;
  return nullptr;
}

std::vector<ReportMemoryRow> memory_rows(const RunsFile& runs, const Plan& plan,
                                         const std::vector<const GpuSpec*>& cards) {
  std::vector<ReportMemoryRow> rows;
  for (std::size_t i = 0; i < runs.runs.size(); ++i) {
    const PlannedRun& run = runs.runs[i];
    ReportMemoryRow row;
    row.run = &run;
    row.workload = at_count(run, 1);
    row.params = row.workload.model->params.total;
    row.trained = trainable_params(row.workload).count;
    const ModelStates replica = model_states(row.workload);
    for (const GpuSpec* gpu : cards) {
      const Placement p = placement(*gpu, 1, Sharding::kNone);
      row.one_card.push_back({gpu, 1, Sharding::kNone, estimate_memory(row.workload, replica, p)});
      if (row.one_card.back().memory.verdict == Verdict::kFits) continue;
      const RunPlan::PerGpu* pg = per_gpu(plan.runs[i], gpu);
      if (!pg || !pg->minimum || pg->minimum->count <= 1) continue;
      const int n = pg->minimum->count;
      Workload w = at_count(run, n);
      if (w.grad_accum == 0) w.grad_accum = 1;
      row.sharded.push_back({gpu, n, Sharding::kFsdp,
                             estimate_memory(w, replica, placement(*gpu, n, Sharding::kFsdp))});
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// The op of the example run the seed discusses: by name where the model has it (Llama-style
// blocks), else the forward op of the class with the most FLOPs.
std::optional<std::size_t> find_op(const StepOps& ops, std::string_view name, OpClass cls) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < ops.ops.size(); ++i) {
    const Op& op = ops.ops[i];
    if (op.name == name) return i;
    if (op.op_class != cls || op.phase != Phase::kForward) continue;
    if (!best || op.flops > ops.ops[*best].flops) best = i;
  }
  return best;
}

ReportGemm roofline_gemm(std::string name, std::optional<std::size_t> reference,
                         const GemmShape& shape, TensorPrecision precision, double intensity,
                         const std::vector<Device>& devices, const PlanningData& data) {
  ReportGemm g;
  g.op_name = std::move(name);
  g.reference = reference;
  g.shape = shape;
  g.precision = precision;
  g.intensity = intensity;
  for (const Device& d : devices) {
    if (!d.rate(precision)) {
      g.compute_bound.emplace_back();
      continue;
    }
    g.compute_bound.emplace_back(
        gemm_roofline(shape, precision, d, data.efficiency(*d.gpu)).compute_bound);
  }
  return g;
}

bool can_time(const Op& op, const Device& d) {
  return op.unit == ComputeUnit::kTensor ? d.rate(op.precision).has_value()
                                         : d.vector_rate.has_value();
}

ReportRoofline roofline(const RunsFile& runs, const std::vector<const GpuSpec*>& cards,
                        const std::vector<ReferenceGemm>& references, const PlanningData& data) {
  ReportRoofline r;
  for (const auto& run : runs.runs)
    if (!method_traits(run.workload.method).trains_base) {
      r.run = &run;
      break;
    }
  if (!r.run && !runs.runs.empty()) r.run = &runs.runs.front();
  for (const GpuSpec* gpu : cards)
    r.devices.push_back(make_device(*gpu));
  for (std::size_t i = 0; i < references.size(); ++i) {
    const ReferenceGemm& ref = references[i];
    const GemmCost cost = ref.cost();
    r.gemms.push_back(roofline_gemm(ref.id, i, ref.shape, ref.precision,
                                    intensity(cost.flops, cost.bytes), r.devices, data));
  }
  if (!r.run) return r;
  // One micro-batch and its update, the unit the seed compares (gradient accumulation scales
  // every class alike and would hide nothing but the optimizer step).
  r.workload = at_count(*r.run, 1);
  r.workload.grad_accum = 1;
  r.ops = build_step_ops(r.workload);
  for (std::size_t c = 0; c < cards.size(); ++c) {
    const FormatSupport support = data.formats.check(*cards[c], r.workload.precision);
    if (!support.supported) {
      StepEstimate s;
      s.feasible = false;
      s.reason = Reason(ReasonCode::kFormatUnsupported).quote("why", support.reason);
      r.steps.push_back(s);
    } else {
      r.steps.push_back(estimate_step(r.ops, r.devices[c], data.efficiency(*cards[c])));
    }
  }
  for (std::size_t c = 0; c < cards.size(); ++c) {
    if (c == 0 || !r.steps[0].feasible || !r.steps[c].feasible) {
      r.versus_first.emplace_back();
      continue;
    }
    r.versus_first.push_back(compare_steps(r.ops, r.devices[0], data.efficiency(*cards[0]),
                                           r.devices[c], data.efficiency(*cards[c])));
  }
  // The seed's two examples: the up-projection (the largest GEMM) and a rank-r adapter product.
  for (auto [name, cls] : {std::pair{"mlp.up_proj.fwd", OpClass::kGemm},
                           std::pair{"attn.q_proj.lora_a.fwd", OpClass::kAdapter}}) {
    const auto i = find_op(r.ops, name, cls);
    if (!i) continue;
    const Op& op = r.ops.ops[*i];
    if (!op.gemm.valid()) continue;
    r.gemms.push_back(roofline_gemm(op.name, std::nullopt, op.gemm, op.precision, op.intensity(),
                                    r.devices, data));
  }
  for (std::size_t i = 0; i < r.ops.ops.size(); ++i) {
    const Op& op = r.ops.ops[i];
    if (op.flops.value <= 0 || op.bytes.value <= 0) continue;
    ReportOpPoint point;
    point.op = i;
    for (std::size_t c = 0; c < cards.size(); ++c) {
      if (!r.steps[c].feasible || !can_time(op, r.devices[c])) {
        point.achieved.emplace_back();
        point.compute_bound.emplace_back();
        continue;
      }
      const OpTiming t = time_op(op, r.devices[c], data.efficiency(*cards[c]));
      point.achieved.emplace_back(op.flops.value / t.time().value);
      point.compute_bound.emplace_back(t.compute_bound());
    }
    r.points.push_back(std::move(point));
  }
  return r;
}

ReportRates rates(const std::vector<const GpuSpec*>& cards, const std::vector<const GpuSpec*>& also,
                  const PlanningData& data) {
  ReportRates r;
  r.cards = cards;
  for (const GpuSpec* g : also)
    if (std::find(r.cards.begin(), r.cards.end(), g) == r.cards.end()) r.cards.push_back(g);
  for (const GpuSpec* g : r.cards) {
    r.devices.push_back(make_device(*g));
    std::vector<FormatSupport> support;
    for (const auto& name : compute_format_names())
      support.push_back(data.formats.check(*g, parse_compute_format(name)));
    r.formats.push_back(std::move(support));
  }
  for (const Device& d : r.devices) {
    auto& ratios = r.first_over.emplace_back();
    for (auto p : kAllTensorPrecisions) {
      const auto a = r.devices.front().rate(p), b = d.rate(p);
      if (a && b) ratios[static_cast<std::size_t>(p)] = *a / *b;
    }
  }
  return r;
}

std::vector<ReportTrafficRow> traffic(const RunsFile& runs, const GpuSpec& gpu,
                                      const std::vector<int>& counts, const PlanningData& data) {
  std::vector<ReportTrafficRow> rows;
  if (counts.empty()) return rows;
  for (const auto& run : runs.runs) {
    // Per step of one micro-batch (no gradient accumulation): the seed's unit, in which FSDP moves
    // 1.5× the data-parallel traffic (every micro-batch gathers; a step all-reduces once).
    Workload w = run.workload;
    w.grad_accum = 1;
    const ModelStates replica = model_states(w);
    std::optional<double> data_parallel;
    for (Sharding sharding : {Sharding::kDdp, Sharding::kFsdp}) {
      ReportTrafficRow row;
      row.run = &run;
      row.sharding = sharding;
      row.counts = counts;
      for (int n : counts) {
        const Placement p = placement(gpu, n, sharding);
        row.strategy = comm_strategy(w, p);
        const Topology t = build_topology(gpu, n, "", data.comm);
        row.plans.push_back(plan_communication(w, replica, p, t, data.comm));
        row.frozen_base.push_back(per_micro_batch(row.plans.back(), CommPayload::kFrozenBase));
      }
      const double first = row.plans.front().received_per_card_per_step.value;
      if (sharding == Sharding::kDdp)
        data_parallel = first;
      else if (data_parallel && *data_parallel > 0)
        row.over_data_parallel = first / *data_parallel;
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

ReportScaleSeries scale_series(const PlannedRun& run, const GpuSpec& gpu, bool forced_pcie,
                               const std::vector<int>& counts, const PlanningData& data) {
  ReportScaleSeries s;
  s.gpu = &gpu;
  s.forced_pcie = forced_pcie;
  const ModelStates replica = model_states(run.workload);
  std::vector<int> all = {1};
  all.insert(all.end(), counts.begin(), counts.end());
  for (int n : all) {
    const Workload w = at_count(run, n);
    if (w.grad_accum == 0) continue;
    const Topology t = build_topology(gpu, n, forced_pcie && n > 1 ? "pcie" : "", data.comm);
    Placement p = placement(gpu, n, Sharding::kFsdp);
    p.topology = t.preset;
    s.topology = t.preset;
    ReportScalePoint point{n, evaluate_placement(w, replica, build_step_ops(w), p, t, data), {}};
    point.frozen_base = per_micro_batch(point.result.comm, CommPayload::kFrozenBase);
    s.points.push_back(std::move(point));
  }
  return s;
}

}  // namespace

std::vector<const GpuSpec*> other_editions(const Catalog& catalog,
                                           const std::vector<const GpuSpec*>& cards) {
  std::vector<const GpuSpec*> out;
  for (const GpuSpec& g : catalog.gpus()) {
    if (std::find(cards.begin(), cards.end(), &g) != cards.end()) continue;
    for (const GpuSpec* c : cards)
      if (g.architecture == c->architecture && g.memory_type.value == c->memory_type.value &&
          g.datasheet_GB.value && g.datasheet_GB.value == c->datasheet_GB.value) {
        out.push_back(&g);
        break;
      }
  }
  return out;
}

ReportModel build_report_model(const ReportInput& in) {
  if (!in.runs || !in.data)
    throw UserError(ErrorCode::kInvalidValue, "the report needs a runs file and the data", "");
  if (in.runs->gpus.empty())
    throw UserError(ErrorCode::kInvalidValue,
                    "the report needs at least one card: give --gpu or candidates in the runs file",
                    "gpu");
  const RunsFile& runs = *in.runs;
  const PlanningData& data = *in.data;
  ReportModel m;
  m.runs = &runs;
  m.cards = runs.gpus;
  m.also = in.also;
  for (int n : runs.counts)
    if (n > 1) m.counts.push_back(n);
  m.references = load_reference_gemms(*data.catalog);
  m.mig_rules = load_mig_rules(*data.catalog);
  m.plan = make_plan(runs, data, in.plan_options);
  m.memory = memory_rows(runs, m.plan, m.cards);
  m.roofline = roofline(runs, m.cards, m.references, data);
  m.rates = rates(m.cards, m.also, data);
  m.traffic = traffic(runs, *m.cards.front(), m.counts, data);
  for (const GpuSpec* gpu : m.cards)
    for (int n : m.counts)
      m.topologies.push_back({gpu, build_topology(*gpu, n, "", data.comm)});
  // Scaling curves for the runs that need more than one card of some compared type.
  for (const auto& row : m.memory) {
    bool needs_several = false;
    for (const auto& one : row.one_card)
      needs_several |= one.memory.verdict != Verdict::kFits;
    if (!needs_several || m.counts.empty()) continue;
    ReportScaling sc;
    sc.run = row.run;
    sc.workload = row.workload;
    for (const GpuSpec* gpu : m.cards) {
      sc.series.push_back(scale_series(*row.run, *gpu, false, m.counts, data));
      if (gpu->nvlink.kind != LinkKind::kNone)
        sc.series.push_back(scale_series(*row.run, *gpu, true, m.counts, data));
    }
    m.scaling.push_back(std::move(sc));
  }
  for (const GpuSpec* gpu : m.cards) {
    if (!gpu->mig.supported) continue;
    ReportMigCard mc;
    mc.gpu = gpu;
    mc.card = make_mig_card(*gpu);
    for (const auto& row : m.memory)
      mc.runs.push_back(fit_mig(row.workload, mc.card, m.mig_rules));
    mc.notes = mig_notes(*gpu, m.mig_rules);
    m.mig.push_back(std::move(mc));
  }
  return m;
}

}  // namespace ftplan
