#include "workload/objective.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
#include "workload/roles.hpp"
#include "workload/workload.hpp"

namespace ftplan {

namespace {

// Pairs run as one forward pass of the chosen and the rejected sequences concatenated along the
// batch (TRL concatenated_forward), so a micro-batch of b examples is 2·b sequences. TRL runs the
// reference forward under no_grad after the policy's forward, before its backward.
// Online objectives generate their completions with an inference engine (vLLM in TRL, OpenRLHF,
// verl), then score them without gradient: the policy's own log-probabilities before the update
// (the importance ratio's denominator; TRL computes them when it generates with vLLM, to correct
// for the engine's sampling), the reference's when the KL coefficient is not 0, and PPO's value
// and reward models; then train on prompt + completion sequences.
// A reward model (InstructGPT's RM; TRL RewardTrainer) scores the chosen and the rejected sequence
// of each pair with a one-output head (AutoModelForSequenceClassification, num_labels 1) and
// trains on -log σ(r_chosen − r_rejected): two sequences per example, both with gradient, no
// reference, no vocabulary-wide logits.
constexpr std::array<ObjectiveTraits, 10> kObjectives{{
    {Objective::kSft, "supervised fine-tuning", 1, false, 0, 0, "next-token cross-entropy", false,
     false, false, 1, 0, 1},
    {Objective::kDpo, "DPO", 2, true, 1, 0,
     "Rafailov et al. 2023; TRL DPOTrainer (chosen and rejected in one forward, reference "
     "log-probabilities under no_grad)",
     false, false, false, 1, 0, 1},
    {Objective::kIpo, "IPO", 2, true, 1, 0,
     "Azar et al. 2023; TRL DPOTrainer loss_type=ipo (DPO's passes, another loss)", false, false,
     false, 1, 0, 1},
    {Objective::kOrpo, "ORPO", 2, false, 0, 0,
     "Hong et al. 2024; TRL ORPOTrainer (no reference model)", false, false, false, 1, 0, 1},
    {Objective::kSimpo, "SimPO", 2, false, 0, 0,
     "Meng et al. 2024; TRL CPOTrainer loss_type=simpo (no reference model)", false, false, false,
     1, 0, 1},
    {Objective::kKto, "KTO", 1, true, 2, 1,
     "Ethayarajh et al. 2024; TRL KTOTrainer (one labelled sequence per example; the KL term's "
     "mismatched batch through the policy without gradient and, with the examples, through the "
     "reference)",
     false, false, false, 1, 0, 1},
    {Objective::kReward, "reward model", 2, false, 0, 0,
     "Ouyang et al. 2022 (InstructGPT); TRL RewardTrainer: chosen and rejected through a "
     "sequence-classification model with one output, loss -log sigmoid(r_chosen - r_rejected)",
     false, false, false, 1, 0, 1, true},
    {Objective::kGrpo, "GRPO", 1, true, 1, 1,
     "Shao et al. 2024 (DeepSeekMath); TRL GRPOConfig defaults: num_generations 8, beta 0.0 (no "
     "reference model), num_iterations 1, rewards from functions",
     true, false, false, 8, 0.0, 1},
    {Objective::kPpo, "PPO", 1, true, 1, 1,
     "Schulman et al. 2017; Ouyang et al. 2022; TRL PPOConfig defaults: kl_coef 0.05, "
     "num_ppo_epochs 4, one completion per prompt, a value model and a reward model beside the "
     "policy and the reference",
     true, true, true, 1, 0.05, 4},
    {Objective::kRloo, "RLOO", 1, true, 1, 1,
     "Ahmadian et al. 2024; TRL RLOOConfig defaults: num_generations 2, beta 0.05, rewards from "
     "functions",
     true, false, false, 2, 0.05, 1},
}};

}  // namespace

void use_objective_model(Workload& w) {
  if (w.model && objective_traits(w.objective).score_head) w.model = with_score_head(w.model);
}

const ObjectiveTraits& objective_traits(Objective o) {
  for (const auto& t : kObjectives)
    if (t.objective == o) return t;
  return kObjectives[0];
}

int sequences_per_example(Objective o) {
  return objective_traits(o).sequences_per_example;
}

const std::vector<std::string>& run_method_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = method_names();
    for (const auto& n : objective_names())
      if (n != objective_name(Objective::kSft)) v.push_back(n);
    return v;
  }();
  return names;
}

RunMethod parse_run_method(std::string_view name, std::string_view field) {
  for (const auto& n : method_names())
    if (n == name) return {Objective::kSft, parse_method(name, field)};
  for (const auto& n : objective_names())
    if (n == name && n != objective_name(Objective::kSft))
      return {parse_objective(name, field), std::nullopt};
  throw_unknown_name("method", field, name, run_method_names());
}

