#include "perf/calibration.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "core/format.hpp"

namespace ftplan {

namespace {

// Prefix of the basis of a range that kept its default.
constexpr const char* kNotMeasured = "not measured, default: ";

[[noreturn]] void bad_benchmark(const BenchRecord& b, const std::string& what) {
  throw UserError(ErrorCode::kInvalidValue, fmt::format("{}: {}", b.where, what), b.id);
}

std::int64_t gemm_dimension(const BenchRecord& b, std::string_view name) {
  auto v = b.dimension(name);
  if (!v || *v <= 0) bad_benchmark(b, fmt::format("a GEMM's shape needs '{}' (m, n, k)", name));
  return *v;
}

Op gemm_bench_op(const BenchRecord& b, Op op) {
  const GemmShape shape{static_cast<double>(gemm_dimension(b, "m")),
                        static_cast<double>(gemm_dimension(b, "n")),
                        static_cast<double>(gemm_dimension(b, "k"))};
  if (b.output_dtype != "bf16")
    bad_benchmark(
        b, fmt::format("output_dtype '{}': the step model's GEMMs write BF16", b.output_dtype));
  op.unit = ComputeUnit::kTensor;
  op.precision = bench_precision(b);
  op.gemm = shape;
  const double in = element_bytes(op.precision);
  // A[m×k] and B[k×n] at the input size, D[m×n] in BF16: the step model's GEMM (perf/ops.cpp).
  const GemmCost cost = gemm_cost(shape, in, in, element_bytes(TensorPrecision::kBF16));
  if (!agrees(cost.flops.value, b.flops.value))
    bad_benchmark(b, fmt::format("flops {} is not 2·m·n·k = {}", b.flops.value, cost.flops.value));
  if (!agrees(cost.bytes.value, b.bytes.value))
    bad_benchmark(b, fmt::format("bytes {} is not the model's GEMM traffic {} (A, B read once, D "
                                 "written once)",
                                 b.bytes.value, cost.bytes.value));
  op.flops = cost.flops;
  op.bytes = cost.bytes;
  return op;
}

std::optional<FlopsPerSecond> rate_of(const Op& op, const Device& d) {
  return op.unit == ComputeUnit::kTensor ? d.rate(op.precision) : d.vector_rate;
}

Reason missing_rate(const Op& op, const Device& d) {
  return op.unit == ComputeUnit::kTensor ? d.missing_rate(op.precision) : d.missing_vector_rate();
}

// What the efficiency of a measurement divides by, in words.
std::string peak_label(const BenchMeasurement& m) {
  if (m.curve == Curve::kMemory)
    return fmt::format("the datasheet bandwidth {}", format_GBps(BytesPerSecond(m.peak)));
  if (m.op.unit == ComputeUnit::kVector)
    return fmt::format("the datasheet FP32 rate {}", format_TFLOPS(FlopsPerSecond(m.peak)));
  return fmt::format("the datasheet dense {} rate {}", tensor_precision_name(m.op.precision),
                     format_TFLOPS(FlopsPerSecond(m.peak)));
}

void check_efficiency(const BenchMeasurement& m, const Device& d) {
  const std::string achieved = m.curve == Curve::kCompute
                                   ? format_TFLOPS(FlopsPerSecond(m.efficiency * m.peak), 1)
                                   : format_GBps(BytesPerSecond(m.efficiency * m.peak), 0);
  if (m.efficiency > 1.0)
    bad_benchmark(*m.bench,
                  fmt::format("achieved {} exceeds {} of {}: the results come from another card "
                              "(name the card with --gpu ID), or the card's datasheet figure is "
                              "wrong",
                              achieved, peak_label(m), d.gpu->id));
  if (m.efficiency < 1e-4)
    bad_benchmark(*m.bench, fmt::format("achieved {} is below 0.01 % of {}: a unit error?",
                                        achieved, peak_label(m)));
}

BenchMeasurement measure(const BenchRecord& b, const Device& d, const EfficiencyTable& defaults,
                         TensorPrecision gemm_precision) {
  BenchMeasurement m;
  m.bench = &b;
  m.op = bench_op(b);
  const auto rate = rate_of(m.op, d);
  if (!rate || rate->value <= 0 || d.bandwidth.value <= 0) {
    m.excluded = missing_rate(m.op, d);
    return m;
  }
  m.timed = true;
  // The side that bounds it with the default efficiencies (perf/step time_op).
  m.curve = time_op(m.op, d, defaults).compute_bound() ? Curve::kCompute : Curve::kMemory;
  const bool compute = m.curve == Curve::kCompute;
  m.size = compute ? m.op.flops.value / 1e9 : m.op.bytes.value / 1e6;
  m.peak = compute ? rate->value : d.bandwidth.value;
  // efficiency = achieved rate / datasheet figure = (work / measured median) / peak.
  m.efficiency = (compute ? m.op.flops.value : m.op.bytes.value) / b.median.value / m.peak;
  check_efficiency(m, d);
  if (m.op.op_class == OpClass::kGemm && m.op.precision != gemm_precision)
    m.excluded = Reason(ReasonCode::kCalibrationOtherPrecision)
                     .name("precision", std::string(tensor_precision_name(gemm_precision)));
  return m;
}

EfficiencyCurve& curve_of(EfficiencyTable& t, OpClass c, Curve k) {
  return k == Curve::kCompute ? t.of(c).compute : t.of(c).memory;
}

std::string size_unit(Curve k) {
  return k == Curve::kCompute ? "GFLOP" : "MB";
}

}  // namespace

std::string size_range_label(const CalibratedRange& r) {
  const std::string unit = size_unit(r.curve) + " per call";
  if (r.lower <= 0 && std::isinf(r.upper)) return "every size";
  if (r.lower <= 0) return fmt::format("below {} {}", format_number(r.upper), unit);
  if (std::isinf(r.upper)) return fmt::format("from {} {}", format_number(r.lower), unit);
  return fmt::format("{}-{} {}", format_number(r.lower), format_number(r.upper), unit);
}

namespace {

std::string measurement_list(const CalibratedRange& r) {
  std::vector<const BenchMeasurement*> sorted = r.measurements;
  std::sort(sorted.begin(), sorted.end(),
            [](auto* a, auto* b) { return a->efficiency < b->efficiency; });
  auto one = [](const BenchMeasurement* m) {
    return fmt::format("{} {:.3f}", m->bench->id, m->efficiency);
  };
  if (sorted.size() <= 5) {
    std::vector<std::string> items;
    for (auto* m : sorted)
      items.push_back(one(m));
    return fmt::format("{}", fmt::join(items, ", "));
  }
  return fmt::format("from {} to {}", one(sorted.front()), one(sorted.back()));
}

std::string range_basis(const CalibratedRange& r, const CalibrationHeader& h) {
  const std::size_t n = r.measurements.size();
  return fmt::format("median of {} ftplan-bench measurement{} on {} ({}) of achieved / {}: {}", n,
                     n == 1 ? "" : "s", h.device.empty() ? h.card : h.device, h.date,
                     peak_label(*r.measurements.front()), measurement_list(r));
}

void trace_range(const CalibratedRange& r, const CalibrationHeader& h, Trace& trace) {
  Derivation d;
  d.id =
      fmt::format("calibration.{}.{}.{}", op_class_name(r.op_class), curve_name(r.curve), r.index);
  d.label = fmt::format("{} {} efficiency, {}", op_class_name(r.op_class), curve_name(r.curve),
                        size_range_label(r));
  d.value = r.fraction;
  d.unit = "fraction";
  d.formula = fmt::format("median over the range's benchmarks of achieved / {}",
                          peak_label(*r.measurements.front()));
  for (const BenchMeasurement* m : r.measurements)
    d.inputs.emplace_back(m->bench->id, fmt::format("{:.4f} ({} measured)", m->efficiency,
                                                    format_seconds(m->measured())));
  d.source = h.results.empty() ? "ftplan-bench results" : h.results;
  trace.add(std::move(d));
}

// Groups the measurements that enter the calibration by (class, curve, range index).
using RangeKey = std::tuple<std::size_t, int, std::size_t>;
std::map<RangeKey, CalibratedRange> group_by_range(
    const std::vector<BenchMeasurement>& measurements, EfficiencyTable& t) {
  std::map<RangeKey, CalibratedRange> out;
  for (const auto& m : measurements) {
    if (!m.timed || !m.excluded.empty()) continue;
    const OpClass c = m.op.op_class;
    const EfficiencyCurve& curve = curve_of(t, c, m.curve);
    const std::size_t i = curve.index_for(m.size);
    CalibratedRange& r = out[{static_cast<std::size_t>(c), static_cast<int>(m.curve), i}];
    r.op_class = c;
    r.curve = m.curve;
    r.index = i;
    r.lower = i == 0 ? 0.0 : curve.ranges[i - 1].below;
    r.upper = curve.ranges[i].below;
    r.measurements.push_back(&m);
  }
  return out;
}

// Marks every range that kept its default, and lists the curves without any measurement.
std::vector<std::string> mark_defaults(EfficiencyTable& t,
                                       const std::map<RangeKey, CalibratedRange>& measured) {
  std::vector<std::string> kept;
  for (auto c : kAllOpClasses) {
    std::vector<std::string> curves;
    for (Curve k : {Curve::kCompute, Curve::kMemory}) {
      EfficiencyCurve& curve = curve_of(t, c, k);
      std::size_t hit = 0;
      for (std::size_t i = 0; i < curve.ranges.size(); ++i) {
        if (measured.count({static_cast<std::size_t>(c), static_cast<int>(k), i})) {
          ++hit;
          continue;
        }
        curve.ranges[i].basis = kNotMeasured + curve.ranges[i].basis;
      }
      if (hit == 0)
        curves.emplace_back(curve_name(k));
      else if (hit < curve.ranges.size())
        curves.push_back(fmt::format("{} ({} of {} size ranges)", curve_name(k),
                                     curve.ranges.size() - hit, curve.ranges.size()));
    }
    if (!curves.empty())
      kept.push_back(fmt::format("{}: {}", op_class_name(c), fmt::join(curves, ", ")));
  }
  return kept;
}

}  // namespace

std::string_view curve_name(Curve c) {
  return c == Curve::kCompute ? "compute" : "memory";
}

OpClass op_class_of_bench(std::string_view bench_class) {
  if (bench_class == "gemm") return OpClass::kGemm;
  if (bench_class == "adapter") return OpClass::kAdapter;
  if (bench_class == "dequant") return OpClass::kDequant;
  if (bench_class == "norm") return OpClass::kNorm;
  if (bench_class == "optimizer") return OpClass::kOptimizer;
  assert(bench_class == "bandwidth");  // parse_bench_results admits these six only
  return OpClass::kElementwise;
}

TensorPrecision bench_precision(const BenchRecord& b) {
  if (b.dtype == "bf16") return TensorPrecision::kBF16;
  if (b.dtype == "fp8_e4m3") return TensorPrecision::kFP8;
  bad_benchmark(b, fmt::format("dtype '{}' is not a GEMM input format (bf16, fp8_e4m3)", b.dtype));
}

Op bench_op(const BenchRecord& b) {
  Op op;
  op.name = b.id;
  op.op_class = op_class_of_bench(b.bench_class);
  op.flops = b.flops;
  op.bytes = b.bytes;
  if (op.op_class == OpClass::kGemm) return gemm_bench_op(b, op);
  if (op.op_class == OpClass::kAdapter) {
    // The rank-r pair h = x·Aᵀ, y += h·Bᵀ in BF16 on the tensor cores (the step model's two
    // adapter products, timed together).
    op.unit = ComputeUnit::kTensor;
    op.precision = bench_precision(b);
    return op;
  }
  op.unit = ComputeUnit::kVector;
  return op;
}

std::vector<BenchMeasurement> measure_benchmarks(const BenchResults& r, const Device& d,
                                                 const EfficiencyTable& defaults,
                                                 TensorPrecision gemm_precision) {
  std::vector<BenchMeasurement> out;
  for (const auto& b : r.benchmarks)
    if (b.ok()) out.push_back(measure(b, d, defaults, gemm_precision));
  return out;
}

CalibrationFit fit_calibration(const std::vector<BenchMeasurement>& measurements,
                               const EfficiencyTable& defaults, const CalibrationHeader& header,
                               Trace* trace) {
  CalibrationFit fit;
  fit.table = defaults;
  fit.table.name = header.card + "-calibration";
  fit.table.description = fmt::format(
      "achieved fractions of {}'s datasheet figures measured by ftplan-bench ({}); size ranges "
      "without a measurement keep data/efficiency/default.yaml (their basis starts 'not "
      "measured')",
      header.card, header.date);
  fit.table.file.clear();
  fit.table.calibration = header;
  std::map<RangeKey, CalibratedRange> groups = group_by_range(measurements, fit.table);
  for (auto& [key, r] : groups) {
    std::vector<double> values;
    for (const BenchMeasurement* m : r.measurements)
      values.push_back(m->efficiency);
    r.fraction = median_of(values);
    EfficiencyRange& range = curve_of(fit.table, r.op_class, r.curve).ranges[r.index];
    range.fraction = r.fraction;
    range.basis = range_basis(r, header);
    range.sources = {std::string(kBenchMeasurementSource)};
    if (trace) trace_range(r, header, *trace);
    fit.ranges.push_back(r);
  }
  fit.kept_defaults = mark_defaults(fit.table, groups);
  // The measured fractions are what the card reaches: the defaults' multipliers per architecture
  // (fitted to whole steps against the published figures) do not apply to the classes measured.
  for (auto& a : fit.table.architectures)
    for (const auto& [key, r] : groups)
      a.compute[static_cast<std::size_t>(r.op_class)] = 1.0;
  return fit;
}

CalibrationHeader bench_calibration_header(const BenchResults& r, const GpuSpec& gpu,
                                           std::string_view match_basis) {
  CalibrationHeader h;
  h.card = gpu.id;
  std::size_t timed = 0;
  for (const auto& b : r.benchmarks)
    timed += b.ok() ? 1 : 0;
  h.measurement = fmt::format("ftplan-bench {}: {} timed benchmarks; CUDA runtime {}, cuBLASLt {}",
                              r.tool_version, timed, r.cuda_runtime_version, r.cublaslt_version);
  h.date = r.date();
  h.device = r.device.name;
  h.driver = r.driver_version.empty() ? "unknown (no NVML)" : r.driver_version;
  h.results = r.file;
  h.note = fmt::format("card {}: {}", gpu.id, match_basis);
  if (!r.note.empty()) h.note += fmt::format(". The results file says: {}", r.note);
  return h;
}

std::vector<BenchPrediction> predict_benchmarks(const std::vector<BenchMeasurement>& measurements,
                                                const Device& d, const EfficiencyTable& defaults,
                                                const EfficiencyTable& calibrated) {
  std::vector<BenchPrediction> out;
  for (const auto& m : measurements) {
    if (!m.timed) continue;
    BenchPrediction p;
    p.measurement = &m;
    p.with_defaults = time_op(m.op, d, defaults);
    p.with_calibration = time_op(m.op, d, calibrated);
    const double measured = m.measured().value;
    p.error_defaults = relative_error(p.with_defaults.time().value, measured);
    p.error_calibration = relative_error(p.with_calibration.time().value, measured);
    out.push_back(p);
  }
  return out;
}

std::vector<BenchErrorSummary> summarize_errors(const std::vector<BenchPrediction>& predictions) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const BenchPrediction*>> groups;
  for (const auto& p : predictions) {
    const BenchRecord& b = *p.measurement->bench;
    const std::string group =
        b.bench_class == "gemm" ? fmt::format("gemm {}", b.dtype) : b.bench_class;
    if (!groups.count(group)) order.push_back(group);
    groups[group].push_back(&p);
    groups["all"].push_back(&p);
  }
  if (!predictions.empty()) order.emplace_back("all");
  std::vector<BenchErrorSummary> out;
  for (const auto& name : order) {
    std::vector<double> d, c;
    for (const BenchPrediction* p : groups[name]) {
      d.push_back(std::fabs(p->error_defaults));
      c.push_back(std::fabs(p->error_calibration));
    }
    out.push_back({name, d.size(), median_of(d), *std::max_element(d.begin(), d.end()),
                   median_of(c), *std::max_element(c.begin(), c.end())});
  }
  return out;
}

}  // namespace ftplan
