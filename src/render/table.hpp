// Aligned text tables for terminal output, and sentences wrapped to the width of a terminal.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace ftplan {

// The widest line of text output, in displayed characters, unless a front end sets another.
inline constexpr std::size_t kTerminalColumns = 100;

// The widest line text output may take now (0: no limit): kTerminalColumns, or what the innermost
// ScopedTextWidth of this thread set (the CLI: none with --wide).
std::size_t text_width();
class ScopedTextWidth {
 public:
  explicit ScopedTextWidth(std::size_t columns);
  ~ScopedTextWidth();
  ScopedTextWidth(const ScopedTextWidth&) = delete;
  ScopedTextWidth& operator=(const ScopedTextWidth&) = delete;

 private:
  std::size_t previous_;
};

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  // Columns whose header ends with '>' are right-aligned (the marker is not printed).
  explicit TextTable(std::vector<std::string> headers);
  void row(std::vector<std::string> cells);
  void separator();
  // Within text_width(): the widest columns are narrowed and their cells wrapped at spaces (figures
  // in right-aligned columns are never broken); a table that cannot fit so is printed one row
  // after the other, a "header: cell" line for each column.
  void print(std::ostream& out, const std::string& indent = "") const;

 private:
  void print_stacked(std::ostream& out, const std::string& indent, std::size_t limit) const;

  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a separator
};

// Display width of UTF-8 text (counts code points; the tables use no wide characters).
std::size_t display_width(std::string_view s);

// `text` in lines of at most `width` displayed characters, broken at spaces; a word longer than a
// line is cut, after its last '-' or '/' that fits where it has one. width 0: one line.
std::vector<std::string> wrap_words(std::string_view text, std::size_t width);

// `text` with each line longer than `width` wrapped at spaces; the continuation lines start where
// the line's words do (after its indent and a "- " bullet). width 0: `text` as it is.
std::string wrap_lines(std::string_view text, std::size_t width);

}  // namespace ftplan
