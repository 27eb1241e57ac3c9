// The words of one language, read from data/i18n/<lang>.yaml: the report's texts (one per Txt),
// the web page's texts, and the language's number style. One file per language is the only source
// of a language's words: the report reads them here, the page receives them from the server.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "catalog/catalog.hpp"
#include "core/reason.hpp"
#include "render/localized_number.hpp"
#include "render/report_text.hpp"

namespace ftplan {

struct Translations {
  std::string language;  // "en", "de"
  std::string name;      // "English", "Deutsch"
  std::string locale;    // BCP 47 tag for the page's number formats ("de-DE")
  NumberStyle number;
  std::vector<std::string> report;                        // indexed by Txt
  std::vector<std::pair<std::string, std::string>> page;  // key, text; in the file's order
  std::vector<std::string> reasons;                       // indexed by ReasonCode (kNone empty)

  std::string_view text(Txt key) const { return report[static_cast<std::size_t>(key)]; }
  std::string_view reason_template(ReasonCode code) const {
    return reasons[static_cast<std::size_t>(code)];
  }
};

// The report key of a text ("title", "rec_one_card"): its name in the language files.
std::string_view txt_key(Txt key);

// Parses one language file strictly: every report and reason key present once, no unknown key, a
// reason template naming only its code's arguments (UserError naming the file and key otherwise).
Translations parse_translations(const DataFile& file);
// The language's file from the catalog's data (i18n/<lang>.yaml).
Translations load_translations(const Catalog& catalog, ReportLang lang);

}  // namespace ftplan

namespace ftplan {
// What the page needs of a language: its name, locale, number marks and page texts.
nlohmann::json page_words_json(const Translations& t);
}  // namespace ftplan
