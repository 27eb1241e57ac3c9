// Text output a terminal can show: no line of a command's default text wider than 100 displayed
// characters (--wide keeps lines as long as they come), one unit per table column, and the reason
// a card has no figure.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "render/table.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

namespace fs = std::filesystem;

// The widest line of `text` in displayed characters, and the line itself.
std::pair<std::size_t, std::string> widest_line(const std::string& text) {
  std::pair<std::size_t, std::string> widest{0, ""};
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (display_width(line) > widest.first) widest = {display_width(line), line};
  return widest;
}

// A runs file whose candidates are the whole catalog.
std::string whole_catalog_runs_file() {
  const fs::path dir = fs::temp_directory_path() / "ftplan-test-text-width";
  fs::create_directories(dir);
  const fs::path file = dir / "runs.yaml";
  std::ofstream(file) << "candidates:\n  gpus: [all]\n  counts: [1, 2, 8]\nruns:\n"
                         "  - name: 8B LoRA on the whole catalog, each card type in turn\n"
                         "    model: llama-3.1-8b\n    method: lora\n    tokens: 100e6\n"
                         "  - name: 70B QLoRA\n    model: llama-3.3-70b\n    method: qlora\n"
                         "    tokens: 50e6\n";
  return file.string();
}

std::vector<std::vector<std::string>> text_commands() {
  const std::vector<std::string> run = {"--model", "llama-3.1-8b", "--method", "lora"};
  auto with = [&run](std::vector<std::string> args) {
    args.insert(args.begin() + 1, run.begin(), run.end());
    return args;
  };
  return {
      {"gpus"},
      {"models"},
      {"params", "--model", "llama-3.1-8b"},
      with({"fit", "--gpu", "h200-nvl"}),
      with({"step", "--gpu", "h200-nvl"}),
      with({"step", "--gpu", "rtx-pro-6000", "--all-ops"}),
      {"compare", "--gpu", "h200-nvl", "--gpu", "rtx-pro-6000"},
      with({"compare", "--gpu", "h200-nvl", "--gpu", "rtx-pro-6000"}),
      {"scale", "--model", "llama-3.3-70b", "--method", "lora", "--gpu", "h200-nvl", "--gpu",
       "rtx-pro-6000", "--sweep"},
      {"scale", "--model", "llama-3.3-70b", "--method", "lora", "--gpu", "rtx-pro-6000", "--gpus",
       "2", "--shard", "fsdp"},
      {"plan"},
      {"plan", "--gpu", "a10g", "--gpu", "h200-nvl"},
      {"plan", whole_catalog_runs_file()},
      with({"mig", "--gpu", "h200-nvl"}),
      with({"max", "--gpu", "h200-nvl", "--solve", "seq"}),
      {"validate"},
      {"stacks"},
      with({"explain", "plan.card_hours", "--gpu", "h200-nvl", "--tokens", "100e6"}),
      {"roofline", "--gpu", "h200-nvl", "--gemm", "2048,14336,4096"},
      {"pack", std::string(FTPLAN_SOURCE_DIR) + "/examples/mig-queue.yaml", "--gpu", "h200-nvl"},
  };
}

std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const auto& a : args)
    s += (s.empty() ? "" : " ") + a;
  return s;
}

TEST(TextWidth, EveryLineOfTheDefaultTextFitsAHundredColumns) {
  for (const auto& args : text_commands()) {
    const auto r = test::run_cli(args);
    ASSERT_EQ(r.code, 0) << joined(args) << ": " << r.err;
    ASSERT_FALSE(r.out.empty()) << joined(args);
    const auto [width, line] = widest_line(r.out);
    EXPECT_LE(width, kTerminalColumns) << joined(args) << ":\n" << line;
  }
}

TEST(TextWidth, WideKeepsTheLongLines) {
  const auto narrow = test::run_cli({"gpus"});
  const auto wide = test::run_cli({"--wide", "gpus"});
  ASSERT_EQ(wide.code, 0) << wide.err;
  EXPECT_GT(widest_line(wide.out).first, kTerminalColumns) << wide.out;
  // The same cells, only not wrapped: as many words either way.
  auto words = [](const std::string& text) {
    std::istringstream in(text);
    std::size_t n = 0;
    for (std::string w; in >> w;)
      n += w.find_first_not_of('-') != std::string::npos;  // rules are drawn to the width
    return n;
  };
  EXPECT_EQ(words(narrow.out), words(wide.out));
}

