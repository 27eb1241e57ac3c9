// ftplan explain: every figure of a run with its derivation, the same values as fit, step, scale
// and plan for the same options, dependencies followed to a depth, and precise errors.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <set>

#include "core/error.hpp"
#include "plan/explain.hpp"
#include "render/explain.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;
using Args = std::vector<std::string>;

json run_json(Args args) {
  args.push_back("--json");
  const auto r = test::run_cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? json::parse(r.out) : json::object();
}

Args with(Args a, const Args& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// The value of one figure as explain reports it.
double explained(const Args& run, const std::string& figure) {
  const json j = run_json(with({"explain", figure}, run));
  if (!j.contains("figures") || j["figures"].size() != 1) {
    ADD_FAILURE() << "no single figure " << figure;
    return -1;
  }
  EXPECT_EQ(j["figures"][0]["id"], figure);
  return j["figures"][0]["value"].get<double>();
}

std::set<std::string> listed_ids(const Args& run) {
  std::set<std::string> ids;
  const json list = run_json(with({"explain", "--list"}, run));
  for (const auto& f : list["figures"])
    ids.insert(f["id"].get<std::string>());
  return ids;
}

// The seed article's runs (SEED-FIGURES.md M1-M8), each on a card the seed puts it on.
const std::vector<Args>& seed_runs() {
  static const std::vector<Args> runs = {
      {"--model", "llama-3.1-8b", "--method", "lora", "--gpu", "rtx-pro-6000"},
      {"--model", "qwen3-32b", "--method", "lora", "--gpu", "rtx-pro-6000"},
      {"--model", "llama-3.3-70b", "--method", "qlora", "--gpu", "h200-nvl"},
      {"--model", "llama-3.1-8b", "--method", "full", "--gpu", "h200-nvl"},
      {"--model", "llama-3.1-8b", "--method", "full", "--gpu", "rtx-pro-6000", "--gpus", "2",
       "--shard", "fsdp"},
      {"--model", "llama-3.1-8b", "--method", "full", "--optimizer", "adamw-8bit", "--gpu",
       "rtx-pro-6000"},
      {"--model", "llama-3.3-70b", "--method", "lora", "--gpu", "h200-nvl"},
  };
  return runs;
}

TEST(Explain, SeedRuns_EveryHeadlineFigureIsRecorded) {
  for (const auto& run : seed_runs()) {
    const auto ids = listed_ids(with(run, {"--tokens", "100e6"}));
    for (const char* id :
         {"params.trainable", "memory.trained_states", "memory.model_states",
          "memory.states_per_card", "memory.states_on_card", "memory.activations",
          "memory.overhead", "memory.capacity", "memory.free", "memory.peak", "perf.ops_per_byte",
          "perf.step_seconds", "perf.tokens_per_second", "perf.model_flops", "perf.mfu",
          "plan.steps", "plan.time_to_train_hours", "plan.card_hours", "plan.energy_kWh"})
      EXPECT_TRUE(ids.count(id)) << id << " missing for " << run[1] << " " << run[3];
    const bool multi = std::find(run.begin(), run.end(), "--gpus") != run.end();
    for (const char* id :
         {"comm.received_per_card", "comm.min_link_seconds", "comm.seconds", "comm.exposed_seconds",
          "scale.step_seconds", "scale.efficiency", "scale.tokens_per_second"})
      EXPECT_EQ(ids.count(id), multi ? 1u : 0u) << id << " for " << run[1] << " " << run[3];
    EXPECT_EQ(ids.count("plan.cost_USD"), 0u) << "no price given";
  }
}

TEST(Explain, SameValuesAsFitForTheSameOptions) {
  for (const auto& run : seed_runs()) {
    const json fit = run_json(with({"fit"}, run));
    // fit rounds to 1 MB (3 decimals of GB).
    for (const auto& [figure, key] : {std::pair{"memory.peak", "peak"},
                                      {"memory.free", "free"},
                                      {"memory.states_per_card", "model_states"},
                                      {"memory.states_on_card", "states_on_card"},
                                      {"memory.activations", "activations"},
                                      {"memory.overhead", "overhead"},
                                      {"memory.capacity", "capacity"}})
      EXPECT_NEAR(explained(run, figure), fit["memory_GB"][key].get<double>(), 0.0005)
          << figure << " for " << run[1] << " " << run[3];
  }
}

TEST(Explain, SameValuesAsStepAndScale) {
  const Args one = {"--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl"};
  const json step = run_json(with({"step"}, one));
  EXPECT_DOUBLE_EQ(explained(one, "perf.step_seconds"), step["step_seconds"].get<double>());
  EXPECT_NEAR(explained(one, "perf.tokens_per_second"), step["tokens_per_second"].get<double>(),
              0.005);
  EXPECT_NEAR(explained(one, "perf.mfu"), step["mfu"].get<double>(), 0.00005);
  EXPECT_DOUBLE_EQ(explained(one, "perf.model_flops"), step["model_flops_per_step"].get<double>());

  // Several cards: scale's figures (rounded to 4 decimals of a second, 1 token/s).
  for (const char* shard : {"ddp", "fsdp"}) {
    const Args many = {"--model",      "llama-3.1-8b", "--method", "full",         "--gpu",
                       "rtx-pro-6000", "--gpus",       "4",        "--grad-accum", "4",
                       "--shard",      shard};
    const json scale = run_json(with({"scale"}, many));
    EXPECT_NEAR(explained(many, "scale.step_seconds"), scale["step_seconds"].get<double>(), 0.00005)
        << shard;
    EXPECT_NEAR(explained(many, "comm.exposed_seconds"), scale["exposed_seconds"].get<double>(),
                0.00005)
        << shard;
    EXPECT_NEAR(explained(many, "comm.seconds"), scale["comm_seconds_per_step"].get<double>(),
                0.00005)
        << shard;
    EXPECT_NEAR(explained(many, "scale.efficiency"), scale["scaling_efficiency"].get<double>(),
                0.00005)
        << shard;
    EXPECT_NEAR(explained(many, "scale.tokens_per_second"),
                scale["tokens_per_second"].get<double>(), 0.05)
        << shard;
    EXPECT_NEAR(explained(many, "comm.received_per_card"),
                scale["received_GB_per_card_per_step"].get<double>(), 0.0005)
        << shard;
  }
}

TEST(Explain, TimeToTrainAsThePlannerComputesIt) {
  // The planner's recommendation for each seed run, re-described with the options of explain:
  // the same peak memory (runtime overheads counted, as fit counts them), step time, time to
  // train, card-hours and energy.
  const json plan = run_json({"plan"});
  ASSERT_EQ(plan["runs"].size(), 6u);
  for (const auto& r : plan["runs"]) {
    const json& o = r["recommendation"];
    ASSERT_FALSE(o.is_null()) << r["run"];
    Args run = {"--model",       r["model"].get<std::string>(),
                "--method",      r["method"].get<std::string>(),
                "--gpu",         o["gpu"].get<std::string>(),
                "--gpus",        std::to_string(o["count"].get<int>()),
                "--micro-batch", std::to_string(o["micro_batch"].get<int>()),
                "--grad-accum",  std::to_string(o["grad_accum"].get<int>()),
                "--recompute",   o["recompute"].get<std::string>(),
                "--tokens",      "100e6"};
    run = with(run, {"--optimizer", r["optimizer"].get<std::string>()});
    if (o["count"].get<int>() > 1) run = with(run, {"--shard", o["shard"].get<std::string>()});
    const std::string step = o["count"].get<int>() > 1 ? "scale.step_seconds" : "perf.step_seconds";
    const std::string name = r["run"].get<std::string>();
    EXPECT_NEAR(explained(run, "memory.peak"), o["memory_GB"]["peak"].get<double>(), 0.0005)
        << name;
    EXPECT_NEAR(explained(run, step), o["step_seconds"].get<double>(), 0.00005) << name;
    EXPECT_NEAR(explained(run, "plan.time_to_train_hours"), o["time_to_train_hours"].get<double>(),
                0.00005)
        << name;
    EXPECT_NEAR(explained(run, "plan.card_hours"), o["card_hours"].get<double>(), 0.00005) << name;
    EXPECT_NEAR(explained(run, "plan.energy_kWh"), o["energy_kWh"].get<double>(), 0.0005) << name;
    EXPECT_DOUBLE_EQ(explained(run, "plan.steps"), r["steps"].get<double>()) << name;
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

TEST(Explain, FormulaNamesEachOfItsInputs) {
  const Args run = {"--model",
                    "llama-3.1-8b",
                    "--method",
                    "full",
                    "--gpu",
                    "h200-nvl",
                    "--gpus",
                    "2",
                    "--shard",
                    "zero2",
                    "--tokens",
                    "100e6",
                    "--price-per-card-hour",
                    "2",
                    "--price-per-kWh",
                    "0.3"};
  std::set<std::string> checked;
  for (const char* id :
       {"memory.model_states", "memory.free", "memory.peak", "perf.tokens_per_second", "perf.mfu",
        "comm.exposed_seconds", "scale.step_seconds", "scale.efficiency", "scale.tokens_per_second",
        "plan.steps", "plan.time_to_train_hours", "plan.card_hours", "plan.energy_kWh",
        "plan.cost_USD"}) {
    const json j = run_json(with({"explain", id, "--depth", "0"}, run));
    const json& f = j["figures"][0];
    const std::string formula = lower(f["formula"].get<std::string>());
    ASSERT_FALSE(f["inputs"].empty()) << id;
    for (const auto& [name, value] : f["inputs"].items()) {
      // "cards (N)" is named as "N" or "cards" in a formula.
      const std::string word = lower(name.substr(0, name.find(" (")));
      EXPECT_NE(formula.find(word), std::string::npos)
          << id << ": formula \"" << formula << "\" does not name input \"" << name << "\"";
      // A figure with its unit, or text that is not one number.
      EXPECT_TRUE(value.contains("value") ? value["value"].is_number() && value.contains("unit")
                                          : !value["text"].get<std::string>().empty())
          << id << ": " << name << " = " << value.dump();
    }
    checked.insert(id);
  }
  EXPECT_EQ(checked.size(), 14u);
}

TEST(Explain, DependenciesFollowedToTheGivenDepth) {
  const Args run = {"explain",  "memory.peak", "--model", "llama-3.1-8b",
                    "--method", "lora",        "--gpu",   "rtx-pro-6000"};
  const json d0 = run_json(with(run, {"--depth", "0"}))["figures"][0];
  EXPECT_FALSE(d0.contains("from"));
  EXPECT_EQ(d0["depends_on"],
            json({"memory.states_on_card", "memory.activations", "memory.overhead"}));
  const json d1 = run_json(run)["figures"][0];  // default: one level
  ASSERT_EQ(d1["from"].size(), 3u);
  EXPECT_EQ(d1["from"][0]["id"], "memory.states_on_card");
  EXPECT_FALSE(d1["from"][0].contains("from"));
  // Three levels: peak <- states on the card <- states per card <- model states of one replica.
  const json d3 = run_json(with(run, {"--depth", "3"}))["figures"][0];
  EXPECT_EQ(d3["from"][0]["from"][0]["id"], "memory.states_per_card");
  EXPECT_EQ(d3["from"][0]["from"][0]["from"][0]["id"], "memory.model_states");
  // Each dependency's value is the figure recorded under its id.
  const double on_card = d1["from"][0]["value"].get<double>();
  const double activations = d1["from"][1]["value"].get<double>();
  const double overhead = d1["from"][2]["value"].get<double>();
  EXPECT_NEAR(d1["value"].get<double>(), on_card + activations + overhead, 1e-9);
}

TEST(Explain, AGroupListsItsFigures) {
  const json j = run_json(
      {"explain", "memory", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl"});
  ASSERT_GE(j["figures"].size(), 8u);
  for (const auto& f : j["figures"]) {
    EXPECT_EQ(f["id"].get<std::string>().rfind("memory.", 0), 0u) << f["id"];
    EXPECT_FALSE(f.contains("from")) << "a group is listed without its dependencies by default";
  }
}

TEST(Explain, TextShowsFormulaInputsSourceAndWhereFrom) {
  const auto r = test::run_cli(
      {"explain", "perf.mfu", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("perf.mfu = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("formula: model FLOPs per step / (step time × dense peak)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("source:  Chowdhery et al. 2022"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("from:\n    perf.model_flops = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    perf.step_seconds = "), std::string::npos) << r.out;
}

TEST(Explain, EveryIdOnceAndEveryDependencyRecorded) {
  ExplainRequest req;
  req.workload = test::workload("llama-3.1-8b", Method::kFull);
  req.placement = test::on("h200-nvl", 4, Sharding::kFsdp);
  req.tokens_to_train = 1e8;
  req.prices.per_card_hour_USD = 3;
  const PlanningData data = PlanningData::load(test::catalog());
  const ExplainResult r = explain_placement(req, data);
  std::set<std::string> ids;
  for (const auto& d : r.trace.items())
    EXPECT_TRUE(ids.insert(d.id).second) << d.id;
  for (const auto& d : r.trace.items())
    for (const auto& from : d.depends_on)
      EXPECT_TRUE(ids.count(from)) << d.id << " depends on unrecorded " << from;
}

TEST(Explain, CardWithoutAPublishedRateExplainsMemoryOnly) {
  // The RTX PRO 6000 Server Edition publishes no dense rate: memory figures, no step time.
  const Args run = {"--model", "llama-3.1-8b", "--method", "lora", "--gpu", "rtx-pro-6000-server"};
  const json j = run_json(with({"explain", "--list"}, run));
  ASSERT_TRUE(j.contains("step_not_timed"));
  const auto ids = listed_ids(run);
  EXPECT_TRUE(ids.count("memory.peak"));
  EXPECT_FALSE(ids.count("perf.step_seconds"));
  const auto r = test::run_cli(with({"explain", "perf.step_seconds"}, run));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown figure 'perf.step_seconds'"), std::string::npos) << r.err;
}

TEST(Explain, UnknownFigureNamesTheClosest) {
  try {
    Trace t;
    t.add({"memory.peak", "peak", 1, "GB", "a + b", {}, "x"});
    t.add({"memory.free", "free", 1, "GB", "a - b", {}, "x"});
    select_figures(t, "memory.peek");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnknownName);
    EXPECT_EQ(e.field(), "figure");
    EXPECT_NE(std::string(e.what()).find("unknown figure 'memory.peek'; did you mean memory.peak"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ftplan
