#include "infer/generation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>

#include "comm/collectives.hpp"
#include "core/error.hpp"
#include "core/name_table.hpp"
#include "perf/device.hpp"
#include "perf/efficiency.hpp"
#include "perf/ops.hpp"

namespace ftplan {
namespace {

constexpr NameTable<KvDtype, 2> kKvDtypes{{{{KvDtype::kBF16, "bf16"}, {KvDtype::kFP8, "fp8"}}}};
constexpr NameTable<WeightFormat, 5> kWeightFormats{{{{WeightFormat::kBF16, "bf16"},
                                                      {WeightFormat::kFP8, "fp8"},
                                                      {WeightFormat::kNVFP4, "nvfp4"},
                                                      {WeightFormat::kINT4, "int4"},
                                                      {WeightFormat::kMXFP4, "mxfp4"}}}};

// Bytes of an element kept 16-bit (embeddings, output layer, norms, routers, a vision tower).
constexpr double kSixteenBit = 2;
// FP32 logits of one sampled sequence, per vocabulary entry.
constexpr double kLogitBytes = 4;
// int4 (GPTQ / AWQ): one 16-bit scale per group of 128 weights (their common group_size 128).
constexpr double kInt4GroupSize = 128;
// MXFP4 (OCP Microscaling v1.0): one 8-bit E8M0 scale per block of 32 FP4 (E2M1) elements.
constexpr double kMxBlock = 32;

// Tensors a tensor-parallel group splits over its cards: the decoder's linear layers and experts,
// the embedding and the output layer (vLLM's column-, row- and vocabulary-parallel layers; the
// router stays whole).
bool split_by_tp(const TensorSpec& t) {
  return t.part == ModelPart::kText &&
         ((t.in_blocks && (t.kind == TensorKind::kLinear || t.kind == TensorKind::kExpert)) ||
          t.kind == TensorKind::kEmbedding || t.kind == TensorKind::kOutput);
}

// The linear weights a serving format quantizes: the decoder's projections and experts.
bool quantized(const TensorSpec& t) {
  return t.part == ModelPart::kText && t.in_blocks &&
         (t.kind == TensorKind::kLinear || t.kind == TensorKind::kExpert);
}

double to_double(std::int64_t n) {
  return static_cast<double>(n);
}

// Query i of a chunked layer attends to the keys of its own chunk up to itself: a prompt of `s`
// tokens in chunks of `c` has Σ over chunks n(n+1)/2 pairs (n = the chunk's length).
double chunked_pairs(std::int64_t s, std::int64_t c) {
  if (c <= 0 || c >= s) return causal_pairs(s, 0);
  const double full = to_double(s / c);
  const double rest = to_double(s % c);
  const double cd = to_double(c);
  return full * cd * (cd + 1) / 2 + rest * (rest + 1) / 2;
}

double prompt_pairs(const KvLayerGroup& group, std::int64_t tokens) {
  return group.name == "chunked" ? chunked_pairs(tokens, group.span)
                                 : causal_pairs(tokens, group.span);
}

FlopsPerSecond require_rate(const Device& d, TensorPrecision p, std::string_view field) {
  const auto rate = d.rate(p);
  if (!rate || rate->value <= 0)
    throw UserError(ErrorCode::kUnsupported,
                    fmt::format("{} publishes no dense {} tensor rate, which this run needs",
                                d.name(), tensor_precision_name(p)),
                    std::string(field));
  return *rate;
}

PassTime timed(const GenerationModel& g, const Device& d, PassTime t, const GenerationEfficiency& e,
               std::string_view field) {
  const FlopsPerSecond linear_rate = require_rate(d, weight_format_precision(g.weights), field);
  const FlopsPerSecond attention_rate = require_rate(d, TensorPrecision::kBF16, field);
  t.bytes = t.weight_bytes + t.kv_bytes;
  t.compute =
      t.linear_flops / (linear_rate * e.gemm) + t.attention_flops / (attention_rate * e.attention);
  t.memory = t.bytes / (d.bandwidth * e.memory);
  return t;
}

}  // namespace

std::string_view kv_dtype_name(KvDtype d) {
  return kKvDtypes.name(d);
}
const std::vector<std::string>& kv_dtype_names() {
  static const std::vector<std::string> names = kKvDtypes.names();
  return names;
}
KvDtype parse_kv_dtype(std::string_view name, std::string_view field) {
  return kKvDtypes.parse(name, "KV cache dtype", field);
}
double kv_dtype_bytes(KvDtype d) {
  return d == KvDtype::kFP8 ? 1 : 2;
}

std::string_view weight_format_name(WeightFormat f) {
  return kWeightFormats.name(f);
}
const std::vector<std::string>& weight_format_names() {
  static const std::vector<std::string> names = kWeightFormats.names();
  return names;
}
WeightFormat parse_weight_format(std::string_view name, std::string_view field) {
  return kWeightFormats.parse(name, "weight format", field);
}
double weight_format_bytes(WeightFormat f) {
  switch (f) {
    case WeightFormat::kBF16:
      return operand_bytes(ComputeFormat::kBF16);
    case WeightFormat::kFP8:
      return operand_bytes(ComputeFormat::kFP8);
    case WeightFormat::kNVFP4:
      return operand_bytes(ComputeFormat::kNVFP4);
    case WeightFormat::kINT4:
      return 0.5 + kSixteenBit / kInt4GroupSize;
    case WeightFormat::kMXFP4:
      return 0.5 + 1 / kMxBlock;
  }
  return kSixteenBit;
}
TensorPrecision weight_format_precision(WeightFormat f) {
  switch (f) {
    case WeightFormat::kFP8:
      return TensorPrecision::kFP8;
    case WeightFormat::kNVFP4:
      return TensorPrecision::kFP4;
    case WeightFormat::kBF16:
    case WeightFormat::kINT4:
    case WeightFormat::kMXFP4:
      break;
  }
  return TensorPrecision::kBF16;
}

GenerationModel make_generation_model(ModelPtr model, WeightFormat weights, KvDtype kv_dtype,
                                      int tp, std::string_view field) {
  assert(model);
  const ModelArch& a = model->arch;
  if (tp < 1 || a.heads % tp != 0 ||
      (!a.mla && (tp <= a.kv_heads ? a.kv_heads % tp != 0 : tp % a.kv_heads != 0)))
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("{} = {}: tensor parallelism over {} cards does not divide {}: {} attention "
                    "heads, {} KV heads (the cards must divide both, or be a multiple of the KV "
                    "heads)",
                    field, tp, tp, a.id, a.heads, a.kv_heads),
        std::string(field));
  GenerationModel g;
  g.model = model;
  g.weights = weights;
  g.kv_dtype = kv_dtype;
  g.tp = tp;
  const double cards = tp;
  const double linear_bytes = weight_format_bytes(weights);
  for (const TensorSpec& t : model->params.tensors) {
    const Bytes bytes(to_double(t.total()) * (quantized(t) ? linear_bytes : kSixteenBit) /
                      (split_by_tp(t) ? cards : 1.0));
    g.weights_bytes += bytes;
    if (t.part != ModelPart::kText) continue;
    if (t.experts > 1)
      g.expert_weight_bytes += bytes;
    else if (t.kind != TensorKind::kEmbedding || a.tied_embeddings)
      g.dense_weight_bytes += bytes;
  }
  if (a.is_moe()) {
    g.experts = a.num_experts;
    g.experts_per_token = a.experts_per_token;
  }
  // The multiplied weights are all split: each card does 1/tp of a token's FLOPs.
  g.active_params = to_double(model->params.active_per_token) / cards;
  g.hidden = a.hidden;
  g.layers = a.layers;
  g.widest_intermediate =
      std::max(a.intermediate, a.is_moe() ? a.experts_per_token * a.moe_intermediate : 0) / tp;