ObjectiveAndMethod resolve_run_method(std::string_view name, std::string_view adapter,
                                      bool precompute_reference, std::string_view method_field,
                                      std::string_view adapter_field,
                                      std::string_view precompute_field) {
  const RunMethod run = parse_run_method(name, method_field);
  if (run.method && !adapter.empty())
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("adapter {} applies to the preference and RL objectives ({}); method {} is "
                    "supervised fine-tuning with its own adapter: give method {} alone, or "
                    "method dpo with adapter {}",
                    adapter,
                    fmt::join(objective_names().begin() + 1, objective_names().end(), ", "), name,
                    adapter, adapter),
        std::string(adapter_field));
  const Method method = run.method        ? *run.method
                        : adapter.empty() ? Method::kFull
                                          : parse_method(adapter, adapter_field);
  if (precompute_reference &&
      (!objective_traits(run.objective).reference || objective_traits(run.objective).online)) {
    std::vector<std::string> with;
    for (const auto& t : kObjectives)
      if (t.reference && !t.online) with.emplace_back(objective_name(t.objective));
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{} applies to objectives scored against a reference model ({}); "
                                "method {} has none",
                                precompute_field, fmt::join(with, ", "), name),
                    std::string(precompute_field));
  }
  return {run.objective, method};
}

const std::vector<std::string>& rollout_keys() {
  static const std::vector<std::string> keys = {
      "group_size",     "prompts_per_step",    "prompt_len",
      "completion_len", "completion_len_mean", "generation_rounds",
      "rollout",        "rollout_tp",          "kl",
      "rl_epochs",      "engine_memory",       "sleep",
      "rollout_gpu",    "rollout_gpus",        "async_rollout"};
  return keys;
}

bool read_rollout_settings(StrictMap& r, Workload& w) {
  RolloutSettings& s = w.rollout;
  if (!is_online(w)) {
    for (const std::string& key : rollout_keys())
      if (r.has(key))
        r.fail(key, fmt::format("{} applies to the online objectives (grpo, ppo, rloo), not to "
                                "method {}: leave it out, or give method grpo, ppo or rloo",
                                key, run_method_name(w)));
    return false;
  }
  for (const char* key : {"seq", "seq_max", "seq_mean", "lengths"})
    if (r.has(key))
      r.fail(key, fmt::format("method {} trains on its prompts and generated completions: give "
                              "prompt_len, completion_len and completion_len_mean instead of {}",
                              run_method_name(w), key));
  s.group_size = r.optional_integer("group_size", 1, 4096).value_or(0);
  s.prompts_per_step = r.optional_integer("prompts_per_step", 1, 1 << 24).value_or(0);
  s.prompt_len = r.optional_integer("prompt_len", 1, 1 << 22).value_or(s.prompt_len);
  s.completion_len = r.optional_integer("completion_len", 1, 1 << 22).value_or(s.completion_len);
  s.completion_len_mean = r.optional_number("completion_len_mean", 1, 1 << 22).value_or(0);
  s.generation_rounds =
      static_cast<int>(r.optional_integer("generation_rounds", 1, 4096).value_or(1));
  s.rollout_tp = static_cast<int>(r.optional_integer("rollout_tp", 1, 64).value_or(0));
  if (auto v = r.optional_string("rollout")) {
    try {
      s.mode = parse_rollout_mode(*v);
    } catch (const UserError& e) {
      r.fail("rollout", e.what());
    }
  }
  s.kl = r.optional_number("kl", 0, 100).value_or(-1);
  s.epochs = static_cast<int>(r.optional_integer("rl_epochs", 1, 1000).value_or(0));
  s.engine_memory = r.optional_number("engine_memory", 0.01, 0.99).value_or(s.engine_memory);
  s.sleep = r.optional_bool("sleep").value_or(false);
  s.async_rollout = r.optional_bool("async_rollout").value_or(false);
  set_online_sequence(w);
  return true;
}

std::string run_method_name(const Workload& w) {
  return std::string(w.objective == Objective::kSft ? method_name(w.method)
                                                    : objective_name(w.objective));
}

std::string run_method_short(const Workload& w) {
  if (w.objective == Objective::kSft) return std::string(method_name(w.method));
  return fmt::format("{} ({})", objective_name(w.objective), method_name(w.method));
}

std::string run_method_label(const Workload& w) {
  const std::string adapter(method_label(w.method));
  if (w.objective == Objective::kSft) return adapter;
  const std::string objective(objective_traits(w.objective).label);
  return method_traits(w.method).trains_base ? objective + ", " + adapter
                                             : objective + " with " + adapter;
}

