// Calibration: measured rates of ftplan-bench turned into achieved fractions of the card's
// datasheet figures, in the schema of data/efficiency/default.yaml, and the model's predictions
// checked against the measurements. Pure functions: the CLI reads and writes the files
// (ftplan calibrate import / show).
//
// The rule (README "Calibration"): each timed benchmark becomes the op the step model would time
// (bench_op); the default efficiencies decide which roofline side bounds it (time_op); its
// efficiency is achieved / datasheet peak of its precision (compute-bound) or achieved bytes per
// second / datasheet bandwidth (memory-bound). A range of a class's curve (the default table's
// size ranges, GFLOP or MB per call) that holds measurements gets their median (for an even count
// the mean of the two middle ones); a range without one keeps its default, and says so. Nothing
// is fitted beyond that: no interpolation between ranges, no new ranges.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "catalog/calibration_header.hpp"
#include "core/numeric.hpp"
#include "core/trace.hpp"
#include "perf/bench_results.hpp"
#include "perf/device.hpp"
#include "perf/efficiency.hpp"
#include "perf/step.hpp"

namespace ftplan {

// The source id of every range a calibration measures (data/sources-calibration.yaml).
inline constexpr std::string_view kBenchMeasurementSource = "ftplan-bench-measurement";

// The roofline side a measurement calibrates: the compute curve (ranges by GFLOP per call) or
// the memory curve (ranges by MB per call).
enum class Curve { kCompute, kMemory };
std::string_view curve_name(Curve c);  // "compute", "memory"

// Op class of a benchmark class: gemm, adapter, dequant, norm and optimizer are their own;
// bandwidth (a device-to-device copy and a streaming read) calibrates `elementwise`, the class of
// streaming kernels that read and write each byte once.
OpClass op_class_of_bench(std::string_view bench_class);

// Tensor precision of a GEMM benchmark's inputs (bf16 -> BF16, fp8_e4m3 -> FP8).
TensorPrecision bench_precision(const BenchRecord& b);

// One launch of a benchmark as the step model describes it. GEMMs: a tensor op whose FLOPs and
// bytes come from gemm_cost (A and B at the input size, D in BF16), checked against the file's
// (a disagreement is a UserError: the two would calibrate different things); the adapter pair:
// a BF16 tensor op; the rest: CUDA-core ops with the file's FLOPs and bytes.
Op bench_op(const BenchRecord& b);

struct BenchMeasurement {
  const BenchRecord* bench = nullptr;
  Op op;
  bool timed = false;  // the card publishes the rate the op runs at (else `excluded` says why)
  Curve curve = Curve::kCompute;  // the side that bounds it at the default efficiencies
  double size = 0;                // GFLOP (compute) or MB (memory) per launch: the range key
  double peak = 0;        // the datasheet figure divided by: FLOP/s (compute) or B/s (memory)
  double efficiency = 0;  // achieved / peak
  Reason excluded;        // why it does not enter the calibration (empty: it does)
  Seconds measured() const { return bench->median; }
};

// Every timed benchmark of `r` on device `d`, classified with `defaults`. Only GEMMs of
// `gemm_precision` enter the gemm curve (the schema has one curve per class for every precision).
// A measured rate above the datasheet figure is a UserError: the results come from another card
// (--gpu), or the card's datasheet figure is wrong.
std::vector<BenchMeasurement> measure_benchmarks(const BenchResults& r, const Device& d,
                                                 const EfficiencyTable& defaults,
                                                 TensorPrecision gemm_precision);

struct CalibratedRange {
  OpClass op_class = OpClass::kGemm;
  Curve curve = Curve::kCompute;
  std::size_t index = 0;  // position in the curve's ranges
  double lower = 0;       // size bounds of the range (GFLOP or MB per call); upper may be inf
  double upper = 0;
  double fraction = 0;  // the median of the measurements' efficiencies
  std::vector<const BenchMeasurement*> measurements;
};

// "16-128 GFLOP per call", "from 128 GFLOP per call", "below 1 MB per call".
std::string size_range_label(const CalibratedRange& r);

struct CalibrationFit {
  EfficiencyTable table;  // the defaults with every measured range replaced
  std::vector<CalibratedRange> ranges;
  std::vector<std::string> kept_defaults;  // "attention: compute, memory", "gemm: memory", ...
};

// The calibration table: `defaults` with each measured range set to the median efficiency of its
// measurements (basis: the count, the spread and the figure divided by; source
// ftplan-bench-measurement). Records one derivation per measured range in `trace`.
CalibrationFit fit_calibration(const std::vector<BenchMeasurement>& measurements,
                               const EfficiencyTable& defaults, const CalibrationHeader& header,
                               Trace* trace = nullptr);

// The header of a calibration made from `r` for `gpu`.
CalibrationHeader bench_calibration_header(const BenchResults& r, const GpuSpec& gpu,
                                           std::string_view match_basis);

// The model's time for each timed benchmark with the defaults and with `calibrated`, against the
// measured median; errors are (predicted − measured) / measured.
struct BenchPrediction {
  const BenchMeasurement* measurement = nullptr;
  OpTiming with_defaults;
  OpTiming with_calibration;
  double error_defaults = 0;
  double error_calibration = 0;
};
std::vector<BenchPrediction> predict_benchmarks(const std::vector<BenchMeasurement>& measurements,
                                                const Device& d, const EfficiencyTable& defaults,
                                                const EfficiencyTable& calibrated);

// Median and worst absolute error per group: the benchmark class (GEMMs per input precision),
// then "all".
struct BenchErrorSummary {
  std::string group;
  std::size_t count = 0;
  double median_abs_defaults = 0;
  double worst_abs_defaults = 0;
  double median_abs_calibration = 0;
  double worst_abs_calibration = 0;
};
std::vector<BenchErrorSummary> summarize_errors(const std::vector<BenchPrediction>& predictions);

}  // namespace ftplan
