#include "render/matrix_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/format.hpp"
#include "parallel/layout.hpp"
#include "render/reason_words.hpp"
#include "render/table.hpp"
#include "workload/objective.hpp"

namespace ftplan {

namespace {

// How the fewest cards run: one card, or the sharding (and model-parallel layout).
std::string how(const Option& o) {
  if (o.count == 1) return "one card";
  const std::string sharding = sharding_label(o.sharding, o.shard_group);
  return o.layout.trivial() ? sharding : layout_label(o.layout) + ", " + sharding;
}

// "342.4 (304.8–472.6)": a figure and its range (the figure times the step's range factors).
std::string range_text(double value, double low, double high) {
  const int decimals = value < 10 ? 2 : 1;
  return fmt::format("{} ({}–{})", format_fixed(value, decimals),
                     format_fixed(value * low, decimals), format_fixed(value * high, decimals));
}

std::string filter_text(const MatrixFilter& f) {
  std::vector<std::string> parts;
  if (f.nvlink) parts.emplace_back("NVLink");
  if (f.rentable) parts.emplace_back("rentable");
  if (f.max_price_USD) parts.push_back(fmt::format("list price ≤ {} USD", *f.max_price_USD));
  if (f.min_memory_GB) parts.push_back(fmt::format("memory ≥ {} GB", *f.min_memory_GB));
  if (!f.vendor.empty()) parts.push_back("vendor " + f.vendor);
  return parts.empty() ? "" : fmt::format(" ({})", fmt::join(parts, ", "));
}

}  // namespace

void print_matrix(std::ostream& out, const MatrixRequest& request, const Matrix& m) {
  const Workload& w = request.workload;
  const bool totals = m.tokens > 0;
  const std::string title = fmt::format(
      "ftplan matrix — {} · {} on {} of {} cards{}; counts {}; global batch {}{}; sorted by {}",
      w.model->arch.name.empty() ? w.model->arch.id : w.model->arch.name, run_method_label(w),
      m.rows.size(), m.catalog_cards, filter_text(request.filter), fmt::join(m.counts, "/"),
      m.global_batch,
      totals ? fmt::format(", {} tokens ({} steps)", format_count_short(m.tokens),
                           group_digits(static_cast<std::int64_t>(m.steps)))
             : "",
      matrix_sort_name(m.sort));
  const std::string legend =
      "GB = 1e9 B. one card: fit's verdict and headroom (negative: shortfall) in GB; cards: the "
      "planner's fewest that fit with 10 % of each left; step and hours at that count, with their "
      "ranges";
  out << wrap_lines(title, text_width()) << "\n" << wrap_lines(legend, text_width()) << "\n\n";
  if (m.rows.empty()) {
    out << "no card of the catalog passes the filter\n";
    return;
  }
  const bool costs = totals && !request.prices.per_card_hour_USD.empty();
  std::vector<std::string> headers = {"card", "GB>", "one card", "cards>", "step s"};
  if (totals) headers.emplace_back("hours");
  if (costs) headers.emplace_back("cost USD>");
  headers.emplace_back("how");
  TextTable table(headers);
  std::vector<std::string> why;
  for (const auto& r : m.rows) {
    std::vector<std::string> cells = {r.gpu->id, format_fixed(to_GB(r.gpu->capacity()), 1),
                                      fmt::format("{} {}", verdict_name(r.one_card.verdict),
                                                  format_fixed(to_GB(r.one_card.headroom), 1))};
    if (r.fewest) {
      const Option& o = *r.fewest;
      cells.push_back(std::to_string(o.count));
      cells.push_back(range_text(o.step_seconds.value, o.range_low, o.range_high));
      if (totals) cells.push_back(range_text(o.time_to_train_hours, o.range_low, o.range_high));
      if (costs) cells.push_back(o.cost_USD ? format_fixed(*o.cost_USD, 0) : "–");
      cells.push_back(how(o));
    } else {
      cells.emplace_back("none");
      cells.emplace_back("–");
      if (totals) cells.emplace_back("–");
      if (costs) cells.emplace_back("–");
      cells.emplace_back("see below");
      why.push_back(fmt::format("{}: {}", r.gpu->id, word_reason(r.why_not)));
    }
    table.row(std::move(cells));
  }
  table.print(out);
  if (!why.empty()) {
    out << fmt::format("\nNo count up to {} holds the run:\n", m.counts.back());
    for (const auto& line : why)
      out << wrap_lines("- " + line, text_width()) << "\n";
  }
}

}  // namespace ftplan
