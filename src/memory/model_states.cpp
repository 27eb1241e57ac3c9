#include "memory/model_states.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/format.hpp"
#include "workload/objective.hpp"

namespace ftplan {

namespace {

std::string fmt_count(ParamCount n) {
  return group_digits(n);
}
std::string fmt_GB(Bytes b) {
  return fmt::format("{:.3f} GB", to_GB(b));
}

}  // namespace

double quantized_bits_per_param(const QuantConfig& q) {
  // QLoRA §3: 4-bit codes + 8-bit absmax per block of 64 + 32-bit constant per 256 absmax values.
  const double scale_bits =
      q.double_quant ? 8.0 * q.double_quant_scale_bytes +
                           8.0 * q.double_quant_constant_bytes / static_cast<double>(q.second_block)
                     : 8.0 * q.scale_bytes;
  const double per_group = scale_bits + q.zero_bits;
  switch (q.grouping) {
    case QuantGrouping::kFlat:
    case QuantGrouping::kRowGroups:
      return q.block == 0 ? q.bits : q.bits + per_group / q.block;
    case QuantGrouping::kBlocks2d:
      return q.block == 0 ? q.bits : q.bits + per_group / (static_cast<double>(q.block) * q.block);
    case QuantGrouping::kRow:
      break;
  }
  return q.bits;
}

QuantizedBytes quantized_weight_bytes(std::int64_t numel, const QuantConfig& q) {
  const QuantLayoutBytes b = quantized_matrix_bytes(1, numel, q);
  return {Bytes(b.codes), Bytes(b.constants)};
}

QuantizedBytes quantized_tensor_bytes(const TensorSpec& t, const QuantConfig& q) {
  const std::int64_t numel = t.numel();
  const std::int64_t matrix = t.in_features * t.out_features;
  // Flat blocks run over the whole flattened tensor, as bitsandbytes quantizes it.
  if (q.grouping == QuantGrouping::kFlat || matrix <= 0 || numel % matrix != 0)
    return quantized_weight_bytes(numel, q);
  const QuantLayoutBytes b = quantized_matrix_bytes(t.out_features, t.in_features, q);
  const double matrices = static_cast<double>(numel / matrix);
  return {Bytes(b.codes * matrices), Bytes(b.constants * matrices)};
}

TrainedParams trainable_params(const Workload& w) {
  return {trained_set(w).trained_params};
}

ModelStates model_states(const Workload& w, Trace* trace) {
  return model_states(w, trained_set(w), trace);
}

namespace {

// Each tensor's states times share(tensor); no share function: every tensor whole.
ModelStates states_of(const Workload& w, const TrainedSet& set,
                      const std::function<double(const TensorSpec&)>* share) {
  ModelStates s;
  // What belongs to the language-model head (lm_head and whatever is trained on it), which PPO's
  // value and reward models, sequence classifiers with a one-output score head, do not hold. A
  // tied head is the embedding, which they keep.
  ModelStates head;
  const auto is_head = [](const TensorSpec* t) {
    return t != nullptr && t->kind == TensorKind::kOutput;
  };
  auto part = [&](const TensorSpec* t) { return share && t ? (*share)(*t) : 1.0; };
  // What is trained: weights, gradients, master copies and optimizer states per trained tensor,
  // as the optimizer table prices them (Muon and Adafactor treat matrices differently).
  for (const TrainedMatrix& m : set.trained) {
    const OptimizerCost c = optimizer_cost(w.optimizer, m);
    const double k = part(m.tensor);
    ModelStates& into = is_head(m.tensor) ? head : s;
    into.trained_weights += Bytes(c.weight_bytes * k);
    into.gradients += Bytes(c.gradient_bytes * k);
    into.master_weights += Bytes(c.master_bytes * k);
    into.optimizer_states += Bytes(c.state_bytes * k);
  }
  // What is frozen: BF16, 2 B per parameter (seed: "eine BF16-Basis für LoRA"), or block linear
  // weights in NF4 with double quantization (seed; QLoRA paper §3).
  const bool reference = holds_reference_copy(w);
  const bool reward = objective_traits(w.objective).reward_model;
  for (const TensorRole& r : set.roles) {
    const TensorSpec& t = *r.tensor;
    const double k = part(&t);
    const double bf16 = 2.0 * static_cast<double>(t.total()) * k;
    // Frozen copies in the 16-bit compute dtype, as loaded for inference: the reference (the
    // policy's architecture) and PPO's reward model (without the language-model head).
    if (reference) s.reference_weights += Bytes(bf16);
    if (reward && !is_head(&t)) {
      s.reference_weights += Bytes(bf16);
      s.reward_weights += Bytes(bf16);
    }
    ModelStates& into = is_head(&t) ? head : s;
    if (r.base == BaseRole::kFrozen16) {
      // Beside a base the stack prepares for k-bit training, FP32 (TrainedSet::fp32_unquantized).
      into.frozen_weights += Bytes(set.frozen_in_fp32(t) ? 2.0 * bf16 : bf16);
    } else if (r.base == BaseRole::kFrozenQuantized) {
      QuantizedBytes q = quantized_tensor_bytes(t, r.quant);
      into.frozen_weights += q.codes * (static_cast<double>(t.copies()) * k);
      into.quantization_constants += q.constants * (static_cast<double>(t.copies()) * k);
    }
  }
  // PPO's value model: the policy's decoder trained the same way beside it, without its
  // language-model head (the score head's hidden-size parameters are left out).
  const bool value = holds_value_model(w);
  for (auto field : {&ModelStates::frozen_weights, &ModelStates::trained_weights,
                     &ModelStates::gradients, &ModelStates::master_weights,
                     &ModelStates::optimizer_states, &ModelStates::quantization_constants})
    s.*field = (value ? s.*field * 2.0 : s.*field) + head.*field;
  return s;
}

}  // namespace

ModelStates model_states_share(const Workload& w, const TrainedSet& set,
                               const std::function<double(const TensorSpec&)>& share) {
  return states_of(w, set, &share);
}

ModelStates model_states(const Workload& w, const TrainedSet& set, Trace* trace) {
  const ParamInventory& inv = w.model->params;
  const MethodTraits& method = set.traits;
  const ModelStates s = states_of(w, set, nullptr);

  if (trace) {
    const OptimizerRow& opt = optimizer_row(w.optimizer);
    const double n = static_cast<double>(set.trained_params);
    const bool dora = set.adapter == AdapterKind::kDora;
    trace->add(
        {"params.trainable",
         "trainable parameters",
         n,
         "parameters",
         method.trains_base
             ? "every parameter of the model"
             : (dora ? "sum over targeted projections of r · (in + out) + out (the DoRA magnitude) "
                       "per layer (and expert)"
                     : "sum over targeted projections of r · (in + out) per layer (and expert)"),
         {{"total parameters", fmt_count(inv.total)},
          {"rank", method.trains_base ? "-" : std::to_string(w.lora.rank)},
          {"targets", method.trains_base ? "-" : projection_set_name(w.lora.targets)}},
         dora ? "DoRA: Liu et al. 2024; LoRA: Hu et al. 2021"
              : "LoRA: Hu et al. 2021; seed: rank 16 on all seven block projections"});
    if (!method.trains_base)
      trace->add(
          {"memory.frozen_weights",
           "frozen base weights",
           to_GB(s.frozen_weights + s.quantization_constants),
           "GB",
           !method.quantized_base
               ? "2 B × all parameters (BF16 base)"
               : fmt::format("block linear weights as {} stores them ({:.4f} bits on average) + "
                             "other parameters × {}",
                             w.quant.format, quantized_bits_per_param(w.quant),
                             !set.fp32_unquantized ? "2 B (BF16)"
                             : set.bf16_embeddings
                                 ? "4 B for norms and biases (FP32: the stack's k-bit "
                                   "preparation casts them), 2 B for embeddings and output layer"
                                 : "4 B (FP32: the stack's k-bit preparation casts them)"),
           {{"parameters", fmt_count(inv.total)},
            {"block linear parameters", fmt_count(inv.block_linear)}},
           "seed § memory; QLoRA paper §3 (4 + 8/64 + 32/(64·256) = 4.127 bits)"});
    const std::string per_param =
        opt.rule == MatrixRule::kEvery
            ? fmt::format("{} B", opt.weight_bytes + opt.gradient_bytes + opt.master_bytes +
                                      (opt.factored ? 0.0 : opt.state_bytes))
            : std::string("the optimizer's bytes per tensor");
    trace->add({"memory.trained_states",
                "weights, gradients and optimizer states of what is trained",
                to_GB(s.trained_weights + s.gradients + s.master_weights + s.optimizer_states),
                "GB",
                fmt::format("trainable parameters × {} ({})", per_param, opt.basis),
                {{"trainable parameters", fmt_count(set.trained_params)},
                 {"optimizer", std::string(opt.name)}},
                "ZeRO paper §3.1 (16 B per parameter with mixed-precision Adam); seed",
                {"params.trainable"}});
    trace->add({"memory.model_states",
                "model states of one replica",
                to_GB(s.total()),
                "GB",
                "frozen weights + trained weights + gradients + master weights + optimizer states "
                "+ quantization constants + reference model weights",
                {{"frozen weights", fmt_GB(s.frozen_weights)},
                 {"trained weights", fmt_GB(s.trained_weights)},
                 {"gradients", fmt_GB(s.gradients)},
                 {"master weights", fmt_GB(s.master_weights)},
                 {"optimizer states", fmt_GB(s.optimizer_states)},
                 {"quantization constants", fmt_GB(s.quantization_constants)},
                 {"reference model weights", fmt_GB(s.reference_weights)}},
                "seed § memory",
                method.trains_base
                    ? std::vector<std::string>{"memory.trained_states"}
                    : std::vector<std::string>{"memory.frozen_weights", "memory.trained_states"}});
  }
  return s;
}

ModelStates shard_states(const ModelStates& s, Sharding sharding, int cards) {
  if (cards <= 1) return s;
  const double n = cards;
  ModelStates out = s;
  switch (sharding) {
    case Sharding::kNone:
    case Sharding::kDdp:
      break;
    case Sharding::kHsdp:  // `cards`: one shard group's (sharding_view)
    case Sharding::kFsdp:
      // A reference model is prepared like the policy: sharded under ZeRO-3 / FSDP, whole on every
      // card otherwise (TRL _prepare_deepspeed sets stage 0 below stage 3).
      out.reference_weights /= n;
      out.reward_weights /= n;
      out.frozen_weights /= n;
      out.trained_weights /= n;
      out.quantization_constants /= n;
      [[fallthrough]];
    case Sharding::kZero2:
      out.gradients /= n;
      [[fallthrough]];
    case Sharding::kZero1:
      out.master_weights /= n;
      out.optimizer_states /= n;
      break;
  }
  return out;
}

}  // namespace ftplan
