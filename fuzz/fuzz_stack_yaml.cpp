// Fuzzes the software-stack profile parser (data/stacks/*.yaml, or a --data folder's) against the
// built-in source table.
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/catalog.hpp"
#include "cli/cli.hpp"
#include "core/error.hpp"
#include "workload/stack.hpp"

namespace {
const ftplan::Catalog& catalog() {
  static const ftplan::Catalog c = ftplan::Catalog::load(ftplan::cli::builtin_data_files());
  return c;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ftplan::StackProfile s =
        ftplan::parse_stack({"fuzz.yaml", text, {}}, catalog().sources());
    // An accepted profile has a name and a number of optimizer passes the step model can use.
    if (s.name.empty() || !(s.optimizer_passes >= 1) || !(s.optimizer_launches_per_tensor >= 0))
      __builtin_trap();
  } catch (const ftplan::UserError&) {
  }
  return 0;
}
