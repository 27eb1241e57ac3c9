// Text rendering of `ftplan fit`: the run, its memory per card line by line, the verdict, and how
// to make it fit.
#pragma once

#include <ostream>
#include <vector>

#include "memory/fit.hpp"
#include "memory/model_states.hpp"
#include "memory/suggest.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// `trained`: the run's trainable parameters (trainable_params).
void print_fit(std::ostream& out, const Workload& w, const Placement& p,
               const TrainedParams& trained, const MemoryEstimate& m,
               const std::vector<Suggestion>& suggestions = {});

}  // namespace ftplan
