// What to train (Workload) and where (Placement): the value every analysis takes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "model/params.hpp"

namespace ftplan {

enum class Method { kFull, kLora, kQlora };

// Optimizers, with the bytes each keeps per trained parameter (memory/optimizer.cpp).
enum class Optimizer {
  kAdamW,       // mixed precision: BF16 weight + BF16 grad + FP32 master, m, v = 16 B (ZeRO count)
  kAdamW8bit,   // bitsandbytes 8-bit states: 2 + 2 + 4 + 1 + 1 = 10 B
  kPagedAdamW,  // as kAdamW, states in CUDA unified memory that can be evicted to the host
  kPagedAdamW8bit,  // as kAdamW8bit, paged
  kAdamWBf16,       // pure BF16: weight, grad, m, v in BF16, no master copy = 8 B
  kSgdMomentum,     // BF16 weight + grad + FP32 master + FP32 momentum = 12 B
  kSgd,             // BF16 weight + grad + FP32 master = 8 B
  kAdafactor,       // BF16 weight + grad + FP32 master + factored second moment (row + column)
};

enum class ComputeFormat { kBF16, kFP16, kFP8, kMXFP8, kNVFP4 };
enum class Sharding { kNone, kDdp, kZero1, kZero2, kFsdp };
enum class Recompute { kNone, kSelective, kFull };
// Which peak a figure is: what PyTorch's caching allocator has handed to tensors (allocated), or
// what it holds from the driver (reserved = allocated + the allocator's cached, unused blocks).
enum class PeakKind { kAllocated, kReserved };
// Attention kernels, by what they keep for the backward pass (memory/activations.cpp):
// kFlash: FlashAttention-2/3 with native grouped-query attention (K and V kept kv_dim wide);
// kSdpa: PyTorch scaled_dot_product_attention after K and V are repeated to every query head
//        (Hugging Face repeat_kv, torchtune's expand): O(s) memory, K and V kept q_dim wide;
// kEager: explicit softmax(QK^T)V: the s x s probabilities of every head are kept.
enum class Attention { kFlash, kSdpa, kEager };

std::string_view method_name(Method m);
std::string_view optimizer_name(Optimizer o);
std::string_view compute_format_name(ComputeFormat f);
std::string_view sharding_name(Sharding s);
std::string_view recompute_name(Recompute r);
std::string_view attention_name(Attention a);
std::string_view peak_kind_name(PeakKind k);

// Parse a user-facing name; an unknown one is a UserError naming `field` and the valid names.
Method parse_method(std::string_view name, std::string_view field = "method");
Optimizer parse_optimizer(std::string_view name, std::string_view field = "optimizer");
ComputeFormat parse_compute_format(std::string_view name, std::string_view field = "precision");
Sharding parse_sharding(std::string_view name, std::string_view field = "shard");
Recompute parse_recompute(std::string_view name, std::string_view field = "recompute");
Attention parse_attention(std::string_view name, std::string_view field = "attention");
PeakKind parse_peak_kind(std::string_view name, std::string_view field = "peak");
const std::vector<std::string>& attention_names();
const std::vector<std::string>& recompute_names();
const std::vector<std::string>& method_names();
const std::vector<std::string>& optimizer_names();
const std::vector<std::string>& compute_format_names();
const std::vector<std::string>& sharding_names();

// "q,k,v,o,gate,up,down" (also q_proj, ..., all, all-linear) -> a projection set.
ProjectionSet parse_targets(std::string_view list, std::string_view field = "targets");

struct LoraConfig {
  int rank = 16;                            // seed: rank 16
  ProjectionSet targets = kAllProjections;  // seed: all seven block projections
};

// NF4 with double quantization (Dettmers et al. 2023, QLoRA §3): 4-bit codes, one 8-bit
// absmax per `block` weights, one FP32 constant per `second_block` absmax values:
// 4 + 8/64 + 32/(64·256) = 4.127 bits per parameter at the defaults.
struct QuantConfig {
  int bits = 4;
  int block = 64;
  bool double_quant = true;
  int second_block = 256;
};

// The activation-memory and runtime options real recipes use (memory/activations.*).
struct TrainingOptions {
  bool optimizer_in_backward =
      false;                         // optimizer step fused into backward: gradients never all live
  bool offload_optimizer = false;    // optimizer states (and master weights) in host memory
  bool offload_parameters = false;   // FSDP CPU offload of parameters
  bool offload_activations = false;  // saved activations in host memory
  bool chunked_loss = false;         // cross-entropy computed in chunks: no full-vocab logits
  int loss_chunks = 8;  // chunks of the chunked loss (torchtune CEWithChunkedOutputLoss default: 8)
  bool compile = false;  // torch.compile / fused kernels: norms and activation functions keep
                         // only their 16-bit inputs (memory/activations.cpp)
  bool pure_bf16 =
      false;  // weights trained in BF16 with no FP32 master copy (torchtune dtype=bf16,
              // PEFT use_amp=false): optimizer states in the parameter dtype
};

struct RuntimeOverheads;  // memory/overheads.hpp: data/runtime/overheads.yaml

struct Workload {
  ModelPtr model;
  Method method = Method::kLora;
  Optimizer optimizer = Optimizer::kAdamW;
  LoraConfig lora;
  QuantConfig quant;
  ComputeFormat precision = ComputeFormat::kBF16;
  std::int64_t seq = 2048;       // tokens per sequence
  std::int64_t micro_batch = 1;  // sequences per card per forward/backward
  std::int64_t grad_accum = 1;   // micro-batches per optimizer step
  Recompute recompute = Recompute::kFull;
  Attention attention = Attention::kFlash;
  TrainingOptions options;
  PeakKind peak = PeakKind::kReserved;
  // Runtime overheads (CUDA context, workspaces, allocator reserve) as read from the data; null:
  // none counted (a Workload built by hand in code; the CLI and the tests always set it).
  const RuntimeOverheads* overheads = nullptr;

  std::int64_t tokens_per_micro_batch() const { return seq * micro_batch; }
};

// Where a workload runs: card type and count, how state is split, or one MIG instance.
struct Placement {
  const GpuSpec* gpu = nullptr;
  int count = 1;
  Sharding sharding = Sharding::kNone;
  const MigProfile* mig = nullptr;  // run inside one instance of this profile
  std::string topology;             // preset name (comm/topology); empty: the best the card has
};

// Checks ranges that every analysis relies on (rank >= 1, seq >= 1, ...): UserError otherwise.
void validate(const Workload& w);
void validate(const Placement& p);

}  // namespace ftplan
