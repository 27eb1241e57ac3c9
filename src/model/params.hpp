// The exact parameter inventory of a model: every tensor with its name, shape and kind.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"
#include "model/architecture.hpp"

namespace ftplan {

// Which part of a checkpoint a tensor belongs to: the text decoder, a vision tower, or the
// projector between them.
enum class ModelPart { kText, kVision, kProjector };
std::string_view model_part_name(ModelPart p);

enum class TensorKind { kLinear, kEmbedding, kOutput, kNorm, kBias, kRouter, kExpert, kOther };
std::string_view tensor_kind_name(TensorKind k);

// The seven block projections LoRA targets by default, as bits so that a fused module (Phi-3's
// qkv_proj) can carry several.
enum Projection : std::uint8_t {
  kProjQ = 1,
  kProjK = 2,
  kProjV = 4,
  kProjO = 8,
  kProjGate = 16,
  kProjUp = 32,
  kProjDown = 64,
};
using ProjectionSet = std::uint8_t;
inline constexpr ProjectionSet kAllProjections = 127;
std::string projection_set_name(ProjectionSet s);  // "q,k,v"

struct TensorSpec {
  std::string name;                 // Hugging Face name; {L} = layer index, {E} = expert index
  std::vector<std::int64_t> shape;  // PyTorch order: [out, in] for a linear weight
  TensorKind kind = TensorKind::kOther;
  ProjectionSet projections = 0;  // the block projections this weight implements
  std::int64_t in_features = 0;   // linear and expert weights: per expert
  std::int64_t out_features = 0;
  std::int64_t layers = 1;   // how many decoder layers hold this tensor (1 outside blocks)
  std::int64_t experts = 1;  // expert copies per layer (1 for everything but experts)
  bool in_blocks = false;    // inside the decoder blocks
  ModelPart part = ModelPart::kText;
  // Elements of one tensor (for a fused expert tensor: all experts of one layer).
  std::int64_t numel() const;
  // Elements of all copies: numel x layers (x experts where they are separate tensors).
  ParamCount total() const;
  std::int64_t copies() const { return layers * (shape_has_experts ? 1 : experts); }
  bool shape_has_experts = false;  // gpt-oss stores all experts of a layer in one 3-D tensor
  // A block linear weight (attention or MLP projection, router, expert): what QLoRA quantizes.
  bool is_block_linear() const {
    return in_blocks && (kind == TensorKind::kLinear || kind == TensorKind::kExpert ||
                         kind == TensorKind::kRouter);
  }
};

struct ParamInventory {
  std::vector<TensorSpec> tensors;
  ParamCount total = 0;
  ParamCount block_linear = 0;  // linear/expert/router weights in the decoder blocks
  ParamCount embedding_and_output = 0;
  ParamCount norms = 0;
  ParamCount biases = 0;
  ParamCount other = 0;  // attention sinks and the like
  // Totals per part (text + vision + projector = total).
  ParamCount text = 0;
  ParamCount vision = 0;
  ParamCount projector = 0;
  ParamCount active_per_token =
      0;  // MoE: parameters one token passes through (embedding lookup excluded)
};

ParamInventory build_param_inventory(const ModelArch& arch);

}  // namespace ftplan
