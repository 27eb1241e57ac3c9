#include "model/params.hpp"

#include <fmt/format.h>

namespace ftplan {

std::string_view tensor_kind_name(TensorKind k) {
  switch (k) {
    case TensorKind::kLinear:
      return "linear";
    case TensorKind::kEmbedding:
      return "embedding";
    case TensorKind::kOutput:
      return "output";
    case TensorKind::kNorm:
      return "norm";
    case TensorKind::kBias:
      return "bias";
    case TensorKind::kRouter:
      return "router";
    case TensorKind::kExpert:
      return "expert";
    case TensorKind::kOther:
      return "other";
  }
  return "other";
}

std::string_view model_part_name(ModelPart p) {
  switch (p) {
    case ModelPart::kText:
      return "text";
    case ModelPart::kVision:
      return "vision";
    case ModelPart::kProjector:
      return "projector";
  }
  return "text";
}

std::string projection_set_name(ProjectionSet s) {
  static constexpr const char* names[] = {"q", "k", "v", "o", "gate", "up", "down"};
  std::string out;
  for (int i = 0; i < 7; ++i)
    if (s & (1 << i)) out += (out.empty() ? "" : ",") + std::string(names[i]);
  return out;
}

std::int64_t TensorSpec::numel() const {
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  return n;
}

ParamCount TensorSpec::total() const {
  return numel() * copies();
}

namespace {

// Collects tensors in Hugging Face order with their counts.
class InventoryBuilder {
 public:
  void linear(std::string name, std::int64_t in, std::int64_t out, ProjectionSet proj,
              std::int64_t layers, TensorKind kind = TensorKind::kLinear,
              std::int64_t experts = 1) {
    TensorSpec t;
    t.name = std::move(name);
    t.shape = {out, in};  // nn.Linear weight: [out_features, in_features]
    t.kind = kind;
    t.projections = proj;
    t.in_features = in;
    t.out_features = out;
    t.layers = layers;
    t.experts = experts;
    t.in_blocks = true;
    add(std::move(t));
  }

  void vector(std::string name, std::int64_t size, TensorKind kind, std::int64_t layers,
              bool in_blocks, std::int64_t experts = 1) {
    TensorSpec t;
    t.name = std::move(name);
    t.shape = {size};
    t.kind = kind;
    t.layers = layers;
    t.experts = experts;
    t.in_blocks = in_blocks;
    add(std::move(t));
  }

  void add(TensorSpec t) {
    t.part = part_;
    inv_.tensors.push_back(std::move(t));
  }
  ParamInventory& inventory() { return inv_; }
  // Tensors added from now on belong to `p`.
  void set_part(ModelPart p) { part_ = p; }

