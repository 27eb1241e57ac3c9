// Text rendering of `ftplan validate`: the memory model's predicted peak against each published
// measurement, the runs it does not cover, and the error per source.
#pragma once

#include <ostream>
#include <string>

#include "memory/measured_runs.hpp"

namespace ftplan {

// `file`: the path of the measured-runs file the report was made from.
void print_validation(std::ostream& out, const std::string& file, const ValidationReport& r);

}  // namespace ftplan
