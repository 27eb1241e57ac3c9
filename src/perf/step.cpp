#include "perf/step.hpp"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>

#include "core/format.hpp"

namespace ftplan {

namespace {

std::optional<FlopsPerSecond> rate_for(const Op& op, const Device& d) {
  return op.unit == ComputeUnit::kTensor ? d.rate(op.precision) : d.vector_rate;
}

}  // namespace

OpTiming time_op(const Op& op, const Device& d, const EfficiencyTable& e) {
  const auto rate = rate_for(op, d);
  assert(rate && rate->value > 0);
  OpTiming t;
  const double curve = e.compute(op.op_class, op.flops);
  t.compute_efficiency = d.gpu ? attention_kernel_fraction(e.attention_kernels, d.gpu->architecture,
                                                           op.kernel, op.phase, curve) *
                                     e.compute_scale(d.gpu->architecture, op.op_class)
                               : curve;
  t.memory_efficiency = e.memory(op.op_class, op.bytes);
  t.roofline = roofline_time(op.flops, *rate, t.compute_efficiency, op.bytes, d.bandwidth,
                             t.memory_efficiency);
  return t;
}

PreparedStep prepare_step(const StepOps& ops, const EfficiencyTable& e) {
  PreparedStep p;
  p.items.reserve(ops.ops.size());
  for (const auto& op : ops.ops) {
    PreparedStep::Item it;
    it.curve_fraction = e.compute(op.op_class, op.flops);
    it.compute_work = op.flops.value / it.curve_fraction;
    it.kernel = op.kernel;
    it.memory_work = op.bytes.value / e.memory(op.op_class, op.bytes);
    it.calls = static_cast<double>(op.count);
    it.rate = op.unit == ComputeUnit::kTensor ? static_cast<std::uint8_t>(op.precision)
                                              : PreparedStep::kVectorRate;
    it.op_class = op.op_class;
    it.phase = op.phase;
    const auto c = static_cast<std::size_t>(op.op_class);
    it.launches = op.launches >= 0
                      ? op.launches
                      : (ops.compiled ? e.host.launches_compiled[c] : e.host.launches_eager[c]);
    p.items.push_back(it);
    if (op.phase == Phase::kOptimizer)
      p.optimizer_flops += op.total_flops();
    else
      p.hardware_flops_per_micro_batch += op.total_flops();
  }
  p.tokens_per_micro_batch = ops.tokens_per_micro_batch;
  p.grad_accum = ops.grad_accum;
  p.layers = ops.layers;
  p.mfu_precision = ops.mfu_precision;
  p.tensor_precisions_used = ops.tensor_precisions_used;
  p.model_flops_per_micro_batch = ops.model_flops_per_micro_batch();
  p.seconds_per_launch = e.host.seconds_per_launch;
  p.seconds_per_micro_batch = ops.micro_batch_overhead ? e.host.seconds_per_micro_batch : 0.0;
  p.architectures = e.architectures;
  p.attention_kernels = e.attention_kernels;
  p.error_low = e.fit.error_low;
  p.error_high = e.fit.error_high;
  return p;
}

StepEstimate estimate_step(const PreparedStep& p, const Device& d) {
  StepEstimate s;
  s.layers = p.layers;
  s.bandwidth = d.bandwidth;
  // Every rate the ops need must be published for this card.
  std::array<double, kTensorPrecisionCount + 1> rate{};
  for (auto prec : kAllTensorPrecisions) {
    const auto i = static_cast<std::size_t>(prec);
    if (auto r = d.rate(prec)) rate[i] = r->value;
    if (((p.tensor_precisions_used >> i) & 1u) && rate[i] <= 0) {
      s.feasible = false;
      s.reason = d.missing_rate(prec);
      return s;
    }
  }
  if (!d.vector_rate) {
    s.feasible = false;
    s.reason = d.missing_vector_rate();
    return s;
  }
  rate[PreparedStep::kVectorRate] = d.vector_rate->value;
  if (d.bandwidth.value <= 0) {
    s.feasible = false;
    s.reason = Reason(ReasonCode::kBandwidthUnknown);
    return s;
  }
  // MFU is counted against the datasheet peak, also when a power cap slows the clock.
  s.peak = FlopsPerSecond(rate[static_cast<std::size_t>(p.mfu_precision)] / d.clock_scale);

  // The architecture's multipliers of the compute fractions (1 where none were fitted).
  std::array<double, kOpClassCount> scale;
  scale.fill(1.0);
  if (d.gpu)
    for (const auto& a : p.architectures)
      if (a.architecture == d.gpu->architecture) scale = a.compute;

  const double accum = static_cast<double>(p.grad_accum);
  // Time the GPU waits for launches: per micro-batch and in the optimizer update.
  std::array<Seconds, 2> host_wait{};
  // Per pass (forward, backward with its recomputation, optimizer update): the host's launch
  // time and the GPU's time for one micro-batch (one update).
  std::array<Seconds, 3> launch_time{}, gpu_time{};
  const auto pass_of = [](Phase ph) -> std::size_t {
    return ph == Phase::kForward ? 0 : ph == Phase::kOptimizer ? 2 : 1;
  };
  for (const auto& it : p.items) {
    // The roofline at full peak of the work already divided by the efficiencies.
    const auto cls = static_cast<std::size_t>(it.op_class);
    // An attention kernel's fraction on this architecture replaces the curve's.
    const double kernel = it.kernel == AttentionKernel::kNone || !d.gpu
                              ? 1.0
                              : attention_kernel_fraction(p.attention_kernels, d.gpu->architecture,
                                                          it.kernel, it.phase, it.curve_fraction) /
                                    it.curve_fraction;
    const RooflineTime t =
        roofline_time(Flops(it.compute_work), FlopsPerSecond(rate[it.rate] * scale[cls] * kernel),
                      1.0, Bytes(it.memory_work), d.bandwidth, 1.0);
    // The host launches the kernels (Python and dispatcher time per kernel) while the GPU runs
    // earlier ones: eager PyTorch queues them asynchronously, so the GPU waits only where a pass
    // needs longer to launch than to run (below, per pass), not wherever one op is short.
    const std::size_t pass = pass_of(it.phase);
    launch_time[pass] += Seconds(it.launches * p.seconds_per_launch) * it.calls;
    gpu_time[pass] += t.time() * it.calls;
    const Seconds once = t.time() * it.calls;
    // Micro-batch ops run grad_accum times per step; the optimizer update once.
    const Seconds per_step = it.phase == Phase::kOptimizer ? once : once * accum;
    switch (it.phase) {
      case Phase::kForward:
        s.forward += once;
        break;
      case Phase::kBackward:
        s.backward += once;
        break;
      case Phase::kRecompute:
        s.backward += once;
        s.recompute += once;
        break;
      case Phase::kOptimizer:
        s.optimizer += once;
        break;
    }
    s.class_seconds[cls] += per_step;
    s.phase_seconds[static_cast<std::size_t>(it.phase)] += per_step;
    if (t.compute_bound()) {
      s.compute_bound_seconds += per_step;
      s.class_compute_bound_seconds[cls] += per_step;
    } else {
      s.memory_bound_seconds += per_step;
    }
  }
  // A pass that launches for longer than its kernels run leaves the GPU waiting for the rest.
  for (std::size_t pass = 0; pass < 3; ++pass) {
    const Seconds wait = launch_time[pass].value > gpu_time[pass].value
                             ? launch_time[pass] - gpu_time[pass]
                             : Seconds(0.0);
    host_wait[pass == 2 ? 1 : 0] += wait;
    (pass == 0 ? s.forward : pass == 1 ? s.backward : s.optimizer) += wait;
  }
  // The framework's fixed time per micro-batch; the launch waits are inside the phases' times.
  s.host = host_wait[0] + Seconds(p.seconds_per_micro_batch);
  const Seconds optimizer_host = host_wait[1];
  s.micro_batch = s.forward + s.backward + Seconds(p.seconds_per_micro_batch);
  s.step = s.micro_batch * accum + s.optimizer;
  s.host_seconds = s.host * accum + optimizer_host;
  s.step_low = s.step * (1 + p.error_low);
  s.step_high = s.step * (1 + p.error_high);
  s.hardware_flops = p.hardware_flops_per_micro_batch * accum + p.optimizer_flops;
  s.model_flops = p.model_flops_per_micro_batch * accum;
  s.tokens = p.tokens_per_micro_batch * p.grad_accum;
  if (s.step.value > 0) {
    s.tokens_per_second = static_cast<double>(s.tokens) / s.step.value;
    s.tokens_per_second_low = static_cast<double>(s.tokens) / s.step_high.value;
    s.tokens_per_second_high = static_cast<double>(s.tokens) / s.step_low.value;
    s.mfu = s.model_flops.value / (s.step.value * s.peak.value);
  }
  return s;
}

StepEstimate estimate_step(const StepOps& ops, const Device& d, const EfficiencyTable& e) {
  return estimate_step(prepare_step(ops, e), d);
}

void trace_step(const StepOps& ops, const Device& d, const EfficiencyTable& e,
                const StepEstimate& s, Trace& trace) {
  if (!s.feasible) return;
  const std::string prec(tensor_precision_name(ops.mfu_precision));
  const std::string device = d.name();
  Derivation ratio{"perf.ops_per_byte",
                   fmt::format("ops:byte of {} in {}", device, prec),
                   s.peak.value / s.bandwidth.value,
                   "FLOP/B",
                   "dense peak rate / memory bandwidth",
                   {{"dense peak", format_TFLOPS(s.peak)}, {"bandwidth", format_GBps(s.bandwidth)}},
                   "NVIDIA GPU Performance Background user guide; seed R4/R5"};
  // A card file given by path: its figures are the user's, not sourced data.
  if (d.gpu && d.gpu->user_supplied)
    ratio.inputs.push_back({"card figures", fmt::format("user-supplied ({})", d.gpu->source_file)});
  trace.add(std::move(ratio));
  trace.add({"perf.step_seconds",
             "time of one optimizer step",
             s.step.value,
             "s",
             "grad_accum × (Σ forward + backward + recompute op times) + optimizer update; op time "
             "= count × max(FLOPs / (peak × compute efficiency), bytes / (bandwidth × memory "
             "efficiency))",
             {{"forward per micro-batch", format_seconds(s.forward)},
              {"backward per micro-batch", format_seconds(s.backward)},
              {"of which recompute", format_seconds(s.recompute)},
              {"optimizer update", format_seconds(s.optimizer)},
              {"grad_accum", std::to_string(ops.grad_accum)},
              {"ops", std::to_string(ops.ops.size())},
              {"efficiencies", fmt::format("{} ({})", e.name, e.file)}},
             "roofline model (Williams et al. 2009) with achieved efficiencies per op class"});
  trace.add({"perf.tokens_per_second",
             "training throughput",
             s.tokens_per_second,
             "tokens/s",
             "tokens per step / step time",
             {{"tokens per step", std::to_string(s.tokens)}, {"step time", format_seconds(s.step)}},
             "definition",
             {"perf.step_seconds"}});
  trace.add({"perf.model_flops",
             "useful model FLOPs per step",
             s.model_flops.value,
             "FLOP",
             "full: 6·N_active·tokens; LoRA/QLoRA: (forward + input gradient) 4·N_active·tokens + "
             "adapters' forward and both gradients; no recomputation, no attention scores",
             {{"tokens per step", std::to_string(s.tokens)}},
             "Kaplan et al. 2020; Narayanan et al. 2021"});
  trace.add({"perf.mfu",
             "model FLOPs utilisation",
             s.mfu,
             "",
             "model FLOPs per step / (step time × dense peak)",
             {{"model FLOPs", format_si(s.model_flops.value, "FLOP")},
              {"step time", format_seconds(s.step)},
              {"dense peak", format_TFLOPS(s.peak) + " " + prec}},
             "Chowdhery et al. 2022 (PaLM), Appendix B",
             {"perf.model_flops", "perf.step_seconds"}});
  trace.add({"perf.compute_bound_share",
             "share of the step spent in compute-bound ops",
             s.compute_bound_share(),
             "",
             "Σ time of ops whose compute time exceeds their memory time / step time",
             {{"compute-bound", format_seconds(s.compute_bound_seconds)},
              {"memory-bound", format_seconds(s.memory_bound_seconds)}},
             "roofline model",
             {"perf.step_seconds"}});
}

GemmRoofline gemm_roofline(const GemmShape& shape, TensorPrecision dtype, const Device& d,
                           const EfficiencyTable& e) {
  GemmRoofline r;
  r.shape = shape;
  r.dtype = dtype;
  r.cost = gemm_cost(shape, element_bytes(dtype));
  r.intensity = intensity(r.cost.flops, r.cost.bytes);
  const auto rate = d.rate(dtype);
  assert(rate);
  r.peak = *rate;
  r.ops_per_byte = ftplan::ops_per_byte(*rate, d.bandwidth);
  // Compute-bound when the intensity exceeds the processor's ops:byte (NVIDIA GPU Performance
  // Background); the roofline's attainable rate is min(peak, intensity × bandwidth).
  r.compute_bound = r.intensity > r.ops_per_byte;
  r.attainable = FlopsPerSecond(std::min(rate->value, r.intensity * d.bandwidth.value));
  r.min_time = r.cost.flops / r.attainable;
  Op op;
  op.op_class = OpClass::kGemm;
  op.unit = ComputeUnit::kTensor;
  op.precision = dtype;
  op.flops = r.cost.flops;
  op.bytes = r.cost.bytes;
  op.gemm = shape;
  r.estimated = time_op(op, d, e);
  return r;
}

StepComparison compare_steps(const StepOps& ops, const Device& a, const EfficiencyTable& ea_in,
                             const Device& b, const EfficiencyTable& eb_in) {
  // The cards' own work: the host's launch and framework time is the same on both cards and
  // would only pull the ratio towards 1.
  EfficiencyTable ea = ea_in, eb = eb_in;
  ea.host = {};
  eb.host = {};
  StepComparison c;
  const StepEstimate sa = estimate_step(ops, a, ea);
  const StepEstimate sb = estimate_step(ops, b, eb);
  if (!sa.feasible || !sb.feasible) return c;
  for (std::size_t i = 0; i < kOpClassCount; ++i)
    if (sa.class_seconds[i].value > 0) c.class_ratio[i] = sb.class_seconds[i] / sa.class_seconds[i];
  c.overall = sb.step / sa.step;
  c.tensor_rate_ratio = sa.peak / sb.peak;
  c.effective_tensor_ratio = c.tensor_rate_ratio;
  if (a.gpu && b.gpu)
    c.effective_tensor_ratio *= ea.compute_scale(a.gpu->architecture, OpClass::kGemm) /
                                eb.compute_scale(b.gpu->architecture, OpClass::kGemm);
  c.bandwidth_ratio = sa.bandwidth / sb.bandwidth;
  // Split by what bounds each op on A.
  Seconds a_compute, b_compute, a_memory, b_memory;
  const double accum = static_cast<double>(ops.grad_accum);
  for (const auto& op : ops.ops) {
    const double n = static_cast<double>(op.count) * (op.phase == Phase::kOptimizer ? 1 : accum);
    const OpTiming ta = time_op(op, a, ea);
    const OpTiming tb = time_op(op, b, eb);
    if (ta.compute_bound()) {
      a_compute += ta.time() * n;
      b_compute += tb.time() * n;
    } else {
      a_memory += ta.time() * n;
      b_memory += tb.time() * n;
    }
  }
  c.compute_bound_share_a = a_compute / sa.step;
  if (a_compute.value > 0) c.compute_bound_ratio = b_compute / a_compute;
  if (a_memory.value > 0) c.memory_bound_ratio = b_memory / a_memory;
  return c;
}

}  // namespace ftplan
