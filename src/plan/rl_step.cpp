#include "plan/rl_step.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <span>

#include "comm/topology.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/trace.hpp"
#include "plan/evaluate.hpp"
#include "workload/objective.hpp"

namespace ftplan {

namespace {

double to_double(std::int64_t n) {
  return static_cast<double>(n);
}

struct Engine {
  GenerationModel model;
  GenerationMemory memory;
  Topology topology;  // the engine's tensor-parallel group
};

// The engine on `tp` cards of `gpu` with `utilization` of each card, or nothing when the model's
// heads do not split over `tp` cards.
std::optional<Engine> engine_on(const Workload& w, const GpuSpec& gpu, Bytes capacity, int tp,
                                double utilization, Bytes cuda_context, const PlanningData& data) {
  try {
    Engine e{
        make_generation_model(w.model, WeightFormat::kBF16, KvDtype::kBF16, tp, "rollout_gpus"),
        {},
        build_topology(gpu, tp, "", data.comm)};
    e.memory = generation_memory(e.model, capacity, utilization, cuda_context, w.seq);
    return e;
  } catch (const UserError&) {
    return std::nullopt;
  }
}

// The step with its rollouts on `rollout_cards` cards of `gpu` (separate), or on the training
// cards (colocated: `rollout_cards` is ignored).
RlStep rl_step_on(const Workload& w, const Evaluation& training, const PlanningData& data,
                  const GpuSpec& gpu, int rollout_cards) {
  RlStep r;
  r.online = true;
  r.mode = w.rollout.mode;
  r.group = group_size(w);
  r.prompts = w.rollout.prompts_per_step;
  r.sequences = rollout_sequences(w);
  r.epochs = rl_epochs(w);
  const Placement& p = training.placement;
  const int training_cards = p.mig ? 1 : p.count;
  r.rollout_gpu = &gpu;

  // The engines: one per training card beside its trainer process (TRL colocate mode, tensor
  // parallel 1), or the rollout cards in groups of the fewest cards (1, 2, 4, 8) that hold the
  // weights and one sequence's cache, the rest data-parallel (trl vllm-serve
  // --tensor-parallel-size, --data-parallel-size).
  // A stated engine size (rollout_tp) is the only one tried.
  std::optional<Engine> engine;
  const int stated_tp = w.rollout.rollout_tp;
  r.rollout_cards = r.mode == RolloutMode::kColocated ? training_cards : std::max(1, rollout_cards);
  if (stated_tp > 0 && r.rollout_cards % stated_tp != 0) {
    r.feasible = false;
    r.engine_tp = stated_tp;
    r.reason =
        Reason(ReasonCode::kRolloutTpSplit).count("tp", stated_tp).count("cards", r.rollout_cards);
    return r;
  }
  if (r.mode == RolloutMode::kColocated) {
    r.engine_tp = std::max(1, stated_tp);
    engine = engine_on(w, gpu, training.memory.capacity, r.engine_tp, w.rollout.engine_memory,
                       Bytes(), data);
  } else {
    // Chosen: the fewest cards of one node that hold the weights and a sequence's cache.
    static constexpr std::array<int, 4> kChosen = {1, 2, 4, 8};
    const std::array<int, 1> stated = {stated_tp};
    const std::span<const int> sizes = stated_tp > 0 ? std::span<const int>(stated) : kChosen;
    for (const int tp : sizes) {
      if (tp > r.rollout_cards || r.rollout_cards % tp != 0) break;
      engine = engine_on(w, gpu, gpu.capacity(), tp, kDefaultGpuMemoryUtilization,
                         data.overheads.cuda_context, data);
      r.engine_tp = tp;
      if (engine && engine->memory.max_concurrent_sequences > 0) break;
    }
  }
  r.engines = std::max(1, r.rollout_cards / r.engine_tp);
  if (engine) r.engine_memory = engine->memory;
  if (!engine || engine->memory.max_concurrent_sequences < 1) {
    r.feasible = false;
    r.reason = Reason(ReasonCode::kRolloutNoRoom)
                   .bytes("engine", r.engine_memory.engine)
                   .bytes("weights", r.engine_memory.weights)
                   .bytes("reserve", r.engine_memory.reserve)
                   .count("context", w.seq)
                   .name("card", gpu.name);
    return r;
  }
  // Each round generates its share of the step's sequences (whole groups: validated).
  r.rounds = w.rollout.generation_rounds;
  const std::int64_t per_round = r.sequences / r.rounds;
  r.sequences_per_engine = (per_round + r.engines - 1) / r.engines;
  r.concurrent = std::min(r.sequences_per_engine, engine->memory.max_concurrent_sequences);
  Placement rollout_place;
  rollout_place.gpu = &gpu;
  rollout_place.count = r.engine_tp;
  const Device device = r.mode == RolloutMode::kColocated
                            ? apply_power_limit(make_device(p), p.power_limit_W, data.power)
                            : make_device(rollout_place);
  const TensorParallelLink link =
      r.engine_tp > 1 ? TensorParallelLink{&engine->topology, &data.comm} : TensorParallelLink{};
  const std::vector<LengthBin> completions = completion_length_distribution(w);
  r.rollout =
      rollout_time(engine->model, device, data.efficiency(gpu), r.sequences_per_engine,
                   w.rollout.prompt_len, w.rollout.completion_len, r.concurrent, link, completions);
  r.rollout.waves *= r.rounds;
  r.rollout.prefill *= to_double(r.rounds);
  r.rollout.decode *= to_double(r.rounds);

  // Weights into the engine.
  r.sync_bytes = Bytes(2.0 * to_double(w.model->params.total));
  if (r.mode == RolloutMode::kColocated) {
    // Read from the trainer's copy and written into the engine's, on the card; a sharded model is
    // all-gathered first, every card receiving the (n − 1)/n it does not hold.
    r.weight_sync = r.sync_bytes * 2.0 / device.bandwidth;
    // (Hybrid sharding gathers within its group.)
    if ((p.sharding == Sharding::kFsdp || p.sharding == Sharding::kHsdp) && training_cards > 1) {
      const int n = std::min(training_cards, sharding_view(p).count);
      const Topology group = group_topology(training.topology, n, 1);
      r.weight_sync +=
          r.sync_bytes * (to_double(n - 1) / to_double(n)) / group.collective_rate(group.slowest());
    }
    if (w.rollout.sleep)
      // vLLM sleep level 1: the engine's weights to host memory when it sleeps, back when it wakes.
      // It wakes for each round.
      r.sleep_wake =
          r.engine_memory.weights * (2.0 * to_double(r.rounds)) / p.gpu->pcie.per_direction();
  } else {
    // Broadcast from the trainer to every engine over the slowest link between the training and
    // the rollout cards (one server when they all fit in one, else the network).
    const Topology both = build_topology(*p.gpu, training_cards + r.rollout_cards, "", data.comm);
    r.weight_sync = r.sync_bytes / both.collective_rate(both.slowest());
  }

  // Scoring: the forward passes without gradient are copies of the trained forward pass (perf/ops),
  // so they take their share of the forward time.
  const Seconds trained = training.scale.step_seconds;
  const double passes = no_grad_forward_passes(w);
  r.scoring = training.step.forward * (to_double(w.grad_accum) * passes / (passes + 1.0));
  if (r.scoring > trained) r.scoring = trained;
  // PPO's value model computes as much again; its states are in the evaluation's already (memory
  // and the collectives that move them), so only the computing time doubles.
  const Seconds computing = training.scale.compute_per_step + training.bubble_per_step;
  const Seconds rest = trained > computing ? trained - computing : Seconds();
  const Seconds trained_computing = computing > r.scoring ? computing - r.scoring : Seconds();
  r.training =
      (trained_computing * (holds_value_model(w) ? 2.0 : 1.0) + rest) * to_double(r.epochs);
  const std::array<std::pair<RlPart, Seconds>, 4> parts{
      {{RlPart::kRollout, r.rollout.total()},
       {RlPart::kWeightSync, r.weight_sync + r.sleep_wake},
       {RlPart::kScoring, r.scoring},
       {RlPart::kTraining, r.training}}};
  if (w.rollout.async_rollout && r.mode == RolloutMode::kSeparate) {
    // The engines generate step k+1 while the trainer scores and trains on step k; the weights
    // reach the engines between their batches. The longer side sets the step.
    r.overlapped = true;
    const Seconds generating = r.rollout.total() + r.weight_sync;
    const Seconds trainer = r.scoring + r.training;
    r.total = generating > trainer ? generating : trainer;
    r.bottleneck = generating > trainer ? RlPart::kRollout : RlPart::kTraining;
  } else {
    r.total = r.rollout.total() + r.weight_sync + r.sleep_wake + r.scoring + r.training;
    r.bottleneck = std::max_element(parts.begin(), parts.end(), [](const auto& a, const auto& b) {
                     return a.second < b.second;
                   })->first;
  }
  r.completion_tokens_per_second =
      r.total.value > 0 ? to_double(r.sequences) *
                              expectation(completions, [](double t) { return t; }) / r.total.value
                        : 0;
  return r;
}

}  // namespace

std::string_view rl_part_name(RlPart p) {
  switch (p) {
    case RlPart::kRollout:
      return "rollout";
    case RlPart::kWeightSync:
      return "weight sync";
    case RlPart::kScoring:
      return "scoring";
    case RlPart::kTraining:
      return "training";
  }
  return "";
}

void trace_rl_step(const Workload& w, const RlStep& r, Trace& trace) {
  if (!r.online || !r.feasible) return;
  const bool colocated = r.mode == RolloutMode::kColocated;
  const GenerationMemory& m = r.engine_memory;
  const std::string engine_source =
      "vLLM's memory split (gpu_memory_utilization) and paged KV cache (infer/generation)";
  trace.add(
      {"rl.kv_cache",
       "KV cache of one rollout engine",
       to_GB(m.kv_budget),
       "GB",
       "engine memory − weights − working reserve (activations and the CUDA context)",
       {{"engine", format_GB(m.engine, 3)},
        {"share of the card", format_number(m.utilization, 3)},
        {"weights", format_GB(m.weights, 3)},
        {"reserve", format_GB(m.reserve, 3)},
        {"engine cards (tensor parallel)", std::to_string(r.engine_tp)}},
       engine_source,
       colocated ? std::vector<std::string>{"memory.rollout_engine"} : std::vector<std::string>{}});
  trace.add({"rl.concurrent_sequences",
             "sequences one engine decodes together",
             static_cast<double>(r.concurrent),
             "sequences",
             "min(the busiest engine's share of the step's sequences, KV cache ÷ KV bytes of one "
             "sequence of prompt + completion tokens in whole blocks)",
             {{"sequences per step", group_digits(r.sequences)},
              {"engines", std::to_string(r.engines)},
              {"sequences per engine", group_digits(r.sequences_per_engine)},
              {"KV bytes per sequence", format_GB(m.kv_per_sequence, 4)},
              {"sequences the cache holds", group_digits(m.max_concurrent_sequences)}},
             engine_source,
             {"rl.kv_cache"}});
  trace.add({"rl.rollout_seconds",
             "generating the step's completions (the busiest engine)",
             r.rollout.total().value,
             "s",
             "rounds × waves × (prefill of the prompts + completion length × decode step at the "
             "wave's batch; completions of varying length: fewer sequences decoded as they end); "
             "a decode step = the roofline of weights and KV cache read (or the GEMMs at large "
             "batch) + a fixed time per layer",
             {{"rounds", std::to_string(r.rounds)},
              {"waves", group_digits(r.rollout.waves)},
              {"prompt tokens", group_digits(w.rollout.prompt_len)},
              {"completion tokens (longest)", group_digits(w.rollout.completion_len)},
              {"completion tokens (mean)", format_number(mean_completion_len(w), 1)},
              {"prefill", format_seconds(r.rollout.prefill)},
              {"decode", format_seconds(r.rollout.decode)},
              {"card", r.rollout_gpu ? r.rollout_gpu->id : std::string()}},
             "infer/generation, its per-layer time fitted to published serving measurements "
             "(ftplan validate)",
             {"rl.concurrent_sequences"}});
  trace.add({"rl.weight_sync_seconds",
             "moving the trained weights into the engines (and sleep and wake)",
             (r.weight_sync + r.sleep_wake).value,
             "s",
             colocated ? "16-bit weights read and written on the card (2 × weights ÷ memory "
                         "bandwidth), after an all-gather when FSDP shards them; sleeping: the "
                         "engine's weights to host memory and back over PCIe"
                       : "16-bit weights broadcast to the engines ÷ the slowest link's collective "
                         "rate between training and rollout cards",
             {{"weights (16 bit)", format_GB(r.sync_bytes, 3)},
              {"sync", format_seconds(r.weight_sync)},
              {"sleep and wake", format_seconds(r.sleep_wake)}},
             "TRL's weight sync into vLLM (adapters merged first); comm/topology link rates"});
  trace.add({"rl.scoring_seconds",
             "forward passes without gradient over the step's sequences",
             r.scoring.value,
             "s",
             "the trained forward time × grad-accum × passes ÷ (passes + 1): the policy's old "
             "log-probabilities, the reference's, PPO's value and reward models",
             {{"passes without gradient", std::to_string(no_grad_forward_passes(w))},
              {"grad-accum", std::to_string(w.grad_accum)}},
             "perf/ops: each pass without gradient is a copy of the trained forward pass",
             {"perf.step_seconds"}});
  trace.add(
      {"rl.training_seconds",
       "training on the generated batch",
       r.training.value,
       "s",
       "(training computation − scoring) × (2 with PPO's value model) + exposed "
       "communication, × epochs over the batch",
       {{"epochs", std::to_string(r.epochs)}, {"value model", holds_value_model(w) ? "yes" : "no"}},
       "plan/evaluate: the training step on its cards",
       {"perf.step_seconds"}});
  trace.add({"rl.step_seconds",
             "time of one online step (rollout, weight sync, scoring, training)",
             r.total.value,
             "s",
             r.overlapped ? "the longer of rollout + weight sync (the engines, generating the next "
                            "step) and scoring + training (the trainer, on this one)"
                          : "rollout + weight sync + sleep and wake + scoring + training, one "
                            "after another",
             {{"rollout", format_seconds(r.rollout.total())},
              {"weight sync and sleep", format_seconds(r.weight_sync + r.sleep_wake)},
              {"scoring", format_seconds(r.scoring)},
              {"training", format_seconds(r.training)},
              {"slowest part", std::string(rl_part_name(r.bottleneck))}},
             "TRL's online trainers (GRPO, RLOO, PPO) run the parts in sequence",
             {"rl.rollout_seconds", "rl.weight_sync_seconds", "rl.scoring_seconds",
              "rl.training_seconds"}});
}

double rollout_choice_score(const Workload& w, const RlStep& r, int training_cards,
                            double rollout_weight) {
  const double cards = w.rollout.training_weight * static_cast<double>(training_cards) +
                       rollout_weight * static_cast<double>(r.rollout_cards);
  return r.total.value * cards;
}

RlStep rl_step(const Workload& w, const Evaluation& training, const PlanningData& data) {
  if (!is_online(w)) return {};
  const Placement& p = training.placement;
  const bool separate = w.rollout.mode == RolloutMode::kSeparate;
  if (!separate) return rl_step_on(w, training, data, *p.gpu, 0);
  if (w.rollout.choices.empty())
    return rl_step_on(w, training, data, w.rollout.gpu ? *w.rollout.gpu : *p.gpu, w.rollout.gpus);
  // The planner's choice: every candidate card at 1, 2, 4, ... cards up to the most allowed; the
  // least score wins, then the shorter step, then the fewer cards (the order tried).
  const int training_cards = p.mig ? 1 : p.count;
  const int most = std::max(1, w.rollout.gpus);
  std::optional<RlStep> best, miss;
  double best_score = 0;
  int tried = 0;
  for (const auto& choice : w.rollout.choices) {
    for (int n = 1; n <= most; n *= 2) {
      ++tried;
      RlStep s = rl_step_on(w, training, data, *choice.gpu, n);
      if (!s.feasible) {
        if (!miss || s.rollout_cards > miss->rollout_cards) miss = std::move(s);
        continue;
      }
      const double score = rollout_choice_score(w, s, training_cards, choice.weight);
      const bool better = !best || score < best_score * (1 - 1e-9) ||
                          (score <= best_score * (1 + 1e-9) && s.total < best->total);
      if (better) {
        best_score = score;
        best = std::move(s);
      }
    }
  }
  RlStep r = best ? std::move(*best) : std::move(*miss);
  r.chosen = true;
  r.choices_tried = tried;
  return r;
}

}  // namespace ftplan
