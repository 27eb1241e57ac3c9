// Architectures beyond the Llama family: tensor names and shapes as the transformers modeling
// files define them, the layer plans their configs describe, multi-head latent attention in the
// operation list, and the errors a bad config gives. Totals are in test_params.cpp.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "model/config_reader.hpp"
#include "perf/ops.hpp"
#include "support.hpp"
#include "workload/roles.hpp"

namespace ftplan {
namespace {

const TensorSpec* tensor(const ParamInventory& inv, const std::string& name) {
  for (const auto& t : inv.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<std::int64_t> shape_of(const ParamInventory& inv, const std::string& name) {
  const TensorSpec* t = tensor(inv, name);
  EXPECT_NE(t, nullptr) << name;
  return t ? t->shape : std::vector<std::int64_t>{};
}

using Shape = std::vector<std::int64_t>;

TEST(Architectures, Gemma2HasFourNormsTiedEmbeddingsAndAlternatingWindows) {
  const auto& m = test::catalog().model("gemma-2-9b");
  EXPECT_TRUE(m->arch.tied_embeddings);
  EXPECT_EQ(tensor(m->params, "lm_head.weight"), nullptr);
  for (const char* norm : {"input_layernorm", "post_attention_layernorm",
                           "pre_feedforward_layernorm", "post_feedforward_layernorm"})
    EXPECT_EQ(shape_of(m->params, std::string("model.layers.{L}.") + norm + ".weight"),
              Shape{3584});
  // head_dim 256 is wider than hidden / heads (224): q [16·256, 3584].
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.self_attn.q_proj.weight"), (Shape{4096, 3584}));
  // Gemma2 layer_types: even layers sliding (window 4096), odd layers global: 21 of 42.
  EXPECT_EQ(m->arch.sliding_window, 4096);
  EXPECT_EQ(m->arch.sliding_layers, 21);
  EXPECT_EQ(m->arch.activation, MlpActivation::kGeGLU);
}

// Gemma 1 (modeling_gemma.py GemmaDecoderLayer): input_layernorm and post_attention_layernorm
// only, a GeGLU MLP, head_dim 256, tied embeddings, no biases and no sliding window.
TEST(Architectures, GemmaHasTwoNormsGeGluHeadDim256AndTiedEmbeddings) {
  const auto& m = test::catalog().model("gemma-7b");
  EXPECT_EQ(m->arch.model_type, "gemma");
  EXPECT_TRUE(m->arch.tied_embeddings);
  EXPECT_EQ(tensor(m->params, "lm_head.weight"), nullptr);
  EXPECT_EQ(m->arch.norms_per_layer, 2);
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.input_layernorm.weight"), Shape{3072});
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.post_attention_layernorm.weight"), Shape{3072});
  EXPECT_EQ(tensor(m->params, "model.layers.{L}.pre_feedforward_layernorm.weight"), nullptr);
  // 16 heads of 256: q, k and v [4096, 3072], wider than hidden_size; o [3072, 4096].
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.self_attn.q_proj.weight"), (Shape{4096, 3072}));
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.self_attn.v_proj.weight"), (Shape{4096, 3072}));
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.self_attn.o_proj.weight"), (Shape{3072, 4096}));
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.mlp.gate_proj.weight"), (Shape{24576, 3072}));
  EXPECT_EQ(m->arch.activation, MlpActivation::kGeGLU);
  EXPECT_EQ(m->arch.sliding_window, 0);
  EXPECT_EQ(m->params.biases, 0);
  EXPECT_FALSE(m->arch.qk_norm);
  // Gemma 2B: multi-query attention, one key/value head of 256.
  const auto& small = test::catalog().model("gemma-2b");
  EXPECT_EQ(shape_of(small->params, "model.layers.{L}.self_attn.k_proj.weight"),
            (Shape{256, 2048}));
  EXPECT_EQ(small->params.norms, 18 * 2 * 2048 + 2048);
}

TEST(Architectures, GemmaWithoutHeadDimTakesTheClassDefault) {
  // GemmaConfig's head_dim is 256 whatever hidden_size / num_attention_heads gives (192 here).
  const std::string config = R"({"model_type": "gemma", "hidden_size": 3072,
    "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 16,
    "num_key_value_heads": 16, "vocab_size": 100})";
  const ModelArch a = read_hf_config(config, "gemma.json", "x");
  EXPECT_EQ(a.head_dim, 256);
  EXPECT_TRUE(a.tied_embeddings);
  bool noted = false;
  for (const auto& note : a.defaults_applied)
    if (note.starts_with("head_dim = 256")) noted = true;
  EXPECT_TRUE(noted);
  // A head_dim in the file wins.
  const std::string with_head_dim = R"({"model_type": "gemma", "hidden_size": 64,
    "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "head_dim": 32, "vocab_size": 100, "tie_word_embeddings": false})";
  const ModelArch b = read_hf_config(with_head_dim, "gemma.json", "x");
  EXPECT_EQ(b.head_dim, 32);
  EXPECT_FALSE(b.tied_embeddings);
}

// Qwen2-MoE (modeling_qwen2_moe.py): biased q, k, v (o without), no q/k norm, Qwen3-MoE's
// router and experts, and one shared expert behind a sigmoid gate in every MoE layer.
TEST(Architectures, PhiHasOneLayerNormBiasesEverywhereAndANonGatedMlp) {
  // modeling_phi.py: input_layernorm only, q/k/v/dense with biases, fc1 [I, H] and fc2 [H, I]
  // with biases, model.final_layernorm, lm_head with a bias; untied.
  const auto& m = test::catalog().model("phi-2");
  const std::string p = "model.layers.{L}.";
  EXPECT_EQ(shape_of(m->params, "model.embed_tokens.weight"), (Shape{51200, 2560}));
  EXPECT_EQ(shape_of(m->params, p + "self_attn.q_proj.weight"), (Shape{2560, 2560}));
  EXPECT_EQ(shape_of(m->params, p + "self_attn.k_proj.bias"), Shape{2560});
  EXPECT_EQ(shape_of(m->params, p + "self_attn.dense.weight"), (Shape{2560, 2560}));
  EXPECT_EQ(shape_of(m->params, p + "self_attn.dense.bias"), Shape{2560});
  EXPECT_EQ(tensor(m->params, p + "self_attn.o_proj.weight"), nullptr);
  const TensorSpec* fc1 = tensor(m->params, p + "mlp.fc1.weight");
  ASSERT_NE(fc1, nullptr);
  EXPECT_EQ(fc1->shape, (Shape{10240, 2560}));
  EXPECT_EQ(fc1->projections, kProjUp);
  const TensorSpec* fc2 = tensor(m->params, p + "mlp.fc2.weight");
  ASSERT_NE(fc2, nullptr);
  EXPECT_EQ(fc2->shape, (Shape{2560, 10240}));
  EXPECT_EQ(fc2->projections, kProjDown);
  EXPECT_EQ(shape_of(m->params, p + "mlp.fc1.bias"), Shape{10240});
  EXPECT_EQ(shape_of(m->params, p + "mlp.fc2.bias"), Shape{2560});
  EXPECT_EQ(tensor(m->params, p + "mlp.gate_proj.weight"), nullptr);
  EXPECT_EQ(shape_of(m->params, p + "input_layernorm.weight"), Shape{2560});
  EXPECT_EQ(shape_of(m->params, p + "input_layernorm.bias"), Shape{2560});
  EXPECT_EQ(tensor(m->params, p + "post_attention_layernorm.weight"), nullptr);
  EXPECT_EQ(shape_of(m->params, "model.final_layernorm.weight"), Shape{2560});
  EXPECT_EQ(shape_of(m->params, "model.final_layernorm.bias"), Shape{2560});
  EXPECT_EQ(tensor(m->params, "model.norm.weight"), nullptr);
  EXPECT_EQ(shape_of(m->params, "lm_head.weight"), (Shape{51200, 2560}));
  EXPECT_EQ(shape_of(m->params, "lm_head.bias"), Shape{51200});
  EXPECT_EQ(m->arch.activation, MlpActivation::kGelu);
  EXPECT_TRUE(m->arch.parallel_block);
  EXPECT_TRUE(m->arch.residual_dropout);  // resid_pdrop 0.1
  EXPECT_FALSE(m->arch.attention_dropout);
}

TEST(Architectures, PhiWithQkLayernormIsRefused) {
  const std::string config = R"({"model_type": "phi", "hidden_size": 64, "intermediate_size": 256,
    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "qk_layernorm": true})";
  try {
    (void)read_hf_config(config, "phi.json", "x");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("qk_layernorm"), std::string::npos) << e.what();
  }
}

