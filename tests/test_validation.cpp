// The memory model against published measurements (data/measured/published.yaml): the errors are
// computed by the code under test from the sources' figures, not stored. The strictness of the
// measured-runs parser on a user's file, and the runs' throughput figures and software stacks.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "core/numeric.hpp"
#include "memory/measured_runs.hpp"
#include "perf/efficiency.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

std::vector<MeasuredRun> published_runs() {
  const DataFile* f = test::catalog().file("measured/published.yaml");
  EXPECT_NE(f, nullptr);
  return parse_measured_runs(*f, test::catalog(), test::overheads(), test::stacks());
}

TEST(Validation, PublishedPreferenceRunsArePredictedWithTheirReference) {
  const DataFile* f = test::catalog().file("measured/preference.yaml");
  ASSERT_NE(f, nullptr);
  const std::vector<MeasuredRun> runs =
      parse_measured_runs(*f, test::catalog(), test::overheads(), test::stacks());
  const ValidationReport r = validate_runs(runs);
  int predicted = 0;
  for (const auto& row : r.rows) {
    if (row.skipped) {
      EXPECT_FALSE(row.reason.empty()) << row.run->id;
      continue;
    }
    ++predicted;
    const Workload& w = row.run->workload;
    EXPECT_NE(w.objective, Objective::kSft) << row.run->id;
    // The same run as supervised fine-tuning holds no reference copy: less memory.
    MeasuredRun sft = *row.run;
    sft.workload.objective = Objective::kSft;
    EXPECT_LT(validate_runs({sft}).rows[0].predicted.value, row.predicted.value) << row.run->id;
  }
  EXPECT_GE(predicted, 2);
}

TEST(Validation, PublishedRunsMedianWithin15PercentNoneWorseThan30) {
  const std::vector<MeasuredRun> runs = published_runs();
  const ValidationReport r = validate_runs(runs);
  // Every starred row of the reference file is there, predicted or skipped with a reason, and
  // the further rows with a memory figure; the 15 runs with only a throughput are not listed.
  EXPECT_EQ(runs.size(), 90u);
  EXPECT_EQ(r.overall.rows + r.skipped, 75);
  EXPECT_GE(r.overall.rows, 20);
  EXPECT_LE(r.overall.median_abs_error, 0.15);
  // LitGPT's QLoRA rows are the worst, up to a third under (data/measured/published.yaml, LG2
  // lists what they cannot state); every other row stays within 30 %.
  EXPECT_LE(r.overall.worst_abs_error, 0.35) << "worst: " << r.overall.worst_id;
  for (const auto& row : r.rows) {
    if (row.skipped) {
      EXPECT_FALSE(row.reason.empty()) << row.run->id;
      continue;
    }
    const bool litgpt_qlora = row.run->stack && row.run->stack->name == "litgpt" &&
                              method_traits(row.run->workload.method).quantized_base;
    EXPECT_LE(std::abs(row.error), litgpt_qlora ? 0.35 : 0.30) << row.run->id;
    EXPECT_GT(row.predicted.value, 0) << row.run->id;
  }
  // The summary per source covers the predicted rows.
  int per_source = 0;
  for (const auto& s : r.per_source) {
    per_source += s.rows;
    EXPECT_LE(s.worst_abs_error, s.source == "measured-litgpt-config-hub" ? 0.35 : 0.30)
        << s.source;
  }
  EXPECT_EQ(per_source, r.overall.rows);
}

