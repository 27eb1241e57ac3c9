// The report document as Markdown (GitHub-flavoured: pipe tables). Charts become their title and
// description: the figures they draw are in the tables beside them.
#include <fmt/format.h>

#include "render/markdown.hpp"
#include "render/report.hpp"

namespace ftplan {

namespace {

void write_markdown_table(std::string& out, const DocTable& t) {
  if (!t.caption.empty()) out += fmt::format("**{}**\n\n", markdown_cell(t.caption));
  out += "|";
  for (const auto& h : t.headers)
    out += " " + markdown_cell(h) + " |";
  out += "\n|";
  for (std::size_t c = 0; c < t.headers.size(); ++c)
    out += c < t.numeric.size() && t.numeric[c] ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const auto& v : row)
      out += " " + markdown_cell(v) + " |";
    out += "\n";
  }
  out += "\n";
}

void write_markdown_block(std::string& out, const DocBlock& b) {
  switch (b.kind) {
    case DocBlock::Kind::kHeading:
      out += fmt::format("### {}\n\n", b.text);
      break;
    case DocBlock::Kind::kParagraph:
      out += b.text + "\n\n";
      break;
    case DocBlock::Kind::kList:
      if (b.items.empty()) break;
      for (const auto& item : b.items)
        out += "- " + item + "\n";
      out += "\n";
      break;
    case DocBlock::Kind::kTable:
      write_markdown_table(out, b.table);
      break;
    case DocBlock::Kind::kChart:
      // The drawing is HTML-only; its description says what it shows.
      out += fmt::format("*{}.* {}\n\n", b.text, b.items.empty() ? "" : b.items.front());
      break;
  }
}

}  // namespace

std::string report_markdown(const ReportDocument& doc) {
  std::string out = fmt::format("# {}\n\n{}\n\n", doc.title, doc.lead);
  for (const auto& s : doc.sections)
    out += fmt::format("- [{}](#{})\n", s.title, s.id);
  out += "\n";
  for (const auto& s : doc.sections) {
    // An explicit anchor: the section ids stay the same in both languages.
    out += fmt::format("<a id=\"{}\"></a>\n\n## {}\n\n", s.id, s.title);
    for (const auto& b : s.blocks)
      write_markdown_block(out, b);
  }
  return out;
}

}  // namespace ftplan
