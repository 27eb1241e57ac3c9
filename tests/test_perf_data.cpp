// Strict parsing of the perf data tables (training formats, efficiencies): each defect is a
// UserError that names the file and the key.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "perf/device.hpp"
#include "perf/efficiency.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

const std::string kFormatsHead = "formats:\n";
std::string format_entry(const std::string& id, const std::string& rules) {
  return "  - id: " + id + "\n    name: X\n    description: d\n    rules:\n" + rules;
}
const std::string kOk =
    "      - {min_cc: \"8.0\", supported: true, source: cuda-programming-guide}\n"
    "      - {supported: false, reason: r, source: cuda-programming-guide}\n";

std::string formats_with(const std::string& fp8_rules, bool drop_nvfp4 = false) {
  std::string s = kFormatsHead + format_entry("bf16", kOk) + format_entry("fp16", kOk) +
                  format_entry("fp8", fp8_rules) + format_entry("mxfp8", kOk);
  if (!drop_nvfp4) s += format_entry("nvfp4", kOk);
  return s;
}

std::string parse_error(const std::string& text) {
  try {
    TrainingFormats::parse({"formats.yaml", text, {}}, test::catalog().sources());
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(PerfData, TrainingFormatsParseStrictly) {
  EXPECT_EQ(parse_error(formats_with(kOk)), "");
  EXPECT_NE(parse_error(formats_with(kOk, true)).find("format 'nvfp4' is missing"),
            std::string::npos);
  EXPECT_NE(parse_error(formats_with("      - {min_cc: \"8.9\", supported: true, source: "
                                     "cuda-programming-guide}\n"))
                .find("the last rule must have no min_cc"),
            std::string::npos);
  EXPECT_NE(
      parse_error(formats_with("      - {supported: false, source: cuda-programming-guide}\n"))
          .find("an unsupported rule needs a 'reason'"),
      std::string::npos);
  EXPECT_NE(parse_error(formats_with("      - {min_cc: nine, supported: true, source: "
                                     "cuda-programming-guide}\n" +
                                     kOk))
                .find("expected a compute capability like \"8.9\", got 'nine'"),
            std::string::npos);
  EXPECT_NE(parse_error(formats_with("      - {supported: true, source: te}\n"))
                .find("source id 'te' is not defined"),
            std::string::npos);
  const std::string dup = formats_with(kOk) + format_entry("fp8", kOk);
  EXPECT_NE(parse_error(dup).find("format 'fp8' is listed twice"), std::string::npos);
  EXPECT_NE(parse_error(formats_with(kOk) + format_entry("fp4", kOk)).find("unknown value 'fp4'"),
            std::string::npos);
}

TEST(PerfData, TrainingFormatRulesFirstMatchWins) {
  const TrainingFormats f = TrainingFormats::parse(
      {"formats.yaml",
       formats_with(
           "      - {min_cc: \"12.0\", supported: false, reason: too new, source: "
           "cuda-programming-guide}\n"
           "      - {min_cc: \"8.9\", supported: true, caveat: c, source: "
           "cuda-programming-guide}\n"
           "      - {supported: false, reason: too old, source: cuda-programming-guide}\n"),
       {}},
      test::catalog().sources());
  EXPECT_EQ(f.check(test::catalog().gpu("rtx-pro-6000"), ComputeFormat::kFP8).reason, "too new");
  EXPECT_TRUE(f.check(test::catalog().gpu("l40s"), ComputeFormat::kFP8).supported);
  EXPECT_EQ(f.check(test::catalog().gpu("l40s"), ComputeFormat::kFP8).caveat, "c");
  EXPECT_EQ(f.check(test::catalog().gpu("a100-80gb-sxm"), ComputeFormat::kFP8).reason, "too old");
}

TEST(PerfData, EveryShippedFigureCitesADefinedSource) {
  // Loading the built-in tables succeeds (every source id resolves) and covers every class.
  const EfficiencyTable e = default_efficiency(test::catalog());
  EXPECT_FALSE(e.is_calibration());
  for (auto c : kAllOpClasses) {
    for (const auto& r : e.of(c).compute.ranges) {
      EXPECT_FALSE(r.basis.empty());
      EXPECT_FALSE(r.sources.empty());
    }
    EXPECT_FALSE(std::isfinite(e.of(c).compute.ranges.back().below));
    EXPECT_FALSE(std::isfinite(e.of(c).memory.ranges.back().below));
  }
  load_training_formats(test::catalog());
}

}  // namespace
}  // namespace ftplan
