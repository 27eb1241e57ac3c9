#include "workload/stack.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
#include "core/name_table.hpp"
#include "workload/quant_format.hpp"

namespace ftplan {

namespace {

constexpr NameTable<OptimizerImpl, 3> kImpls{{{
    {OptimizerImpl::kFused, "fused"},
    {OptimizerImpl::kForeach, "foreach"},
    {OptimizerImpl::kForLoop, "for-loop"},
}}};

constexpr NameTable<ExpertsImpl, 2> kExperts{{{
    {ExpertsImpl::kGrouped, "grouped"},
    {ExpertsImpl::kLoop, "loop"},
}}};

constexpr NameTable<SelectivePolicy, 2> kSelective{{{
    {SelectivePolicy::kAttentionCore, "attention-core"},
    {SelectivePolicy::kPerOp, "per-op"},
}}};

// A section whose keys are each optional but which must state one of two.
[[noreturn]] void throw_states_neither(const std::string& path, std::string_view section,
                                       std::string_view a, std::string_view b) {
  throw UserError(ErrorCode::kBadFile,
                  fmt::format("{}: key '{}' states neither '{}' nor '{}'; give one or leave the "
                              "section out",
                              path, section, a, b),
                  std::string(section));
}

}  // namespace

std::string_view selective_policy_name(SelectivePolicy p) {
  return kSelective.name(p);
}

const std::vector<std::string>& selective_policy_names() {
  static const std::vector<std::string> names = kSelective.names();
  return names;
}

std::string_view optimizer_impl_name(OptimizerImpl i) {
  return kImpls.name(i);
}

const std::vector<std::string>& optimizer_impl_names() {
  static const std::vector<std::string> names = kImpls.names();
  return names;
}

std::string_view experts_impl_name(ExpertsImpl i) {
  return kExperts.name(i);
}

const std::vector<std::string>& experts_impl_names() {
  static const std::vector<std::string> names = kExperts.names();
  return names;
}

ExpertsImpl parse_experts_impl(std::string_view name, std::string_view field) {
  return kExperts.parse(name, "experts implementation", field);
}

OptimizerImpl parse_optimizer_impl(std::string_view name, std::string_view field) {
  return kImpls.parse(name, "optimizer implementation", field);
}

OptimizerKernels optimizer_kernels(OptimizerImpl impl, const StackProfile* stack) {
  if (stack && stack->optimizer == impl)
    return {stack->optimizer_passes, stack->optimizer_launches_per_tensor};
  switch (impl) {
    case OptimizerImpl::kFused:
      return {1, 0};
    case OptimizerImpl::kForeach:
      return {3, 0};
    case OptimizerImpl::kForLoop:
      return {3, 8};
  }
  return {};
}

StackProfile parse_stack(const DataFile& file, const SourceTable& sources,
                         const std::vector<std::string>& base_formats) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  StackProfile s;
  s.file = file.path;
  s.name = root.required_string("name");
  s.title = root.required_string("title");
  s.attention = parse_attention(root.required_choice("attention", attention_names()), "attention");
  s.compile = root.required_bool("compile");
  StrictMap opt = root.required_map("optimizer");
  s.optimizer = kImpls.parse(opt.required_choice("implementation", optimizer_impl_names()),
                             "optimizer implementation", opt.where("implementation"));
  s.optimizer_passes = opt.required_number("memory_passes", 1, 20);
  s.optimizer_launches_per_tensor = opt.optional_number("launches_per_tensor", 0, 100).value_or(0);
  s.optimizer_basis = opt.required_string("basis");
  opt.finish();
  if (auto ex = root.optional_map("experts")) {
    s.experts = kExperts.parse(ex->required_choice("implementation", experts_impl_names()),
                               "experts implementation", ex->where("implementation"));
    s.experts_basis = ex->required_string("basis");
    ex->finish();
  }
  if (auto rc = root.optional_map("recompute")) {
    const auto selective = rc->optional_choice("selective", selective_policy_names());
    const auto offload = rc->optional_bool("offload_checkpoints");
    if (!selective && !offload)
      throw_states_neither(file.path, "recompute", "selective", "offload_checkpoints");
    const std::string basis = rc->required_string("basis");
    const std::vector<std::string> ids = read_source_ids(*rc, sources);
    if (selective) {
      s.selective =
          kSelective.parse(*selective, "selective recomputation policy", rc->where("selective"));
      s.selective_basis = basis;
      s.selective_sources = ids;
    }
    if (offload) {
      s.offload_checkpoints = *offload;
      s.offload_basis = basis;
    }
    rc->finish();
  }
  if (auto mem = root.optional_map("memory")) {
    s.memory_stated = true;
    StrictMap loss = mem->required_map("loss");
    s.loss = parse_loss_kind(loss.required_choice("kind", loss_kind_names()), "memory.loss.kind");
    s.held_logits_bytes = loss.optional_number("held_logits_bytes", 0, 4).value_or(0);
    s.previous_graph_held = loss.optional_bool("previous_graph_held").value_or(false);
    s.loss_basis = loss.required_string("basis");
    loss.finish();
    StrictMap load = mem->required_map("load");
    s.load_full_on_each_card = load.required_bool("full_on_each_card");
    s.load_bytes_per_param = load.required_number("bytes_per_param", 1, 4);
    s.load_basis = load.required_string("basis");
    load.finish();
    if (auto buffers = mem->optional_map("buffers")) {
      s.fsdp_root_unsharded = buffers->optional_bool("fsdp_root_unsharded").value_or(false);
      s.ddp_gradient_copy = buffers->optional_bool("ddp_gradient_bucket_copy").value_or(false);
      s.fp32_main_gradients = buffers->optional_bool("fp32_main_gradients").value_or(false);
      s.fsdp_fp32_parameters = buffers->optional_bool("fsdp_fp32_parameters").value_or(false);
      s.fsdp1 = buffers->optional_bool("fsdp1").value_or(false);
      s.fsdp_no_sync = buffers->optional_bool("fsdp_no_sync").value_or(false);
      s.fsdp_unit_gradients = buffers->optional_bool("fsdp_unit_gradients").value_or(false);
      s.fsdp1_reentrant_checkpoint =
          buffers->optional_bool("fsdp1_reentrant_checkpoint").value_or(false);
      if (auto z = buffers->optional_map("zero_estimate")) {
        s.zero2_replicated_bytes = z->required_number("zero2_replicated_bytes_per_param", 0, 64);
        s.zero2_sharded_bytes = z->required_number("zero2_sharded_bytes_per_param", 0, 64);
        s.zero3_sharded_bytes = z->required_number("zero3_sharded_bytes_per_param", 0, 64);
        s.zero3_largest_layer_bytes =
            z->required_number("zero3_largest_layer_bytes_per_param", 0, 64);
        z->finish();
      }
      s.buffers_basis = buffers->required_string("basis");
      buffers->finish();
    }
    if (auto lora = mem->optional_map("lora")) {
      const auto fused = lora->optional_bool("fused_kernels");
      const auto fp32 = lora->optional_bool("fp32_adapters");
      if (!fused && !fp32)
        throw_states_neither(file.path, "memory.lora", "fused_kernels", "fp32_adapters");
      s.fused_lora = fused.value_or(false);
      s.fp32_adapters = fp32.value_or(false);
      s.lora_basis = lora->required_string("basis");
      lora->finish();
    }
    if (auto qb = mem->optional_map("quantized_base")) {
      s.fp32_unquantized_for = qb->string_list("fp32_unquantized", true);
      for (const auto& id : s.fp32_unquantized_for)
        if (!base_formats.empty() &&
            std::find(base_formats.begin(), base_formats.end(), id) == base_formats.end())
          throw_unknown_name(fmt::format("base format in {}", file.path),
                             "memory.quantized_base.fp32_unquantized", id, base_formats);
      s.bf16_embeddings = qb->required_bool("bf16_embeddings");
      s.kbit_skipped_when_sharded = qb->optional_bool("skipped_when_sharded").value_or(false);
      s.quantized_base_basis = qb->required_string("basis");
      qb->finish();
    }
    read_source_ids(*mem, sources);
    mem->finish();
  }
  if (auto host = root.optional_map("host")) {
    s.micro_batch_overhead = host->required_bool("micro_batch_overhead");
    s.autocast_weight_casts = host->optional_bool("autocast_weight_casts").value_or(false);
    s.host_basis = host->required_string("basis");
    host->finish();
  }
  s.note = root.optional_string("note").value_or("");
  s.sources = read_source_ids(root, sources);
  root.finish();
  return s;
}

