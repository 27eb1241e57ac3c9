// The loss a run uses, from its options and its stack (data/stacks `memory.loss`).
#pragma once

#include <string_view>

#include "core/choices.hpp"
#include "workload/stack.hpp"

namespace ftplan {

// `name` (empty: not given) of --loss / `loss:`; `chunked_flag`: the older --chunked-loss. Not
// given: chunked with the flag, else the stack's. A name the flag contradicts is a UserError.
LossKind resolve_loss(std::string_view name, bool chunked_flag, const StackProfile& stack,
                      std::string_view field = "loss");

}  // namespace ftplan
