// Text renderings of `ftplan compare`: two cards side by side (dense rates, bandwidth, ops:byte,
// ratios, training formats), and one workload's step time on both.
#pragma once

#include <ostream>

#include "render/perf_json.hpp"

namespace ftplan {

// `formats`: the training-format table each card's support is read from.
void print_rates(std::ostream& out, const Device& a, const Device& b,
                 const TrainingFormats& formats);
void print_step_comparison(std::ostream& out, const Device& a, const Device& b, const StepPair& sp);

}  // namespace ftplan
