#include "workload/loss.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace ftplan {

LossKind resolve_loss(std::string_view name, bool chunked_flag, const StackProfile& stack,
                      std::string_view field) {
  if (name.empty()) return chunked_flag ? LossKind::kChunked : stack.loss;
  const LossKind k = parse_loss_kind(name, field);
  if (chunked_flag && k != LossKind::kChunked)
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("{} {} contradicts chunked_loss (the chunked loss); give one", field, name),
        std::string(field));
  return k;
}

}  // namespace ftplan