// The memory model's error spread (what every peak's range is made of) is drawn from the rows of
// the sources none of its figures was taken from: every source but the ones the allocator's
// reserve was measured on. The table's record is what validate computes, within half a point:
// a change of model or data that moves it fails here.
TEST(Validation, TheModelErrorRecordIsWhatValidateComputes) {
  const ValidationReport r = validate_runs(test::measured_training_runs());
  const RuntimeOverheads& t = test::overheads();
  ASSERT_FALSE(t.allocator_reserve_sources.empty());
  std::set<std::string> sources;
  int rows = 0, fsdp1_rows = 0;
  auto among = [](const std::vector<std::string>& ids, const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  for (const auto& row : r.rows) {
    if (row.skipped) continue;
    if (among(t.allocator_reserve_sources, row.run->source)) continue;
    // The FSDP1 share's own rows: its source's reserved or nvidia-smi peaks that it applies to.
    const bool reserve_kind =
        row.run->peak == MeasuredPeak::kReserved || row.run->peak == MeasuredPeak::kNvidiaSmi;
    if (among(t.reserve_fsdp1.sources, row.run->source) && reserve_kind &&
        row.estimate.runtime.overheads.reserve_fsdp1) {
      ++fsdp1_rows;
      continue;
    }
    ++rows;
    sources.insert(row.run->source);
  }
  EXPECT_EQ(fsdp1_rows, static_cast<int>(t.reserve_fsdp1.runs.size()));
  EXPECT_GE(rows, 20);
  EXPECT_EQ(r.spread.rows, rows);
  EXPECT_EQ(r.spread.sources, static_cast<int>(sources.size()));
  const RuntimeOverheads::ErrorSpread& e = t.model_error;
  EXPECT_EQ(e.rows, r.spread.rows);
  EXPECT_EQ(e.sources, r.spread.sources);
  EXPECT_NEAR(e.median_abs_error, r.spread.median_abs_error, 0.005);
  EXPECT_NEAR(e.low, r.spread.low, 0.005);
  EXPECT_NEAR(e.high, r.spread.high, 0.005);
  EXPECT_LE(r.spread.low, 0);
  EXPECT_GE(r.spread.high, 0);
  // Every compared row has a range around its prediction, and the count inside is the rows'.
  int inside = 0;
  for (const auto& row : r.rows) {
    if (row.skipped) continue;
    EXPECT_LT(row.predicted_low, row.predicted) << row.run->id;
    EXPECT_GT(row.predicted_high, row.predicted) << row.run->id;
    inside += row.measured >= row.predicted_low && row.measured <= row.predicted_high;
  }
  EXPECT_EQ(r.inside_range, inside);
  EXPECT_EQ(r.ranged, r.overall.rows);
  EXPECT_LE(r.spread.loso_inside, r.spread.rows);
}

// The FSDP1 reserve share is the median (10th, 90th percentile: the range) of its runs' shares,
// each (nvidia-smi peak - CUDA context - NCCL buffers - allocated peak) / (allocated peak -
// resident states), from the runs' rows in data/measured and the model's figures outside the
// allocator; each run is one the share applies to.
TEST(Validation, TheFsdp1ShareIsWhatItsRunsGive) {
  const RuntimeOverheads& t = test::overheads();
  ASSERT_TRUE(t.reserve_fsdp1.present());
  ASSERT_GE(t.reserve_fsdp1.runs.size(), 5u);
  const auto& runs = test::measured_training_runs();
  auto find = [&](const std::string& id) -> const MeasuredRun* {
    for (const auto& r : runs)
      if (r.id == id) return &r;
    return nullptr;
  };
  std::vector<double> shares;
  for (const auto& r : t.reserve_fsdp1.runs) {
    const MeasuredRun* smi = find(r.run);
    const MeasuredRun* allocated = find(r.allocated_run);
    ASSERT_NE(smi, nullptr) << r.run;
    ASSERT_NE(allocated, nullptr) << r.allocated_run;
    EXPECT_EQ(smi->peak, MeasuredPeak::kNvidiaSmi) << r.run;
    EXPECT_EQ(allocated->peak, MeasuredPeak::kAllocated) << r.allocated_run;
    EXPECT_NE(
        std::find(t.reserve_fsdp1.sources.begin(), t.reserve_fsdp1.sources.end(), smi->source),
        t.reserve_fsdp1.sources.end())
        << r.run;
    const MemoryEstimate m = estimate_memory(smi->workload, smi->placement);
    EXPECT_TRUE(m.runtime.overheads.reserve_fsdp1) << r.run;
    const double outside = m.runtime.overheads.outside_allocator().value;
    const double peak = allocated->measured_bytes().value;
    shares.push_back((smi->measured_bytes().value - outside - peak) / (peak - r.resident.value));
  }
  EXPECT_NEAR(t.reserve_fsdp1.share.median, quantile_of(shares, 0.5), 0.002);
  EXPECT_NEAR(t.reserve_fsdp1.share.low, quantile_of(shares, 0.1), 0.002);
  EXPECT_NEAR(t.reserve_fsdp1.share.high, quantile_of(shares, 0.9), 0.002);
}

// A card shows no more reserved memory than it holds beside the CUDA context and NCCL: the
// allocator releases its cache before it fails. Answer.AI's Llama 2 7B QLoRA at batch 12 on an
// RTX 4090 asks for more than the card; validate compares the card's figure.
TEST(Validation, AReservedPeakIsAtMostTheCard) {
  const auto& runs = test::measured_training_runs();
  const auto it =
      std::find_if(runs.begin(), runs.end(), [](const auto& r) { return r.id == "AQ19"; });
  ASSERT_NE(it, runs.end());
  const MemoryEstimate m = estimate_memory(it->workload, it->placement);
  const Bytes card = m.capacity - m.runtime.overheads.outside_allocator();
  ASSERT_GT(predicted_peak(m, MeasuredPeak::kReserved), card);
  EXPECT_EQ(observable_peak(m, MeasuredPeak::kReserved), card);
  EXPECT_EQ(observable_peak(m, MeasuredPeak::kNvidiaSmi), m.capacity);
  EXPECT_EQ(observable_peak(m, MeasuredPeak::kAllocated),
            predicted_peak(m, MeasuredPeak::kAllocated));
  // Far from the card, nothing changes.
  const auto b1 =
      std::find_if(runs.begin(), runs.end(), [](const auto& r) { return r.id == "AQ4"; });
  ASSERT_NE(b1, runs.end());
  const MemoryEstimate small = estimate_memory(b1->workload, b1->placement);
  EXPECT_EQ(observable_peak(small, MeasuredPeak::kReserved),
            predicted_peak(small, MeasuredPeak::kReserved));
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
  EXPECT_NE(reason("C1").find("unstated length"), std::string::npos);
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
    parse_measured_runs({"my-runs.yaml", text, {}}, test::catalog(), test::overheads(),
                        test::stacks());
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
  const auto runs = parse_measured_runs({"my-runs.yaml", kGoodRun, {}}, test::catalog(),
                                        test::overheads(), test::stacks());
  ASSERT_EQ(runs.size(), 1u);
  const ValidationReport r = validate_runs(runs);
  EXPECT_FALSE(r.rows[0].skipped);
  EXPECT_EQ(r.overall.rows, 1);
  EXPECT_EQ(runs[0].workload.seq, 1024);
  EXPECT_EQ(runs[0].placement.gpu->id, "l40s");
  // `seq_max` is another name for `seq`; a run gives one of the two.
  const auto as_max = parse_measured_runs({"my-runs.yaml", with("seq: 1024", "seq_max: 1024"), {}},
                                          test::catalog(), test::overheads(), test::stacks());
  EXPECT_EQ(validate_runs(as_max).rows[0].predicted, r.rows[0].predicted);
  EXPECT_NE(parse_error(with("seq: 1024", "seq: 1024\n    seq_max: 2048"))
                .find("runs[0].seq_max' (line 12): seq_max is another name for seq"),
            std::string::npos)
      << parse_error(with("seq: 1024", "seq: 1024\n    seq_max: 2048"));
}

// nvidia-smi prints MiB: a figure in MiB or MB is the same bytes as in GB or GiB, and the table
// prints the prediction in the source's unit. 12.5 GB = 11,920.93 MiB = 12,500 MB.
TEST(Validation, APeakInMiBOrMBIsTheSameBytes) {
  const auto in_gb = parse_measured_runs({"my-runs.yaml", kGoodRun, {}}, test::catalog(),
                                         test::overheads(), test::stacks());
  const ValidationReport gb = validate_runs(in_gb);
  const std::pair<const char*, const char*> others[] = {{"measured: 11920.929", "MiB"},
                                                        {"measured: 12500", "MB"}};
  for (const auto& [figure, unit] : others) {
    const auto runs = parse_measured_runs(
        {"my-runs.yaml",
         with("measured: 12.5\n    unit: GB", std::string(figure) + "\n    unit: " + unit),
         {}},
        test::catalog(), test::overheads(), test::stacks());
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_NEAR(runs[0].measured_bytes().value, 12.5e9, 1e3) << unit;
    const ValidationReport r = validate_runs(runs);
    EXPECT_EQ(r.rows[0].predicted, gb.rows[0].predicted) << unit;
    EXPECT_NEAR(r.rows[0].error, gb.rows[0].error, 1e-6) << unit;
  }
  EXPECT_NE(parse_error(with("unit: GB", "unit: KiB")).find("(valid: GB, GiB, MB, MiB)"),
            std::string::npos)
      << parse_error(with("unit: GB", "unit: KiB"));
}

TEST(Validation, AUsersFileDefinesItsOwnSources) {
  // One's own measurements name their own source, defined in the file beside the runs.
  const std::string own = "sources:\n  - id: my-bench\n    title: \"our L40S runs, 2026-12\"\n" +
                          with("measured-peft-metamathqa", "my-bench");
  const auto runs = parse_measured_runs({"my-runs.yaml", own, {}}, test::catalog(),
                                        test::overheads(), test::stacks());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].source, "my-bench");
  const ValidationReport r = validate_runs(runs);
  ASSERT_EQ(r.per_source.size(), 1u);
  EXPECT_EQ(r.per_source[0].source, "my-bench");
  // Undefined: the error says where a source may be defined.
  const std::string missing = parse_error(with("measured-peft-metamathqa", "my-bench"));
  EXPECT_NE(missing.find("'my-bench' is not defined"), std::string::npos) << missing;
  EXPECT_NE(missing.find("top-level 'sources:' list"), std::string::npos) << missing;
  // A built-in id defined again, or an entry without a title, names the entry.
  const std::string twice = parse_error(
      "sources:\n  - id: measured-peft-metamathqa\n    title: \"again\"\n" + std::string(kGoodRun));
  EXPECT_NE(twice.find("sources[0].id"), std::string::npos) << twice;
  EXPECT_NE(twice.find("defined twice"), std::string::npos) << twice;
  const std::string untitled =
      parse_error("sources:\n  - id: my-bench\n" + with("measured-peft-metamathqa", "my-bench"));
  EXPECT_NE(untitled.find("sources[0].title"), std::string::npos) << untitled;
}

