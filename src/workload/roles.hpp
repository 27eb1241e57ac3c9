// Roles per tensor: the one place that turns (model, method, options) into what happens to every
// tensor of the model — trained in full, frozen in 16 bits, frozen in a quantized format, and
// whether an adapter (LoRA, DoRA) sits on it. Memory, operations, activations and traffic read
// these roles; none of them compares Method values.
#pragma once

#include <string_view>
#include <vector>

#include "workload/workload.hpp"

namespace ftplan {

// How a tensor's own weight is held.
enum class BaseRole {
  kTrained,          // trained: 16-bit weight, gradient, master copy and optimizer states
  kFrozen16,         // frozen in the 16-bit compute format (BF16)
  kFrozenQuantized,  // frozen in a quantized format (QuantConfig: NF4 + double quantization)
};
// Which adapter sits on a tensor.
enum class AdapterKind {
  kNone,
  kLora,  // Y += s·(X·Aᵀ)·Bᵀ, A [r × in], B [out × r] (Hu et al. 2021)
  kDora,  // LoRA plus a trained magnitude per output row, scaling the normalised weight
          // W' = m · (W + s·B·A) / ‖W + s·B·A‖ per row (Liu et al. 2024)
};

// What a method does, as the role builder reads it. One row per Method (roles.cpp).
struct MethodTraits {
  Method method;
  bool trains_base;        // every weight trained (a full fine-tune)
  AdapterKind adapter;     // the adapter on targeted projections
  bool quantized_base;     // block linear weights frozen in the quantized format
  std::string_view label;  // "full fine-tune", "LoRA", "QLoRA", "DoRA", "QDoRA"
};
const MethodTraits& method_traits(Method m);
std::string_view method_label(Method m);

struct TensorRole {
  const TensorSpec* tensor = nullptr;
  BaseRole base = BaseRole::kFrozen16;
  AdapterKind adapter = AdapterKind::kNone;
  int rank = 0;                     // adapter rank
  QuantConfig quant;                // the format of a kFrozenQuantized base
  ParamCount adapter_params = 0;    // A and B over every copy (layers × experts)
  ParamCount magnitude_params = 0;  // DoRA: one per output feature over every copy
  // PEFT modules_to_save: a trained full copy of the tensor beside its frozen original (the copy
  // is in `trained`, the original keeps `base`).
  bool trained_copy = false;
  bool trained() const { return base == BaseRole::kTrained; }
  bool adapted() const { return adapter != AdapterKind::kNone; }
  bool quantized() const { return base == BaseRole::kFrozenQuantized; }
  // Copies of the adapter: one per layer and expert (experts are adapted one by one).
  std::int64_t adapter_copies() const { return tensor->layers * tensor->experts; }
};

// The roles of every tensor of one workload, and what the optimizer updates.
struct TrainedSet {
  MethodTraits traits;
  std::vector<TensorRole> roles;       // parallel to model->params.tensors
  std::vector<TrainedMatrix> trained;  // trained weights, adapter matrices, DoRA magnitudes
  ParamCount trained_params = 0;       // sum of trained[i].numel()
  ParamCount frozen16_params = 0;
  ParamCount frozen_quantized_params = 0;
  bool any_trained_base = false;  // some model weight is trained (not only adapters)
  bool any_adapter = false;
  bool any_quantized = false;
  // The stack prepares the quantized base by casting every frozen parameter left in 16 bits
  // (norms, embeddings, output layer) to FP32 (data/stacks `memory.quantized_base`; PEFT's
  // prepare_model_for_kbit_training): those weights take 4 B, and the FP32 norms make the
  // residual stream FP32 (memory/activations.cpp).
  bool fp32_unquantized = false;
  bool bf16_embeddings = false;  // ...but the embeddings and the output layer cast back to BF16
  // Whether the frozen 16-bit tensor `t` is held in FP32 by that preparation.
  bool frozen_in_fp32(const TensorSpec& t) const;
  ProjectionSet adapted_projections = 0;  // block projections that carry an adapter
  int rank = 0;                           // adapter rank (0 without adapters)
  AdapterKind adapter = AdapterKind::kNone;

  // The role of a tensor of this workload's inventory (`t` must be one of its tensors).
  const TensorRole& role_of(const TensorSpec& t) const;
  // The output layer's role (the embedding's when the two are tied).
  const TensorRole& output_role() const;
  const TensorRole* embedding_role() const;
};

// Builds the roles; a LoRA target list that splits a fused module (Phi-3 qkv_proj) is a UserError.
TrainedSet trained_set(const Workload& w);

}  // namespace ftplan
