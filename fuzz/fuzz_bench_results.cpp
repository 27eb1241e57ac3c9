// Fuzzes the ftplan-bench/1 results parser (ftplan calibrate import / show) and what follows an
// accepted file: the measurements on the H200 SXM, the efficiency fit, and the written
// calibration, which must load again with the parser of --calibration FILE.
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/catalog.hpp"
#include "cli/cli.hpp"
#include "core/error.hpp"
#include "perf/calibration.hpp"
#include "render/calibration_yaml.hpp"

namespace {
const ftplan::Catalog& catalog() {
  static const ftplan::Catalog c = ftplan::Catalog::load(ftplan::cli::builtin_data_files());
  return c;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ftplan;
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const EfficiencyTable defaults = default_efficiency(catalog());
  const GpuSpec& gpu = catalog().gpu("h200-sxm");
  try {
    const BenchResults r = parse_bench_results({"fuzz.json", text, {}}, FailedBenchmarks::kKeep);
    const auto m = measure_benchmarks(r, make_device(gpu), defaults, TensorPrecision::kBF16);
    const CalibrationFit fit =
        fit_calibration(m, defaults, bench_calibration_header(r, gpu, "fuzz"));
    for (const auto& range : fit.ranges)
      if (!(range.fraction > 0 && range.fraction <= 1)) __builtin_trap();
    const std::string yaml = efficiency_yaml(fit.table, {"fuzz"});
    try {
      parse_efficiency({"written.yaml", yaml, {}}, catalog().sources());
    } catch (const UserError&) {
      __builtin_trap();  // a calibration ftplan writes must load
    }
  } catch (const UserError&) {
  }
  return 0;
}
