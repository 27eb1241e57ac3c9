// What the unsloth stack runs by default (data/stacks/unsloth.yaml): offloaded gradient
// checkpointing, Cut Cross-Entropy, fused LoRA autograd functions; and the FlashAttention
// backward kernel's own buffers. Figures by hand from a tiny block's shapes.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "memory/activations.hpp"
#include "model/config_reader.hpp"
#include "plan/runs.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

// h = 8, I = 24, two query heads of 4 and one key/value head: q_dim 8, kv_dim 4.
const char* kTinyGqa = R"({"model_type": "llama", "hidden_size": 8, "intermediate_size": 24,
  "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 16})";

ActivationSettings lora_everywhere() {
  ActivationSettings s;
  s.adapted = kAllProjections;
  s.rank = 4;
  s.attention = Attention::kFlash;
  s.autocast = true;
  s.compiled = true;
  return s;
}

TEST(UnslothStack, FusedLoraBlockByHand) {
  const BlockShape shape = dense_block_shape(read_hf_config(kTinyGqa, "llama.json", "tiny"));
  ActivationSettings peft = lora_everywhere();
  peft.fp32_adapters = true;
  // PEFT's modules, compiled kernels, bytes per token:
  //   attention: norm input 2·8 = 16, a 16-bit copy of the input per adapted q, k, v 3·16 = 48,
  //   Q K V 2·(8 + 4 + 4) = 32, O and the FP32 logsumexp 2·8 + 4·2 = 24, o's copy of O 16, x·A of
  //   four modules 2·4·4 = 32: 168.
  //   MLP: norm input 16, gate's and up's copies 2·16 = 32, gate and up outputs 2·2·24 = 96,
  //   down's copy of its input 2·24 = 48, x·A of three modules 24: 216. Total 384.
  EXPECT_DOUBLE_EQ(block_activations(shape, peft).saved.per_token, 384.0);
  // Unsloth's LoRA_QKV, LoRA_W, LoRA_MLP: one 16-bit input per group, no x·A, down's input
  // rebuilt from gate and up: attention 16 + 16 + 32 + 24 = 88, MLP 16 + 16 + 96 = 128: 216.
  ActivationSettings fused = lora_everywhere();
  fused.fused_lora = true;
  const BlockActivations f = block_activations(shape, fused);
  EXPECT_DOUBLE_EQ(f.saved.per_token, 216.0);
  // Its backward: the block's input and output gradients 2·2·8 = 32 and the larger of attention
  // (dQ dK dV dO 2·(8 + 4 + 4 + 8) = 48, FlashAttention's FP32 dQ accumulator 4·8 = 32, dK and dV
  // for each query head while the kernel runs 2·(8 - 4) + 2·(8 - 4) = 16: 96) and the MLP (down's
  // input gradient only, 2·24 = 48; gate's and up's are written in place): 32 + 96 = 128.
  EXPECT_DOUBLE_EQ(f.backward_transient.per_token, 128.0);
  // Unfused, the MLP's three gradients 3·2·24 = 144 are the larger: 32 + 144 = 176.
  EXPECT_DOUBLE_EQ(block_activations(shape, peft).backward_transient.per_token, 176.0);
  // Eager attention keeps no FlashAttention buffers: 2·(8 + 8 + 8 + 8) = 64 with K and V
  // repeated, against the fused MLP's 48: 32 + 64 = 96.
  fused.attention = Attention::kEager;
  EXPECT_DOUBLE_EQ(block_activations(shape, fused).backward_transient.per_token, 96.0);
}

nlohmann::json options_of(std::vector<std::string> args) {
  for (const char* a :
       {"--model", "llama-3.1-8b", "--method", "qlora", "--gpu", "h200-sxm", "--json"})
    args.emplace_back(a);
  const auto r = test::run_cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out)["options"];
}

