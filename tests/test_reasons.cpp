// The engine's reasons (core/reason) worded per language from data/i18n/<lang>.yaml: every code has
// a template in every language, German words with German number marks, the German report and
// the API's German answers without the engine's English sentences.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "memory/fit.hpp"
#include "render/reason_words.hpp"
#include "server/api.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;

std::string file_text(const std::string& relative) {
  const DataFile* f = test::catalog().file(relative);
  EXPECT_NE(f, nullptr) << relative;
  return f ? std::string(f->text) : std::string();
}

// The error parse_translations gives for `text` as data/i18n/xx.yaml ("" when it accepts it).
std::string parse_error(const std::string& text) {
  try {
    parse_translations({"data/i18n/xx.yaml", text, "i18n/xx.yaml"});
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

server::Response call(const std::string& method, const std::string& path, const std::string& body,
                      std::map<std::string, std::string> query = {}) {
  static const server::Commands commands = cli::server_commands();
  server::Request r;
  r.method = method;
  r.path = path;
  r.body = body;
  r.query = std::move(query);
  if (method == "POST") r.content_type = "application/json";
  return server::handle(r, commands);
}

TEST(Reasons, EveryCodeHasATemplateInEveryLanguage) {
  ASSERT_EQ(reason_codes().size(), kReasonCodeCount - 1);
  for (std::size_t i = 1; i < kReasonCodeCount; ++i) {
    const auto code = static_cast<ReasonCode>(i);
    const ReasonCodeInfo& info = reason_code_info(code);
    EXPECT_EQ(info.code, code) << info.key << ": the table is not in the enum's order";
    // Every argument filled: each language words it without an unfilled {name}.
    Reason r(code);
    for (auto a : info.arguments)
      r.name(a, "ARG");
    for (ReportLang lang : {ReportLang::kEn, ReportLang::kDe}) {
      const std::string text = word_reason(r, test::translations(lang));
      EXPECT_FALSE(test::translations(lang).reason_template(code).empty()) << info.key;
      EXPECT_EQ(text.find('{'), std::string::npos) << info.key << ": " << text;
    }
  }
}

TEST(Reasons, AFitReasonInGermanWithGermanNumbers) {
  MemoryEstimate m;
  m.peak = bytes_from_GB(95.24);
  m.capacity = bytes_from_GB(102.6);
  m.headroom = m.capacity - m.peak;
  m.verdict = Verdict::kTight;
  const Placement two = test::on("rtx-pro-6000", 2, Sharding::kFsdp);
  EXPECT_EQ(word_reason(memory_reason(m, two), test::translations(ReportLang::kDe)),
            "Spitze 95,2 GB lässt nur 7,4 GB von 102,6 GB auf jeder von 2 × NVIDIA RTX PRO 6000 "
            "Blackwell Workstation Edition frei (unter 10 % der Karte): zu wenig, um damit zu "
            "planen; mehr Karten, Sharding, QLoRA oder ein kleinerer Micro-Batch helfen");
  EXPECT_EQ(word_reason(memory_reason(m, two), test::translations(ReportLang::kEn)),
            "peak 95.2 GB leaves only 7.4 GB of 102.6 GB on each of 2 × NVIDIA RTX PRO 6000 "
            "Blackwell Workstation Edition (under 10 % of the card): too little to plan with; use "
            "more cards, sharding, QLoRA or a smaller micro-batch");
  m.peak = bytes_from_GB(1234.56);
  m.verdict = Verdict::kDoesNotFit;
  EXPECT_EQ(word_reason(memory_reason(m, test::on_mig("rtx-pro-6000", "1g.24gb")),
                        test::translations(ReportLang::kDe)),
            "Spitze 1234,6 GB überschreitet die 102,6 GB auf einer 1g.24gb-Instanz von NVIDIA RTX "
            "PRO 6000 Blackwell Workstation Edition um 1132,0 GB");
}

TEST(Reasons, APlannerReasonInGermanThroughTheApi) {
  // Two H200 NVL at 600 W each exceed a limit of 1100.5 W: nothing fits, and the plan says why.
  const std::string runs =
      "candidates: {gpus: [h200-nvl], counts: [2], mig: false}\n"
      "power_limit_W: 1100.5\n"
      "runs:\n"
      "  - {name: r, model: llama-3.1-8b, method: lora, tokens: 1e6, seq: 2048, global_batch: 8}\n";
  const server::Response de = call("POST", "/api/plan", runs, {{"lang", "de"}});
  ASSERT_EQ(de.status, 200) << de.body;
  EXPECT_EQ(json::parse(de.body)["runs"][0]["why"],
            "keine Kandidatenkarte, Kartenzahl und Strategie trägt diesen Lauf; keine erlaubte "
            "Kartenzahl passt; am nächsten: 2 × NVIDIA H200 NVL: 2 Karten zu je 600 W "
            "überschreiten die Leistungsgrenze von 1100,5 W");
  const server::Response en = call("POST", "/api/plan", runs);
  ASSERT_EQ(en.status, 200) << en.body;
  EXPECT_EQ(json::parse(en.body)["runs"][0]["why"],
            "no candidate card, count and strategy holds this run; no allowed count fits; "
            "closest: 2 × NVIDIA H200 NVL: 2 cards at 600 W exceed the power limit of 1100.5 W");
}

TEST(Reasons, TheApiWordsReasonsInTheLanguageAsked) {
  const std::string body =
      R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "rtx-pro-6000", "lang": "de"})";
  const server::Response de = call("POST", "/api/fit", body);
  ASSERT_EQ(de.status, 200) << de.body;
  const std::string reason = json::parse(de.body)["reason"];
  EXPECT_TRUE(reason.starts_with("Spitze ")) << reason;
  EXPECT_NE(reason.find(" GB von 102,6 GB auf NVIDIA RTX PRO 6000"), std::string::npos) << reason;
  // The query string works as well, and without a language the words stay English (as the CLI).
  const std::string plain = R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "rtx-pro-6000"})";
  const server::Response query = call("POST", "/api/fit", plain, {{"lang", "de"}});
  EXPECT_EQ(json::parse(query.body)["reason"], reason);
  const server::Response en = call("POST", "/api/fit", plain);
  EXPECT_EQ(en.body, test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                    "rtx-pro-6000", "--json"})
                         .out);
  // An unknown language is the request's error, naming the languages there are.
  for (const auto& bad : {call("POST", "/api/fit",
                               R"({"model": "llama-3.1-8b", "method": "lora",
                                   "gpu": "rtx-pro-6000", "lang": "xx"})"),
                          call("POST", "/api/plan", "runs: []\n", {{"lang", "xx"}})}) {
    EXPECT_EQ(bad.status, 400) << bad.body;
    const std::string message = json::parse(bad.body)["error"]["message"];
    EXPECT_NE(message.find("xx"), std::string::npos) << message;
    EXPECT_NE(message.find("en, de"), std::string::npos) << message;
    EXPECT_EQ(json::parse(bad.body)["error"]["field"], "lang") << bad.body;
  }
}

