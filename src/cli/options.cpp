#include "cli/options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

namespace ftplan::cli {

void WorkloadOptions::add_to(CLI::App& app, bool runtime, bool required) {
  auto* model_opt = app.add_option(
      "--model", model, "Catalog model id (ftplan models) or path to a Hugging Face config.json");
  auto* method_opt = app.add_option("--method", method, "Training method: full | lora | qlora");
  if (required) {
    model_opt->required();
    method_opt->required();
  }
  app.add_option("--rank", rank, "LoRA/QLoRA rank (default 16, as in the seed)");
  app.add_option("--targets", targets,
                 "LoRA target modules, comma-separated: q,k,v,o,gate,up,down (default: all seven), "
                 "also q_proj..., attention, mlp, all");
  app.add_option("--optimizer", optimizer,
                 fmt::format("Optimizer: {} (default adamw: 16 B per trained parameter)",
                             fmt::join(optimizer_names(), " | ")));
  app.add_option("--quant-block", quant_block,
                 "QLoRA: weights per quantization block (default 64)");
  app.add_option(
      "--quant-second-block", quant_second_block,
      "QLoRA: absmax values per second-level block of double quantization (default 256)");
  app.add_flag("--no-double-quant", no_double_quant,
               "QLoRA: FP32 absmax per block instead of double quantization");
  if (!runtime) return;
  app.add_option(
      "--precision", precision,
      "Compute format of the matrix products: bf16 | fp16 | fp8 | mxfp8 | nvfp4 (default bf16)");
  app.add_option("--seq", seq, "Tokens per sequence (default 2048)");
  app.add_option("--micro-batch", micro_batch,
                 "Sequences per card per forward/backward pass (default 1)");
  app.add_option("--grad-accum", grad_accum, "Micro-batches per optimizer step (default 1)");
  app.add_option(
      "--recompute", recompute,
      "Activation checkpointing: none | selective | full (default full, as typical LoRA recipes)");
  app.add_option("--attention", attention, "Attention kernel: flash | eager (default flash)");
  app.add_option(
      "--peak", peak,
      "Which peak to report: allocated | reserved (default reserved, what nvidia-smi sees)");
  app.add_flag("--optimizer-in-backward", training.optimizer_in_backward,
               "Optimizer step fused into the backward pass (gradients freed layer by layer)");
  app.add_flag("--offload-optimizer", training.offload_optimizer,
               "Optimizer states and master weights in host memory");
  app.add_flag("--offload-params", training.offload_parameters, "FSDP CPU offload of parameters");
  app.add_flag("--offload-activations", training.offload_activations,
               "Saved activations in host memory");
  app.add_flag("--chunked-loss", training.chunked_loss,
               "Cross-entropy in chunks (no full-vocabulary logits)");
}

Workload WorkloadOptions::build(Context& ctx) const {
  Workload w;
  w.model = ctx.resolve_model(model);
  w.method = parse_method(method);
  w.lora.rank = rank;
  w.lora.targets = parse_targets(targets);
  w.optimizer = parse_optimizer(optimizer);
  w.precision = parse_compute_format(precision);
  w.seq = seq;
  w.micro_batch = micro_batch;
  w.grad_accum = grad_accum;
  w.recompute = parse_recompute(recompute);
  w.attention = parse_attention(attention);
  if (peak == "allocated")
    w.peak = PeakKind::kAllocated;
  else if (peak == "reserved")
    w.peak = PeakKind::kReserved;
  else
    throw_unknown_name("peak kind", "peak", peak, {"allocated", "reserved"});
  w.quant.block = quant_block;
  w.quant.second_block = quant_second_block;
  w.quant.double_quant = !no_double_quant;
  w.options = training;
  validate(w);
  return w;
}

std::string run_title(const Workload& w) {
  std::string method;
  switch (w.method) {
    case Method::kFull:
      method = "full fine-tune";
      break;
    case Method::kLora:
      method = fmt::format("LoRA r{} ({})", w.lora.rank, projection_set_name(w.lora.targets));
      break;
    case Method::kQlora:
      method = fmt::format("QLoRA NF4 r{} ({})", w.lora.rank, projection_set_name(w.lora.targets));
      break;
  }
  return fmt::format("{} · {} · {}", w.model->arch.name, method, optimizer_name(w.optimizer));
}

Sharding default_sharding(int cards) {
  return cards > 1 ? Sharding::kDdp : Sharding::kNone;
}

void PlacementOptions::add_to(CLI::App& app, bool multi_card, bool with_mig, bool with_topology) {
  app.add_option("--gpu", gpu,
                 "GPU id (ftplan gpus) or path to a card file in the data/gpus schema")
      ->required();
  if (multi_card) {
    app.add_option("--gpus", gpus, "Number of cards (default 1)");
    app.add_option("--shard", shard,
                   "How model states are split across cards: none | ddp | zero1 | zero2 | fsdp "
                   "(default: ddp for several cards)");
  }
  if (with_mig)
    app.add_option("--mig", mig, "Run inside one MIG instance of this profile (e.g. 1g.24gb)");
  if (with_topology)
    app.add_option(
        "--topology", topology,
        "pcie | nvlink-bridge-2 | nvlink-bridge-4 | nvswitch (default: best the card has)");
}

Placement PlacementOptions::build(Context& ctx) const {
  Placement p;
  p.gpu = &ctx.resolve_gpu(gpu);
  p.count = gpus;
  p.sharding = shard.empty() ? default_sharding(gpus) : parse_sharding(shard);
  p.topology = topology;
  if (!mig.empty()) {
    if (!p.gpu->mig.supported)
      throw UserError(ErrorCode::kUnsupported,
                      fmt::format("{} has no MIG: {}", p.gpu->name, p.gpu->mig.unsupported_reason),
                      "mig");
    p.mig = p.gpu->mig.find(mig);
    if (!p.mig)
      throw_unknown_name(fmt::format("MIG profile on {}", p.gpu->id), "mig", mig,
                         p.gpu->mig.profile_names());
  }
  validate(p);
  return p;
}

}  // namespace ftplan::cli
