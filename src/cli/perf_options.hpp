// Options shared by the subcommands that time a step (step, compare, and later scale, plan):
// --calibration FILE, the achieved-efficiency tables measured on a card.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "perf/efficiency.hpp"

namespace ftplan::cli {

struct CalibrationOptions {
  std::vector<std::string> files;

  void add_to(CLI::App& app);
  // The efficiency table for `gpu`: the --calibration file whose header names it, else a
  // --calibration file without a calibration header (a replacement of the defaults for every
  // card), else data/efficiency/default.yaml. `strict`: calibration files were given but none
  // fits this card -> UserError (for a command about one card).
  EfficiencyTable for_gpu(Context& ctx, const GpuSpec& gpu, bool strict) const;

 private:
  std::vector<EfficiencyTable> load(Context& ctx) const;
};

// "NVIDIA H200 NVL: default efficiencies" / "...: calibrated (FILE, measurement)".
std::string efficiency_label(const EfficiencyTable& e);

}  // namespace ftplan::cli
