#include "cli/numbers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "core/chars.hpp"

namespace ftplan::cli {

namespace {

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// The number `text` writes in decimal or scientific notation (a leading '+' allowed), if the
// whole text is one.
std::optional<double> parse_number(const std::string& text) {
  std::string_view t = text;
  if (t.starts_with('+')) t.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = ftplan::chars_to_double(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return value;
}

// What is wrong with `text` as a number that is finite and not negative ("" when nothing).
std::string check_finite_non_negative(const std::string& text, const std::optional<double>& value,
                                      std::string_view kind) {
  if (!value) return fmt::format("expected {}, got '{}'", kind, text);
  if (std::isnan(*value) || std::isinf(*value))
    return fmt::format("expected {}, got {} (not a finite number)", kind, text);
  if (*value < 0) return fmt::format("expected {} (0 or more), got {}", kind, text);
  return {};
}

}  // namespace

std::string read_whole_number(std::string& text) {
  const std::string t = trimmed(text);
  const auto value = parse_number(t);
  if (auto wrong = check_finite_non_negative(text, value, "a whole number"); !wrong.empty())
    return wrong;
  if (*value != std::floor(*value)) return fmt::format("expected a whole number, got {}", text);
  // Above 2^53 a double skips integers: digits as written stay as written (the option's
  // conversion checks its range), anything else that large is refused.
  const bool digits = !t.empty() && std::all_of(t.begin(), t.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '+';
  });
  if (digits) {
    text = t.starts_with('+') ? t.substr(1) : t;
    return {};
  }
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (*value > kExact)
    return fmt::format("expected a whole number, got {} (too large to be exact; write its digits)",
                       text);
  text = fmt::format("{}", static_cast<long long>(*value));
  return {};
}

std::string read_real_number(std::string& text) {
  const std::string t = trimmed(text);
  const auto value = parse_number(t);
  if (auto wrong = check_finite_non_negative(text, value, "a number"); !wrong.empty()) return wrong;
  text = t.starts_with('+') ? t.substr(1) : t;
  return {};
}

void check_number_options(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    if (o->get_type_size() == 0) continue;  // a flag
    const std::string type = o->get_type_name();
    if (type == "INT" || type == "UINT")
      o->transform(CLI::Validator(read_whole_number, "", "whole number"));
    else if (type == "FLOAT")
      o->transform(CLI::Validator(read_real_number, "", "number"));
  }
  for (CLI::App* sub : app.get_subcommands({}))
    check_number_options(*sub);
}

}  // namespace ftplan::cli
