// Every card at once: one run evaluated on every card of the catalog (or those a filter keeps).
// Per card: fit's verdict on one card with its headroom (or shortfall), the fewest cards of that
// type that hold the run (the planner's own search, make_plan), the step time at that count with
// its range, and, where the run says how much it trains, the time and cost to train.
// Core library: no I/O; the CLI (`ftplan matrix`) and the API (`POST /api/matrix`) render it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memory/fit.hpp"
#include "plan/planner.hpp"

namespace ftplan {

// Which cards of the catalog the matrix keeps; every condition given must hold.
struct MatrixFilter {
  // Cards joined by a card-to-card link beyond PCIe: NVLink (bridge or switch), or AMD's Infinity
  // Fabric, which the catalog models the same way (NvlinkSpec).
  bool nvlink = false;
  // Cards with a rental price per card-hour (MatrixRequest::prices).
  bool rentable = false;
  // Cards whose list price (price_USD in data/gpus) is at most this many USD; cards without a
  // list price are left out.
  std::optional<double> max_price_USD;
  // Cards whose memory as the driver reports it is at least this many GB (1e9 B).
  std::optional<double> min_memory_GB;
  // Cards of this vendor (data/gpus `vendor`: nvidia, amd); empty: any.
  std::string vendor;
};

// The columns the matrix sorts by. kCards: the fewest cards, then the step time; kHeadroom and
// kMemory: the largest first; the others the smallest first. A card without the figure comes
// last; ties keep the catalog's order.
enum class MatrixSort { kCards, kHeadroom, kStep, kTime, kCost, kPrice, kMemory, kName };
std::string_view matrix_sort_name(MatrixSort s);
std::vector<std::string> matrix_sort_names();
// An unknown name is a UserError (field `sort`) naming the closest.
MatrixSort parse_matrix_sort(std::string_view name);

// The run, as `ftplan fit` takes it without the card, and the planner's keys for its search.
struct MatrixRequest {
  // The run as fit builds it (micro-batch, recompute and gradient accumulation as given): the
  // one-card verdict is fit's for this workload.
  Workload workload;
  // The planner searches micro-batch and recompute unless the run fixes them (a runs file's
  // micro_batch and recompute keys): fixed ones are workload.micro_batch and .recompute.
  bool fix_micro_batch = false;
  bool fix_recompute = false;
  std::int64_t global_batch = 64;  // sequences per optimizer step, all cards (runs file default)
  double tokens = 0;               // tokens to train (0: not stated: no time or cost to train)
  int max_cards = 8;  // the counts searched: powers of two up to it, and it (planner's 1/2/4/8)
  Prices prices;      // rental prices per card-hour (and per kWh), as a runs file's prices
  MatrixFilter filter;
  MatrixSort sort = MatrixSort::kCards;
};

// The counts the planner tries for `max_cards`: 1, 2, 4, ... up to it, and it.
std::vector<int> matrix_counts(int max_cards);

// What the matrix says about one card type. The planner takes a count when the run fits it with
// at least 10 % of each card left (fit's `fits`; a `tight` card is not enough), its step can be
// timed and the global batch divides over the cards.
enum class MatrixVerdict {
  kOneCard,    // one card holds the run
  kMoreCards,  // the fewest cards that hold it are more than one
  kNoCount,    // no count up to max_cards holds it (why_not says why)
};
std::string_view matrix_verdict_name(MatrixVerdict v);  // one-card, more-cards, no-count

struct MatrixRow {
  const GpuSpec* gpu = nullptr;
  MemoryEstimate one_card;       // estimate_memory on one whole card: `ftplan fit`'s figures
  std::optional<Option> fewest;  // the planner's fewest cards (RunPlan::PerGpu::minimum)
  Reason why_not;                // no count holds the run: the planner's reason
  MatrixVerdict verdict = MatrixVerdict::kNoCount;
  std::optional<double> rental_USD_per_card_hour;
};

struct Matrix {
  std::vector<MatrixRow> rows;    // sorted by `sort`
  std::size_t catalog_cards = 0;  // before the filter
  std::vector<int> counts;        // searched
  MatrixSort sort = MatrixSort::kCards;
  std::int64_t global_batch = 64;
  double tokens = 0;
  double steps = 0;  // optimizer steps to train (0 without tokens)
  std::size_t evaluations = 0;
};

// Whether `gpu` passes `f` (prices: the rental prices the run was given).
bool passes_filter(const GpuSpec& gpu, const MatrixFilter& f, const Prices& prices);

// The run on every card of `data.catalog` that passes the filter. A UserError for a request that
// makes no sense (a global batch that is not a multiple of a fixed micro-batch, a count or price
// out of range, sorting by time without tokens); a card that holds nothing is a row, not an error.
// Online objectives (grpo, ppo, rloo) are a UserError: their rollouts are planned with a runs file.
Matrix evaluate_matrix(const MatrixRequest& request, const PlanningData& data);

// Sorts `rows` by `sort` (stable: ties keep their order).
void sort_matrix(std::vector<MatrixRow>& rows, MatrixSort sort);

}  // namespace ftplan
