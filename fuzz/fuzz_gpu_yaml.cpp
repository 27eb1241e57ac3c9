// Fuzzes the GPU card loader (strict YAML schema) against the built-in source table, as a data
// file and as a user's own card file (--gpu FILE: sources optional, defaults for the rest).
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/catalog.hpp"
#include "cli/cli.hpp"
#include "core/error.hpp"

namespace {
const std::map<std::string, ftplan::SourceInfo, std::less<>>& sources() {
  static const ftplan::Catalog catalog = ftplan::Catalog::load(ftplan::cli::builtin_data_files());
  return catalog.sources();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    ftplan::GpuSpec g = ftplan::parse_gpu_file({"fuzz.yaml", text, {}}, sources());
    if (g.capacity().value <= 0) __builtin_trap();  // an accepted card has memory
  } catch (const ftplan::UserError&) {
  }
  try {
    ftplan::GpuSpec g = ftplan::parse_gpu_file({"fuzz.yaml", text, {}}, sources(), true);
    if (g.capacity().value <= 0 || g.bandwidth().value <= 0) __builtin_trap();
  } catch (const ftplan::UserError&) {
  }
  return 0;
}
