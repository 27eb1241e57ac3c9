// Model-state memory: weights, gradients, master weights, optimizer states and quantization
// constants — the seed's accounting (§ "Welche Läufe in 141 und 96 GB passen").
#pragma once

#include <functional>

#include "core/trace.hpp"
#include "core/units.hpp"
#include "workload/roles.hpp"

namespace ftplan {

// What a method trains (workload/roles.hpp decides it per tensor).
struct TrainedParams {
  ParamCount count = 0;  // trainable parameters
};

// Trainable parameters: every parameter for a full fine-tune; LoRA adapters r·(in + out) per
// targeted projection (Hu et al. 2021), and for DoRA one magnitude per output feature, otherwise.
// A fused module (Phi-3 qkv_proj) is one target.
TrainedParams trainable_params(const Workload& w);

// Bytes of one replica's model states (not yet divided across cards).
struct ModelStates {
  Bytes frozen_weights;   // LoRA/QLoRA base: BF16, or NF4 codes for QLoRA block linears
  Bytes trained_weights;  // 16-bit copy of what is trained
  Bytes gradients;
  Bytes master_weights;  // FP32 copy of what is trained
  Bytes optimizer_states;
  Bytes quantization_constants;  // QLoRA absmax constants (first and second level)
  // Frozen 16-bit copies of the model that score the sequences (workload/objective.hpp
  // frozen_model_copies): a preference or RL objective's reference (none with adapters: the base
  // with them switched off is the reference) and PPO's reward model.
  Bytes reference_weights;
  // Of reference_weights: PPO's reward model (a sequence classifier, no language-model head). Not
  // added to the total again; the traffic of its pass and of the value model's is sized by it.
  Bytes reward_weights;
  Bytes total() const {
    return frozen_weights + trained_weights + gradients + master_weights + optimizer_states +
           quantization_constants + reference_weights;
  }
};

ModelStates model_states(const Workload& w, Trace* trace = nullptr);
ModelStates model_states(const Workload& w, const TrainedSet& set, Trace* trace = nullptr);
// The part of one replica's states a card holds when the model is split (parallel/layout.hpp):
// every tensor's weights, gradients, master copy, optimizer states and quantization constants,
// and those of the adapters on it, times share(tensor) (1: the whole tensor, 0: none of it).
ModelStates model_states_share(const Workload& w, const TrainedSet& set,
                               const std::function<double(const TensorSpec&)>& share);

// Per-card share under a sharding strategy over `cards` cards (ZeRO stages, Rajbhandari et al.
// 2020 §5): ZeRO-1 splits optimizer states and master weights, ZeRO-2 also gradients, ZeRO-3 /
// FSDP everything, the frozen base included. DDP and none replicate.
ModelStates shard_states(const ModelStates& s, Sharding sharding, int cards);

// Bytes of a quantized weight of `numel` elements taken as one flat tensor (codes + constants),
// exactly, with partial blocks rounded up as bitsandbytes pads them: right for the flat-block
// formats (NF4, HQQ); a matrix of a row-grouped format needs quantized_tensor_bytes.
struct QuantizedBytes {
  Bytes codes;
  Bytes constants;
};
QuantizedBytes quantized_weight_bytes(std::int64_t numel, const QuantConfig& q);
// Bytes of one copy of tensor `t` (numel() elements: every expert of a fused expert tensor) as the
// format stores it, one [out × in] matrix at a time (workload/quant_format.hpp).
QuantizedBytes quantized_tensor_bytes(const TensorSpec& t, const QuantConfig& q);
// Average bits per parameter of the format for a large matrix (4.127 for NF4 + double
// quantization at the defaults; row-wise constants and per-input indices vanish in the limit).
double quantized_bits_per_param(const QuantConfig& q);

}  // namespace ftplan
