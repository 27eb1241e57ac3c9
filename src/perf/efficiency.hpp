// Achieved fractions of peak, per operation class: how close real kernels come to the card's
// dense tensor rate (compute) and to its memory bandwidth (memory). Defaults are published figures
// (data/efficiency/default.yaml); a calibration file of the same schema, measured on one card,
// replaces them for that card (--calibration FILE).
#pragma once

#include <array>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "catalog/calibration_header.hpp"
#include "catalog/catalog.hpp"
#include "perf/ops.hpp"

namespace ftplan {

// One size range of a curve: applies to calls below `below` (GFLOP per call for compute, MB per
// call for memory; the last range of a curve is unbounded).
struct EfficiencyRange {
  double below = std::numeric_limits<double>::infinity();
  double fraction = 1.0;  // achieved / peak, in (0, 1]
  std::string basis;
  std::vector<std::string> sources;
};

// Ranges in ascending order of `below`; the last one unbounded.
struct EfficiencyCurve {
  std::vector<EfficiencyRange> ranges;
  // The range a call of `size` (GFLOP or MB) falls in, and its position in `ranges`.
  const EfficiencyRange& range_for(double size) const { return ranges[index_for(size)]; }
  std::size_t index_for(double size) const;
  double at(double size) const { return range_for(size).fraction; }
};

struct ClassEfficiency {
  EfficiencyCurve compute;  // ranges keyed by GFLOP per call
  EfficiencyCurve memory;   // ranges keyed by MB (1e6 B) per call
};

// Multipliers of the compute fractions of one GPU architecture ("hopper"), per op class: what a
// whole training step achieves on that architecture relative to the best-shape kernel figures
// the curves hold (sustained clocks under power limits, kernels tuned for another generation).
// Fitted to measured steps (ftplan calibrate fit); 1 where nothing was fitted.
struct ArchitectureScale {
  std::string architecture;
  std::array<double, kOpClassCount> compute{};  // per OpClass
  std::string basis;
};

// The published fractions of the dense tensor rate one attention kernel reaches on one
// architecture, forward (recomputation included) and backward. They replace the attention class's
// curve for that kernel on that architecture; elsewhere the curve applies.
struct AttentionKernelFractions {
  std::string architecture;
  AttentionKernel kernel = AttentionKernel::kFlash2;
  double forward = 1.0;
  double backward = 1.0;
  std::string basis;
  std::vector<std::string> sources;
};
// The fraction `kernel` reaches in `phase` on `architecture`, or `fallback` (the class curve's)
// where no figure is listed. Never allocates.
double attention_kernel_fraction(const std::vector<AttentionKernelFractions>& table,
                                 std::string_view architecture, AttentionKernel kernel, Phase phase,
                                 double fallback);

// What the host adds to a step: PyTorch launches every kernel from the CPU (a fixed cost per
// launch that hides behind GPU work only while the GPU is busier), and each micro-batch costs the
// framework a fixed time (hooks, synchronisation, data loading, Python).
struct HostCosts {
  double seconds_per_launch = 0;       // CPU time to launch one kernel from eager PyTorch
  double seconds_per_micro_batch = 0;  // fixed framework time per forward + backward
  // Kernels one op's call launches, eager and compiled (torch.compile fuses element-wise chains).
  std::array<double, kOpClassCount> launches_eager{};
  std::array<double, kOpClassCount> launches_compiled{};
  std::string basis;
  bool present() const { return seconds_per_launch > 0 || seconds_per_micro_batch > 0; }
};

// How the table's fitted constants were obtained and how far its predictions scatter: the
// quantiles of (predicted - measured) / measured over the runs it was checked on, each predicted
// by constants fitted without that run's source (leave-one-source-out). Step-time ranges are
// [time / (1 + high), time / (1 + low)] of throughput errors, i.e. what the measured runs spread.
struct FitRecord {
  int runs = 0;
  int sources = 0;
  double median_abs_error = 0;       // in sample
  double loso_median_abs_error = 0;  // leave-one-source-out
  double error_low = 0;              // 10th percentile of the signed throughput error (LOSO)
  double error_high = 0;             // 90th percentile
  std::string basis;
  bool present() const { return runs > 0; }
};

// What a serving engine's decode step costs beyond the roofline: a fixed time per decoder layer
// (the many small kernels of a layer at one token per sequence, their launch and tail inside a
// CUDA graph, the sampler and the scheduler's share), fitted to published time-per-output-token
// measurements (infer/measured_generation: fit_decode_layer_time) with the fit's record.
struct GenerationCosts {
  double seconds_per_decode_layer = 0;
  std::string basis;
  FitRecord fit;  // over decode rows: time per output token errors, leave-one-source-out
  bool present() const { return seconds_per_decode_layer > 0 || fit.present(); }
};

struct EfficiencyTable {
  std::string name;
  std::string description;
  std::string file;  // where it was read from
  // Calibration header (empty for a table of defaults): the card the measurement is for, what was
  // measured, when and with what.
  CalibrationHeader calibration;
  std::array<ClassEfficiency, kOpClassCount> classes;
  std::vector<ArchitectureScale> architectures;             // empty: every multiplier 1
  std::vector<AttentionKernelFractions> attention_kernels;  // empty: the attention curve
  HostCosts host;
  FitRecord fit;
  GenerationCosts generation;

  bool is_calibration() const { return calibration.present(); }
  const std::string& card() const { return calibration.card; }
  const ClassEfficiency& of(OpClass c) const { return classes[static_cast<std::size_t>(c)]; }
  ClassEfficiency& of(OpClass c) { return classes[static_cast<std::size_t>(c)]; }
  // Achieved fraction of the peak rate for one call of `flops_per_call`, and of the bandwidth
  // for one call moving `bytes_per_call`.
  double compute(OpClass c, Flops flops_per_call) const {
    return of(c).compute.at(flops_per_call.value / 1e9);
  }
  double memory(OpClass c, Bytes bytes_per_call) const {
    return of(c).memory.at(bytes_per_call.value / 1e6);
  }
  // The multipliers of an architecture ("hopper"); null: none fitted (all 1).
  const ArchitectureScale* scale_for(std::string_view architecture) const;
  double compute_scale(std::string_view architecture, OpClass c) const {
    const ArchitectureScale* s = scale_for(architecture);
    return s ? s->compute[static_cast<std::size_t>(c)] : 1.0;
  }
};

// A calibration file measured on one card describes its kernels, not the host or the spread of
// whole steps: it takes the defaults' host costs, fit record, attention kernels' figures and
// generation costs where it has none.
void inherit_host_and_fit(EfficiencyTable& table, const EfficiencyTable& defaults);

// Parses a table (the defaults or a calibration file) strictly: every class present, fractions
// in (0, 1], ranges ascending, every `source` defined in data/sources*.yaml.
EfficiencyTable parse_efficiency(const DataFile& file,
                                 const std::map<std::string, SourceInfo, std::less<>>& sources);
// Every architecture a table scales must be one a card may have (known_architectures(); a
// misspelt name would scale nothing): UserError naming the file, the key and the closest name
// otherwise. That each has a card in the built-in catalog is a test (test_catalog_lazy.cpp).
void check_architectures(const EfficiencyTable& table, const Catalog& catalog);
// data/efficiency/default.yaml of the catalog (its architectures checked against its cards).
EfficiencyTable default_efficiency(const Catalog& catalog);

}  // namespace ftplan
