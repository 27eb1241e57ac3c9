#include "cli/options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/from_files.hpp"
#include "cli/perf_options.hpp"
#include "core/error.hpp"
#include "memory/fit.hpp"
#include "parallel/layout.hpp"
#include "workload/loss.hpp"
#include "workload/objective.hpp"
#include "workload/roles.hpp"

namespace ftplan::cli {

// The options only some methods read, with their setting's name (workload.hpp
// check_setting_applies).
constexpr std::pair<const char*, const char*> kMethodOnlyOptions[] = {
    {"--rank", "rank"},
    {"--targets", "targets"},
    {"--lora-dropout", "lora_dropout"},
    {"--train-modules", "train_modules"},
    {"--base-quant", "base_quant"},
    {"--quant-group", "quant_group"},
    {"--quant-block", "quant_block"},
    {"--quant-second-block", "quant_second_block"},
    {"--no-double-quant", "double_quant"}};

void WorkloadOptions::add_to(CLI::App& app, bool runtime, bool required) {
  app_ = &app;
  app.add_option("--model", model,
                 "Catalog model id (ftplan models), Hugging Face id (org/name), folder holding "
                 "config.json, or path to a Hugging Face config.json (- reads it from standard "
                 "input)");
  app.add_option("--method", method,
                 fmt::format("Training method: {} (dora/qdora: DoRA on a 16-bit or NF4 base; "
                             "dpo, ipo, orpo, simpo, kto: preference objectives; reward: a "
                             "reward model on pairs, a score head in place of the LM head; "
                             "grpo, ppo, rloo: online, with rollouts; each with --adapter)",
                             fmt::join(run_method_names(), " | ")));
  app.add_option("--adapter", adapter,
                 fmt::format("Objectives (preference, reward, online): what they train, {} "
                             "(default full: every "
                             "weight, with a frozen reference copy where the objective has one)",
                             fmt::join(method_names(), " | ")));
  app.add_flag("--precompute-ref", training.precompute_reference,
               "DPO, IPO, KTO: reference log-probabilities computed once before training (TRL "
               "precompute_ref_log_probs): no reference model or reference pass in the step");
  required_ = required;  // checked in build(): a --from file may give them
  add_from_option(app, from);
  app.add_option("--rank", rank,
                 "Adapter rank for LoRA, QLoRA, DoRA, QDoRA (default 16, as in the seed)");
  app.add_option("--targets", targets,
                 "LoRA target modules, comma-separated: q,k,v,o,gate,up,down (default: all seven), "
                 "also q_proj..., attention, mlp, all, and outside the blocks lm_head and "
                 "embed_tokens");
  app.add_option("--lora-dropout", lora_dropout,
                 "LoRA dropout probability (default 0): above 0 each adapted module keeps a "
                 "dropout mask and its own dropped copy of the input");
  app.add_option("--train-modules", train_modules,
                 "Modules trained in full beside the adapters (PEFT modules_to_save): embed, "
                 "lm_head, comma-separated (default none)");
  app.add_option("--optimizer", optimizer,
                 fmt::format("Optimizer: {} (default adamw: 16 B per trained parameter)",
                             fmt::join(optimizer_names(), " | ")));
  app.add_option("--optimizer-impl", optimizer_impl,
                 "How the optimizer update runs: fused (one kernel, adamw_torch_fused) | foreach "
                 "(torch's multi-tensor kernels, adamw_torch: the update's temporaries hold one "
                 "state of every trained tensor at once) | for-loop (one tensor at a time) "
                 "(default: the stack's; hf: fused)");
  app.add_option("--experts-impl", experts_impl,
                 "How a mixture-of-experts layer runs its experts: grouped (all routed tokens in "
                 "grouped products: Megatron, torchtitan, Transformers 5 with torch 2.9+) | loop "
                 "(one expert after the other: Transformers' eager experts, LitGPT; the backward "
                 "holds one expert's activation gradients at a time) (default: the stack's; hf: "
                 "grouped)");
  app.add_option("--base-quant", base_quant,
                 "QLoRA/QDoRA: format of the frozen quantized base: nf4 | gptq-int4 | awq-int4 | "
                 "int8 | hqq-4 | fp8 (data/quant_formats.yaml; default nf4)");
  app.add_option("--quant-group", quant_group,
                 "QLoRA/QDoRA: weights per quantization group of --base-quant (default the "
                 "format's: nf4 64, gptq-int4 and awq-int4 128, hqq-4 64, fp8 128 x 128 blocks; 0: "
                 "one group per row (GPTQ/AWQ group_size -1) or per tensor (fp8))");
  app.add_option("--quant-block", quant_block,
                 "QLoRA/QDoRA: weights per quantization block, as --quant-group (default 64 for "
                 "nf4)");
  app.add_option(
      "--quant-second-block", quant_second_block,
      "QLoRA/QDoRA: absmax values per second-level block of double quantization (default 256)");
  app.add_flag("--no-double-quant", no_double_quant,
               "QLoRA/QDoRA: FP32 absmax per block instead of double quantization");
  if (!runtime) return;
  app.add_option(
      "--precision", precision,
      "Compute format of the matrix products: bf16 | fp16 | fp8 | mxfp8 | nvfp4 (default bf16)");
  seq_option = app.add_option("--seq,--seq-max", seq,
                              "Tokens per sequence: the longest sample, which sets the memory "
                              "peak (default 2048, or the longest in --lengths; with --packing: "
                              "the packed row's length); --seq-max is the same option");
  app.add_option("--seq-mean", seq_mean,
                 "Mean tokens per sample when lengths vary (default: every sample is --seq "
                 "long): the step is timed on the mean, the peak stays at --seq");
  app.add_option("--lengths", lengths,
                 "File of the samples' lengths: a YAML/JSON list of {tokens, count}, a JSONL "
                 "dataset with a token count per line (num_tokens, n_tokens, length, ...), or one "
                 "integer per line (data/README.md)");
  app.add_flag("--packing", packing,
               "Samples concatenated into rows of exactly --seq tokens (default off: each "
               "micro-batch padded to its longest sample)");
  app.add_flag("--padding-free", padding_free,
               "Padding-free attention (FlashAttention varlen): attention within each sample, "
               "unpacked batches concatenated without padding (default off)");
  app.add_option("--micro-batch", micro_batch,
                 "Sequences per card per forward/backward pass (default 1)");
  grad_accum_option = app.add_option(
      "--grad-accum", grad_accum,
      "Micro-batches per optimizer step (default 1; above 1 the gradients persist in an "
      "accumulation buffer; online objectives: from --prompts-per-step when given)");
  app.add_option("--group-size", rollout.group_size,
                 "grpo, ppo, rloo: completions generated per prompt (TRL num_generations; default "
                 "grpo 8, rloo 2, ppo 1)");
  app.add_option("--prompts-per-step", rollout.prompts_per_step,
                 "grpo, ppo, rloo: prompts per optimizer step, all cards together (default: "
                 "micro-batch x grad-accum x cards / group size); sets --grad-accum");
  app.add_option("--prompt-len", rollout.prompt_len,
                 "grpo, ppo, rloo: tokens per prompt (default 512, TRL max_prompt_length)");
  app.add_option("--completion-len", rollout.completion_len,
                 "grpo, ppo, rloo: tokens generated per completion, each timed to its end "
                 "(default 256, TRL max_completion_length); prompt + completion is the trained "
                 "sequence");
  app.add_option("--completion-len-mean", rollout.completion_len_mean,
                 "grpo, ppo, rloo: mean tokens per completion when they end at different lengths "
                 "(default: every completion runs to --completion-len); the engine decodes fewer "
                 "sequences as they end, training pads each micro-batch to its longest (or not, "
                 "with --padding-free)");
  app.add_option("--generation-rounds", rollout.generation_rounds,
                 "grpo, ppo, rloo: rollout batches per optimizer step (default 1; TRL up to 0.17 "
                 "generated once per micro-batch: grad-accum rounds; later versions grad-accum / "
                 "steps_per_generation)");
  app.add_option("--rollout-tp", rollout.rollout_tp,
                 "grpo, ppo, rloo: cards one rollout engine spans (vLLM tensor_parallel_size: 1, "
                 "2, 4, 8, ...; default: colocated 1, separate the fewest that hold the weights)");
  app.add_option("--rollout", rollout_mode,
                 "grpo, ppo, rloo: where completions are generated: colocated (an engine on "
                 "each training card, TRL vllm_mode=colocate) | separate (cards of their own, "
                 "TRL vllm_mode=server) (default colocated)");
  app.add_option("--kl", rollout.kl,
                 "grpo, ppo, rloo: KL coefficient (TRL beta; default grpo 0: no reference "
                 "model; ppo, rloo 0.05)");
  app.add_option("--rl-epochs", rollout.epochs,
                 "grpo, ppo, rloo: passes over each generated batch (GRPO num_iterations, "
                 "default 1; PPO num_ppo_epochs, default 4)");
  app.add_option("--engine-memory", rollout.engine_memory,
                 "--rollout colocated: share of each card the engine holds (TRL "
                 "vllm_gpu_memory_utilization; default 0.3)");
  app.add_flag("--sleep", rollout.sleep,
               "--rollout colocated: the engine sleeps while the step trains (TRL "
               "vllm_enable_sleep_mode): its memory is free for training, its weights move to "
               "host memory and back each step");
  app.add_option("--rollout-gpu", rollout_gpu,
                 "--rollout separate: the card that generates (default: the training card)");
  app.add_flag("--async-rollout", rollout.async_rollout,
               "--rollout separate: the engines generate the next step's completions while "
               "this step trains (one step off-policy, as NeMo RL, verl and OpenRLHF run "
               "async): the step is the longer of rollout and training");
  app.add_option("--rollout-gpus", rollout.gpus,
                 "--rollout separate: how many such cards (default 1)");
  app.add_option("--recompute", recompute,
                 "Activation checkpointing: none | selective | full (default full: gradient "
                 "checkpointing, as typical fine-tuning recipes (TRL, torchtune, Unsloth) enable)");
  app.add_option("--recompute-layers", recompute_layers,
                 "With --recompute full: how many of the model's blocks are checkpointed and "
                 "rebuilt in the backward pass; the others keep every activation (Megatron "
                 "--recompute-method block: its count per stage times the stages; torchtitan "
                 "selective_ac_option n: blocks / n) (default 0: every block)");
  app.add_option("--stack", stack,
                 "Software stack (ftplan stacks): hf | peft | torchtune | torchtitan | unsloth | "
                 "deepspeed | megatron | axolotl | llama-factory | litgpt | pytorch | fsdp-qlora | "
                 "fms-acceleration; what it runs where the run leaves it open (attention kernel, "
                 "compilation, optimizer implementation, how a QLoRA base is prepared) (default "
                 "hf)");
  app.add_option("--attention", attention,
                 "Attention kernel: flash (FlashAttention, native GQA) | sdpa (PyTorch SDPA with "
                 "K/V repeated to every head) | eager (keeps the s x s probabilities) (default: "
                 "the stack's; hf: sdpa)");
  app.add_option("--peak", peak,
                 "Peak to report and fit: active | allocated (memory held by tensors) | reserved "
                 "(also the caching allocator's reserve) | nvidia-smi (what the driver reports "
                 "for the process) (default reserved: an out-of-memory error happens when the "
                 "allocator cannot reserve more, so the reserve must fit too). Every kind counts "
                 "the CUDA context and NCCL buffers, outside the allocator but on the card, so "
                 "nvidia-smi gives the reserved figure; the JSON's peaks object gives each kind "
                 "as its tool reports it");
  app.add_flag("--compile", training.compile,
               "torch.compile or fused kernels: norms and activation functions keep only their "
               "16-bit inputs (default: the stack's; off for hf, eager PyTorch)");
  app.add_flag(
      "--no-compile", no_compile,
      "Eager PyTorch even where the stack compiles or fuses by default (unsloth, megatron)");
  app.add_flag("--quant-keeps-input", training.quant_keeps_input,
               "QLoRA: the quantized base's layers keep their 16-bit input for the backward pass, "
               "as bitsandbytes did before 0.43.2 (LitGPT pinned 0.42 until mid-2024); under a "
               "stack whose loop holds its output (litgpt) also through the next micro-batch's "
               "forward pass (default off: today's bitsandbytes keeps only the weight)");
  app.add_flag("--sync-each-batch", training.sync_each_batch,
               "FSDP with --grad-accum above 1: the gradients are reduce-scattered after every "
               "micro-batch and stay sharded (Accelerate's sync_each_batch); default: the "
               "stack's loop, which under FSDP1 accumulates unsharded gradients in no_sync until "
               "the last micro-batch (hf, peft, fms-acceleration, litgpt)");
  app.add_flag(
      "--non-reentrant", training.non_reentrant,
      "Gradient checkpoints run non-reentrant (Transformers' gradient_checkpointing_kwargs "
      "use_reentrant=False, or FSDP's own checkpoint wrapper): under FSDP1 the stack's "
      "reentrant checkpoint around an all-frozen unit keeps every finished block's input "
      "and its gradient to the end of the backward pass, this does not (default: the "
      "stack's; hf, peft and fms-acceleration reentrant)");
  app.add_flag("--pure-bf16", training.pure_bf16,
               "Train the weights in BF16 without an FP32 master copy (torchtune dtype=bf16, PEFT "
               "use_amp=false): optimizer states in BF16 (default off: mixed precision)");
  app.add_flag("--optimizer-in-backward", training.optimizer_in_backward,
               "Optimizer step fused into the backward pass: one parameter's gradient at a time "
               "(torchtune optimizer_in_bwd; needs --grad-accum 1)");
  app.add_flag("--offload-optimizer", training.offload_optimizer,
               "Optimizer states and master weights in host memory (ZeRO-Offload, FSDP CPU "
               "offload); gradients leave the card block by block");
  app.add_flag("--offload-params", training.offload_parameters,
               "Parameters and gradients in host memory (FSDP CPU offload): the card keeps the "
               "all-gathered working set");
  app.add_flag("--offload-activations", training.offload_activations,
               "Saved activations in host memory, one block's worth on the card (torchtune "
               "enable_activation_offloading; default: the stack's, on for unsloth with "
               "--recompute full, its offloaded gradient checkpointing)");
  app.add_flag("--no-offload-activations", no_offload_activations,
               "Saved activations on the card even where the stack offloads its checkpoints "
               "(unsloth: use_gradient_checkpointing=True instead of \"unsloth\")");
  app.add_flag("--chunked-loss", training.chunked_loss,
               "Cross-entropy in chunks with the FP32 upcast fused (torchtune "
               "CEWithChunkedOutputLoss); default off: 16-bit logits + FP32 log-probabilities");
  app.add_option("--loss-chunks", loss_chunks,
                 "Chunks of --chunked-loss (default 8, torchtune's num_output_chunks)");
  app.add_option("--loss", loss,
                 "How the loss holds the logits: fp32-upcast (16-bit logits and an FP32 copy, "
                 "Hugging Face) | bf16 (cross-entropy on the 16-bit logits) | chunked (as "
                 "--chunked-loss) | fused (output layer and loss fused: Liger, Cut Cross-Entropy) "
                 "(default: the stack's; hf: fp32-upcast)");
}

Workload WorkloadOptions::build(Context& ctx) const {
  for (const auto& [value, name] : {std::pair{&model, "model"}, std::pair{&method, "method"}}) {
    if (!required_ || !value->empty()) continue;
    // A --from file that names the setting in a form not taken (a torchtune builder no catalog
    // model matches) says why, in the error as in --json's list of ignored keys.
    std::string why;
    for (const Context::FromFile& f : ctx.from_files)
      for (const IgnoredKey& k : f.file.ignored)
        if (k.setting == name) why += fmt::format("; {} key '{}': {}", f.file.file, k.key, k.why);
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("--{} is required (or a trainer file that names it, --from){}", name, why),
        name);
  }
  Workload w;
  w.model = ctx.resolve_model(model);
  const auto [objective, adapter_method] = resolve_run_method(
      method, adapter, training.precompute_reference, "method", "adapter", "precompute_ref");
  w.objective = objective;
  w.method = adapter_method;
  use_objective_model(w);
  const std::string method_shown =
      "--method " + method + (adapter.empty() ? "" : " --adapter " + adapter);
  // Only the options given count: a default is no choice the user made. Settings a --from file
  // gave that this method does not read were left unset there (from_files.cpp).
  if (app_ != nullptr)
    for (const auto& [option, setting] : kMethodOnlyOptions)
      if (const CLI::Option* given = app_->get_option_no_throw(option); given && given->count())
        check_setting_applies(w.method, setting, option, method_shown);
  w.lora.rank = rank;
  parse_lora_targets(targets, w.lora);
  parse_train_modules(train_modules, w.lora);
  w.lora.dropout = lora_dropout;
  w.optimizer = parse_optimizer(optimizer);
  w.precision = parse_compute_format(precision);
  w.seq = seq;
  if (seq_mean > 0) w.lengths.mean = seq_mean;
  if (!lengths.empty()) {
    w.lengths.histogram = parse_lengths(ctx.read_file(lengths, "lengths"), lengths);
    if (seq_option == nullptr || seq_option->count() == 0)
      w.seq = static_cast<std::int64_t>(w.lengths.histogram.back().tokens);
  }
  w.lengths.packing = packing;
  w.lengths.padding_free = padding_free;
  w.micro_batch = micro_batch;
  w.grad_accum = grad_accum;
  w.recompute = parse_recompute(recompute);
  w.recompute_layers = recompute_layers;
  w.stack = &ctx.stacks().find(stack);
  w.attention = attention.empty() ? w.stack->attention : parse_attention(attention);
  w.peak = parse_peak_kind(peak);
  w.quant = base_quant_config(
      ctx.quant_formats(),
      {base_quant, quant_group, quant_block, quant_second_block, !no_double_quant},
      method_traits(w.method).quantized_base, method);
  w.options = training;
  if (training.compile && no_compile)
    throw UserError(ErrorCode::kInvalidValue, "--compile and --no-compile contradict each other",
                    "compile");
  w.options.compile = !no_compile && (training.compile || w.stack->compile);
  if (training.offload_activations && no_offload_activations)
    throw UserError(ErrorCode::kInvalidValue,
                    "--offload-activations and --no-offload-activations contradict each other",
                    "offload_activations");
  w.options.offload_activations =
      !no_offload_activations &&
      (training.offload_activations || stack_offloads_checkpoints(*w.stack, w.recompute));
  w.options.loss_chunks = loss_chunks;
  w.options.loss = resolve_loss(loss, training.chunked_loss, *w.stack);
  if (!optimizer_impl.empty())
    w.options.optimizer_impl = parse_optimizer_impl(optimizer_impl, "optimizer_impl");
  if (!experts_impl.empty())
    w.options.experts_impl = parse_experts_impl(experts_impl, "experts_impl");
  w.overheads = &ctx.overheads();
  build_rollouts(ctx, w);
  validate(w);
  return w;
}

