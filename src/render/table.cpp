#include "render/table.hpp"

#include <algorithm>

namespace ftplan {

std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

TextTable::TextTable(std::vector<std::string> headers) {
  for (auto& h : headers) {
    if (!h.empty() && h.back() == '>') {
      h.pop_back();
      align_.push_back(Align::kRight);
    } else {
      align_.push_back(Align::kLeft);
    }
    headers_.push_back(std::move(h));
  }
}

void TextTable::row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::separator() {
  rows_.emplace_back();
}

void TextTable::print(std::ostream& out, const std::string& indent) const {
  std::vector<std::size_t> width(headers_.size(), 0);
  for (std::size_t i = 0; i < headers_.size(); ++i)
    width[i] = display_width(headers_[i]);
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size(); ++i)
      width[i] = std::max(width[i], display_width(r[i]));
  auto emit = [&](const std::vector<std::string>& cells) {
    std::string line = indent;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::size_t pad = width[i] - display_width(cells[i]);
      if (align_[i] == Align::kRight)
        line += std::string(pad, ' ') + cells[i];
      else
        line += cells[i] + (i + 1 < cells.size() ? std::string(pad, ' ') : "");
      if (i + 1 < cells.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out << line << '\n';
  };
  emit(headers_);
  std::size_t total = 0;
  for (auto w : width)
    total += w + 2;
  const std::string rule(total > 2 ? total - 2 : 0, '-');
  out << indent << rule << '\n';
  for (const auto& r : rows_) {
    if (r.empty())
      out << indent << rule << '\n';
    else
      emit(r);
  }
}

}  // namespace ftplan
