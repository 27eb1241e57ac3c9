// One step of an online objective (GRPO, PPO, RLOO) as TRL's trainers run it, the parts in
// sequence: generate the step's completions with an inference engine (vLLM), move the trained
// weights into the engine, score the completions without gradient, train on them. Generation is
// timed by the generation model (infer/generation) on the cards that generate; scoring and
// training by the training evaluation (plan/evaluate) that this part extends.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/reason.hpp"
#include "core/units.hpp"
#include "infer/generation.hpp"
#include "workload/workload.hpp"

namespace ftplan {

struct Evaluation;
struct PlanningData;
class Trace;

// The parts of an online step, in the order they run.
enum class RlPart { kRollout, kWeightSync, kScoring, kTraining };
std::string_view rl_part_name(RlPart p);  // "rollout", "weight sync", "scoring", "training"

struct RlStep {
  bool online = false;  // the run generates its completions (an online objective)
  bool feasible = true;
  Reason reason;  // infeasible: why no rollout can run
  RolloutMode mode = RolloutMode::kColocated;
  const GpuSpec* rollout_gpu = nullptr;   // the cards that generate
  int rollout_cards = 0;                  // colocated: the training cards
  int engine_tp = 1;                      // cards one engine spans (tensor parallel)
  int engines = 0;                        // engines generating at once
  std::int64_t prompts = 0;               // per step, all engines
  std::int64_t group = 0;                 // completions per prompt
  std::int64_t sequences = 0;             // prompts × group
  int rounds = 1;                         // rollout batches per step (generation_rounds)
  std::int64_t sequences_per_engine = 0;  // the busiest engine's share of one round
  // The engine's memory split on one of its cards, and the sequences it decodes together: its KV
  // cache's limit, at most its share of the step.
  GenerationMemory engine_memory;
  std::int64_t concurrent = 0;
  int epochs = 1;       // passes over each generated batch
  RolloutTime rollout;  // the busiest engine's, all rounds
  // Weights into the engine each step: every weight in 16 bit (adapters merged into the base as
  // TRL does before it loads them), copied on the card (colocated, FSDP gathering them first) or
  // broadcast over the link to the engines' cards (separate).
  Bytes sync_bytes;
  Seconds weight_sync;
  Seconds sleep_wake;  // a sleeping colocated engine: its weights to host memory and back
  // Forward passes without gradient over the step's sequences (the policy's old log-probabilities,
  // the reference's, PPO's value and reward models'), and the rest of the training step (forward,
  // backward, update, communication) times the epochs, twice for PPO's value model.
  Seconds scoring;
  Seconds training;
  Seconds total;
  // Rollout and training overlap (RolloutSettings::async_rollout): total = the longer of rollout +
  // weight sync and scoring + training, not their sum.
  bool overlapped = false;
  RlPart bottleneck = RlPart::kRollout;     // the longest part (overlapped: the longer side)
  double completion_tokens_per_second = 0;  // all engines, over the whole step
  // The rollout cards were chosen (RolloutSettings::choices): among `choices_tried` card types
  // and counts.
  bool chosen = false;
  int choices_tried = 0;
};

// The online part of `training` (an evaluation of `w` on its placement). Not online: online false.
// A separate rollout with RolloutSettings::choices takes the card type and count of the least
// rollout_choice_score.
RlStep rl_step(const Workload& w, const Evaluation& training, const PlanningData& data);

// The online step's figures for explain (rl.*): the engine's KV cache and the sequences it decodes
// together, each part's time and the step's, with their formulas and inputs.
void trace_rl_step(const Workload& w, const RlStep& r, Trace& trace);

// What the choice of rollout cards minimises: the step time × the weighted cards of training and
// rollout (RolloutSettings: training_weight per training card, `rollout_weight` per rollout card).
double rollout_choice_score(const Workload& w, const RlStep& r, int training_cards,
                            double rollout_weight);

}  // namespace ftplan