  // The cache per token and layer, and the FLOPs of one (query, key) pair (see KvLayerGroup).
  const double kv_bytes = kv_dtype_bytes(kv_dtype);
  const double heads = to_double(a.heads / tp);  // per card
  KvLayerGroup shape;
  if (a.mla) {
    shape.bytes_per_token_per_layer =
        Bytes(to_double(a.kv_lora_rank + a.qk_rope_head_dim) * kv_bytes);
    shape.prefill_pair_flops = 2 * heads * to_double(a.head_dim + a.v_head_dim);
    shape.decode_pair_flops =
        2 * heads * to_double(a.kv_lora_rank + a.qk_rope_head_dim + a.kv_lora_rank);
  } else {
    // K [kv_heads × head_dim] and V [kv_heads × head_dim] per token, the card's KV heads.
    const std::int64_t kv_heads = tp <= a.kv_heads ? a.kv_heads / tp : 1;
    shape.bytes_per_token_per_layer =
        Bytes(to_double((a.kv_dim() + a.v_dim()) / a.kv_heads * kv_heads) * kv_bytes);
    shape.prefill_pair_flops = 2 * heads * to_double(2 * a.head_dim);
    shape.decode_pair_flops = shape.prefill_pair_flops;
  }
  const std::int64_t sliding = a.sliding_window > 0 ? std::min(a.sliding_layers, a.layers) : 0;
  const std::int64_t chunked =
      a.attention_chunk > 0 ? std::min(a.chunked_layers, a.layers - sliding) : 0;
  auto add = [&](const char* name, std::int64_t layers, std::int64_t span) {
    if (layers <= 0) return;
    KvLayerGroup group = shape;
    group.name = name;
    group.layers = layers;
    group.span = span;
    g.kv_groups.push_back(std::move(group));
  };
  add("full", a.layers - sliding - chunked, 0);
  add("sliding", sliding, a.sliding_window);
  add("chunked", chunked, a.attention_chunk);
  return g;
}

