#include "cli/perf_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm/link_calibration.hpp"
#include "core/error.hpp"
#include "render/reason_words.hpp"

namespace ftplan::cli {

namespace {

constexpr const char* kDirVariable = "FTPLAN_CALIBRATION_DIR";

void check_card(Context& ctx, const std::string& card, const std::string& file) {
  if (card.empty() || ctx.catalog().find_gpu(card)) return;
  try {
    throw_unknown_name("card", "calibration", card, ctx.catalog().gpu_ids());
  } catch (const UserError& e) {
    throw UserError(ErrorCode::kUnknownName,
                    fmt::format("{}: calibration.card: {}", file, e.what()), "calibration");
  }
}

void check_unique(const Calibrations& c) {
  const auto& t = c.efficiency;
  for (std::size_t i = 0; i < t.size(); ++i)
    for (std::size_t j = i + 1; j < t.size(); ++j)
      if (t[i].card() == t[j].card())
        throw UserError(
            ErrorCode::kInvalidValue,
            fmt::format("calibration files {} and {} are both for {}; give one per "
                        "card",
                        t[i].file, t[j].file, t[i].card().empty() ? "every card" : t[i].card()),
            "calibration");
  const auto& l = c.links;
  for (std::size_t i = 0; i < l.size(); ++i)
    for (std::size_t j = i + 1; j < l.size(); ++j)
      if (l[i].card == l[j].card && l[i].level == l[j].level)
        throw UserError(ErrorCode::kInvalidValue,
                        fmt::format("link calibrations {} and {} are both for {} on {}; give one",
                                    l[i].file, l[j].file, link_level_name(l[i].level), l[i].card),
                        "calibration");
}

// One file: a link calibration (top-level `links`) or an efficiency table.
void load_file(Context& ctx, const std::string& path, bool need_card, Calibrations& out) {
  const std::string text = ctx.read_file(path, "calibration");
  const DataFile file{path, text, {}};
  const auto& sources = ctx.catalog().sources();
  if (is_link_calibration(file)) {
    LinkCalibrationFile f = parse_link_calibration(file, sources);
    check_card(ctx, f.header.card, path);
    out.links.insert(out.links.end(), f.links.begin(), f.links.end());
    return;
  }
  EfficiencyTable t = parse_efficiency(file, sources);
  if (need_card && !t.is_calibration())
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: a file in {} must name its card in a 'calibration' header "
                                "(a table for every card is given with --calibration FILE)",
                                path, kDirVariable),
                    "calibration");
  check_card(ctx, t.card(), path);
  check_architectures(t, ctx.catalog());
  inherit_host_and_fit(t, default_efficiency(ctx.catalog()));
  out.efficiency.push_back(std::move(t));
}

}  // namespace

void CalibrationOptions::add_to(CLI::App& app) {
  app.add_option("--calibration", files,
                 "Calibration file measured on a card (ftplan calibrate import): achieved "
                 "efficiencies (schema of data/efficiency/default.yaml with a 'calibration' "
                 "header naming the card) or link fractions; repeat for several. Default: every "
                 "*.yaml in $FTPLAN_CALIBRATION_DIR");
}

Calibrations CalibrationOptions::load(Context& ctx) const {
  Calibrations out;
  if (!files.empty()) {
    for (const auto& path : files)
      load_file(ctx, path, false, out);
  } else if (!ctx.calibration_dir.empty()) {
    out.from_directory = true;
    for (const auto& path : ctx.list_files(ctx.calibration_dir, ".yaml", kDirVariable))
      load_file(ctx, path, true, out);
  }
  check_unique(out);
  return out;
}

std::optional<EfficiencyTable> CalibrationOptions::find_for_gpu(Context& ctx, const GpuSpec& gpu,
                                                                bool strict) const {
  Calibrations c = load(ctx);
  const EfficiencyTable* general = nullptr;
  for (const auto& t : c.efficiency) {
    if (t.card() == gpu.id) return t;
    if (!t.is_calibration()) general = &t;
  }
  if (general) return *general;
  if (strict && !c.from_directory && !c.efficiency.empty()) {
    std::vector<std::string> which;
    for (const auto& t : c.efficiency)
      which.push_back(fmt::format("{} is for {}", t.file, t.card()));
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("no --calibration file is for {}: {}; a calibration measured on "
                                "one card does not apply to another",
                                gpu.id, fmt::join(which, ", ")),
                    "calibration");
  }
  return std::nullopt;
}

EfficiencyTable CalibrationOptions::for_gpu(Context& ctx, const GpuSpec& gpu, bool strict) const {
  if (auto t = find_for_gpu(ctx, gpu, strict)) return *std::move(t);
  return default_efficiency(ctx.catalog());
}

void require_training_format(const GpuSpec& g, ComputeFormat f, const TrainingFormats& formats) {
  formats.require(g, f);
  const Device d = make_device(g);
  const TensorPrecision p = tensor_precision_of(f);
  if (!d.rate(p))
    throw UserError(ErrorCode::kUnsupported,
                    fmt::format("cannot time {} training: {}; give the rate in a card file "
                                "(--gpu FILE, data/gpus schema) to estimate it",
                                formats.format(f).name, word_reason(d.missing_rate(p))),
                    "gpu");
}

}  // namespace ftplan::cli
