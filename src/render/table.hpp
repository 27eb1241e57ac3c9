// Aligned text tables for terminal output.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ftplan {

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  // Columns whose header ends with '>' are right-aligned (the marker is not printed).
  explicit TextTable(std::vector<std::string> headers);
  void row(std::vector<std::string> cells);
  void separator();
  void print(std::ostream& out, const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a separator
};

// Display width of UTF-8 text (counts code points; the tables use no wide characters).
std::size_t display_width(const std::string& s);

}  // namespace ftplan
