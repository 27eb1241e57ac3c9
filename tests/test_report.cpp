// `ftplan report`: the seed's comparison regenerated from the model, in Markdown and HTML, English
// and German. Structure (sections in the seed's order, tables, charts, one self-contained and
// well-formed HTML file) and the seed's figures as the report computes and prints them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "perf/reference_gemms.hpp"
#include "plan/evaluate.hpp"
#include "render/html_escape.hpp"
#include "render/localized_number.hpp"
#include "render/report.hpp"
#include "render/report_svg.hpp"
#include "render/translations.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

struct SeedReport {
  RunsFile runs;
  PlanningData data;
  ReportModel model;
  ReportDocument en, de;
  std::string md_en, md_de, html_en, html_de;
};

// The built-in seed runs on their candidates (H200 NVL, RTX PRO 6000 WS), as `ftplan report` runs.
const SeedReport& seed() {
  static const SeedReport* r = [] {
    auto* s = new SeedReport;
    // The CLI's own catalog: the runs point into it, and the report compares cards by address.
    std::ostringstream out, err;
    cli::Context ctx(out, err);
    const Catalog& catalog = cli::builtin_catalog();
    s->runs = cli::load_runs(ctx, "");
    s->data = PlanningData::load(catalog);
    ReportInput in;
    in.runs = &s->runs;
    in.data = &s->data;
    in.also = other_editions(catalog, s->runs.gpus);
    s->model = build_report_model(in);
    s->en = report_document(s->model, catalog, ReportLang::kEn);
    s->de = report_document(s->model, catalog, ReportLang::kDe);
    s->md_en = report_markdown(s->en);
    s->md_de = report_markdown(s->de);
    s->html_en = report_html(s->en);
    s->html_de = report_html(s->de);
    return s;
  }();
  return *r;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

const DocSection& section(const ReportDocument& d, std::string_view id) {
  for (const auto& s : d.sections)
    if (s.id == id) return s;
  throw std::runtime_error("no section " + std::string(id));
}

// The table of a section whose caption starts with `caption` (the first one if empty).
const DocTable& table(const ReportDocument& d, std::string_view id, std::string_view caption) {
  for (const auto& b : section(d, id).blocks)
    if (b.kind == DocBlock::Kind::kTable && b.table.caption.starts_with(caption)) return b.table;
  throw std::runtime_error("no table '" + std::string(caption) + "' in " + std::string(id));
}

// The cell of the row whose first cells are `keys`, in the column headed `column`.
std::string cell(const DocTable& t, const std::vector<std::string>& keys,
                 const std::string& column) {
  const auto col = std::find(t.headers.begin(), t.headers.end(), column) - t.headers.begin();
  for (const auto& row : t.rows) {
    bool match = true;
    for (std::size_t i = 0; i < keys.size(); ++i)
      match &= row[i] == keys[i];
    if (match && static_cast<std::size_t>(col) < row.size())
      return row[static_cast<std::size_t>(col)];
  }
  return "<no cell " + column + ">";
}

std::vector<std::string> items(const ReportDocument& d, std::string_view id) {
  std::vector<std::string> out;
  for (const auto& b : section(d, id).blocks)
    if (b.kind == DocBlock::Kind::kList) out.insert(out.end(), b.items.begin(), b.items.end());
  return out;
}

std::string all_text(const ReportDocument& d, std::string_view id) {
  std::string out;
  for (const auto& b : section(d, id).blocks) {
    out += b.text + "\n";
    for (const auto& i : b.items)
      out += i + "\n";
  }
  return out;
}

const ReportMemory& one_card(const std::string& run, const std::string& gpu) {
  for (const auto& row : seed().model.memory)
    if (row.run->name == run)
      for (const auto& m : row.one_card)
        if (m.gpu->id == gpu) return m;
  throw std::runtime_error("no memory row " + run + " on " + gpu);
}

double printed_GB(Bytes b, int decimals) {
  return test::printed(to_GB(b), decimals);
}

TEST(Report, RunsBeyondOneNodeGetASectionWithTheirLayouts) {
  // Llama 3.1 70B in full on H100 SXM (85.5 GB): one replica's 1.1 TB of states need 16 cards at
  // the least, two nodes of 8; the section gives the count, the nodes and the planner's layout.
  const std::string runs =
      "candidates: {gpus: [h100-sxm], counts: [8, 16, 32], mig: false}\n"
      "runs:\n"
      "  - {name: 70B full, model: llama-3.1-70b, method: full, seq: 4096, global_batch: 64, "
      "tokens: 1e8}\n";
  for (const std::string lang : {"en", "de"}) {
    const auto r = test::run_cli({"report", "-", "--lang", lang}, runs);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto at = r.out.find("<a id=\"multi-node\"></a>");
    ASSERT_NE(at, std::string::npos) << lang;
    const std::string section = r.out.substr(at, r.out.find("<a id=\"method\"></a>") - at);
    EXPECT_NE(section.find(lang == "en" ? "Runs beyond one node" : "mehr als einen Knoten"),
              std::string::npos);
    EXPECT_NE(section.find("| 70B full"), std::string::npos) << section;
    EXPECT_NE(section.find("| 16 | 2 × 8 |"), std::string::npos) << section;
    EXPECT_NE(section.find("tp "), std::string::npos) << section;  // a model-parallel layout
  }
}

// ---- structure
// -----------------------------------------------------------------------------------

TEST(Report, SectionsInTheSeedOrderInEveryLanguageAndFormat) {
  const std::vector<std::string_view> ids = {"cards",           "memory",     "roofline",
                                             "rates",           "multi-card", "mig",
                                             "recommendations", "multi-node", "method"};
  EXPECT_EQ(report_section_ids(), ids);
  // The seed's runs all fit one node: no section for runs beyond one.
  const std::vector<std::string_view> want = {"cards",      "memory", "roofline",        "rates",
                                              "multi-card", "mig",    "recommendations", "method"};
  for (const ReportDocument* d : {&seed().en, &seed().de}) {
    ASSERT_EQ(d->sections.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(d->sections[i].id, want[i]);
  }
  for (const std::string* text : {&seed().html_en, &seed().html_de, &seed().md_en, &seed().md_de}) {
    const bool html = text->starts_with("<!DOCTYPE html>");
    std::size_t last = 0;
    for (auto id : want) {
      const std::string anchor =
          html ? fmt::format("<section id=\"{}\">", id) : fmt::format("<a id=\"{}\"></a>", id);
      const auto at = text->find(anchor);
      ASSERT_NE(at, std::string::npos) << anchor;
      EXPECT_GT(at, last) << anchor << " out of order";
      last = at;
      EXPECT_EQ(count(*text, anchor), 1u) << anchor;
    }
  }
}

TEST(Report, EveryTableAndChartIsWrittenInBothFormats) {
  for (const auto* pair : {&seed().en, &seed().de}) {
    std::size_t tables = 0, charts = 0;
    for (const auto& s : pair->sections)
      for (const auto& b : s.blocks) {
        if (b.kind == DocBlock::Kind::kTable) {
          ++tables;
          // Every row as wide as the header, every column with an alignment.
          EXPECT_EQ(b.table.numeric.size(), b.table.headers.size()) << b.table.caption;
          for (const auto& row : b.table.rows)
            EXPECT_EQ(row.size(), b.table.headers.size()) << b.table.caption;
          EXPECT_FALSE(b.table.rows.empty()) << b.table.caption;
        }
        if (b.kind == DocBlock::Kind::kChart) {
          ++charts;
          EXPECT_FALSE(b.text.empty());
          EXPECT_TRUE(b.svg.starts_with("<svg")) << b.text;
        }
      }
    // Memory bars, the roofline, and one scaling chart per run that needs several cards of a
    // type (the seed: the 8B full fine-tune with 32-bit Adam and the 70B LoRA on a BF16 base).
    EXPECT_EQ(seed().model.scaling.size(), 2u);
    EXPECT_EQ(charts, 2 + seed().model.scaling.size());
    const std::string& html = pair == &seed().en ? seed().html_en : seed().html_de;
    const std::string& md = pair == &seed().en ? seed().md_en : seed().md_de;
    EXPECT_EQ(count(html, "<table>"), tables);
    EXPECT_EQ(count(html, "<svg "), charts);
    EXPECT_EQ(count(html, "<figure>"), charts);
    // A Markdown table has one delimiter row; charts become their caption.
    std::size_t delimiters = 0;
    std::istringstream lines(md);
    for (std::string line; std::getline(lines, line);)
      if (std::regex_match(line, std::regex(R"(\|(-{3}:?\|)+)"))) ++delimiters;
    EXPECT_EQ(delimiters, tables);
    EXPECT_EQ(count(md, "<svg"), 0u);
  }
}

// Every tag closed in order (void elements and self-closing SVG elements aside), no stray '<' or
// '&' in text, every attribute value quoted.
::testing::AssertionResult well_formed(const std::string& html) {
  static const std::set<std::string> kVoid = {"meta", "br", "hr", "img", "link", "input"};
  std::vector<std::string> open;
  std::size_t i = 0;
  while (i < html.size()) {
    const char c = html[i];
    if (c == '&') {
      static const std::regex entity("&(amp|lt|gt|quot|#[0-9]+);");
      std::smatch m;
      const std::string rest = html.substr(i, 8);
      if (!std::regex_search(rest, m, entity) || m.position(0) != 0)
        return ::testing::AssertionFailure() << "bare & at " << i << ": " << html.substr(i, 20);
      ++i;
      continue;
    }
    if (c != '<') {
      ++i;
      continue;
    }
    const auto end = html.find('>', i);
    if (end == std::string::npos) return ::testing::AssertionFailure() << "unclosed < at " << i;
    std::string tag = html.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.starts_with("!")) continue;  // <!DOCTYPE html>
    if (tag.find('<') != std::string::npos)
      return ::testing::AssertionFailure() << "'<' inside a tag: " << tag;
    if (tag.starts_with("/")) {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name)
        return ::testing::AssertionFailure()
               << "</" << name << "> closes <" << (open.empty() ? "" : open.back()) << ">";
      open.pop_back();
      continue;
    }
    const std::string name = tag.substr(0, tag.find_first_of(" \n/"));
    if (!std::regex_match(name, std::regex("[a-z][a-z0-9]*")))
      return ::testing::AssertionFailure() << "bad tag name '" << name << "'";
    // Attributes: name="value" pairs only.
    const std::string attrs = tag.substr(name.size());
    static const std::regex attr_list(R"(^(\s+[a-zA-Z][a-zA-Z0-9-]*="[^"<>]*")*\s*/?$)");
    if (!std::regex_match(attrs, attr_list))
      return ::testing::AssertionFailure() << "attributes of <" << name << ">: " << attrs;
    if (tag.ends_with("/") || kVoid.count(name)) continue;
    open.push_back(name);
  }
  if (!open.empty()) return ::testing::AssertionFailure() << "<" << open.back() << "> not closed";
  return ::testing::AssertionSuccess();
}

