// What a run optimises, as the analyses read it: how many sequences each example trains through,
// whether a frozen reference model scores them, and which forward passes run without gradient.
// One row per Objective (objective.cpp); memory, operations and the front ends read these traits
// and never compare Objective values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/choices.hpp"
#include "workload/lengths.hpp"

namespace ftplan {

class StrictMap;

struct Workload;

struct ObjectiveTraits {
  Objective objective;
  std::string_view label;     // "DPO"
  int sequences_per_example;  // sequences through the forward and backward pass per example
  bool reference;             // compares against a frozen reference model's log-probabilities
  // Forward passes without gradient per trained micro-batch, each over as many tokens: the
  // reference's (unless its log-probabilities are precomputed) and the policy's own (KTO's KL
  // estimate on mismatched pairs).
  int reference_passes;
  int policy_no_grad_passes;
  std::string_view source;
  // Online objectives: the policy generates the completions it trains on (rollouts), each step.
  bool online = false;
  // A trained value model (PPO's critic, the policy's architecture with a scalar head) and a frozen
  // reward model scoring the completions (GRPO and RLOO score with reward functions by default).
  bool value_model = false;
  bool reward_model = false;
  // Defaults of the online objectives' settings (Workload::rollout): completions per prompt, the
  // KL coefficient (0: no reference model loaded) and the passes over each generated batch.
  std::int64_t default_group_size = 1;
  double default_kl = 0;
  int default_epochs = 1;
  // The trained model ends in a one-output score head, not the language-model head (a reward
  // model): Model::with_score_head.
  bool score_head = false;
};
const ObjectiveTraits& objective_traits(Objective o);

// The model `w` trains: its model as given, or with a score head for an objective that has one
// (a reward model). Call once the model and the objective are set.
void use_objective_model(Workload& w);

// A `--method` value: an adapter method (supervised fine-tuning with it) or an objective, whose
// adapter comes from `--adapter` (a full fine-tune by default).
struct RunMethod {
  Objective objective = Objective::kSft;
  std::optional<Method> method;  // given by the name itself (SFT methods)
};
RunMethod parse_run_method(std::string_view name, std::string_view field = "method");
// The objective and the adapter method of `--method NAME [--adapter ADAPTER]` (adapter empty: not
// given; a full fine-tune for an objective). An adapter beside an adapter method is a UserError on
// `adapter_field`, as is `precompute_reference` for an objective without a reference model.
struct ObjectiveAndMethod {
  Objective objective;
  Method method;
};
ObjectiveAndMethod resolve_run_method(std::string_view name, std::string_view adapter,
                                      bool precompute_reference,
                                      std::string_view method_field = "method",
                                      std::string_view adapter_field = "adapter",
                                      std::string_view precompute_field = "precompute_ref");
// The settings of an online objective's rollout by their runs-file keys (RolloutSettings), as runs
// files and trainer files name them: group_size, prompts_per_step, prompt_len, completion_len,
// completion_len_mean, generation_rounds, rollout, rollout_tp, kl, rl_epochs, engine_memory,
// sleep, rollout_gpu, rollout_gpus, async_rollout.
const std::vector<std::string>& rollout_keys();
// Reads those keys of a run (a runs file's, a measured run's) into `w.rollout`, each range checked
// at its key, and sets the trained sequence (set_online_sequence). The card names (rollout_gpu)
// are left to the caller. A rollout key beside an objective that does not generate, or seq,
// seq_mean or lengths beside one that does, fails at its key. Returns whether `w` is online.
bool read_rollout_settings(StrictMap& r, Workload& w);
// Every name parse_run_method takes: the adapter methods, then the objectives but "sft".
const std::vector<std::string>& run_method_names();

// The run's method as `--method` takes it: "lora" for supervised LoRA, "dpo" for DPO (its
// adapter is then `method_name(w.method)`).
std::string run_method_name(const Workload& w);
// Short, for one-line titles: "lora", "dpo (lora)", "dpo (full)".
std::string run_method_short(const Workload& w);
// For people: "LoRA", "DPO with LoRA", "DPO, full fine-tune".
std::string run_method_label(const Workload& w);

// A frozen copy of the model is held beside the policy: the objective needs reference
// log-probabilities, they are not precomputed, and the method trains the weights themselves (with
// adapters the reference is the same base with the adapters switched off: no second copy).
bool holds_reference_copy(const Workload& w);
// Forward passes without gradient per trained micro-batch, each over the micro-batch's tokens:
// the reference's (none when precomputed) and the policy's own (KTO's KL batch), and both.
int reference_forward_passes(const Workload& w);
int policy_no_grad_passes(const Workload& w);
int no_grad_forward_passes(const Workload& w);

// ---- online objectives (GRPO, PPO, RLOO) --------------------------------------------------------
bool is_online(const Workload& w);
// The settings as the run uses them, defaults filled in.
std::int64_t group_size(const Workload& w);
double kl_coefficient(const Workload& w);
int rl_epochs(const Workload& w);
// Whether the reference model is needed: objectives with one, unless its log-probabilities are
// precomputed or an online objective's KL coefficient is 0 (TRL then loads none).
bool uses_reference(const Workload& w);
// Frozen models beside the policy held as 16-bit copies: the reference (with a full fine-tune)
// and PPO's reward model; and whether a trained value model doubles the trained states.
int frozen_model_copies(const Workload& w);
bool holds_value_model(const Workload& w);
// Each rollout setting within its range (group size, lengths, the engine's share, the KL
// coefficient, epochs, rollout cards); out of range is a UserError naming the runs-file key.
void validate_rollout(const Workload& w);
// Sequences one optimizer step trains on, all cards together: prompts × group size.
std::int64_t rollout_sequences(const Workload& w);
// The completions' lengths as probabilities in increasing order: one bin at completion_len, or,
// with completion_len_mean, the greatest-entropy spread of that mean (max_entropy_lengths).
std::vector<LengthBin> completion_length_distribution(const Workload& w);
double mean_completion_len(const Workload& w);
// The trained sequence of an online objective: `w.seq` = prompt + the longest completion (the
// memory peak) and, when completions vary, `w.lengths.histogram` = the prompt + each completion
// length (the step time, padded to a batch's longest or packed as the lengths settings say).
void set_online_sequence(Workload& w);
// Sets `w.seq` to prompt + completion and `w.grad_accum` from the prompts per step over `dp`
// data-parallel replicas (prompts × group = micro-batch × grad_accum × dp), or the prompts per
// step from the batch when only grad_accum was given; with neither, the fewest prompts whose
// completions fill whole micro-batches on every card. A batch that does not divide is a UserError
// naming `field` (TRL requires the global batch to be a multiple of the group size).
void resolve_rollout_batch(Workload& w, int dp, bool grad_accum_given,
                           std::string_view field = "prompts_per_step");

}  // namespace ftplan
