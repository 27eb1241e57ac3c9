// Option groups shared by the subcommands that describe a run (fit, step, scale, mig, max, ...).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "workload/stack.hpp"
#include "workload/workload.hpp"

namespace ftplan::cli {

struct WorkloadOptions {
  std::string model;
  std::string method;
  std::string adapter;            // preference objectives: what they train (empty: full)
  std::vector<std::string> from;  // --from: trainer files (cli/from_files.hpp)
  bool required_ = true;
  int rank = 16;
  std::string targets = "q,k,v,o,gate,up,down";
  std::string optimizer = "adamw";
  std::string optimizer_impl;  // empty: the stack's
  std::string experts_impl;    // empty: the stack's
  std::string precision = "bf16";
  long long seq = 2048;
  double seq_mean = 0;  // 0: every sample is --seq long
  std::string lengths;  // a lengths file (workload/lengths.hpp)
  bool packing = false;
  bool padding_free = false;
  const CLI::Option* seq_option = nullptr;  // whether --seq was given
  long long micro_batch = 1;
  long long grad_accum = 1;
  std::string recompute = "full";
  std::int64_t recompute_layers = 0;
  std::string attention;  // empty: the stack's
  std::string stack = std::string(Stacks::kDefaultStack);
  std::string peak = "reserved";
  int loss_chunks = 8;
  std::string loss;  // empty: the stack's
  double lora_dropout = 0;
  std::string train_modules;
  std::string base_quant;  // empty: nf4
  int quant_group = -1;    // -1: the format's default
  int quant_block = -1;    // the older name of --quant-group
  int quant_second_block = -1;
  bool no_double_quant = false;
  TrainingOptions training;
  // Online objectives (grpo, ppo, rloo): --group-size, --prompts-per-step, ... (RolloutSettings).
  RolloutSettings rollout;
  std::string rollout_mode = "colocated";
  std::string rollout_gpu;  // empty: the training card
  const CLI::Option* grad_accum_option = nullptr;
  bool no_compile = false;              // --no-compile: eager even where the stack compiles
  bool no_offload_activations = false;  // --no-offload-activations: where the stack offloads
  const CLI::App* app_ = nullptr;       // which options were given (build() reports those a method
                                        // does not read)

  // `runtime`: also the options of the activation model (sequence, batch, recompute, ...).
  // `required`: --model and --method must be given (false where the run is optional, as in
  // `ftplan compare`; the caller checks `model.empty()`).
  void add_to(CLI::App& app, bool runtime = true, bool required = true);
  Workload build(Context& ctx) const;
  void build_rollouts(Context& ctx, Workload& w) const;
  // An online objective's batch on `p`: the prompts per step and the gradient accumulation that
  // together make prompts × group = micro-batch × grad-accum × data-parallel cards
  // (resolve_rollout_batch). Nothing for other objectives.
  void resolve_rollouts(Workload& w, const Placement& p) const;
};

// --tp, --pp, --vpp, --cp, --ep: a model-parallel layout (parallel/layout.hpp).
struct LayoutOptions {
  Layout layout;
  void add_to(CLI::App& app);
};

struct PlacementOptions {
  LayoutOptions layout;  // multi-card commands only
  std::string gpu;
  int gpus = 1;  // with --gpu local and no --gpus: the detected count
  CLI::Option* gpus_option = nullptr;
  std::string shard;
  int shard_group = 0;  // --shard-group (hsdp); 0: the data-parallel cards of one node
  std::string mig;
  std::string topology;

  void add_to(CLI::App& app, bool multi_card = true, bool with_mig = false,
              bool with_topology = false);
  Placement build(Context& ctx) const;
  // As build(), for a run of `w`: the card must support its compute format
  // (TrainingFormats::require), and the layout must divide the model and the cards (check_layout).
  Placement build(Context& ctx, const Workload& w) const;
};

// The warning (stderr, exit code unchanged) for a sharding asked for on one card: the figures are
// those of one unsharded card.
void warn_one_card_sharding(Context& ctx, std::string_view shard);

// The sharding used when --shard is not given: DDP for several cards, none for one.
Sharding default_sharding(int cards);
// The help of --shard-group, one text for every command that takes it.
inline constexpr const char* kShardGroupHelp =
    "With --shard hsdp: shard the states within groups of this many data-parallel cards and "
    "replicate them across the groups (default: the data-parallel cards of one node)";

// A card without MIG is a UserError naming `field`, the card's reason and the catalog's MIG cards.
void require_mig(Context& ctx, const GpuSpec& gpu, std::string_view field);
// The profile `name` of a MIG card; an unknown one is a UserError naming the valid profiles.
const MigProfile& require_mig_profile(const GpuSpec& gpu, const std::string& name,
                                      std::string_view field);

}  // namespace ftplan::cli
