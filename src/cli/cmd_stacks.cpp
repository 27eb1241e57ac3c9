// ftplan stacks: the software stack profiles (data/stacks/) and what each runs where a run leaves
// it open.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "render/table.hpp"
#include "workload/stack.hpp"

namespace ftplan::cli {
namespace {

nlohmann::json or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

// How the stack prepares a quantized base (`memory.quantized_base`); null where it leaves it as
// loaded.
nlohmann::json quantized_base(const StackProfile& s) {
  if (s.fp32_unquantized_for.empty()) return nullptr;
  return {{"fp32_unquantized", s.fp32_unquantized_for},
          {"bf16_embeddings", s.bf16_embeddings},
          {"skipped_when_sharded", s.kbit_skipped_when_sharded},
          {"basis", s.quantized_base_basis}};
}

const bool registered_stacks = register_command(
    {"stacks",
     "Software stacks (--stack): the attention kernel, compilation and optimizer implementation "
     "each runs by default",
     [](CLI::App& app, Context& ctx) {
       auto json = std::make_shared<bool>(false);
       app.add_flag("--json", *json, "Print JSON");
       return [&ctx, json] {
         const Stacks& stacks = ctx.stacks();
         if (*json) {
           nlohmann::json list = nlohmann::json::array();
           for (const auto& s : stacks.profiles)
             list.push_back({{"name", s.name},
                             {"title", s.title},
                             {"attention", attention_name(s.attention)},
                             {"compile", s.compile},
                             {"optimizer_implementation", optimizer_impl_name(s.optimizer)},
                             {"optimizer_memory_passes", s.optimizer_passes},
                             {"experts", experts_impl_name(s.experts)},
                             {"experts_basis", or_null(s.experts_basis)},
                             {"selective_recompute", selective_policy_name(s.selective)},
                             {"selective_recompute_basis", or_null(s.selective_basis)},
                             {"selective_recompute_sources", s.selective_sources},
                             {"offload_checkpoints", s.offload_checkpoints},
                             {"offload_checkpoints_basis", or_null(s.offload_basis)},
                             {"fused_lora_kernels", s.fused_lora},
                             {"fused_lora_basis", or_null(s.lora_basis)},
                             {"fp32_adapters", s.fp32_adapters},
                             {"quantized_base", quantized_base(s)},
                             {"loss", loss_kind_name(s.loss)},
                             {"held_logits_bytes", s.held_logits_bytes},
                             {"previous_graph_held", s.previous_graph_held},
                             {"micro_batch_overhead", s.micro_batch_overhead},
                             {"autocast_weight_casts", s.autocast_weight_casts},
                             {"fsdp1", s.fsdp1},
                             {"fsdp_no_sync", s.fsdp_no_sync},
                             {"fsdp_unit_gradients", s.fsdp_unit_gradients},
                             {"fsdp1_reentrant_checkpoint", s.fsdp1_reentrant_checkpoint},
                             {"default", s.name == Stacks::kDefaultStack},
                             {"sources", s.sources}});
           print_json(ctx, "stacks", nlohmann::json{{"stacks", list}});
           return;
         }
         TextTable t({"stack", "attention", "compiled", "optimizer", "selective", "what it is"});
         for (const auto& s : stacks.profiles)
           t.row({s.name + (s.name == Stacks::kDefaultStack ? " (default)" : ""),
                  std::string(attention_name(s.attention)), s.compile ? "yes" : "no",
                  std::string(optimizer_impl_name(s.optimizer)),
                  std::string(selective_policy_name(s.selective)), s.title});
         t.print(ctx.out);
       };
     },
     46});

}  // namespace
}  // namespace ftplan::cli