TEST(Architectures, StarCoder2HasLayerNormsBiasesGqaAndTiedEmbeddings) {
  // modeling_starcoder2.py: two LayerNorms with biases, q/k/v/o with biases (use_bias), c_fc
  // [I, H] and c_proj [H, I] with biases, model.norm with a bias; tied (no lm_head).
  const auto& m = test::catalog().model("starcoder2-3b");
  const std::string p = "model.layers.{L}.";
  EXPECT_EQ(shape_of(m->params, p + "self_attn.q_proj.weight"), (Shape{3072, 3072}));
  EXPECT_EQ(shape_of(m->params, p + "self_attn.k_proj.weight"), (Shape{256, 3072}));
  EXPECT_EQ(shape_of(m->params, p + "self_attn.v_proj.bias"), Shape{256});
  EXPECT_EQ(shape_of(m->params, p + "self_attn.o_proj.bias"), Shape{3072});
  EXPECT_EQ(shape_of(m->params, p + "mlp.c_fc.weight"), (Shape{12288, 3072}));
  EXPECT_EQ(shape_of(m->params, p + "mlp.c_fc.bias"), Shape{12288});
  EXPECT_EQ(shape_of(m->params, p + "mlp.c_proj.weight"), (Shape{3072, 12288}));
  EXPECT_EQ(shape_of(m->params, p + "mlp.c_proj.bias"), Shape{3072});
  EXPECT_EQ(shape_of(m->params, p + "input_layernorm.bias"), Shape{3072});
  EXPECT_EQ(shape_of(m->params, p + "post_attention_layernorm.bias"), Shape{3072});
  EXPECT_EQ(shape_of(m->params, "model.norm.bias"), Shape{3072});
  EXPECT_EQ(tensor(m->params, "lm_head.weight"), nullptr);
  EXPECT_TRUE(m->arch.tied_embeddings);
  EXPECT_FALSE(m->arch.parallel_block);
  EXPECT_EQ(m->arch.sliding_window, 4096);
  EXPECT_EQ(m->arch.sliding_layers, 30);
  EXPECT_TRUE(m->arch.attention_dropout);
  EXPECT_TRUE(m->arch.residual_dropout);
  EXPECT_TRUE(m->arch.embedding_dropout);
  // use_bias false drops every linear bias; the LayerNorm biases stay.
  const std::string config = R"({"model_type": "starcoder2", "hidden_size": 64,
    "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "vocab_size": 100, "use_bias": false})";
  const ModelArch a = read_hf_config(config, "sc2.json", "x");
  EXPECT_FALSE(a.qkv_bias || a.o_bias || a.mlp_bias);
  EXPECT_TRUE(a.norm_bias);
  EXPECT_TRUE(a.tied_embeddings);
}