Bytes kv_bytes_per_token(const GenerationModel& g) {
  Bytes b;
  for (const auto& group : g.kv_groups)
    b += group.bytes_per_token_per_layer * to_double(group.layers);
  return b;
}

Bytes kv_bytes_per_sequence(const GenerationModel& g, std::int64_t context,
                            std::int64_t block_size) {
  assert(context >= 0 && block_size >= 1);
  Bytes b;
  for (const auto& group : g.kv_groups) {
    const std::int64_t held = group.tokens_held(context);
    const std::int64_t blocks = (held + block_size - 1) / block_size;
    b += group.bytes_per_token_per_layer * to_double(group.layers * blocks * block_size);
  }
  return b;
}

Bytes activation_reserve(const GenerationModel& g) {
  const ModelArch& a = g.model->arch;
  // Per token: hidden state, gate and up outputs [2 × intermediate], q, k, v, all 16-bit (all
  // but the hidden state split over the tensor-parallel cards).
  const double per_token = (to_double(a.hidden + 2 * g.widest_intermediate) +
                            to_double(a.q_dim() + a.kv_dim() + a.v_dim()) / to_double(g.tp)) *
                           kSixteenBit;
  return Bytes(to_double(kProfileTokens) * per_token +
               to_double(kProfileSequences) * to_double(a.vocab) * kLogitBytes);
}

GenerationMemory generation_memory(const GenerationModel& g, Bytes card_bytes, double utilization,
                                   Bytes cuda_context, std::int64_t context,
                                   std::int64_t block_size) {
  assert(utilization > 0 && utilization <= 1 && context >= 1 && block_size >= 1);
  GenerationMemory m;
  m.card = card_bytes;
  m.utilization = utilization;
  m.engine = card_bytes * utilization;
  m.weights = g.weights_bytes;
  m.reserve = activation_reserve(g) + cuda_context;
  m.kv_budget = m.engine - m.weights - m.reserve;
  m.kv_per_sequence = kv_bytes_per_sequence(g, context, block_size);
  m.block_size = block_size;
  m.context = context;
  if (m.kv_budget.value > 0 && m.kv_per_sequence.value > 0)
    m.max_concurrent_sequences =
        static_cast<std::int64_t>(std::floor(m.kv_budget / m.kv_per_sequence));
  return m;
}

GenerationEfficiency generation_efficiency(const EfficiencyTable& table, const GenerationModel& g,
                                           std::string_view architecture, double tokens) {
  const double width = to_double(std::max<std::int64_t>(g.widest_intermediate, 1));
  const Flops gemm_flops(2 * tokens * to_double(g.hidden) * width);
  const Bytes gemm_weight(to_double(g.hidden) * width * weight_format_bytes(g.weights));
  GenerationEfficiency e;
  e.gemm = std::min(1.0, table.compute(OpClass::kGemm, gemm_flops) *
                             table.compute_scale(architecture, OpClass::kGemm));
  const double attention_curve = table.of(OpClass::kAttention).compute.at(0);
  e.attention = std::min(
      1.0, attention_kernel_fraction(table.attention_kernels, architecture,
                                     AttentionKernel::kFlash2, Phase::kForward, attention_curve) *
               table.compute_scale(architecture, OpClass::kAttention));
  e.memory = table.memory(OpClass::kGemm, gemm_weight);
  e.decode_layer_seconds = table.generation.seconds_per_decode_layer;
  return e;
}

double expected_experts_touched(std::int64_t experts, std::int64_t experts_per_token,
                                double tokens) {
  if (experts <= 0 || tokens <= 0) return 0;
  const double e = to_double(experts);
  const double miss = 1 - to_double(experts_per_token) / e;
  return e * (1 - std::pow(miss, tokens));
}