bool is_online(const Workload& w) {
  return objective_traits(w.objective).online;
}
std::int64_t group_size(const Workload& w) {
  return w.rollout.group_size > 0 ? w.rollout.group_size
                                  : objective_traits(w.objective).default_group_size;
}
double kl_coefficient(const Workload& w) {
  return w.rollout.kl >= 0 ? w.rollout.kl : objective_traits(w.objective).default_kl;
}
int rl_epochs(const Workload& w) {
  return w.rollout.epochs > 0 ? w.rollout.epochs : objective_traits(w.objective).default_epochs;
}

bool uses_reference(const Workload& w) {
  const ObjectiveTraits& t = objective_traits(w.objective);
  if (!t.reference || w.options.precompute_reference) return false;
  return !t.online || kl_coefficient(w) > 0;
}

bool holds_reference_copy(const Workload& w) {
  return uses_reference(w) && method_traits(w.method).trains_base;
}

bool holds_value_model(const Workload& w) {
  return objective_traits(w.objective).value_model;
}

int frozen_model_copies(const Workload& w) {
  return (holds_reference_copy(w) ? 1 : 0) + (objective_traits(w.objective).reward_model ? 1 : 0);
}

// Passes of models other than the policy, which never run the policy's adapters: the reference's,
// and PPO's value and reward models' over the completions.
int reference_forward_passes(const Workload& w) {
  const ObjectiveTraits& t = objective_traits(w.objective);
  return (uses_reference(w) ? t.reference_passes : 0) + (t.value_model ? 1 : 0) +
         (t.reward_model ? 1 : 0);
}
int policy_no_grad_passes(const Workload& w) {
  return objective_traits(w.objective).policy_no_grad_passes;
}

void validate_rollout(const Workload& w) {
  const RolloutSettings& r = w.rollout;
  auto bad = [](std::string_view field, const std::string& msg) {
    throw UserError(ErrorCode::kInvalidValue, msg, std::string(field));
  };
  if (r.group_size < 0 || r.group_size > 4096)
    bad("group_size",
        fmt::format("group_size must be 1 to 4096 completions per prompt, got {}", r.group_size));
  if (w.objective == Objective::kGrpo && group_size(w) < 2)
    bad("group_size",
        fmt::format("GRPO compares each completion with the others of its prompt: group_size must "
                    "be at least 2, got {}",
                    group_size(w)));
  if (r.prompts_per_step < 0 || r.prompts_per_step > (1 << 24))
    bad("prompts_per_step",
        fmt::format("prompts_per_step must be 1 to 16777216, got {}", r.prompts_per_step));
  for (const auto& [value, field] :
       {std::pair{r.prompt_len, "prompt_len"}, std::pair{r.completion_len, "completion_len"}})
    if (value < 1 || value > (1 << 22))
      bad(field, fmt::format("{} must be 1 to 4194304 tokens, got {}", field, value));
  if (!(r.engine_memory > 0 && r.engine_memory < 1))
    bad("engine_memory",
        fmt::format("engine_memory is the engine's share of each card: above 0 and below 1, got {}",
                    r.engine_memory));
  if (std::isnan(r.kl) || r.kl > 100)  // below 0: the objective's default
    bad("kl", fmt::format("the KL coefficient must be 0 to 100, got {}", r.kl));
  if (r.completion_len_mean != 0 &&
      !(r.completion_len_mean >= 1 &&
        r.completion_len_mean <= static_cast<double>(r.completion_len)))
    bad("completion_len_mean",
        fmt::format("completion_len_mean is the mean tokens per completion: 1 to completion_len "
                    "({}), got {}",
                    r.completion_len, r.completion_len_mean));
  if (r.generation_rounds < 1 || r.generation_rounds > 4096)
    bad("generation_rounds",
        fmt::format("generation_rounds must be 1 to 4096 rollout batches per step, got {}",
                    r.generation_rounds));
  if (r.rollout_tp != 0 &&
      (r.rollout_tp < 1 || r.rollout_tp > 64 || (r.rollout_tp & (r.rollout_tp - 1)) != 0))
    bad("rollout_tp",
        fmt::format("rollout_tp is the cards one engine spans: 1, 2, 4, 8, 16, 32 or 64, got {}",
                    r.rollout_tp));
  if (r.epochs < 0 || r.epochs > 1000)
    bad("rl_epochs", fmt::format("rl_epochs must be 1 to 1000 passes, got {}", r.epochs));
  if (r.gpus < 1 || r.gpus > 65536)
    bad("rollout_gpus", fmt::format("rollout_gpus must be 1 to 65536 cards, got {}", r.gpus));
  if (r.mode == RolloutMode::kColocated && r.async_rollout)
    bad("async_rollout",
        "async_rollout overlaps generating the next step's completions with training on these: "
        "it needs cards of their own (rollout separate); a colocated engine shares the training "
        "cards");
  if (r.mode == RolloutMode::kColocated && r.gpu != nullptr)
    bad("rollout_gpu",
        "rollout_gpu names the cards of a separate rollout: give rollout separate with it, or "
        "leave it out to generate on the training cards");
}