TEST(Architectures, NonGatedMlpOpsRunFc1GeluFc2) {
  const Workload w = test::workload("phi-2", Method::kLora);
  const StepOps step = build_step_ops(w);
  // The GELU over fc1's output, T × I elements: 9 FLOPs each, x read and y written in 16 bits.
  const double elems = static_cast<double>(step.tokens_per_micro_batch) * 10240;
  bool gelu = false, gated = false;
  for (const auto& op : step.ops) {
    if (op.name == "mlp.act.fwd") {
      gelu = true;
      EXPECT_DOUBLE_EQ(op.flops.value, 9 * elems);
      EXPECT_DOUBLE_EQ(op.bytes.value, 4 * elems);
      EXPECT_EQ(op.count, 32);
    }
    if (op.name.find("gate_proj") != std::string::npos) gated = true;
  }
  EXPECT_TRUE(gelu);
  EXPECT_FALSE(gated);
}

TEST(Architectures, Qwen2MoeHasBiasedQkvASharedExpertAndItsGate) {
  const auto& m = test::catalog().model("qwen1.5-moe-a2.7b");
  const std::string p = "model.layers.{L}.";
  EXPECT_EQ(shape_of(m->params, p + "self_attn.q_proj.bias"), Shape{2048});
  EXPECT_EQ(shape_of(m->params, p + "self_attn.k_proj.bias"), Shape{2048});
  EXPECT_EQ(tensor(m->params, p + "self_attn.o_proj.bias"), nullptr);
  EXPECT_EQ(tensor(m->params, p + "self_attn.q_norm.weight"), nullptr);
  EXPECT_EQ(shape_of(m->params, p + "mlp.gate.weight"), (Shape{60, 2048}));
  const TensorSpec* expert = tensor(m->params, p + "mlp.experts.{E}.gate_proj.weight");
  ASSERT_NE(expert, nullptr);
  EXPECT_EQ(expert->shape, (Shape{1408, 2048}));
  EXPECT_EQ(expert->experts, 60);
  EXPECT_EQ(shape_of(m->params, p + "mlp.shared_expert.gate_proj.weight"), (Shape{5632, 2048}));
  EXPECT_EQ(shape_of(m->params, p + "mlp.shared_expert.down_proj.weight"), (Shape{2048, 5632}));
  const TensorSpec* gate = tensor(m->params, p + "mlp.shared_expert_gate.weight");
  ASSERT_NE(gate, nullptr);
  EXPECT_EQ(gate->shape, (Shape{1, 2048}));
  EXPECT_EQ(gate->layers, 24);
  EXPECT_EQ(gate->projections, 0);  // not a LoRA target
  EXPECT_EQ(tensor(m->params, p + "mlp.shared_experts.gate_proj.weight"), nullptr);
  EXPECT_EQ(tensor(m->params, p + "mlp.gate_proj.weight"), nullptr);  // no dense layer
  EXPECT_EQ(m->arch.moe_layers, 24);
  EXPECT_EQ(m->params.biases, 24 * 3 * 2048);
  EXPECT_FALSE(m->arch.tied_embeddings);
  // Qwen2-57B-A14B: grouped-query attention, k and v biases 4·128 wide.
  const auto& big = test::catalog().model("qwen2-57b-a14b");
  EXPECT_EQ(shape_of(big->params, p + "self_attn.k_proj.bias"), Shape{512});
  EXPECT_EQ(shape_of(big->params, p + "mlp.shared_expert.up_proj.weight"), (Shape{20480, 3584}));
  EXPECT_EQ(big->arch.experts_per_token, 8);
}

TEST(Architectures, Qwen2MoeDenseLayersFollowSparseStepAndMlpOnlyLayers) {
  // Layer i is a mixture of experts when (i + 1) % decoder_sparse_step == 0 and i is not in
  // mlp_only_layers: of 0..5 with step 2 and [3], layers 1 and 5; the other four dense.
  const std::string config = R"({"model_type": "qwen2_moe", "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 6, "num_attention_heads": 4,
    "vocab_size": 100, "num_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 16, "shared_expert_intermediate_size": 48,
    "decoder_sparse_step": 2, "mlp_only_layers": [3]})";
  const ModelArch a = read_hf_config(config, "q.json", "x");
  EXPECT_EQ(a.moe_layers, 2);
  const ParamInventory inv = build_param_inventory(a);
  EXPECT_EQ(tensor(inv, "model.layers.{L}.mlp.gate_proj.weight")->layers, 4);
  EXPECT_EQ(shape_of(inv, "model.layers.{L}.mlp.gate_proj.weight"), (Shape{96, 64}));
  EXPECT_EQ(tensor(inv, "model.layers.{L}.mlp.shared_expert_gate.weight")->layers, 2);
  EXPECT_EQ(shape_of(inv, "model.layers.{L}.mlp.shared_expert.up_proj.weight"), (Shape{48, 64}));
  // Embedding and lm_head 2·100·64; attention 4·64² + 3·64 biases per layer (6); dense MLPs
  // 3·64·96 (4 layers); router 4·64, experts 4·3·64·16, shared expert 3·64·48, gate 64 (2
  // layers); norms 2·64 per layer and the final one.
  const std::int64_t total = 2 * 100 * 64 + 6 * (4 * 64 * 64 + 3 * 64) + 4 * (3 * 64 * 96) +
                             2 * (4 * 64 + 4 * 3 * 64 * 16 + 3 * 64 * 48 + 64) + 6 * 2 * 64 + 64;
  EXPECT_EQ(inv.total, total);
}

TEST(Architectures, Qwen2MoeStepRunsTheSharedExpertGate) {
  Workload w = test::workload("qwen1.5-moe-a2.7b", Method::kLora);
  const StepOps ops = build_step_ops(w);
  bool gate = false, scale = false;
  for (const auto& op : ops.ops) {
    if (op.name.starts_with("moe.shared.expert_gate.")) gate = true;
    if (op.name == "moe.shared.scale.fwd") scale = true;
  }
  EXPECT_TRUE(gate);
  EXPECT_TRUE(scale);
}

