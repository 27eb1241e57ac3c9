// One table between an enumeration and its user-facing names: name(), names() and parse() with a
// "did you mean" error, so every choice (method, sharding, optimizer, ...) is read and written
// alike.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace ftplan {

template <class E, std::size_t N>
struct NameTable {
  std::array<std::pair<E, std::string_view>, N> entries;

  std::string_view name(E e) const {
    for (const auto& [v, n] : entries)
      if (v == e) return n;
    return "?";
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(N);
    for (const auto& [v, n] : entries)
      out.emplace_back(n);
    return out;
  }
  std::optional<E> find(std::string_view s) const {
    for (const auto& [v, n] : entries)
      if (n == s) return v;
    return std::nullopt;
  }
  // `what` names the kind of choice in the message ("method"); `field` the option or key.
  E parse(std::string_view s, std::string_view what, std::string_view field) const {
    if (const auto v = find(s)) return *v;
    throw_unknown_name(what, field, s, names());
  }
};

}  // namespace ftplan
