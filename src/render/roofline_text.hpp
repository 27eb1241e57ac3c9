// Text rendering of `ftplan roofline`: one GEMM on one card — FLOPs, bytes, arithmetic intensity
// against the card's ops:byte, and the bound.
#pragma once

#include <ostream>

#include "perf/step.hpp"

namespace ftplan {

void print_roofline(std::ostream& out, const Device& d, const GemmRoofline& r);

}  // namespace ftplan
