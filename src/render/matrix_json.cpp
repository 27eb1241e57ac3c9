#include "render/matrix_json.hpp"

#include "render/json.hpp"
#include "render/plan_json.hpp"
#include "render/reason_words.hpp"

namespace ftplan {

using nlohmann::json;

namespace {

json optional_number(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

// The planner's fewest cards: option_json, without the totals when the run states no tokens.
json fewest_json(const Option& o, bool totals) {
  json j = option_json(o);
  if (!totals)
    for (const char* key : {"time_to_train_hours", "time_to_train_hours_range", "card_hours",
                            "energy_kWh", "cost_USD"})
      j.erase(key);
  return j;
}

json row_json(const MatrixRow& r, const Workload& w, bool totals) {
  const GpuSpec& g = *r.gpu;
  const json memory = memory_gb_json(r.one_card, w.peak);
  const json bytes = memory_bytes_json(r.one_card);
  json one_card = {{"verdict", verdict_name(r.one_card.verdict)},
                   {"memory_GB", json::object()},
                   {"memory_bytes", json::object()},
                   {"reason", word_reason(r.one_card.reason)}};
  for (const char* key : {"capacity", "model_states", "free", "peak", "headroom"}) {
    one_card["memory_GB"][key] = memory.at(key);
    one_card["memory_bytes"][key] = bytes.at(key);
  }
  json j = {{"gpu", g.id},
            {"name", g.name},
            {"vendor", g.vendor},
            {"memory_GB", memory.at("capacity")},
            {"memory_bytes", bytes.at("capacity")},
            {"link", std::string(link_kind_name(g.nvlink.kind))},
            {"price_USD", optional_number(g.price_USD.value)},
            {"rental_USD_per_card_hour", optional_number(r.rental_USD_per_card_hour)},
            {"verdict", matrix_verdict_name(r.verdict)},
            {"one_card", one_card},
            {"cards_needed", r.fewest ? json(r.fewest->count) : json(nullptr)},
            {"fewest", r.fewest ? fewest_json(*r.fewest, totals) : json(nullptr)}};
  if (!r.why_not.empty()) j["why_not"] = word_reason(r.why_not);
  return j;
}

}  // namespace

json matrix_json(const MatrixRequest& request, const Matrix& matrix) {
  json j = workload_json(request.workload);
  // The planner's micro-batch and recompute where the run leaves them open.
  if (!request.fix_micro_batch) j["micro_batch"] = nullptr;
  if (!request.fix_recompute) j["recompute"] = nullptr;
  j.erase("grad_accum");
  const bool totals = matrix.tokens > 0;
  const MatrixFilter& f = request.filter;
  j["global_batch"] = matrix.global_batch;
  j["tokens"] = totals ? json(matrix.tokens) : json(nullptr);
  j["steps"] = totals ? json(matrix.steps) : json(nullptr);
  j["counts"] = matrix.counts;
  j["sort"] = matrix_sort_name(matrix.sort);
  j["filter"] = {{"nvlink", f.nvlink},
                 {"rentable", f.rentable},
                 {"max_price_USD", optional_number(f.max_price_USD)},
                 {"min_memory_GB", optional_number(f.min_memory_GB)},
                 {"vendor", f.vendor.empty() ? json(nullptr) : json(f.vendor)}};
  j["catalog_cards"] = matrix.catalog_cards;
  j["evaluations"] = matrix.evaluations;
  json rows = json::array();
  for (const auto& r : matrix.rows)
    rows.push_back(row_json(r, request.workload, totals));
  j["rows"] = std::move(rows);
  return j;
}

}  // namespace ftplan
