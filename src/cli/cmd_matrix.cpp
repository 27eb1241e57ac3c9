// ftplan matrix: one run (fit's options without the card) on every card of the catalog, or those a
// filter keeps: the verdict on one card, the fewest cards, the step time, time and cost to train.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "cli/perf_options.hpp"
#include "cli/runs_options.hpp"
#include "core/error.hpp"
#include "plan/matrix.hpp"
#include "render/matrix_json.hpp"
#include "render/matrix_text.hpp"

namespace ftplan::cli {
namespace {

struct MatrixCliOptions {
  WorkloadOptions workload;
  CalibrationOptions calibration;
  long long global_batch = 64;
  double tokens = 0;
  double epochs = 0;
  double dataset_tokens = 0;
  int max_cards = 8;
  std::vector<std::string> prices;  // ID=USD
  double price_per_kWh = 0;
  bool nvlink = false;
  bool rentable = false;
  double max_price = 0;
  double min_memory = 0;
  std::string vendor;
  std::string sort = "cards";
  bool json = false;
};

bool given(const CLI::App& app, const char* option) {
  const CLI::Option* o = app.get_option_no_throw(option);
  return o != nullptr && o->count() > 0;
}

// --price-per-card-hour ID=USD: the card (as --gpu names it) and its rental price.
void add_price(Context& ctx, Prices& prices, const std::string& item) {
  const auto eq = item.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("price_per_card_hour takes CARD=USD (e.g. h100-sxm=2.5), got '{}'", item),
        "price_per_card_hour");
  const GpuSpec& gpu = [&]() -> const GpuSpec& {
    try {
      return ctx.resolve_gpu(item.substr(0, eq));
    } catch (const UserError& e) {
      // Named by this option, with the closest card ids.
      throw UserError(e.code(), fmt::format("price_per_card_hour: {}", e.what()),
                      "price_per_card_hour", e.suggestions());
    }
  }();
  const std::string number = item.substr(eq + 1);
  char* end = nullptr;
  errno = 0;
  const double usd = std::strtod(number.c_str(), &end);
  if (errno != 0 || end != number.c_str() + number.size() || !std::isfinite(usd))
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("price_per_card_hour {}: '{}' is not a number of USD", gpu.id, number),
        "price_per_card_hour");
  prices.per_card_hour_USD[gpu.id] = usd;
}

MatrixRequest build_request(Context& ctx, const MatrixCliOptions& o, const CLI::App& app) {
  MatrixRequest q;
  q.workload = o.workload.build(ctx);
  q.fix_micro_batch = given(app, "--micro-batch");
  q.fix_recompute = given(app, "--recompute");
  q.global_batch = o.global_batch;
  const auto optional = [&](const char* option, double value) {
    return given(app, option) ? std::optional<double>(value) : std::nullopt;
  };
  q.tokens = tokens_to_train(optional("--tokens", o.tokens), optional("--epochs", o.epochs),
                             optional("--dataset-tokens", o.dataset_tokens));
  q.max_cards = o.max_cards;
  for (const auto& item : o.prices)
    add_price(ctx, q.prices, item);
  q.prices.per_kWh_USD = optional("--price-per-kWh", o.price_per_kWh);
  q.filter.nvlink = o.nvlink;
  q.filter.rentable = o.rentable;
  q.filter.max_price_USD = optional("--max-price", o.max_price);
  q.filter.min_memory_GB = optional("--min-memory", o.min_memory);
  q.filter.vendor = o.vendor;
  q.sort = parse_matrix_sort(o.sort);
  if (q.filter.rentable && q.prices.per_card_hour_USD.empty())
    throw UserError(ErrorCode::kInvalidValue,
                    "rentable keeps the cards with a rental price: give price_per_card_hour "
                    "CARD=USD for each card you can rent",
                    "rentable");
  return q;
}

const bool registered_matrix = register_command(
    {"matrix",
     "Every card at once: one run on each card of the catalog (or a filter of it), sortable",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<MatrixCliOptions>();
       o->workload.add_to(app);
       app.add_option("--global-batch", o->global_batch,
                      "Sequences per optimizer step over all cards, for the planner's search of "
                      "the fewest cards (default 64, as in a runs file)");
       app.add_option("--tokens", o->tokens,
                      "Tokens to train: adds the time (and cost) to train per card");
       app.add_option("--epochs", o->epochs, "Epochs over --dataset-tokens (instead of --tokens)");
       app.add_option("--dataset-tokens", o->dataset_tokens,
                      "Tokens in the dataset (with --epochs)");
       app.add_option("--max-cards", o->max_cards,
                      "Most cards of one type the planner tries: 1, 2, 4, ... up to it (default "
                      "8)");
       app.add_option("--price-per-card-hour", o->prices,
                      "Rental price of a card, CARD=USD per card-hour (repeatable): the cost to "
                      "train (with --tokens) and the cards --rentable keeps");
       app.add_option("--price-per-kWh", o->price_per_kWh,
                      "USD per kWh, added to the cost of cards with a rental price");
       app.add_flag("--nvlink", o->nvlink,
                    "Only cards joined by NVLink (bridge or switch; AMD's Infinity Fabric too)");
       app.add_flag("--rentable", o->rentable,
                    "Only cards with a rental price (--price-per-card-hour)");
       app.add_option("--max-price", o->max_price,
                      "Only cards whose list price (price_USD in data/gpus) is at most this many "
                      "USD; cards without a list price are left out");
       app.add_option(
           "--min-memory", o->min_memory,
           "Only cards with at least this much memory, GB (1e9 B) as the driver reports");
       app.add_option("--vendor", o->vendor, "Only cards of this vendor (nvidia, amd)");
       app.add_option("--sort", o->sort,
                      "Order of the rows: cards (fewest cards, then step time; default) | "
                      "headroom | step | time | cost | price | memory | name");
       o->calibration.add_to(app);
       app.add_flag("--json", o->json,
                    "Print JSON: {\"rows\": [...]} per card (memory in GB = 1e9 B)");
       return [&ctx, o, &app] {
         const MatrixRequest request = build_request(ctx, *o, app);
         const PlanningData data = planning_data(ctx, o->calibration);
         const Matrix matrix = evaluate_matrix(request, data);
         if (o->json) {
           print_json(ctx, "matrix", matrix_json(request, matrix));
         } else {
           print_matrix(ctx.out, request, matrix);
         }
       };
     },
     71});

}  // namespace
}  // namespace ftplan::cli
