// Parameter inventories against shared/reference/models.md (its "computed" totals, each equal to
// keras-hub's published counts where those exist), to the last digit.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "memory/model_states.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

struct Expected {
  const char* id;
  ParamCount total;
  ParamCount lora_r16;  // r = 16 on q,k,v,o,gate,up,down; 0 where the reference gives none
};

// models.md §1–§8 (totals) and §10.4 (LoRA r16).
const Expected kReference[] = {
    {"llama-3.1-8b", 8'030'261'248, 41'943'040},
    {"llama-3.1-70b", 70'553'706'496, 207'093'760},
    {"llama-3.1-405b", 405'853'388'800, 623'443'968},
    {"llama-3.2-1b", 1'235'814'400, 11'272'192},
    {"llama-3.2-3b", 3'212'749'824, 24'313'856},
    {"llama-3.3-70b", 70'553'706'496, 207'093'760},
    {"qwen3-0.6b", 596'049'920, 10'092'544},
    {"qwen3-1.7b", 1'720'574'976, 17'432'576},
    {"qwen3-4b", 4'022'468'096, 33'030'144},
    {"qwen3-8b", 8'190'735'360, 43'646'976},
    {"qwen3-14b", 14'768'307'200, 64'225'280},
    {"qwen3-32b", 32'762'123'264, 134'217'728},
    {"qwen3-30b-a3b", 30'532'122'624, 0},
    {"qwen3-235b-a22b", 235'093'634'560, 0},
    {"qwen2.5-7b", 7'615'616'512, 40'370'176},
    {"qwen2.5-72b", 72'706'203'648, 210'534'400},
    {"mistral-7b-v0.3", 7'248'023'552, 41'943'040},
    {"mistral-small-24b", 23'572'403'200, 92'405'760},
    {"mixtral-8x7b", 46'702'792'704, 0},
    {"gemma-3-1b", 999'885'952, 13'045'760},
    // Gemma 3 4B/12B/27B with the SigLIP vision tower and projector: HF safetensors totals
    // (sources-models.yaml), each keras-hub's with-vision count plus 64·H for the vocabulary
    // (262208 against keras-hub's 262144, models.md §6). The text part is in
    // Gemma3TextPartMatchesTheReference.
    {"gemma-3-4b", 4'300'079'472, 29'802'496},
    {"gemma-3-12b", 12'187'325'040, 65'470'464},
    {"gemma-3-27b", 27'432'406'640, 113'516'544},
    {"phi-4", 14'659'507'200, 55'705'600},  // HF's fused qkv_proj and gate_up_proj
    {"gpt-oss-20b", 20'914'757'184, 0},
    {"gpt-oss-120b", 116'829'156'672, 0},
    // Exact published totals (data/sources-models.yaml): keras-hub gemma_presets.py and the HF
    // safetensors total for Gemma 2, HF safetensors totals for OLMo 2, Granite and
    // DeepSeek-V2-Lite; models.md §9 for DeepSeek-V3's main model (MTP module excluded).
    {"gemma-2-9b", 9'241'705'984, 0},
    {"gemma-2-27b", 27'227'128'320, 0},
    {"olmo-2-7b", 7'298'617'344, 0},
    {"granite-3.1-2b", 2'533'531'648, 0},
    {"granite-3.1-3b-a800m", 3'298'793'472, 0},
    {"deepseek-v2-lite", 15'706'484'224, 0},
    {"deepseek-v3", 671'026'419'200, 0},
    // HF parameter count of Qwen/Qwen2.5-VL-7B-Instruct, vision tower and merger included; LoRA
    // adapts the decoder only, Qwen2.5-7B's (models.md §10.4).
    {"qwen2.5-vl-7b", 8'292'166'656, 40'370'176},
    // HF safetensors totals (data/sources-models.yaml), vision parts included: Llama 4 Scout
    // (model-index-llama4-param-totals) and Qwen3-VL-8B-Instruct, whose decoder is Qwen3-8B's
    // and takes Qwen3-8B's adapters (models.md §10.4).
    {"llama-4-scout-17b-16e", 108'641'793'536, 0},
    {"qwen3-vl-8b", 8'767'123'696, 43'646'976},
    // Phi-3.5-MoE and Granite 3.1 8B: published totals; GLM-4-9B-0414: the count llama.cpp
    // reports for a glm4 decoder of the same shape (the publisher gives "9B").
    {"phi-3.5-moe", 41'873'153'344, 0},
    {"granite-3.1-8b", 8'170'848'256, 0},
    {"glm-4-9b-0414", 9'400'279'040, 0},
    // Published totals (data/sources-models.yaml): parameter tables for Llama 2, GGUF's
    // general.parameter_count for Mistral 7B v0.1, model indexes' total for Yi 34B, safetensors
    // totals for TinyLlama and Phi-3 Mini;
    // Llama 2 7B's LoRA r16 count is the one PEFT prints for it (q,k,v,o,gate,up,down).
    {"llama-2-7b", 6'738'415'616, 39'976'960},
    {"llama-2-13b", 13'015'864'320, 0},
    {"llama-2-70b", 68'976'648'192, 0},
    {"mistral-7b-v0.1", 7'241'732'096, 0},
    {"yi-34b", 34'388'917'248, 0},
    {"tinyllama-1.1b", 1'100'048'384, 0},
    {"phi-3-mini-4k", 3'821'079'552, 0},
    // Published totals (data/sources-models.yaml): keras-hub gemma_presets.py for Gemma 1 (tied
    // embeddings, head_dim 256) and qwen_moe_presets.py for Qwen1.5-MoE-A2.7B; the safetensors
    // metadata total for Qwen2-57B-A14B (the Qwen2 release table: 57.41B). Both Qwen2-MoE totals
    // include one shared_expert_gate [1, H] per MoE layer. Gemma 2B's LoRA r16 count is the one
    // PEFT prints for it (q,k,v,o,gate,up,down; all params 2,525,784,064).
    {"gemma-2b", 2'506'172'416, 19'611'648},
    {"gemma-7b", 8'537'680'896, 0},
    {"qwen1.5-moe-a2.7b", 14'315'784'192, 0},
    {"qwen2-57b-a14b", 57'408'658'944, 0},
    // Non-gated MLPs: Phi-2's HF safetensors total (model-index-phi-2-total); StarCoder2-3B's
    // count computed from its config (tied embeddings), which rounds to the published "3.03B"
    // (model-starcoder2-3b-size): no exact published figure was found.
    {"phi-2", 2'779'683'840, 0},
    {"phi-1.5", 1'418'270'720, 0},  // model-index-phi-1-5-total
    {"starcoder2-3b", 3'030'371'328, 0},
};

// Models whose publisher gives a rounded total only: the count must round to it.
struct Approximate {
  const char* id;
  double published;  // parameters
  double tolerance;  // relative
};
const Approximate kApproximate[] = {
    // "106 billion total parameters" (GLM-4.5 model card, transformers glm4_moe.md), a figure
    // given to three digits: within 1%.
    {"glm-4.5-air", 106e9, 0.01},
    // PowerLM-3b: "3.51B params" as Hugging Face sizes its GGUF conversion (model-powerlm-3b-size),
    // three digits: within 0.5 %; untied embeddings (3.62B) would miss it.
    {"powerlm-3b", 3.51e9, 0.005},
};

TEST(Params, EveryCatalogModelMatchesTheReferenceTotal) {
  for (const auto& e : kReference) {
    ModelPtr m = test::catalog().model(e.id);
    EXPECT_EQ(m->params.total, e.total) << e.id;
  }
  for (const auto& e : kApproximate) {
    ModelPtr m = test::catalog().model(e.id);
    EXPECT_NEAR(static_cast<double>(m->params.total), e.published, e.published * e.tolerance)
        << e.id;
  }
  EXPECT_EQ(test::catalog().models().size(), std::size(kReference) + std::size(kApproximate))
      << "a catalog model without a reference row";
}

TEST(Params, Gemma3TextPartMatchesTheReference) {
  // models.md §6 "computed, text only"; keras-hub's with-vision counts less its text-only
  // counts give the vision tower and projector: 419,816,304 (4B), 421,290,864 (12B),
  // 423,060,336 (27B) (SigLIP 416,866,032 + 1152·(H + 1)).
  const struct {
    const char* id;
    ParamCount text, vision_and_projector;
  } rows[] = {{"gemma-3-4b", 3'880'263'168, 419'816'304},
              {"gemma-3-12b", 11'766'034'176, 421'290'864},
              {"gemma-3-27b", 27'009'346'304, 423'060'336}};
  for (const auto& r : rows) {
    const ParamInventory& inv = test::catalog().model(r.id)->params;
    EXPECT_EQ(inv.text, r.text) << r.id;
    EXPECT_EQ(inv.vision + inv.projector, r.vision_and_projector) << r.id;
  }
  EXPECT_EQ(test::catalog().model("gemma-3-1b")->params.vision, 0);  // text-only checkpoint
}

TEST(Params, LoraRank16MatchesTheReference) {
  for (const auto& e : kReference) {
    if (e.lora_r16 == 0) continue;
    EXPECT_EQ(trainable_params(test::workload(e.id, Method::kLora)).count, e.lora_r16) << e.id;
  }
}

TEST(Params, Llama31_8B_Groups_ModelsMd_10_1) {
  const ParamInventory& inv = test::catalog().model("llama-3.1-8b")->params;
  EXPECT_EQ(inv.block_linear, 6'979'321'856);
  EXPECT_EQ(inv.embedding_and_output, 1'050'673'152);
  EXPECT_EQ(inv.norms, 266'240);
  EXPECT_EQ(inv.biases, 0);
}

TEST(Params, Qwen3_32B_Groups_ModelsMd_10_2) {
  const ParamInventory& inv = test::catalog().model("qwen3-32b")->params;
  EXPECT_EQ(inv.block_linear, 31'205'621'760);
  EXPECT_EQ(inv.embedding_and_output, 1'555'824'640);
  EXPECT_EQ(inv.norms, 676'864);  // includes q_norm and k_norm over head_dim
}

TEST(Params, Qwen2_5_HasQkvBiases) {
  EXPECT_EQ(test::catalog().model("qwen2.5-7b")->params.biases, 129'024);
  EXPECT_EQ(test::catalog().model("qwen2.5-72b")->params.biases, 819'200);
}

TEST(Params, TiedEmbeddingsCountOnce) {
  const auto& m = test::catalog().model("llama-3.2-1b");
  EXPECT_TRUE(m->arch.tied_embeddings);
  EXPECT_EQ(m->params.embedding_and_output, 262'668'288);  // V·H once
  for (const auto& t : m->params.tensors)
    EXPECT_NE(t.kind, TensorKind::kOutput) << t.name;
}

TEST(Params, MoeActiveParameters) {
  // gpt-oss README: 3.6B active (counting everything but the input-embedding lookup).
  EXPECT_EQ(test::catalog().model("gpt-oss-20b")->params.active_per_token, 3'608'307'264);
  EXPECT_EQ(test::catalog().model("gpt-oss-120b")->params.active_per_token, 5'132'849'472);
  // Qwen3-MoE and Mixtral cards count the input embedding too (models.md §3, §5).
  const auto& qwen = test::catalog().model("qwen3-30b-a3b");
  EXPECT_EQ(qwen->params.active_per_token + qwen->arch.vocab * qwen->arch.hidden, 3'353'032'704);
  const auto& mixtral = test::catalog().model("mixtral-8x7b");
  EXPECT_EQ(mixtral->params.active_per_token + mixtral->arch.vocab * mixtral->arch.hidden,
            12'879'925'248);
}

TEST(Params, Qwen2MoeActiveParametersCountTheSharedExpertAndItsGate) {
  // Per layer: attention 4·2048² + 3·2048 biases = 16,783,360; router 60·2048 = 122,880; four
  // experts 4·3·2048·1408 = 34,603,008; shared expert 3·2048·5632 = 34,603,008; its gate 2048;
  // norms 2·2048: 86,118,400. 24 layers, the lm_head 151936·2048 and the final norm:
  // 2,378,008,576; with the input embedding, 2,689,173,504 ("2.7B activated", model card).
  const auto& a27 = test::catalog().model("qwen1.5-moe-a2.7b");
  EXPECT_EQ(a27->params.active_per_token, 2'378'008'576);
  const double a27_card = static_cast<double>(a27->params.active_per_token) +
                          static_cast<double>(a27->arch.vocab * a27->arch.hidden);
  EXPECT_NEAR(a27_card, 2.7e9, 0.05e9);
  // Qwen2-57B-A14B per layer: attention 2·3584² + 2·3584·512 + 4608 biases = 29,364,736; router
  // 64·3584 = 229,376; eight experts 8·3·3584·2560 = 220,200,960; shared expert 3·3584·20480 =
  // 220,200,960; its gate 3584; norms 7168: 470,006,784. 28 layers, lm_head 151936·3584 and the
  // final norm: 13,704,732,160; with the input embedding 14,249,270,784 ("A14B").
  const auto& a14 = test::catalog().model("qwen2-57b-a14b");
  EXPECT_EQ(a14->params.active_per_token, 13'704'732'160);
  const double a14_name = static_cast<double>(a14->params.active_per_token) +
                          static_cast<double>(a14->arch.vocab * a14->arch.hidden);
  EXPECT_NEAR(a14_name, 14e9, 0.5e9);
}

TEST(Params, EveryTensorHasAKindAndShape) {
  for (const auto& m : test::catalog().models())
    for (const auto& t : m->params.tensors) {
      EXPECT_FALSE(t.shape.empty()) << m->arch.id << " " << t.name;
      EXPECT_GT(t.total(), 0) << m->arch.id << " " << t.name;
    }
}

TEST(Params, NonGatedMlpLoraAdaptsUpAndDownOnly) {
  // r = 16 on every target: `all` names gate, which a non-gated MLP lacks. By hand, per layer
  // r·(in + out) for each adapted module:
  // Phi-2 (H 2560, I 10240, 32 layers): q, k, v, dense 4·16·(2560 + 2560) = 327,680; fc1 and
  // fc2 2·16·(2560 + 10240) = 409,600; 737,280 × 32 = 23,592,960.
  EXPECT_EQ(trainable_params(test::workload("phi-2", Method::kLora)).count, 23'592'960);
  // Phi-1.5 with r = 8 on q and v: the "trainable parameters" LitGPT's resource tables print
  // (measured-litgpt-resource-tables), 24 layers x 2 x 8 x (2048 + 2048) = 1,572,864.
  Workload phi15 = test::workload("phi-1.5", Method::kLora);
  phi15.lora.rank = 8;
  phi15.lora.targets = kProjQ | kProjV;
  EXPECT_EQ(trainable_params(phi15).count, 1'572'864);
  // StarCoder2-3B (H 3072, kv 2·128 = 256, I 12288, 30 layers): q and o 2·16·(3072 + 3072) =
  // 196,608; k and v 2·16·(3072 + 256) = 106,496; c_fc and c_proj 2·16·(3072 + 12288) =
  // 491,520; 794,624 × 30 = 23,838,720.
  EXPECT_EQ(trainable_params(test::workload("starcoder2-3b", Method::kLora)).count, 23'838'720);
  // up,down: the two MLP projections alone; gate alone adapts nothing.
  Workload w = test::workload("phi-2", Method::kLora);
  w.lora.targets = kProjUp | kProjDown;
  EXPECT_EQ(trainable_params(w).count, 409'600 * 32);
  // gate alone matches no module: refused, as PEFT refuses a target list that matches nothing.
  w.lora.targets = kProjGate;
  try {
    trainable_params(w);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no gate projection"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fc1 counts as up"), std::string::npos) << e.what();
    EXPECT_EQ(e.field(), "targets");
  }
}

TEST(Params, Phi4PartialFusedTargetIsRefusedWithTheReason) {
  Workload w = test::workload("phi-4", Method::kLora);
  w.lora.targets = kProjQ | kProjV;
  try {
    trainable_params(w);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("qkv_proj"), std::string::npos) << e.what();
    EXPECT_EQ(e.field(), "targets");
  }
}

}  // namespace
}  // namespace ftplan
