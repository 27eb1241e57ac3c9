#include "core/workload.hpp"

#include <fmt/format.h>

#include <array>

#include "core/error.hpp"

namespace ftplan {

namespace {

template <class E, std::size_t N>
struct NameTable {
  std::array<std::pair<E, std::string_view>, N> entries;

  std::string_view name(E e) const {
    for (const auto& [v, n] : entries)
      if (v == e) return n;
    return "?";
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [v, n] : entries)
      out.emplace_back(n);
    return out;
  }
  E parse(std::string_view s, std::string_view what, std::string_view field) const {
    for (const auto& [v, n] : entries)
      if (n == s) return v;
    throw_unknown_name(what, field, s, names());
  }
};

constexpr NameTable<Method, 3> kMethods{
    {{{Method::kFull, "full"}, {Method::kLora, "lora"}, {Method::kQlora, "qlora"}}}};
constexpr NameTable<Optimizer, 8> kOptimizers{{{{Optimizer::kAdamW, "adamw"},
                                                {Optimizer::kAdamW8bit, "adamw-8bit"},
                                                {Optimizer::kPagedAdamW, "paged-adamw"},
                                                {Optimizer::kPagedAdamW8bit, "paged-adamw-8bit"},
                                                {Optimizer::kAdamWBf16, "adamw-bf16"},
                                                {Optimizer::kSgdMomentum, "sgd-momentum"},
                                                {Optimizer::kSgd, "sgd"},
                                                {Optimizer::kAdafactor, "adafactor"}}}};
constexpr NameTable<ComputeFormat, 5> kFormats{{{{ComputeFormat::kBF16, "bf16"},
                                                 {ComputeFormat::kFP16, "fp16"},
                                                 {ComputeFormat::kFP8, "fp8"},
                                                 {ComputeFormat::kMXFP8, "mxfp8"},
                                                 {ComputeFormat::kNVFP4, "nvfp4"}}}};
constexpr NameTable<Sharding, 5> kShardings{{{{Sharding::kNone, "none"},
                                              {Sharding::kDdp, "ddp"},
                                              {Sharding::kZero1, "zero1"},
                                              {Sharding::kZero2, "zero2"},
                                              {Sharding::kFsdp, "fsdp"}}}};
constexpr NameTable<Recompute, 3> kRecomputes{{{{Recompute::kNone, "none"},
                                                {Recompute::kSelective, "selective"},
                                                {Recompute::kFull, "full"}}}};
constexpr NameTable<Attention, 3> kAttentions{
    {{{Attention::kFlash, "flash"}, {Attention::kSdpa, "sdpa"}, {Attention::kEager, "eager"}}}};
constexpr NameTable<PeakKind, 2> kPeakKinds{
    {{{PeakKind::kAllocated, "allocated"}, {PeakKind::kReserved, "reserved"}}}};

}  // namespace

std::string_view method_name(Method m) {
  return kMethods.name(m);
}
std::string_view optimizer_name(Optimizer o) {
  return kOptimizers.name(o);
}
std::string_view compute_format_name(ComputeFormat f) {
  return kFormats.name(f);
}
std::string_view sharding_name(Sharding s) {
  return kShardings.name(s);
}
std::string_view recompute_name(Recompute r) {
  return kRecomputes.name(r);
}
std::string_view attention_name(Attention a) {
  return kAttentions.name(a);
}
std::string_view peak_kind_name(PeakKind k) {
  return kPeakKinds.name(k);
}

Method parse_method(std::string_view s, std::string_view field) {
  return kMethods.parse(s, "method", field);
}
Optimizer parse_optimizer(std::string_view s, std::string_view field) {
  return kOptimizers.parse(s, "optimizer", field);
}
ComputeFormat parse_compute_format(std::string_view s, std::string_view field) {
  return kFormats.parse(s, "precision", field);
}
Sharding parse_sharding(std::string_view s, std::string_view field) {
  return kShardings.parse(s, "sharding strategy", field);
}
Recompute parse_recompute(std::string_view s, std::string_view field) {
  return kRecomputes.parse(s, "recompute mode", field);
}
Attention parse_attention(std::string_view s, std::string_view field) {
  return kAttentions.parse(s, "attention implementation", field);
}
PeakKind parse_peak_kind(std::string_view s, std::string_view field) {
  return kPeakKinds.parse(s, "peak kind", field);
}
const std::vector<std::string>& attention_names() {
  static const auto v = kAttentions.names();
  return v;
}
const std::vector<std::string>& recompute_names() {
  static const auto v = kRecomputes.names();
  return v;
}

const std::vector<std::string>& method_names() {
  static const auto v = kMethods.names();
  return v;
}
const std::vector<std::string>& optimizer_names() {
  static const auto v = kOptimizers.names();
  return v;
}
const std::vector<std::string>& compute_format_names() {
  static const auto v = kFormats.names();
  return v;
}
const std::vector<std::string>& sharding_names() {
  static const auto v = kShardings.names();
  return v;
}

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
      throw UserError(
          ErrorCode::kInvalidValue,
          fmt::format(
              "empty entry in target list '{}'; expected names such as q,k,v,o,gate,up,down", list),
          std::string(field));
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
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return set;
}

void validate(const Workload& w) {
  auto bad = [](std::string_view field, const std::string& msg) {
    throw UserError(ErrorCode::kInvalidValue, msg, std::string(field));
  };
  if (!w.model) bad("model", "no model given");
  if (w.method != Method::kFull) {
    if (w.lora.rank < 1 || w.lora.rank > 65536)
      bad("rank",
          fmt::format("LoRA rank must be a whole number from 1 to 65536, got {}", w.lora.rank));
    if (w.lora.targets == 0)
      bad("targets", "LoRA needs at least one target module (e.g. q,k,v,o,gate,up,down)");
  }
  if (w.method == Method::kQlora) {
    if (w.quant.bits < 2 || w.quant.bits > 8)
      bad("quant_bits", fmt::format("quantized weights need 2 to 8 bits, got {}", w.quant.bits));
    if (w.quant.block < 1 || w.quant.block > 65536)
      bad("quant_block",
          fmt::format("quantization block size must be 1 to 65536, got {}", w.quant.block));
    if (w.quant.second_block < 1 || w.quant.second_block > 65536)
      bad("quant_second_block",
          fmt::format("second-level block size must be 1 to 65536, got {}", w.quant.second_block));
  }
  if (w.seq < 1 || w.seq > (1 << 24))
    bad("seq", fmt::format("sequence length must be 1 to 16777216 tokens, got {}", w.seq));
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
}

void validate(const Placement& p) {
  if (!p.gpu) throw UserError(ErrorCode::kInvalidValue, "no GPU given", "gpu");
  if (p.count < 1 || p.count > 65536)
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("number of GPUs must be a whole number from 1 to 65536, got {}", p.count),
        "gpus");
  if (p.mig && p.count > 1)
    throw UserError(
        ErrorCode::kInfeasible,
        fmt::format(
            "a run on MIG instances must use one instance: NCCL does not support MIG "
            "(NVIDIA MIG user guide), so {} cards' worth of {} instances cannot form one run",
            p.count, p.mig->name),
        "gpus");
}

}  // namespace ftplan
