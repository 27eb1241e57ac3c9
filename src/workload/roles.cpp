#include "workload/roles.hpp"

#include <array>
#include <cassert>

#include <fmt/format.h>

#include "core/error.hpp"

namespace ftplan {

namespace {

constexpr std::array<MethodTraits, 5> kMethodTraits = {{
    {Method::kFull, true, AdapterKind::kNone, false, "full fine-tune"},
    {Method::kLora, false, AdapterKind::kLora, false, "LoRA"},
    {Method::kQlora, false, AdapterKind::kLora, true, "QLoRA"},
    {Method::kDora, false, AdapterKind::kDora, false, "DoRA"},
    {Method::kQdora, false, AdapterKind::kDora, true, "QDoRA"},
}};

// A weight as the optimizer sees it: the trailing two dimensions form the matrix (leading ones
// are batch dimensions, e.g. gpt-oss's experts); a vector is one row.
TrainedMatrix whole_tensor(const TensorSpec& t) {
  TrainedMatrix m;
  m.hidden = t.in_blocks;
  m.tensor = &t;
  if (t.shape.size() >= 2) {
    m.rows = t.shape[t.shape.size() - 2];
    m.cols = t.shape.back();
    m.copies = t.numel() / (m.rows * m.cols) * t.copies();
    m.matrix = true;
  } else {
    m.rows = 1;
    m.cols = t.numel();
    m.copies = t.copies();
  }
  return m;
}

// Is projection set `hit` a whole module? An adapter adapts a module whole: a target list that
// names part of a fused module (Phi-3's qkv_proj) is an error.
void check_whole_module(const TensorSpec& t, ProjectionSet hit, const ModelArch& arch) {
  if (hit != t.projections)
    throw UserError(
        ErrorCode::kUnsupported,
        fmt::format("{} fuses {} into one module ({}); LoRA adapts a module whole: target all "
                    "of {} or none of them",
                    arch.id, projection_set_name(t.projections), t.name,
                    projection_set_name(t.projections)),
        "targets");
}

}  // namespace

const MethodTraits& method_traits(Method m) {
  for (const auto& t : kMethodTraits)
    if (t.method == m) return t;
  assert(false && "every Method has a row in kMethodTraits");
  return kMethodTraits.front();
}

std::string_view method_label(Method m) {
  return method_traits(m).label;
}

const TensorRole& TrainedSet::role_of(const TensorSpec& t) const {
  for (const auto& r : roles)
    if (r.tensor == &t) return r;
  assert(false && "tensor of another inventory");
  return roles.front();
}

const TensorRole* TrainedSet::embedding_role() const {
  for (const auto& r : roles)
    if (r.tensor->kind == TensorKind::kEmbedding) return &r;
  return nullptr;
}

bool TrainedSet::frozen_in_fp32(const TensorSpec& t) const {
  if (!fp32_unquantized) return false;
  return !(bf16_embeddings && (t.kind == TensorKind::kEmbedding || t.kind == TensorKind::kOutput));
}

const TensorRole& TrainedSet::output_role() const {
  for (const auto& r : roles)
    if (r.tensor->kind == TensorKind::kOutput) return r;
  if (const TensorRole* e = embedding_role()) return *e;
  return roles.front();
}

TrainedSet trained_set(const Workload& w) {
  const ModelArch& arch = w.model->arch;
  TrainedSet set;
  set.traits = method_traits(w.method);
  const MethodTraits& m = set.traits;
  set.roles.reserve(w.model->params.tensors.size());
  ProjectionSet present = 0;  // the block projections the text decoder has
  for (const auto& t : w.model->params.tensors) {
    TensorRole r;
    r.tensor = &t;
    if (t.part != ModelPart::kText) {
      // A vision tower and its projector stay frozen in 16 bits: held, without gradients,
      // optimizer states or adapters, whatever the method does to the text decoder.
      set.roles.push_back(r);
      continue;
    }
    present |= t.projections;
    if (m.trains_base) {
      r.base = BaseRole::kTrained;
    } else if (m.quantized_base && t.is_block_linear()) {
      // QLoRA §3: block linear weights in NF4; embeddings, output layer, norms, biases in BF16.
      r.base = BaseRole::kFrozenQuantized;
      r.quant = w.quant;
    }
    const bool embedding = t.kind == TensorKind::kEmbedding;
    // The output layer (or, tied, the embedding that serves as it).
    const bool output = t.kind == TensorKind::kOutput || (embedding && w.model->arch.output_tied());
    // PEFT modules_to_save: a trained copy beside the frozen original; a sequence-classification
    // task (a reward model's score head) always saves its head.
    if (!m.trains_base && ((embedding && w.lora.train_embedding) ||
                           (output && (w.lora.train_output || arch.score_head))))
      r.trained_copy = true;
    const bool outside_target =
        (embedding && w.lora.target_embedding) || (output && w.lora.target_output);
    if (m.adapter != AdapterKind::kNone && outside_target) {
      // PEFT LoRA on an embedding (lora_embedding_A [r × vocab], lora_embedding_B [hidden × r])
      // or on lm_head (A [r × hidden], B [vocab × r]): rank · (vocab + hidden) either way. DoRA
      // keeps a magnitude per output feature of a linear layer.
      r.adapter = embedding ? AdapterKind::kLora : m.adapter;
      r.rank = w.lora.rank;
      r.adapter_params = static_cast<ParamCount>(r.rank) * (t.shape[0] + t.shape[1]);
      if (r.adapter == AdapterKind::kDora) r.magnitude_params = t.shape[0];
    }
    const ProjectionSet hit = t.projections & w.lora.targets;
    if (m.adapter != AdapterKind::kNone && hit != 0) {
      check_whole_module(t, hit, arch);
      r.adapter = m.adapter;
      r.rank = w.lora.rank;
      const std::int64_t copies = r.adapter_copies();
      r.adapter_params =
          static_cast<ParamCount>(r.rank) * (t.in_features + t.out_features) * copies;
      if (r.adapter == AdapterKind::kDora) r.magnitude_params = t.out_features * copies;
    }
    set.roles.push_back(r);
  }

  // Targets that name only projections the model lacks (`gate` in a non-gated MLP) adapt
  // nothing: PEFT refuses such a list, and so does this count.
  if (m.adapter != AdapterKind::kNone && w.lora.targets != 0 && (present & w.lora.targets) == 0) {
    throw UserError(
        ErrorCode::kUnsupported,
        fmt::format("{} has no {} projection: the LoRA targets match no module; give --targets "
                    "among its block projections: {}{}",
                    arch.id, projection_set_name(w.lora.targets), projection_set_name(present),
                    arch.gated_mlp() ? ""
                                     : fmt::format("; its MLP is not gated, {} counts as up "
                                                   "and {} as down",
                                                   arch.mlp_in_name, arch.mlp_out_name)),
        "targets");
  }

  for (const auto& r : set.roles) {
    const TensorSpec& t = *r.tensor;
    switch (r.base) {
      case BaseRole::kTrained:
        set.trained.push_back(whole_tensor(t));
        set.any_trained_base = true;
        break;
      case BaseRole::kFrozen16:
        set.frozen16_params += t.total();
        break;
      case BaseRole::kFrozenQuantized:
        set.frozen_quantized_params += t.total();
        set.any_quantized = true;
        break;
    }
    if (r.trained_copy) set.trained.push_back(whole_tensor(t));
    if (!r.adapted()) continue;
    set.any_adapter = true;
    set.adapted_projections |= t.projections;
    set.rank = r.rank;
    if (t.in_blocks || set.adapter == AdapterKind::kNone) set.adapter = r.adapter;
    const std::int64_t copies = r.adapter_copies();
    if (!t.in_blocks) {
      // lm_head / embedding adapters: A [r × shape[1] or vocab], B [shape[0] or hidden × r].
      const std::int64_t rows = t.shape[0], cols = t.shape[1];
      set.trained.push_back(
          {r.rank, t.kind == TensorKind::kEmbedding ? rows : cols, 1, true, false, &t, true});
      set.trained.push_back(
          {t.kind == TensorKind::kEmbedding ? cols : rows, r.rank, 1, true, false, &t, true});
      if (r.adapter == AdapterKind::kDora)
        set.trained.push_back({1, rows, 1, false, false, &t, true});
      continue;
    }
    // LoRA A [r × in] and B [out × r]: 2-D matrices inside the blocks.
    set.trained.push_back({r.rank, t.in_features, copies, true, true, &t, true});
    set.trained.push_back({t.out_features, r.rank, copies, true, true, &t, true});
    // DoRA's magnitude: a vector of out values per module (PEFT lora_magnitude_vector).
    if (r.adapter == AdapterKind::kDora)
      set.trained.push_back({1, t.out_features, copies, false, true, &t, true});
  }
  for (const auto& tm : set.trained)
    set.trained_params += tm.numel();
  set.fp32_unquantized = set.any_quantized && !set.any_trained_base && w.stack != nullptr &&
                         !w.options.kbit_preparation_skipped &&
                         w.stack->fp32_unquantized_with(w.quant.format);
  set.bf16_embeddings = set.fp32_unquantized && w.stack->bf16_embeddings;
  return set;
}

}  // namespace ftplan
