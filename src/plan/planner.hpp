// The planner: for each planned run, every candidate card type × count × strategy × micro-batch ×
// recompute (and MIG instance), evaluated with the memory, step, communication and MIG models;
// infeasible ones kept with their reason; a recommendation per run and card type, and the fleet.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mig/pack.hpp"
#include "plan/evaluate.hpp"
#include "plan/run_totals.hpp"
#include "plan/runs.hpp"

namespace ftplan {

enum class RankBy { kCardHours, kTime, kCost, kEnergy };
std::string_view rank_by_name(RankBy r);
RankBy parse_rank_by(std::string_view name);

// The first constraint an infeasible option failed. The search records only this; the sentence a
// user reads is written (option_reason) for the few options a plan keeps.
enum class Constraint { kNone, kGlobalBatch, kMemory, kPowerLimit, kStepTime, kDeadline };

// One evaluated configuration of a run.
struct Option {
  const GpuSpec* gpu = nullptr;
  int count = 1;
  Sharding sharding = Sharding::kNone;
  int shard_group = 0;  // hybrid sharding: the cards of each group (Placement::shard_group)
  CommStrategy strategy = CommStrategy::kSingleCard;
  const MigProfile* mig = nullptr;
  std::string_view topology;  // preset name (owned by PlanningData)
  int nodes = 1;              // the nodes the cards span, of cards_per_node each
  int cards_per_node = 1;
  std::int64_t micro_batch = 1;
  std::int64_t grad_accum = 1;
  Recompute recompute = Recompute::kFull;
  Layout layout;  // model parallelism (all 1: each card holds the whole model)
  // An online run's separate rollout: the cards that generate (chosen by the planner with
  // `rollout_gpu: auto`, else the runs file's); null: none apart from the training cards.
  const GpuSpec* rollout_gpu = nullptr;
  int rollout_cards = 0;
  bool rollout_chosen = false;
  int rollout_choices_tried = 0;  // chosen: the card types × counts tried
  // An online run's step in its parts (rollout, weight sync, scoring, training) where it was timed;
  // shared, as options are copied often and only online runs have one.
  std::shared_ptr<const RlStep> rl;

  bool feasible = false;
  Constraint failed = Constraint::kNone;
  Reason reason;  // infeasible: the first constraint that failed