// Allocated peaks (torch.cuda.max_memory_allocated) of this project's H200 steps
// (bench/results/h200-sxm-20261204/step.json): what the tensors hold, without the allocator's
// reserve, so the loss's FP32 buffers and the saved activations are checked on their own.
TEST(Validation, MeasuredAllocatedPeaksWithin5Percent) {
  struct Row {
    const char *model, *method, *recompute;
    int seq, micro_batch;
    double allocated_bytes;
  };
  const Row rows[] = {
      {"qwen3-0.6b", "lora", "full", 2048, 1, 5252968960.0},
      {"qwen3-0.6b", "lora", "full", 2048, 4, 16854487552.0},
      {"qwen3-0.6b", "lora", "none", 2048, 4, 32953287168.0},
      {"llama-3.2-1b", "lora", "full", 2048, 4, 15954975232.0},
      {"qwen3-0.6b", "full", "full", 2048, 1, 11794077696.0},
      {"llama-3.2-3b", "full", "none", 2048, 1, 57549907456.0},
      {"llama-3.1-8b", "lora", "full", 8192, 2, 46683630080.0},
      {"qwen3-4b", "lora", "none", 8192, 2, 141306482176.0},
  };
  for (const Row& row : rows) {
    const std::string lora = std::string(row.method) == "lora"
                                 ? "    rank: 16\n    targets: q,k,v,o,gate,up,down\n"
                                 : "";
    const std::string yaml = fmt::format(
        "runs:\n  - id: g\n    source: measured-ftplan-bench-h200-2026-12\n    model: {}\n"
        "    method: {}\n{}    optimizer: adamw\n    recompute: {}\n    attention: sdpa\n"
        "    seq: {}\n    micro_batch: {}\n    gpu: h200-sxm\n    gpus: 1\n    peak: allocated\n"
        "    measured: {}\n    unit: GB\n    stack: pytorch\n",
        row.model, row.method, lora, row.recompute, row.seq, row.micro_batch,
        row.allocated_bytes / 1e9);
    const auto runs = parse_measured_runs({"bench.yaml", yaml, {}}, test::catalog(),
                                          test::overheads(), test::stacks());
    const ValidationReport r = validate_runs(runs);
    ASSERT_FALSE(r.rows[0].skipped) << r.rows[0].reason;
    EXPECT_LE(std::abs(r.rows[0].error), 0.05)
        << row.model << " " << row.method << " recompute " << row.recompute << " mb "
        << row.micro_batch << " seq " << row.seq << ": " << r.rows[0].error;
  }
}

