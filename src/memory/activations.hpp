// Activation memory and runtime overheads of one card during a training step.
#pragma once

#include "core/units.hpp"
#include "core/workload.hpp"

namespace ftplan {

struct RuntimeMemory {
  Bytes activations;  // saved activations, logits/loss buffers, backward temporaries
  Bytes overhead;     // CUDA context, library workspaces, allocator reserve
};

// Placeholder until the activation model lands: model states only (both terms zero).
RuntimeMemory runtime_memory(const Workload& w, const Placement& p);

}  // namespace ftplan
