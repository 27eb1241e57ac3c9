// What to train (Workload) and where (Placement): the value every analysis takes, and its checks.
// The choices it is made of are named in core/choices.hpp and workload/optimizer.hpp; which tensor
// each choice trains, and how, is decided once in workload/roles.hpp.
#pragma once

#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/gpu.hpp"
#include "core/choices.hpp"
#include "model/model.hpp"
#include "workload/lengths.hpp"
#include "workload/optimizer.hpp"
#include "workload/quant_format.hpp"
#include "workload/stack.hpp"

namespace ftplan {

// "q,k,v,o,gate,up,down" (also q_proj, ..., all, all-linear) -> a projection set.
ProjectionSet parse_targets(std::string_view list, std::string_view field = "targets");

struct LoraConfig {
  int rank = 16;                            // seed: rank 16
  ProjectionSet targets = kAllProjections;  // seed: all seven block projections
  bool target_output = false;               // an adapter on the output layer (lm_head)
  bool target_embedding = false;  // an adapter on the token embedding (PEFT LoRA Embedding)
  double dropout = 0;             // lora_dropout: a mask and a dropped copy of each adapted input
  bool train_embedding = false;   // modules_to_save: a trained full copy of the embedding
  bool train_output = false;      // modules_to_save: a trained full copy of the output layer
};

// --targets with the modules outside the blocks: lm_head (also output) and embed_tokens (also
// embed, embeddings) set LoraConfig's target_output / target_embedding, the rest parse_targets.
void parse_lora_targets(std::string_view list, LoraConfig& lora,
                        std::string_view field = "targets");
// --train-modules (PEFT modules_to_save): embed (embed_tokens, embeddings), lm_head (output).
void parse_train_modules(std::string_view list, LoraConfig& lora,
                         std::string_view field = "train_modules");

// The activation-memory and runtime options real recipes use (memory/activations.*).
struct TrainingOptions {
  bool optimizer_in_backward =
      false;                         // optimizer step fused into backward: gradients never all live
  bool offload_optimizer = false;    // optimizer states (and master weights) in host memory
  bool offload_parameters = false;   // FSDP CPU offload of parameters
  bool offload_activations = false;  // saved activations in host memory
  bool chunked_loss = false;         // cross-entropy computed in chunks: no full-vocab logits
  LossKind loss = LossKind::kFp32Upcast;  // how the loss holds the logits (the stack's default)
  int loss_chunks = 8;  // chunks of the chunked loss (torchtune CEWithChunkedOutputLoss default: 8)
  bool compile = false;  // torch.compile / fused kernels: norms and activation functions keep
                         // only their 16-bit inputs (memory/activations.cpp)
  // Preference objectives with a reference model: its log-probabilities computed once before
  // training (TRL precompute_ref_log_probs), so no reference copy or forward pass in the step.
  bool precompute_reference = false;
  bool pure_bf16 =
      false;  // weights trained in BF16 with no FP32 master copy (torchtune dtype=bf16,
              // PEFT use_amp=false): optimizer states in the parameter dtype
  // How the optimizer update runs (--optimizer-impl; Transformers optim adamw_torch is foreach,
  // adamw_torch_fused fused); unset: the stack's.
  std::optional<OptimizerImpl> optimizer_impl;
  // How a mixture-of-experts layer runs its experts (--experts-impl; Transformers'
  // experts_implementation "eager" is loop, "grouped_mm" grouped); unset: the stack's.
  std::optional<ExpertsImpl> experts_impl;
  // The quantized base's layers keep their 16-bit input for the backward pass although their
  // weights need no gradient (bitsandbytes before 0.43.2: MatMul4Bit saved ctx.tensors = (A, B);
  // bitsandbytes pull request 1270 keeps B only). Off: today's bitsandbytes.
  bool quant_keeps_input = false;
  // Gradient accumulation under FSDP reduce-scatters after every micro-batch (Accelerate's
  // sync_each_batch): no no_sync, the gradients stay sharded (StackProfile::fsdp_no_sync).
  bool sync_each_batch = false;
  // Gradient checkpoints run non-reentrant (use_reentrant=False, or FSDP's own checkpoint wrapper
  // inside each unit) where the stack's loop would checkpoint reentrantly around its FSDP1 units
  // (StackProfile::fsdp1_reentrant_checkpoint): no reshard hook keeps the blocks' inputs.
  bool non_reentrant = false;
  // The stack's preparation of a quantized base is skipped (StackProfile::
  // kbit_skipped_when_sharded): set by activation_profile() for its sharded variant, not an input.
  bool kbit_preparation_skipped = false;
  // The loss as it runs: `chunked_loss` (the older flag) wins over `loss`.
  LossKind effective_loss() const { return chunked_loss ? LossKind::kChunked : loss; }
};

// Online objectives (GRPO, PPO, RLOO): what a step generates and where. Zero or negative: the
// objective's default (workload/objective.cpp). TRL GRPOConfig's defaults: prompts of up to 512
// tokens, completions of up to 256, the engine colocated with 0.3 of each card
// (vllm_gpu_memory_utilization), not sleeping between rollouts.
struct RolloutSettings {
  std::int64_t group_size = 0;        // completions per prompt (TRL num_generations)
  std::int64_t prompts_per_step = 0;  // prompts per optimizer step, all cards (0: from the batch)
  std::int64_t prompt_len = 512;      // tokens (TRL max_prompt_length)
  std::int64_t completion_len = 256;  // tokens (TRL max_completion_length): the longest
  // Mean tokens per completion when completions end at different lengths (0: every completion
  // runs to completion_len). The lengths are spread as workload/lengths spreads a mean below the
  // longest; the engine decodes fewer sequences as they end, training pads or packs them.
  double completion_len_mean = 0;
  // Rollout batches per optimizer step, each generating its share of the step's sequences before
  // the next (TRL up to 0.17 generated per micro-batch: grad-accum rounds; later versions
  // grad-accum / steps_per_generation). The weights move into the engine once per step.
  int generation_rounds = 1;
  int rollout_tp =
      0;  // cards one engine spans (vLLM tensor_parallel_size); 0: the fewest that hold
  RolloutMode mode = RolloutMode::kColocated;
  double kl = -1;  // KL coefficient (TRL beta, kl_coef); < 0: the objective's default
  int epochs = 0;  // passes over each generated batch (GRPO num_iterations, PPO num_ppo_epochs)
  double engine_memory = 0.3;    // colocated: the engine's share of each card's memory
  bool sleep = false;            // colocated: the engine sleeps while the step trains
  const GpuSpec* gpu = nullptr;  // separate: the rollout cards' type (null: the training card's)
  int gpus = 1;                  // separate: how many rollout cards
  // separate: the engines generate the next step's completions while the trainer trains on these
  // (one step off-policy: NeMo RL async GRPO, verl and OpenRLHF async): rollout and training
  // overlap, the step is the longer of the two.
  bool async_rollout = false;
  // separate, `rollout_gpu: auto` in a runs file: the planner picks the rollout cards' type and
  // count (1, 2, 4, ... up to `gpus`) among `choices` (plan/rl_step), the one with the least
  // step time × weighted cards: each card's weight per card-second is the plan's ranking's (1 for
  // card-hours, its price for cost, its power for energy, 0 for time, which then ranks by the step
  // time alone). `training_weight` is the training card's, set for each placement.
  bool choose_gpu = false;
  struct Choice {
    const GpuSpec* gpu = nullptr;
    double weight = 1;
  };
  std::vector<Choice> choices;
  double training_weight = 1;
};

struct RuntimeOverheads;  // memory/overheads.hpp: data/runtime/overheads.yaml

// Sequences each example trains through (workload/objective.cpp): 2 for pairs.
int sequences_per_example(Objective o);

struct Workload {
  ModelPtr model;
  Method method = Method::kLora;  // the adapter (or a full fine-tune) the objective trains with
  Objective objective = Objective::kSft;
  Optimizer optimizer = Optimizer::kAdamW;
  LoraConfig lora;
  QuantConfig quant;
  ComputeFormat precision = ComputeFormat::kBF16;
  std::int64_t seq = 2048;  // tokens per sequence: the longest (the memory peak), or the packed row
  SequenceLengths lengths;  // how the samples' lengths vary and are batched (step time)
  std::int64_t micro_batch = 1;  // examples per card per forward/backward
  std::int64_t grad_accum = 1;   // micro-batches per optimizer step
  Recompute recompute = Recompute::kFull;
  // Layer-wise checkpointing under Recompute::kFull: how many of the model's blocks keep only
  // their input and are rebuilt in the backward pass; the others keep every activation, as
  // without recomputation (Megatron --recompute-method block, torchtitan's layer-wise
  // selective_ac_option). 0: every block.
  std::int64_t recompute_layers = 0;
  Attention attention = Attention::kFlash;
  TrainingOptions options;
  RolloutSettings rollout;  // online objectives only
  PeakKind peak = PeakKind::kReserved;
  // Runtime overheads (CUDA context, workspaces, allocator reserve) as read from the data; null:
  // none counted (a Workload built by hand in code; the CLI and the tests always set it).
  const RuntimeOverheads* overheads = nullptr;
  // The software stack it runs on (data/stacks/); null: none (a workload built by hand in code:
  // the optimizer update is one fused pass and no host cost is counted).
  const StackProfile* stack = nullptr;