void WorkloadOptions::build_rollouts(Context& ctx, Workload& w) const {
  constexpr std::pair<const char*, const char*> kRolloutOptions[] = {
      {"--group-size", "group_size"},
      {"--prompts-per-step", "prompts_per_step"},
      {"--prompt-len", "prompt_len"},
      {"--completion-len", "completion_len"},
      {"--completion-len-mean", "completion_len_mean"},
      {"--generation-rounds", "generation_rounds"},
      {"--rollout-tp", "rollout_tp"},
      {"--rollout", "rollout"},
      {"--kl", "kl"},
      {"--rl-epochs", "rl_epochs"},
      {"--engine-memory", "engine_memory"},
      {"--sleep", "sleep"},
      {"--rollout-gpu", "rollout_gpu"},
      {"--rollout-gpus", "rollout_gpus"},
      {"--async-rollout", "async_rollout"}};
  const auto given = [&](const char* option) {
    const CLI::Option* o = app_ ? app_->get_option_no_throw(option) : nullptr;
    return o != nullptr && o->count() > 0;
  };
  if (!is_online(w)) {
    for (const auto& [option, setting] : kRolloutOptions)
      if (given(option))
        throw UserError(ErrorCode::kInvalidValue,
                        fmt::format("{} applies to the online objectives (grpo, ppo, rloo), not "
                                    "to --method {}: leave it out, or give --method grpo, ppo or "
                                    "rloo",
                                    option, method),
                        setting);
    return;
  }
  for (const auto& [option, setting] :
       {std::pair{"--seq", "seq"}, std::pair{"--seq-mean", "seq_mean"},
        std::pair{"--lengths", "lengths"}})
    if (given(option))
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("--method {} trains on its prompts and generated completions: "
                                  "give --prompt-len, --completion-len and --completion-len-mean "
                                  "instead of {}",
                                  method, option),
                      setting);
  w.rollout = rollout;
  w.rollout.mode = parse_rollout_mode(rollout_mode);
  if (rollout_gpu == "auto")
    throw UserError(ErrorCode::kInvalidValue,
                    "--rollout-gpu auto: the planner chooses the rollout cards (rollout_gpu: auto "
                    "in a runs file for ftplan plan); here, name the card that generates",
                    "rollout_gpu");
  if (!rollout_gpu.empty()) w.rollout.gpu = &ctx.resolve_gpu(rollout_gpu);
  set_online_sequence(w);
}