// A run that fits on no card count has a scaling chart without points: its axes are drawn, and
// no coordinate is NaN (a zero top once divided by zero).
TEST(Report, AScalingChartWithoutPointsHasNoNaN) {
  LineChart chart;
  chart.x_label = "cards";
  chart.y_label = "tokens/s";
  chart.x_ticks = {1, 2, 4, 8};
  chart.series = {{"L40S", 0, false, {}}, {"L40S (PCIe)", 0, true, {}}};
  const std::string svg = line_chart_svg(chart, NumberStyle{});
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<line"), std::string::npos);
}

TEST(Report, HtmlIsOneWellFormedSelfContainedFile) {
  for (const std::string* html : {&seed().html_en, &seed().html_de}) {
    EXPECT_TRUE(well_formed(*html));
    // Nothing to fetch: no URL, script, stylesheet link, image, font or frame.
    EXPECT_EQ(html->find("http://"), std::string::npos);
    EXPECT_EQ(html->find("https://"), std::string::npos);
    EXPECT_EQ(html->find("//"), std::string::npos);  // not even a protocol-relative one
    for (const char* tag : {"<script", "<link", "<img", "<iframe", "<object", "url("})
      EXPECT_EQ(html->find(tag), std::string::npos) << tag;
    EXPECT_EQ(html->find(" src="), std::string::npos);
    // Links only to the report's own sections.
    static const std::regex href(R"(href="([^"]*)\")");
    for (std::sregex_iterator it(html->begin(), html->end(), href), e; it != e; ++it)
      EXPECT_TRUE((*it)[1].str().starts_with("#")) << (*it)[1];
    // The policy that forbids fetching, inline style and inline SVG with accessible names.
    EXPECT_NE(html->find("content=\"default-src 'none'; style-src 'unsafe-inline'\""),
              std::string::npos);
    EXPECT_EQ(count(*html, "<style>"), 1u);
    EXPECT_EQ(count(*html, "<svg "), count(*html, "<title id="));
    EXPECT_EQ(count(*html, "<svg "), count(*html, "viewBox=\"0 0 "));
  }
  EXPECT_NE(seed().html_en.find("<html lang=\"en\">"), std::string::npos);
  EXPECT_NE(seed().html_de.find("<html lang=\"de\">"), std::string::npos);
}

TEST(Report, TheCheckerCatchesBrokenHtml) {
  EXPECT_FALSE(well_formed("<p><b>x</p></b>"));
  EXPECT_FALSE(well_formed("<p>a < b</p>"));
  EXPECT_FALSE(well_formed("<p>R&D</p>"));
  EXPECT_FALSE(well_formed("<p class=x>y</p>"));
  EXPECT_FALSE(well_formed("<section>"));
  EXPECT_TRUE(well_formed("<p class=\"x\">a &lt; b &amp; c</p><meta charset=\"utf-8\">"));
}

TEST(Report, HtmlEscapeWritesMarkupCharactersAsEntities) {
  EXPECT_EQ(html_escape("a < b & \"c\" > d"), "a &lt; b &amp; &quot;c&quot; &gt; d");
  EXPECT_EQ(html_escape("H200 NVL: 4,800 GB/s"), "H200 NVL: 4,800 GB/s");
  EXPECT_TRUE(
      well_formed("<p title=\"" + html_escape("\"<&>") + "\">" + html_escape("R&D") + "</p>"));
}

TEST(Report, TextsExistInBothLanguagesWithTheSameFigures) {
  // The three rule texts whose English is the data file's own text are the only empty ones.
  const std::set<Txt> english_from_data = {Txt::kMigRuleSingle, Txt::kMigRuleDisplay,
                                           Txt::kMigDispute};
  const auto placeholders = [](std::string_view s) {
    std::multiset<std::string> out;
    static const std::regex p(R"(\{[0-9]*\})");
    const std::string text(s);
    for (std::sregex_iterator it(text.begin(), text.end(), p), e; it != e; ++it)
      out.insert(it->str());
    return out;
  };
  const Translations english = load_translations(test::catalog(), ReportLang::kEn);
  const Translations german = load_translations(test::catalog(), ReportLang::kDe);
  for (std::size_t i = 0; i < kTxtCount; ++i) {
    const Txt k = static_cast<Txt>(i);
    const auto en = english.text(k), de = german.text(k);
    EXPECT_FALSE(de.empty()) << i;
    if (english_from_data.count(k)) continue;
    EXPECT_FALSE(en.empty()) << i;
    // The same figures go into both: numbered placeholders may move, their set may not change.
    const auto in_en = placeholders(en), in_de = placeholders(de);
    if (in_en.count("{}") > 0 || in_de.count("{}") > 0)
      EXPECT_EQ(in_en, in_de) << en << " | " << de;
    else
      EXPECT_EQ(std::set<std::string>(in_en.begin(), in_en.end()),
                std::set<std::string>(in_de.begin(), in_de.end()))
          << en << " | " << de;
  }
}

TEST(Report, BadFormatOrLanguageNamesTheOption) {
  try {
    parse_report_format("pdf");
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_EQ(e.field(), "format");
    EXPECT_NE(std::string(e.what()).find("'pdf'"), std::string::npos) << e.what();
  }
  try {
    parse_report_lang("fr");
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_EQ(e.field(), "lang");
    EXPECT_NE(std::string(e.what()).find("en"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_report_format("md"), ReportFormat::kMarkdown);
  EXPECT_EQ(parse_report_format("html"), ReportFormat::kHtml);
  EXPECT_EQ(parse_report_lang("de"), ReportLang::kDe);
}

// ---- the published intensity examples (data/roofline_examples.yaml)
// ----------------------------------

std::string reference_error(const std::string& text) {
  try {
    parse_reference_gemms({"roofline_examples.yaml", text, {}}, test::catalog().sources());
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(ReferenceGemms, ParseStrictly) {
  const std::string ok =
      "examples:\n  - {id: a, m: 512, n: 4096, k: 1024, precision: fp16, published_FLOP_per_B: "
      "315, source: nvidia-gpu-performance-background}\n";
  EXPECT_EQ(reference_error(ok), "");
  const auto fails_with = [&](const std::string& text, const std::string& what) {
    const std::string e = reference_error(text);
    EXPECT_NE(e.find("roofline_examples.yaml"), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  fails_with(ok + "  - {id: a, m: 1, n: 4096, k: 1024, precision: fp16, published_FLOP_per_B: 1, "
                  "source: nvidia-gpu-performance-background}\n",
             "id 'a' is defined twice");
  fails_with(
      "examples:\n  - {id: a, m: 0, n: 1, k: 1, precision: fp16, published_FLOP_per_B: 1, "
      "source: nvidia-gpu-performance-background}\n",
      "m");
  fails_with(
      "examples:\n  - {id: a, m: 1, n: 1, k: 1, precision: fp12, published_FLOP_per_B: 1, "
      "source: nvidia-gpu-performance-background}\n",
      "unknown value 'fp12'");
  fails_with(
      "examples:\n  - {id: a, m: 1, n: 1, k: 1, precision: fp16, published_FLOP_per_B: 1, "
      "source: nvidia}\n",
      "source id 'nvidia' is not defined");
  fails_with(
      "examples:\n  - {id: a, m: 1, n: 1, k: 1, precision: fp16, published: 1, "
      "source: nvidia-gpu-performance-background}\n",
      "published");
}

// ---- numbers as each language writes them
// ----------------------------------------------------------

TEST(Report, GermanWritesADecimalCommaEnglishADecimalPoint) {
  // The number styles of the language files (data/i18n).
  const NumberStyle de = load_translations(test::catalog(), ReportLang::kDe).number;
  const NumberStyle en = load_translations(test::catalog(), ReportLang::kEn).number;
  EXPECT_EQ(localized_number(1670.5, 1, de), "1.670,5");  // the seed's own spelling
  EXPECT_EQ(localized_number(1670.5, 1, en), "1,670.5");
  EXPECT_EQ(localized_number(150.75, 1, de), "150,8");
  EXPECT_EQ(localized_number(-0.04, 1, de), "0,0");
  EXPECT_EQ(localized_number(-25.84, 1, de), "-25,8");
  EXPECT_EQ(localized_number(1234567, 0, de), "1.234.567");
  // No figure of the German report has a decimal point, none of the English a decimal comma: a
  // decimal separator followed by one or two digits (three would be a thousands group), in every
  // numeric column (names such as "Llama 3.1 8B" stay as they are).
  static const std::regex point(R"(\d\.\d{1,2}(?!\d))"), comma(R"(\d,\d{1,2}(?!\d))");
  std::size_t checked = 0, decimals = 0;
  for (const auto* doc : {&seed().de, &seed().en})
    for (const auto& s : doc->sections)
      for (const auto& b : s.blocks)
        for (const auto& row : b.table.rows)
          for (std::size_t c = 0; c < row.size(); ++c) {
            if (!b.table.numeric[c]) continue;
            ++checked;
            EXPECT_FALSE(std::regex_search(row[c], doc == &seed().de ? point : comma))
                << s.id << ": " << row[c];
            decimals += std::regex_search(row[c], doc == &seed().de ? comma : point);
          }
  EXPECT_GT(checked, 500u);
  EXPECT_GT(decimals, 200u);  // the check would pass on integers alone: there are decimals
}

// ---- the seed's figures, as the report computes and prints them
// ------------------------------------

TEST(Report, Capacities_150_8_And_102_6_GB) {
  EXPECT_EQ(printed_GB(one_card("8B LoRA", "h200-nvl").memory.capacity, 1), 150.8);
  EXPECT_EQ(printed_GB(one_card("8B LoRA", "rtx-pro-6000").memory.capacity, 1), 102.6);
  const DocTable& en = table(seed().en, "cards", "");
  const DocTable& de = table(seed().de, "cards", "");
  EXPECT_EQ(cell(en, {"H200 NVL"}, "memory (driver-visible)"), "150.8 GB");
  EXPECT_EQ(cell(en, {"RTX PRO 6000 WS"}, "memory (driver-visible)"), "102.6 GB");
  EXPECT_EQ(cell(de, {"H200 NVL"}, "sichtbarer Speicher"), "150,8 GB");
  EXPECT_EQ(cell(de, {"RTX PRO 6000 WS"}, "sichtbarer Speicher"), "102,6 GB");
  // The section is titled by the datasheet sizes, as the seed's "in 141 und 96 GB".
  EXPECT_EQ(section(seed().de, "memory").title, "Welche Läufe in 141 und 96 GB passen");
}

TEST(Report, M4_M5_M6_M9_M10_M12_ModelStatesAndFree) {
  EXPECT_EQ(printed_GB(one_card("8B LoRA", "rtx-pro-6000").memory.states.total(), 1), 16.7);  // M4
  EXPECT_EQ(printed_GB(one_card("8B LoRA", "rtx-pro-6000").memory.free, 0), 86);              // M5
  EXPECT_EQ(printed_GB(one_card("32B LoRA", "rtx-pro-6000").memory.free, 0), 35);             // M6
  EXPECT_EQ(printed_GB(one_card("70B QLoRA", "rtx-pro-6000").memory.free, 0), 60);            // M9
  EXPECT_EQ(printed_GB(one_card("70B QLoRA", "h200-nvl").memory.free, 0), 108);               // M9
  const auto& full32 = one_card("8B full fine-tune, 32-bit Adam", "h200-nvl").memory;
  EXPECT_EQ(printed_GB(full32.states.total(), 0), 128);  // M10
  EXPECT_EQ(printed_GB(full32.free, 0), 22);             // M10
  const auto& full8 = one_card("8B full fine-tune, 8-bit Adam", "rtx-pro-6000").memory;
  EXPECT_NEAR(to_GB(full8.states.total()), 80, 1);  // M12: about 80 GB
  // As printed, in both languages.
  const DocTable& de = table(seed().de, "memory", "Speicher pro Karte");
  EXPECT_EQ(cell(de, {"8B LoRA", "RTX PRO 6000 WS"}, "Modellzustände"), "16,7 GB");
  EXPECT_EQ(cell(de, {"8B full fine-tune, 32-bit Adam", "H200 NVL"}, "Modellzustände"), "128,5 GB");
  const DocTable& en = table(seed().en, "memory", "Memory per card");
  EXPECT_EQ(cell(en, {"8B LoRA", "RTX PRO 6000 WS"}, "model states"), "16.7 GB");
}

TEST(Report, M8_M11_M12_M13_Verdicts) {
  // M13: LoRA up to 32B and QLoRA up to 70B fit both cards, with room for activations.
  for (const char* run : {"8B LoRA", "32B LoRA", "70B QLoRA"})
    for (const char* gpu : {"h200-nvl", "rtx-pro-6000"})
      EXPECT_EQ(one_card(run, gpu).memory.verdict, Verdict::kFits) << run << " " << gpu;
  // M10/M11: 32-bit Adam fits one H200 NVL, not one RTX PRO 6000; M12: 8-bit Adam fits it.
  EXPECT_EQ(one_card("8B full fine-tune, 32-bit Adam", "h200-nvl").memory.verdict, Verdict::kFits);
  EXPECT_EQ(one_card("8B full fine-tune, 32-bit Adam", "rtx-pro-6000").memory.verdict,
            Verdict::kDoesNotFit);
  EXPECT_EQ(one_card("8B full fine-tune, 8-bit Adam", "rtx-pro-6000").memory.verdict,
            Verdict::kFits);
  // M8: about 6 GB free on the H200 NVL, too little to plan with: not `fits` on either card.
  const auto& lora70 = one_card("70B LoRA on a BF16 base", "h200-nvl").memory;
  EXPECT_NEAR(to_GB(lora70.free), 6.4, 0.1);
  EXPECT_NE(lora70.verdict, Verdict::kFits);
  // M11: two RTX PRO 6000 with FSDP hold 64.2 GB of model states each; the verdict words.
  const DocTable& de = table(seed().de, "memory", "Speicher pro Karte");
  EXPECT_EQ(
      cell(de, {"8B full fine-tune, 32-bit Adam", "2 × RTX PRO 6000 WS, FSDP"}, "Modellzustände"),
      "64,2 GB");
  EXPECT_EQ(cell(de, {"8B full fine-tune, 32-bit Adam", "2 × RTX PRO 6000 WS, FSDP"}, "Ergebnis"),
            "passt");
  EXPECT_EQ(cell(de, {"8B full fine-tune, 32-bit Adam", "RTX PRO 6000 WS"}, "Ergebnis"),
            "passt nicht");
  const auto summary = items(seed().de, "memory");
  const std::string full = *std::find_if(summary.begin(), summary.end(), [](const auto& s) {
    return s.starts_with("8B full fine-tune, 32-bit Adam");
  });
  EXPECT_NE(full.find("passt auf die H200 NVL (22,3 GB frei)"), std::string::npos) << full;
  EXPECT_NE(full.find("passt nicht auf die RTX PRO 6000 WS"), std::string::npos) << full;
  EXPECT_NE(full.find("2 × RTX PRO 6000 WS mit FSDP: 64,2 GB Modellzustände pro Karte, passt"),
            std::string::npos)
      << full;
}

TEST(Report, R2_R3_R4_R5_R7_IntensityAndOpsPerByte) {
  const auto& ref = seed().model.references;
  ASSERT_EQ(ref.size(), 2u);
  // R2: NVIDIA's printed figures, and the op model's own, held together (rounding of the source).
  for (const auto& g : ref) {
    const GemmCost c = g.cost();
    EXPECT_NEAR(intensity(c.flops, c.bytes), g.published_FLOP_per_B, 0.5) << g.id;
  }
  const DocTable& en = table(seed().en, "roofline", "Arithmetic intensity");
  EXPECT_EQ(cell(en, {"NVIDIA's example: linear layer, 1,024 in, 4,096 out, batch 512"}, "FLOP/B"),
            "315.1");
  EXPECT_EQ(cell(en, {"NVIDIA's example: linear layer, 1,024 in, 4,096 out, batch 1"}, "FLOP/B"),
            "1.0");
  // R3: the up-projection at 2048 tokens, about 1250 FLOP/B; R7: the rank-16 adapter, about 16.
  const DocTable& de = table(seed().de, "roofline", "Arithmetische Intensität");
  EXPECT_EQ(cell(de, {"Llama 3.1 8B: `mlp.up_proj.fwd`, 2.048 Token"}, "FLOP/B"), "1.246,6");
  EXPECT_EQ(cell(de, {"Llama 3.1 8B: `mlp.up_proj.fwd`, 2.048 Token"}, "auf der H200 NVL"),
            "rechenlimitiert");
  EXPECT_EQ(cell(de, {"Llama 3.1 8B: `mlp.up_proj.fwd`, 2.048 Token"}, "auf der RTX PRO 6000 WS"),
            "rechenlimitiert");
  EXPECT_EQ(cell(de, {"Llama 3.1 8B: Multiplikation des Rang-16-Adapters `attn.q_proj.lora_a.fwd`"},
                 "FLOP/B"),
            "15,8");
  EXPECT_EQ(cell(de, {"Llama 3.1 8B: Multiplikation des Rang-16-Adapters `attn.q_proj.lora_a.fwd`"},
                 "auf der H200 NVL"),
            "speicherlimitiert");
  // R4, R5: ops:byte 174 and 281.
  const DocTable& opb = table(seed().de, "roofline", "ops:byte");
  EXPECT_EQ(cell(opb, {"H200 NVL"}, "ops:byte"), "174");
  EXPECT_EQ(cell(opb, {"RTX PRO 6000 WS"}, "ops:byte"), "281");
  EXPECT_EQ(cell(opb, {"H200 NVL"}, "dicht, BF16"), "835,5 TFLOPS");
}

TEST(Report, R6_R8_StepRatioBetweenTensorAndBandwidthRatio) {
  const auto& r = seed().model.roofline;
  ASSERT_EQ(r.versus_first.size(), 2u);
  ASSERT_TRUE(r.versus_first[1]);
  const StepComparison& c = *r.versus_first[1];
  EXPECT_EQ(test::printed(c.tensor_rate_ratio, 2), 1.66);  // R6
  EXPECT_EQ(test::printed(c.bandwidth_ratio, 1), 2.7);     // R8
  // The step ratio lies between what compute-bound GEMMs get (the tensor-rate ratio times the
  // architectures' multipliers fitted to measured runs) and what memory-bound ops get.
  EXPECT_LT(c.effective_tensor_ratio, c.tensor_rate_ratio + 1e-12);
  EXPECT_GT(c.overall, c.effective_tensor_ratio);
  EXPECT_LT(c.overall, c.bandwidth_ratio);
  // The roofline chart holds the step's operations on both cards.
  std::size_t on_first = 0, on_second = 0;
  for (const auto& p : r.points) {
    on_first += p.achieved[0].has_value();
    on_second += p.achieved[1].has_value();
  }
  EXPECT_GT(on_first, 20u);
  EXPECT_EQ(on_first, on_second);
  const std::string text = all_text(seed().de, "roofline");
  EXPECT_NE(text.find("1,66×"), std::string::npos);
}

TEST(Report, T1_T3_T4_T5_TensorRates) {
  const DocTable& de = table(seed().de, "rates", "Dichte Tensor-Raten");
  EXPECT_EQ(cell(de, {"BF16"}, "H200 NVL"), "835,5*");  // T1: sparse rate halved
  EXPECT_EQ(cell(de, {"FP8"}, "H200 NVL"), "1.670,5*");
  EXPECT_EQ(cell(de, {"BF16"}, "RTX PRO 6000 WS"), "503,8");  // T2
  EXPECT_EQ(cell(de, {"FP8"}, "RTX PRO 6000 WS"), "1.007,6");
  EXPECT_EQ(cell(de, {"BF16"}, "H200 NVL / RTX PRO 6000 WS"), "1,66×");  // T3
  EXPECT_EQ(cell(de, {"FP8"}, "H200 NVL / RTX PRO 6000 WS"), "1,66×");
  EXPECT_EQ(cell(de, {"BF16"}, "RTX PRO 6000 Max-Q"), "438,9");  // T4
  EXPECT_EQ(cell(de, {"BF16"}, "H200 NVL / RTX PRO 6000 Max-Q"), "1,90×");
  EXPECT_EQ(cell(de, {"BF16"}, "RTX PRO 6000 Server"), "unbekannt");  // T5
  EXPECT_EQ(cell(de, {"BF16"}, "H200 NVL / RTX PRO 6000 Server"), "–");
}

TEST(Report, C2_C3_C4_C5_TrafficBetweenCards) {
  const ReportTrafficRow* ddp = nullptr;
  const ReportTrafficRow* fsdp = nullptr;
  const ReportTrafficRow* base = nullptr;
  for (const auto& row : seed().model.traffic) {
    if (row.run->name == "8B full fine-tune, 32-bit Adam")
      (row.sharding == Sharding::kDdp ? ddp : fsdp) = &row;
    if (row.run->name == "70B LoRA on a BF16 base" && row.strategy == CommStrategy::kShardedBase)
      base = &row;
  }
  ASSERT_TRUE(ddp && fsdp && base);
  EXPECT_EQ(printed_GB(ddp->plans.front().calls()[0].cost.size, 2), 16.06);  // C2
  ASSERT_TRUE(fsdp->over_data_parallel);
  EXPECT_NEAR(*fsdp->over_data_parallel, 1.5, 0.01);  // C3
  const std::vector<std::pair<int, double>> c4 = {{2, 141}, {4, 212}, {8, 247}};
  ASSERT_EQ(base->counts.size(), c4.size());
  for (std::size_t i = 0; i < c4.size(); ++i) {
    EXPECT_EQ(base->counts[i], c4[i].first);
    EXPECT_EQ(printed_GB(base->frozen_base[i].received_per_card, 0), c4[i].second);
  }
  // The text gives the same figures and C5's link times: >= 2.2 s over PCIe, >= 0.3 s over NVLink.
  const std::string de = all_text(seed().de, "multi-card");
  EXPECT_NE(de.find("141 GB bei 2 Karten, 212 GB bei 4 Karten und 247 GB bei 8 Karten"),
            std::string::npos)
      << de;
  EXPECT_NE(de.find("mindestens 2,2 s über PCIe Gen5 x16 mit 64 GB/s pro Richtung"),
            std::string::npos);
  EXPECT_NE(de.find("mindestens 0,3 s über NVLink-4-Brücke mit 450 GB/s pro Richtung"),
            std::string::npos);
  EXPECT_NE(de.find("16 GB BF16-Gradienten"), std::string::npos);
  EXPECT_NE(de.find("das 1,5-Fache"), std::string::npos);
}

TEST(Report, W4_ScalingCurves_NvlinkAgainstPcie) {
  // Per run that needs several cards: the H200 NVL on its bridge and held to PCIe, the RTX PRO
  // 6000 on PCIe; at two cards the bridge scales better than PCIe, beyond four both cross PCIe.
  for (const auto& sc : seed().model.scaling) {
    ASSERT_EQ(sc.series.size(), 3u) << sc.run->name;
    const auto at = [&](std::size_t s, int n) -> const ScaleResult& {
      for (const auto& p : sc.series[s].points)
        if (p.count == n) return p.result;
      throw std::runtime_error("no point");
    };
    EXPECT_EQ(sc.series[0].gpu->id, "h200-nvl");
    EXPECT_FALSE(sc.series[0].forced_pcie);
    EXPECT_TRUE(sc.series[1].forced_pcie);
    EXPECT_EQ(sc.series[2].gpu->id, "rtx-pro-6000");
    EXPECT_GT(at(0, 2).scale.scaling_efficiency, at(1, 2).scale.scaling_efficiency) << sc.run->name;
    EXPECT_EQ(at(0, 8).comm.link, LinkLevel::kPcie);
    EXPECT_EQ(at(2, 8).comm.link, LinkLevel::kPcie);
  }
}

TEST(Report, TheNvlinkLineEndsWhereItsDomainDoes) {
  // The H200 NVL's bridge joins 4 cards: its solid line stops at 4, and its label says that
  // beyond them the cards talk over PCIe, as the dashed line (held to PCIe) shows at 8.
  const std::pair<const std::string*, std::string> reports[] = {
      {&seed().html_en, "NVLink 4 bridge up to 4 cards (beyond them PCIe"},
      {&seed().html_de, "NVLink-4-Brücke bis 4 Karten (darüber PCIe"}};
  for (const auto& [html, label] : reports) {
    const std::size_t chart = html->find("id=\"chart-scaling-0-title\"");
    ASSERT_NE(chart, std::string::npos);
    const std::string svg = html->substr(chart, html->find("</svg>", chart) - chart);
    const std::string start = "<polyline points=\"";
    const std::size_t line = svg.find(start);  // the first line: the H200 NVL on its bridge
    ASSERT_NE(line, std::string::npos) << svg;
    const std::size_t from = line + start.size();
    const std::string points = svg.substr(from, svg.find('"', from) - from);
    EXPECT_EQ(std::count(points.begin(), points.end(), ','), 3) << points;  // 1, 2 and 4 cards
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
}

TEST(Report, G1_G2_G4_MigProfilesAndFree) {
  ASSERT_EQ(seed().model.mig.size(), 2u);
  const DocTable& h200 = table(seed().de, "mig", "MIG-Profile der H200 NVL");
  EXPECT_EQ(cell(h200, {"`1g.18gb`"}, "Speicher pro Instanz"), "16,5 GB");  // G1
  EXPECT_EQ(cell(h200, {"`1g.18gb`"}, "Instanzen pro Karte"), "7");
  const DocTable& rtx = table(seed().de, "mig", "MIG-Profile der RTX PRO 6000 WS");
  EXPECT_EQ(cell(rtx, {"`1g.24gb`"}, "Instanzen pro Karte"), "4");  // G2
  EXPECT_EQ(cell(rtx, {"`2g.48gb`"}, "Instanzen pro Karte"), "2");
  // G4: the 8B LoRA leaves about 7 GB in a 24 GB instance, no working room in 1g.18gb.
  EXPECT_EQ(cell(table(seed().de, "mig", "Frei pro Instanz auf der RTX PRO 6000 WS"), {"8B LoRA"},
                 "`1g.24gb`"),
            "7,3 GB ~");
  EXPECT_EQ(
      cell(table(seed().de, "mig", "Frei pro Instanz auf der H200 NVL"), {"8B LoRA"}, "`1g.18gb`"),
      "-0,2 GB ✗");
  // G5, G6 in the seed's words.
  const std::string de = all_text(seed().de, "mig");
  EXPECT_NE(de.find("NCCL derzeit nicht mit MIG unterstützt wird"), std::string::npos);
  EXPECT_NE(de.find("RTX PRO 6000 WS: NVIDIA verlangt, dass der Anzeigemodus auf Compute"),
            std::string::npos);
}

TEST(Report, W1_W2_W3_WhichCardForWhichRun_FromThePlanner) {
  const DocTable& en = table(seed().en, "recommendations", "Which card for which run");
  // The cells are the planner's minimum per card type.
  EXPECT_TRUE(cell(en, {"8B LoRA"}, "RTX PRO 6000 WS").starts_with("1 card, 86 GB free"));  // W1
  EXPECT_TRUE(cell(en, {"32B LoRA"}, "RTX PRO 6000 WS").starts_with("1 card, 35 GB free"));
  EXPECT_TRUE(cell(en, {"70B QLoRA"}, "RTX PRO 6000 WS").starts_with("1 card, 60 GB free"));  // W2
  EXPECT_TRUE(cell(en, {"70B QLoRA"}, "H200 NVL").starts_with("1 card, 108 GB free"));
  EXPECT_TRUE(cell(en, {"8B full fine-tune, 32-bit Adam"}, "H200 NVL")  // W3
                  .starts_with("1 card, 22 GB free"));
  EXPECT_TRUE(
      cell(en, {"8B full fine-tune, 32-bit Adam"}, "RTX PRO 6000 WS").starts_with("2 cards"));
  EXPECT_TRUE(cell(en, {"8B full fine-tune, 8-bit Adam"}, "RTX PRO 6000 WS").starts_with("1 card"));
  EXPECT_TRUE(cell(en, {"70B LoRA on a BF16 base"}, "H200 NVL").starts_with("2 cards"));
  // One recommendation per run, each the planner's.
  const DocTable& rec = table(seed().en, "recommendations", "Recommendation per run");
  ASSERT_EQ(rec.rows.size(), seed().model.plan.runs.size());
  for (const auto& rp : seed().model.plan.runs) {
    ASSERT_TRUE(rp.recommendation) << rp.run->name;
    EXPECT_TRUE(cell(rec, {rp.run->name}, "choice")
                    .starts_with(fmt::format("{} × {}", rp.recommendation->count,
                                             rp.recommendation->gpu->short_name)))
        << rp.run->name;
  }
  // W5 in the seed's words.
  EXPECT_NE(all_text(seed().de, "recommendations")
                .find("umgeht ein Job pro Karte die Frage der Verbindung ganz"),
            std::string::npos);
}

TEST(Report, CliWritesWhatTheLibraryRenders) {
  const auto md = test::run_cli({"report", "--lang", "de"});
  ASSERT_EQ(md.code, 0) << md.err;
  EXPECT_EQ(md.out, seed().md_de);
  const auto html = test::run_cli({"report", "--format", "html"});
  ASSERT_EQ(html.code, 0) << html.err;
  EXPECT_EQ(html.out, seed().html_en);
  // Other cards: the comparison follows --gpu (no MIG on an RTX 4090: the MIG section says so).
  const auto other = test::run_cli({"report", "--gpu", "h100-sxm", "--gpu", "rtx-4090"});
  ASSERT_EQ(other.code, 0) << other.err;
  EXPECT_NE(other.out.find("# H100 SXM or GeForce RTX 4090 for fine-tuning"), std::string::npos);
  EXPECT_EQ(other.out.find("| H200 NVL"), std::string::npos);  // in no table
  EXPECT_NE(other.out.find("| GeForce RTX 4090 |"), std::string::npos);
}

TEST(Report, CliWritesTheFileNamedByOutput_FormatFromItsExtension) {
  const std::string path = ::testing::TempDir() + "ftplan-report-test.html";
  const auto r = test::run_cli({"report", "--lang", "de", "-o", path});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  std::ifstream in(path, std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written, seed().html_de);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ftplan
