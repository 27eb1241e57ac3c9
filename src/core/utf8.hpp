// UTF-8 checks for text that comes from outside (files, requests, command-line values): where the
// first invalid byte is, and cutting text for a message on a character boundary.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ftplan {

// The offset of the first byte that does not start or continue a well-formed UTF-8 character
// (overlong forms, surrogates and code points above U+10FFFF included), or npos when all is valid.
std::size_t first_invalid_utf8(std::string_view text);
inline bool valid_utf8(std::string_view text) {
  return first_invalid_utf8(text) == std::string_view::npos;
}

// At most `max_bytes` of `text`, cut before a character that would not fit whole, with "..."
// appended when something was cut (the result is then at most max_bytes + 3 bytes).
std::string cut_utf8(std::string_view text, std::size_t max_bytes);

// `text` with every invalid byte replaced by '?', for quoting input that failed the check.
std::string printable_utf8(std::string_view text);

// `text` as a message quotes it: printable (printable_utf8), then cut (cut_utf8). The default fits
// a tensor name or a key.
std::string shown_text(std::string_view text, std::size_t max_bytes = 120);

// "line L, column C" of byte `offset` in `text` (1-based; columns count bytes).
std::string line_and_column(std::string_view text, std::size_t offset);

}  // namespace ftplan
