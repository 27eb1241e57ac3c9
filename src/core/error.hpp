// The three kinds of failure (STYLE.md): bad user input is a UserError (exit code 2, HTTP 400);
// an infeasible configuration is an ordinary result; a programmer error is an assert.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ftplan {

enum class ErrorCode {
  kInvalidValue,  // a value out of range or of the wrong kind
  kUnknownName,   // an id, key or option value that does not exist
  kMissingKey,    // a required key is absent
  kBadFile,       // a file cannot be read or parsed
  kUnsupported,   // valid input that ftplan (or the hardware) does not support
  kInfeasible,    // a request that cannot be evaluated for this hardware (e.g. MIG multi-card)
};

std::string_view error_code_name(ErrorCode code);

class UserError : public std::runtime_error {
 public:
  UserError(ErrorCode code, std::string message, std::string field = {},
            std::vector<std::string> suggestions = {})
      : std::runtime_error(std::move(message)),
        code_(code),
        field_(std::move(field)),
        suggestions_(std::move(suggestions)) {}
  ErrorCode code() const { return code_; }
  // The option, key or file the error is about (e.g. "gpu", "rank", "llama.json: hidden_size").
  const std::string& field() const { return field_; }
  // The closest valid names, best first, when the error is about a name (else empty).
  const std::vector<std::string>& suggestions() const { return suggestions_; }

 private:
  ErrorCode code_;
  std::string field_;
  std::vector<std::string> suggestions_;
};

// "unknown GPU 'h200nvl'; did you mean h200-nvl, h200-sxm?" — the closest valid names.
std::vector<std::string> closest_names(std::string_view wanted,
                                       const std::vector<std::string>& valid,
                                       std::size_t at_most = 3);
// An error for a name that is not among `valid`, naming the closest ones, or all when few.
[[noreturn]] void throw_unknown_name(std::string_view what, std::string_view field,
                                     std::string_view wanted,
                                     const std::vector<std::string>& valid);

}  // namespace ftplan
