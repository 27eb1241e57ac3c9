// Bytes an optimizer keeps per trained parameter, and where each figure comes from.
#pragma once

#include <string_view>

#include "core/workload.hpp"

namespace ftplan {

struct OptimizerBytes {
  double weight;    // the trained copy in the compute precision (BF16)
  double gradient;  // BF16 gradient
  double master;    // FP32 master copy (0 for pure-BF16 training)
  double states;    // per element; Adafactor's factored moment is counted per matrix instead
  bool factored;    // Adafactor: second moment as a row and a column vector per matrix (FP32)
  bool paged;       // states live in CUDA unified memory and can be evicted to the host
  std::string_view basis;
};

OptimizerBytes optimizer_bytes(Optimizer o);

}  // namespace ftplan
