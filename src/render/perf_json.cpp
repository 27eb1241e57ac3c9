#include "render/perf_json.hpp"

#include <cmath>

#include "render/calibration_json.hpp"
#include "render/json.hpp"
#include "render/reason_words.hpp"

namespace ftplan {

using nlohmann::json;

namespace {

json rate_json(const Device& d, TensorPrecision p) {
  const auto& f = d.gpu->tensor_figure(p);
  json j;
  if (auto r = d.rate(p)) {
    j["TFLOPS"] = round_to(to_TFLOPS(*r), 3);
  } else {
    j["TFLOPS"] = nullptr;
    j["reason"] = f.unknown_reason.empty() ? "not published" : f.unknown_reason;
  }
  if (f.sparse_halved) j["sparse_halved"] = true;
  if (!f.accumulate.empty()) j["accumulate"] = f.accumulate;
  j["source"] = f.sources;
  return j;
}

// A dimension: a whole number where it is one (GEMM sizes), else rounded.
json dimension(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9e15) return static_cast<std::int64_t>(v);
  return round_to(v, 3);
}

json ratio_or_null(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b <= 0) return nullptr;
  return round_to(*a / *b, 4);
}

std::optional<double> tflops(const Device& d, TensorPrecision p) {
  auto r = d.rate(p);
  return r ? std::optional<double>(to_TFLOPS(*r)) : std::nullopt;
}

json support_json(const FormatSupport& s) {
  json j = {{"supported", s.supported}, {"source", s.sources}};
  if (!s.reason.empty()) j["reason"] = s.reason;
  if (!s.caveat.empty()) j["caveat"] = s.caveat;
  return j;
}

json curve_json(const EfficiencyCurve& c, const char* key) {
  json arr = json::array();
  for (const auto& r : c.ranges) {
    json j = {{"fraction", r.fraction}, {"basis", r.basis}, {"source", r.sources}};
    if (std::isfinite(r.below)) j[key] = r.below;
    arr.push_back(j);
  }
  return arr;
}

json classes_json(const StepEstimate& s) {
  json j = json::object();
  for (auto c : kAllOpClasses) {
    const Seconds t = s.of(c);
    if (t.value <= 0) continue;
    const Seconds cb = s.class_compute_bound_seconds[static_cast<std::size_t>(c)];
    j[std::string(op_class_name(c))] = {{"seconds", t.value},
                                        {"share", round_to(t.value / s.step.value, 4)},
                                        {"compute_bound_share", round_to(cb.value / t.value, 4)}};
  }
  return j;
}

}  // namespace

json device_json(const Device& d) {
  json j = {{"gpu", d.gpu->id}, {"name", d.name()}};
  if (d.mig) {
    j["mig"] = d.mig->name;
    j["assumption"] = d.assumption;
  }
  if (d.power_limit_W > 0) {
    j["power_limit_W"] = d.power_limit_W;
    j["clock_scale"] = round_to(d.clock_scale, 4);
  }
  json rates = json::object();
  json opb = json::object();
  for (auto p : kAllTensorPrecisions) {
    rates[std::string(tensor_precision_name(p))] = rate_json(d, p);
    if (auto o = d.ops_per_byte(p)) opb[std::string(tensor_precision_name(p))] = round_to(*o, 2);
  }
  j["tensor_dense_TFLOPS"] = rates;  // int8: TOPS
  j["fp32_TFLOPS"] = d.vector_rate ? json(round_to(to_TFLOPS(*d.vector_rate), 3)) : json(nullptr);
  j["bandwidth_GBps"] = round_to(to_GBps(d.bandwidth), 3);
  j["ops_per_byte"] = opb;
  j["compute_capability"] =
      d.gpu->compute_capability.value ? json(*d.gpu->compute_capability.value) : json(nullptr);
  return j;
}

