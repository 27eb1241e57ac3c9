#include "parallel/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/error.hpp"
#include "core/format.hpp"

namespace ftplan {

namespace {

std::int64_t as_int(int v) {
  return static_cast<std::int64_t>(v);
}

// "tp × pp × cp = 8" for messages.
std::string replica_text(const Layout& l) {
  return fmt::format("--tp {} × --pp {} × --cp {} = {}", l.tp, l.pp, l.cp, l.model_parallel());
}

// Why tensor parallelism of degree `tp` cannot split `a` (empty: it can): it splits the attention
// heads, splits or replicates the KV heads, and splits every MLP width.
std::string tp_problem(const ModelArch& a, int tp) {
  if (a.heads % tp != 0)
    return fmt::format(
        "tensor parallelism splits the attention heads: {} has {} heads, which "
        "--tp {} does not divide",
        a.name, a.heads, tp);
  if (a.kv_heads > 0 && a.kv_heads % tp != 0 && tp % a.kv_heads != 0)
    return fmt::format(
        "tensor parallelism splits (or replicates) the key/value heads: {} has {} "
        "KV heads, and --tp {} neither divides them nor is a multiple of them",
        a.name, a.kv_heads, tp);
  for (std::int64_t width : {a.intermediate, a.moe_intermediate, a.shared_expert_intermediate})
    if (width > 0 && width % tp != 0)
      return fmt::format(
          "tensor parallelism splits the MLP: {}'s width {} does not divide over "
          "--tp {}",
          a.name, width, tp);
  return {};
}

}  // namespace

EdgeStages edge_stages(const ModelArch& a, const Layout& l) {
  const std::int64_t per_stage = a.layers / std::max<std::int64_t>(1, l.pp);
  EdgeStages e;
  e.first = {0, per_stage, true, l.pp == 1};
  e.last = {l.pp - 1, per_stage, l.pp == 1, true};
  return e;
}

std::string layout_label(const Layout& l) {
  std::string out;
  const std::pair<int, const char*> parts[] = {
      {l.tp, "tp"}, {l.pp, "pp"}, {l.vpp, "vpp"}, {l.cp, "cp"}, {l.ep, "ep"}};
  for (const auto& [v, name] : parts)
    if (v > 1) out += fmt::format("{}{} {}", out.empty() ? "" : " · ", name, v);
  return out;
}

std::string layout_degrees(const Layout& l, int cards) {
  return fmt::format("tensor {} × pipeline {}{} × context {} × data {} (expert {})", l.tp, l.pp,
                     l.vpp > 1 ? fmt::format(" (× {} chunks)", l.vpp) : std::string(), l.cp,
                     l.dp(cards), l.ep);
}

void check_layout(const Workload& w, const Placement& p) {
  const Layout& l = p.layout;
  const ModelArch& a = w.model->arch;
  const std::pair<int, std::string_view> degrees[] = {
      {l.tp, "tp"}, {l.pp, "pp"}, {l.vpp, "vpp"}, {l.cp, "cp"}, {l.ep, "ep"}};
  for (const auto& [v, name] : degrees)
    if (v < 1 || v > 65536)
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("--{} must be a whole number from 1 to 65536, got {}", name, v),
                      std::string(name));
  if (l.trivial()) return;
  if (p.mig)
    throw UserError(ErrorCode::kInfeasible,
                    "a MIG instance runs one card's share of a run: tensor, pipeline, context and "
                    "expert parallelism need whole cards",
                    "mig");
  const int replica = l.model_parallel();
  if (p.count % replica != 0)
    throw UserError(ErrorCode::kInfeasible,
                    fmt::format("{} cards do not split into replicas of {} cards: one replica "
                                "spans {}; give a multiple of {} with --gpus",
                                p.count, replica, replica_text(l), replica),
                    "gpus");
  if (l.tp > 1) {
    const std::string why = tp_problem(a, l.tp);
    if (!why.empty()) {
      std::string valid;
      for (int t = 1; t <= std::min<std::int64_t>(a.heads, 128); ++t)
        if (tp_problem(a, t).empty()) valid += fmt::format("{}{}", valid.empty() ? "" : ", ", t);
      throw UserError(ErrorCode::kInfeasible,
                      fmt::format("{}; --tp values {} allows: {}", why, a.name, valid), "tp");
    }
  }
  if (l.vpp > 1 && l.pp == 1)
    throw UserError(ErrorCode::kInvalidValue,
                    "--vpp interleaves model chunks over pipeline stages: it needs --pp 2 or more",
                    "vpp");
  const std::int64_t chunks = as_int(l.pp) * as_int(l.vpp);
  if (chunks > 1 && a.layers % chunks != 0)
    throw UserError(
        ErrorCode::kInfeasible,
        fmt::format("pipeline parallelism cuts the layers into --pp {} × --vpp {} = {} equal "
                    "chunks: {}'s {} layers do not divide into {}; --pp × --vpp must be one of: {}",
                    l.pp, l.vpp, chunks, a.name, a.layers, chunks, format_divisors(a.layers, 128)),
        "pp");
  if (l.vpp > 1 && w.grad_accum % l.pp != 0)
    throw UserError(ErrorCode::kInfeasible,
                    fmt::format("the interleaved schedule runs micro-batches in groups of --pp "
                                "{}: --grad-accum {} is not a multiple of it",
                                l.pp, w.grad_accum),
                    "grad_accum");
  if (l.cp > 1) {
    if (w.attention == Attention::kEager)
      throw UserError(ErrorCode::kInfeasible,
                      "context parallelism runs ring attention on FlashAttention kernels; "
                      "--attention eager keeps the whole s × s score matrix instead: use flash "
                      "or sdpa",
                      "cp");
    if (w.seq % (2 * as_int(l.cp)) != 0)
      throw UserError(ErrorCode::kInfeasible,
                      fmt::format("context parallelism cuts each sequence into 2 × --cp {} = {} "
                                  "chunks (load-balanced causal ring attention): --seq {} does "
                                  "not divide into them",
                                  l.cp, 2 * l.cp, w.seq),
                      "cp");
  }
  if (l.ep > 1) {
    if (!a.is_moe())
      throw UserError(ErrorCode::kInfeasible,
                      fmt::format("expert parallelism spreads the experts of a mixture-of-experts "
                                  "model; {} has none: drop --ep",
                                  a.name),
                      "ep");
    if (a.num_experts % l.ep != 0)
      throw UserError(
          ErrorCode::kInfeasible,
          fmt::format("{} has {} experts per layer, which --ep {} does not divide; "
                      "--ep may be one of: {}",
                      a.name, a.num_experts, l.ep, format_divisors(a.num_experts, 1024)),
          "ep");
    const int dp_cp = l.dp(p.count) * l.cp;
    if (dp_cp % l.ep != 0)
      throw UserError(ErrorCode::kInfeasible,
                      fmt::format("expert-parallel groups are formed from the data- and "
                                  "context-parallel ranks: {} of them (--gpus {} / --tp {} / "
                                  "--pp {}) do not divide into groups of --ep {}",
                                  dp_cp, p.count, l.tp, l.pp, l.ep),
                      "ep");
  }
}

