#include "plan/matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "workload/objective.hpp"

namespace ftplan {

namespace {

constexpr MatrixSort kSorts[] = {MatrixSort::kCards,  MatrixSort::kHeadroom, MatrixSort::kStep,
                                 MatrixSort::kTime,   MatrixSort::kCost,     MatrixSort::kPrice,
                                 MatrixSort::kMemory, MatrixSort::kName};

// The most cards one matrix searches per card type (the planner's counts are its own choice;
// this bounds a request's work).
constexpr int kMaxMatrixCards = 4096;
constexpr std::int64_t kMaxGlobalBatch = std::int64_t{1} << 24;  // as a runs file's global_batch
constexpr double kMaxTokens = 1e16;                              // as a runs file's tokens

// A row's figure for `sort`, smaller first; nothing: the row has no such figure (sorted last).
std::optional<double> sort_value(const MatrixRow& r, MatrixSort sort) {
  switch (sort) {
    case MatrixSort::kCards:
      if (!r.fewest) return std::nullopt;
      return static_cast<double>(r.fewest->count);
    case MatrixSort::kHeadroom:
      return -to_GB(r.one_card.headroom);
    case MatrixSort::kStep:
      if (!r.fewest) return std::nullopt;
      return r.fewest->step_seconds.value;
    case MatrixSort::kTime:
      if (!r.fewest) return std::nullopt;
      return r.fewest->time_to_train_hours;
    case MatrixSort::kCost:
      if (!r.fewest) return std::nullopt;
      return r.fewest->cost_USD;
    case MatrixSort::kPrice:
      return r.gpu->price_USD.value;
    case MatrixSort::kMemory:
      return -to_GB(r.gpu->capacity());
    case MatrixSort::kName:
      return 0.0;  // by id, below
  }
  return std::nullopt;
}

void check_request(const MatrixRequest& q, const PlanningData& data) {
  if (is_online(q.workload))
    throw UserError(ErrorCode::kUnsupported,
                    "the matrix takes offline objectives (sft, preference, reward); an online "
                    "objective's rollout cards are planned with a runs file (ftplan plan)",
                    "method");
  if (q.max_cards < 1 || q.max_cards > kMaxMatrixCards)
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("max_cards must be 1 to {} cards, got {}", kMaxMatrixCards, q.max_cards),
        "max_cards");
  if (q.global_batch < 1 || q.global_batch > kMaxGlobalBatch)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("global_batch must be 1 to {} sequences, got {}", kMaxGlobalBatch,
                                q.global_batch),
                    "global_batch");
  if (q.fix_micro_batch && q.global_batch % q.workload.micro_batch != 0)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("global_batch {} is not a multiple of micro_batch {}",
                                q.global_batch, q.workload.micro_batch),
                    "global_batch");
  // Written so that NaN fails too.
  if (!(q.tokens >= 0 && q.tokens <= kMaxTokens))
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("tokens must be 0 to {} tokens to train, got {}", kMaxTokens, q.tokens),
        "tokens");
  for (const auto& [id, price] : q.prices.per_card_hour_USD)
    if (const std::string problem = price_problem(price, kMaxCardHourUSD); !problem.empty())
      throw UserError(ErrorCode::kInvalidValue, fmt::format("{}: {}", id, problem),
                      "price_per_card_hour");
  if (q.prices.per_kWh_USD)
    if (const std::string problem = price_problem(*q.prices.per_kWh_USD, kMaxKWhUSD);
        !problem.empty())
      throw UserError(ErrorCode::kInvalidValue, problem, "price_per_kWh");
  const MatrixFilter& f = q.filter;
  if (f.max_price_USD && !(*f.max_price_USD > 0 && std::isfinite(*f.max_price_USD)))
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("max_price must be above 0 USD, got {}", *f.max_price_USD),
                    "max_price");
  if (f.min_memory_GB && !(*f.min_memory_GB > 0 && std::isfinite(*f.min_memory_GB)))
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("min_memory must be above 0 GB, got {}", *f.min_memory_GB),
                    "min_memory");
  if (!f.vendor.empty()) {
    std::set<std::string> vendors;
    for (const auto& g : data.catalog->gpus())
      vendors.insert(g.vendor);
    if (!vendors.count(f.vendor))
      throw_unknown_name("vendor", "vendor", f.vendor, {vendors.begin(), vendors.end()});
  }
  if ((q.sort == MatrixSort::kTime || q.sort == MatrixSort::kCost) && q.tokens <= 0)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("sorting by {} needs how much the run trains: give tokens, or "
                                "epochs with dataset_tokens",
                                matrix_sort_name(q.sort)),
                    "sort");
  if (q.sort == MatrixSort::kCost && q.prices.per_card_hour_USD.empty())
    throw UserError(ErrorCode::kInvalidValue,
                    "sorting by cost needs rental prices: give price_per_card_hour for the cards "
                    "(ID=USD)",
                    "sort");
}

}  // namespace

