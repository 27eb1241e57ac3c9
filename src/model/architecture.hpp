// A decoder-only transformer's architecture, normalised from a Hugging Face config.json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ftplan {

// kSwiGLU, kGeGLU: gated (gate, up and down projections, act(gate) * up); kGelu: not gated, two
// projections with a GELU between them (Phi: fc1 -> gelu_new -> fc2; StarCoder2: c_fc ->
// gelu_pytorch_tanh -> c_proj), fc1 counted as the up projection and fc2 as the down projection.
enum class MlpActivation { kSwiGLU, kGeGLU, kGelu };
std::string_view mlp_activation_name(MlpActivation a);

// A vision encoder beside the text decoder (a multimodal checkpoint). Its weights are a part of
// their own in the inventory; training keeps them frozen.
struct VisionTower {
  // "siglip" (Gemma 3: SiglipVisionModel), "qwen2_5_vl" (Qwen2_5_VisionTransformer), "llama4"
  // (Llama4VisionModel), "qwen3_vl" (Qwen3VLVisionModel); empty: no vision tower
  std::string kind;
  std::int64_t hidden = 0;
  std::int64_t layers = 0;
  std::int64_t heads = 0;
  std::int64_t intermediate = 0;
  std::int64_t image_size = 0;
  std::int64_t patch_size = 0;
  std::int64_t channels = 3;
  std::int64_t temporal_patch_size = 1;  // Qwen2.5-VL: frames per patch (a 3-D convolution)
  std::int64_t spatial_merge_size = 1;   // Qwen2.5-VL: patches merged per side by the merger
  // The projector into the text decoder's width: "gemma3" (mm_input_projection_weight
  // [vision hidden, text hidden] and mm_soft_emb_norm over the vision width), "qwen2_5_vl" (the
  // patch merger: ln_q and a two-layer MLP to out_hidden_size).
  std::string projector;
  std::int64_t out_hidden = 0;  // the projector's output width (the text hidden size)
  // Llama 4: the pixel-shuffle adapter's widths (projector_input_dim, projector_output_dim) and
  // the vision output width the projector reads (vision_output_dim).
  std::int64_t adapter_input = 0;
  std::int64_t adapter_output = 0;
  std::int64_t output_dim = 0;
  // Qwen3-VL: learned position embeddings (num_position_embeddings) and the deepstack mergers,
  // one per entry of deepstack_visual_indexes.
  std::int64_t position_embeddings = 0;
  std::int64_t deepstack_mergers = 0;
};

struct ModelArch {
  std::string id;          // catalog id, or the config file's path
  std::string name;        // display name
  std::string model_type;  // config.json model_type (text part)
  std::string source_file;

  std::int64_t hidden = 0;        // H
  std::int64_t layers = 0;        // L
  std::int64_t intermediate = 0;  // I (dense MLP)
  std::int64_t heads = 0;         // n_h
  std::int64_t kv_heads = 0;      // n_kv
  std::int64_t head_dim = 0;      // d
  std::int64_t vocab = 0;         // V
  std::int64_t max_position = 0;
  bool tied_embeddings = false;
  // A sequence-classification head with one output in place of the language-model head (a reward
  // model: AutoModelForSequenceClassification, num_labels 1): `score.weight` [1 × H], never tied.
  bool score_head = false;
  // What the output layer computes per token: the vocabulary's logits, or one score.
  std::int64_t output_width() const { return score_head ? 1 : vocab; }
  // The output layer multiplies by the embedding matrix (tied, and a language-model head).
  bool output_tied() const { return tied_embeddings && !score_head; }
  bool qkv_bias = false;  // Qwen2: biases on q, k, v
  bool o_bias = false;
  bool mlp_bias = false;
  bool qk_norm = false;             // Qwen3, Gemma 3: RMSNorm over head_dim on q and k
  bool qk_norm_full_width = false;  // OLMo 2: q_norm over n_h·d and k_norm over n_kv·d
  int norms_per_layer = 2;          // Gemma 2/3: 4 (input, post-attn, pre-FFW, post-FFW)
  // Module names of the per-layer norms where they differ from input_layernorm,
  // post_attention_layernorm(, pre_feedforward_layernorm, post_feedforward_layernorm).
  std::vector<std::string> norm_names;
  bool norm_bias = false;     // LayerNorm with a bias (Phi-3.5-MoE, Phi, StarCoder2)
  bool lm_head_bias = false;  // Phi-3.5-MoE, Phi
  // Phi (modeling_phi.py PhiDecoderLayer): attention and MLP read the output of one
  // input_layernorm and their outputs are added to the residual together.
  bool parallel_block = false;
  // Module names where they differ from Llama's: the attention output projection (Phi:
  // "dense"), the non-gated MLP's two projections (Phi: "fc1", "fc2"; StarCoder2: "c_fc",
  // "c_proj") and the final norm (Phi: "final_layernorm").
  std::string o_proj_name = "o_proj";
  std::string mlp_in_name = "fc1";
  std::string mlp_out_name = "fc2";
  std::string final_norm_name = "norm";
  // Dropout probabilities > 0 in config.json act in training: on the attention probabilities,
  // on each sublayer's output before the residual add, and on the embedding output.
  bool attention_dropout = false;
  bool residual_dropout = false;
  bool embedding_dropout = false;
  bool gated_mlp() const { return activation != MlpActivation::kGelu; }
  bool fused_qkv = false;        // Phi-3: one qkv_proj
  bool fused_gate_up = false;    // Phi-3, gpt-oss experts: one gate_up_proj
  bool attention_sinks = false;  // gpt-oss: a learned sink per head
  MlpActivation activation = MlpActivation::kSwiGLU;

