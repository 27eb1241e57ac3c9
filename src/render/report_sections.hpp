// The sections of the report document, one function each (report_section_<id>.cpp), in the
// seed's order: the cards, which runs fit, the roofline, tensor rates, more than one card, MIG,
// which card for which run, and how the figures were derived. Each writes its headings,
// paragraphs, tables and charts in the document's language from the report model.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "render/report.hpp"
#include "render/report_svg.hpp"
#include "render/report_words.hpp"

namespace ftplan {

DocSection report_cards_section(const ReportModel& m, const Catalog& catalog,
                                const ReportWords& words);
DocSection report_memory_section(const ReportModel& m, const Catalog& catalog,
                                 const ReportWords& words);
DocSection report_roofline_section(const ReportModel& m, const Catalog& catalog,
                                   const ReportWords& words);
DocSection report_rates_section(const ReportModel& m, const Catalog& catalog,
                                const ReportWords& words);
DocSection report_multi_card_section(const ReportModel& m, const Catalog& catalog,
                                     const ReportWords& words);
// Only when a run's fewest cards of some type span more than one node.
std::optional<DocSection> report_multi_node_section(const ReportModel& m, const Catalog& catalog,
                                                    const ReportWords& words);
DocSection report_mig_section(const ReportModel& m, const Catalog& catalog,
                              const ReportWords& words);
DocSection report_recommendations_section(const ReportModel& m, const Catalog& catalog,
                                          const ReportWords& words);
DocSection report_method_section(const ReportModel& m, const Catalog& catalog,
                                 const ReportWords& words);

// What a section is written from: the report model, the catalog (for the sources), and the words
// of the language (t, f, n, gb, join, ... without a qualifier).
class SectionWriter : protected ReportWords {
 public:
  SectionWriter(const ReportModel& m, const Catalog& catalog, const ReportWords& words)
      : ReportWords(words), m_(m), catalog_(catalog) {}

 protected:
  // The blocks of a section.
  static DocBlock paragraph(std::string text);
  static DocBlock heading(std::string text);
  static DocBlock list(std::vector<std::string> items);
  static DocBlock table(DocTable tbl);
  static DocBlock chart(const ChartText& text, std::string svg);

  const ReportModel& m_;
  const Catalog& catalog_;
};

}  // namespace ftplan
