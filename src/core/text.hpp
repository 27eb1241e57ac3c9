// Text helpers shared by every reader and front end: ASCII case folding for ids, keys and
// header values (never locale-dependent).
#pragma once

#include <string>
#include <string_view>

namespace ftplan {

// "NVIDIA H100" -> "nvidia h100"; bytes outside A-Z are kept as they are (UTF-8 passes through).
std::string ascii_lower(std::string_view s);
// Whether a and b are equal when A-Z and a-z are not told apart.
bool equal_ignoring_case(std::string_view a, std::string_view b);

}  // namespace ftplan