void WorkloadOptions::resolve_rollouts(Workload& w, const Placement& p) const {
  const bool accum_given = grad_accum_option != nullptr && grad_accum_option->count() > 0;
  resolve_rollout_batch(w, p.mig ? 1 : p.layout.dp(p.count), accum_given, "prompts_per_step");
}

void require_mig(Context& ctx, const GpuSpec& gpu, std::string_view field) {
  if (gpu.mig.supported) return;
  std::vector<std::string> mig_cards;
  for (const auto& g : ctx.catalog().gpus())
    if (g.mig.supported) mig_cards.push_back(g.id);
  throw UserError(ErrorCode::kUnsupported,
                  fmt::format("{} ({}) has no MIG: {}; cards with MIG in the catalog: {}", gpu.id,
                              gpu.name, gpu.mig.unsupported_reason, fmt::join(mig_cards, ", ")),
                  std::string(field));
}

const MigProfile& require_mig_profile(const GpuSpec& gpu, const std::string& name,
                                      std::string_view field) {
  if (const MigProfile* p = gpu.mig.find(name)) return *p;
  throw_unknown_name(fmt::format("MIG profile on {}", gpu.id), field, name,
                     gpu.mig.profile_names());
}

Sharding default_sharding(int cards) {
  return cards > 1 ? Sharding::kDdp : Sharding::kNone;
}

