// Fuzzes the nvidia-smi CSV reader (ftplan gpus --detect FILE, --gpu local:FILE) and the matching
// of its devices to the built-in catalog.
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/smi_csv.hpp"
#include "cli/cli.hpp"
#include "core/error.hpp"

namespace {
const ftplan::Catalog& catalog() {
  static const ftplan::Catalog c = ftplan::Catalog::load(ftplan::cli::builtin_data_files());
  return c;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto devices = ftplan::parse_smi_csv(text, "fuzz.csv");
    if (devices.empty()) __builtin_trap();  // an accepted file lists a device
    const auto machine = ftplan::detect_cards(catalog(), devices, "fuzz.csv");
    if (machine.device_count() != static_cast<int>(devices.size())) __builtin_trap();
    try {
      const auto& group = machine.single_card();
      if (!group.gpu || group.count() < 1) __builtin_trap();
    } catch (const ftplan::UserError&) {
    }
  } catch (const ftplan::UserError&) {
  }
  return 0;
}