TEST(Architectures, Olmo2NormsAfterTheSublayersAndFullWidthQkNorm) {
  const auto& m = test::catalog().model("olmo-2-7b");
  // modeling_olmo2.py: q_norm over n_h·d, k_norm over n_kv·d (32 heads of 128).
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.self_attn.q_norm.weight"), Shape{4096});
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.self_attn.k_norm.weight"), Shape{4096});
  EXPECT_NE(tensor(m->params, "model.layers.{L}.post_attention_layernorm.weight"), nullptr);
  EXPECT_NE(tensor(m->params, "model.layers.{L}.post_feedforward_layernorm.weight"), nullptr);
  EXPECT_EQ(tensor(m->params, "model.layers.{L}.input_layernorm.weight"), nullptr);
}

TEST(Architectures, GraniteMoeStoresExpertsAsFusedParallelLinears) {
  const auto& m = test::catalog().model("granite-3.1-3b-a800m");
  const std::string p = "model.layers.{L}.block_sparse_moe.";
  // GraniteMoeParallelExperts: weight [num_experts, output_size, input_size].
  EXPECT_EQ(shape_of(m->params, p + "input_linear.weight"), (Shape{40, 1024, 1536}));
  EXPECT_EQ(shape_of(m->params, p + "output_linear.weight"), (Shape{40, 1536, 512}));
  EXPECT_EQ(shape_of(m->params, p + "router.layer.weight"), (Shape{40, 1536}));
  EXPECT_EQ(m->arch.moe_layers, 32);
  EXPECT_TRUE(m->arch.tied_embeddings);
}

TEST(Architectures, GraniteMoeSharedAddsASharedMlp) {
  const std::string config = R"({"model_type": "granitemoeshared", "hidden_size": 64,
    "intermediate_size": 32, "shared_intermediate_size": 48, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
    "num_local_experts": 4, "num_experts_per_tok": 2, "tie_word_embeddings": true})";
  const ParamInventory inv = build_param_inventory(read_hf_config(config, "shared.json", "x"));
  EXPECT_EQ(shape_of(inv, "model.layers.{L}.shared_mlp.input_linear.weight"), (Shape{96, 64}));
  EXPECT_EQ(shape_of(inv, "model.layers.{L}.shared_mlp.output_linear.weight"), (Shape{64, 48}));
}

TEST(Architectures, Glm4FusesGateUpAndNormsEverySublayerOutput) {
  const std::string config = R"({"model_type": "glm4", "hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100, "attention_bias": true})";
  const ParamInventory inv = build_param_inventory(read_hf_config(config, "glm4.json", "x"));
  EXPECT_EQ(shape_of(inv, "model.layers.{L}.mlp.gate_up_proj.weight"), (Shape{192, 64}));
  EXPECT_NE(tensor(inv, "model.layers.{L}.post_self_attn_layernorm.weight"), nullptr);
  EXPECT_NE(tensor(inv, "model.layers.{L}.post_mlp_layernorm.weight"), nullptr);
  EXPECT_NE(tensor(inv, "model.layers.{L}.self_attn.q_proj.bias"), nullptr);
  EXPECT_EQ(tensor(inv, "model.layers.{L}.self_attn.o_proj.bias"), nullptr);  // o_proj: no bias
  // Embedding 100·64 twice, per layer q 64·64 + k, v 2·64·32 + o 64·64 + biases 64 + 2·32
  // + MLP 3·64·96 + 4 norms of 64, final norm 64.
  const ParamCount layer = 64 * 64 + 2 * 64 * 32 + 64 * 64 + 64 + 2 * 32 + 3 * 64 * 96 + 4 * 64;
  EXPECT_EQ(inv.total, 2 * 100 * 64 + 2 * layer + 64);
}

TEST(Architectures, PhimoeHasLayerNormBiasesAndABiasedHead) {
  const std::string config = R"({"model_type": "phimoe", "hidden_size": 64,
    "intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "vocab_size": 100, "num_local_experts": 4,
    "num_experts_per_tok": 2, "attention_bias": true, "lm_head_bias": true})";
  const ParamInventory inv = build_param_inventory(read_hf_config(config, "phimoe.json", "x"));
  EXPECT_EQ(shape_of(inv, "model.layers.{L}.input_layernorm.bias"), Shape{64});
  EXPECT_EQ(shape_of(inv, "model.norm.bias"), Shape{64});
  EXPECT_EQ(shape_of(inv, "lm_head.bias"), Shape{100});
  EXPECT_EQ(shape_of(inv, "model.layers.{L}.block_sparse_moe.experts.{E}.w1.weight"),
            (Shape{32, 64}));
  EXPECT_NE(tensor(inv, "model.layers.{L}.self_attn.o_proj.bias"), nullptr);
}

TEST(Architectures, DeepSeekV2LiteLatentAttentionWithoutAQueryLatent) {
  const auto& m = test::catalog().model("deepseek-v2-lite");
  const std::string p = "model.layers.{L}.self_attn.";
  EXPECT_TRUE(m->arch.mla);
  // q_lora_rank null: q_proj [16·(128 + 64), 2048].
  EXPECT_EQ(shape_of(m->params, p + "q_proj.weight"), (Shape{3072, 2048}));
  EXPECT_EQ(tensor(m->params, p + "q_a_proj.weight"), nullptr);
  EXPECT_EQ(shape_of(m->params, p + "kv_a_proj_with_mqa.weight"), (Shape{512 + 64, 2048}));
  EXPECT_EQ(shape_of(m->params, p + "kv_a_layernorm.weight"), Shape{512});
  EXPECT_EQ(shape_of(m->params, p + "kv_b_proj.weight"), (Shape{16 * (128 + 128), 512}));
  EXPECT_EQ(shape_of(m->params, p + "o_proj.weight"), (Shape{2048, 16 * 128}));
  // first_k_dense_replace 1: one dense layer, 26 MoE layers with 2 shared experts of 1408.
  EXPECT_EQ(m->arch.dense_layers(), 1);
  EXPECT_EQ(m->arch.moe_layers, 26);
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.mlp.shared_experts.gate_proj.weight"),
            (Shape{2816, 2048}));
  EXPECT_EQ(tensor(m->params, "model.layers.{L}.mlp.gate.e_score_correction_bias"), nullptr);
}