Seconds tensor_parallel_seconds(const GenerationModel& g, const TensorParallelLink& link,
                                double tokens) {
  if (g.tp <= 1 || !link.topology || !link.constants) return Seconds();
  const Bytes activation(tokens * to_double(g.hidden) * kSixteenBit);
  const CollectiveCost c =
      collective_cost(Collective::kAllReduce, activation, *link.topology, *link.constants);
  return c.estimated_seconds * (2 * to_double(g.layers));
}

PassTime prefill_time(const GenerationModel& g, const Device& d, std::int64_t tokens,
                      const GenerationEfficiency& e, std::string_view field,
                      const TensorParallelLink& link, std::int64_t prompts) {
  assert(tokens >= 1 && prompts >= 1);
  const double n = to_double(prompts);
  const double all_tokens = to_double(tokens) * n;
  PassTime t;
  t.linear_flops = Flops(2 * g.active_params * all_tokens);
  double attention = 0;
  for (const auto& group : g.kv_groups)
    attention += to_double(group.layers) * prompt_pairs(group, tokens) * group.prefill_pair_flops;
  t.attention_flops = Flops(attention * n);
  const double touched = expected_experts_touched(g.experts, g.experts_per_token, all_tokens);
  t.weight_bytes =
      g.dense_weight_bytes +
      (g.experts > 0 ? g.expert_weight_bytes * (touched / to_double(g.experts)) : Bytes());
  t.kv_bytes = kv_bytes_per_sequence(g, tokens) * n;
  t.link = tensor_parallel_seconds(g, link, all_tokens);
  return timed(g, d, t, e, field);
}

PassTime decode_time(const GenerationModel& g, const Device& d, std::int64_t batch,
                     std::int64_t context, const GenerationEfficiency& e, std::string_view field,
                     const TensorParallelLink& link) {
  assert(batch >= 1 && context >= 1);
  const double b = to_double(batch);
  PassTime t;
  t.linear_flops = Flops(2 * g.active_params * b);
  double attention = 0;
  for (const auto& group : g.kv_groups)
    attention +=
        to_double(group.layers) * to_double(group.tokens_held(context)) * group.decode_pair_flops;
  t.attention_flops = Flops(b * attention);
  const double touched = expected_experts_touched(g.experts, g.experts_per_token, b);
  t.weight_bytes =
      g.dense_weight_bytes +
      (g.experts > 0 ? g.expert_weight_bytes * (touched / to_double(g.experts)) : Bytes());
  t.kv_bytes = kv_bytes_per_sequence(g, context) * b;
  t.link = tensor_parallel_seconds(g, link, b);
  t.fixed = Seconds(to_double(g.layers) * e.decode_layer_seconds);
  return timed(g, d, t, e, field);
}

GenerationEstimate estimate_generation(const GenerationModel& g, const Device& d, Bytes card_bytes,
                                       const EfficiencyTable& table, Bytes cuda_context,
                                       const GenerationRequest& request,
                                       const TensorParallelLink& link) {
  const std::string_view architecture = d.gpu ? std::string_view(d.gpu->architecture) : "";
  GenerationEstimate out;
  out.memory = generation_memory(g, card_bytes, request.utilization, cuda_context, request.context,
                                 request.block_size);
  out.prefill_efficiency =
      generation_efficiency(table, g, architecture, static_cast<double>(request.context));
  out.prefill = prefill_time(g, d, request.context, out.prefill_efficiency, "weights", link);
  auto point = [&](std::int64_t batch) {
    DecodePoint p;
    p.batch = batch;
    p.efficiency = generation_efficiency(table, g, architecture, static_cast<double>(batch));
    p.step = decode_time(g, d, batch, request.context, p.efficiency, "weights", link);
    p.fits = batch <= out.memory.max_concurrent_sequences;
    return p;
  };
  out.decode = point(request.batch);
  if (const FitRecord& f = table.generation.fit; f.present()) {
    // error = (predicted − measured) / measured: a measured time is predicted / (1 + error).
    out.decode_range_low = 1 / (1 + f.error_high);
    out.decode_range_high = 1 / (1 + f.error_low);
  }
  const std::int64_t top = std::max<std::int64_t>(out.memory.max_concurrent_sequences, 1);
  for (std::int64_t b = 1; b < top; b *= 2)
    out.batch_sweep.push_back(point(b));
  out.batch_sweep.push_back(point(top));
  return out;
}