void PlacementOptions::add_to(CLI::App& app, bool multi_card, bool with_mig, bool with_topology) {
  app.add_option("--gpu", gpu,
                 "GPU id (ftplan gpus) or name nvidia-smi prints, path to a card file in the "
                 "data/gpus schema, or local (this machine's card, from nvidia-smi; local:FILE "
                 "reads a saved output)")
      ->required();
  if (multi_card) {
    layout.add_to(app);
    gpus_option = app.add_option("--gpus", gpus,
                                 "Number of cards (default 1; with --gpu local: the machine's)");
    app.add_option("--shard", shard,
                   "How model states are split across cards: none | ddp | zero1 | zero2 | fsdp "
                   "(zero3 reads as fsdp) | hsdp | auto (ddp when one card holds the replica, else "
                   "fsdp; with --tp/--pp, the layout's) (default: ddp for several cards)");
    app.add_option("--shard-group", shard_group, kShardGroupHelp);
  }
  if (with_mig)
    app.add_option("--mig", mig, "Run inside one MIG instance of this profile (e.g. 1g.24gb)");
  if (with_topology)
    app.add_option(
        "--topology", topology,
        "pcie | nvlink-bridge-2 | nvlink-bridge-4 | nvswitch | gb200-nvl72 | gb300-nvl72 "
        "(data/comm/topologies.yaml; default: best the card has)");
}

