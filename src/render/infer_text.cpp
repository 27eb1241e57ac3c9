#include "render/infer_text.hpp"

#include <fmt/format.h>

#include "core/format.hpp"
#include "render/json.hpp"
#include "render/table.hpp"

namespace ftplan {
namespace {

using nlohmann::json;

std::string span_text(const KvLayerGroup& g) {
  return g.span > 0 ? fmt::format("{} tokens", group_digits(g.span)) : "whole context";
}

std::string rate_text(double tokens_per_second) {
  return format_number(tokens_per_second, tokens_per_second < 100 ? 1 : 0) + " tokens/s";
}

json pass_json(const PassTime& t, const GenerationEfficiency& e) {
  return {{"seconds", t.time().value},
          {"bound", t.bound()},
          {"compute_seconds", t.compute.value},
          {"memory_seconds", t.memory.value},
          {"link_seconds", t.link.value},
          {"fixed_seconds", t.fixed.value},
          {"linear_flops", t.linear_flops.value},
          {"attention_flops", t.attention_flops.value},
          {"weight_bytes", t.weight_bytes.value},
          {"kv_bytes", t.kv_bytes.value},
          {"efficiency",
           {{"gemm", round_to(e.gemm, 4)},
            {"attention", round_to(e.attention, 4)},
            {"memory", round_to(e.memory, 4)}}}};
}

json point_json(const DecodePoint& p) {
  return {{"batch", p.batch},
          {"tokens_per_second", round_to(p.tokens_per_second(), 3)},
          {"ms_per_token", round_to(p.ms_per_token(), 6)},
          {"bound", p.step.bound()},
          {"fits", p.fits}};
}

}  // namespace

void print_infer(std::ostream& out, const InferView& v) {
  const GenerationModel& g = v.model;
  const GenerationRequest& r = v.request;
  const GenerationEstimate& e = v.estimate;
  const GenerationMemory& m = e.memory;
  out << fmt::format(
      "{} on {}: weights {}, KV cache {}, context {} tokens, batch {}\n"
      "Units: GB = 10^9 bytes, GiB = 2^30 bytes.\n\n",
      g.model->arch.name.empty() ? g.model->arch.id : g.model->arch.name, v.device.name(),
      weight_format_name(g.weights), kv_dtype_name(g.kv_dtype), group_digits(r.context),
      group_digits(r.batch));

  if (g.tp > 1)
    out << fmt::format(
        "Tensor parallel over {} cards ({}): every figure below is one card's (weights, KV heads "
        "and attention heads split; an MLA cache whole on each card), two all-reduces per "
        "layer.\n\n",
        g.tp, v.topology ? v.topology->preset : "");
  out << "KV cache per layer group\n";
  TextTable groups({"layers", "count>", "attends to", "bytes per token per layer>"});
  for (const auto& group : g.kv_groups)
    groups.row({group.name, std::to_string(group.layers), span_text(group),
                group_digits(static_cast<std::int64_t>(group.bytes_per_token_per_layer.value))});
  groups.print(out, "  ");
  out << fmt::format(
      "  per token (all layers): {} B; per sequence at {} tokens in blocks of {}: {}\n\n",
      group_digits(static_cast<std::int64_t>(kv_bytes_per_token(g).value)), group_digits(r.context),
      r.block_size, format_GB(m.kv_per_sequence, 3));

  out << "Memory of one card\n";
  TextTable mem({"part", "GB>", "GiB>", "how"});
  auto row = [&](const char* part, Bytes b, std::string how) {
    mem.row({part, format_fixed(to_GB(b), 2), format_fixed(to_GiB(b), 2), std::move(how)});
  };
  row("card", m.card, "driver-visible memory");
  row("engine", m.engine,
      fmt::format("card × {} (gpu_memory_utilization)", format_number(m.utilization)));
  row("weights", m.weights,
      fmt::format("linear layers in {}, the rest 16-bit", weight_format_name(g.weights)));
  row("reserve", m.reserve, "profiled forward pass, sampler logits, CUDA context");
  row("KV cache", m.kv_budget, "engine − weights − reserve");
  mem.print(out, "  ");
  if (!m.cache_fits())
    out << "  does not fit: the weights and the reserve exceed the engine's memory\n";
  out << fmt::format("  max concurrent sequences at {} tokens: {}\n\n", group_digits(r.context),
                     group_digits(m.max_concurrent_sequences));

  out << "Time (roofline: max(compute, memory) per pass; a decode step adds the engine's fixed "
         "time per layer)\n";
  TextTable t({"pass", "rate>", "latency>", "bound", "how"});
  t.row({fmt::format("prefill of {} tokens", group_digits(r.context)),
         rate_text(e.prefill_tokens_per_second(r.context)), format_seconds(e.prefill.time()),
         std::string(e.prefill.bound()),
         fmt::format(
             "{}, {} read",
             format_si(e.prefill.linear_flops.value + e.prefill.attention_flops.value, "FLOP"),
             format_si(e.prefill.bytes.value, "B"))});
  t.row({fmt::format("decode, batch {}", group_digits(r.batch)),
         rate_text(e.decode.tokens_per_second()),
         fmt::format("{} ms/token ({}–{})", format_fixed(e.decode.ms_per_token(), 2),
                     format_fixed(e.decode.ms_per_token() * e.decode_range_low, 2),
                     format_fixed(e.decode.ms_per_token() * e.decode_range_high, 2)),
         std::string(e.decode.step.bound()),
         fmt::format("weights {} + KV {} read per step{}{}",
                     format_si(e.decode.step.weight_bytes.value, "B"),
                     format_si(e.decode.step.kv_bytes.value, "B"),
                     e.decode.step.link.value > 0
                         ? fmt::format(", all-reduces {}", format_seconds(e.decode.step.link))
                         : "",
                     e.decode.step.fixed.value > 0
                         ? fmt::format(", engine {}", format_seconds(e.decode.step.fixed))
                         : "")});
  t.print(out, "  ");
  if (!e.decode.fits)
    out << fmt::format(
        "  batch {} does not fit: {} sequences of {} tokens need {} of KV cache, {} is left "
        "for it\n",
        group_digits(r.batch), group_digits(r.batch), group_digits(r.context),
        format_GB(m.kv_per_sequence * static_cast<double>(r.batch), 2),
        format_GB(m.kv_budget.value > 0 ? m.kv_budget : Bytes(), 2));

  out << "\nBatch sweep (decode at " << group_digits(r.context) << " tokens)\n";
  TextTable s({"batch>", "tokens/s>", "ms/token>", "bound"});
  for (const auto& p : e.batch_sweep)
    s.row({group_digits(p.batch), format_number(p.tokens_per_second(), 0),
           format_fixed(p.ms_per_token(), 2), std::string(p.step.bound())});
  s.print(out, "  ");
  out << fmt::format(
      "\nModelled: paged KV blocks, weights and KV read once per decode step, experts touched by "
      "the batch, and a serving engine's fixed {:.0f} µs per layer and decode step (fitted to "
      "published time-per-token measurements: ftplan validate). Not modelled: speculative "
      "decoding, prefix caching, chunked-prefill interleaving.\n",
      e.decode.efficiency.decode_layer_seconds * 1e6);
}

json infer_json(const InferView& v) {
  const GenerationModel& g = v.model;
  const GenerationRequest& r = v.request;
  const GenerationEstimate& e = v.estimate;
  const GenerationMemory& m = e.memory;
  json groups = json::array();
  for (const auto& group : g.kv_groups)
    groups.push_back({{"name", group.name},
                      {"layers", group.layers},
                      {"span_tokens", group.span},
                      {"bytes_per_token_per_layer", group.bytes_per_token_per_layer.value}});
  json sweep = json::array();
  for (const auto& p : e.batch_sweep)
    sweep.push_back(point_json(p));
  json j = {{"model", g.model->arch.id},
            {"gpu", v.device.gpu ? v.device.gpu->id : ""},
            {"gpu_name", v.device.name()},
            {"gpus", g.tp},
            {"context", r.context},
            {"batch", r.batch},
            {"block_size", r.block_size},
            {"gpu_memory_utilization", r.utilization},
            {"kv_dtype", kv_dtype_name(g.kv_dtype)},
            {"weights", weight_format_name(g.weights)},
            {"weights_GB", round_to(to_GB(m.weights), 4)},
            {"kv_bytes_per_token", kv_bytes_per_token(g).value},
            {"kv_layer_groups", groups},
            {"kv_bytes_per_sequence", m.kv_per_sequence.value},
            {"kv_cache_GB", round_to(to_GB(m.kv_budget), 4)},
            {"memory_GB",
             {{"card", round_to(to_GB(m.card), 4)},
              {"engine", round_to(to_GB(m.engine), 4)},
              {"weights", round_to(to_GB(m.weights), 4)},
              {"reserve", round_to(to_GB(m.reserve), 4)},
              {"kv_cache", round_to(to_GB(m.kv_budget), 4)}}},
            // The same figures as exact byte counts, for GiB and MiB (nvidia-smi's unit).
            {"weights_bytes", whole_bytes(m.weights)},
            {"kv_cache_bytes", whole_bytes(m.kv_budget)},
            {"memory_bytes",
             {{"card", whole_bytes(m.card)},
              {"engine", whole_bytes(m.engine)},
              {"weights", whole_bytes(m.weights)},
              {"reserve", whole_bytes(m.reserve)},
              {"kv_cache", whole_bytes(m.kv_budget)}}},
            {"max_concurrent_sequences", m.max_concurrent_sequences},
            {"batch_fits", e.decode.fits},
            {"prefill_tokens_per_second", round_to(e.prefill_tokens_per_second(r.context), 3)},
            {"prefill", pass_json(e.prefill, e.prefill_efficiency)},
            {"decode_tokens_per_second", round_to(e.decode.tokens_per_second(), 3)},
            {"decode_ms_per_token", round_to(e.decode.ms_per_token(), 6)},
            {"decode_ms_per_token_range",
             {round_to(e.decode.ms_per_token() * e.decode_range_low, 6),
              round_to(e.decode.ms_per_token() * e.decode_range_high, 6)}},
            {"bound", e.decode.step.bound()},
            {"decode", pass_json(e.decode.step, e.decode.efficiency)},
            {"batch_sweep", sweep}};
  if (v.device.mig) j["mig"] = v.device.mig->name;
  if (v.topology) j["topology"] = v.topology->preset;
  return j;
}

}  // namespace ftplan