  // Sequences of a micro-batch: its examples, twice for a preference pair.
  std::int64_t sequences_per_micro_batch() const {
    return micro_batch * sequences_per_example(objective);
  }
  // Tokens of the longest micro-batch (padding included): what the memory peak holds.
  std::int64_t tokens_per_micro_batch() const { return seq * sequences_per_micro_batch(); }
  // Real (non-pad) tokens per sequence, on average: `seq` unless the lengths vary unpacked.
  double tokens_per_sequence() const { return real_tokens_per_row(lengths, seq); }
  // Of `blocks` blocks of one kind, how many the backward pass rebuilds under full recomputation:
  // all of them, or their share of recompute_layers (0 without full recomputation).
  std::int64_t recomputed_blocks(std::int64_t blocks) const;
  // Real tokens per example: each of its sequences' (a preference pair's two).
  double tokens_per_example() const {
    return static_cast<double>(sequences_per_example(objective)) * tokens_per_sequence();
  }
};

// The recompute mode as reports print it: "full", or under layer-wise checkpointing "full (16 of
// 32 blocks)".
std::string recompute_label(const Workload& w);

// How the run's optimizer update runs: its own --optimizer-impl, else its stack's, else fused.
OptimizerImpl optimizer_impl(const Workload& w);
// How the run's MoE layers run their experts: its own --experts-impl, else its stack's, else
// grouped.
ExpertsImpl experts_impl(const Workload& w);
// Whether the run accumulates gradients in FSDP1's no_sync (its stack's fsdp_no_sync, gradient
// accumulation, no --sync-each-batch): unsharded gradients until the last micro-batch, which
// alone reduce-scatters them. The caller checks that the placement shards with FSDP.
bool fsdp_no_sync_accumulation(const Workload& w);
// Whether the run checkpoints each block reentrantly around an all-frozen FSDP1 unit (its stack's
// fsdp1_reentrant_checkpoint, adapters in units of their own, every block recomputed, no
// --non-reentrant): each finished block's input and its gradient stay until the backward pass
// ends. The caller checks that the placement shards with FSDP.
bool fsdp1_reentrant_frozen_units(const Workload& w);

// Model parallelism of a run (Megatron-LM's layout): each replica spans tp × pp × cp cards, the
// rest of the count replicates it (data parallel, `dp`), and the experts of a MoE model are spread
// over `ep` of the data-parallel ranks. All 1: every card holds the whole model (data parallel,
// ZeRO, FSDP). Tensor parallelism runs with sequence parallelism (Korthikanti et al. 2022): the
// norms, dropouts and residual adds between the split layers hold 1/tp of the tokens too.
struct Layout {
  int tp = 1;   // tensor parallel: each block's matrices split column-/row-wise over tp cards
  int pp = 1;   // pipeline parallel: the blocks cut into pp stages (1F1B schedule)
  int vpp = 1;  // interleaved 1F1B: model chunks per stage (Narayanan et al. 2021 §2.2)
  int cp = 1;   // context parallel: each sequence's tokens split over cp cards (ring attention)
  int ep = 1;   // expert parallel: each MoE layer's experts split over ep cards
  int model_parallel() const { return tp * pp * cp; }  // cards of one replica
  // The fewest cards the layout runs on: one replica, or as many as expert groups of ep ranks
  // drawn from the data- and context-parallel ranks need (dp · cp a multiple of ep).
  int min_cards() const { return model_parallel() * (ep / std::gcd(ep, cp)); }
  bool trivial() const { return tp == 1 && pp == 1 && vpp == 1 && cp == 1 && ep == 1; }
  // Data-parallel replicas among `cards` cards.
  int dp(int cards) const { return cards / model_parallel(); }
};

// Where a workload runs: card type and count, how state is split, or one MIG instance.
struct Placement {
  const GpuSpec* gpu = nullptr;
  int count = 1;
  Sharding sharding = Sharding::kNone;
  const MigProfile* mig = nullptr;  // run inside one instance of this profile
  std::string topology;             // preset name (comm/topology); empty: the best the card has
  double power_limit_W = 0;         // per card, below its TDP (0: none): a lower sustained clock
  Layout layout;                    // model parallelism; `sharding` splits states over its dp
  // Sharding::kHsdp: the data-parallel cards each group shards the states over (a divisor of the
  // data-parallel degree); 0: the data-parallel cards of one node (resolve_shard_group).
  int shard_group = 0;
  // The cards the whole run spans where this placement is a part of it (data_parallel_group: the
  // data-parallel ranks of a model-parallel layout); 0: `count`. NCCL's buffers follow it.
  int run_cards = 0;
};

// The settings only some methods read, by their runs-file key: the adapter's (rank, targets,
// lora_dropout, train_modules: LoRA-family methods) and the quantized base's (base_quant,
// quant_group, quant_block, quant_second_block, double_quant: qlora, qdora). A setting `m` does not
// read, given explicitly, is a UserError naming it (field `setting`): a silent default would let a
// user believe e.g. `--rank 64` changed a full fine-tune. `shown` is the setting as the user spelt
// it ("--rank", "rank") and `method_shown` the method ("--method full", "method full").
// Returns without error for a setting `m` reads and for names not in either list.
void check_setting_applies(Method m, std::string_view setting, std::string_view shown,
                           std::string_view method_shown);
// Why `m` does not read `setting`, without naming the setting (for notes: "applies to LoRA-family
// methods ..."); empty when it does, or when `setting` is not one of the lists above.
std::string setting_not_read(Method m, std::string_view setting, std::string_view method_shown);

// Hybrid sharding (Sharding::kHsdp). The default shard group: the data-parallel ranks one node of
// `cards_per_node` cards holds (ranks are ordered tensor- then context-parallel first, so a node
// holds cards_per_node / (tp × cp) of them), as a divisor of the data-parallel degree. Sets
// p.shard_group where it is 0 under hybrid sharding; any other placement is left as it is.
void resolve_shard_group(Placement& p, int cards_per_node);
// That default group for a data-parallel placement (no layout) of `count` cards.
int default_shard_group(int count, int cards_per_node);
// UserError (exit 2, field "shard_group") unless a hybrid shard group divides the data-parallel
// degree; its message lists the divisors that would.
void check_shard_group(const Placement& p);
// What each card of `p` holds, as a placement: under hybrid sharding FSDP over one shard group
// (shard_group data-parallel ranks with the layout's model-parallel cards; the groups hold the
// same); any other placement as it is. Memory and the optimizer's share are those of this view.
Placement sharding_view(const Placement& p);
// "fsdp", or "hsdp 8" (hybrid: the cards of each shard group), as tables and reasons show it.
std::string sharding_label(Sharding s, int shard_group);
// Checks ranges that every analysis relies on (rank >= 1, seq >= 1, ...): UserError otherwise.
void validate(const Workload& w);
void validate(const Placement& p);

}  // namespace ftplan
