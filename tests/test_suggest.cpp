// How to make a run fit (memory/suggest): every suggestion is valid input that gives a fitting
// answer when its keys are applied to the request, settings the run already has are not
// suggested again, and a run that fits gets none.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "memory/suggest.hpp"
#include "server/api.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;
using test::on;
using test::workload;

// POST /api/fit with `body`: the answer, which must be a 200.
json post_fit(const json& body) {
  static const server::Commands commands = cli::server_commands();
  server::Request r;
  r.method = "POST";
  r.path = "/api/fit";
  r.body = body.dump();
  r.content_type = "application/json";
  const server::Response out = server::handle(r, commands);
  EXPECT_EQ(out.status, 200) << body.dump() << ": " << out.body;
  return out.status == 200 ? json::parse(out.body) : json::object();
}

std::vector<std::string> kinds(const json& fit) {
  std::vector<std::string> out;
  for (const auto& s : fit["suggestions"])
    out.push_back(s["kind"].get<std::string>());
  return out;
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Runs that do not fit, on several models, methods and cards.
const std::vector<json>& unfit_requests() {
  static const std::vector<json> r = {
      {{"model", "llama-3.1-70b"}, {"method", "lora"}, {"gpu", "h100-sxm"}},
      {{"model", "llama-3.1-70b"}, {"method", "lora"}, {"gpu", "h100-sxm"}, {"gpus", 4}},
      {{"model", "llama-3.1-8b"}, {"method", "full"}, {"gpu", "l40s"}},
      {{"model", "llama-3.1-8b"},
       {"method", "full"},
       {"gpu", "a100-80gb-sxm"},
       {"gpus", 2},
       {"recompute", "none"},
       {"micro_batch", 8}},
      {{"model", "qwen3-14b"}, {"method", "dora"}, {"gpu", "rtx-4090"}, {"seq", 16384}},
      {{"model", "llama-3.1-8b"}, {"method", "lora"}, {"gpu", "h200-nvl"}, {"mig", "1g.18gb"}},
      {{"model", "mistral-7b-v0.3"},
       {"method", "lora"},
       {"gpu", "l4"},
       {"seq", 8192},
       {"micro_batch", 4},
       {"recompute", "none"}},
      // Layer-wise checkpointing of 4 of 32 blocks: checkpointing every block fits.
      {{"model", "mistral-7b-v0.3"},
       {"method", "lora"},
       {"gpu", "l4"},
       {"seq", 4096},
       {"recompute_layers", 4}},
  };
  return r;
}

TEST(Suggest, LayerWiseCheckpointingGetsEveryBlock) {
  const json fit = post_fit(unfit_requests().back());
  ASSERT_EQ(fit["verdict"], "does-not-fit");
  bool found = false;
  for (const auto& s : fit["suggestions"])
    if (s["kind"] == "recompute") {
      found = true;
      EXPECT_EQ(s["change"]["recompute_layers"], 32) << s.dump();
      EXPECT_TRUE(s["fits"].get<bool>()) << s.dump();
    }
  EXPECT_TRUE(found) << fit["suggestions"].dump(1);
}

TEST(Suggest, SeventyBLoraOnOneEightyGbCardGetsMoreCardsAndQlora) {
  const json fit = post_fit(unfit_requests()[0]);
  ASSERT_EQ(fit["verdict"], "does-not-fit");
  const auto k = kinds(fit);
  EXPECT_TRUE(has(k, "cards")) << fit["suggestions"].dump(1);
  EXPECT_TRUE(has(k, "quantized-base")) << fit["suggestions"].dump(1);
  // One card: sharding alone shards nothing, so it is not suggested on its own.
  EXPECT_FALSE(has(k, "shard"));
  for (const auto& s : fit["suggestions"]) {
    EXPECT_TRUE(s["fits"].get<bool>());
    EXPECT_EQ(s["verdict"], "fits");
    EXPECT_FALSE(s["reason"].get<std::string>().empty());
    const json& m = s["memory_GB"];
    EXPECT_NEAR(m["peak"].get<double>() + m["headroom"].get<double>(), m["capacity"].get<double>(),
                0.002);
    EXPECT_GT(m["headroom"].get<double>(), 0);
    if (s["kind"] == "cards") {
      EXPECT_GT(s["change"]["gpus"].get<int>(), 1);
      EXPECT_EQ(s["change"]["shard"], "fsdp");
    }
    if (s["kind"] == "quantized-base") EXPECT_EQ(s["change"]["method"], "qlora");
  }
}

// The property that makes a suggestion worth a click: its keys, applied to the request, give a
// fitting answer with the figures the suggestion showed.
TEST(Suggest, ApplyingEachSuggestionGivesAFittingAnswer) {
  for (const json& request : unfit_requests()) {
    const json fit = post_fit(request);
    ASSERT_EQ(fit["verdict"], "does-not-fit") << request.dump();
    ASSERT_FALSE(fit["suggestions"].empty()) << request.dump();
    for (const auto& s : fit["suggestions"]) {
      json changed = request;
      for (const auto& [key, value] : s["change"].items())
        changed[key] = value;
      const json again = post_fit(changed);
      EXPECT_EQ(again["verdict"], s["verdict"]) << changed.dump();
      EXPECT_NEAR(again["memory_GB"]["peak"].get<double>(), s["memory_GB"]["peak"].get<double>(),
                  0.002)
          << changed.dump();
      if (s["fits"].get<bool>()) {
        EXPECT_EQ(again["verdict"], "fits") << changed.dump();
        // A run that fits gets no suggestions.
        EXPECT_TRUE(again["suggestions"].empty()) << changed.dump();
      }
    }
  }
}

TEST(Suggest, TheSmallestCardCountIsTheSmallest) {
  const json& request = unfit_requests()[0];
  const json fit = post_fit(request);
  for (const auto& s : fit["suggestions"]) {
    if (s["kind"] != "cards") continue;
    json fewer = request;
    for (const auto& [key, value] : s["change"].items())
      fewer[key] = value;
    fewer["gpus"] = s["change"]["gpus"].get<int>() - 1;
    EXPECT_NE(post_fit(fewer)["verdict"], "fits") << fewer.dump();
  }
}

TEST(Suggest, AMigInstanceGetsNoCardsOrSharding) {
  // One MIG instance: a run over several cards cannot use MIG instances.
  const json fit = post_fit(
      {{"model", "llama-3.1-8b"}, {"method", "lora"}, {"gpu", "h200-nvl"}, {"mig", "1g.18gb"}});
  ASSERT_EQ(fit["verdict"], "does-not-fit");
  ASSERT_FALSE(fit["suggestions"].empty());
  for (const auto& s : fit["suggestions"]) {
    EXPECT_FALSE(s["change"].contains("gpus")) << s.dump();
    EXPECT_FALSE(s["change"].contains("shard")) << s.dump();
  }
}

TEST(Suggest, AutoShardingReplicatesWhatOneCardHoldsAndShardsTheRest) {
  const auto shard = [](std::vector<std::string> args) {
    args.insert(args.begin(), "fit");
    args.insert(args.end(), {"--shard", "auto", "--json"});
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  };
  // 70B LoRA: the 141 GB base does not fit one H100, so the four cards shard it (FSDP), and fit.
  const auto big =
      shard({"--model", "llama-3.1-70b", "--method", "lora", "--gpu", "h100-sxm", "--gpus", "4"});
  EXPECT_EQ(big["shard"], "fsdp");
  EXPECT_EQ(big["verdict"], "fits");
  // As given by hand, the same.
  const auto fsdp = test::run_cli({"fit", "--model", "llama-3.1-70b", "--method", "lora", "--gpu",
                                   "h100-sxm", "--gpus", "4", "--shard", "fsdp", "--json"});
  ASSERT_EQ(fsdp.code, 0);
  EXPECT_EQ(nlohmann::json::parse(fsdp.out)["memory_GB"], big["memory_GB"]);
  // 8B LoRA fits one card: replicated (DDP); one card: none.
  EXPECT_EQ(shard({"--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h100-sxm", "--gpus",
                   "2"})["shard"],
            "ddp");
  EXPECT_EQ(shard({"--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h100-sxm"})["shard"],
            "none");
}

TEST(Suggest, ARunThatFitsGetsNone) {
  const json fit = post_fit({{"model", "llama-3.1-8b"}, {"method", "lora"}, {"gpu", "h200-nvl"}});
  EXPECT_EQ(fit["verdict"], "fits");
  EXPECT_TRUE(fit["suggestions"].is_array());
  EXPECT_TRUE(fit["suggestions"].empty());
  const auto text =
      test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl"});
  EXPECT_EQ(text.code, 0);
  EXPECT_EQ(text.out.find("To make it fit"), std::string::npos);
}

TEST(Suggest, SettingsTheRunAlreadyHasAreNotSuggestedAgain) {
  // FSDP over 4 cards already, full recomputation (the default), an 8-bit optimizer: more cards
  // may be suggested, with no shard key; no shard, recompute or optimizer suggestion.
  const json sharded = post_fit({{"model", "llama-3.1-70b"},
                                 {"method", "full"},
                                 {"gpu", "h100-sxm"},
                                 {"gpus", 4},
                                 {"shard", "fsdp"},
                                 {"optimizer", "adamw-8bit"}});
  ASSERT_EQ(sharded["verdict"], "does-not-fit");
  const auto k = kinds(sharded);
  EXPECT_FALSE(has(k, "shard"));
  EXPECT_FALSE(has(k, "recompute"));
  EXPECT_FALSE(has(k, "optimizer"));
  for (const auto& s : sharded["suggestions"]) {
    EXPECT_FALSE(s["change"].contains("shard")) << s.dump();
    EXPECT_FALSE(s["change"].contains("recompute")) << s.dump();
    EXPECT_FALSE(s["change"].contains("optimizer")) << s.dump();
  }
  // QLoRA already: no quantized base suggested.
  const json qlora = post_fit({{"model", "llama-3.1-70b"}, {"method", "qlora"}, {"gpu", "l4"}});
  ASSERT_EQ(qlora["verdict"], "does-not-fit");
  for (const auto& s : qlora["suggestions"])
    EXPECT_FALSE(s["change"].contains("method")) << s.dump();
  // No suggestion repeats a value the request has.
  for (const json& request : unfit_requests()) {
    const json answer = post_fit(request);  // kept: a loop over a temporary's member dangles
    for (const auto& s : answer["suggestions"])
      for (const auto& [key, value] : s["change"].items())
        if (request.contains(key)) EXPECT_NE(request[key], value) << request.dump() << " " << key;
  }
}

// The ranking rule (suggest.cpp): the ones that fit, the smaller change first, then the more
// headroom; when none fits, only the closest.
TEST(Suggest, RankedBySizeThenHeadroom) {
  const Workload w = workload("llama-3.1-70b", Method::kLora);
  const auto list = suggest_fits(w, on("h100-sxm", 4, Sharding::kDdp));
  ASSERT_GE(list.size(), 2u);
  for (std::size_t i = 1; i < list.size(); ++i) {
    EXPECT_TRUE(list[i].fits());
    EXPECT_LE(list[i - 1].size, list[i].size);
    if (list[i - 1].size == list[i].size)
      EXPECT_GE(list[i - 1].memory.headroom, list[i].memory.headroom);
  }
  // Each is the engine's own estimate of the changed run.
  for (const auto& s : list)
    EXPECT_EQ(s.memory.verdict, Verdict::kFits);
}

TEST(Suggest, NoOneChangeFitsGivesTheChangesTogether) {
  // An 8B full fine-tune over two 80 GB cards, replicated, 8 sequences per card without
  // recomputation: no one change fits, several together do.
  const json request = unfit_requests()[3];
  const json fit = post_fit(request);
  ASSERT_EQ(fit["suggestions"].size(), 1u) << fit["suggestions"].dump(1);
  const json& s = fit["suggestions"][0];
  EXPECT_EQ(s["kind"], "combined");
  EXPECT_TRUE(s["fits"].get<bool>());
  EXPECT_GE(s["change"].size(), 2u);
  // Each of its changes alone does not fit.
  for (const auto& [key, value] : s["change"].items()) {
    json one = request;
    one[key] = value;
    if (key == "gpus") one["shard"] = "fsdp";
    EXPECT_NE(post_fit(one)["verdict"], "fits") << one.dump();
  }
  // And it holds no change the run fits without (more cards and their sharding go together).
  for (const auto& [key, value] : s["change"].items()) {
    if (key == "shard" && s["change"].contains("gpus")) continue;
    json without = request;
    for (const auto& [other, v] : s["change"].items())
      if (other != key && !(key == "gpus" && other == "shard")) without[other] = v;
    EXPECT_NE(post_fit(without)["verdict"], "fits") << without.dump();
  }
}

TEST(Suggest, NothingFitsGivesTheClosestOnly) {
  // 405B full fine-tune on at most two 24 GB cards: nothing tried fits.
  const Workload w = workload("llama-3.1-405b", Method::kFull);
  const auto list = suggest_fits(w, on("rtx-4090"), 2);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_FALSE(list[0].fits());
  // The closest: no other change leaves more headroom than it (the quantized base is one).
  Workload q = w;
  q.method = Method::kQlora;
  EXPECT_GE(list[0].memory.headroom.value, estimate_memory(q, on("rtx-4090")).headroom.value);
}

TEST(Suggest, TheTextOutputListsThemUnderTheFigures) {
  const auto r =
      test::run_cli({"fit", "--model", "llama-3.1-70b", "--method", "lora", "--gpu", "h100-sxm"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto verdict = r.out.find("verdict: does-not-fit");
  const auto list = r.out.find("To make it fit:");
  ASSERT_NE(verdict, std::string::npos);
  ASSERT_NE(list, std::string::npos);
  EXPECT_LT(verdict, list);
  EXPECT_NE(r.out.find("--method qlora", list), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--shard fsdp", list), std::string::npos) << r.out;
}

TEST(Suggest, GermanReasons) {
  json request = unfit_requests()[0];
  request["lang"] = "de";
  const json fit = post_fit(request);
  ASSERT_FALSE(fit["suggestions"].empty());
  for (const auto& s : fit["suggestions"])
    EXPECT_EQ(s["reason"].get<std::string>().find("instead"), std::string::npos) << s.dump();
}

}  // namespace
}  // namespace ftplan