Sharding layout_sharding(const Workload& w) {
  return method_traits(w.method).trains_base ? Sharding::kZero1 : Sharding::kDdp;
}

void check_layout_topology(const Layout& l, const Topology& t) {
  if (l.tp > t.cards_per_node && l.tp > t.domain_cards)
    throw UserError(ErrorCode::kInfeasible,
                    fmt::format("tensor parallelism exchanges activations in every layer and "
                                "must stay inside one node (or NVLink domain): --tp {} spans more "
                                "than the {} cards of a node; use --pp or data parallelism across "
                                "nodes",
                                l.tp, std::max(t.cards_per_node, t.domain_cards)),
                    "tp");
}

double pipeline_bubble_fraction(const Layout& l, std::int64_t micro_batches) {
  if (l.pp <= 1) return 0;
  const double m = static_cast<double>(std::max<std::int64_t>(1, micro_batches));
  return static_cast<double>(l.pp - 1) / (static_cast<double>(l.vpp) * m);
}

double inflight_micro_batches(const Layout& l, std::int64_t micro_batches, const Stage& s) {
  if (l.pp <= 1) return 1;
  const double m = static_cast<double>(std::max<std::int64_t>(1, micro_batches));
  const double held = std::min(static_cast<double>(l.pp - s.index), m);
  const double interleave =
      l.vpp > 1 ? 1.0 + static_cast<double>(l.pp - 1) / static_cast<double>(l.pp * l.vpp) : 1.0;
  return held * interleave;
}

