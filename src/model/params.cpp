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

  void add(TensorSpec t) { inv_.tensors.push_back(std::move(t)); }
  ParamInventory& inventory() { return inv_; }

 private:
  ParamInventory inv_;
};

void add_attention(InventoryBuilder& b, const ModelArch& a) {
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
  b.linear(p + "o_proj.weight", q, H, kProjO, L);
  if (a.o_bias) b.vector(p + "o_proj.bias", H, TensorKind::kBias, L, true);
  if (a.qk_norm) {
    // Qwen3 / Gemma 3: RMSNorm weights over head_dim, shared by all heads.
    b.vector(p + "q_norm.weight", a.head_dim, TensorKind::kNorm, L, true);
    b.vector(p + "k_norm.weight", a.head_dim, TensorKind::kNorm, L, true);
  }
  if (a.attention_sinks) b.vector(p + "sinks", a.heads, TensorKind::kOther, L, true);
}

void add_dense_mlp(InventoryBuilder& b, const ModelArch& a, std::int64_t layers) {
  if (layers == 0) return;
  const std::int64_t H = a.hidden, I = a.intermediate;
  const std::string p = "model.layers.{L}.mlp.";
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
  } else if (a.expert_naming == "fused") {
    // gpt-oss: router with bias; per layer one 3-D tensor for all experts' gate_up [E, H, 2I]
    // and down [E, I, H], each with a bias (modeling_gpt_oss.py GptOssExperts).
    const std::string p = "model.layers.{L}.mlp.";
    b.linear(p + "router.weight", H, E, 0, L, TensorKind::kRouter);
    b.vector(p + "router.bias", E, TensorKind::kBias, L, true);
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
    TensorSpec gate_up_bias = gate_up;
    gate_up_bias.name = p + "experts.gate_up_proj_bias";
    gate_up_bias.shape = {E, 2 * I};
    gate_up_bias.kind = TensorKind::kBias;
    gate_up_bias.projections = 0;
    b.add(gate_up_bias);
    TensorSpec down = gate_up;
    down.name = p + "experts.down_proj";
    down.shape = {E, I, H};
    down.projections = kProjDown;
    down.in_features = I;
    down.out_features = H;
    b.add(down);
    TensorSpec down_bias = down;
    down_bias.name = p + "experts.down_proj_bias";
    down_bias.shape = {E, H};
    down_bias.kind = TensorKind::kBias;
    down_bias.projections = 0;
    b.add(down_bias);
  } else {
    // Qwen3-MoE: mlp.gate [E, H]; experts.{E}.gate_proj / up_proj [I, H], down_proj [H, I].
    const std::string p = "model.layers.{L}.mlp.";
    b.linear(p + "gate.weight", H, E, 0, L, TensorKind::kRouter);
    b.linear(p + "experts.{E}.gate_proj.weight", H, I, kProjGate, L, TensorKind::kExpert, E);
    b.linear(p + "experts.{E}.up_proj.weight", H, I, kProjUp, L, TensorKind::kExpert, E);
    b.linear(p + "experts.{E}.down_proj.weight", I, H, kProjDown, L, TensorKind::kExpert, E);
  }
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
  // RMSNorms: input_layernorm and post_attention_layernorm (Gemma 3 adds pre/post-feedforward).
  static constexpr const char* norm_names[] = {"input_layernorm", "post_attention_layernorm",
                                               "pre_feedforward_layernorm",
                                               "post_feedforward_layernorm"};
  for (int i = 0; i < a.norms_per_layer; ++i)
    b.vector(fmt::format("model.layers.{{L}}.{}.weight", norm_names[i]), H, TensorKind::kNorm, L,
             true);
  b.vector("model.norm.weight", H, TensorKind::kNorm, 1, false);
  if (!a.tied_embeddings) {
    TensorSpec head;
    head.name = "lm_head.weight";
    head.shape = {a.vocab, H};
    head.kind = TensorKind::kOutput;
    head.in_features = H;
    head.out_features = a.vocab;
    b.add(head);
  }

  ParamInventory& inv = b.inventory();
  for (const auto& t : inv.tensors) {
    const ParamCount n = t.total();
    inv.total += n;
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
  if (a.tied_embeddings) inv.active_per_token += a.vocab * H;
  return inv;
}

}  // namespace ftplan
