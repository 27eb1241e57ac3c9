// Text rendering of `ftplan fit`: the run, its memory per card line by line, and the verdict.
#pragma once

#include <ostream>

#include "memory/fit.hpp"
#include "memory/model_states.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// `trained`: the run's trainable parameters (trainable_params).
void print_fit(std::ostream& out, const Workload& w, const Placement& p,
               const TrainedParams& trained, const MemoryEstimate& m);

}  // namespace ftplan
