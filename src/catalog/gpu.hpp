// One card type of the GPU catalog, as read from data/gpus/<id>.yaml.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/figure.hpp"
#include "core/units.hpp"

namespace ftplan {

// Tensor-core input precisions a vendor lists rates for.
enum class TensorPrecision { kFP64, kTF32, kBF16, kFP16, kFP8, kFP6, kFP4, kINT8 };
inline constexpr std::size_t kTensorPrecisionCount = 8;
std::string_view tensor_precision_name(TensorPrecision p);  // "bf16", ...
std::optional<TensorPrecision> tensor_precision_from_name(std::string_view name);
inline constexpr std::array<TensorPrecision, kTensorPrecisionCount> kAllTensorPrecisions = {
    TensorPrecision::kFP64, TensorPrecision::kTF32, TensorPrecision::kBF16, TensorPrecision::kFP16,
    TensorPrecision::kFP8,  TensorPrecision::kFP6,  TensorPrecision::kFP4,  TensorPrecision::kINT8};

// "9.0" -> 9, 0; false unless it is MAJOR.MINOR with MAJOR 1-99 and MINOR 0-9.
bool parse_compute_capability(std::string_view text, int& major, int& minor);

enum class LinkKind { kNone, kBridge, kSwitch };
std::string_view link_kind_name(LinkKind k);

struct PcieSpec {
  int generation = 0;
  int lanes = 0;
  double GBps_both_directions = 0;  // NVIDIA's figure: both directions added
  std::vector<std::string> sources;
  // Whether the driver lets two such cards copy to each other over PCIe directly (peer-to-peer);
  // where it does not, NCCL stages every transfer through host memory. `p2p_note` says why.
  bool p2p = true;
  std::string p2p_note;
  BytesPerSecond per_direction() const {
    return bytes_per_second_from_GBps(GBps_both_directions / 2);
  }
};

struct NvlinkSpec {
  LinkKind kind = LinkKind::kNone;
  // The card-to-card link: "nvlink", or "infinity-fabric" (AMD Instinct: xGMI links, modelled
  // like an NVLink domain of the same per-card bandwidth).
  std::string fabric = "nvlink";
  int generation = 0;
  double GBps_per_gpu_both_directions = 0;
  int bridge_max_cards = 0;  // bridge only: most cards one bridge joins
  std::vector<std::string> sources;
  std::string note;
  BytesPerSecond per_direction() const {
    return bytes_per_second_from_GBps(GBps_per_gpu_both_directions / 2);
  }
};

struct MigProfile {
  std::string name;          // "1g.18gb"
  Figure<double> memory_GB;  // memory of one instance, GB = 1e9 B
  int compute_slices = 0;
  int memory_slices = 0;
  int max_count = 0;
  std::vector<int> placements;  // memory-slice indices where an instance may start
  Bytes memory() const { return bytes_from_GB(memory_GB.value.value_or(0)); }
};

struct MigSpec {
  bool supported = false;
  std::string unsupported_reason;
  int max_instances = 0;
  int compute_slices = 0;
  int memory_slices = 0;
  bool requires_compute_display_mode = false;
  std::vector<std::string> sources;
  std::string note;
  std::vector<MigProfile> profiles;
  const MigProfile* find(std::string_view name) const;
  std::vector<std::string> profile_names() const;
};

struct GpuSpec {
  std::string id;
  std::string name;
  std::string short_name;  // as tables and charts print it: "H200 NVL", "RTX PRO 6000 WS"
  std::string vendor;
  std::string architecture;
  std::string source_file;  // where it was loaded from
  // A card file given by path (--gpu FILE): figures may come without a source ("user-supplied")
  // and missing optional figures take the defaults listed in `assumptions`.
  bool user_supplied = false;
  std::vector<std::string> assumptions;
  // The names `nvidia-smi --query-gpu=name` prints for this card ("NVIDIA H100 80GB HBM3").
  std::vector<std::string> smi_names;
  std::vector<std::string> smi_names_sources;
  Figure<std::string> compute_capability;
  int cc_major = 0;
  int cc_minor = 0;
  Figure<std::string> form_factor;
  Figure<std::string> cooling;
  Figure<double> tdp_W;
  Figure<double> boost_clock_MHz;
  Figure<double> visible_MiB;  // nvidia-smi memory.total
  Figure<double> datasheet_GB;
  Figure<std::string> memory_type;
  Figure<double> bandwidth_GBps;
  Figure<double> fp32_TFLOPS;
  std::array<Figure<double>, kTensorPrecisionCount> tensor_dense;  // TFLOPS; TOPS for int8
  PcieSpec pcie;
  NvlinkSpec nvlink;
  MigSpec mig;
  Figure<double> price_USD;

  // Driver-visible memory in bytes (what a run can allocate before the CUDA context).
  Bytes capacity() const { return bytes_from_MiB(visible_MiB.value.value_or(0)); }
  BytesPerSecond bandwidth() const {
    return bytes_per_second_from_GBps(bandwidth_GBps.value.value_or(0));
  }
  // Dense tensor rate, or nothing where the vendor publishes none.
  std::optional<FlopsPerSecond> dense_rate(TensorPrecision p) const;
  const Figure<double>& tensor_figure(TensorPrecision p) const {
    return tensor_dense[static_cast<std::size_t>(p)];
  }
  double compute_capability_value() const { return cc_major + cc_minor / 10.0; }
};

}  // namespace ftplan
