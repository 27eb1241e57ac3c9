// Reading sourced figures ({value, source, note, dispute, reason}) from any data file, so that
// every module's table follows the same schema as the GPU cards (data/README.md "A figure").
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "catalog/figure.hpp"
#include "catalog/strict_yaml.hpp"

namespace ftplan {

using SourceTable = std::map<std::string, SourceInfo, std::less<>>;

// A numeric figure under `key` of `parent`, value in [min, max] (or null with a reason).
Figure<double> read_number_figure(StrictMap& parent, std::string_view key, double min, double max,
                                  const SourceTable& sources, bool required,
                                  bool tensor_rate = false);

// A figure that must be known: its value, or a UserError naming file and key.
double required_known(StrictMap& parent, std::string_view key, double min, double max,
                      const SourceTable& sources);

}  // namespace ftplan
