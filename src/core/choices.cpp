#include "core/choices.hpp"

#include "core/name_table.hpp"

namespace ftplan {

namespace {

constexpr NameTable<Method, 5> kMethods{{{{Method::kFull, "full"},
                                          {Method::kLora, "lora"},
                                          {Method::kQlora, "qlora"},
                                          {Method::kDora, "dora"},
                                          {Method::kQdora, "qdora"}}}};
constexpr NameTable<Objective, 10> kObjectives{{{{Objective::kSft, "sft"},
                                                 {Objective::kDpo, "dpo"},
                                                 {Objective::kIpo, "ipo"},
                                                 {Objective::kOrpo, "orpo"},
                                                 {Objective::kSimpo, "simpo"},
                                                 {Objective::kKto, "kto"},
                                                 {Objective::kReward, "reward"},
                                                 {Objective::kGrpo, "grpo"},
                                                 {Objective::kPpo, "ppo"},
                                                 {Objective::kRloo, "rloo"}}}};
constexpr NameTable<RolloutMode, 2> kRolloutModes{
    {{{RolloutMode::kColocated, "colocated"}, {RolloutMode::kSeparate, "separate"}}}};
constexpr NameTable<ComputeFormat, 5> kFormats{{{{ComputeFormat::kBF16, "bf16"},
                                                 {ComputeFormat::kFP16, "fp16"},
                                                 {ComputeFormat::kFP8, "fp8"},
                                                 {ComputeFormat::kMXFP8, "mxfp8"},
                                                 {ComputeFormat::kNVFP4, "nvfp4"}}}};
constexpr NameTable<Sharding, 6> kShardings{{{{Sharding::kNone, "none"},
                                              {Sharding::kDdp, "ddp"},
                                              {Sharding::kZero1, "zero1"},
                                              {Sharding::kZero2, "zero2"},
                                              {Sharding::kFsdp, "fsdp"},
                                              {Sharding::kHsdp, "hsdp"}}}};
constexpr NameTable<Recompute, 3> kRecomputes{{{{Recompute::kNone, "none"},
                                                {Recompute::kSelective, "selective"},
                                                {Recompute::kFull, "full"}}}};
constexpr NameTable<Attention, 3> kAttentions{
    {{{Attention::kFlash, "flash"}, {Attention::kSdpa, "sdpa"}, {Attention::kEager, "eager"}}}};
constexpr NameTable<PeakKind, 4> kPeakKinds{{{{PeakKind::kActive, "active"},
                                              {PeakKind::kAllocated, "allocated"},
                                              {PeakKind::kReserved, "reserved"},
                                              {PeakKind::kNvidiaSmi, "nvidia-smi"}}}};
constexpr NameTable<LossKind, 4> kLossKinds{{{{LossKind::kFp32Upcast, "fp32-upcast"},
                                              {LossKind::kBf16, "bf16"},
                                              {LossKind::kChunked, "chunked"},
                                              {LossKind::kFused, "fused"}}}};

}  // namespace

std::string_view method_name(Method m) {
  return kMethods.name(m);
}
std::string_view objective_name(Objective o) {
  return kObjectives.name(o);
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
std::string_view loss_kind_name(LossKind k) {
  return kLossKinds.name(k);
}
std::string_view rollout_mode_name(RolloutMode r) {
  return kRolloutModes.name(r);
}

Method parse_method(std::string_view s, std::string_view field) {
  return kMethods.parse(s, "method", field);
}
Objective parse_objective(std::string_view s, std::string_view field) {
  return kObjectives.parse(s, "objective", field);
}
ComputeFormat parse_compute_format(std::string_view s, std::string_view field) {
  return kFormats.parse(s, "precision", field);
}
// DeepSpeed's ZeRO stage 3 partitions the parameters, gradients and optimizer states over the
// data-parallel group, as FSDP's FULL_SHARD does: one strategy, also read under that name.
constexpr std::string_view kZero3 = "zero3";

Sharding parse_sharding(std::string_view s, std::string_view field) {
  if (s == kZero3) return Sharding::kFsdp;
  static const std::vector<std::string> valid = [] {
    auto v = kShardings.names();
    v.emplace_back(kZero3);
    return v;
  }();
  if (const auto v = kShardings.find(s)) return *v;
  throw_unknown_name("sharding strategy", field, s, valid);
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
LossKind parse_loss_kind(std::string_view s, std::string_view field) {
  return kLossKinds.parse(s, "loss", field);
}
RolloutMode parse_rollout_mode(std::string_view s, std::string_view field) {
  return kRolloutModes.parse(s, "rollout placement", field);
}
const std::vector<std::string>& rollout_mode_names() {
  static const auto v = kRolloutModes.names();
  return v;
}
const std::vector<std::string>& peak_kind_names() {
  static const auto v = kPeakKinds.names();
  return v;
}
const std::vector<std::string>& loss_kind_names() {
  static const auto v = kLossKinds.names();
  return v;
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
const std::vector<std::string>& objective_names() {
  static const auto v = kObjectives.names();
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

}  // namespace ftplan
