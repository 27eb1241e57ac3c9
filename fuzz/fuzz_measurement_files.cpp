// Fuzzes the other readers of measurements: ftplan-step/1 (ftplan calibrate step), ftplan-nccl/1
// (ftplan calibrate import of an NCCL run) with the link fit of an accepted file, whose written
// link calibration must load again, and the link calibration file itself (--calibration FILE).
#include <cstddef>
#include <cstdint>
#include <string>

#include "catalog/catalog.hpp"
#include "cli/cli.hpp"
#include "comm/link_calibration.hpp"
#include "core/error.hpp"
#include "plan/measured_step.hpp"
#include "render/calibration_yaml.hpp"

namespace {
const ftplan::Catalog& catalog() {
  static const ftplan::Catalog c = ftplan::Catalog::load(ftplan::cli::builtin_data_files());
  return c;
}

void nccl(const std::string& text) {
  using namespace ftplan;
  static const CommConstants k = load_comm_constants(catalog());
  const NcclResults r = parse_nccl_results({"fuzz.json", text, {}});
  const LinkFit fit =
      fit_link_calibration(r, catalog().gpu("h200-sxm"), LinkLevel::kNvlink, "fuzz", k);
  try {
    parse_link_calibration({"written.yaml", link_calibration_yaml(fit, {}), {}},
                           catalog().sources());
  } catch (const UserError&) {
    __builtin_trap();  // a link calibration ftplan writes must load
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ftplan;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const StepResults r = parse_step_results({"fuzz.json", text, {}});
    (void)r;
  } catch (const UserError&) {
  }
  try {
    nccl(text);
  } catch (const UserError&) {
  }
  try {
    parse_link_calibration({"fuzz.yaml", text, {}}, catalog().sources());
  } catch (const UserError&) {
  }
  return 0;
}
