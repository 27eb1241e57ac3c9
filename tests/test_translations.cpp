// One source of words per language (data/i18n/<lang>.yaml): the report's texts, the page's texts
// and the number style, the same keys in every language, served to the page by GET /api/words.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "render/translations.hpp"
#include "server/api.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;

std::set<std::string> page_keys(const Translations& t) {
  std::set<std::string> keys;
  for (const auto& [key, text] : t.page) {
    EXPECT_TRUE(keys.insert(key).second) << t.language << ": " << key << " twice";
    EXPECT_FALSE(text.empty()) << t.language << ": " << key;
  }
  return keys;
}

TEST(Translations, EveryLanguageHasEveryText) {
  const Translations& en = test::translations(ReportLang::kEn);
  const Translations& de = test::translations(ReportLang::kDe);
  EXPECT_EQ(en.language, "en");
  EXPECT_EQ(de.language, "de");
  EXPECT_EQ(page_keys(en), page_keys(de));
  ASSERT_EQ(de.report.size(), kTxtCount);
  for (std::size_t i = 0; i < kTxtCount; ++i)
    EXPECT_FALSE(de.report[i].empty()) << txt_key(static_cast<Txt>(i));
  // The same figures in both languages: as many {} and {N} in the German text as in the English
  // one, where the English is not taken from the data's own text.
  static const std::regex field(R"(\{\d*\})");
  for (std::size_t i = 0; i < kTxtCount; ++i) {
    if (en.report[i].empty()) continue;
    auto count = [&](const std::string& s) {
      return std::distance(std::sregex_iterator(s.begin(), s.end(), field), std::sregex_iterator());
    };
    EXPECT_EQ(count(en.report[i]), count(de.report[i])) << txt_key(static_cast<Txt>(i));
  }
  for (const auto& entry : en.page) {
    const std::string& key = entry.first;
    const std::string& text = entry.second;
    const auto it =
        std::find_if(de.page.begin(), de.page.end(), [&](const auto& e) { return e.first == key; });
    ASSERT_NE(it, de.page.end());
    auto count = [&](const std::string& s) {
      return std::distance(std::sregex_iterator(s.begin(), s.end(), field), std::sregex_iterator());
    };
    EXPECT_EQ(count(text), count(it->second)) << key;
  }
}

TEST(Translations, ThePageKeepsTheEnglishWordsOfTheFile) {
  // index.html holds the English static texts for a page without script: they must be the file's.
  std::ifstream f(std::string(FTPLAN_SOURCE_DIR) + "/web/index.html");
  std::stringstream html;
  html << f.rdbuf();
  const std::string page = html.str();
  static const std::regex tagged(R"re(data-i18n="([^"]+)"[^>]*>([^<]*)<)re");
  std::map<std::string, std::string> en;
  for (const auto& [key, text] : test::translations(ReportLang::kEn).page)
    en[key] = text;
  int seen = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), tagged);
       it != std::sregex_iterator(); ++it, ++seen) {
    std::string text = (*it)[2];
    text = std::regex_replace(text, std::regex("&amp;"), "&");
    ASSERT_TRUE(en.count((*it)[1])) << (*it)[1] << " is not in data/i18n/en.yaml";
    EXPECT_EQ(en[(*it)[1]], text) << (*it)[1];
  }
  EXPECT_GT(seen, 40);
}

TEST(Translations, ThePageReceivesTheWordsFromTheServer) {
  server::Request r;
  r.method = "GET";
  r.path = "/api/words";
  r.query = {{"lang", "de"}};
  const server::Response reply = server::handle(r, cli::server_commands());
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json j = json::parse(reply.body);
  EXPECT_EQ(j["locale"], "de-DE");
  EXPECT_EQ(j["number"]["decimal_mark"], ",");
  EXPECT_EQ(j["words"]["verdict_fits"], "passt");
  EXPECT_EQ(j["words"].size(), test::translations(ReportLang::kDe).page.size());
  r.query = {{"lang", "fr"}};
  const server::Response bad = server::handle(r, cli::server_commands());
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("lang"), std::string::npos) << bad.body;
}

TEST(Translations, ABrokenFileNamesTheKey) {
  const std::string text =
      "language: xx\nname: X\nlocale: xx-XX\nnumber: {decimal_mark: \",\", group_mark: \".\"}\n"
      "report: {title: \"t\"}\npage: {}\n";
  try {
    parse_translations({"data/i18n/xx.yaml", text, "i18n/xx.yaml"});
    FAIL() << "a language file without the report's texts accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("data/i18n/xx.yaml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lead"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ftplan
