// Reading numbers from text: the strtod reading that the WebAssembly build uses (its libc++ has no
// floating-point std::from_chars) reads every text as std::from_chars does: the same value, the
// same end, the same error.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <string>

#include "core/chars.hpp"

namespace ftplan {
namespace {

TEST(Chars, StrtodReadingAgreesWithFromChars) {
  const char* texts[] = {"0",       "1",        "-1",
                         "3.25",    "1e3",      "1E-3",
                         "2.5e+10", ".5",       "5.",
                         "-.5",     "1e",       "1e+",
                         "1ex",     "12abc",    "",
                         "-",       ".",        "+1",
                         " 1",      "0x10",     "inf",
                         "-inf",    "Inf",      "infinity",
                         "infin",   "nan",      "NaN",
                         "1.5.2",   "1e400",    "-1e400",
                         "150.8",   "0.000001", "18446744073709551616",
                         "7 GB"};
  for (const std::string text : texts) {
    double expected = -7;
    double got = -7;
    const auto want = std::from_chars(text.data(), text.data() + text.size(), expected);
    const auto have = chars_to_double_by_strtod(text.data(), text.data() + text.size(), got);
    SCOPED_TRACE("text '" + text + "'");
    EXPECT_EQ(have.ec, want.ec);
    EXPECT_EQ(have.ptr - text.data(), want.ptr - text.data());
    if (want.ec == std::errc() && !std::isnan(expected)) EXPECT_EQ(got, expected);
    if (want.ec == std::errc() && std::isnan(expected)) EXPECT_TRUE(std::isnan(got));
  }
}

}  // namespace
}  // namespace ftplan
