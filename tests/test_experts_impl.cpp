// How a mixture-of-experts layer runs its experts (workload/stack.hpp, ExpertsImpl): grouped
// products over every routed token, or one expert after the other (Transformers' eager experts,
// LitGPT), whose backward passes then hold one expert's share of the activation gradients at a
// time. Figures by hand from a tiny Mixtral block.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "memory/activations.hpp"
#include "model/config_reader.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

// h = 8, experts 48 wide, 4 experts with 2 per token, two query heads of 4 and one key/value head.
const char* kTinyMixtral = R"({"model_type": "mixtral", "hidden_size": 8,
  "intermediate_size": 48, "num_local_experts": 4, "num_experts_per_tok": 2,
  "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 16})";

TEST(ExpertsImpl, OneExpertAtATimeHoldsItsShareOfTheGradientsByHand) {
  const BlockShape shape = moe_block_shape(read_hf_config(kTinyMixtral, "mixtral.json", "tiny"));
  ActivationSettings s;
  s.attention = Attention::kFlash;
  s.compiled = true;
  // The block's input and output gradients 2·2·8 = 32, and the larger of attention's (dQ dK dV dO
  // 2·(8 + 4 + 4 + 8) = 48, FlashAttention's FP32 dQ accumulator 4·8 = 32, dK and dV expanded to
  // both query heads 2·(4 + 4) = 16: 96) and the experts': each routed copy holds the product,
  // gate and up gradients 3·2·48 and its output's 2·8 = 304.
  // Grouped: both copies of every token, 2·304 = 608: 32 + 608 = 640.
  EXPECT_DOUBLE_EQ(block_activations(shape, s).backward_transient.per_token, 640.0);
  // One after the other: one expert's share, 2/4 of a copy per token, 152: 32 + 152 = 184.
  s.experts_one_at_a_time = true;
  EXPECT_DOUBLE_EQ(block_activations(shape, s).backward_transient.per_token, 184.0);
  // The saved activations do not change: every expert's are kept for its backward pass.
  ActivationSettings grouped = s;
  grouped.experts_one_at_a_time = false;
  EXPECT_DOUBLE_EQ(block_activations(shape, s).saved.per_token,
                   block_activations(shape, grouped).saved.per_token);
}

nlohmann::json fit(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"fit",   "--model",       "mixtral-8x7b", "--method", "qlora",
                                   "--gpu", "a100-80gb-sxm", "--seq",        "4096",     "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = test::run_cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(ExpertsImpl, TheStacksUnlessTheRunNamesOne) {
  const auto hf = fit({});
  EXPECT_EQ(hf["options"]["experts_impl"], "grouped");  // Transformers 5 with torch 2.9+
  EXPECT_EQ(fit({"--stack", "litgpt"})["options"]["experts_impl"], "loop");
  const auto loop = fit({"--experts-impl", "loop"});
  EXPECT_EQ(loop["options"]["experts_impl"], "loop");
  EXPECT_LT(loop["memory_GB"]["peak"].get<double>(), hf["memory_GB"]["peak"].get<double>());
  const auto bad = test::run_cli({"fit", "--model", "mixtral-8x7b", "--method", "qlora", "--gpu",
                                  "a100-80gb-sxm", "--experts-impl", "loops"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("loop"), std::string::npos) << bad.err;
  // The stacks list says which and why.
  const auto r = test::run_cli({"stacks", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto stacks = nlohmann::json::parse(r.out);  // kept: the loop iterates a member
  int seen = 0;
  for (const auto& s : stacks["stacks"])
    if (s["name"] == "litgpt" || s["name"] == "hf") {
      ++seen;
      EXPECT_EQ(s["experts"], s["name"] == "litgpt" ? "loop" : "grouped");
      EXPECT_TRUE(s["experts_basis"].is_string());
    }
  EXPECT_EQ(seen, 2);
}

TEST(ExpertsImpl, TransformersFourMixtralQloraOnOneCardAsMeasured) {
  // fms-acceleration's Mixtral 8x7B QLoRA on one A100 (Transformers 4.45: experts one after the
  // other): 43.55 GB at batch 4, 61.49 GB at batch 8, each within 5 %.
  const auto r = test::run_cli({"validate", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto validated = nlohmann::json::parse(r.out);  // kept: the loop iterates a member
  int seen = 0;
  for (const auto& row : validated["runs"])
    if (row["id"] == "FM15" || row["id"] == "FM17") {
      ++seen;
      EXPECT_EQ(row["workload"]["options"]["experts_impl"], "loop");
      EXPECT_LT(std::abs(row["error"].get<double>()), 0.05) << row["id"];
    }
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace ftplan
