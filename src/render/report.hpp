// `ftplan report`: the seed article's comparison regenerated from the model. The report model
// (report_model.hpp) becomes one document per language (headings, paragraphs, tables, charts; all
// text already in the language), which is written out as Markdown or as one self-contained HTML
// file with inline SVG. Both formats are serialisations of the same document, so they never
// disagree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "render/report_model.hpp"
#include "render/report_text.hpp"

namespace ftplan {

enum class ReportFormat { kMarkdown, kHtml };
ReportFormat parse_report_format(std::string_view name, std::string_view field = "format");

// Inline text may hold `code` spans (backticks); nothing else is markup.
struct DocTable {
  std::string caption;
  std::vector<std::string> headers;
  std::vector<bool> numeric;  // per column: right-aligned
  std::vector<std::vector<std::string>> rows;
};

struct DocBlock {
  enum class Kind { kHeading, kParagraph, kList, kTable, kChart };
  Kind kind = Kind::kParagraph;
  std::string text;                // heading or paragraph; chart: its title
  std::vector<std::string> items;  // list items; chart: its description
  DocTable table;
  std::string svg;  // chart: the drawing (HTML only; Markdown gives title and description)
};

struct DocSection {
  std::string id;  // stable anchor: "cards", "memory", "roofline", "rates", "multi-card", "mig",
                   // "recommendations", "method"
  std::string title;
  std::vector<DocBlock> blocks;
};

struct ReportDocument {
  ReportLang lang = ReportLang::kEn;
  std::string title;
  std::string lead;
  std::vector<DocSection> sections;
};

// The section ids in their order (the seed's order).
const std::vector<std::string_view>& report_section_ids();

ReportDocument report_document(const ReportModel& model, const Catalog& catalog, ReportLang lang);
std::string report_markdown(const ReportDocument& doc);
std::string report_html(const ReportDocument& doc);

}  // namespace ftplan