bool stack_offloads_checkpoints(const StackProfile& stack, Recompute recompute) {
  return stack.offload_checkpoints && recompute == Recompute::kFull;
}

bool StackProfile::fp32_unquantized_with(std::string_view base_format) const {
  return std::find(fp32_unquantized_for.begin(), fp32_unquantized_for.end(), base_format) !=
         fp32_unquantized_for.end();
}

const StackProfile& Stacks::find(std::string_view name, std::string_view field) const {
  for (const auto& p : profiles)
    if (p.name == name) return p;
  throw_unknown_name("software stack", field, name, names());
}

std::vector<std::string> Stacks::names() const {
  std::vector<std::string> out;
  for (const auto& p : profiles)
    out.push_back(p.name);
  return out;
}

Stacks load_stacks(const Catalog& catalog) {
  Stacks s;
  const std::vector<std::string> formats = load_quant_formats(catalog).ids();
  for (const DataFile* f : catalog.files_under("stacks")) {
    StackProfile p = parse_stack(*f, catalog.sources(), formats);
    const std::string expected = fmt::format("{}.yaml", p.name);
    if (!f->path.ends_with(expected))
      throw UserError(ErrorCode::kBadFile,
                      fmt::format("{}: key 'name' ({}) must match the file name", f->path, p.name),
                      "name");
    for (const auto& q : s.profiles)
      if (q.name == p.name)
        throw UserError(
            ErrorCode::kBadFile,
            fmt::format("{}: stack '{}' is defined twice ({})", f->path, p.name, q.file), "name");
    s.profiles.push_back(std::move(p));
  }
  std::sort(s.profiles.begin(), s.profiles.end(), [](const auto& a, const auto& b) {
    if ((a.name == Stacks::kDefaultStack) != (b.name == Stacks::kDefaultStack))
      return a.name == Stacks::kDefaultStack;
    return a.name < b.name;
  });
  if (s.profiles.empty() || s.profiles.front().name != Stacks::kDefaultStack)
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("data/stacks/{}.yaml is missing: the default software stack",
                                Stacks::kDefaultStack),
                    "data");
  const StackProfile& base = s.profiles.front();
  if (!base.memory_stated)
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: key 'memory' is missing: the default stack states the loss "
                                "and load behaviour every other stack falls back to",
                                base.file),
                    "memory");
  for (auto& p : s.profiles)
    if (!p.memory_stated) {
      p.loss = base.loss;
      p.held_logits_bytes = base.held_logits_bytes;
      p.previous_graph_held = base.previous_graph_held;
      p.loss_basis =
          fmt::format("as {} (not stated for this stack): {}", base.name, base.loss_basis);
      p.load_full_on_each_card = base.load_full_on_each_card;
      p.load_bytes_per_param = base.load_bytes_per_param;
      p.load_basis =
          fmt::format("as {} (not stated for this stack): {}", base.name, base.load_basis);
      p.fsdp_root_unsharded = base.fsdp_root_unsharded;
      p.ddp_gradient_copy = base.ddp_gradient_copy;
      p.fp32_main_gradients = base.fp32_main_gradients;
      p.fsdp_fp32_parameters = base.fsdp_fp32_parameters;
      p.fsdp1 = base.fsdp1;
      p.fsdp_no_sync = base.fsdp_no_sync;
      p.fsdp_unit_gradients = base.fsdp_unit_gradients;
      p.fsdp1_reentrant_checkpoint = base.fsdp1_reentrant_checkpoint;
      p.buffers_basis = base.buffers_basis;
      // Trainers on the Transformers Trainer take PEFT's adapters as the default stack does.
      p.fp32_adapters = base.fp32_adapters;
      if (p.lora_basis.empty() && base.fp32_adapters)
        p.lora_basis =
            fmt::format("as {} (not stated for this stack): {}", base.name, base.lora_basis);
      // How a quantized base is prepared is the trainer's own (axolotl and LLaMA-Factory keep
      // the norms in BF16): not taken from the default stack.
    }
  return s;
}

}  // namespace ftplan