json roofline_json(const Device& d, const GemmRoofline& r) {
  return {
      {"gpu", d.gpu->id},
      {"gpu_name", d.name()},
      {"dtype", tensor_precision_name(r.dtype)},
      {"m", dimension(r.shape.m)},
      {"n", dimension(r.shape.n)},
      {"k", dimension(r.shape.k)},
      {"flops", r.cost.flops.value},
      {"bytes", r.cost.bytes.value},
      {"intensity", round_to(r.intensity, 4)},
      {"ops_per_byte", round_to(r.ops_per_byte, 4)},
      {"bound", r.compute_bound ? "compute" : "memory"},
      {"peak_TFLOPS", round_to(to_TFLOPS(r.peak), 3)},
      {"bandwidth_GBps", round_to(to_GBps(d.bandwidth), 3)},
      {"attainable_TFLOPS", round_to(to_TFLOPS(r.attainable), 3)},
      {"min_seconds", r.min_time.value},
      {"estimated_seconds", r.estimated.time().value},
      {"efficiency",
       {{"compute", r.estimated.compute_efficiency}, {"memory", r.estimated.memory_efficiency}}}};
}

json step_json(const Workload& w, const Device& d, const StepOps& ops, const StepEstimate& s,
               const EfficiencyTable& e) {
  json j = workload_json(w);
  j["gpu"] = d.gpu->id;
  j["device"] = device_json(d);
  j["efficiency"] = {{"name", e.name}, {"file", e.file}};
  if (e.is_calibration()) j["efficiency"]["card"] = e.card();
  j["feasible"] = s.feasible;
  if (w.stack) j["stack"] = w.stack->name;
  j["tokens_per_micro_batch"] = ops.tokens_per_micro_batch;
  j["layers"] = ops.layers;
  if (!s.feasible) {
    j["reason"] = word_reason(s.reason);
    return j;
  }
  j["step_seconds"] = s.step.value;
  j["step_seconds_range"] = {s.step_low.value, s.step_high.value};
  j["host_seconds_per_micro_batch"] = s.host.value;
  j["host_seconds"] = s.host_seconds.value;
  j["micro_batch_seconds"] = s.micro_batch.value;
  j["forward_seconds"] = s.forward.value;
  j["backward_seconds"] = s.backward.value;
  j["recompute_seconds"] = s.recompute.value;
  j["optimizer_seconds"] = s.optimizer.value;
  j["forward_seconds_per_layer"] = s.forward_per_layer().value;
  j["backward_seconds_per_layer"] = s.backward_per_layer().value;
  j["tokens_per_step"] = s.tokens;
  j["tokens_per_second"] = round_to(s.tokens_per_second, 2);
  j["tokens_per_second_range"] = {round_to(s.tokens_per_second_low, 2),
                                  round_to(s.tokens_per_second_high, 2)};
  j["mfu"] = round_to(s.mfu, 4);
  j["mfu_peak_TFLOPS"] = round_to(to_TFLOPS(s.peak), 3);
  j["model_flops_per_step"] = s.model_flops.value;
  j["hardware_flops_per_step"] = s.hardware_flops.value;
  j["compute_bound_share"] = round_to(s.compute_bound_share(), 4);
  j["classes"] = classes_json(s);
  json list = json::array();
  for (const auto& op : ops.ops) {
    const OpTiming t = time_op(op, d, e);
    const double n = static_cast<double>(op.count);
    json o = {{"name", op.name},
              {"class", op_class_name(op.op_class)},
              {"phase", phase_name(op.phase)},
              {"precision", op.unit == ComputeUnit::kTensor
                                ? std::string(tensor_precision_name(op.precision))
                                : std::string("fp32-vector")},
              {"count", op.count},
              {"flops", op.total_flops().value},
              {"bytes", op.total_bytes().value},
              {"intensity", round_to(op.intensity(), 3)},
              {"bound", t.compute_bound() ? "compute" : "memory"},
              {"seconds", t.time().value * n},
              {"efficiency", {{"compute", t.compute_efficiency}, {"memory", t.memory_efficiency}}}};
    if (op.gemm.valid())
      o["gemm"] = {
          {"m", dimension(op.gemm.m)}, {"n", dimension(op.gemm.n)}, {"k", dimension(op.gemm.k)}};
    list.push_back(o);
  }
  j["ops"] = list;
  return j;
}

