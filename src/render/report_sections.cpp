#include "render/report_sections.hpp"

#include <utility>

namespace ftplan {

DocBlock SectionWriter::paragraph(std::string text) {
  DocBlock b;
  b.kind = DocBlock::Kind::kParagraph;
  b.text = std::move(text);
  return b;
}

DocBlock SectionWriter::heading(std::string text) {
  DocBlock b;
  b.kind = DocBlock::Kind::kHeading;
  b.text = std::move(text);
  return b;
}

DocBlock SectionWriter::list(std::vector<std::string> items) {
  DocBlock b;
  b.kind = DocBlock::Kind::kList;
  b.items = std::move(items);
  return b;
}

DocBlock SectionWriter::table(DocTable tbl) {
  DocBlock b;
  b.kind = DocBlock::Kind::kTable;
  b.table = std::move(tbl);
  return b;
}

DocBlock SectionWriter::chart(const ChartText& text, std::string svg) {
  DocBlock b;
  b.kind = DocBlock::Kind::kChart;
  b.text = text.title;
  b.items = {text.description};
  b.svg = std::move(svg);
  return b;
}

}  // namespace ftplan
