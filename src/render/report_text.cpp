// The report's languages; the words of each are in data/i18n/<lang>.yaml (render/translations).
#include "render/report_text.hpp"

#include "core/error.hpp"

namespace ftplan {

std::string_view report_lang_name(ReportLang lang) {
  return lang == ReportLang::kDe ? "de" : "en";
}

ReportLang parse_report_lang(std::string_view name, std::string_view field) {
  if (name == "en") return ReportLang::kEn;
  if (name == "de") return ReportLang::kDe;
  throw_unknown_name("report language", field, name, {"en", "de"});
}

}  // namespace ftplan