TEST(Architectures, DeepSeekV3LatentAttentionRouterBiasAndMtpLeftOut) {
  const auto& m = test::catalog().model("deepseek-v3");
  const std::string p = "model.layers.{L}.self_attn.";
  EXPECT_EQ(shape_of(m->params, p + "q_a_proj.weight"), (Shape{1536, 7168}));
  EXPECT_EQ(shape_of(m->params, p + "q_a_layernorm.weight"), Shape{1536});
  EXPECT_EQ(shape_of(m->params, p + "q_b_proj.weight"), (Shape{128 * 192, 1536}));
  EXPECT_EQ(shape_of(m->params, p + "kv_b_proj.weight"), (Shape{128 * 256, 512}));
  EXPECT_EQ(shape_of(m->params, p + "o_proj.weight"), (Shape{7168, 128 * 128}));
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.mlp.gate.e_score_correction_bias"), Shape{256});
  EXPECT_EQ(m->arch.moe_layers, 58);  // layers 3-60 (models.md §9)
  EXPECT_EQ(m->arch.mtp_layers, 1);   // in the checkpoint, not in the inventory
  // models.md §9: 37,552,297,472 activated per token including the embedding and the head.
  EXPECT_EQ(m->params.active_per_token + m->arch.vocab * m->arch.hidden, 37'552'297'472);
}

TEST(Architectures, Glm45AirSharedExpertRouterBiasAndBiasedQkv) {
  const auto& m = test::catalog().model("glm-4.5-air");
  EXPECT_EQ(m->arch.dense_layers(), 1);
  EXPECT_EQ(m->arch.moe_layers, 45);
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.mlp.shared_experts.up_proj.weight"),
            (Shape{1408, 4096}));
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.mlp.gate.e_score_correction_bias"), Shape{128});
  EXPECT_EQ(shape_of(m->params, "model.layers.{L}.self_attn.q_proj.bias"), Shape{96 * 128});
  EXPECT_EQ(tensor(m->params, "model.layers.{L}.self_attn.o_proj.bias"), nullptr);
  EXPECT_EQ(m->arch.mtp_layers, 1);
}

// Attention FLOPs under MLA: QKᵀ over qk_nope + qk_rope = 192 per head and P·V over
// v_head_dim = 128: 2·(192 + 128) FLOPs per (query, key) pair and head.
TEST(Architectures, LatentAttentionCoreCountsQkAndValueWidthsApart) {
  Workload w = test::workload("deepseek-v2-lite", Method::kLora);
  w.attention = Attention::kFlash;
  const StepOps ops = build_step_ops(w);
  const ModelArch& a = w.model->arch;
  const double pairs = causal_pairs(w.seq, 0) * static_cast<double>(w.micro_batch * a.heads);
  bool found = false;
  for (const auto& op : ops.ops)
    if (op.name == "attention.core.fwd") {
      found = true;
      EXPECT_DOUBLE_EQ(op.flops.value, 2.0 * (192 + 128) * pairs);
    }
  EXPECT_TRUE(found);
  // The latent projections run as GEMMs of their own.
  for (const char* name : {"kv_a_proj_with_mqa", "kv_b_proj"}) {
    bool gemm = false;
    for (const auto& op : ops.ops)
      if (op.name.find(name) != std::string::npos && op.gemm.m > 0) gemm = true;
    EXPECT_TRUE(gemm) << name;
  }
}

TEST(Architectures, Gemma3VisionTowerIsAPartOfItsOwn) {
  const auto& m = test::catalog().model("gemma-3-4b");
  ASSERT_TRUE(m->arch.has_vision());
  const std::string v = "vision_tower.vision_model.";
  // SiglipVisionEmbeddings: a 14×14 patch convolution, (896 / 14)² = 4096 positions.
  EXPECT_EQ(shape_of(m->params, v + "embeddings.patch_embedding.weight"), (Shape{1152, 3, 14, 14}));
  EXPECT_EQ(shape_of(m->params, v + "embeddings.position_embedding.weight"), (Shape{4096, 1152}));
  EXPECT_EQ(shape_of(m->params, v + "encoder.layers.{L}.mlp.fc1.weight"), (Shape{4304, 1152}));
  EXPECT_EQ(tensor(m->params, v + "encoder.layers.{L}.mlp.fc1.weight")->layers, 27);
  EXPECT_EQ(shape_of(m->params, "multi_modal_projector.mm_input_projection_weight"),
            (Shape{1152, 2560}));
  for (const auto& t : m->params.tensors) {
    const bool vision = t.name.starts_with("vision_tower.");
    const bool projector = t.name.starts_with("multi_modal_projector.");
    EXPECT_EQ(t.part,
              vision ? ModelPart::kVision : (projector ? ModelPart::kProjector : ModelPart::kText))
        << t.name;
  }
  EXPECT_EQ(m->params.text + m->params.vision + m->params.projector, m->params.total);
}