TEST(Validation, APreferenceRunIsPredictedAsFitPredictsIt) {
  // method dpo with adapter lora: pairs of sequences and the reference pass, as `fit --method dpo
  // --adapter lora` counts them (its reserved peak, in GB).
  const std::string dpo = with("    method: lora\n", "    method: dpo\n    adapter: lora\n");
  const auto runs = parse_measured_runs({"my-runs.yaml", dpo, {}}, test::catalog(),
                                        test::overheads(), test::stacks());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].workload.objective, Objective::kDpo);
  EXPECT_EQ(runs[0].workload.method, Method::kLora);
  const ValidationReport r = validate_runs(runs);
  ASSERT_FALSE(r.rows[0].skipped) << r.rows[0].reason;
  const auto fit =
      test::run_cli({"fit",         "--model",     "llama-3.2-3b", "--method",    "dpo",
                     "--adapter",   "lora",        "--rank",       "16",          "--targets",
                     "q,v",         "--optimizer", "adamw",        "--recompute", "full",
                     "--attention", "flash",       "--seq",        "1024",        "--micro-batch",
                     "2",           "--gpu",       "l40s",         "--json"});
  ASSERT_EQ(fit.code, 0) << fit.err;
  const double reserved =
      nlohmann::json::parse(fit.out)["memory_GB"]["peaks"]["reserved"].get<double>();
  EXPECT_NEAR(r.rows[0].predicted.value / 1e9, reserved, 0.0015);
  // The same settings trained as plain LoRA hold half the sequences and no reference pass.
  const auto sft = validate_runs(parse_measured_runs(
      {"my-runs.yaml", kGoodRun, {}}, test::catalog(), test::overheads(), test::stacks()));
  EXPECT_LT(sft.rows[0].predicted.value, r.rows[0].predicted.value);
  // An adapter with an SFT method, and an online objective given a sequence length instead of
  // its prompt and completion lengths, are errors naming the key.
  for (const auto& [text, key] :
       {std::pair{with("    method: lora\n", "    method: lora\n    adapter: lora\n"),
                  std::string("adapter")},
        std::pair{with("    method: lora\n", "    method: grpo\n    adapter: lora\n"),
                  std::string("seq")}}) {
    try {
      parse_measured_runs({"my-runs.yaml", text, {}}, test::catalog(), test::overheads(),
                          test::stacks());
      ADD_FAILURE() << "no error for " << key;
    } catch (const UserError& e) {
      EXPECT_EQ(e.field(), "runs[0]." + key) << e.what();
      EXPECT_NE(std::string(e.what()).find("my-runs.yaml"), std::string::npos) << e.what();
    }
  }
}

