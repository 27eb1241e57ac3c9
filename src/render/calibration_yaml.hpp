// Calibration files as YAML text: an efficiency table in the schema of
// data/efficiency/default.yaml (read back by perf/efficiency parse_efficiency) and a link
// calibration (read back by comm/link_calibration parse_link_calibration). Text only: the CLI
// writes it to a file.
#pragma once

#include <string>
#include <vector>

#include "comm/link_calibration.hpp"
#include "perf/efficiency.hpp"

namespace ftplan {

// `comment`: lines written as a leading `#` comment (what was measured, what kept the defaults).
std::string efficiency_yaml(const EfficiencyTable& t, const std::vector<std::string>& comment);
std::string link_calibration_yaml(const LinkFit& fit, const std::vector<std::string>& comment);

}  // namespace ftplan