TEST(Architectures, VisionTowerAndProjectorStayFrozen) {
  const auto& m = test::catalog().model("gemma-3-4b");
  const ParamCount frozen_parts = m->params.vision + m->params.projector;
  // A full fine-tune trains the text decoder only; the other parts are held in 16 bits.
  const TrainedSet full = trained_set(test::workload("gemma-3-4b", Method::kFull));
  EXPECT_EQ(full.trained_params, m->params.text);
  EXPECT_EQ(full.frozen16_params, frozen_parts);
  // LoRA and QLoRA put no adapter on them and quantize none of them.
  for (Method method : {Method::kLora, Method::kQlora}) {
    const TrainedSet set = trained_set(test::workload("gemma-3-4b", method));
    for (const auto& r : set.roles)
      if (r.tensor->part != ModelPart::kText) {
        EXPECT_FALSE(r.adapted()) << r.tensor->name;
        EXPECT_EQ(r.base, BaseRole::kFrozen16) << r.tensor->name;
      }
  }
}

TEST(Architectures, Qwen2_5_VlVisionTowerAndMergerAreFrozenParts) {
  const auto& m = test::catalog().model("qwen2.5-vl-7b");
  // A fine-tuning script's count: visual 676,550,144, the language model 7,615,616,512 (the
  // Qwen2.5-7B decoder).
  EXPECT_EQ(m->params.vision + m->params.projector, 676'550'144);
  EXPECT_EQ(m->params.text, 7'615'616'512);
  EXPECT_EQ(shape_of(m->params, "visual.patch_embed.proj.weight"), (Shape{1280, 3, 2, 14, 14}));
  EXPECT_EQ(shape_of(m->params, "visual.blocks.{L}.attn.qkv.weight"), (Shape{3840, 1280}));
  EXPECT_EQ(shape_of(m->params, "visual.merger.mlp.0.weight"), (Shape{5120, 5120}));
  EXPECT_EQ(shape_of(m->params, "visual.merger.mlp.2.weight"), (Shape{3584, 5120}));
  EXPECT_EQ(tensor(m->params, "visual.merger.mlp.2.weight")->part, ModelPart::kProjector);
  const TrainedSet full = trained_set(test::workload("qwen2.5-vl-7b", Method::kFull));
  EXPECT_EQ(full.trained_params, m->params.text);
}

// Llama 4 Scout (data/models/llama-4-scout-17b-16e.json): every layer a mixture of 16 experts
// with one shared expert; the vision encoder, pixel-shuffle adapter and projector apart.
TEST(Architectures, Llama4ScoutCountsTextVisionAndProjectorExactly) {
  const auto& m = test::catalog().model("llama-4-scout-17b-16e");
  ASSERT_TRUE(m->arch.has_vision());
  // HF safetensors total 108,641,793,536: the decoder 107,769,861,120 and 871,932,416 of vision
  // encoder, adapter and projector (sources-models.yaml model-index-llama4-param-totals).
  EXPECT_EQ(m->params.total, 108'641'793'536);
  EXPECT_EQ(m->params.text, 107'769'861'120);
  EXPECT_EQ(m->params.vision + m->params.projector, 871'932'416);
  EXPECT_EQ(m->params.projector, 4096 * 5120);  // multi_modal_projector.linear_1
  // The model card: 109B total, 17B active (the active count includes the embedding, as the
  // published 17,172,894,720 of the decoder does).
  EXPECT_NEAR(static_cast<double>(m->params.total), 109e9, 109e9 * 0.01);
  EXPECT_EQ(m->params.active_per_token + m->arch.vocab * m->arch.hidden, 17'172'894'720);
  EXPECT_EQ(m->arch.moe_layers, 48);
  EXPECT_EQ(m->arch.dense_layers(), 0);
  const std::string f = "model.layers.{L}.feed_forward.";
  EXPECT_EQ(shape_of(m->params, f + "router.weight"), (Shape{16, 5120}));
  EXPECT_EQ(shape_of(m->params, f + "experts.gate_up_proj"), (Shape{16, 5120, 2 * 8192}));
  EXPECT_EQ(shape_of(m->params, f + "experts.down_proj"), (Shape{16, 8192, 5120}));
  EXPECT_EQ(shape_of(m->params, f + "shared_expert.gate_proj.weight"), (Shape{8192, 5120}));
  EXPECT_EQ(tensor(m->params, f + "gate_proj.weight"), nullptr);  // no dense layer
  // Llama4TextL2Norm has no weight: use_qk_norm adds no tensor.
  EXPECT_EQ(tensor(m->params, "model.layers.{L}.self_attn.q_norm.weight"), nullptr);
  // Llama4VisionModel: an unfolded-patch linear [1408, 3·14²], (336/14)² + 1 positions.
  EXPECT_EQ(shape_of(m->params, "vision_model.patch_embedding.linear.weight"), (Shape{1408, 588}));
  EXPECT_EQ(shape_of(m->params, "vision_model.positional_embedding_vlm"), (Shape{577, 1408}));
  EXPECT_EQ(shape_of(m->params, "vision_model.vision_adapter.mlp.fc1.weight"), (Shape{4096, 5632}));
  EXPECT_EQ(tensor(m->params, "vision_model.model.layers.{L}.mlp.fc1.weight")->layers, 34);
  for (const auto& t : m->params.tensors) {
    const bool vision = t.name.starts_with("vision_model.");
    const bool projector = t.name.starts_with("multi_modal_projector.");
    EXPECT_EQ(t.part,
              vision ? ModelPart::kVision : (projector ? ModelPart::kProjector : ModelPart::kText))
        << t.name;
  }
  // A full fine-tune trains the decoder only.
  const TrainedSet full = trained_set(test::workload("llama-4-scout-17b-16e", Method::kFull));
  EXPECT_EQ(full.trained_params, m->params.text);
}

const char* kLlama4Vision = R"("vision_config": {"hidden_size": 1408, "image_size": 336,
  "intermediate_size": 5632, "num_attention_heads": 16, "num_channels": 3,
  "num_hidden_layers": 34, "patch_size": 14, "projector_input_dim": 4096,
  "projector_output_dim": 4096, "vision_output_dim": 4096,
  "multi_modal_projector_bias": false})";

// Llama 4 Maverick: MoE layers interleaved with dense ones (interleave_moe_layer_step 2), 128
// experts; HF safetensors total 401,583,781,376 ("400B total, 17B active").
TEST(Architectures, Llama4MaverickInterleavesDenseAndMoeLayers) {
  const std::string config = std::string(R"({"model_type": "llama4", "tie_word_embeddings": false,
    "text_config": {"model_type": "llama4_text", "hidden_size": 5120, "head_dim": 128,
      "intermediate_size": 8192, "intermediate_size_mlp": 16384, "num_hidden_layers": 48,
      "num_attention_heads": 40, "num_key_value_heads": 8, "vocab_size": 202048,
      "num_local_experts": 128, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
      "use_qk_norm": false, "attention_bias": false},
    )") + kLlama4Vision + "}";
  const ModelArch a = read_hf_config(config, "maverick.json", "maverick");
  const ParamInventory inv = build_param_inventory(a);
  EXPECT_EQ(a.moe_layers, 24);
  EXPECT_EQ(a.dense_layers(), 24);
  EXPECT_EQ(inv.total, 401'583'781'376);
  EXPECT_EQ(inv.text, 400'711'848'960);
  EXPECT_NEAR(static_cast<double>(inv.total), 400e9, 400e9 * 0.01);
  EXPECT_EQ(inv.active_per_token + a.vocab * a.hidden, 17'184'691'200);
  EXPECT_EQ(shape_of(inv, "model.layers.{L}.feed_forward.gate_proj.weight"), (Shape{16384, 5120}));
  EXPECT_EQ(tensor(inv, "model.layers.{L}.feed_forward.gate_proj.weight")->layers, 24);
  EXPECT_EQ(tensor(inv, "model.layers.{L}.feed_forward.experts.gate_up_proj")->layers, 24);
  // moe_layers, when given, decides.
  const std::string listed = std::string(R"({"model_type": "llama4_text", "hidden_size": 64,
    "intermediate_size": 32, "intermediate_size_mlp": 96, "num_hidden_layers": 4,
    "num_attention_heads": 4, "vocab_size": 100, "num_local_experts": 4,
    "num_experts_per_tok": 1, "moe_layers": [0, 3]})");
  EXPECT_EQ(read_hf_config(listed, "l.json", "x").moe_layers, 2);
}

TEST(Architectures, Llama4StepRunsSharedAndRoutedExperts) {
  Workload w = test::workload("llama-4-scout-17b-16e", Method::kLora);
  const StepOps ops = build_step_ops(w);
  bool shared = false, expert = false;
  for (const auto& op : ops.ops) {
    if (op.name.starts_with("moe.shared.")) shared = true;
    if (op.name.starts_with("moe.expert.")) expert = true;
  }
  EXPECT_TRUE(shared);
  EXPECT_TRUE(expert);
}

// Qwen3-VL-8B-Instruct: the Qwen3-8B decoder and a vision tower with three deepstack mergers.
TEST(Architectures, Qwen3VlVisionTowerAndDeepstackMergersAreFrozenParts) {
  const auto& m = test::catalog().model("qwen3-vl-8b");
  // HF safetensors total 8,767,123,696; the decoder is Qwen3-8B's 8,190,735,360.
  EXPECT_EQ(m->params.total, 8'767'123'696);
  EXPECT_EQ(m->params.text, 8'190'735'360);
  EXPECT_EQ(m->params.vision + m->params.projector, 576'388'336);
  EXPECT_EQ(shape_of(m->params, "visual.patch_embed.proj.weight"), (Shape{1152, 3, 2, 16, 16}));
  EXPECT_EQ(shape_of(m->params, "visual.pos_embed.weight"), (Shape{2304, 1152}));
  EXPECT_EQ(shape_of(m->params, "visual.merger.norm.weight"), Shape{1152});
  EXPECT_EQ(shape_of(m->params, "visual.deepstack_merger_list.{L}.norm.weight"), Shape{4608});
  EXPECT_EQ(tensor(m->params, "visual.deepstack_merger_list.{L}.linear_fc2.weight")->layers, 3);
  EXPECT_EQ(shape_of(m->params, "visual.merger.linear_fc2.weight"), (Shape{4096, 4608}));
  EXPECT_EQ(tensor(m->params, "visual.merger.linear_fc2.weight")->part, ModelPart::kProjector);
  EXPECT_EQ(tensor(m->params, "visual.blocks.{L}.attn.qkv.weight")->part, ModelPart::kVision);
  EXPECT_TRUE(m->arch.qk_norm);
  const TrainedSet full = trained_set(test::workload("qwen3-vl-8b", Method::kFull));
  EXPECT_EQ(full.trained_params, m->params.text);
}

// Qwen3-VL-30B-A3B: a Qwen3-MoE decoder whose experts are stored fused (Qwen3VLMoeTextExperts
// gate_up_proj [E, H, 2I], down_proj [E, I, H]). The decoder equals Qwen3-30B-A3B's
// 30,532,122,624 (the count llama.cpp reports for Qwen3-VL-30B-A3B's text GGUF).
TEST(Architectures, Qwen3VlMoeStoresExpertsFused) {
  const std::string config = R"({"model_type": "qwen3_vl_moe", "tie_word_embeddings": false,
    "text_config": {"hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 48,
      "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
      "vocab_size": 151936, "num_experts": 128, "num_experts_per_tok": 8,
      "moe_intermediate_size": 768, "decoder_sparse_step": 1, "mlp_only_layers": []},
    "vision_config": {"depth": 27, "hidden_size": 1152, "intermediate_size": 4304,
      "num_heads": 16, "in_channels": 3, "patch_size": 16, "spatial_merge_size": 2,
      "temporal_patch_size": 2, "out_hidden_size": 2048, "num_position_embeddings": 2304,
      "deepstack_visual_indexes": [8, 16, 24]}})";
  const ModelArch a = read_hf_config(config, "qwen3vlmoe.json", "x");
  const ParamInventory inv = build_param_inventory(a);
  EXPECT_EQ(inv.text, 30'532'122'624);
  EXPECT_EQ(inv.vision + inv.projector, 538'631'408);
  EXPECT_EQ(shape_of(inv, "model.layers.{L}.mlp.experts.gate_up_proj"), (Shape{128, 2048, 1536}));
  EXPECT_EQ(shape_of(inv, "model.layers.{L}.mlp.experts.down_proj"), (Shape{128, 768, 2048}));
  EXPECT_EQ(shape_of(inv, "model.layers.{L}.mlp.gate.weight"), (Shape{128, 2048}));
  EXPECT_EQ(tensor(inv, "model.layers.{L}.mlp.experts.gate_up_proj_bias"), nullptr);
}

void expect_error(const std::string& config, const std::string& key, const std::string& text) {
  try {
    read_hf_config(config, "bad/config.json", "x");
    FAIL() << "expected a UserError for " << key;
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad/config.json"), std::string::npos) << what;
    EXPECT_NE(what.find(text), std::string::npos) << what;
    EXPECT_EQ(e.field(), key) << what;
  }
}

const char* kDeepSeekBase = R"("model_type": "deepseek_v3", "hidden_size": 64,
  "intermediate_size": 96, "moe_intermediate_size": 16, "num_hidden_layers": 2,
  "num_attention_heads": 4, "vocab_size": 100, "n_routed_experts": 4,
  "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1)";

TEST(Architectures, MissingLatentAttentionKeysNameFileAndKey) {
  const std::string base = kDeepSeekBase;
  expect_error("{" + base + R"(, "q_lora_rank": 16, "qk_nope_head_dim": 8,
    "qk_rope_head_dim": 8, "v_head_dim": 8})",
               "kv_lora_rank", "'kv_lora_rank' is missing");
  expect_error("{" + base + R"(, "kv_lora_rank": 16, "qk_nope_head_dim": 8,
    "qk_rope_head_dim": 8, "v_head_dim": 8})",
               "q_lora_rank", "'q_lora_rank' is missing");
  expect_error("{" + base + R"(, "q_lora_rank": null, "kv_lora_rank": 16,
    "qk_nope_head_dim": 8, "qk_rope_head_dim": 8})",
               "v_head_dim", "'v_head_dim' is missing");
  expect_error("{" + base + R"(, "q_lora_rank": 0, "kv_lora_rank": 16, "qk_nope_head_dim": 8,
    "qk_rope_head_dim": 8, "v_head_dim": 8})",
               "q_lora_rank", "'q_lora_rank' must be a whole number");
}

