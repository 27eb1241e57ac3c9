// W1–W5 of shared/spec/SEED-FIGURES.md as the planner's own verdicts for the seed's runs, and the
// planner's interfaces (runs file, plan JSON, sweep).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "perf/efficiency.hpp"
#include "plan/planner.hpp"
#include "render/reason_words.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

const Plan& seed_plan() {
  static const RunsFile file = [] {
    auto r = test::run_cli(
        {"plan", "--json"});  // warms the shared catalog; the file is the built-in one
    EXPECT_EQ(r.code, 0) << r.err;
    std::ostringstream out, err;
    cli::Context ctx(out, err);
    return cli::load_runs(ctx, "");
  }();
  static const PlanningData data = PlanningData::load(test::catalog());
  static const Plan plan = make_plan(file, data);
  return plan;
}

const RunPlan& run(const std::string& name) {
  for (const auto& r : seed_plan().runs)
    if (r.run->name == name) return r;
  throw std::runtime_error("no run " + name);
}

const RunPlan::PerGpu& on(const RunPlan& r, const std::string& gpu) {
  for (const auto& pg : r.per_gpu)
    if (pg.gpu->id == gpu) return pg;
  throw std::runtime_error("no card " + gpu);
}

TEST(SeedPlan, W1_Lora8BTo32B_OneRtxPro6000Holds_H200NvlFaster) {
  const std::pair<const char*, double> runs[] = {{"8B LoRA", 86}, {"32B LoRA", 35}};
  for (auto [name, free] : runs) {
    const auto& rtx = on(run(name), "rtx-pro-6000");
    const auto& h200 = on(run(name), "h200-nvl");
    ASSERT_TRUE(rtx.minimum && h200.minimum) << name;
    EXPECT_EQ(rtx.minimum->count, 1) << name;
    EXPECT_EQ(test::printed(to_GB(rtx.minimum->free), 0), free) << name;
    EXPECT_EQ(h200.minimum->count, 1) << name;
    // Same job at a higher tensor peak: faster, by a ratio between the tensor-rate ratio (1.66,
    // times the architectures' efficiency multipliers fitted to measured runs) and the bandwidth
    // ratio (2.68) when both run their best single-card settings.
    const EfficiencyTable e = default_efficiency(test::catalog());
    const double effective = 1.66 * e.compute_scale("hopper", OpClass::kGemm) /
                             e.compute_scale("blackwell", OpClass::kGemm);
    const double ratio = rtx.minimum->time_to_train_hours / h200.minimum->time_to_train_hours;
    EXPECT_GT(ratio, effective) << name;
    EXPECT_LT(ratio, 2.8) << name;
  }
}

TEST(SeedPlan, W2_Qlora70B_EitherCard_60And108GbSpare) {
  const auto& r = run("70B QLoRA");
  ASSERT_TRUE(on(r, "rtx-pro-6000").minimum && on(r, "h200-nvl").minimum);
  EXPECT_EQ(on(r, "rtx-pro-6000").minimum->count, 1);
  EXPECT_EQ(on(r, "h200-nvl").minimum->count, 1);
  EXPECT_EQ(test::printed(to_GB(on(r, "rtx-pro-6000").minimum->free), 0), 60);
  EXPECT_EQ(test::printed(to_GB(on(r, "h200-nvl").minimum->free), 0), 108);
}

TEST(SeedPlan, W3_FullFineTune8B_OneH200Nvl_OrTwoRtxPro6000_OrEightBitAdamOnOne) {
  const auto& adam32 = run("8B full fine-tune, 32-bit Adam");
  ASSERT_TRUE(on(adam32, "h200-nvl").minimum);
  EXPECT_EQ(on(adam32, "h200-nvl").minimum->count, 1);
  EXPECT_EQ(test::printed(to_GB(on(adam32, "h200-nvl").minimum->free), 0), 22);
  ASSERT_TRUE(on(adam32, "rtx-pro-6000").minimum);
  EXPECT_EQ(on(adam32, "rtx-pro-6000").minimum->count, 2);
  // With FSDP each of the two cards holds 64.2 GB of model states.
  bool fsdp_two = false;
  for (const auto& s : on(adam32, "rtx-pro-6000").minimum_options)
    if (s.sharding == Sharding::kFsdp) {
      fsdp_two = true;
      EXPECT_EQ(test::printed(to_GB(s.model_states), 1), 64.2);
    }
  EXPECT_TRUE(fsdp_two);
  const auto& adam8 = run("8B full fine-tune, 8-bit Adam");
  ASSERT_TRUE(on(adam8, "rtx-pro-6000").minimum);
  EXPECT_EQ(on(adam8, "rtx-pro-6000").minimum->count, 1);
  EXPECT_NEAR(to_GB(on(adam8, "rtx-pro-6000").minimum->model_states), 80, 0.6);
}