TEST(TextWidth, DisplayWidthCountsCharactersNotBytes) {
  EXPECT_EQ(display_width("µs × 2 — ok"), 11u);
  EXPECT_EQ(display_width(""), 0u);
}

TEST(TextWidth, WrappedWordsStayWithinTheWidth) {
  const auto lines =
      wrap_words("fewest card-hours over nvlink-bridge-4 and a-very-long-word-here", 12);
  ASSERT_GT(lines.size(), 3u);
  for (const auto& l : lines)
    EXPECT_LE(display_width(l), 12u) << l;
  EXPECT_EQ(lines.front(), "fewest");
  EXPECT_EQ(wrap_words("short", 0), std::vector<std::string>{"short"});
}

TEST(TextWidth, WrappedBulletsHangUnderTheirText) {
  const std::string text = "- " + std::string(30, 'a') + " " + std::string(30, 'b') + "\nshort\n";
  EXPECT_EQ(wrap_lines(text, 40),
            "- " + std::string(30, 'a') + "\n  " + std::string(30, 'b') + "\nshort\n");
  EXPECT_EQ(wrap_lines(text, 0), text);
}

TEST(TextWidth, ANarrowedTableWrapsItsTextColumnAndKeepsFigures) {
  TextTable t({"run", "hours>", "why"});
  t.row({"8B LoRA", "12.25", "fewest card-hours; it fits one card, so one job per card"});
  std::ostringstream out;
  {
    const ScopedTextWidth width(40);
    t.print(out);
  }
  EXPECT_EQ(out.str(),
            "run      hours  why\n"
            "----------------------------------------\n"
            "8B LoRA  12.25  fewest card-hours; it\n"
            "                fits one card, so one\n"
            "                job per card\n");
  std::ostringstream wide;
  {
    const ScopedTextWidth width(0);
    t.print(wide);
  }
  EXPECT_NE(wide.str().find("fewest card-hours; it fits one card, so one job per card"),
            std::string::npos);
}

TEST(TextWidth, ATableTooWideForAnyColumnsIsPrintedRowByRow) {
  TextTable t({"card", "a>", "b>", "c>"});
  t.row({"h200-nvl", "123456789012", "123456789012", "123456789012"});
  std::ostringstream out;
  {
    const ScopedTextWidth width(30);
    t.print(out);
  }
  EXPECT_EQ(out.str(),
            "card: h200-nvl\n  - a: 123456789012\n  - b: 123456789012\n"
            "  - c: 123456789012\n");
}

// The plan's table of which card holds which run: each column one unit (GB per card in both
// memory columns, hours), and a card without a published rate says so, not "does not fit".
TEST(TextWidth, PlanTableHasOneUnitPerColumnAndSaysWhyACardIsNotTimed) {
  const auto narrow = test::run_cli({"plan", "--gpu", "h200-nvl", "--gpu", "a10g"});
  ASSERT_EQ(narrow.code, 0) << narrow.err;
  EXPECT_NE(narrow.out.find("not timed: no published"), std::string::npos) << narrow.out;
  // Unwrapped, for whole headers and cells.
  const auto r = test::run_cli({"--wide", "plan", "--gpu", "h200-nvl", "--gpu", "a10g"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("GB free"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("GB/card,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model states GB/card  free GB/card  hours"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not timed: no published BF16 rate"), std::string::npos) << r.out;
  // The seed's W1 figure: 8B LoRA on one H200 NVL leaves 134 GB free.
  std::istringstream lines(r.out);
  bool seen = false;
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("8B LoRA") && line.find("h200-nvl") != std::string::npos &&
        line.find("one card") != std::string::npos) {
      EXPECT_NE(line.find(" 134 "), std::string::npos) << line;
      seen = true;
    }
  EXPECT_TRUE(seen) << r.out;
}

}  // namespace
}  // namespace ftplan

namespace ftplan {
namespace {

// validate: sources publish GB or GiB; the figures are plain numbers and the unit has its column.
TEST(TextWidth, ValidateNamesTheUnitInAColumnOfItsOwn) {
  const auto r = test::run_cli({"--wide", "validate"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("measured  predicted  unit"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("18.90 GiB"), std::string::npos) << r.out;
  std::istringstream lines(r.out);
  bool seen = false;
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("A1 ") && !seen) {  // A1: 18.90 GiB measured on an RTX 4090
      EXPECT_NE(line.find(" 18.90  "), std::string::npos) << line;
      EXPECT_NE(line.find(" GiB "), std::string::npos) << line;
      seen = true;
    }
  EXPECT_TRUE(seen) << r.out;
}

}  // namespace
}  // namespace ftplan