double tensor_share(const TensorSpec& t, const ModelArch& a, const Layout& l, const Stage& s) {
  const double tp = l.tp;
  if (t.part != ModelPart::kText) return s.first ? 1.0 : 0.0;  // vision tower, projector
  if (t.in_blocks) {
    const double layers = static_cast<double>(s.layers) / static_cast<double>(a.layers);
    switch (t.kind) {
      case TensorKind::kExpert:
        return layers / (tp * l.ep);
      case TensorKind::kLinear:
        return layers / tp;
      default:  // norms, biases, the router: replicated over tp
        return layers;
    }
  }
  switch (t.kind) {
    case TensorKind::kEmbedding:
      // Tied embeddings: the last stage keeps its own copy for the output layer (Megatron-LM).
      return ((s.first ? 1.0 : 0.0) + (a.output_tied() && s.last && !s.first ? 1.0 : 0.0)) / tp;
    case TensorKind::kOutput:
      return s.last ? 1.0 / tp : 0.0;
    case TensorKind::kNorm:
      return s.last ? 1.0 : 0.0;  // the final norm
    default:
      return s.first ? 1.0 : 0.0;
  }
}

ModelStates StageStates::total() const {
  ModelStates t = dense;
  t.frozen_weights += experts.frozen_weights;
  t.trained_weights += experts.trained_weights;
  t.gradients += experts.gradients;
  t.master_weights += experts.master_weights;
  t.optimizer_states += experts.optimizer_states;
  t.quantization_constants += experts.quantization_constants;
  t.reference_weights += experts.reference_weights;
  return t;
}

StageStates stage_states(const Workload& w, const TrainedSet& set, const Layout& l,
                         const Stage& s) {
  const ModelArch& a = w.model->arch;
  StageStates out;
  out.dense = model_states_share(w, set, [&](const TensorSpec& t) {
    return t.kind == TensorKind::kExpert ? 0.0 : tensor_share(t, a, l, s);
  });
  out.experts = model_states_share(w, set, [&](const TensorSpec& t) {
    return t.kind == TensorKind::kExpert ? tensor_share(t, a, l, s) : 0.0;
  });
  return out;
}

LayoutStates layout_states(const Workload& w, const TrainedSet& set, const Layout& l) {
  LayoutStates out;
  out.stages = edge_stages(w.model->arch, l);
  for (int i = 0; i < out.stages.count(); ++i)
    out.states[static_cast<std::size_t>(i)] = stage_states(w, set, l, out.stages[i]);
  return out;
}

Placement data_parallel_group(const Placement& p) {
  Placement group = p;
  group.count = std::max(1, p.layout.dp(p.count) * p.layout.cp);
  group.run_cards = p.run_cards > 0 ? p.run_cards : p.count;
  if (p.shard_group > 0) group.shard_group = p.shard_group * p.layout.cp;
  group.layout = {};
  return group;
}

ModelStates shard_stage_states(const StageStates& s, Sharding sharding, const Layout& l,
                               int cards) {
  const int dp_cp = std::max(1, l.dp(cards) * l.cp);
  StageStates sharded;
  sharded.dense = shard_states(s.dense, sharding, dp_cp);
  sharded.experts = shard_states(s.experts, sharding, std::max(1, dp_cp / l.ep));
  return sharded.total();
}

ActivationProfile stage_profile(const ActivationProfile& whole, const ModelArch& a, const Layout& l,
                                const Stage& s, std::int64_t micro_batches) {
  const double tp = l.tp;
  const double layers = static_cast<double>(s.layers) / static_cast<double>(a.layers);
  ActivationProfile p = whole;
  p.saved_all = whole.saved_all * (layers * inflight_micro_batches(l, micro_batches, s) / tp);
  p.saved_one = whole.saved_one * (1 / tp);
  p.recompute = whole.recompute * (1 / tp);
  p.backward_transient = whole.backward_transient * (1 / tp);
  const double last = s.last ? 1.0 : 0.0;
  p.output_saved = whole.output_saved * (last / tp);
  // Vocabulary-parallel cross-entropy: each card holds its slice of the logits.
  p.logits = whole.logits * (last / tp);
  p.scoring_logits = whole.scoring_logits * (last / tp);
  // Every stage gets the gradient of its output back (the last from the loss).
  p.hidden_gradient = whole.hidden_gradient * (1 / tp);
  p.dequant_buffer = whole.dequant_buffer / tp;
  p.head_cast = whole.head_cast * (last / tp);
  p.layer_params = whole.layer_params / tp;
  p.layer_gradients = whole.layer_gradients / tp;
  p.output_params = whole.output_params * (last / tp);
  p.largest_gradient = whole.largest_gradient / tp;
  p.head_gradients = whole.head_gradients * (last / tp);
  p.block_frozen_gradients = whole.block_frozen_gradients * (layers / tp);
  p.blocks = s.layers;
  // The variant a sharded placement runs (ActivationProfile::placed) is a stage's too.
  if (whole.sharded)
    p.sharded = std::make_shared<const ActivationProfile>(
        stage_profile(*whole.sharded, a, l, s, micro_batches));
  return p;
}

