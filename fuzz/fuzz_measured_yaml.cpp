// Fuzzes the measured-runs reader (data/measured schema, also a user's file for ftplan validate)
// and the validation of what it accepts.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/catalog.hpp"
#include "cli/cli.hpp"
#include "core/error.hpp"
#include "memory/measured_runs.hpp"
#include "memory/overheads.hpp"

namespace {
const ftplan::Catalog& catalog() {
  static const ftplan::Catalog c = ftplan::Catalog::load(ftplan::cli::builtin_data_files());
  return c;
}
const ftplan::RuntimeOverheads& overheads() {
  static const ftplan::RuntimeOverheads t = ftplan::load_runtime_overheads(catalog());
  return t;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    static const ftplan::Stacks stacks = ftplan::load_stacks(catalog());
    const auto runs =
        ftplan::parse_measured_runs({"fuzz.yaml", text, {}}, catalog(), overheads(), stacks);
    if (runs.empty()) __builtin_trap();  // an accepted file lists runs
    const ftplan::ValidationReport r = ftplan::validate_runs(runs);
    for (const auto& row : r.rows)
      if (!row.skipped && !(row.predicted.value > 0 && std::isfinite(row.error))) __builtin_trap();
  } catch (const ftplan::UserError&) {
    // Rejected input is the expected outcome for most of the corpus.
  }
  return 0;
}
