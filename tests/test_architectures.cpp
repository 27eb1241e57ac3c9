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

TEST(Architectures, UnknownModelTypeListsTheNewFamilies) {
  try {
    read_hf_config(R"({"model_type": "mamba"})", "m.json", "x");
    FAIL();
  } catch (const UserError& e) {
    const std::string what = e.what();
    for (const char* type :
         {"gemma2", "olmo2", "granitemoe", "glm4_moe", "phimoe", "deepseek_v3", "qwen2_5_vl"})
      EXPECT_NE(what.find(type), std::string::npos) << type;
  }
}

}  // namespace
}  // namespace ftplan