TEST(Validation, AUsersFileIsParsedStrictly) {
  EXPECT_NE(parse_error(with("    gpus: 1\n", "    gpus: 1\n    flash: true\n"))
                .find("my-runs.yaml: key 'runs[0].flash' (line 15): unknown key"),
            std::string::npos);
  EXPECT_NE(parse_error(with("llama-3.2-3b", "llama-3.2-3bb"))
                .find("unknown model 'llama-3.2-3bb'; did you mean llama-3.2-3b"),
            std::string::npos);
  EXPECT_NE(parse_error(with("l40s", "l40ss")).find("unknown GPU 'l40ss'; did you mean l40s"),
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
  // The products' format: a known name, on a card that runs it (FP8 from compute capability 8.9).
  const std::string fp8 =
      with("    attention: flash\n", "    attention: flash\n    precision: fp8\n");
  EXPECT_EQ(parse_measured_runs({"my-runs.yaml", fp8, {}}, test::catalog(), test::overheads(),
                                test::stacks())[0]
                .workload.precision,
            ComputeFormat::kFP8);
  EXPECT_NE(
      parse_error(with("    attention: flash\n", "    attention: flash\n    precision: fp9\n"))
          .find("runs[0].precision"),
      std::string::npos);
  const std::string on_a100 =
      parse_error(fp8.substr(0, fp8.find("gpu: l40s")) + "gpu: a100-80gb-sxm" +
                  fp8.substr(fp8.find("gpu: l40s") + 9));
  EXPECT_NE(on_a100.find("my-runs.yaml: key 'runs[0].precision'"), std::string::npos) << on_a100;
  EXPECT_NE(on_a100.find("compute capability 8.9"), std::string::npos) << on_a100;
  EXPECT_NE(on_a100.find("choose another precision or card"), std::string::npos) << on_a100;
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

// The model-parallel layout of a run: tp, pp, vpp, cp and ep, each a whole number from 1, default
// 1, passed into the run's placement; a layout that does not divide names the file, the run and
// key.
TEST(Validation, LayoutKeysAreReadStrictlyAndReachThePlacement) {
  const auto plain = parse_measured_runs({"my-runs.yaml", kGoodRun, {}}, test::catalog(),
                                         test::overheads(), test::stacks());
  EXPECT_TRUE(plain[0].placement.layout.trivial());
  const std::string laid_out =
      with("    gpus: 1\n",
           "    gpus: 16\n    shard: zero1\n    tp: 2\n    pp: 2\n    vpp: 2\n    cp: 2\n"
           "    grad_accum: 4\n");
  const auto runs = parse_measured_runs({"my-runs.yaml", laid_out, {}}, test::catalog(),
                                        test::overheads(), test::stacks());
  ASSERT_EQ(runs.size(), 1u);
  const Layout& l = runs[0].placement.layout;
  EXPECT_EQ(l.tp, 2);
  EXPECT_EQ(l.pp, 2);
  EXPECT_EQ(l.vpp, 2);
  EXPECT_EQ(l.cp, 2);
  EXPECT_EQ(l.ep, 1);
  EXPECT_EQ(l.dp(runs[0].placement.count), 2);
  // The memory of the run is predicted for one card of the layout.
  EXPECT_FALSE(validate_runs(runs).rows[0].skipped);
  // Not a whole number from 1: the file and the key.
  for (const char* bad : {"0", "-2", "two", "1.5"}) {
    const std::string e =
        parse_error(with("    gpus: 1\n", fmt::format("    gpus: 1\n    tp: {}\n", bad)));
    EXPECT_NE(e.find("my-runs.yaml: key 'runs[0].tp'"), std::string::npos) << bad << ": " << e;
  }
  EXPECT_NE(
      parse_error(with("    gpus: 1\n", "    gpus: 1\n    pipeline: 2\n")).find("unknown key"),
      std::string::npos);
  // A layout that does not divide: the cards (7 over replicas of 2 cards) ...
  std::string e = parse_error(with("    gpus: 1\n", "    gpus: 7\n    tp: 2\n"));
  EXPECT_NE(e.find("my-runs.yaml: key 'runs[0].gpus'"), std::string::npos) << e;
  EXPECT_NE(e.find("run 'mine'"), std::string::npos) << e;
  // ... the heads (Llama 3.2 3B has 24) ...
  e = parse_error(with("    gpus: 1\n", "    gpus: 5\n    tp: 5\n"));
  EXPECT_NE(e.find("my-runs.yaml: key 'runs[0].tp'"), std::string::npos) << e;
  EXPECT_NE(e.find("run 'mine'"), std::string::npos) << e;
  EXPECT_NE(e.find("heads"), std::string::npos) << e;
  // ... the layers (28) over pipeline stages.
  e = parse_error(with("    gpus: 1\n", "    gpus: 3\n    pp: 3\n"));
  EXPECT_NE(e.find("my-runs.yaml: key 'runs[0]."), std::string::npos) << e;
  EXPECT_NE(e.find("run 'mine'"), std::string::npos) << e;
  // ... and the interleaved schedule's groups of pp micro-batches.
  e = parse_error(with("    gpus: 1\n", "    gpus: 4\n    pp: 2\n    vpp: 2\n    grad_accum: 3\n"));
  EXPECT_NE(e.find("my-runs.yaml: key 'runs[0].grad_accum'"), std::string::npos) << e;
  // A run skipped for settings outside the model keeps its layout unresolved.
  EXPECT_EQ(parse_error(with("    gpus: 1\n", "    gpus: 3\n    pp: 3\n    skip: \"uneven\"\n")),
            "");
}

TEST(Validation, ASkipReasonTakesAModelOutsideTheCatalog) {
  const std::string text = with("    model: llama-3.2-3b\n",
                                "    model: llama-2-7b\n    skip: \"not in the catalog\"\n");
  const auto runs = parse_measured_runs({"my-runs.yaml", text, {}}, test::catalog(),
                                        test::overheads(), test::stacks());
  const ValidationReport r = validate_runs(runs);
  EXPECT_TRUE(r.rows[0].skipped);
  EXPECT_EQ(r.rows[0].reason, "not in the catalog");
  EXPECT_EQ(r.overall.rows, 0);
}

// Throughput figures and the software stack: read strictly, each unit kept as the source states it.
std::string with_throughput(const std::string& body) {
  return with("    unit: GB\n", "    unit: GB\n    stack: torchtune\n    throughput:\n" + body);
}

TEST(ValidationThroughput, EachUnitIsRead) {
  struct Case {
    const char* unit;
    double value;
    ThroughputUnit expected;
  };
  for (const Case& c :
       {Case{"tokens_per_second_per_gpu", 1650, ThroughputUnit::kTokensPerSecondPerGpu},
        Case{"tokens_per_second", 9541, ThroughputUnit::kTokensPerSecond},
        Case{"step_seconds", 26.92, ThroughputUnit::kStepSeconds},
        Case{"mfu", 0.514, ThroughputUnit::kMfu}}) {
    const std::string text = with_throughput(fmt::format(
        "      value: {}\n      unit: {}\n      stated_per_gpu: false\n      note: \"how\"\n",
        c.value, c.unit));
    const auto runs = parse_measured_runs({"my-runs.yaml", text, {}}, test::catalog(),
                                          test::overheads(), test::stacks());
    ASSERT_EQ(runs.size(), 1u);
    ASSERT_TRUE(runs[0].throughput.has_value()) << c.unit;
    const MeasuredThroughput& t = *runs[0].throughput;
    EXPECT_EQ(t.unit, c.expected);
    EXPECT_EQ(throughput_unit_name(t.unit), c.unit);
    EXPECT_NEAR(t.value, c.value, 1e-9);
    EXPECT_FALSE(t.stated_per_gpu);
    EXPECT_EQ(t.note, "how");
    EXPECT_TRUE(t.skip.empty());
    ASSERT_NE(runs[0].stack, nullptr);
    EXPECT_EQ(runs[0].stack->name, "torchtune");
    EXPECT_EQ(runs[0].workload.stack, runs[0].stack);
    EXPECT_TRUE(runs[0].settings_complete);
    // A run with both figures stays in the memory comparison.
    EXPECT_FALSE(runs[0].throughput_only);
    EXPECT_EQ(validate_runs(runs).overall.rows, 1);
  }
}

TEST(ValidationThroughput, StacksAndDefaults) {
  EXPECT_EQ(test::stacks().names().size(), 13u);
  // LitGPT runs its AdamW with torch's foreach kernels: more passes over the states than fused.
  EXPECT_GT(test::stacks().find("litgpt").optimizer_passes,
            test::stacks().find("pytorch").optimizer_passes);
  // A bare loop (pytorch) runs what hf runs without the trainer's fixed time per micro-batch.
  EXPECT_TRUE(test::stacks().find("hf").micro_batch_overhead);
  EXPECT_FALSE(test::stacks().find("pytorch").micro_batch_overhead);
  const auto step_on = [](const char* stack) {
    return test::run_cli({"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                          "h200-sxm", "--grad-accum", "4", "--stack", stack, "--json"});
  };
  const auto hf = step_on("hf"), bare = step_on("pytorch");
  ASSERT_EQ(hf.code, 0) << hf.err;
  ASSERT_EQ(bare.code, 0) << bare.err;
  const double per_micro_batch = default_efficiency(test::catalog()).host.seconds_per_micro_batch;
  EXPECT_GT(per_micro_batch, 0);
  EXPECT_NEAR(nlohmann::json::parse(hf.out)["step_seconds"].get<double>() -
                  nlohmann::json::parse(bare.out)["step_seconds"].get<double>(),
              4 * per_micro_batch, 1e-9);
  EXPECT_EQ(test::stacks().fallback().name, "hf");
  const std::string text =
      with_throughput("      value: 7174\n      unit: tokens_per_second_per_gpu\n")
          .replace(std::string(kGoodRun).find("    micro_batch"), 0, "    seq_mean: 209.9\n");
  const auto runs = parse_measured_runs({"my-runs.yaml", text, {}}, test::catalog(),
                                        test::overheads(), test::stacks());
  EXPECT_TRUE(runs[0].throughput->stated_per_gpu);  // the default
  ASSERT_TRUE(runs[0].seq_mean.has_value());
  EXPECT_NEAR(*runs[0].seq_mean, 209.9, 1e-9);
  EXPECT_FALSE(parse_measured_runs({"my-runs.yaml", kGoodRun, {}}, test::catalog(),
                                   test::overheads(), test::stacks())[0]
                   .throughput.has_value());
}

TEST(ValidationThroughput, ParsedStrictly) {
  const std::string good = "      value: 1650\n      unit: tokens_per_second_per_gpu\n";
  // An unknown unit or stack names the closest valid one.
  const std::string unit =
      parse_error(with_throughput("      value: 1650\n      unit: tokens_per_second_per_gp\n"));
  EXPECT_NE(unit.find("my-runs.yaml: key 'runs[0].throughput.unit'"), std::string::npos) << unit;
  EXPECT_NE(unit.find("unknown value 'tokens_per_second_per_gp'; did you mean "
                      "tokens_per_second_per_gpu"),
            std::string::npos)
      << unit;
  const std::string stack =
      parse_error(with("    unit: GB\n", "    unit: GB\n    stack: torchtun\n"));
  EXPECT_NE(stack.find("key 'runs[0].stack'"), std::string::npos) << stack;
  EXPECT_NE(stack.find("unknown value 'torchtun'; did you mean torchtune"), std::string::npos)
      << stack;
  // A value not above 0, an MFU above 1.
  const std::string negative =
      parse_error(with_throughput("      value: -5\n      unit: tokens_per_second\n"));
  EXPECT_NE(negative.find("key 'runs[0].throughput.value'"), std::string::npos) << negative;
  EXPECT_NE(negative.find("a throughput must be above 0, got -5"), std::string::npos) << negative;
  EXPECT_NE(parse_error(with_throughput("      value: 0\n      unit: step_seconds\n"))
                .find("a throughput must be above 0, got 0"),
            std::string::npos);
  const std::string mfu = parse_error(with_throughput("      value: 51.4\n      unit: mfu\n"));
  EXPECT_NE(mfu.find("key 'runs[0].throughput.value'"), std::string::npos) << mfu;
  EXPECT_NE(mfu.find("an MFU is a fraction from 0 to 1, got 51.4"), std::string::npos) << mfu;
  // Unknown keys, wrong types, missing keys.
  EXPECT_NE(parse_error(with_throughput(good + "      per_gpu: true\n"))
                .find("key 'runs[0].throughput.per_gpu'"),
            std::string::npos);
  EXPECT_NE(parse_error(with_throughput("      value: fast\n      unit: mfu\n"))
                .find("expected a number, got"),
            std::string::npos);
  EXPECT_NE(parse_error(with_throughput("      value: 1650\n")).find("runs[0].throughput.unit"),
            std::string::npos);
  EXPECT_NE(parse_error(with("    unit: GB\n", "    unit: GB\n    throughput: 1650\n"))
                .find("expected a map of keys"),
            std::string::npos);
  // A throughput needs its stack; the mean tokens per sample cannot exceed the sequence.
  EXPECT_NE(parse_error(with("    unit: GB\n", "    unit: GB\n    throughput:\n" + good))
                .find("needs the software stack"),
            std::string::npos);
  EXPECT_NE(parse_error(with("    seq: 1024\n", "    seq: 1024\n    seq_mean: 2000\n"))
                .find("exceed the sequence length"),
            std::string::npos);
}

TEST(ValidationThroughput, AThroughputOnlyRunIsNotInTheMemoryComparison) {
  const std::string only =
      with_throughput("      value: 3083\n      unit: tokens_per_second_per_gpu\n")
          .replace(std::string(kGoodRun).find("    measured: 12.5"),
                   std::string("    measured: 12.5\n").size(), "    measured: null\n");
  const auto runs = parse_measured_runs({"my-runs.yaml", only, {}}, test::catalog(),
                                        test::overheads(), test::stacks());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].throughput_only);
  EXPECT_TRUE(runs[0].settings_complete);  // the step model can read its settings
  EXPECT_EQ(runs[0].workload.seq, 1024);
  EXPECT_EQ(runs[0].placement.gpu->id, "l40s");
  const ValidationReport r = validate_runs(runs);
  EXPECT_TRUE(r.rows.empty());
  EXPECT_EQ(r.skipped, 0);
  EXPECT_EQ(r.overall.rows, 0);
  // Its throughput is compared, so it states the settings the step model reads ...
  std::string no_seq = only;
  no_seq.erase(no_seq.find("    seq: 1024\n"), std::string("    seq: 1024\n").size());
  EXPECT_NE(parse_error(no_seq).find("required for a run whose throughput is compared"),
            std::string::npos);
  // ... unless the throughput carries a skip reason.
  const std::string skipped = no_seq + "      skip: \"sequence length not stated\"\n";
  const auto runs2 = parse_measured_runs({"my-runs.yaml", skipped, {}}, test::catalog(),
                                         test::overheads(), test::stacks());
  EXPECT_EQ(runs2[0].throughput->skip, "sequence length not stated");
  EXPECT_FALSE(runs2[0].settings_complete);
  EXPECT_TRUE(validate_runs(runs2).rows.empty());
}

TEST(ValidationThroughput, PublishedRunsCarryTheirSpeed) {
  const std::vector<MeasuredRun> runs = published_runs();
  auto find = [&](const std::string& id) -> const MeasuredRun& {
    for (const auto& run : runs)
      if (run.id == id) return run;
    ADD_FAILURE() << id << " not listed";
    return runs.front();
  };
  int with_throughput = 0;
  int compared = 0;
  std::set<std::string> sources;
  for (const auto& run : runs) {
    if (!run.throughput) continue;
    ++with_throughput;
    sources.insert(run.source);
    EXPECT_NE(run.stack, nullptr) << run.id;
    if (run.throughput->skip.empty()) {
      ++compared;
      EXPECT_TRUE(run.settings_complete) << run.id;
    }
  }
  EXPECT_GE(with_throughput, 35);
  EXPECT_GE(sources.size(), 6u);
  EXPECT_GE(compared, 20);
  EXPECT_NEAR(find("A1").throughput->value, 1650, 1e-9);
  EXPECT_EQ(find("A1").stack->name, "torchtune");
  EXPECT_FALSE(find("A7").throughput->stated_per_gpu);
  EXPECT_NEAR(*find("E2").seq_mean, 210, 1);
  EXPECT_EQ(find("E2").stack->name, "hf");
  EXPECT_EQ(find("P2").throughput->unit, ThroughputUnit::kMfu);
  EXPECT_NEAR(find("P2").throughput->value, 0.514, 1e-9);
  EXPECT_EQ(find("X2").throughput->unit, ThroughputUnit::kTokensPerSecond);
  // A run with tensor parallelism carries its layout into the memory and the step comparison.
  EXPECT_EQ(find("T8").placement.layout.tp, 8);
  EXPECT_FALSE(find("T8").throughput_only);
  EXPECT_TRUE(find("T8").throughput->skip.empty());
  EXPECT_TRUE(find("U1").throughput_only);
  // Throughput-only rows stay out of the memory table.
  const ValidationReport r = validate_runs(runs);
  for (const auto& row : r.rows)
    EXPECT_FALSE(row.run->throughput_only) << row.run->id;
}

}  // namespace
}  // namespace ftplan
