// The cards of the local machine, from what `nvidia-smi` prints: parsing its CSV output and
// matching each device to a catalog card. Pure functions on text; running nvidia-smi is the
// front end's job (ftplan gpus --detect, --gpu local).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"

namespace ftplan {

// The query the front end runs; parse_smi_csv reads its output.
inline constexpr std::string_view kSmiQuery =
    "nvidia-smi --query-gpu=name,memory.total,power.limit,pci.bus_id --format=csv,noheader,nounits";

// One device line: `name, memory.total, power.limit, pci.bus_id`.
struct SmiDevice {
  std::string name;                  // "NVIDIA H100 80GB HBM3"
  std::optional<double> memory_MiB;  // memory.total; none where nvidia-smi printed [N/A]
  std::optional<double> power_limit_W;
  std::string bus_id;  // "00000000:18:00.0"
  int line = 0;        // 1-based line in the text
};

// Reads the CSV (noheader,nounits; a header line, units such as "MiB" and "W", blank lines and
// trailing fields left out are tolerated). A malformed line is a UserError naming `file` and the
// line. No device at all is a UserError too.
std::vector<SmiDevice> parse_smi_csv(std::string_view text, std::string_view file);

// The devices of one name, and the catalog card they are (or why none is).
struct DetectedGroup {
  std::string smi_name;
  std::vector<SmiDevice> devices;
  const GpuSpec* gpu = nullptr;  // null: no catalog card; see problem
  std::string basis;             // how the card was found
  std::string problem;           // why no card was found
  int count() const { return static_cast<int>(devices.size()); }
};

struct DetectedMachine {
  std::string file;                   // where the CSV came from ("nvidia-smi" or a path)
  std::vector<DetectedGroup> groups;  // in the order nvidia-smi listed the names
  int device_count() const;
  // The one catalog card of the machine, with its count; a UserError when the machine has no
  // card of the catalog or several kinds of card (it lists them and asks for --gpu ID).
  const DetectedGroup& single_card() const;
};

// Groups the devices by name and matches each group to a catalog card (device_match.hpp rule,
// with the card files' `smi_names`).
DetectedMachine detect_cards(const Catalog& catalog, const std::vector<SmiDevice>& devices,
                             std::string_view file);

}  // namespace ftplan
