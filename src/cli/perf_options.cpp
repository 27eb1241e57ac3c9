#include "cli/perf_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

namespace ftplan::cli {

void CalibrationOptions::add_to(CLI::App& app) {
  app.add_option("--calibration", files,
                 "Achieved-efficiency file measured on a card (schema of "
                 "data/efficiency/default.yaml with a 'calibration' header naming the card); "
                 "repeat for several cards");
}

std::vector<EfficiencyTable> CalibrationOptions::load(Context& ctx) const {
  std::vector<EfficiencyTable> out;
  for (const auto& path : files) {
    const std::string text = ctx.read_file(path, "calibration");
    out.push_back(parse_efficiency({path, text, {}}, ctx.catalog().sources()));
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    for (std::size_t j = i + 1; j < out.size(); ++j)
      if (out[i].card == out[j].card)
        throw UserError(
            ErrorCode::kInvalidValue,
            fmt::format("--calibration {} and {} are both for {}; give one per card", out[i].file,
                        out[j].file, out[i].card.empty() ? "every card" : out[i].card),
            "calibration");
  return out;
}

EfficiencyTable CalibrationOptions::for_gpu(Context& ctx, const GpuSpec& gpu, bool strict) const {
  std::vector<EfficiencyTable> tables = load(ctx);
  const EfficiencyTable* general = nullptr;
  for (const auto& t : tables) {
    if (t.card == gpu.id) return t;
    if (!t.is_calibration()) general = &t;
  }
  if (general) return *general;
  if (strict && !tables.empty()) {
    std::vector<std::string> which;
    for (const auto& t : tables)
      which.push_back(fmt::format("{} is for {}", t.file, t.card));
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("no --calibration file is for {}: {}; a calibration measured on "
                                "one card does not apply to another",
                                gpu.id, fmt::join(which, ", ")),
                    "calibration");
  }
  return default_efficiency(ctx.catalog());
}

std::string efficiency_label(const EfficiencyTable& e) {
  if (e.is_calibration())
    return fmt::format("calibrated on {} ({}; {}, {})", e.card, e.file, e.measurement,
                       e.measured_on);
  return fmt::format("{} ({})", e.name, e.file);
}

}  // namespace ftplan::cli
