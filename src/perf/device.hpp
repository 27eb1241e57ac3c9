// A card (or one MIG instance of it) as the roofline sees it: the dense peak rate per tensor
// precision, the plain FP32 rate of the CUDA cores, and the memory bandwidth; and which training
// formats the card supports (Transformer Engine's rules, data/training_formats.yaml).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "core/reason.hpp"
#include "workload/workload.hpp"

namespace ftplan {

struct Device {
  const GpuSpec* gpu = nullptr;
  const MigProfile* mig = nullptr;  // one instance of this profile, or the whole card
  std::array<std::optional<FlopsPerSecond>, kTensorPrecisionCount> tensor_rate;  // dense peaks
  std::optional<FlopsPerSecond> vector_rate;  // plain FP32 (non-tensor) peak
  BytesPerSecond bandwidth;
  double compute_share = 1.0;  // of the whole card (MIG: compute slices / card's slices)
  double memory_share = 1.0;   // of the whole card (MIG: memory slices / card's slices)
  double power_limit_W = 0;    // a cap below the card's TDP (0: none)
  double clock_scale = 1.0;    // sustained SM clock under that cap / at the TDP: rates × this
  std::string assumption;      // how a MIG instance's figures were derived

  std::optional<FlopsPerSecond> rate(TensorPrecision p) const {
    return tensor_rate[static_cast<std::size_t>(p)];
  }
  // ops:byte = dense rate / bandwidth (NVIDIA "GPU Performance Background" user guide): an
  // operation whose arithmetic intensity exceeds it is compute-bound on this device.
  std::optional<double> ops_per_byte(TensorPrecision p) const;
  std::string name() const;  // "NVIDIA H200 NVL", or "1g.18gb instance of NVIDIA H200 NVL"
  // Why a rate is missing, naming the data gap ("NVIDIA publishes no dense BF16 rate for the
  // RTX PRO 6000 Blackwell Server Edition (...)"), the data file's note quoted.
  Reason missing_rate(TensorPrecision p) const;
  Reason missing_vector_rate() const;
};

Device make_device(const GpuSpec& g);
// One MIG instance: rates × compute_slices / card compute slices, bandwidth × memory_slices /
// card memory slices. Assumes an instance gets that share of the SMs and of the memory
// controllers (NVIDIA MIG user guide: slices are the unit of partitioning); the real SM count of
// a slice may differ slightly from an even split.
Device make_device(const GpuSpec& g, const MigProfile& m);
Device make_device(const Placement& p);

// How a power cap lowers the sustained clock (data/runtime/power.yaml).
struct PowerScaling {
  double clock_exponent = 1.0 / 3;  // clock ∝ (cap / TDP)^exponent
  double min_share_of_tdp = 0.3;    // the lowest cap accepted
  std::string basis;
};
PowerScaling load_power_scaling(const Catalog& catalog);
// The device under a power cap of `limit_W` (0 or at least the TDP: unchanged): tensor and vector
// rates × (limit / TDP)^exponent; the bandwidth stays. A cap below the lowest share of the TDP, or
// a card without a TDP, is a UserError naming `field`.
Device apply_power_limit(Device d, double limit_W, const PowerScaling& s,
                         std::string_view field = "power_limit");

// The roofline time of one call: max(FLOPs / (rate × compute efficiency), bytes / (bandwidth ×
// memory efficiency)) (Williams et al. 2009, "Roofline"; NVIDIA "GPU Performance Background").
struct RooflineTime {
  Seconds compute;
  Seconds memory;
  Seconds time() const { return compute > memory ? compute : memory; }
  bool compute_bound() const { return compute >= memory; }
};
inline RooflineTime roofline_time(Flops f, FlopsPerSecond rate, double compute_efficiency, Bytes b,
                                  BytesPerSecond bandwidth, double memory_efficiency) {
  return {f / (rate * compute_efficiency), b / (bandwidth * memory_efficiency)};
}

// ---- training formats (Transformer Engine's support rules) --------------------------------------

struct FormatRule {
  std::optional<int> min_cc;  // compute capability × 10 (8.9 -> 89); none: any card
  std::string vendor;         // "amd": applies to that vendor's cards only; empty: any vendor
  bool supported = false;
  std::string reason;  // why not (required when unsupported)
  std::string caveat;  // a condition or doubt when supported
  std::vector<std::string> sources;
};

struct TrainingFormat {
  ComputeFormat format = ComputeFormat::kBF16;
  std::string name;               // "FP8"
  std::string description;        // what the format is (scaling recipe)
  std::vector<FormatRule> rules;  // first rule whose min_cc the card meets decides
};

struct FormatSupport {
  ComputeFormat format = ComputeFormat::kBF16;
  bool supported = false;
  std::string reason;  // unsupported: why, in Transformer Engine's words where it has them
  std::string caveat;
  std::vector<std::string> sources;
};

class TrainingFormats {
 public:
  static TrainingFormats parse(const DataFile& file,
                               const std::map<std::string, SourceInfo, std::less<>>& sources);
  // Never throws: an unsupported format is a result with its reason.
  FormatSupport check(const GpuSpec& g, ComputeFormat f) const;
  // UserError (exit 2) unless `g` can train in `f` at all (FP8 on a card without FP8 tensor
  // cores): the rule of every command that describes a run on a card, timed or not, and of the
  // measured-runs files. The message names the card, its compute capability and the reason.
  void require(const GpuSpec& g, ComputeFormat f) const;
  const TrainingFormat& format(ComputeFormat f) const {
    return formats_[static_cast<std::size_t>(f)];
  }
  const std::string& file() const { return file_; }

 private:
  std::array<TrainingFormat, 5> formats_;
  std::string file_;
};

// data/training_formats.yaml of the catalog.
TrainingFormats load_training_formats(const Catalog& catalog);

}  // namespace ftplan
