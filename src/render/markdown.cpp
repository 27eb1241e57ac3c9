#include "render/markdown.hpp"

namespace ftplan {

std::string markdown_cell(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\n') {
      out += ' ';
      continue;
    }
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace ftplan
