// The vocabulary of choices a run is described with: how it trains (method), in which number
// format, how its state is split, what is recomputed, which attention kernel, which peak. Names
// and parsing live here; what each choice means is decided by the analyses (src/workload/ and
// below). The optimizers have their own table (workload/optimizer.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ftplan {

// Methods: which tensors are trained and how (workload/roles.hpp turns one into a role per tensor).
enum class Method {
  kFull,   // every parameter trained
  kLora,   // LoRA adapters on a frozen 16-bit base (Hu et al. 2021)
  kQlora,  // LoRA adapters on a frozen quantized base (Dettmers et al. 2023)
  kDora,   // DoRA: LoRA plus a trained magnitude per output row (Liu et al. 2024)
  kQdora,  // DoRA on a quantized base (Answer.AI / PEFT use_dora with a 4-bit base)
};

// What a run optimises (workload/objective.hpp): supervised fine-tuning on one sequence per
// example, or a preference objective over a chosen and a rejected sequence (KTO: single labelled
// ones), most of them against a frozen reference model; or reinforcement learning on completions
// the policy generates itself (GRPO, PPO, RLOO: online objectives with rollouts).
// kReward: a reward model trained on preference pairs (a scalar score head, no language-model
// head).
enum class Objective { kSft, kDpo, kIpo, kOrpo, kSimpo, kKto, kReward, kGrpo, kPpo, kRloo };
// Where an online objective generates its completions: an inference engine sharing the training
// cards (TRL vllm_mode=colocate), or one on cards of its own (TRL vllm_mode=server).
enum class RolloutMode { kColocated, kSeparate };

enum class ComputeFormat { kBF16, kFP16, kFP8, kMXFP8, kNVFP4 };
// How model states are split over the data-parallel cards (ZeRO paper §5): kZero1 the optimizer
// states and master weights, kZero2 also the gradients, kFsdp everything (ZeRO-3); kHsdp shards
// everything within groups of Placement::shard_group cards and replicates across the groups
// (PyTorch FSDP HYBRID_SHARD, FSDP2 with a 2-D device mesh; DeepSpeed ZeRO++ hpZ is alike).
enum class Sharding { kNone, kDdp, kZero1, kZero2, kFsdp, kHsdp };
enum class Recompute { kNone, kSelective, kFull };
// Which peak a figure is: what PyTorch's caching allocator has handed to tensors (allocated; its
// "active" bytes add blocks freed but still in use by another stream, none in a training step),
// what it holds from the driver (reserved = allocated + the allocator's cached, unused blocks), or
// what the driver reports for the process (nvidia-smi = reserved + the CUDA context, NCCL and
// library memory outside the allocator).
enum class PeakKind { kAllocated, kReserved, kActive, kNvidiaSmi };
// How the cross-entropy loss holds the logits (memory/activations.cpp): the 16-bit logits upcast
// to FP32 (Hugging Face logits.float()), cross-entropy on the 16-bit logits, chunks of the output
// with the upcast fused (torchtune CEWithChunkedOutputLoss), or the output projection and the
// loss fused so that no full logits exist (Liger FusedLinearCrossEntropy, Cut Cross-Entropy).
enum class LossKind { kFp32Upcast, kBf16, kChunked, kFused };
// Attention kernels, by what they keep for the backward pass (memory/activations.cpp):
// kFlash: FlashAttention-2/3 with native grouped-query attention (K and V kept kv_dim wide);
// kSdpa: PyTorch scaled_dot_product_attention after K and V are repeated to every query head
//        (Hugging Face repeat_kv, torchtune's expand): O(s) memory, K and V kept q_dim wide;
// kEager: explicit softmax(QK^T)V: the s x s probabilities of every head are kept.
enum class Attention { kFlash, kSdpa, kEager };

std::string_view method_name(Method m);
std::string_view objective_name(Objective o);
std::string_view compute_format_name(ComputeFormat f);
std::string_view sharding_name(Sharding s);
std::string_view recompute_name(Recompute r);
std::string_view attention_name(Attention a);
std::string_view peak_kind_name(PeakKind k);
std::string_view loss_kind_name(LossKind k);
std::string_view rollout_mode_name(RolloutMode r);

// Parse a user-facing name; an unknown one is a UserError naming `field` and the valid names.
Method parse_method(std::string_view name, std::string_view field = "method");
Objective parse_objective(std::string_view name, std::string_view field = "objective");
ComputeFormat parse_compute_format(std::string_view name, std::string_view field = "precision");
Sharding parse_sharding(std::string_view name, std::string_view field = "shard");
Recompute parse_recompute(std::string_view name, std::string_view field = "recompute");
Attention parse_attention(std::string_view name, std::string_view field = "attention");
PeakKind parse_peak_kind(std::string_view name, std::string_view field = "peak");
LossKind parse_loss_kind(std::string_view name, std::string_view field = "loss");
RolloutMode parse_rollout_mode(std::string_view name, std::string_view field = "rollout");
const std::vector<std::string>& rollout_mode_names();
const std::vector<std::string>& peak_kind_names();
const std::vector<std::string>& loss_kind_names();
const std::vector<std::string>& attention_names();
const std::vector<std::string>& recompute_names();
const std::vector<std::string>& method_names();
const std::vector<std::string>& objective_names();
const std::vector<std::string>& compute_format_names();
const std::vector<std::string>& sharding_names();

}  // namespace ftplan
