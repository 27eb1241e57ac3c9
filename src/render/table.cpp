#include "render/table.hpp"

#include <algorithm>

namespace ftplan {

namespace {

// A left-aligned cell may be narrowed down to its longest word, but no word forces a column wider
// than this (longer ones are cut).
constexpr std::size_t kLongestUnbrokenWord = 16;

thread_local std::size_t current_width = kTerminalColumns;

bool continues_utf8(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// The byte offset after the first `columns` characters of `s` (s.size() when it is shorter).
std::size_t offset_of_column(std::string_view s, std::size_t columns) {
  std::size_t i = 0;
  for (std::size_t n = 0; i < s.size(); ++i) {
    if (continues_utf8(s[i])) continue;
    if (n++ == columns) break;
  }
  return i;
}

// The widest piece of `s` that wrap_words keeps on one line: words end at spaces and after '-'.
std::size_t longest_word(std::string_view s) {
  std::size_t longest = 0, piece = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ' ') {
      piece = 0;
      continue;
    }
    if (!continues_utf8(s[i])) longest = std::max(longest, ++piece);
    if (s[i] == '-') piece = 0;
  }
  return longest;
}

}  // namespace

std::size_t text_width() {
  return current_width;
}

ScopedTextWidth::ScopedTextWidth(std::size_t columns) : previous_(current_width) {
  current_width = columns;
}

ScopedTextWidth::~ScopedTextWidth() {
  current_width = previous_;
}

std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for (char c : s)
    if (!continues_utf8(c)) ++n;
  return n;
}

std::vector<std::string> wrap_words(std::string_view text, std::size_t width) {
  if (width == 0 || display_width(text) <= width) return {std::string(text)};
  std::vector<std::string> lines;
  std::string line;
  auto flush = [&] {
    if (!line.empty()) lines.push_back(std::move(line));
    line.clear();
  };
  for (std::size_t at = 0; at <= text.size();) {
    std::size_t end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    if (!line.empty() && display_width(line) + 1 + display_width(word) <= width) {
      line += ' ';
      line += word;
      continue;
    }
    flush();
    while (display_width(word) > width) {
      const std::size_t cut = offset_of_column(word, width);
      const std::size_t mark = word.substr(0, cut).find_last_of("-/");
      const std::size_t take = mark != std::string_view::npos && mark > 0 ? mark + 1 : cut;
      lines.emplace_back(word.substr(0, take));
      word.remove_prefix(take);
    }
    line = std::string(word);
  }
  flush();
  if (lines.empty()) lines.emplace_back();
  return lines;
}

std::string wrap_lines(std::string_view text, std::size_t width) {
  if (width == 0) return std::string(text);
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    const bool newline = end != std::string_view::npos;
    if (!newline) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (display_width(line) <= width) {
      out += line;
    } else {
      std::size_t hang = std::min(line.find_first_not_of(' '), line.size());
      if (line.compare(hang, 2, "- ") == 0 || line.compare(hang, 2, "* ") == 0) hang += 2;
      if (hang + 20 > width) hang = 0;  // a line this deep in: wrap it from the margin
      const auto lines = wrap_words(line.substr(hang), width - hang);
      for (std::size_t i = 0; i < lines.size(); ++i) {
        if (i > 0) out += '\n';
        out += i == 0 ? std::string(line.substr(0, hang)) : std::string(hang, ' ');
        out += lines[i];
      }
    }
    if (newline) out += '\n';
  }
  return out;
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
  const std::size_t columns = headers_.size();
  // Each column's natural width, and the least it may be narrowed to: its longest header word
  // (words break after hyphens too), and for right-aligned columns (figures) its widest cell, for
  // left-aligned ones its longest word up to kLongestUnbrokenWord.
  std::vector<std::size_t> width(columns, 0), least(columns, 0), widest_cell(columns, 0);
  for (std::size_t i = 0; i < columns; ++i) {
    width[i] = display_width(headers_[i]);
    least[i] = std::min(longest_word(headers_[i]), kLongestUnbrokenWord);
  }
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size(); ++i) {
      widest_cell[i] = std::max(widest_cell[i], display_width(r[i]));
      least[i] = std::max(least[i], align_[i] == Align::kRight
                                        ? display_width(r[i])
                                        : std::min(longest_word(r[i]), kLongestUnbrokenWord));
    }
  for (std::size_t i = 0; i < columns; ++i)
    width[i] = std::max(width[i], widest_cell[i]);
  auto total = [&] {
    std::size_t sum = display_width(indent) + (columns > 0 ? 2 * (columns - 1) : 0);
    for (auto w : width)
      sum += w;
    return sum;
  };
  const std::size_t limit = text_width();
  // Narrow the widest column that can give a character down to `floor`, one character at a time,
  // until the table fits: first headers wider than their cells (a wrapped header costs one line),
  // then the cells.
  auto narrow = [&](const std::vector<std::size_t>& floor) {
    while (limit > 0 && total() > limit) {
      std::size_t widest = columns;
      for (std::size_t i = 0; i < columns; ++i)
        if (width[i] > floor[i] && (widest == columns || width[i] > width[widest])) widest = i;
      if (widest == columns) return;
      --width[widest];
    }
  };
  std::vector<std::size_t> cells_floor(columns);
  for (std::size_t i = 0; i < columns; ++i)
    cells_floor[i] = std::max(widest_cell[i], least[i]);
  narrow(cells_floor);
  narrow(least);
  if (limit > 0 && total() > limit) {
    print_stacked(out, indent, limit);
    return;
  }
  // A row as lines: each cell wrapped within its column; header cells sit on the rule.
  auto emit = [&](const std::vector<std::string>& cells, bool header) {
    std::vector<std::vector<std::string>> wrapped(columns);
    std::size_t height = 1;
    for (std::size_t i = 0; i < columns; ++i) {
      wrapped[i] = wrap_words(cells[i], width[i]);
      height = std::max(height, wrapped[i].size());
    }
    for (auto& w : wrapped)
      if (header) w.insert(w.begin(), height - w.size(), std::string());
    for (std::size_t l = 0; l < height; ++l) {
      std::string line = indent;
      for (std::size_t i = 0; i < columns; ++i) {
        const std::string cell = l < wrapped[i].size() ? wrapped[i][l] : std::string();
        const std::size_t pad = width[i] - std::min(width[i], display_width(cell));
        if (align_[i] == Align::kRight)
          line += std::string(pad, ' ') + cell;
        else
          line += cell + (i + 1 < columns ? std::string(pad, ' ') : "");
        if (i + 1 < columns) line += "  ";
      }
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      out << line << '\n';
    }
  };
  emit(headers_, true);
  const std::string rule(total() - display_width(indent), '-');
  out << indent << rule << '\n';
  for (const auto& r : rows_) {
    if (r.empty())
      out << indent << rule << '\n';
    else
      emit(r, false);
  }
}

void TextTable::print_stacked(std::ostream& out, const std::string& indent,
                              std::size_t limit) const {
  std::string text;
  bool first = true;
  for (const auto& r : rows_) {
    if (r.empty()) continue;
    if (!first) text += '\n';
    first = false;
    text += indent + headers_[0] + ": " + r[0] + '\n';
    for (std::size_t i = 1; i < headers_.size(); ++i)
      if (!r[i].empty()) text += indent + "  - " + headers_[i] + ": " + r[i] + '\n';
  }
  out << wrap_lines(text, limit);
}

}  // namespace ftplan