TEST(Architectures, MissingExpertKeysNameFileAndKey) {
  expect_error(R"({"model_type": "granitemoe", "hidden_size": 64, "intermediate_size": 32,
    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
    "num_experts_per_tok": 2})",
               "num_local_experts", "'num_local_experts' is missing");
}

TEST(Architectures, Qwen2MoeNeedsTheSharedExpertWidth) {
  expect_error(R"({"model_type": "qwen2_moe", "hidden_size": 64, "intermediate_size": 32,
    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "num_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": 16})",
               "shared_expert_intermediate_size", "'shared_expert_intermediate_size' is missing");
}

TEST(Architectures, MultimodalConfigsNameTheMissingKey) {
  // No text_config, no vision_config where one is required, a missing expert key.
  expect_error(R"({"model_type": "llama4"})", "text_config", "needs a 'text_config' object");
  expect_error(R"({"model_type": "qwen3_vl", "text_config": {"hidden_size": 64,
    "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
    "vocab_size": 100}})",
               "vision_config", "needs a 'vision_config' object");
  const std::string text = R"("hidden_size": 64, "intermediate_size": 32,
    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100)";
  expect_error(
      R"({"model_type": "llama4", "text_config": {)" + text + R"(, "num_experts_per_tok": 1}})",
      "text_config.num_local_experts", "'text_config.num_local_experts' is missing");
  // A dense layer (interleave_moe_layer_step 2) needs the dense width.
  expect_error(R"({"model_type": "llama4", "text_config": {)" + text +
                   R"(, "num_local_experts": 4, "num_experts_per_tok": 1,
                   "interleave_moe_layer_step": 2}})",
               "text_config.intermediate_size_mlp",
               "'text_config.intermediate_size_mlp' is missing");
  expect_error(R"({"model_type": "llama4_text", )" + text +
                   R"(, "num_local_experts": 4, "num_experts_per_tok": 1,
                   "intermediate_size_mlp": 96, "moe_layers": [0, 2]})",
               "moe_layers", "names layer 2");
  expect_error(R"({"model_type": "qwen3_vl", "text_config": {)" + text +
                   R"(}, "vision_config": {"depth": 4, "deepstack_visual_indexes": [1, 4]}})",
               "vision_config.deepstack_visual_indexes", "names layer 4");
}

TEST(Architectures, UnknownModelTypeListsTheNewFamilies) {
  try {
    read_hf_config(R"({"model_type": "mamba"})", "m.json", "x");
    FAIL();
  } catch (const UserError& e) {
    const std::string what = e.what();
    for (const char* type :
         {"gemma2", "olmo2", "granitemoe", "glm4_moe", "phimoe", "deepseek_v3", "qwen2_5_vl",
          "qwen3_vl", "qwen3_vl_moe", "llama4", "qwen2_moe", ", gemma, "})
      EXPECT_NE(what.find(type), std::string::npos) << type;
  }
}

}  // namespace
}  // namespace ftplan
