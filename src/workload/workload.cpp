#include "workload/workload.hpp"

#include "workload/objective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>

#include "core/error.hpp"
#include "core/format.hpp"
#include "workload/roles.hpp"

namespace ftplan {

namespace {

// Splits a comma list into trimmed items; an empty item is a UserError naming `field`.
std::vector<std::string> split_list(std::string_view list, std::string_view what,
                                    std::string_view field, std::string_view hint = {}) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    std::string_view item = list.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ')
      item.remove_suffix(1);
    if (item.empty())
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("empty entry in {} list '{}'{}", what, list, hint),
                      std::string(field));
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

ProjectionSet parse_targets(std::string_view list, std::string_view field) {
  static const std::vector<std::pair<std::string, ProjectionSet>> names = {
      {"q", kProjQ},
      {"k", kProjK},
      {"v", kProjV},
      {"o", kProjO},
      {"gate", kProjGate},
      {"up", kProjUp},
      {"down", kProjDown},
      {"q_proj", kProjQ},
      {"k_proj", kProjK},
      {"v_proj", kProjV},
      {"o_proj", kProjO},
      {"gate_proj", kProjGate},
      {"up_proj", kProjUp},
      {"down_proj", kProjDown},
      {"qkv_proj", kProjQ | kProjK | kProjV},
      {"gate_up_proj", kProjGate | kProjUp},
      {"output_proj", kProjO},
      {"w1", kProjGate},
      {"w3", kProjUp},
      {"w2", kProjDown},
      {"attention", kProjQ | kProjK | kProjV | kProjO},
      {"mlp", kProjGate | kProjUp | kProjDown},
      {"all", kAllProjections},
      {"all-linear", kAllProjections}};
  ProjectionSet set = 0;
  for (const std::string& item :
       split_list(list, "target", field, "; expected names such as q,k,v,o,gate,up,down")) {
    bool found = false;
    for (const auto& [n, bits] : names)
      if (n == item) {
        set |= bits;
        found = true;
      }
    if (!found) {
      std::vector<std::string> valid;
      for (const auto& [n, bits] : names)
        valid.push_back(n);
      throw_unknown_name("target module", field, item, valid);
    }
  }
  return set;
}

namespace {

bool is_output_name(std::string_view n) {
  return n == "lm_head" || n == "output";
}
bool is_embedding_name(std::string_view n) {
  return n == "embed_tokens" || n == "embed" || n == "embeddings";
}

}  // namespace

void parse_lora_targets(std::string_view list, LoraConfig& lora, std::string_view field) {
  std::string blocks;
  lora.target_output = false;
  lora.target_embedding = false;
  for (const auto& item : split_list(list, "target", field)) {
    if (is_output_name(item)) {
      lora.target_output = true;
    } else if (is_embedding_name(item)) {
      lora.target_embedding = true;
    } else {
      if (!blocks.empty()) blocks += ',';
      blocks += item;
    }
  }
  lora.targets = blocks.empty() ? ProjectionSet(0) : parse_targets(blocks, field);
}

void parse_train_modules(std::string_view list, LoraConfig& lora, std::string_view field) {
  lora.train_embedding = false;
  lora.train_output = false;
  if (list.empty()) return;
  for (const auto& item : split_list(list, "train_modules", field)) {
    if (is_output_name(item))
      lora.train_output = true;
    else if (is_embedding_name(item))
      lora.train_embedding = true;
    else
      throw_unknown_name("module to train in full", field, item,
                         {"embed", "embed_tokens", "embeddings", "lm_head", "output"});
  }
}

std::string setting_not_read(Method m, std::string_view setting, std::string_view method_shown) {
  static constexpr std::string_view kAdapterSettings[] = {"rank", "targets", "lora_dropout",
                                                          "train_modules"};
  static constexpr std::string_view kQuantSettings[] = {"base_quant", "quant_group", "quant_block",
                                                        "quant_second_block", "double_quant"};
  const auto listed = [&](const auto& list) {
    return std::find(std::begin(list), std::end(list), setting) != std::end(list);
  };
  const MethodTraits& traits = method_traits(m);
  const std::string_view what =
      traits.trains_base ? "trains every weight" : "keeps the frozen base in 16 bits";
  if (listed(kAdapterSettings) && traits.adapter == AdapterKind::kNone)
    return fmt::format("applies to LoRA-family methods (lora, qlora, dora, qdora); {} {}",
                       method_shown, what);
  if (listed(kQuantSettings) && !traits.quantized_base)
    return fmt::format("applies to methods with a quantized frozen base (qlora, qdora); {} {}",
                       method_shown, what);
  return {};
}

void check_setting_applies(Method m, std::string_view setting, std::string_view shown,
                           std::string_view method_shown) {
  const std::string why = setting_not_read(m, setting, method_shown);
  if (!why.empty())
    throw UserError(ErrorCode::kInvalidValue, fmt::format("{} {}", shown, why),
                    std::string(setting));
}

void validate(const Workload& w) {
  auto bad = [](std::string_view field, const std::string& msg) {
    throw UserError(ErrorCode::kInvalidValue, msg, std::string(field));
  };
  if (!w.model) bad("model", "no model given");
  const MethodTraits& method = method_traits(w.method);
  if (method.adapter != AdapterKind::kNone) {
    if (w.lora.rank < 1 || w.lora.rank > 65536)
      bad("rank",
          fmt::format("LoRA rank must be a whole number from 1 to 65536, got {}", w.lora.rank));
    if (w.lora.targets == 0 && !w.lora.target_output && !w.lora.target_embedding)
      bad("targets", "LoRA needs at least one target module (e.g. q,k,v,o,gate,up,down)");
    if (!(w.lora.dropout >= 0 && w.lora.dropout < 1))
      bad("lora_dropout",
          fmt::format("lora_dropout {} is not a dropout probability: expected 0 to below 1",
                      w.lora.dropout));
  } else if (w.lora.train_embedding || w.lora.train_output) {
    bad("train_modules",
        "train_modules (PEFT modules_to_save: modules trained in full beside the adapters) "
        "needs an adapter method (lora, qlora, dora, qdora); a full fine-tune trains every "
        "module already");
  }
  if (method.quantized_base) {
    if (w.quant.bits < 2 || w.quant.bits > 8)
      bad("quant_bits", fmt::format("quantized weights need 2 to 8 bits, got {}", w.quant.bits));
    const int min_block = w.quant.grouping == QuantGrouping::kFlat ? 1 : 0;
    if (w.quant.block < min_block || w.quant.block > 65536)
      bad("quant_group", fmt::format("quantization group size must be {} to 65536 for {}, got {}",
                                     min_block, w.quant.format, w.quant.block));
    if (w.quant.second_block < 1 || w.quant.second_block > 65536)
      bad("quant_second_block",
          fmt::format("second-level block size must be 1 to 65536, got {}", w.quant.second_block));
  }
  if (w.seq < 1 || w.seq > (1 << 24))
    bad("seq", fmt::format("sequence length must be 1 to 16777216 tokens, got {}", w.seq));
  if (w.lengths.mean && !(*w.lengths.mean >= 1 && *w.lengths.mean <= static_cast<double>(w.seq)))
    bad("seq_mean", fmt::format("the mean tokens per sample must be 1 to the longest ({}), got {}",
                                w.seq, *w.lengths.mean));
  if (w.lengths.mean && !w.lengths.histogram.empty())
    bad("seq_mean", "give the mean tokens per sample or a lengths file, not both");
  if (w.micro_batch < 1 || w.micro_batch > 65536)
    bad("micro_batch",
        fmt::format("micro-batch must be 1 to 65536 sequences, got {}", w.micro_batch));
  if (w.options.loss_chunks < 1 || w.options.loss_chunks > 4096)
    bad("loss_chunks",
        fmt::format("the chunked loss needs 1 to 4096 chunks, got {}", w.options.loss_chunks));
  if (w.options.optimizer_in_backward && w.grad_accum > 1)
    throw UserError(ErrorCode::kUnsupported,
                    fmt::format("the optimizer step in the backward pass consumes each gradient as "
                                "it is produced, so it needs gradient accumulation 1, got {}",
                                w.grad_accum),
                    "grad_accum");
  if (w.grad_accum < 1 || w.grad_accum > 1000000)
    bad("grad_accum",
        fmt::format("gradient accumulation must be 1 to 1000000 micro-batches, got {}",
                    w.grad_accum));
  if (w.recompute_layers != 0) {
    // The range first: a count no model could take is wrong whatever the mode.
    if (w.recompute_layers < 0 || w.recompute_layers > w.model->arch.layers)
      bad("recompute_layers",
          fmt::format(
              "recompute_layers must be 1 to the model's {} blocks (0: every block), got {}",
              w.model->arch.layers, w.recompute_layers));
    if (w.recompute != Recompute::kFull)
      bad("recompute_layers",
          fmt::format("recompute_layers {} checkpoints whole blocks, which is full recomputation; "
                      "it needs recompute full, got {}",
                      w.recompute_layers, recompute_name(w.recompute)));
  }
  if (objective_traits(w.objective).online) validate_rollout(w);
}

OptimizerImpl optimizer_impl(const Workload& w) {
  if (w.options.optimizer_impl) return *w.options.optimizer_impl;
  return w.stack ? w.stack->optimizer : OptimizerImpl::kFused;
}

ExpertsImpl experts_impl(const Workload& w) {
  if (w.options.experts_impl) return *w.options.experts_impl;
  return w.stack ? w.stack->experts : ExpertsImpl::kGrouped;
}

bool fsdp_no_sync_accumulation(const Workload& w) {
  return w.grad_accum > 1 && w.stack && w.stack->fsdp_no_sync && !w.options.sync_each_batch;
}

bool fsdp1_reentrant_frozen_units(const Workload& w) {
  return w.stack && w.stack->fsdp1_reentrant_checkpoint && !w.stack->fsdp_unit_gradients &&
         !method_traits(w.method).trains_base && w.recompute == Recompute::kFull &&
         w.recompute_layers == 0 && !w.options.offload_activations && !w.options.non_reentrant;
}

std::string recompute_label(const Workload& w) {
  const std::int64_t all = w.model ? w.model->arch.layers : 0;
  if (w.recompute == Recompute::kFull && w.recompute_layers > 0 && w.recompute_layers < all)
    return fmt::format("full ({} of {} blocks)", w.recompute_layers, all);
  return std::string(recompute_name(w.recompute));
}

std::int64_t Workload::recomputed_blocks(std::int64_t blocks) const {
  if (recompute != Recompute::kFull) return 0;
  const std::int64_t all = model ? model->arch.layers : 0;
  if (recompute_layers <= 0 || all <= 0 || recompute_layers >= all) return blocks;
  return std::llround(static_cast<double>(blocks) * static_cast<double>(recompute_layers) /
                      static_cast<double>(all));
}

void validate(const Placement& p) {
  if (!p.gpu) throw UserError(ErrorCode::kInvalidValue, "no GPU given", "gpu");
  if (p.count < 1 || p.count > 65536)
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("number of GPUs must be a whole number from 1 to 65536, got {}", p.count),
        "gpus");
  if (!(p.power_limit_W >= 0) || !std::isfinite(p.power_limit_W))
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("a power limit must be a number of watts, got {}", p.power_limit_W),
                    "power_limit");
  if (p.shard_group < 0 || p.shard_group > 65536)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("a shard group must be a whole number of cards from 1 to 65536, "
                                "got {}",
                                p.shard_group),
                    "shard_group");
  if (p.shard_group > 0 && p.sharding != Sharding::kHsdp)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("a shard group applies to hybrid sharding (shard hsdp), not to "
                                "shard {}",
                                sharding_name(p.sharding)),
                    "shard_group");
  if (p.mig && p.count > 1)
    throw UserError(
        ErrorCode::kInfeasible,
        fmt::format(
            "a run on MIG instances must use one instance: NCCL does not support MIG "
            "(NVIDIA MIG user guide), so {} cards' worth of {} instances cannot form one run",
            p.count, p.mig->name),
        "gpus");
}