namespace {

// Decode time of `sequences` sequences started together whose completions end at the lengths of
// `lengths` (probabilities, increasing): between two lengths the share still generating is
// constant; each interval's steps are timed at its middle context, with the expected number of
// sequences left given that any is (rollout_time's comment).
Seconds run_out_time(const GenerationModel& g, const Device& d, const EfficiencyTable& table,
                     std::string_view architecture, std::int64_t sequences,
                     std::int64_t prompt_tokens, const std::vector<LengthBin>& lengths,
                     const TensorParallelLink& link) {
  const double n = to_double(sequences);
  double surviving = 1, previous = 0;
  Seconds out;
  for (const LengthBin& bin : lengths) {
    const double steps = bin.tokens - previous;
    if (steps > 0 && surviving > 0) {
      const double any = 1 - std::pow(1 - std::min(surviving, 1.0), n);
      const auto left = std::max<std::int64_t>(1, std::llround(n * surviving / any));
      const auto context =
          prompt_tokens + static_cast<std::int64_t>(std::llround(previous + steps / 2));
      const GenerationEfficiency e = generation_efficiency(table, g, architecture, to_double(left));
      out += decode_time(g, d, left, context, e, "weights", link).time() * (steps * any);
    }
    surviving -= bin.count;
    previous = bin.tokens;
  }
  return out;
}

}  // namespace

RolloutTime rollout_time(const GenerationModel& g, const Device& d, const EfficiencyTable& table,
                         std::int64_t sequences, std::int64_t prompt_tokens,
                         std::int64_t completion_tokens, std::int64_t batch,
                         const TensorParallelLink& link,
                         const std::vector<LengthBin>& completion_lengths) {
  assert(sequences >= 1 && prompt_tokens >= 1 && completion_tokens >= 1 && batch >= 1);
  const std::string_view architecture = d.gpu ? std::string_view(d.gpu->architecture) : "";
  RolloutTime out;
  out.waves = (sequences + batch - 1) / batch;
  // Every full wave is alike; the last holds the rest.
  const std::int64_t full_waves = sequences / batch;
  const std::int64_t rest = sequences % batch;
  const std::pair<std::int64_t, std::int64_t> waves[] = {{batch, full_waves}, {rest, 1}};
  // The prefill of each wave's prompts together.
  for (const auto& [prompts, times] : waves) {
    if (prompts == 0 || times == 0) continue;
    const double wave_tokens = to_double(prompts * prompt_tokens);
    out.prefill += prefill_time(g, d, prompt_tokens,
                                generation_efficiency(table, g, architecture, wave_tokens),
                                "weights", link, prompts)
                       .time() *
                   to_double(times);
  }
  if (completion_lengths.size() > 1) {
    const double mean = expectation(completion_lengths, [](double t) { return t; });
    const double mean_square = expectation(completion_lengths, [](double t) { return t * t; });
    if (sequences > batch) {
      const double full_steps = to_double(sequences - batch) * mean / to_double(batch);
      const auto context =
          prompt_tokens + static_cast<std::int64_t>(std::llround(mean_square / (2 * mean)));
      const GenerationEfficiency e =
          generation_efficiency(table, g, architecture, to_double(batch));
      out.decode += decode_time(g, d, batch, context, e, "weights", link).time() * full_steps;
    }
    out.decode += run_out_time(g, d, table, architecture, std::min(sequences, batch), prompt_tokens,
                               completion_lengths, link);
    out.completion_tokens_per_second = to_double(sequences) * mean / out.total().value;
    return out;
  }
  // Fixed lengths: each wave decodes completion_tokens steps, its context growing.
  for (const auto& [n, times] : waves) {
    if (n == 0 || times == 0) continue;
    const GenerationEfficiency e = generation_efficiency(table, g, architecture, to_double(n));
    const double steps_per_segment = to_double(completion_tokens) / kRolloutSegments;
    Seconds decode;
    for (int i = 0; i < kRolloutSegments; ++i) {
      const double middle = (i + 0.5) * steps_per_segment;
      const auto context = prompt_tokens + static_cast<std::int64_t>(std::llround(middle));
      decode += decode_time(g, d, n, context, e, "weights", link).time() * steps_per_segment;
    }
    out.decode += decode * to_double(times);
  }
  out.completion_tokens_per_second = to_double(sequences * completion_tokens) / out.total().value;
  return out;
}

}  // namespace ftplan
