#include "memory/model_states.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/format.hpp"
#include "memory/optimizer.hpp"

namespace ftplan {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

std::string fmt_count(ParamCount n) {
  return group_digits(n);
}
std::string fmt_GB(Bytes b) {
  return fmt::format("{:.3f} GB", to_GB(b));
}

// The LoRA adapter parameters of one tensor: A [r, in] and B [out, r] per copy.
ParamCount adapter_params(const TensorSpec& t, const LoraConfig& lora, const ModelArch& arch) {
  const ProjectionSet hit = t.projections & lora.targets;
  if (hit == 0) return 0;
  if (hit != t.projections)
    throw UserError(
        ErrorCode::kUnsupported,
        fmt::format("{} fuses {} into one module ({}); LoRA adapts a module whole: target all "
                    "of {} or none of them",
                    arch.id, projection_set_name(t.projections), t.name,
                    projection_set_name(t.projections)),
        "targets");
  const std::int64_t per_expert_copies = t.layers * t.experts;  // adapters are per expert
  return static_cast<ParamCount>(lora.rank) * (t.in_features + t.out_features) * per_expert_copies;
}

}  // namespace

double quantized_bits_per_param(const QuantConfig& q) {
  // QLoRA §3: 4-bit codes + 8-bit absmax per block of 64 + 32-bit constant per 256 absmax values.
  if (q.double_quant)
    return q.bits + 8.0 / q.block + 32.0 / (static_cast<double>(q.block) * q.second_block);
  return q.bits + 32.0 / q.block;
}

QuantizedBytes quantized_weight_bytes(std::int64_t numel, const QuantConfig& q) {
  const std::int64_t blocks = ceil_div(numel, q.block);
  QuantizedBytes out;
  out.codes = Bytes(static_cast<double>(ceil_div(numel * q.bits, 8)));
  if (q.double_quant) {
    const std::int64_t second = ceil_div(blocks, q.second_block);
    out.constants = Bytes(static_cast<double>(blocks) * 1.0 + static_cast<double>(second) * 4.0);
  } else {
    out.constants = Bytes(static_cast<double>(blocks) * 4.0);
  }
  return out;
}

TrainedParams trainable_params(const Workload& w) {
  const ModelArch& arch = w.model->arch;
  TrainedParams out;
  for (const auto& t : w.model->params.tensors) {
    if (w.method == Method::kFull) {
      out.count += t.total();
      if (t.shape.size() >= 2) {
        // Adafactor factors the trailing two dimensions of each matrix (leading ones are batch).
        const std::int64_t rows = t.shape[t.shape.size() - 2], cols = t.shape.back();
        const std::int64_t lead = t.numel() / (rows * cols);
        out.factored_state_elems += (rows + cols) * lead * t.copies();
      } else {
        out.factored_state_elems += t.total();
      }
      continue;
    }
    const ParamCount n = adapter_params(t, w.lora, arch);
    if (n == 0) continue;
    out.count += n;
    const std::int64_t copies = t.layers * t.experts;
    out.factored_state_elems +=
        copies * ((w.lora.rank + t.in_features) + (t.out_features + w.lora.rank));
  }
  return out;
}

ModelStates model_states(const Workload& w, Trace* trace) {
  const ParamInventory& inv = w.model->params;
  const TrainedParams trained = trainable_params(w);
  const OptimizerBytes opt = optimizer_bytes(w.optimizer);
  ModelStates s;

  const double n = static_cast<double>(trained.count);
  s.trained_weights = Bytes(opt.weight * n);
  s.gradients = Bytes(opt.gradient * n);
  s.master_weights = Bytes(opt.master * n);
  s.optimizer_states = opt.factored ? Bytes(4.0 * static_cast<double>(trained.factored_state_elems))
                                    : Bytes(opt.states * n);

  if (w.method == Method::kLora) {
    // Frozen base in BF16: 2 B per parameter (seed: "eine BF16-Basis für LoRA").
    s.frozen_weights = Bytes(2.0 * static_cast<double>(inv.total));
  } else if (w.method == Method::kQlora) {
    // Block linear weights in NF4 with double quantization; embeddings, output layer, norms and
    // biases stay BF16 (seed; QLoRA paper §3).
    for (const auto& t : inv.tensors) {
      if (t.is_block_linear()) {
        QuantizedBytes q = quantized_weight_bytes(t.numel(), w.quant);
        s.frozen_weights += q.codes * static_cast<double>(t.copies());
        s.quantization_constants += q.constants * static_cast<double>(t.copies());
      } else {
        s.frozen_weights += Bytes(2.0 * static_cast<double>(t.total()));
      }
    }
  }

  if (trace) {
    trace->add(
        {"params.trainable",
         "trainable parameters",
         n,
         "parameters",
         w.method == Method::kFull
             ? "every parameter of the model"
             : "sum over targeted projections of r · (in + out) per layer (and expert)",
         {{"total parameters", fmt_count(inv.total)},
          {"rank", w.method == Method::kFull ? "-" : std::to_string(w.lora.rank)},
          {"targets", w.method == Method::kFull ? "-" : projection_set_name(w.lora.targets)}},
         "LoRA: Hu et al. 2021; seed: rank 16 on all seven block projections"});
    if (w.method != Method::kFull)
      trace->add(
          {"memory.frozen_weights",
           "frozen base weights",
           to_GB(s.frozen_weights + s.quantization_constants),
           "GB",
           w.method == Method::kLora
               ? "2 B × all parameters (BF16 base)"
               : fmt::format("block linear weights × {:.4f} bits / 8 (NF4 + double quantization) + "
                             "other parameters × 2 B (BF16)",
                             quantized_bits_per_param(w.quant)),
           {{"parameters", fmt_count(inv.total)},
            {"block linear parameters", fmt_count(inv.block_linear)}},
           "seed § memory; QLoRA paper §3 (4 + 8/64 + 32/(64·256) = 4.127 bits)"});
    trace->add({"memory.trained_states",
                "weights, gradients and optimizer states of what is trained",
                to_GB(s.trained_weights + s.gradients + s.master_weights + s.optimizer_states),
                "GB",
                fmt::format("trainable parameters × {} B ({})",
                            opt.weight + opt.gradient + opt.master + opt.states, opt.basis),
                {{"trainable parameters", fmt_count(trained.count)},
                 {"optimizer", std::string(optimizer_name(w.optimizer))}},
                "ZeRO paper §3.1 (16 B per parameter with mixed-precision Adam); seed",
                {"params.trainable"}});
    trace->add({"memory.model_states",
                "model states of one replica",
                to_GB(s.total()),
                "GB",
                "frozen weights + trained weights + gradients + master weights + optimizer states "
                "+ quantization constants",
                {{"frozen weights", fmt_GB(s.frozen_weights)},
                 {"trained weights", fmt_GB(s.trained_weights)},
                 {"gradients", fmt_GB(s.gradients)},
                 {"master weights", fmt_GB(s.master_weights)},
                 {"optimizer states", fmt_GB(s.optimizer_states)},
                 {"quantization constants", fmt_GB(s.quantization_constants)}},
                "seed § memory",
                w.method == Method::kFull
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
    case Sharding::kFsdp:
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