  Verdict verdict = Verdict::kDoesNotFit;
  Bytes model_states;  // per card
  Bytes peak;          // per card
  Bytes capacity;      // per card (or instance)
  Bytes free;          // capacity − model states (the seed's "free")
  Seconds step_seconds;
  Seconds exposed_seconds;           // communication not hidden behind compute, per step
  Bytes received_per_card_per_step;  // traffic per card
  double scaling_efficiency = 1;
  double tokens_per_second = 0;  // all cards
  double time_to_train_hours = 0;
  // How far measured runs scatter around the step model (the efficiency table's fit record):
  // the time figures times these factors give their ranges.
  double range_low = 1, range_high = 1;
  double card_hours = 0;           // count × time (MIG: × the instance's share of the card)
  std::optional<double> cost_USD;  // rental (prices.per_card_hour_USD) + energy (per_kWh_USD)
  double energy_kWh = 0;  // count × TDP × time: an upper bound (cards at their power limit)
};

struct RunPlan {
  const PlannedRun* run = nullptr;
  std::optional<Option> recommendation;
  Reason recommendation_reason;
  // The best option on a card of another architecture when its range of the ranked figure
  // overlaps the recommendation's: the model cannot tell the two cards apart ("too close to
  // call"). Cards of one architecture share the model's error, so their order stands.
  std::optional<Option> close_call;
  Reason close_call_reason;
  // Per candidate card type: the fewest cards that fit (fastest settings at that count) and the
  // fastest option of that type; absent where nothing fits.
  struct PerGpu {
    const GpuSpec* gpu = nullptr;
    std::optional<Option> minimum;
    std::vector<Option> minimum_options;  // at the minimum count: the fastest option per sharding
    std::optional<Option> fastest;
    std::optional<Option> best_mig;  // the smallest MIG instance that holds the run, if any
    Reason why_not;                  // nothing fits: the closest miss
  };
  std::vector<PerGpu> per_gpu;
  std::vector<Option>
      alternatives;              // the best feasible options by the ranking, recommendation first
  std::vector<Option> rejected;  // per card type and count: why the fastest settings failed
  std::size_t evaluations = 0;
};

// How many cards of one type cover all runs at once: one job per card where a run fits one card,
// MIG instances where small runs can share a card, several cards for runs that need them.
struct FleetEntry {
  const GpuSpec* gpu = nullptr;
  int cards = 0;              // total
  int cards_without_mig = 0;  // the same runs, one job per whole card
  int mig_cards = 0;
  int multi_card_runs_cards = 0;
  std::vector<std::string> unplaced;  // runs this card type cannot hold at any allowed count
};

struct Plan {
  std::vector<RunPlan> runs;
  std::vector<FleetEntry> fleet;
  RankBy rank_by = RankBy::kCardHours;
  std::size_t evaluations = 0;
};

struct PlanOptions {
  RankBy rank_by = RankBy::kCardHours;
  std::size_t alternatives = 8;
  bool fleet = true;
};

// The ranked figure of an option (card-hours, hours, USD or kWh) and its range: every one of them
// is proportional to the time to train, so the range scales with the step's.
double rank_value(const Option& o, RankBy r);
// Whether `b`'s range of the ranked figure overlaps `a`'s.
bool ranges_overlap(const Option& a, const Option& b, RankBy r);

// How an option's cards split the run, for reasons: its model-parallel degrees ("tp 4 · pp 2")
// and then `strategy` (the data-parallel strategy's name in the reader's words) where several
// replicas train together; the strategy alone without model parallelism.
std::string option_split(const Option& o, std::string_view strategy);

// Evaluates every candidate of every run. Never throws for infeasible configurations; a UserError
// only for a request that makes no sense (rank by cost without prices).
Plan make_plan(const RunsFile& file, const PlanningData& data, const PlanOptions& options = {});

// ---- The search's parts, public for the benchmark and for explain ----------------------------
// make_plan prepares each run once, each card type once per run, and then evaluates every
// placement (count × strategy × variant) with evaluate_option, which does not allocate.

// The run's workload with the runtime overheads counted (a runs file's workloads carry none).
Workload planned_workload(const PlannedRun& run, const PlanningData& data);

// One searched (micro-batch, recompute) variant of a run: its workload, activation profile and op
// list, the op list prepared for the default efficiencies and for each calibration.
struct PreparedVariant {
  Workload workload;
  ActivationProfile activations;
  StepOps ops;
  PreparedStep prepared_default;
  std::vector<PreparedStep> prepared_calibrated;  // parallel to PlanningData::calibrations
};

// What the search computes once per run: the model states of one replica and the variants.
struct PreparedRun {
  const PlannedRun* run = nullptr;
  ModelStates replica;
  std::vector<PreparedVariant> variants;
  mutable std::map<StageKey, StepOps> stage_ops;  // layouts' stages, filled as built
};
PreparedRun prepare_run(const PlannedRun& run, const PlanningData& data);

// One card type, or one MIG instance of it, for a prepared run: the device and, per variant, the
// time of a step on one card. A card's step time does not depend on how many cards join or how
// the states are split (ComputeTimes applies the sharded optimizer update), so it is computed once
// here and shared by every count and strategy.
struct PreparedCard {
  const GpuSpec* gpu = nullptr;
  const MigProfile* mig = nullptr;
  Device device;
  std::vector<StepEstimate> steps;  // parallel to PreparedRun::variants
  CardPrices prices;
  mutable std::map<StageKey, StepEstimate> stage_steps;  // layouts' stages, filled as timed
};
PreparedCard prepare_card(const PreparedRun& run, const GpuSpec& gpu, const MigProfile* mig,
                          const PlanningData& data, const RunsFile& file);

// The strategies tried on `count` cards: none on one card; DDP and FSDP (a sharded frozen base
// for LoRA/QLoRA); for a full fine-tune also ZeRO-2 (it dominates ZeRO-1).
std::vector<Sharding> candidate_shardings(const Workload& w, const Topology& t);

// One placement: a prepared card, how many, how the states are split, and the topology that
// joins the cards (built with build_topology for the card and count).
struct Candidate {
  const PreparedCard* card = nullptr;
  int count = 1;
  Sharding sharding = Sharding::kNone;
  const Topology* topology = nullptr;
  std::string_view topology_name;  // the preset's name, owned by PlanningData
  Layout layout;                   // model parallelism (trivial: data parallel only)
  int shard_group = 0;             // hybrid sharding: one node's data-parallel cards
  // The layout's stage states (layout_states) when computed for it; null: computed when needed.
  const LayoutStates* layout_states = nullptr;
};
// The model-parallel layouts the planner tries for `w` on `count` cards of topology `t`, as a
// practitioner prunes them: tensor parallelism in powers of two within an NVLink domain, pipeline
// stages in powers of two (each also interleaved with two model chunks), context parallelism
// only for sequences of 16k tokens or more, expert parallelism for MoE models; each one dividing
// the model and the cards (check_layout). The trivial layout (data parallel only) is not among
// them.
std::vector<Layout> candidate_layouts(const Workload& w, int count, const Topology& t);
// The preset name `t` was built from, as PlanningData holds it (outlives the Topology).
std::string_view topology_name(const Topology& t, const PlanningData& data);

// Evaluates variant `variant` of `run` on `c`: memory per card, the step with communication and
// overlap, time to train, card-hours, energy and cost; an infeasible option names the constraint
// that failed (`failed`) and leaves `reason` empty. Allocation-free: the planner's hot path.
Option evaluate_option(const PreparedRun& run, std::size_t variant, const Candidate& c,
                       const PlanningData& data, const RunsFile& file);
// The reason for an option evaluate_option found infeasible.
Reason option_reason(const Option& o, const PreparedRun& run, const Candidate& c,
                     const RunsFile& file);

}  // namespace ftplan
