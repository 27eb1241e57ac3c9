// Options shared by the subcommands that time a step or a link (step, compare, roofline, scale,
// calibrate): --calibration FILE, the achieved fractions measured on a card (efficiency tables
// and link calibrations), or when none is given the files of $FTPLAN_CALIBRATION_DIR.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "comm/topology.hpp"
#include "perf/device.hpp"
#include "perf/efficiency.hpp"

namespace ftplan::cli {

// Every calibration in force: efficiency tables (each for the card its header names, or one
// without a header for every card) and link calibrations (each for one card and link kind).
struct Calibrations {
  std::vector<EfficiencyTable> efficiency;
  std::vector<LinkCalibration> links;
  bool from_directory = false;  // read from FTPLAN_CALIBRATION_DIR, not from --calibration
};

struct CalibrationOptions {
  std::vector<std::string> files;

  void add_to(CLI::App& app);
  // The --calibration files, or without them every *.yaml of ctx.calibration_dir (each must name
  // its card). Two files for one card (or one card and link kind) are a UserError, and so is a
  // card the catalog lacks.
  Calibrations load(Context& ctx) const;
  // The efficiency table for `gpu`: the calibration whose header names it, else one without a
  // header (a replacement of the defaults for every card), else data/efficiency/default.yaml.
  // `strict`: --calibration files were given but none fits this card -> UserError (for a command
  // about one card).
  EfficiencyTable for_gpu(Context& ctx, const GpuSpec& gpu, bool strict) const;
  // The same without the fallback to the defaults: nothing when no calibration applies.
  std::optional<EfficiencyTable> find_for_gpu(Context& ctx, const GpuSpec& gpu, bool strict) const;
};

// UserError (exit 2) unless `g` supports `f` and publishes the dense rate `f` runs at; the message
// names the format, the card and the reason (for a command that was asked for this format).
void require_training_format(const GpuSpec& g, ComputeFormat f, const TrainingFormats& formats);

}  // namespace ftplan::cli