json compare_json(const Device& a, const Device& b, const TrainingFormats& formats,
                  const std::optional<StepPair>& step) {
  json j;
  j["gpus"] = {device_json(a), device_json(b)};
  json rates = json::array();
  for (auto p : kAllTensorPrecisions) {
    rates.push_back({{"precision", tensor_precision_name(p)},
                     {"unit", p == TensorPrecision::kINT8 ? "TOPS" : "TFLOPS"},
                     {"a", rate_json(a, p)},
                     {"b", rate_json(b, p)},
                     {"ratio", ratio_or_null(tflops(a, p), tflops(b, p))}});
  }
  j["dense_rates"] = rates;
  j["bandwidth_GBps"] = {{"a", round_to(to_GBps(a.bandwidth), 3)},
                         {"b", round_to(to_GBps(b.bandwidth), 3)},
                         {"ratio", round_to(a.bandwidth / b.bandwidth, 4)}};
  json opb = json::array();
  for (auto p : kAllTensorPrecisions) {
    auto oa = a.ops_per_byte(p), ob = b.ops_per_byte(p);
    if (!oa && !ob) continue;
    opb.push_back({{"precision", tensor_precision_name(p)},
                   {"a", oa ? json(round_to(*oa, 2)) : json(nullptr)},
                   {"b", ob ? json(round_to(*ob, 2)) : json(nullptr)}});
  }
  j["ops_per_byte"] = opb;
  json fm = json::array();
  for (const auto& name : compute_format_names()) {
    const ComputeFormat f = parse_compute_format(name);
    fm.push_back({{"format", name},
                  {"a", support_json(formats.check(*a.gpu, f))},
                  {"b", support_json(formats.check(*b.gpu, f))}});
  }
  j["training_formats"] = fm;
  if (step) {
    json sj = workload_json(*step->workload);
    const StepComparison& c = step->comparison;
    sj["a"] = {{"step_seconds", step->a.step.value},
               {"tokens_per_second", round_to(step->a.tokens_per_second, 2)},
               {"mfu", round_to(step->a.mfu, 4)},
               {"compute_bound_share", round_to(step->a.compute_bound_share(), 4)},
               {"classes", classes_json(step->a)}};
    sj["b"] = {{"step_seconds", step->b.step.value},
               {"tokens_per_second", round_to(step->b.tokens_per_second, 2)},
               {"mfu", round_to(step->b.mfu, 4)},
               {"compute_bound_share", round_to(step->b.compute_bound_share(), 4)},
               {"classes", classes_json(step->b)}};
    json ratios = json::object();
    for (auto cls : kAllOpClasses) {
      const double r = c.class_ratio[static_cast<std::size_t>(cls)];
      if (r > 0) ratios[std::string(op_class_name(cls))] = round_to(r, 4);
    }
    sj["class_ratio"] = ratios;
    sj["overall_ratio"] = round_to(c.overall, 4);
    sj["tensor_rate_ratio"] = round_to(c.tensor_rate_ratio, 4);
    sj["effective_tensor_ratio"] = round_to(c.effective_tensor_ratio, 4);
    sj["bandwidth_ratio"] = round_to(c.bandwidth_ratio, 4);
    sj["compute_bound_share_a"] = round_to(c.compute_bound_share_a, 4);
    sj["compute_bound_ratio"] = round_to(c.compute_bound_ratio, 4);
    sj["memory_bound_ratio"] = round_to(c.memory_bound_ratio, 4);
    j["step"] = sj;
  }
  return j;
}

json efficiency_json(const EfficiencyTable& e) {
  json j = {{"name", e.name}, {"description", e.description}, {"file", e.file}};
  if (e.is_calibration()) j["calibration"] = calibration_header_json(e.calibration);
  json classes = json::object();
  for (auto c : kAllOpClasses)
    classes[std::string(op_class_name(c))] = {
        {"compute", curve_json(e.of(c).compute, "below_GFLOP")},
        {"memory", curve_json(e.of(c).memory, "below_MB")}};
  j["classes"] = classes;
  return j;
}

}  // namespace ftplan
