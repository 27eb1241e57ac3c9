// Fuzzes the `ftplan pack` queue-file parser (strict YAML schema).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "mig/pack_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ftplan::PackFile pf = ftplan::parse_pack_file(text, "fuzz.yaml");
    // An accepted file holds at least one experiment, each with a count in range and a name.
    if (pf.experiments.empty() || pf.total_jobs() > ftplan::kMaxPackJobs) __builtin_trap();
    for (const auto& x : pf.experiments)
      if (x.count < 1 || x.count > ftplan::kMaxPackJobsPerExperiment || x.name.empty() ||
          x.model.empty())
        __builtin_trap();
  } catch (const ftplan::UserError&) {
  }
  return 0;
}
