// The memory model against published measurements (data/measured/published.yaml): the errors are
// computed by the code under test from the sources' figures, not stored. And the strictness of
// the measured-runs parser on a user's file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "memory/measured_runs.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

std::vector<MeasuredRun> published_runs() {
  const DataFile* f = test::catalog().file("measured/published.yaml");
  EXPECT_NE(f, nullptr);
  return parse_measured_runs(*f, test::catalog(), test::overheads());
}

TEST(Validation, PublishedRunsMedianWithin15PercentNoneWorseThan30) {
  const std::vector<MeasuredRun> runs = published_runs();
  const ValidationReport r = validate_runs(runs);
  // Every starred row of the reference file is there, predicted or skipped with a reason.
  EXPECT_EQ(runs.size(), 20u);
  EXPECT_EQ(r.overall.rows + r.skipped, 20);
  EXPECT_GE(r.overall.rows, 15);
  EXPECT_LE(r.overall.median_abs_error, 0.15);
  EXPECT_LE(r.overall.worst_abs_error, 0.30) << "worst: " << r.overall.worst_id;
  for (const auto& row : r.rows) {
    if (row.skipped) {
      EXPECT_FALSE(row.reason.empty()) << row.run->id;
      continue;
    }
    EXPECT_LE(std::abs(row.error), 0.30) << row.run->id;
    EXPECT_GT(row.predicted.value, 0) << row.run->id;
  }
  // The summary per source covers the predicted rows.
  int per_source = 0;
  for (const auto& s : r.per_source) {
    per_source += s.rows;
    EXPECT_LE(s.worst_abs_error, 0.30) << s.source;
  }
  EXPECT_EQ(per_source, r.overall.rows);
}

TEST(Validation, SkippedRowsNameTheirReason) {
  const std::vector<MeasuredRun> runs = published_runs();
  const ValidationReport r = validate_runs(runs);
  auto reason = [&](const std::string& id) {
    for (const auto& row : r.rows)
      if (row.run->id == id) return row.skipped ? row.reason : std::string();
    return std::string("not listed");
  };
  EXPECT_NE(reason("B1").find("sequence length"), std::string::npos);
  EXPECT_NE(reason("C1").find("not in the catalog"), std::string::npos);
  EXPECT_NE(reason("P2").find("no memory figure"), std::string::npos);
}

