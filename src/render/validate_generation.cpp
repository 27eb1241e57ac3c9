#include "render/validate_generation.hpp"

#include <fmt/format.h>

#include "core/format.hpp"
#include "render/json.hpp"
#include "render/table.hpp"

namespace ftplan {

namespace {

std::string optional_percent(const std::optional<double>& v) {
  return v ? format_signed_share(*v) : std::string("-");
}

std::string engine_cell(const MeasuredGeneration& m) {
  return m.engine_version.empty() ? m.engine : fmt::format("{} {}", m.engine, m.engine_version);
}

std::string setup_cell(const MeasuredGeneration& m) {
  return fmt::format("{}× {}", m.tp, m.gpu);
}

double unit_bytes(const std::string& unit) {
  return bytes_per_memory_unit(unit);
}

nlohmann::json summary_json(const GenerationErrorSummary& s) {
  return {{"rows", s.rows},
          {"median_abs_error", round_to(s.median_abs_error, 4)},
          {"p90_abs_error", round_to(s.p90_abs_error, 4)},
          {"worst_abs_error", round_to(s.worst_abs_error, 4)},
          {"worst_id", s.worst_id}};
}

}  // namespace

void print_generation_validation(std::ostream& out, const GenerationValidationReport& r) {
  out << "\nGeneration model vs published serving measurements (per card of the tensor-parallel "
         "group)\nerror = (predicted - measured) / measured\n";
  bool any_kv = false, any_decode = false;
  for (const auto& row : r.rows) {
    if (row.skipped) continue;
    any_kv |= row.row->kv_cache.has_value();
    any_decode |= row.row->decode.has_value();
  }
  if (any_kv) {
    out << "\nKV cache: tokens the cache holds; 'from log' = the tokens the logged cache memory "
           "holds at ftplan's bytes per token\n\n";
    TextTable t({"row", "engine", "model", "cards", "max len>", "measured>", "predicted>", "error>",
                 "from log>", "error>", "memory>", "weights>"});
    for (const auto& row : r.rows) {
      if (row.skipped || !row.row->kv_cache) continue;
      const MeasuredGeneration& m = *row.row;
      t.row({m.id, engine_cell(m), m.model, setup_cell(m), std::to_string(m.max_model_len),
             std::to_string(m.kv_cache->tokens), std::to_string(row.predicted_tokens),
             format_signed_share(row.tokens_error),
             row.logged_memory_tokens ? std::to_string(*row.logged_memory_tokens) : "-",
             optional_percent(row.logged_memory_tokens_error),
             optional_percent(row.kv_memory_error), optional_percent(row.weights_error)});
    }
    t.print(out);
    out << "(memory, weights: the predicted cache budget and weights against the log's; the "
           "formats of weights and cache are in the JSON)\n";
  }
  if (any_decode) {
    out << "\nDecode: mean time per output token at the mean context of the decode (in + out / "
           "2), or of a step timed at one context\n\n";
    TextTable t({"row", "engine", "model", "cards", "in>", "out>", "context>", "concurrency>",
                 "measured ms>", "predicted ms>", "error>"});
    for (const auto& row : r.rows) {
      if (row.skipped || !row.row->decode) continue;
      const MeasuredGeneration& m = *row.row;
      const MeasuredDecode& d = *m.decode;
      const bool fixed = d.fixed_context > 0;
      t.row({m.id, engine_cell(m), m.model, setup_cell(m),
             fixed ? "-" : std::to_string(d.input_tokens),
             fixed ? "-" : std::to_string(d.output_tokens), std::to_string(d.context()),
             std::to_string(d.concurrency), format_fixed(d.tpot_ms, 2),
             format_fixed(row.predicted_tpot_ms, 2), format_signed_share(row.tpot_error)});
    }
    t.print(out);
  }
  if (r.skipped > 0) {
    out << fmt::format("\nskipped ({}): settings the generation model does not cover\n", r.skipped);
    for (const auto& row : r.rows)
      if (row.skipped)
        out << fmt::format("  {:<5} {}: {}\n", row.row->id, row.row->source, row.reason);
  }
  out << "\nsummary: absolute error\n";
  TextTable s({"figure", "rows>", "median>", "90th pct.>", "worst>", "worst row"});
  const std::pair<const char*, const GenerationErrorSummary*> summaries[] = {
      {"KV tokens from the card", &r.kv_tokens},
      {"KV tokens from the logged memory", &r.kv_tokens_from_logged_memory},
      {"KV cache memory", &r.kv_memory},
      {"weights memory", &r.weights},
      {"decode time per token", &r.decode_tpot}};
  for (const auto& [name, e] : summaries)
    if (e->rows > 0)
      s.row({name, std::to_string(e->rows), format_share(e->median_abs_error),
             format_share(e->p90_abs_error), format_share(e->worst_abs_error), e->worst_id});
  s.print(out);
  const DecodeLayerFit& f = r.decode_fit;
  if (f.rows > 0)
    out << fmt::format(
        "\ndecode time per token: the engine's fixed time per decoder layer fitted to these {} "
        "rows of {} sources is {:.0f} µs (median error {} at that value); each source predicted "
        "from the others: median {}, 10th to 90th percentile {} to {}\n",
        f.rows, f.sources, f.seconds_per_layer * 1e6, format_share(f.median_abs_error),
        format_share(f.loso_median_abs_error), format_signed_share(f.error_low),
        format_signed_share(f.error_high));
}

nlohmann::json generation_validation_json(const GenerationValidationReport& r) {
  using nlohmann::json;
  json rows = json::array();
  for (const auto& row : r.rows) {
    const MeasuredGeneration& m = *row.row;
    json j = {{"id", m.id},
              {"source", m.source},
              {"engine", m.engine},
              {"model", m.model},
              {"gpu", m.gpu},
              {"tp", m.tp},
              {"max_model_len", m.max_model_len},
              {"gpu_memory_utilization", m.utilization},
              {"block_size", m.block_size}};
    if (!m.engine_version.empty()) j["engine_version"] = m.engine_version;
    if (!m.note.empty()) j["note"] = m.note;
    if (row.skipped) {
      j["skipped"] = true;
      j["reason"] = row.reason;
      rows.push_back(j);
      continue;
    }
    j["skipped"] = false;
    j["weights"] = weight_format_name(m.weights);
    j["kv_dtype"] = kv_dtype_name(m.kv_dtype);
    if (m.kv_cache) {
      const MeasuredKvCache& k = *m.kv_cache;
      json c = {{"measured_tokens", k.tokens},
                {"predicted_tokens", row.predicted_tokens},
                {"error", round_to(row.tokens_error, 4)},
                {"predicted_kv_budget_GB", round_to(row.memory.kv_budget.value / kBytesPerGB, 3)},
                {"predicted_weights_GB", round_to(row.memory.weights.value / kBytesPerGB, 3)},
                {"predicted_reserve_GB", round_to(row.memory.reserve.value / kBytesPerGB, 3)}};
      if (!k.unit.empty()) c["unit"] = k.unit;
      if (k.memory) {
        c["measured_memory"] = *k.memory;
        c["predicted_memory"] = round_to(row.memory.kv_budget.value / unit_bytes(k.unit), 3);
        c["memory_error"] = round_to(*row.kv_memory_error, 4);
        c["logged_memory_tokens"] = *row.logged_memory_tokens;
        c["logged_memory_tokens_error"] = round_to(*row.logged_memory_tokens_error, 4);
      }
      if (k.weights) {
        c["measured_weights"] = *k.weights;
        c["predicted_weights"] = round_to(row.memory.weights.value / unit_bytes(k.unit), 3);
        c["weights_error"] = round_to(*row.weights_error, 4);
      }
      if (k.card) {
        c["measured_card"] = *k.card;
        c["catalog_card"] = round_to(m.gpu_spec->capacity().value / unit_bytes(k.unit), 3);
        c["card_error"] = round_to(*row.card_error, 4);
      }
      j["kv_cache"] = c;
    }
    if (m.decode) {
      const MeasuredDecode& d = *m.decode;
      j["decode"] = {{"context", d.context()},
                     {"fixed_context", d.fixed_context > 0},
                     {"concurrency", d.concurrency},
                     {"measured_tpot_ms", d.tpot_ms},
                     {"predicted_tpot_ms", round_to(row.predicted_tpot_ms, 3)},
                     {"error", round_to(row.tpot_error, 4)}};
      if (d.fixed_context == 0) {
        j["decode"]["input_tokens"] = d.input_tokens;
        j["decode"]["output_tokens"] = d.output_tokens;
      }
    }
    rows.push_back(j);
  }
  return {{"rows", rows},
          {"summary",
           {{"kv_tokens", summary_json(r.kv_tokens)},
            {"kv_tokens_from_logged_memory", summary_json(r.kv_tokens_from_logged_memory)},
            {"kv_memory", summary_json(r.kv_memory)},
            {"weights", summary_json(r.weights)},
            {"decode_tpot", summary_json(r.decode_tpot)},
            {"decode_layer_fit",
             {{"decode_layer_us", round_to(r.decode_fit.seconds_per_layer * 1e6, 1)},
              {"rows", r.decode_fit.rows},
              {"sources", r.decode_fit.sources},
              {"median_abs_error", round_to(r.decode_fit.median_abs_error, 4)},
              {"loso_median_abs_error", round_to(r.decode_fit.loso_median_abs_error, 4)},
              {"error_low", round_to(r.decode_fit.error_low, 4)},
              {"error_high", round_to(r.decode_fit.error_high, 4)}}}}},
          {"skipped", r.skipped},
          {"error", "(predicted - measured) / measured, per card, in the source's unit"}};
}

}  // namespace ftplan
