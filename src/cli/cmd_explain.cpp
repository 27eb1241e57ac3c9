// ftplan explain FIGURE: how a figure was derived — formula, inputs with values and units, source,
// and the figures it was computed from — for a run described as for fit, step and scale.
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "cli/perf_options.hpp"
#include "core/error.hpp"
#include "plan/explain.hpp"
#include "render/explain.hpp"
#include "render/json.hpp"
#include "render/reason_words.hpp"

namespace ftplan::cli {
namespace {

struct ExplainOptions {
  std::string figure;
  WorkloadOptions workload;
  PlacementOptions placement;
  CalibrationOptions calibration;
  double tokens = 0;
  double price_per_card_hour = -1;
  double price_per_kWh = -1;
  int depth = -1;
  bool list = false;
  bool json = false;
};

// The depth when --depth is not given: one level below a single figure; a group (e.g. "memory")
// lists its figures without following them.
int effective_depth(const ExplainOptions& o, std::size_t selected) {
  if (o.depth >= 0) return o.depth;
  return selected == 1 ? 1 : 0;
}

void check(const ExplainOptions& o, const CLI::App& app) {
  if (o.figure.empty() && !o.list)
    throw UserError(ErrorCode::kMissingKey,
                    "name a FIGURE to explain (e.g. memory.peak, or a group such as memory), or "
                    "give --list to see the figures of this run",
                    "figure");
  if (o.depth < -1 || o.depth > 16)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("--depth must be 0 to 16 levels, got {}", o.depth), "depth");
  // Written so that NaN fails too (every comparison with NaN is false).
  if (!(o.tokens >= 0 && o.tokens <= 1e16))
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("--tokens must be a number of tokens to train from 0 to 1e16, "
                                "got {}",
                                o.tokens),
                    "tokens");
  // A price, when given, is above zero (plan/runs.hpp price_problem).
  const auto check_price = [&](const char* option, const char* field, double value, double max) {
    const CLI::Option* given = app.get_option_no_throw(option);
    if (!given || given->count() == 0) return;
    if (const std::string problem = price_problem(value, max); !problem.empty())
      throw UserError(ErrorCode::kInvalidValue, fmt::format("{}: {}", option, problem), field);
  };
  check_price("--price-per-card-hour", "price_per_card_hour", o.price_per_card_hour,
              kMaxCardHourUSD);
  check_price("--price-per-kWh", "price_per_kWh", o.price_per_kWh, kMaxKWhUSD);
}

const bool registered_explain = register_command(
    {"explain",
     "How a figure was derived: formula, inputs, source, and the figures it was computed from",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<ExplainOptions>();
       app.add_option("figure,--figure", o->figure,
                      "Figure id (memory.peak, perf.step_seconds, ...) or a group (memory, perf, "
                      "comm, scale, rl, plan); --list shows them");
       o->workload.add_to(app);
       o->placement.add_to(app, true, true, true);
       o->calibration.add_to(app);
       app.add_option("--tokens", o->tokens,
                      "Tokens to train: adds the run's totals (plan.time_to_train_hours, "
                      "plan.card_hours, plan.energy_kWh)");
       app.add_option("--price-per-card-hour", o->price_per_card_hour,
                      "USD per card and hour (with --tokens: plan.cost_USD)");
       app.add_option("--price-per-kWh", o->price_per_kWh,
                      "USD per kWh, added to the cost (with --price-per-card-hour)");
       app.add_option("--depth", o->depth,
                      "Levels of the figures a figure was computed from to show (default 1 for "
                      "one figure, 0 for a group)");
       app.add_flag("--list", o->list, "List every figure of this run: id, value, what it is");
       app.add_flag("--json", o->json, "Print JSON");
       return [&ctx, o, &app] {
         check(*o, app);
         ExplainRequest request;
         request.workload = o->workload.build(ctx);
         request.placement = o->placement.build(ctx, request.workload);
         o->workload.resolve_rollouts(request.workload, request.placement);
         request.tokens_to_train = o->tokens;
         if (o->price_per_card_hour >= 0) request.prices.per_card_hour_USD = o->price_per_card_hour;
         if (o->price_per_kWh >= 0) request.prices.per_kWh_USD = o->price_per_kWh;
         // As step: calibration files that were given must include one for this card.
         o->calibration.for_gpu(ctx, *request.placement.gpu, true);
         Calibrations cal = o->calibration.load(ctx);
         const PlanningData data =
             PlanningData::load(ctx.catalog(), std::move(cal.efficiency), std::move(cal.links));
         const ExplainResult r = explain_placement(request, data);
         if (o->list) {
           if (o->json) {
             nlohmann::json j = workload_json(request.workload);
             j.update(placement_json(request.placement));
             j["figures"] = figure_list_json(r.trace);
             if (!r.step_reason.empty()) j["step_not_timed"] = word_reason(r.step_reason);
             print_json(ctx, "explain-list", std::move(j));
           } else {
             print_figure_list(ctx.out, r.trace, word_reason(r.step_reason));
           }
           return;
         }
         const auto figures = select_figures(r.trace, o->figure);
         const int depth = effective_depth(*o, figures.size());
         if (o->json) {
           nlohmann::json j = workload_json(request.workload);
           j.update(placement_json(request.placement));
           j["figure"] = o->figure;
           j["depth"] = depth;
           j["figures"] = explain_json(r.trace, figures, depth);
           print_json(ctx, "explain", std::move(j));
         } else {
           print_explain(ctx.out, r.trace, figures, depth);
         }
       };
     },
     74});

}  // namespace
}  // namespace ftplan::cli