TEST(SeedPlan, W4_ShardedRunsMoveTensToHundredsOfGB_NvlinkDomainsStronger) {
  const auto& r = run("70B LoRA on a BF16 base");
  // The seed's strategy: the frozen base sharded over the cards (data parallel, no layout). The
  // planner may prefer a pipeline where one replica's states exceed a card (the RTX PRO 6000);
  // the sharded option stays among the best per strategy.
  auto sharded = [&](const char* gpu) -> const Option* {
    for (const auto& o : on(r, gpu).minimum_options)
      if (o.layout.trivial() && o.sharding == Sharding::kFsdp) return &o;
    return nullptr;
  };
  for (const char* gpu : {"h200-nvl", "rtx-pro-6000"}) {
    ASSERT_TRUE(on(r, gpu).minimum) << gpu;
    EXPECT_EQ(on(r, gpu).minimum->count, 2) << gpu;  // needs two cards whatever their type (M8)
    ASSERT_NE(sharded(gpu), nullptr) << gpu;
    EXPECT_GT(to_GB(sharded(gpu)->received_per_card_per_step), 100) << gpu;
  }
  // At 2 cards the H200 NVL's NVLink bridge hides the traffic; PCIe between RTX PRO 6000 does not.
  EXPECT_EQ(sharded("h200-nvl")->topology, "nvlink-bridge-2");
  EXPECT_EQ(sharded("rtx-pro-6000")->topology, "pcie");
  EXPECT_GT(sharded("h200-nvl")->scaling_efficiency, sharded("rtx-pro-6000")->scaling_efficiency);
  // Beyond four cards the bridged H200 NVL cross PCIe too: asserted in SeedComm.C7.
}

TEST(SeedPlan, W5_WhereALoraOrQloraRunFitsOneCard_OneJobPerCardSidestepsTheInterconnect) {
  for (const auto& r : seed_plan().runs) {
    if (r.run->workload.method == Method::kFull) continue;
    for (const auto& pg : r.per_gpu) {
      if (!pg.minimum || pg.minimum->count != 1) continue;
      EXPECT_EQ(pg.minimum->strategy, CommStrategy::kSingleCard) << r.run->name;
      EXPECT_EQ(pg.minimum->received_per_card_per_step.value, 0) << r.run->name;
    }
  }
  // The fleet runs every single-card run as one job per card (or MIG instance).
  for (const auto& f : seed_plan().fleet) {
    EXPECT_GT(f.cards, 0);
    EXPECT_LE(f.cards, f.cards_without_mig);
  }
}

TEST(SeedPlan, EveryRunHasARecommendationWithAReason) {
  for (const auto& r : seed_plan().runs) {
    ASSERT_TRUE(r.recommendation) << r.run->name;
    EXPECT_TRUE(r.recommendation->feasible);
    EXPECT_FALSE(r.recommendation_reason.empty());
    EXPECT_GT(r.recommendation->time_to_train_hours, 0);
    // The recommendation is the best of its alternatives by the ranking (card-hours by default).
    for (const auto& a : r.alternatives)
      EXPECT_LE(r.recommendation->card_hours, a.card_hours + 1e-9) << r.run->name;
  }
}

TEST(SeedPlan, RejectedOptionsKeepTheirReason) {
  const auto& r = run("8B full fine-tune, 32-bit Adam");
  bool one_rtx = false;
  for (const auto& o : r.rejected)
    if (o.gpu->id == "rtx-pro-6000" && o.count == 1) {
      one_rtx = true;
      EXPECT_NE(word_reason(o.reason).find("exceeds"), std::string::npos) << word_reason(o.reason);
    }
  EXPECT_TRUE(one_rtx);
}

