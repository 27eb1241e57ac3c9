#include "render/localized_number.hpp"

#include "core/format.hpp"

namespace ftplan {

std::string localized_number(double v, int decimals, const NumberStyle& style) {
  std::string s = format_fixed(v, decimals);
  if (s.find_first_not_of("-0.") == std::string::npos && s.front() == '-') s.erase(0, 1);
  const bool negative = s.front() == '-';
  if (negative) s.erase(0, 1);
  const std::size_t dot = s.find('.');
  std::string whole = s.substr(0, dot);
  const std::string fraction = dot == std::string::npos ? "" : s.substr(dot + 1);
  for (std::size_t i = whole.size(); i > 3; i -= 3)
    whole.insert(i - 3, style.group_mark);
  std::string out = negative ? "-" + whole : whole;
  if (!fraction.empty()) out += style.decimal_mark + fraction;
  return out;
}

}  // namespace ftplan