 private:
  ParamInventory inv_;
  ModelPart part_ = ModelPart::kText;
};

// Multi-head latent attention (DeepSeek-V2 §2.1; modeling_deepseek_v3.py DeepseekV3Attention):
// queries through a q_lora_rank latent (or a plain q_proj), keys and values through one shared
// kv_lora_rank latent that kv_b_proj expands per head; the rotary part of the key
// (qk_rope_head_dim) comes straight from kv_a_proj_with_mqa and is shared by all heads.
void add_latent_attention(InventoryBuilder& b, const ModelArch& a) {
  const std::int64_t H = a.hidden, L = a.layers, n = a.heads;
  const std::int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  const std::string p = "model.layers.{L}.self_attn.";
  if (a.q_lora_rank == 0) {
    b.linear(p + "q_proj.weight", H, n * qk, kProjQ, L);  // [n_h·(nope+rope), H]
  } else {
    b.linear(p + "q_a_proj.weight", H, a.q_lora_rank, kProjQ, L);  // [q_lora, H]
    b.vector(p + "q_a_layernorm.weight", a.q_lora_rank, TensorKind::kNorm, L, true);
    b.linear(p + "q_b_proj.weight", a.q_lora_rank, n * qk, kProjQ, L);  // [n_h·qk, q_lora]
  }
  // [kv_lora + rope, H]: the latent and the shared rotary key.
  b.linear(p + "kv_a_proj_with_mqa.weight", H, a.kv_lora_rank + a.qk_rope_head_dim, kProjK | kProjV,
           L);
  b.vector(p + "kv_a_layernorm.weight", a.kv_lora_rank, TensorKind::kNorm, L, true);
  // [n_h·(nope + v), kv_lora]: per head the key's non-rotary part and the value.
  b.linear(p + "kv_b_proj.weight", a.kv_lora_rank, n * (a.qk_nope_head_dim + a.v_head_dim),
           kProjK | kProjV, L);
  b.linear(p + "o_proj.weight", n * a.v_head_dim, H, kProjO, L);  // [H, n_h·v]
}

void add_attention(InventoryBuilder& b, const ModelArch& a) {
  if (a.mla) {
    add_latent_attention(b, a);
    return;
  }
  const std::int64_t H = a.hidden, L = a.layers, q = a.q_dim(), kv = a.kv_dim();
  const std::string p = "model.layers.{L}.self_attn.";
  // Shapes (modeling_llama.py and relatives): q [n_h·d, H], k and v [n_kv·d, H], o [H, n_h·d].
  if (a.fused_qkv) {
    b.linear(p + "qkv_proj.weight", H, q + 2 * kv, kProjQ | kProjK | kProjV, L);
  } else {
    b.linear(p + "q_proj.weight", H, q, kProjQ, L);
    b.linear(p + "k_proj.weight", H, kv, kProjK, L);
    b.linear(p + "v_proj.weight", H, kv, kProjV, L);
  }
  if (a.qkv_bias) {
    b.vector(p + "q_proj.bias", q, TensorKind::kBias, L, true);
    b.vector(p + "k_proj.bias", kv, TensorKind::kBias, L, true);
    b.vector(p + "v_proj.bias", kv, TensorKind::kBias, L, true);
  }
  // The output projection: o_proj, or Phi's `dense` (modeling_phi.py PhiAttention).
  b.linear(p + a.o_proj_name + ".weight", q, H, kProjO, L);
  if (a.o_bias) b.vector(p + a.o_proj_name + ".bias", H, TensorKind::kBias, L, true);
  if (a.qk_norm) {
    // Qwen3 / Gemma 3: RMSNorm weights over head_dim, shared by all heads; OLMo 2: over the
    // whole q and k projections (modeling_olmo2.py: q_norm(n_h·d), k_norm(n_kv·d)).
    b.vector(p + "q_norm.weight", a.qk_norm_full_width ? q : a.head_dim, TensorKind::kNorm, L,
             true);
    b.vector(p + "k_norm.weight", a.qk_norm_full_width ? kv : a.head_dim, TensorKind::kNorm, L,
             true);
  }
  if (a.attention_sinks) b.vector(p + "sinks", a.heads, TensorKind::kOther, L, true);
}

// A gated MLP under `p` (gate, up [I, H], down [H, I]), or Phi-3's fused gate_up_proj [2I, H].
void add_gated_mlp(InventoryBuilder& b, const ModelArch& a, const std::string& p, std::int64_t I,
                   std::int64_t layers) {
  const std::int64_t H = a.hidden;
  if (a.fused_gate_up) {
    b.linear(p + "gate_up_proj.weight", H, 2 * I, kProjGate | kProjUp, layers);
  } else {
    b.linear(p + "gate_proj.weight", H, I, kProjGate, layers);
    b.linear(p + "up_proj.weight", H, I, kProjUp, layers);
  }
  b.linear(p + "down_proj.weight", I, H, kProjDown, layers);
  if (a.mlp_bias) {
    b.vector(p + "gate_proj.bias", I, TensorKind::kBias, layers, true);
    b.vector(p + "up_proj.bias", I, TensorKind::kBias, layers, true);
    b.vector(p + "down_proj.bias", H, TensorKind::kBias, layers, true);
  }
}

// A non-gated MLP (Phi's PhiMLP: fc1, fc2; StarCoder2's Starcoder2MLP: c_fc, c_proj): the first
// projection [I, H] counts as the up projection, the second [H, I] as the down projection.
void add_plain_mlp(InventoryBuilder& b, const ModelArch& a, std::int64_t layers) {
  const std::int64_t H = a.hidden, I = a.intermediate;
  const std::string p = "model.layers.{L}." + a.mlp_module + ".";
  b.linear(p + a.mlp_in_name + ".weight", H, I, kProjUp, layers);
  if (a.mlp_bias) b.vector(p + a.mlp_in_name + ".bias", I, TensorKind::kBias, layers, true);
  b.linear(p + a.mlp_out_name + ".weight", I, H, kProjDown, layers);
  if (a.mlp_bias) b.vector(p + a.mlp_out_name + ".bias", H, TensorKind::kBias, layers, true);
}

void add_dense_mlp(InventoryBuilder& b, const ModelArch& a, std::int64_t layers) {
  if (layers == 0) return;
  if (!a.gated_mlp()) {
    add_plain_mlp(b, a, layers);
    return;
  }
  add_gated_mlp(b, a, "model.layers.{L}." + a.mlp_module + ".", a.intermediate, layers);
}

// One tensor holding every expert of a layer (gpt-oss, Granite-MoE): `shape` includes E.
TensorSpec stacked_experts(std::string name, std::vector<std::int64_t> shape, std::int64_t in,
                           std::int64_t out, ProjectionSet proj, const ModelArch& a) {
  TensorSpec t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.kind = TensorKind::kExpert;
  t.projections = proj;
  t.in_features = in;
  t.out_features = out;
  t.layers = a.moe_layers;
  t.experts = a.num_experts;
  t.shape_has_experts = true;
  t.in_blocks = true;
  return t;
}

// Every expert of a layer in two 3-D tensors: gate_up_proj [E, H, 2I] and down_proj [E, I, H]
// (gpt-oss with a bias on each, Qwen3-VL-MoE and Llama 4 without), behind a router [E, H].
void add_fused_experts(InventoryBuilder& b, const ModelArch& a, const std::string& p,
                       const std::string& router) {
  const std::int64_t H = a.hidden, I = a.moe_intermediate, E = a.num_experts, L = a.moe_layers;
  b.linear(p + router + ".weight", H, E, 0, L, TensorKind::kRouter);
  if (a.router_bias) b.vector(p + router + ".bias", E, TensorKind::kBias, L, true);
  TensorSpec gate_up;
  gate_up.name = p + "experts.gate_up_proj";
  gate_up.shape = {E, H, 2 * I};
  gate_up.kind = TensorKind::kExpert;
  gate_up.projections = kProjGate | kProjUp;
  gate_up.in_features = H;
  gate_up.out_features = 2 * I;
  gate_up.layers = L;
  gate_up.experts = E;
  gate_up.shape_has_experts = true;
  gate_up.in_blocks = true;
  b.add(gate_up);
  if (a.expert_bias) {
    TensorSpec gate_up_bias = gate_up;
    gate_up_bias.name = p + "experts.gate_up_proj_bias";
    gate_up_bias.shape = {E, 2 * I};
    gate_up_bias.kind = TensorKind::kBias;
    gate_up_bias.projections = 0;
    b.add(gate_up_bias);
  }
  TensorSpec down = gate_up;
  down.name = p + "experts.down_proj";
  down.shape = {E, I, H};
  down.projections = kProjDown;
  down.in_features = I;
  down.out_features = H;
  b.add(down);
  if (a.expert_bias) {
    TensorSpec down_bias = down;
    down_bias.name = p + "experts.down_proj_bias";
    down_bias.shape = {E, H};
    down_bias.kind = TensorKind::kBias;
    down_bias.projections = 0;
    b.add(down_bias);
  }
}

void add_moe_mlp(InventoryBuilder& b, const ModelArch& a) {
  const std::int64_t H = a.hidden, I = a.moe_intermediate, E = a.num_experts, L = a.moe_layers;
  if (L == 0) return;
  if (a.expert_naming == "w1") {
    // Mixtral: block_sparse_moe.gate [E, H]; experts.{E}.w1 (gate), w3 (up) [I, H], w2 (down) [H,
    // I].
    const std::string p = "model.layers.{L}.block_sparse_moe.";
    b.linear(p + "gate.weight", H, E, 0, L, TensorKind::kRouter);
    b.linear(p + "experts.{E}.w1.weight", H, I, kProjGate, L, TensorKind::kExpert, E);
    b.linear(p + "experts.{E}.w2.weight", I, H, kProjDown, L, TensorKind::kExpert, E);
    b.linear(p + "experts.{E}.w3.weight", H, I, kProjUp, L, TensorKind::kExpert, E);
  } else if (a.expert_naming == "granite") {
    // Granite-MoE (modeling_granitemoe.py): router.layer [E, H]; GraniteMoeParallelExperts
    // input_linear [E, 2I, H] (gate and up) and output_linear [E, H, I], without biases.
    const std::string p = "model.layers.{L}.block_sparse_moe.";
    b.linear(p + "router.layer.weight", H, E, 0, L, TensorKind::kRouter);
    b.add(stacked_experts(p + "input_linear.weight", {E, 2 * I, H}, H, 2 * I, kProjGate | kProjUp,
                          a));
    b.add(stacked_experts(p + "output_linear.weight", {E, H, I}, I, H, kProjDown, a));
    if (a.shared_expert_intermediate > 0) {
      // GraniteMoeShared: shared_mlp.input_linear [2·I_s, H], output_linear [H, I_s].
      const std::int64_t S = a.shared_expert_intermediate;
      b.linear("model.layers.{L}.shared_mlp.input_linear.weight", H, 2 * S, kProjGate | kProjUp, L);
      b.linear("model.layers.{L}.shared_mlp.output_linear.weight", S, H, kProjDown, L);
    }
  } else if (a.expert_naming == "fused") {
    // gpt-oss: router with bias, experts with biases (modeling_gpt_oss.py GptOssExperts);
    // Qwen3-VL-MoE: mlp.gate, experts without biases (modeling_qwen3_vl_moe.py).
    const std::string p = "model.layers.{L}.mlp.";
    add_fused_experts(b, a, p, a.router_bias ? "router" : "gate");
  } else if (a.expert_naming == "llama4") {
    // Llama4TextMoe (modeling_llama4.py): feed_forward.router [E, H], Llama4TextExperts
    // gate_up_proj [E, H, 2I] and down_proj [E, I, H], and one shared_expert, a gated MLP of
    // the expert width that every token passes.
    const std::string p = "model.layers.{L}.feed_forward.";
    add_fused_experts(b, a, p, "router");
    if (a.shared_expert_intermediate > 0)
      add_gated_mlp(b, a, p + "shared_expert.", a.shared_expert_intermediate, L);
  } else {
    // Qwen2-MoE, Qwen3-MoE, DeepSeek, GLM-4.5: mlp.gate [E, H]; experts.{E}.gate_proj / up_proj
    // [I, H], down_proj [H, I]. DeepSeek-V3 and GLM-4.5 route with a learned per-expert score
    // bias (gate.e_score_correction_bias [E]) and add shared experts that every token passes
    // through (mlp.shared_experts: a gated MLP n_shared_experts·I wide). Qwen2-MoE
    // (modeling_qwen2_moe.py Qwen2MoeSparseMoeBlock) has one mlp.shared_expert, a gated MLP
    // shared_expert_intermediate_size wide, and mlp.shared_expert_gate [1, H], a linear without a
    // bias whose sigmoid scales the shared expert's output per token.
    const std::string p = "model.layers.{L}.mlp.";
    b.linear(p + "gate.weight", H, E, 0, L, TensorKind::kRouter);
    if (a.router_score_bias)
      b.vector(p + "gate.e_score_correction_bias", E, TensorKind::kBias, L, true);
    b.linear(p + "experts.{E}.gate_proj.weight", H, I, kProjGate, L, TensorKind::kExpert, E);
    b.linear(p + "experts.{E}.up_proj.weight", H, I, kProjUp, L, TensorKind::kExpert, E);
    b.linear(p + "experts.{E}.down_proj.weight", I, H, kProjDown, L, TensorKind::kExpert, E);
    if (a.shared_expert_intermediate > 0)
      add_gated_mlp(b, a,
                    p + (a.expert_naming == "qwen2_moe" ? "shared_expert." : "shared_experts."),
                    a.shared_expert_intermediate, L);
    if (a.shared_expert_gate) b.linear(p + "shared_expert_gate.weight", H, 1, 0, L);
  }
}

// A weight and its bias outside the decoder blocks (a vision layer's linear or LayerNorm).
void weight_and_bias(InventoryBuilder& b, const std::string& name, std::vector<std::int64_t> shape,
                     TensorKind kind, std::int64_t layers) {
  TensorSpec w;
  w.name = name + ".weight";
  w.shape = std::move(shape);
  w.kind = kind;
  w.layers = layers;
  if (kind == TensorKind::kLinear) {
    w.out_features = w.shape[0];
    w.in_features = w.shape[1];
  }
  const std::int64_t out = w.shape[0];
  b.add(std::move(w));
  b.vector(name + ".bias", out, TensorKind::kBias, layers, false);
}

// SigLIP's vision transformer (transformers modeling_siglip.py SiglipVisionTransformer, as
// Gemma 3 loads it with vision_use_head false): a patch-embedding convolution, one learned
// position embedding per patch, pre-LayerNorm encoder layers with biased q, k, v, out_proj and a
// GELU MLP (fc1, fc2), and a final LayerNorm.
void add_siglip_vision(InventoryBuilder& b, const VisionTower& v) {
  const std::int64_t C = v.hidden, N = v.layers, I = v.intermediate;
  const std::int64_t patches = (v.image_size / v.patch_size) * (v.image_size / v.patch_size);
  const std::string p = "vision_tower.vision_model.";
  // Conv2d weight [C, channels, patch, patch] with a bias.
  weight_and_bias(b, p + "embeddings.patch_embedding", {C, v.channels, v.patch_size, v.patch_size},
                  TensorKind::kOther, 1);
  TensorSpec pos;
  pos.name = p + "embeddings.position_embedding.weight";
  pos.shape = {patches, C};  // (image_size / patch_size)² positions
  pos.kind = TensorKind::kOther;
  b.add(pos);
  const std::string l = p + "encoder.layers.{L}.";
  for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"})
    weight_and_bias(b, l + "self_attn." + proj, {C, C}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "layer_norm1", {C}, TensorKind::kNorm, N);
  weight_and_bias(b, l + "mlp.fc1", {I, C}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "mlp.fc2", {C, I}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "layer_norm2", {C}, TensorKind::kNorm, N);
  weight_and_bias(b, p + "post_layernorm", {C}, TensorKind::kNorm, 1);
}

// Gemma3MultiModalProjector: RMSNorm over the vision width, then a [vision, text] matrix (stored
// as a bare parameter, input dimension first).
void add_gemma3_projector(InventoryBuilder& b, const ModelArch& a) {
  TensorSpec proj;
  proj.name = "multi_modal_projector.mm_input_projection_weight";
  proj.shape = {a.vision.hidden, a.hidden};
  proj.kind = TensorKind::kLinear;
  proj.in_features = a.vision.hidden;
  proj.out_features = a.hidden;
  b.add(proj);
  b.vector("multi_modal_projector.mm_soft_emb_norm.weight", a.vision.hidden, TensorKind::kNorm, 1,
           false);
}

// Qwen2.5-VL's vision transformer (modeling_qwen2_5_vl.py
// Qwen2_5_VisionTransformerPretrainedModel): a bias-free 3-D patch convolution [C, channels,
// temporal, patch, patch], blocks of RMSNorm, a fused biased qkv [3C, C] and proj, a biased SwiGLU
// MLP; no position embedding (2-D RoPE).
void add_qwen2_5_vision(InventoryBuilder& b, const VisionTower& v) {
  const std::int64_t C = v.hidden, N = v.layers, I = v.intermediate;
  TensorSpec patch;
  patch.name = "visual.patch_embed.proj.weight";
  patch.shape = {C, v.channels, v.temporal_patch_size, v.patch_size, v.patch_size};
  patch.kind = TensorKind::kOther;
  b.add(patch);
  const std::string l = "visual.blocks.{L}.";
  b.vector(l + "norm1.weight", C, TensorKind::kNorm, N, false);
  b.vector(l + "norm2.weight", C, TensorKind::kNorm, N, false);
  weight_and_bias(b, l + "attn.qkv", {3 * C, C}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "attn.proj", {C, C}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "mlp.gate_proj", {I, C}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "mlp.up_proj", {I, C}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "mlp.down_proj", {C, I}, TensorKind::kLinear, N);
}

// Qwen2_5_VLPatchMerger: RMSNorm over C, then spatial_merge_size² neighbouring patches
// concatenated (C·m² wide) through Linear(C·m², C·m²), GELU, Linear(C·m², out_hidden).
void add_qwen2_5_merger(InventoryBuilder& b, const VisionTower& v) {
  const std::int64_t merged = v.hidden * v.spatial_merge_size * v.spatial_merge_size;
  b.vector("visual.merger.ln_q.weight", v.hidden, TensorKind::kNorm, 1, false);
  weight_and_bias(b, "visual.merger.mlp.0", {merged, merged}, TensorKind::kLinear, 1);
  weight_and_bias(b, "visual.merger.mlp.2", {v.out_hidden, merged}, TensorKind::kLinear, 1);
}

// Llama4VisionModel (modeling_llama4.py): the patch embedding as a bias-free linear over
// unfolded patches (Llama4UnfoldConvolution) [C, channels·patch²], a class embedding [C], one
// learned position per patch plus the class token, LayerNorms before and after the encoder,
// encoder layers with biased q, k, v, o and a GELU MLP (fc1, fc2) behind LayerNorms, and the
// pixel-shuffle adapter (Llama4VisionPixelShuffleMLP: fc1 [projector_input_dim,
// intermediate_size] and fc2 [projector_output_dim, projector_output_dim], no biases).
void add_llama4_vision(InventoryBuilder& b, const VisionTower& v) {
  const std::int64_t C = v.hidden, N = v.layers, I = v.intermediate;
  const std::int64_t side = v.image_size / v.patch_size;
  const std::string p = "vision_model.";
  TensorSpec patch;
  patch.name = p + "patch_embedding.linear.weight";
  patch.shape = {C, v.channels * v.patch_size * v.patch_size};
  patch.kind = TensorKind::kOther;
  b.add(patch);
  b.vector(p + "class_embedding", C, TensorKind::kOther, 1, false);
  TensorSpec pos;
  pos.name = p + "positional_embedding_vlm";
  pos.shape = {side * side + 1, C};
  pos.kind = TensorKind::kOther;
  b.add(pos);
  weight_and_bias(b, p + "layernorm_pre", {C}, TensorKind::kNorm, 1);
  weight_and_bias(b, p + "layernorm_post", {C}, TensorKind::kNorm, 1);
  const std::string l = p + "model.layers.{L}.";
  for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"})
    weight_and_bias(b, l + "self_attn." + proj, {C, C}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "mlp.fc1", {I, C}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "mlp.fc2", {C, I}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "input_layernorm", {C}, TensorKind::kNorm, N);
  weight_and_bias(b, l + "post_attention_layernorm", {C}, TensorKind::kNorm, N);
  auto linear = [&](const std::string& name, std::int64_t in, std::int64_t out) {
    TensorSpec t;
    t.name = name;
    t.shape = {out, in};
    t.kind = TensorKind::kLinear;
    t.in_features = in;
    t.out_features = out;
    b.add(std::move(t));
  };
  linear(p + "vision_adapter.mlp.fc1.weight", I, v.adapter_input);
  linear(p + "vision_adapter.mlp.fc2.weight", v.adapter_output, v.adapter_output);
}

// Llama4MultiModalProjector: linear_1 [text hidden, vision_output_dim], without a bias.
void add_llama4_projector(InventoryBuilder& b, const ModelArch& a) {
  TensorSpec t;
  t.name = "multi_modal_projector.linear_1.weight";
  t.shape = {a.hidden, a.vision.output_dim};
  t.kind = TensorKind::kLinear;
  t.in_features = a.vision.output_dim;
  t.out_features = a.hidden;
  b.add(std::move(t));
}

// Qwen3VLVisionModel (modeling_qwen3_vl.py): a biased 3-D patch convolution, learned position
// embeddings (num_position_embeddings, interpolated to the image), blocks of LayerNorm, a fused
// biased qkv [3C, C] and proj, a biased GELU MLP (linear_fc1, linear_fc2).
void add_qwen3_vl_vision(InventoryBuilder& b, const VisionTower& v) {
  const std::int64_t C = v.hidden, N = v.layers, I = v.intermediate;
  weight_and_bias(b, "visual.patch_embed.proj",
                  {C, v.channels, v.temporal_patch_size, v.patch_size, v.patch_size},
                  TensorKind::kOther, 1);
  TensorSpec pos;
  pos.name = "visual.pos_embed.weight";
  pos.shape = {v.position_embeddings, C};
  pos.kind = TensorKind::kOther;
  b.add(pos);
  const std::string l = "visual.blocks.{L}.";
  weight_and_bias(b, l + "norm1", {C}, TensorKind::kNorm, N);
  weight_and_bias(b, l + "norm2", {C}, TensorKind::kNorm, N);
  weight_and_bias(b, l + "attn.qkv", {3 * C, C}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "attn.proj", {C, C}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "mlp.linear_fc1", {I, C}, TensorKind::kLinear, N);
  weight_and_bias(b, l + "mlp.linear_fc2", {C, I}, TensorKind::kLinear, N);
}

// Qwen3VLVisionPatchMerger: a LayerNorm, then spatial_merge_size² patches concatenated (C·m²)
// through Linear(C·m², C·m²), GELU, Linear(C·m², out_hidden), all biased. The main merger
// normalises each patch (C) before the concatenation; each deepstack merger (one per
// deepstack_visual_indexes entry, feeding an early decoder layer) normalises after it (C·m²).
void add_qwen3_vl_mergers(InventoryBuilder& b, const VisionTower& v) {
  const std::int64_t merged = v.hidden * v.spatial_merge_size * v.spatial_merge_size;
  auto merger = [&](const std::string& p, std::int64_t norm, std::int64_t copies) {
    weight_and_bias(b, p + "norm", {norm}, TensorKind::kNorm, copies);
    weight_and_bias(b, p + "linear_fc1", {merged, merged}, TensorKind::kLinear, copies);
    weight_and_bias(b, p + "linear_fc2", {v.out_hidden, merged}, TensorKind::kLinear, copies);
  };
  merger("visual.merger.", v.hidden, 1);
  if (v.deepstack_mergers > 0)
    merger("visual.deepstack_merger_list.{L}.", merged, v.deepstack_mergers);
}

}  // namespace

ParamInventory build_param_inventory(const ModelArch& a) {
  InventoryBuilder b;
  const std::int64_t H = a.hidden, L = a.layers;
  {
    TensorSpec emb;
    emb.name = "model.embed_tokens.weight";
    emb.shape = {a.vocab, H};
    emb.kind = TensorKind::kEmbedding;
    b.add(emb);
  }
  add_attention(b, a);
  add_dense_mlp(b, a, a.dense_layers());
  add_moe_mlp(b, a);
  // Norms: input_layernorm and post_attention_layernorm (Gemma 3 adds pre/post-feedforward; Phi
  // has input_layernorm only).
  static constexpr const char* norm_names[] = {"input_layernorm", "post_attention_layernorm",
                                               "pre_feedforward_layernorm",
                                               "post_feedforward_layernorm"};
  for (int i = 0; i < a.norms_per_layer; ++i) {
    const std::string norm =
        a.norm_names.empty() ? norm_names[i] : a.norm_names[static_cast<std::size_t>(i)];
    b.vector(fmt::format("model.layers.{{L}}.{}.weight", norm), H, TensorKind::kNorm, L, true);
    if (a.norm_bias)
      b.vector(fmt::format("model.layers.{{L}}.{}.bias", norm), H, TensorKind::kBias, L, true);
  }
  // The final norm: model.norm, or Phi's model.final_layernorm.
  b.vector("model." + a.final_norm_name + ".weight", H, TensorKind::kNorm, 1, false);
  if (a.norm_bias) b.vector("model." + a.final_norm_name + ".bias", H, TensorKind::kBias, 1, false);
  if (a.score_head) {
    TensorSpec head;
    head.name = "score.weight";
    head.shape = {1, H};
    head.kind = TensorKind::kOutput;
    head.in_features = H;
    head.out_features = 1;
    b.add(head);
  } else if (!a.tied_embeddings) {
    TensorSpec head;
    head.name = "lm_head.weight";
    head.shape = {a.vocab, H};
    head.kind = TensorKind::kOutput;
    head.in_features = H;
    head.out_features = a.vocab;
    b.add(head);
    if (a.lm_head_bias) b.vector("lm_head.bias", a.vocab, TensorKind::kBias, 1, false);
  }

  if (a.has_vision()) {
    const std::string& kind = a.vision.kind;
    b.set_part(ModelPart::kVision);
    if (kind == "qwen2_5_vl")
      add_qwen2_5_vision(b, a.vision);
    else if (kind == "qwen3_vl")
      add_qwen3_vl_vision(b, a.vision);
    else if (kind == "llama4")
      add_llama4_vision(b, a.vision);
    else
      add_siglip_vision(b, a.vision);
    b.set_part(ModelPart::kProjector);
    if (kind == "qwen2_5_vl")
      add_qwen2_5_merger(b, a.vision);
    else if (kind == "qwen3_vl")
      add_qwen3_vl_mergers(b, a.vision);
    else if (kind == "llama4")
      add_llama4_projector(b, a);
    else
      add_gemma3_projector(b, a);
  }

  ParamInventory& inv = b.inventory();
  for (const auto& t : inv.tensors) {
    const ParamCount n = t.total();
    inv.total += n;
    switch (t.part) {
      case ModelPart::kText:
        inv.text += n;
        break;
      case ModelPart::kVision:
        inv.vision += n;
        break;
      case ModelPart::kProjector:
        inv.projector += n;
        break;
    }
    // The groups below and the active count describe the text decoder.
    if (t.part != ModelPart::kText) continue;
    if (t.is_block_linear()) inv.block_linear += n;
    switch (t.kind) {
      case TensorKind::kEmbedding:
      case TensorKind::kOutput:
        inv.embedding_and_output += n;
        break;
      case TensorKind::kNorm:
        inv.norms += n;
        break;
      case TensorKind::kBias:
        inv.biases += n;
        break;
      case TensorKind::kOther:
        inv.other += n;
        break;
      default:
        break;
    }
    // Active parameters per token: experts count experts_per_token of num_experts; the input
    // embedding is a lookup, not a multiply, and is left out (the convention of MoE model cards).
    if (t.kind == TensorKind::kEmbedding) continue;
    if (t.experts > 1) {
      inv.active_per_token += n / t.experts * a.experts_per_token;
    } else {
      inv.active_per_token += n;
    }
  }
  // A tied model multiplies by the embedding matrix again in the output layer.
  if (a.output_tied()) inv.active_per_token += a.vocab * H;
  return inv;
}

}  // namespace ftplan