Placement PlacementOptions::build(Context& ctx) const {
  Placement p;
  p.gpu = &ctx.resolve_gpu(gpu);
  p.count = gpus;
  if (Context::is_local_gpu(gpu) && gpus_option && gpus_option->count() == 0)
    p.count = ctx.local_card(gpu).count();
  // A layout without --gpus: the fewest cards it runs on (Layout::min_cards).
  if (!layout.layout.trivial() && gpus_option && gpus_option->count() == 0)
    p.count = layout.layout.min_cards();
  // auto is resolved once the run is known (build(ctx, w)).
  p.sharding = shard.empty() || shard == "auto" ? default_sharding(p.count) : parse_sharding(shard);
  const bool shards = p.sharding != Sharding::kNone && p.sharding != Sharding::kDdp;
  if (shards && p.count == 1) warn_one_card_sharding(ctx, shard);
  p.topology = topology;
  if (!mig.empty()) {
    require_mig(ctx, *p.gpu, "mig");
    p.mig = &require_mig_profile(*p.gpu, mig, "mig");
  }
  validate(p);
  return p;
}

Placement PlacementOptions::build(Context& ctx, const Workload& w) const {
  Placement p = build(ctx);
  load_training_formats(ctx.catalog()).require(*p.gpu, w.precision);
  p.layout = layout.layout;
  if (shard == "auto") p.sharding = auto_sharding(w, model_states(w), p);
  check_layout(w, p);
  // Hybrid sharding's default group: one node's data-parallel cards (nodes as data/comm builds
  // them by default; ftplan scale takes --cards-per-node).
  p.shard_group = shard_group;
  validate(p);
  resolve_shard_group(p, load_comm_constants(ctx.catalog()).cards_per_node);
  check_shard_group(p);
  return p;
}

void LayoutOptions::add_to(CLI::App& app) {
  app.add_option("--tp", layout.tp,
                 "Tensor parallel: each layer's matrices split over this many cards, with sequence "
                 "parallelism (default 1)");
  app.add_option("--pp", layout.pp,
                 "Pipeline parallel: the layers cut into this many stages, 1F1B schedule (default "
                 "1); --grad-accum gives the micro-batches per step");
  app.add_option("--vpp", layout.vpp,
                 "Interleaved pipeline: model chunks per stage (default 1; needs --pp 2 or more)");
  app.add_option("--cp", layout.cp,
                 "Context parallel: each sequence split over this many cards, ring attention "
                 "(default 1)");
  app.add_option("--ep", layout.ep,
                 "Expert parallel: each MoE layer's experts spread over this many cards (default "
                 "1)");
}

void warn_one_card_sharding(Context& ctx, std::string_view shard) {
  ctx.err << fmt::format(
      "warning: --shard {} on one card shards nothing: the card holds every model state, as "
      "with --shard none; give --gpus N to split them over N cards\n",
      shard);
}

}  // namespace ftplan::cli
