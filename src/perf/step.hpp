// Step time on one card: every op of a micro-batch timed on the roofline with achieved
// efficiencies, summed per phase and op class; tokens per second, model FLOPs utilisation, and the
// comparison of two cards. Per-workload precomputation is build_step_ops (perf/ops); this part is
// allocation-free so that the planner can call it for every placement.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/trace.hpp"
#include "perf/device.hpp"
#include "perf/efficiency.hpp"
#include "perf/ops.hpp"

namespace ftplan {

// One call of an op on a device: compute and memory times at the achieved efficiencies.
struct OpTiming {
  RooflineTime roofline;  // per call
  double compute_efficiency = 1;
  double memory_efficiency = 1;
  Seconds time() const { return roofline.time(); }
  bool compute_bound() const { return roofline.compute_bound(); }
};
// Requires the device to have the op's rate (estimate_step checks this first).
OpTiming time_op(const Op& op, const Device& d, const EfficiencyTable& e);

struct StepEstimate {
  bool feasible = true;
  Reason reason;  // infeasible: the missing figure (e.g. no dense BF16 rate published)

  // Per micro-batch.
  Seconds forward;    // the forward pass
  Seconds backward;   // the backward pass, recomputation included
  Seconds recompute;  // the part of `backward` that re-runs forward work
  // The host's share of a micro-batch: the time the GPU waits for kernel launches (ops shorter
  // than their launches, counted inside forward and backward) and the framework's fixed time.
  Seconds host;
  Seconds micro_batch;  // forward + backward + the framework's fixed time
  // Per optimizer step: grad_accum micro-batches + one update.
  Seconds optimizer;
  Seconds step;
  std::array<Seconds, kOpClassCount> class_seconds{};                // per step
  std::array<Seconds, kOpClassCount> class_compute_bound_seconds{};  // per step, compute-bound ops
  std::array<Seconds, kPhaseCount> phase_seconds{};                  // per step
  Seconds compute_bound_seconds;  // per step: ops whose compute time wins
  Seconds memory_bound_seconds;
  Seconds host_seconds;  // per step: host time the GPU waits for (launches, framework)
  // The spread of measured steps around the prediction (the efficiency table's fit record):
  // step time and tokens per second as ranges; equal to the figure where nothing was fitted.
  Seconds step_low, step_high;
  double tokens_per_second_low = 0, tokens_per_second_high = 0;

  Flops hardware_flops;     // per step, recomputation included
  Flops model_flops;        // per step (StepOps::model_flops_per_micro_batch × grad_accum)
  std::int64_t tokens = 0;  // per step
  double tokens_per_second = 0;
  // Model FLOPs utilisation (Chowdhery et al. 2022, PaLM §B): model FLOPs per step / (step time ×
  // the device's dense peak at the block GEMMs' precision).
  double mfu = 0;
  FlopsPerSecond peak;       // the peak MFU is measured against
  BytesPerSecond bandwidth;  // the device's
  std::int64_t layers = 0;

