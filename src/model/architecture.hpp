// A decoder-only transformer's architecture, normalised from a Hugging Face config.json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ftplan {

enum class MlpActivation { kSwiGLU, kGeGLU };  // both gated: gate, up and down projections
std::string_view mlp_activation_name(MlpActivation a);

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
  bool qkv_bias = false;  // Qwen2: biases on q, k, v
  bool o_bias = false;
  bool mlp_bias = false;
  bool qk_norm = false;          // Qwen3, Gemma 3: RMSNorm over head_dim on q and k
  int norms_per_layer = 2;       // Gemma 3: 4 (input, post-attn, pre-FFW, post-FFW)
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
  std::string expert_naming;  // "gate_proj" (Qwen), "w1" (Mixtral), "fused" (gpt-oss)

  // Attention span: layers with a sliding window attend to at most `sliding_window` tokens.
  std::int64_t sliding_window = 0;
  std::int64_t sliding_layers = 0;

  // Values that came from the model class's defaults because config.json omits the key.
  std::vector<std::string> defaults_applied;

  bool is_moe() const { return num_experts > 0; }
  std::int64_t q_dim() const { return heads * head_dim; }
  std::int64_t kv_dim() const { return kv_heads * head_dim; }
  std::int64_t dense_layers() const { return layers - moe_layers; }
};

}  // namespace ftplan