void resolve_shard_group(Placement& p, int cards_per_node) {
  if (p.sharding != Sharding::kHsdp || p.shard_group > 0) return;
  const Layout& l = p.layout;
  const int dp = std::max(1, l.dp(p.count));
  const int inner = l.tp * l.cp;  // the ranks ordered before the data-parallel ones
  const int per_node = cards_per_node >= inner ? std::max(1, cards_per_node / inner) : 1;
  p.shard_group = std::gcd(dp, per_node);
}

int default_shard_group(int count, int cards_per_node) {
  Placement p;
  p.count = count;
  p.sharding = Sharding::kHsdp;
  resolve_shard_group(p, cards_per_node);
  return p.shard_group;
}

void check_shard_group(const Placement& p) {
  if (p.sharding != Sharding::kHsdp || p.shard_group <= 0) return;
  const int dp = std::max(1, p.layout.dp(p.count));
  if (dp % p.shard_group == 0) return;
  throw UserError(
      ErrorCode::kInfeasible,
      fmt::format("hybrid sharding splits the states within groups of --shard-group {} of the {} "
                  "data-parallel cards ({}), which it does not divide; --shard-group may be one "
                  "of: {}",
                  p.shard_group, dp,
                  p.layout.trivial() ? fmt::format("--gpus {}", p.count)
                                     : fmt::format("--gpus {} / (tp {} × pp {} × cp {})", p.count,
                                                   p.layout.tp, p.layout.pp, p.layout.cp),
                  format_divisors(dp, 65536)),
      "shard_group");
}

Placement sharding_view(const Placement& p) {
  if (p.sharding != Sharding::kHsdp) return p;
  Placement v = p;
  v.sharding = Sharding::kFsdp;
  v.shard_group = 0;
  if (p.shard_group > 0 && !p.mig)
    v.count = std::min(p.count, p.shard_group * p.layout.model_parallel());
  return v;
}

std::string sharding_label(Sharding s, int shard_group) {
  if (s == Sharding::kHsdp && shard_group > 0)
    return fmt::format("{} {}", sharding_name(s), shard_group);
  return std::string(sharding_name(s));
}

}  // namespace ftplan
