#include "core/error.hpp"

#include "core/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

namespace ftplan {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidValue:
      return "invalid_value";
    case ErrorCode::kUnknownName:
      return "unknown_name";
    case ErrorCode::kMissingKey:
      return "missing_key";
    case ErrorCode::kBadFile:
      return "bad_file";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kInfeasible:
      return "infeasible";
  }
  return "error";
}

namespace {

// Levenshtein distance with unit costs.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string strip_separators(std::string_view s) {
  std::string out;
  for (char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out.push_back(c);
  return out;
}

}  // namespace

std::vector<std::string> closest_names(std::string_view wanted,
                                       const std::vector<std::string>& valid, std::size_t at_most) {
  const std::string w = ascii_lower(wanted);
  const std::string w_bare = strip_separators(w);
  struct Scored {
    std::size_t rank;  // 1 for a name that contains what was typed (or the reverse), else distance
    std::size_t distance;  // edit distance, orders names of equal rank
    std::string name;
  };
  std::vector<Scored> scored;
  for (const auto& name : valid) {
    const std::string n = ascii_lower(name);
    const std::size_t d = std::min(edit_distance(w, n), edit_distance(w_bare, strip_separators(n)));
    std::size_t rank = d;
    // A name that contains what was typed (or the reverse) is a strong hint: "rtx-pro" ->
    // rtx-pro-6000.
    if (!w_bare.empty() && (strip_separators(n).find(w_bare) != std::string::npos ||
                            w_bare.find(strip_separators(n)) != std::string::npos))
      rank = std::min<std::size_t>(rank, 1);
    scored.push_back({rank, d, name});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.distance < b.distance;
  });
  const std::size_t limit = std::max<std::size_t>(2, w.size() / 2);
  std::vector<std::string> out;
  for (const auto& s : scored) {
    if (out.size() >= at_most || s.rank > limit) break;
    out.push_back(s.name);
  }
  return out;
}

void throw_unknown_name(std::string_view what, std::string_view field, std::string_view wanted,
                        const std::vector<std::string>& valid) {
  auto near = closest_names(wanted, valid);
  std::string msg = fmt::format("unknown {} '{}'", what, wanted);
  if (!near.empty()) msg += fmt::format("; did you mean {}?", fmt::join(near, ", "));
  if (valid.size() <= 20) msg += fmt::format(" (valid: {})", fmt::join(valid, ", "));
  throw UserError(ErrorCode::kUnknownName, msg, std::string(field), std::move(near));
}

}  // namespace ftplan