  Seconds of(OpClass c) const { return class_seconds[static_cast<std::size_t>(c)]; }
  Seconds of(Phase p) const { return phase_seconds[static_cast<std::size_t>(p)]; }
  double compute_bound_share() const {
    return step.value > 0 ? compute_bound_seconds.value / step.value : 0;
  }
  // For the communication model: compute time of one layer's forward and backward.
  Seconds forward_per_layer() const {
    return layers > 0 ? forward / static_cast<double>(layers) : Seconds();
  }
  Seconds backward_per_layer() const {
    return layers > 0 ? backward / static_cast<double>(layers) : Seconds();
  }
};

// An op list bound to an efficiency table: per op the work at full peak (FLOPs / compute
// efficiency, bytes / memory efficiency) and which rate it runs at. Built once per workload and
// table; timing it on a device is then a loop of divisions with no allocation (the planner's path).
struct PreparedStep {
  static constexpr std::uint8_t kVectorRate = kTensorPrecisionCount;  // rate index of CUDA-core ops
  struct Item {
    double compute_work = 0;  // FLOPs / compute efficiency, per call
    double memory_work = 0;   // bytes / memory efficiency, per call
    double calls = 0;         // per micro-batch (optimizer: per step)
    std::uint8_t rate = 0;    // TensorPrecision index, or kVectorRate
    OpClass op_class = OpClass::kGemm;
    Phase phase = Phase::kForward;
    double launches = 0;  // kernel launches per call
    // Attention-core ops: the kernel, and the curve's fraction compute_work was divided by (an
    // architecture's kernel fraction replaces it when the step is timed).
    AttentionKernel kernel = AttentionKernel::kNone;
    double curve_fraction = 1.0;
  };
  std::vector<Item> items;
  std::int64_t tokens_per_micro_batch = 0;
  std::int64_t grad_accum = 1;
  std::int64_t layers = 0;
  TensorPrecision mfu_precision = TensorPrecision::kBF16;
  std::uint32_t tensor_precisions_used = 0;
  Flops model_flops_per_micro_batch;
  Flops hardware_flops_per_micro_batch;  // forward, backward and recompute
  Flops optimizer_flops;                 // per step
  // The table's host costs and per-architecture multipliers, and its error range.
  double seconds_per_launch = 0;
  double seconds_per_micro_batch = 0;
  std::vector<ArchitectureScale> architectures;
  std::vector<AttentionKernelFractions> attention_kernels;
  double error_low = 0, error_high = 0;
};
PreparedStep prepare_step(const StepOps& ops, const EfficiencyTable& e);

// Times a prepared step on `d`. Never throws, never allocates: a device that lacks a rate the ops
// need gives feasible = false with the reason.
StepEstimate estimate_step(const PreparedStep& p, const Device& d);
// The same, preparing `ops` with `e` first (one allocation; for one-off estimates).
StepEstimate estimate_step(const StepOps& ops, const Device& d, const EfficiencyTable& e);

// Two cards on the same workload: how many times faster A is than B, per op class and overall.
// The overall ratio is the time-weighted mean of the per-op ratios (step_B / step_A = Σ share_A,i ×
// ratio_i), so it lies between the effective tensor-rate ratio (what compute-bound ops get: the
// datasheet ratio times the architectures' measured efficiency) and the bandwidth ratio (what
// memory-bound ops get).
struct StepComparison {
  std::array<double, kOpClassCount> class_ratio{};  // time on B / time on A (0: class absent)
  double overall = 0;                               // step_B / step_A
  double tensor_rate_ratio = 0;                     // peak_A / peak_B at the MFU precision
  // The tensor-rate ratio times the ratio of the architectures' fitted multipliers of the GEMM
  // fraction (data/efficiency `architectures`): what compute-bound GEMMs get. The overall ratio
  // lies between it and the bandwidth ratio.
  double effective_tensor_ratio = 0;
  double bandwidth_ratio = 0;  // bandwidth_A / bandwidth_B
  // Time on A of the ops that are compute-bound on A, and the ratio of those ops' times.
  double compute_bound_share_a = 0;
  double compute_bound_ratio = 0;
  double memory_bound_ratio = 0;
};
// Records how the step's headline figures were derived (explain, the report, the web page): the
// device's ops:byte, step time, tokens per second, model FLOPs and MFU. Not for the hot path.
void trace_step(const StepOps& ops, const Device& d, const EfficiencyTable& e,
                const StepEstimate& s, Trace& trace);

// One GEMM on the roofline (ftplan roofline): FLOPs, bytes with every operand in `dtype`,
// intensity against the device's ops:byte, the attainable rate min(peak, intensity × bandwidth)
// and the times it implies, at peak and at the achieved efficiencies of the GEMM class.
struct GemmRoofline {
  GemmShape shape;
  TensorPrecision dtype = TensorPrecision::kBF16;
  GemmCost cost;
  double intensity = 0;     // FLOP per byte
  double ops_per_byte = 0;  // the device's, at dtype
  bool compute_bound = false;
  FlopsPerSecond peak;
  FlopsPerSecond attainable;
  Seconds min_time;    // at the roofline, efficiencies 1
  OpTiming estimated;  // at the achieved efficiencies
};
// Requires the device to publish the rate of `dtype` (check Device::rate first).
GemmRoofline gemm_roofline(const GemmShape& shape, TensorPrecision dtype, const Device& d,
                           const EfficiencyTable& e);

// Compares the cards' own work (roofline times at the achieved efficiencies): the host's launch
// and framework time, the same on both cards, is left out.
StepComparison compare_steps(const StepOps& ops, const Device& a, const EfficiencyTable& ea,
                             const Device& b, const EfficiencyTable& eb);

}  // namespace ftplan