  // Mixture of experts (num_experts == 0: dense).
  std::int64_t num_experts = 0;
  std::int64_t experts_per_token = 0;
  std::int64_t moe_intermediate = 0;  // per expert
  std::int64_t moe_layers = 0;        // layers whose MLP is a mixture of experts
  bool router_bias = false;
  bool expert_bias = false;
  // "gate_proj" (Qwen3-MoE, DeepSeek, GLM-4.5), "qwen2_moe" (gate_proj experts and a gated
  // mlp.shared_expert), "w1" (Mixtral, Phi-3.5-MoE), "fused" (gpt-oss,
  // Qwen3-VL-MoE: gate_up_proj [E, H, 2I] and down_proj [E, I, H], biases with expert_bias),
  // "granite" (Granite-MoE: input_linear [E, 2I, H] and output_linear [E, H, I]), "llama4"
  // (Llama 4: feed_forward.router, fused experts and one shared_expert)
  std::string expert_naming;
  std::int64_t shared_expert_intermediate = 0;  // width of the shared-expert MLP (0: none)
  // Qwen2-MoE: one shared expert (mlp.shared_expert) whose output is scaled by
  // sigmoid(mlp.shared_expert_gate(x)), a [1 x H] linear, in every MoE layer.
  bool shared_expert_gate = false;
  bool router_score_bias = false;  // DeepSeek-V3, GLM-4.5: gate.e_score_correction_bias [E]
  // Multi-token-prediction layers in the checkpoint: transformers does not load them, so they
  // are not in the inventory (DeepSeek-V3, GLM-4.5: num_nextn_predict_layers).
  std::int64_t mtp_layers = 0;
  // The module holding a layer's MLP: "mlp", or "feed_forward" (Llama 4).
  std::string mlp_module = "mlp";

  // Multi-head latent attention (DeepSeek-V2/V3). With `mla`, head_dim is the query/key head
  // width (qk_nope_head_dim + qk_rope_head_dim), kv_heads equals heads, and values are
  // v_head_dim wide; keys and values are projected up from a kv_lora_rank latent.
  bool mla = false;
  std::int64_t q_lora_rank = 0;  // 0: a plain q_proj
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;

  // Attention span: layers with a sliding window attend to at most `sliding_window` tokens.
  std::int64_t sliding_window = 0;
  std::int64_t sliding_layers = 0;
  // Chunked local attention (Llama 4): layers that attend only within their chunk of
  // `attention_chunk` tokens (the RoPE layers; the NoPE layers attend to the whole context).
  std::int64_t attention_chunk = 0;
  std::int64_t chunked_layers = 0;

  VisionTower vision;

  // Values that came from the model class's defaults because config.json omits the key.
  std::vector<std::string> defaults_applied;

  bool is_moe() const { return num_experts > 0; }
  bool has_vision() const { return !vision.kind.empty(); }
  std::int64_t q_dim() const { return heads * head_dim; }
  std::int64_t kv_dim() const { return kv_heads * head_dim; }  // K (MLA: per-head q/k width)
  std::int64_t v_dim() const { return mla ? heads * v_head_dim : kv_dim(); }  // V
  std::int64_t attention_out_dim() const { return mla ? heads * v_head_dim : q_dim(); }
  std::int64_t dense_layers() const { return layers - moe_layers; }
};

}  // namespace ftplan
