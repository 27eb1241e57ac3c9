// Text for Markdown output.
#pragma once

#include <string>

namespace ftplan {

// Text inside a Markdown table cell: one line (a line break becomes a space), and `|` escaped so
// it does not end the cell.
std::string markdown_cell(const std::string& text);

}  // namespace ftplan