namespace {

enum class OpScope { kBlock, kExpert, kEmbedding, kHead, kOptimizer };

OpScope op_scope(std::string_view name) {
  auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
  if (starts("embedding.")) return OpScope::kEmbedding;
  if (starts("norm.final.") || starts("lm_head.") || starts("loss.")) return OpScope::kHead;
  if (starts("optimizer.")) return OpScope::kOptimizer;
  if (starts("moe.expert.")) return OpScope::kExpert;
  return OpScope::kBlock;
}

// Scales a GEMM to one card: its token dimension (m, or k for a weight gradient) times
// `token_scale`, and the larger of its two other dimensions (the one the layer splits, or an
// equal-sized one) over `split`. FLOPs follow the shape; bytes keep their mix of element sizes.
void scale_gemm(Op& op, double token_scale, double split) {
  GemmShape s = op.gemm;
  const GemmShape before = s;
  double* token = op.name.ends_with(".wgrad") ? &s.k : &s.m;
  double* a = token == &s.m ? &s.n : &s.m;
  double* b = token == &s.k ? &s.n : &s.k;
  *token *= token_scale;
  double* wide = *a >= *b ? a : b;
  *wide /= split;
  auto elems = [](const GemmShape& g) { return g.m * g.k + g.k * g.n + g.m * g.n; };
  const double flop_ratio = (s.m * s.n * s.k) / (before.m * before.n * before.k);
  op.flops = op.flops * flop_ratio;
  op.bytes = op.bytes * (elems(s) / elems(before));
  op.gemm = s;
}

}  // namespace

StepOps stage_step_ops(const StepOps& whole, const ModelArch& a, const Layout& l, const Stage& s,
                       double trained_share) {
  StepOps out = whole;
  out.ops.clear();
  const double tp = l.tp, cp = l.cp, ep = l.ep;
  const double layers = static_cast<double>(s.layers) / static_cast<double>(a.layers);
  for (const Op& in : whole.ops) {
    Op op = in;
    const OpScope scope = op_scope(op.name);
    if ((scope == OpScope::kEmbedding && !s.first) || (scope == OpScope::kHead && !s.last))
      continue;
    if (scope == OpScope::kOptimizer) {
      op.flops = op.flops * trained_share;
      op.bytes = op.bytes * trained_share;
      out.ops.push_back(std::move(op));
      continue;
    }
    if (scope == OpScope::kBlock || scope == OpScope::kExpert) {
      double count = static_cast<double>(op.count) * layers;
      if (scope == OpScope::kExpert) count /= ep;
      if (count <= 0) continue;
      op.count = std::max<std::int64_t>(1, std::llround(count));
    }
    const bool gemm = op.gemm.valid() && op.op_class != OpClass::kAttention &&
                      op.name.find("dora_weight") == std::string::npos;
    if (gemm) {
      // Experts: ep times the tokens each (the group's routed copies), ep times fewer experts.
      scale_gemm(op, (scope == OpScope::kExpert ? ep : 1.0) / cp, tp);
    } else {
      // Weight-sized work (dequantization, DoRA's weight norm) splits over tp; token-sized work
      // (norms, element-wise ops, the attention core, embedding, loss) over tp × cp under
      // sequence parallelism (attention: heads over tp, queries over cp).
      const bool weight_sized = op.op_class == OpClass::kDequant ||
                                (op.gemm.valid() && op.op_class != OpClass::kAttention);
      const double split = weight_sized ? tp : tp * cp;
      op.flops = op.flops / split;
      op.bytes = op.bytes / split;
    }
    out.ops.push_back(std::move(op));
  }
  out.layers = s.layers;
  out.tokens_per_micro_batch =
      std::max<std::int64_t>(1, std::llround(static_cast<double>(whole.tokens_per_micro_batch) /
                                             static_cast<double>(l.model_parallel())));
  return out;
}

