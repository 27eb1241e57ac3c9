// Packing a queue of small runs onto MIG cards: the fewest cards of one type whose valid MIG
// layouts hold every job, each job in its own instance (a job never spans instances or cards:
// NCCL is not supported with MIG).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "memory/fit.hpp"
#include "mig/fit.hpp"
#include "mig/layout.hpp"
#include "mig/rules.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// One experiment of the queue: `count` identical single-card jobs of `workload`.
struct PackJob {
  std::string name;
  Workload workload;
  int count = 1;
};

// Where the jobs of an experiment run.
enum class PackHome {
  kInstance,   // in a MIG instance: the smallest profile where the run fits
  kWholeCard,  // alone on a card with MIG off: it fits no profile smaller than the whole card
  kUnplaced,   // it does not fit one card: a multi-card run, which MIG instances cannot host
};
std::string_view pack_home_name(PackHome h);  // "mig-instance", "whole-card", "unplaced"

struct PackedExperiment {
  PackHome home = PackHome::kUnplaced;
  int profile = -1;           // kInstance: the profile (index into MigSpec::profiles)
  MigFitReport fit;           // the run in each profile
  MemoryEstimate whole_card;  // the run on the whole card with MIG off
  Reason reason;              // why this home, in one sentence
};

// One job on a card: in a MIG instance (`profile`, `start`), or alone with MIG off (profile -1).
struct PackedJob {
  int profile = -1;
  int start = 0;       // first memory slice of the instance
  int experiment = 0;  // index into the queue
  int job = 1;         // 1-based number of the job within its experiment
};

struct PackedCard {
  bool mig = true;              // false: one whole-card job, MIG off
  std::vector<int> counts;      // instances per profile (a valid layout); empty without MIG
  std::vector<PackedJob> jobs;  // by start slice
};

// The fewest cards whose valid layouts hold demand[p] instances of each profile p, found by an
// exact search (so the count is optimal), with the instance counts of each card.
struct CardCover {
  int cards = 0;
  int lower_bound = 0;  // the bound the search started from (slices, instances, per profile)
  long search_steps = 0;
  std::vector<std::vector<int>> per_card;  // counts per profile of each card (valid layouts)
};
CardCover fewest_cards(const MigCard& card, const std::vector<int>& demand);

struct PackResult {
  const GpuSpec* gpu = nullptr;
  std::vector<PackedExperiment> experiments;  // in queue order
  std::vector<PackedCard> cards;              // MIG cards first, then whole cards
  int mig_cards = 0;                          // cards running MIG instances
  int whole_cards = 0;                        // cards running one job with MIG off
  int lower_bound = 0;                        // for the MIG cards
  long search_steps = 0;
  int jobs_placed = 0;
  int jobs_unplaced = 0;
  // The comparison: every placed job alone on a whole card (no MIG).
  int cards_one_job_per_card = 0;
  std::vector<MigNote> notes;
  int total_cards() const { return mig_cards + whole_cards; }
};

// Each job goes into the smallest profile (MigCard::size_order) whose verdict is `fits`; a job
// that fits no profile smaller than the whole card runs alone with MIG off; a job that does not
// fit one card is left unplaced with the reason. The MIG cards are then the exact optimum of
// fewest_cards() over those profiles.
PackResult pack(const std::vector<PackJob>& jobs, const MigCard& card, const MigRules& rules);

}  // namespace ftplan

namespace ftplan {

// The profile rule in words, for the renderers (text and JSON state it with every packing).
std::string pack_profile_rule();
// The optimality claim in words.
std::string pack_optimality_statement(const PackResult& r, const MigCard& card);

}  // namespace ftplan
