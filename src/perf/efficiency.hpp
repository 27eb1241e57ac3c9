// Achieved fractions of peak, per operation class: how close real kernels come to the card's
// dense tensor rate (compute) and to its memory bandwidth (memory). Defaults are published figures
// (data/efficiency/default.yaml); a calibration file of the same schema, measured on one card,
// replaces them for that card (--calibration FILE).
#pragma once

#include <array>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "catalog/calibration_header.hpp"
#include "catalog/catalog.hpp"
#include "perf/ops.hpp"

namespace ftplan {

// One size range of a curve: applies to calls below `below` (GFLOP per call for compute, MB per
// call for memory; the last range of a curve is unbounded).
struct EfficiencyRange {
  double below = std::numeric_limits<double>::infinity();
  double fraction = 1.0;  // achieved / peak, in (0, 1]
  std::string basis;
  std::vector<std::string> sources;
};

// Ranges in ascending order of `below`; the last one unbounded.
struct EfficiencyCurve {
  std::vector<EfficiencyRange> ranges;
  // The range a call of `size` (GFLOP or MB) falls in, and its position in `ranges`.
  const EfficiencyRange& range_for(double size) const { return ranges[index_for(size)]; }
  std::size_t index_for(double size) const;
  double at(double size) const { return range_for(size).fraction; }
};

struct ClassEfficiency {
  EfficiencyCurve compute;  // ranges keyed by GFLOP per call
  EfficiencyCurve memory;   // ranges keyed by MB (1e6 B) per call
};

struct EfficiencyTable {
  std::string name;
  std::string description;
  std::string file;  // where it was read from
  // Calibration header (empty for a table of defaults): the card the measurement is for, what was
  // measured, when and with what.
  CalibrationHeader calibration;
  std::array<ClassEfficiency, kOpClassCount> classes;

  bool is_calibration() const { return calibration.present(); }
  const std::string& card() const { return calibration.card; }
  const ClassEfficiency& of(OpClass c) const { return classes[static_cast<std::size_t>(c)]; }
  ClassEfficiency& of(OpClass c) { return classes[static_cast<std::size_t>(c)]; }
  // Achieved fraction of the peak rate for one call of `flops_per_call`, and of the bandwidth
  // for one call moving `bytes_per_call`.
  double compute(OpClass c, Flops flops_per_call) const {
    return of(c).compute.at(flops_per_call.value / 1e9);
  }
  double memory(OpClass c, Bytes bytes_per_call) const {
    return of(c).memory.at(bytes_per_call.value / 1e6);
  }
};

// Parses a table (the defaults or a calibration file) strictly: every class present, fractions
// in (0, 1], ranges ascending, every `source` defined in data/sources*.yaml.
EfficiencyTable parse_efficiency(const DataFile& file,
                                 const std::map<std::string, SourceInfo, std::less<>>& sources);
// data/efficiency/default.yaml of the catalog.
EfficiencyTable default_efficiency(const Catalog& catalog);

}  // namespace ftplan