CardWork card_work(const Workload& w, const TrainedSet& set, const ModelStates& replica,
                   const StepOps& whole, const Layout& l, const Stage& s) {
  return card_work(stage_states(w, set, l, s).total(), replica, whole, w.model->arch, l, s);
}

CardWork card_work(const ModelStates& stage, const ModelStates& replica, const StepOps& whole,
                   const ModelArch& a, const Layout& l, const Stage& s) {
  CardWork out;
  out.states = stage;
  const double share = replica.trained_weights.value > 0
                           ? out.states.trained_weights / replica.trained_weights
                           : 0.0;
  out.ops = stage_step_ops(whole, a, l, s, share);
  return out;
}

LayoutTraffic layout_traffic(const Workload& w, const Layout& l, const Stage& s, const Topology& t,
                             const CommConstants& k) {
  LayoutTraffic out;
  const ModelArch& a = w.model->arch;
  const double T = static_cast<double>(w.tokens_per_micro_batch()) / l.cp;  // tokens per card
  const double act = 2.0;  // bytes per activation element (BF16)
  const double layers = static_cast<double>(s.layers);
  // Forward, backward, and a recomputed forward of the blocks full recomputation rebuilds.
  const auto rebuilt = static_cast<double>(w.recomputed_blocks(a.layers));
  const double passes = 2.0 + rebuilt / static_cast<double>(a.layers);
  auto add = [](LayoutTraffic::Group& g, const CollectiveCost& c, double times) {
    g.received += c.received_per_card * times;
    g.seconds += c.estimated_seconds * times;
    g.link = c.slowest;
    g.collectives += static_cast<int>(std::lround(times));
  };
  if (l.tp > 1) {
    // Per layer and pass: all-gather before, reduce-scatter after attention and the MLP, each of
    // the cp shard's full activation [T × h] (Korthikanti et al. 2022 §4.2.2).
    const Topology g = group_topology(t, l.tp, 1);
    const Bytes size(T * static_cast<double>(a.hidden) * act);
    add(out.tp, collective_cost(Collective::kAllGather, size, g, k), 2 * layers * passes);
    add(out.tp, collective_cost(Collective::kReduceScatter, size, g, k), 2 * layers * passes);
  }
  if (l.cp > 1) {
    // Ring attention: cp − 1 hops of each card's K and V chunk per layer (forward, recompute);
    // K, V and their gradients in the backward pass. K/V heads split over tp where they divide.
    const Topology g = group_topology(t, l.cp, l.tp);
    const double kv_split = std::min(static_cast<double>(l.tp),
                                     static_cast<double>(std::max<std::int64_t>(1, a.kv_heads)));
    const double kv_width = static_cast<double>(a.kv_dim() + a.v_dim()) / kv_split;
    const Bytes ring(T * kv_width * act * l.cp);  // every chunk of the ring: an all-gather
    const double per_layer = passes - 2.0 + 1.0 + 2.0;
    add(out.cp, collective_cost(Collective::kAllGather, ring, g, k), layers * per_layer);
  }
  if (l.ep > 1 && a.is_moe()) {
    // All-to-all of the routed copies of the card's tokens (sequence-parallel: T / tp), dispatch
    // and combine, per MoE layer and pass: each card keeps 1/ep of them, the rest cross.
    const Topology g = group_topology(t, l.ep, l.tp * l.cp);
    const double moe_layers = static_cast<double>(a.moe_layers > 0 ? a.moe_layers : a.layers) *
                              static_cast<double>(s.layers) / static_cast<double>(a.layers);
    const Bytes size(T / l.tp * static_cast<double>(a.experts_per_token) *
                     static_cast<double>(a.hidden) * act);
    add(out.ep, collective_cost(Collective::kAllGather, size, g, k), 2 * moe_layers * passes);
  }
  if (l.pp > 1) {
    // Point-to-point between neighbouring stages: the activation [T/tp × h] forward and its
    // gradient backward, once per model chunk boundary.
    const int stride = l.tp * l.cp * l.dp(t.cards);
    const Topology g = group_topology(t, 2, stride);
    const Bytes size(T / l.tp * static_cast<double>(a.hidden) * act * 2);  // two-card ring
    const double hops = 2.0 * l.vpp;                                       // out and back
    add(out.pp, collective_cost(Collective::kAllGather, size, g, k), hops);
  }
  return out;
}

}  // namespace ftplan