std::int64_t rollout_sequences(const Workload& w) {
  return w.rollout.prompts_per_step * group_size(w);
}

std::vector<LengthBin> completion_length_distribution(const Workload& w) {
  if (w.rollout.completion_len_mean <= 0)
    return {{static_cast<double>(w.rollout.completion_len), 1}};
  return max_entropy_lengths(w.rollout.completion_len_mean, w.rollout.completion_len);
}

double mean_completion_len(const Workload& w) {
  return expectation(completion_length_distribution(w), [](double s) { return s; });
}

void set_online_sequence(Workload& w) {
  w.seq = w.rollout.prompt_len + w.rollout.completion_len;
  w.lengths.histogram.clear();
  w.lengths.mean.reset();
  if (w.rollout.completion_len_mean <= 0) return;
  const double prompt = static_cast<double>(w.rollout.prompt_len);
  for (const LengthBin& b : completion_length_distribution(w))
    w.lengths.histogram.push_back({prompt + b.tokens, b.count});
}

namespace {

// Rollout batches per step split the prompts evenly (TRL generates whole groups per batch).
void check_generation_rounds(const Workload& w, std::string_view field) {
  const std::int64_t rounds = w.rollout.generation_rounds;
  if (rounds > 1 && w.rollout.prompts_per_step % rounds != 0)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{} prompts per step do not split into {} generation rounds: "
                                "each round generates whole groups of completions, give "
                                "prompts_per_step a multiple of generation_rounds",
                                w.rollout.prompts_per_step, rounds),
                    std::string(field));
}

}  // namespace

void resolve_rollout_batch(Workload& w, int dp, bool grad_accum_given, std::string_view field) {
  if (!is_online(w)) return;
  set_online_sequence(w);
  const std::int64_t g = group_size(w);
  const std::int64_t per_pass = w.micro_batch * std::max(1, dp);
  if (w.rollout.prompts_per_step <= 0 && !grad_accum_given) {
    // Neither given: the fewest prompts whose completions fill whole passes of every card.
    // With generation rounds, a multiple of them.
    w.rollout.prompts_per_step =
        std::lcm(std::lcm(g, per_pass) / g, std::int64_t{w.rollout.generation_rounds});
  }
  if (w.rollout.prompts_per_step <= 0) {
    const std::int64_t batch = per_pass * w.grad_accum;
    if (batch % g != 0)
      throw UserError(
          ErrorCode::kInvalidValue,
          fmt::format("the step's batch of {} sequences (micro-batch {} × grad-accum {} × {} "
                      "data-parallel cards) is not a multiple of the group size {}: each prompt's "
                      "{} completions train in the same step; give prompts_per_step, or a batch "
                      "that {} divides",
                      batch, w.micro_batch, w.grad_accum, std::max(1, dp), g, g, g),
          std::string(field));
    w.rollout.prompts_per_step = batch / g;
    check_generation_rounds(w, "generation_rounds");
    return;
  }
  const std::int64_t sequences = w.rollout.prompts_per_step * g;
  if (sequences % per_pass != 0)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("prompts_per_step {} × group size {} = {} sequences do not split "
                                "into micro-batches of {} on {} data-parallel cards ({} per pass)",
                                w.rollout.prompts_per_step, g, sequences, w.micro_batch,
                                std::max(1, dp), per_pass),
                    std::string(field));
  const std::int64_t accum = sequences / per_pass;
  if (grad_accum_given && accum != w.grad_accum)
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("prompts_per_step {} × group size {} = {} sequences need grad-accum "
                    "{} at micro-batch {} on {} data-parallel cards, not {}: give one "
                    "of the two",
                    w.rollout.prompts_per_step, g, sequences, accum, w.micro_batch, std::max(1, dp),
                    w.grad_accum),
        std::string(field));
  w.grad_accum = accum;
  check_generation_rounds(w, "generation_rounds");
}
int no_grad_forward_passes(const Workload& w) {
  return reference_forward_passes(w) + policy_no_grad_passes(w);
}

}  // namespace ftplan