TEST(UnslothStack, DefaultsAndTheirOverrides) {
  const auto unsloth = options_of({"fit", "--stack", "unsloth"});
  EXPECT_TRUE(unsloth["offload_activations"].get<bool>());
  EXPECT_EQ(unsloth["loss"], "fused");
  EXPECT_TRUE(unsloth["compile"].get<bool>());
  // Gradient checkpointing without offload (use_gradient_checkpointing=True).
  EXPECT_FALSE(
      options_of({"fit", "--stack", "unsloth", "--no-offload-activations"})["offload_activations"]
          .get<bool>());
  // Nothing is checkpointed, so nothing is offloaded.
  EXPECT_FALSE(
      options_of({"fit", "--stack", "unsloth", "--recompute", "none"})["offload_activations"]
          .get<bool>());
  // Other stacks keep activations on the card unless told.
  EXPECT_FALSE(options_of({"fit"})["offload_activations"].get<bool>());
  const auto both =
      test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu", "h200-sxm",
                     "--offload-activations", "--no-offload-activations"});
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("contradict"), std::string::npos) << both.err;
}

TEST(UnslothStack, StacksListSaysWhatEachRunsAndWhy) {
  const auto r = test::run_cli({"stacks", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json listed = nlohmann::json::parse(r.out);
  for (const auto& st : listed["stacks"]) {
    const std::string name = st["name"];
    EXPECT_EQ(st["offload_checkpoints"].get<bool>(), name == "unsloth") << name;
    EXPECT_EQ(st["offload_checkpoints_basis"].is_string(), name == "unsloth") << name;
    EXPECT_EQ(st["fused_lora_kernels"].get<bool>(), name == "unsloth") << name;
    // The k-bit preparation: TRL's (embeddings back in BF16) and PEFT's alone; no other stack.
    EXPECT_EQ(st["quantized_base"].is_object(), name == "hf" || name == "peft") << name;
    if (st["quantized_base"].is_object())
      EXPECT_EQ(st["quantized_base"]["bf16_embeddings"].get<bool>(), name == "hf");
  }
}

TEST(UnslothStack, RunsFilesTakeTheStacksDefault) {
  const std::string runs =
      "candidates: {gpus: [h200-sxm], counts: [1]}\ndefaults: {tokens: 1e6}\n"
      "runs:\n"
      "  - {name: u, model: llama-3.1-8b, method: qlora, stack: unsloth}\n"
      "  - {name: v, model: llama-3.1-8b, method: qlora, stack: unsloth,"
      " offload_activations: false}\n";
  const auto r = test::run_cli({"plan", "-", "--json"}, runs);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_TRUE(j["runs"][0]["options"]["offload_activations"].get<bool>()) << j["runs"][0].dump();
  EXPECT_FALSE(j["runs"][1]["options"]["offload_activations"].get<bool>());
}

TEST(UnslothStack, PlannedRecomputeModesCarryTheStacksOffload) {
  PlannedRun run;
  run.workload = test::workload("llama-3.1-8b", Method::kQlora);
  run.workload.stack = &test::stacks().find("unsloth");
  // The planner tries each recompute mode: Unsloth offloads what it checkpoints, nothing else.
  EXPECT_TRUE(run.with_recompute(run.workload, Recompute::kFull).options.offload_activations);
  EXPECT_FALSE(run.with_recompute(run.workload, Recompute::kNone).options.offload_activations);
  EXPECT_FALSE(run.with_recompute(run.workload, Recompute::kSelective).options.offload_activations);
  // A file that sets offload_activations keeps it in every mode.
  run.offload_activations_given = true;
  run.workload.options.offload_activations = false;
  EXPECT_FALSE(run.with_recompute(run.workload, Recompute::kFull).options.offload_activations);
  // Other stacks never offload by default.
  run.offload_activations_given = false;
  run.workload.stack = &test::stacks().find("hf");
  EXPECT_FALSE(run.with_recompute(run.workload, Recompute::kFull).options.offload_activations);
}

}  // namespace
}  // namespace ftplan