TEST(PlanCli, JsonHasTheDocumentedKeys) {
  auto r = test::run_cli({"plan", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 6u);
  for (const auto& run : j["runs"]) {
    EXPECT_TRUE(run.contains("run"));
    const auto& rec = run["recommendation"];
    for (const char* key : {"gpu", "count", "strategy", "step_seconds", "time_to_train_hours"})
      EXPECT_TRUE(rec.contains(key)) << key;
    EXPECT_TRUE(run["alternatives"].is_array());
  }
}

TEST(PlanCli, SweepReportsItsRate) {
  auto r = test::run_cli({"sweep", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["evaluations"].get<double>(),
            10000);  // 6 runs × 16 cards × counts × strategies × ...
  EXPECT_GT(j["seconds"].get<double>(), 0);
  EXPECT_NEAR(j["evaluations_per_second"].get<double>(),
              j["evaluations"].get<double>() / j["seconds"].get<double>(),
              1e-6 * j["evaluations_per_second"].get<double>());
  // Processor time of the one thread: positive, and no more than the wall-clock time allows.
  EXPECT_GT(j["cpu_seconds"].get<double>(), 0);
  EXPECT_LE(j["cpu_seconds"].get<double>(), j["seconds"].get<double>() * 1.05 + 0.002);
  EXPECT_NEAR(j["evaluations_per_cpu_second"].get<double>(),
              j["evaluations"].get<double>() / j["cpu_seconds"].get<double>(),
              1e-6 * j["evaluations_per_cpu_second"].get<double>());
}

TEST(PlanProperties, MoreCardsNeverNeededWhenOneFits) {
  for (const auto& r : seed_plan().runs)
    for (const auto& pg : r.per_gpu)
      if (pg.minimum && pg.fastest) EXPECT_LE(pg.minimum->count, pg.fastest->count) << r.run->name;
}

TEST(PlanProperties, RankingByTimePicksTheFastest) {
  std::ostringstream out, err;
  cli::Context ctx(out, err);
  const RunsFile file = cli::load_runs(ctx, "");
  PlanOptions o;
  o.rank_by = RankBy::kTime;
  const Plan p = make_plan(file, PlanningData::load(test::catalog()), o);
  for (const auto& r : p.runs)
    for (const auto& pg : r.per_gpu)
      if (pg.fastest)
        EXPECT_LE(r.recommendation->time_to_train_hours, pg.fastest->time_to_train_hours + 1e-9);
  o.rank_by = RankBy::kCost;
  EXPECT_THROW(make_plan(file, PlanningData::load(test::catalog()), o),
               UserError);  // no prices in the file
}

// Ranges: every time figure of an option scales with the step's range, and the planner calls two
// cards of different architectures "too close to call" exactly when their ranges of the ranked
// figure overlap; cards of one architecture never are.
TEST(PlanRanges, TooCloseToCallExactlyWhenRangesOfAnotherArchitectureOverlap) {
  std::ostringstream out, err;
  cli::Context ctx(out, err);
  RunsFile file = cli::load_runs(ctx, "");
  // Two card types, four counts: the plan's 8 alternatives hold every (card, count).
  file.gpus = {&test::catalog().gpu("l40s"), &test::catalog().gpu("a100-80gb-sxm")};
  const PlanningData data = PlanningData::load(test::catalog());
  const Plan p = make_plan(file, data);
  int close = 0;
  for (const auto& r : p.runs) {
    ASSERT_TRUE(r.recommendation) << r.run->name;
    const Option& best = *r.recommendation;
    EXPECT_LT(best.range_low, 1.0) << r.run->name;
    EXPECT_GT(best.range_high, 1.0) << r.run->name;
    const Option* other = nullptr;  // the best-ranked option on the other architecture
    for (const auto& a : r.alternatives)
      if (!other && a.gpu->architecture != best.gpu->architecture) other = &a;
    const bool overlap = other && ranges_overlap(best, *other, p.rank_by);
    EXPECT_EQ(r.close_call.has_value(), overlap) << r.run->name;
    if (r.close_call) {
      ++close;
      EXPECT_EQ(r.close_call->gpu, other->gpu) << r.run->name;
      EXPECT_EQ(r.close_call->count, other->count) << r.run->name;
      EXPECT_LE(rank_value(best, p.rank_by) * best.range_low,
                rank_value(*other, p.rank_by) * other->range_high);
      EXPECT_EQ(r.close_call_reason.code, ReasonCode::kTooCloseToCall);
    } else {
      EXPECT_TRUE(r.close_call_reason.empty()) << r.run->name;
    }
  }
  // L40S (Ada) and A100 (Ampere) are within each other's ranges for some of the seed's runs.
  EXPECT_GE(close, 1);
  // Cards of one architecture share the model's error: nothing to call.
  file.gpus = {&test::catalog().gpu("h100-sxm"), &test::catalog().gpu("h200-nvl")};
  for (const auto& r : make_plan(file, data).runs)
    EXPECT_FALSE(r.close_call) << r.run->name;
}

// The JSON carries the ranges and the close call; the text shows the range of the time to train.
TEST(PlanRanges, JsonAndTextShowRangesAndCloseCalls) {
  auto r = test::run_cli({"plan", "--gpu", "l40s", "--gpu", "a100-80gb-sxm", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  int close = 0;
  for (const auto& run : j["runs"]) {
    const auto& rec = run["recommendation"];
    const auto range = rec["time_to_train_hours_range"];
    EXPECT_LT(range[0].get<double>(), rec["time_to_train_hours"].get<double>());
    EXPECT_GT(range[1].get<double>(), rec["time_to_train_hours"].get<double>());
    if (run["too_close_to_call"].get<bool>()) {
      ++close;
      EXPECT_NE(run["close_call"]["gpu"], rec["gpu"]);
      EXPECT_NE(run["close_call"]["why"].get<std::string>().find("too close to call"),
                std::string::npos);
    } else {
      EXPECT_FALSE(run.contains("close_call"));
    }
  }
  EXPECT_GE(close, 1);
  auto t = test::run_cli({"plan", "--gpu", "l40s", "--gpu", "a100-80gb-sxm"});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("range h"), std::string::npos);
  EXPECT_NE(t.out.find("too close to call against"), std::string::npos);
}

}  // namespace
}  // namespace ftplan
