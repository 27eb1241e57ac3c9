// The report model as a document in one language: every sentence comes from the words of the
// language (data/i18n/<lang>.yaml), every figure from the model, formatted as the language writes
// numbers. The order of the sections is the seed article's.
#include "core/error.hpp"
#include "render/report.hpp"
#include "render/report_sections.hpp"
#include "render/report_words.hpp"

namespace ftplan {

const std::vector<std::string_view>& report_section_ids() {
  static const std::vector<std::string_view> ids = {"cards",           "memory",     "roofline",
                                                    "rates",           "multi-card", "mig",
                                                    "recommendations", "multi-node", "method"};
  return ids;
}

ReportFormat parse_report_format(std::string_view name, std::string_view field) {
  if (name == "md" || name == "markdown") return ReportFormat::kMarkdown;
  if (name == "html") return ReportFormat::kHtml;
  throw_unknown_name("report format", field, name, {"md", "html"});
}

ReportDocument report_document(const ReportModel& model, const Catalog& catalog, ReportLang lang) {
  const ReportWords words(catalog, lang);
  ReportDocument d;
  d.lang = lang;
  std::vector<std::string> names;
  for (const GpuSpec* g : model.cards)
    names.push_back(card_name(*g));
  d.title = words.f(Txt::kTitle, words.join(names, Txt::kOr));
  d.lead = words.f(Txt::kLead, code(model.runs->file));
  d.sections = {report_cards_section(model, catalog, words),
                report_memory_section(model, catalog, words),
                report_roofline_section(model, catalog, words),
                report_rates_section(model, catalog, words),
                report_multi_card_section(model, catalog, words),
                report_mig_section(model, catalog, words),
                report_recommendations_section(model, catalog, words)};
  if (auto nodes = report_multi_node_section(model, catalog, words))
    d.sections.push_back(std::move(*nodes));
  d.sections.push_back(report_method_section(model, catalog, words));
  return d;
}

}  // namespace ftplan