std::string_view matrix_sort_name(MatrixSort s) {
  switch (s) {
    case MatrixSort::kCards:
      return "cards";
    case MatrixSort::kHeadroom:
      return "headroom";
    case MatrixSort::kStep:
      return "step";
    case MatrixSort::kTime:
      return "time";
    case MatrixSort::kCost:
      return "cost";
    case MatrixSort::kPrice:
      return "price";
    case MatrixSort::kMemory:
      return "memory";
    case MatrixSort::kName:
      return "name";
  }
  return "?";
}

std::vector<std::string> matrix_sort_names() {
  std::vector<std::string> out;
  for (MatrixSort s : kSorts)
    out.emplace_back(matrix_sort_name(s));
  return out;
}

MatrixSort parse_matrix_sort(std::string_view name) {
  for (MatrixSort s : kSorts)
    if (matrix_sort_name(s) == name) return s;
  throw_unknown_name("sort key", "sort", name, matrix_sort_names());
}

std::string_view matrix_verdict_name(MatrixVerdict v) {
  switch (v) {
    case MatrixVerdict::kOneCard:
      return "one-card";
    case MatrixVerdict::kMoreCards:
      return "more-cards";
    case MatrixVerdict::kNoCount:
      return "no-count";
  }
  return "?";
}

std::vector<int> matrix_counts(int max_cards) {
  std::vector<int> out;
  for (int n = 1; n <= max_cards; n *= 2)
    out.push_back(n);
  if (out.back() != max_cards) out.push_back(max_cards);
  return out;
}

bool passes_filter(const GpuSpec& gpu, const MatrixFilter& f, const Prices& prices) {
  if (f.nvlink && gpu.nvlink.kind == LinkKind::kNone) return false;
  if (f.rentable && !prices.per_card_hour_USD.count(gpu.id)) return false;
  if (f.max_price_USD && !(gpu.price_USD.value && *gpu.price_USD.value <= *f.max_price_USD))
    return false;
  if (f.min_memory_GB && to_GB(gpu.capacity()) < *f.min_memory_GB) return false;
  if (!f.vendor.empty() && gpu.vendor != f.vendor) return false;
  return true;
}

void sort_matrix(std::vector<MatrixRow>& rows, MatrixSort sort) {
  const auto key = [sort](const MatrixRow& r) {
    constexpr double kLast = std::numeric_limits<double>::infinity();
    const std::optional<double> v = sort_value(r, sort);
    // kCards: the fewest cards, then the faster step.
    const double then = sort == MatrixSort::kCards && r.fewest ? r.fewest->step_seconds.value : 0;
    return std::make_tuple(!v.has_value(), v.value_or(kLast), then);
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const MatrixRow& a, const MatrixRow& b) {
    if (sort == MatrixSort::kName) return a.gpu->id < b.gpu->id;
    return key(a) < key(b);
  });
}

Matrix evaluate_matrix(const MatrixRequest& request, const PlanningData& data) {
  check_request(request, data);
  Matrix out;
  out.sort = request.sort;
  out.global_batch = request.global_batch;
  out.tokens = request.tokens;
  out.counts = matrix_counts(request.max_cards);
  out.catalog_cards = data.catalog->gpus().size();

  // The run as a runs file would state it, searched by the planner on the filtered cards.
  RunsFile file;
  file.file = "matrix";
  file.counts = out.counts;
  file.allow_mig = false;  // whole cards: the fewest of each type
  file.prices = request.prices;
  for (const auto& g : data.catalog->gpus())
    if (passes_filter(g, request.filter, request.prices)) file.gpus.push_back(&g);
  PlannedRun run;
  run.name = "matrix";
  run.workload = request.workload;
  if (request.fix_micro_batch) run.micro_batch = request.workload.micro_batch;
  if (request.fix_recompute || request.workload.recompute_layers > 0)
    run.recompute = request.workload.recompute;
  run.global_batch = request.global_batch;
  run.tokens = request.tokens;
  file.runs.push_back(run);
  if (request.tokens > 0) out.steps = file.runs.front().steps();
  if (file.gpus.empty()) return out;

  PlanOptions options;
  options.alternatives = 0;
  options.fleet = false;
  const Plan plan = make_plan(file, data, options);
  out.evaluations = plan.evaluations;
  // One card, as `ftplan fit` evaluates it: the run's own micro-batch, recompute and accumulation.
  const Workload w = planned_workload(file.runs.front(), data);
  for (const auto& pg : plan.runs.front().per_gpu) {
    MatrixRow row;
    row.gpu = pg.gpu;
    Placement one;
    one.gpu = pg.gpu;
    one.count = 1;
    one.sharding = Sharding::kNone;
    row.one_card = estimate_memory(w, one);
    row.fewest = pg.minimum;
    row.why_not = pg.why_not;
    row.verdict = !pg.minimum             ? MatrixVerdict::kNoCount
                  : pg.minimum->count > 1 ? MatrixVerdict::kMoreCards
                                          : MatrixVerdict::kOneCard;
    if (const auto it = request.prices.per_card_hour_USD.find(pg.gpu->id);
        it != request.prices.per_card_hour_USD.end())
      row.rental_USD_per_card_hour = it->second;
    out.rows.push_back(std::move(row));
  }
  sort_matrix(out.rows, request.sort);
  return out;
}

}  // namespace ftplan