TEST(Reasons, TheGermanReportHasNoEnglishEngineSentence) {
  const auto path = std::filesystem::temp_directory_path() / "ftplan-reasons-runs.yaml";
  {
    std::ofstream f(path);
    f << "candidates: {gpus: [rtx-pro-6000, rtx-pro-6000-server, l40s], counts: [1, 2], "
         "mig: false}\n"
         "defaults: {seq: 4096, global_batch: 32}\n"
         "runs:\n"
         "  - {name: big full, model: llama-3.1-70b, method: full, tokens: 10e6}\n"
         "  - {name: small lora, model: llama-3.1-8b, method: lora, tokens: 10e6}\n";
  }
  const std::vector<std::string> english = {
      "leaves",       "exceeds",           "of the card",         "no allowed count",    "closest:",
      "publishes no", "fewest card-hours", "is not supported on", "cannot be estimated", "each of"};
  for (const std::string format : {"md", "html"}) {
    const auto de = test::run_cli({"report", path.string(), "--format", format, "--lang", "de"});
    ASSERT_EQ(de.code, 0) << de.err;
    // Quotations of the data files („…“) keep their own words; nothing else may be English.
    std::string own = de.out;
    for (auto open = own.find("„"); open != std::string::npos; open = own.find("„", open)) {
      const auto close = own.find("“", open);
      ASSERT_NE(close, std::string::npos);
      own.erase(open, close - open);
    }
    for (const auto& phrase : english)
      EXPECT_EQ(own.find(phrase), std::string::npos) << format << ": " << phrase;
    EXPECT_NE(de.out.find("überschreitet die 102,6 GB auf jeder von 2 × NVIDIA RTX PRO 6000"),
              std::string::npos);
    // A data file's own words stay as they are, quoted.
    EXPECT_NE(de.out.find("(„NVIDIA publishes '1 PFLOP'"), std::string::npos);
    // The English report names the same misses in English.
    const auto en = test::run_cli({"report", path.string(), "--format", format, "--lang", "en"});
    EXPECT_NE(en.out.find("exceeds the 102.6 GB of each of 2 ×"), std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST(Reasons, ABrokenReasonsSectionNamesTheFileAndKey) {
  const std::string en = file_text("i18n/en.yaml");
  ASSERT_EQ(parse_error(en), "");
  // A missing template.
  const std::string line = "  step_unknown: \"the step time cannot be estimated on this card\"\n";
  const auto at = en.find(line);
  ASSERT_NE(at, std::string::npos);
  std::string missing = en;
  missing.erase(at, line.size());
  std::string e = parse_error(missing);
  EXPECT_NE(e.find("data/i18n/xx.yaml"), std::string::npos) << e;
  EXPECT_NE(e.find("step_unknown"), std::string::npos) << e;
  // An unknown key.
  std::string unknown = en;
  unknown.insert(at, "  no_such_reason: \"x\"\n");
  e = parse_error(unknown);
  EXPECT_NE(e.find("data/i18n/xx.yaml"), std::string::npos) << e;
  EXPECT_NE(e.find("no_such_reason"), std::string::npos) << e;
  // An argument the code does not have.
  std::string argument = en;
  argument.replace(at, line.size(), "  step_unknown: \"{peak}\"\n");
  e = parse_error(argument);
  EXPECT_NE(e.find("step_unknown"), std::string::npos) << e;
  EXPECT_NE(e.find("{peak}"), std::string::npos) << e;
}

}  // namespace
}  // namespace ftplan
