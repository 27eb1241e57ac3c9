// Numbers as a reader of the report's language writes them: digit grouping and decimal mark
// (English 1,792.5; German 1.792,5, as the seed article prints "1.670,5" and "150,8 GB").
#pragma once

#include <string>

namespace ftplan {

struct NumberStyle {
  std::string decimal_mark = ".";  // German: ","
  std::string group_mark = ",";    // between thousands; German: "."
};

// `v` with `decimals` places, thousands grouped from 1,000 up ("-0" printed as "0").
std::string localized_number(double v, int decimals, const NumberStyle& style);

}  // namespace ftplan
