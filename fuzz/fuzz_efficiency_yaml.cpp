// Fuzzes the efficiency / calibration file parser (--calibration FILE) against the built-in
// source table.
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/catalog.hpp"
#include "cli/cli.hpp"
#include "core/error.hpp"
#include "perf/efficiency.hpp"

namespace {
const std::map<std::string, ftplan::SourceInfo, std::less<>>& sources() {
  static const ftplan::Catalog catalog = ftplan::Catalog::load(ftplan::cli::builtin_data_files());
  return catalog.sources();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ftplan::EfficiencyTable t = ftplan::parse_efficiency({"fuzz.yaml", text, {}}, sources());
    // An accepted table gives every class a fraction in (0, 1] at any size.
    for (auto c : ftplan::kAllOpClasses) {
      const double f = t.compute(c, ftplan::Flops(1e9)) * t.memory(c, ftplan::Bytes(1e6));
      if (!(f > 0 && f <= 1)) __builtin_trap();
    }
  } catch (const ftplan::UserError&) {
  }
  return 0;
}