TEST(Validation, UnitsAndPeakKindsAreTheSources) {
  const std::vector<MeasuredRun> runs = published_runs();
  for (const auto& run : runs) {
    if (run.id == "A8") {
      EXPECT_EQ(run.unit, "GB");  // the README writes GB for this row
      EXPECT_DOUBLE_EQ(run.measured_bytes().value, 44.8e9);
    }
    if (run.id == "E1") {
      EXPECT_EQ(run.peak, MeasuredPeak::kReserved);
      // 37,345,097,154 B reserved = 34.78 GiB
      EXPECT_NEAR(run.measured_bytes().value, 37'345'097'154.0, 0.01 * kBytesPerGiB);
    }
    if (run.id == "B2") EXPECT_EQ(run.peak, MeasuredPeak::kActive);
  }
}

TEST(Validation, PredictedPeakCountsWhatEachKindSees) {
  const MemoryEstimate m = estimate_memory(test::workload("llama-3.1-8b", Method::kLora),
                                           test::on("h200-nvl", 2, Sharding::kFsdp));
  const OverheadBreakdown& o = m.runtime.overheads;
  const Bytes allocated = predicted_peak(m, MeasuredPeak::kAllocated);
  EXPECT_EQ(predicted_peak(m, MeasuredPeak::kActive), allocated);
  EXPECT_NEAR((predicted_peak(m, MeasuredPeak::kReserved) - allocated).value,
              o.allocator_reserve.value, 1.0);
  EXPECT_NEAR(
      (predicted_peak(m, MeasuredPeak::kNvidiaSmi) - predicted_peak(m, MeasuredPeak::kReserved))
          .value,
      (o.cuda_context + o.nccl_buffers).value, 1.0);
  // The fit peak (reserved) is what nvidia-smi would show.
  EXPECT_NEAR(m.peak.value, predicted_peak(m, MeasuredPeak::kNvidiaSmi).value, 1.0);
}

// A user's file: the same schema, parsed as strictly.
std::string parse_error(const std::string& text) {
  try {
    parse_measured_runs({"my-runs.yaml", text, {}}, test::catalog(), test::overheads());
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

const char* kGoodRun = R"(runs:
  - id: mine
    source: measured-peft-metamathqa
    model: llama-3.2-3b
    method: lora
    rank: 16
    targets: q,v
    optimizer: adamw
    recompute: full
    attention: flash
    seq: 1024
    micro_batch: 2
    gpu: l40s
    gpus: 1
    peak: reserved
    measured: 12.5
    unit: GB
)";

std::string with(const std::string& from, const std::string& to) {
  std::string s = kGoodRun;
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(Validation, AUsersFileIsPredicted) {
  const auto runs =
      parse_measured_runs({"my-runs.yaml", kGoodRun, {}}, test::catalog(), test::overheads());
  ASSERT_EQ(runs.size(), 1u);
  const ValidationReport r = validate_runs(runs);
  EXPECT_FALSE(r.rows[0].skipped);
  EXPECT_EQ(r.overall.rows, 1);
  EXPECT_EQ(runs[0].workload.seq, 1024);
  EXPECT_EQ(runs[0].placement.gpu->id, "l40s");
}

TEST(Validation, AUsersFileIsParsedStrictly) {
  EXPECT_NE(parse_error(with("    gpus: 1\n", "    gpus: 1\n    flash: true\n"))
                .find("my-runs.yaml: key 'runs[0].flash' (line 15): unknown key"),
            std::string::npos);
  EXPECT_NE(parse_error(with("llama-3.2-3b", "llama-3.2-3bb"))
                .find("unknown model 'llama-3.2-3bb'; did you mean llama-3.2-3b"),
            std::string::npos);
  EXPECT_NE(parse_error(with("l40s", "l40")).find("unknown GPU 'l40'; did you mean l40s"),
            std::string::npos);
  EXPECT_NE(parse_error(with("unit: GB", "unit: gb")).find("runs[0].unit"), std::string::npos);
  EXPECT_NE(parse_error(with("    peak: reserved\n", "")).find("needs the kind of peak"),
            std::string::npos);
  EXPECT_NE(parse_error(with("    rank: 16\n", "")).find("needs its rank"), std::string::npos);
  EXPECT_NE(parse_error(with("adamw", "adam")).find("unknown optimizer 'adam'"), std::string::npos);
  EXPECT_NE(parse_error(with("measured-peft-metamathqa", "peft")).find("not defined in any"),
            std::string::npos);
  EXPECT_NE(parse_error(with("seq: 1024", "seq: -5")).find("runs[0].seq"), std::string::npos);
  EXPECT_NE(parse_error(with("attention: flash", "attention: flesh")).find("did you mean flash"),
            std::string::npos);
  EXPECT_NE(parse_error(std::string(kGoodRun) + std::string(kGoodRun).substr(6))
                .find("run id 'mine' is listed twice"),
            std::string::npos);
  EXPECT_NE(parse_error(with("source: measured-peft-metamathqa", "source: []"))
                .find("needs the id of its source"),
            std::string::npos);
  EXPECT_NE(parse_error("runs: []\n").find("lists no runs"), std::string::npos);
  EXPECT_NE(parse_error("runs: [1, 2]\n").find("expected a map"), std::string::npos);
  EXPECT_NE(parse_error("- a\n").find("expected a map of keys"), std::string::npos);
  EXPECT_NE(parse_error("runs: [\n").find("not valid YAML"), std::string::npos);
  // A predicted run states every setting the model reads.
  EXPECT_NE(parse_error(with("    micro_batch: 2\n", "")).find("micro_batch"), std::string::npos);
  // The optimizer step in backward cannot accumulate gradients.
  EXPECT_NE(parse_error(with("    gpus: 1\n",
                             "    gpus: 1\n    optimizer_in_backward: true\n"
                             "    grad_accum: 4\n"))
                .find("gradient accumulation 1"),
            std::string::npos);
}

TEST(Validation, ASkipReasonTakesAModelOutsideTheCatalog) {
  const std::string text = with("    model: llama-3.2-3b\n",
                                "    model: llama-2-7b\n    skip: \"not in the catalog\"\n");
  const auto runs =
      parse_measured_runs({"my-runs.yaml", text, {}}, test::catalog(), test::overheads());
  const ValidationReport r = validate_runs(runs);
  EXPECT_TRUE(r.rows[0].skipped);
  EXPECT_EQ(r.rows[0].reason, "not in the catalog");
  EXPECT_EQ(r.overall.rows, 0);
}

}  // namespace
}  // namespace ftplan
