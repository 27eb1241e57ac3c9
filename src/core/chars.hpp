// Reading a decimal number from text, as std::from_chars does (no leading whitespace or '+', no
// hexadecimal; "inf" and "nan" taken), in one home. Where the standard library lacks from_chars for
// floating point (the WebAssembly build's libc++), the longest prefix of that form is read by
// strtod, which the "C" locale of that build reads the same way.
#pragma once

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>
#include <system_error>

namespace ftplan {

namespace chars_detail {
inline bool digit(char c) {
  return c >= '0' && c <= '9';
}
inline bool starts_with_word(const char* p, const char* last, const char* word) {
  for (; *word; ++p, ++word)
    if (p == last || (*p | 0x20) != *word) return false;
  return true;
}
}  // namespace chars_detail

// The strtod reading, on every build (the tests hold it against std::from_chars).
inline std::from_chars_result chars_to_double_by_strtod(const char* first, const char* last,
                                                        double& value) {
  using chars_detail::digit;
  using chars_detail::starts_with_word;
  const char* p = first;
  if (p != last && *p == '-') ++p;
  const char* end = nullptr;
  if (starts_with_word(p, last, "infinity"))
    end = p + 8;
  else if (starts_with_word(p, last, "inf") || starts_with_word(p, last, "nan"))
    end = p + 3;
  else {
    const char* q = p;
    std::size_t digits = 0;
    for (; q != last && digit(*q); ++q)
      ++digits;
    if (q != last && *q == '.')
      for (++q; q != last && digit(*q); ++q)
        ++digits;
    if (digits == 0) return {first, std::errc::invalid_argument};
    end = q;
    if (q != last && (*q == 'e' || *q == 'E')) {
      const char* e = q + 1;
      if (e != last && (*e == '+' || *e == '-')) ++e;
      if (e != last && digit(*e)) {
        while (e != last && digit(*e))
          ++e;
        end = e;
      }
    }
  }
  const std::string text(first, end);
  errno = 0;
  const double v = std::strtod(text.c_str(), nullptr);
  if (errno == ERANGE) return {end, std::errc::result_out_of_range};
  value = v;
  return {end, std::errc()};
}

inline std::from_chars_result chars_to_double(const char* first, const char* last, double& value) {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  return std::from_chars(first, last, value);
#else
  return chars_to_double_by_strtod(first, last, value);
#endif
}

}  // namespace ftplan
