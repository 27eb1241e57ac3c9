// Generation (inference) per card, alone or in a tensor-parallel group: what the KV cache holds
// per token and per sequence, how a serving engine splits the card's memory between weights, a
// working reserve and the KV cache, and the roofline time of a prefill, of one decode step and
// of many sequences. Pure functions, no I/O: `ftplan infer` prints them, and any feature that
// generates on the training cards (RL rollouts) calls the same functions.
//
// The engine modelled is vLLM's: paged KV blocks (Kwon et al. 2023, "Efficient Memory Management
// for Large Language Model Serving with PagedAttention"), a fraction of the card's memory for the
// engine (gpu_memory_utilization), the KV cache sized from what weights and a profiled forward
// pass leave. Not modelled: speculative decoding, prefix caching, chunked-prefill interleaving,
// CPU swap, the scheduler's own limits (max_num_seqs), per-step host time (vLLM replays decode
// steps as CUDA graphs).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/gpu.hpp"
#include "comm/topology.hpp"
#include "core/units.hpp"
#include "model/model.hpp"
#include "workload/lengths.hpp"

namespace ftplan {

struct EfficiencyTable;
struct Device;

// ---- choices ----------------------------------------------------------------------------------

// The element type of the KV cache (vLLM --kv-cache-dtype auto | fp8).
enum class KvDtype { kBF16, kFP8 };
std::string_view kv_dtype_name(KvDtype d);  // "bf16", "fp8"
const std::vector<std::string>& kv_dtype_names();
// An unknown name is a UserError naming `field` and the valid names.
KvDtype parse_kv_dtype(std::string_view name, std::string_view field = "kv_dtype");
double kv_dtype_bytes(KvDtype d);  // bf16 2, fp8 1

// How the decoder's linear weights are stored for serving (embeddings, the output layer, norms and
// routers stay 16-bit, as vLLM's quantized linear methods leave them).
//   bf16:  2 B per weight, BF16 GEMMs.
//   fp8:   1 B per weight (per-tensor or per-channel scales, negligible), FP8 GEMMs (W8A8).
//   nvfp4: 0.5 B + one E4M3 scale per 16 weights, FP4 GEMMs (W4A4, Blackwell).
//   int4:  0.5 B + one 16-bit scale per group of 128 weights (GPTQ / AWQ with group_size 128),
//          dequantized in the kernel: BF16 GEMMs (W4A16, vLLM's Marlin kernels).
//   mxfp4: 0.5 B + one E8M0 scale per 32 weights (OCP Microscaling v1.0; gpt-oss's checkpoint
//          format), taken as W4A16: BF16 GEMMs.
enum class WeightFormat { kBF16, kFP8, kNVFP4, kINT4, kMXFP4 };
std::string_view weight_format_name(WeightFormat f);
const std::vector<std::string>& weight_format_names();
WeightFormat parse_weight_format(std::string_view name, std::string_view field = "weights");
double weight_format_bytes(WeightFormat f);  // bytes per linear weight, scales included
// The tensor rate the format's GEMMs run at.
TensorPrecision weight_format_precision(WeightFormat f);

// ---- the model as generation sees it ----------------------------------------------------------

// Decoder layers that cache the same thing and attend to the same span.
struct KvLayerGroup {
  std::string name;         // "full", "sliding", "chunked"
  std::int64_t layers = 0;  // how many decoder layers
  std::int64_t span = 0;    // tokens a layer attends to and keeps at most (0: the whole context)
  // Cache bytes one token adds to one layer:
  //   MHA/GQA: 2 (K and V) × kv_heads × head_dim × bytes(kv dtype);
  //   MLA:     (kv_lora_rank + qk_rope_head_dim) × bytes(kv dtype), the compressed latent and the
  //            decoupled RoPE key, one per token for all heads (DeepSeek-V2 paper §2.1; vLLM's
  //            MLA cache layout).
  Bytes bytes_per_token_per_layer;
  // FLOPs one (query, key) pair costs one layer: 2 × heads × (score width + value width).
  //   MHA/GQA: score and value widths are head_dim: 4 × heads × head_dim.
  //   MLA prefill (keys and values expanded): qk_nope + qk_rope and v_head_dim.
  //   MLA decode (up-projections absorbed into the query and output, as vLLM decodes):
  //   kv_lora_rank + qk_rope_head_dim and kv_lora_rank.
  double prefill_pair_flops = 0;
  double decode_pair_flops = 0;
  // Tokens a layer holds (and a decode step reads) for a sequence of `context` tokens:
  // min(context, span).
  std::int64_t tokens_held(std::int64_t context) const {
    return span > 0 && span < context ? span : context;
  }
};

// Figures per card: with tensor parallelism over `tp` cards (Megatron-style, as vLLM shards a
// model) each card holds 1/tp of every linear layer, of the embedding and of the output layer
// (norms, biases and a vision tower whole), 1/tp of the attention heads, and of the KV heads
// kv_heads/tp, at least one (vLLM replicates a KV head where tp exceeds kv_heads); an MLA cache
// (one latent per token for all heads) is held whole by every card.
struct GenerationModel {
  ModelPtr model;
  WeightFormat weights = WeightFormat::kBF16;
  KvDtype kv_dtype = KvDtype::kBF16;
  int tp = 1;  // cards one copy of the model is split over (tensor parallelism)
  // Bytes the card holds: every tensor of the checkpoint (a vision tower too), linear weights in
  // the weight format, the rest 16-bit.
  Bytes weights_bytes;
  // Bytes a forward pass reads whatever its tokens: every text-decoder weight but the routed
  // experts and the input embedding (a lookup of a few rows; a tied embedding is read in full as
  // the output layer).
  Bytes dense_weight_bytes;
  // Bytes of all routed experts of all layers (0 for a dense model).
  Bytes expert_weight_bytes;
  std::int64_t experts = 0;            // routed experts per MoE layer (E)
  std::int64_t experts_per_token = 0;  // k
  // Parameters one token multiplies by (ParamInventory::active_per_token): a token's linear
  // FLOPs are 2 × this.
  double active_params = 0;
  std::vector<KvLayerGroup> kv_groups;
  // The widest MLP projection (intermediate width of the dense MLP or of one expert) and the
  // hidden width: the sizes of a representative GEMM for the efficiency tables.
  std::int64_t hidden = 0;
  std::int64_t widest_intermediate = 0;
  std::int64_t layers = 0;
};

// `model` served with linear weights in `weights` and a KV cache in `kv_dtype`, split over `tp`
// cards. A `tp` that does not divide the attention heads (or, where it is at most kv_heads, the KV
// heads) is a UserError naming `field`.
GenerationModel make_generation_model(ModelPtr model, WeightFormat weights, KvDtype kv_dtype,
                                      int tp = 1, std::string_view field = "gpus");

// KV bytes one token adds to every layer that keeps it: the sum of bytes_per_token_per_layer ×
// layers over the groups (what a token costs while the context is within every span).
Bytes kv_bytes_per_token(const GenerationModel& g);
// Cache bytes one sequence of `context` tokens holds: Σ over groups of layers × tokens held ×
// bytes per token per layer, each group's tokens rounded up to whole blocks of `block_size`
// tokens (paged attention allocates a layer group's cache in blocks; 1: no rounding).
Bytes kv_bytes_per_sequence(const GenerationModel& g, std::int64_t context,
                            std::int64_t block_size = 1);

// ---- memory ------------------------------------------------------------------------------------

// vLLM's defaults: the engine may use 0.9 of the card's memory (CacheConfig.gpu_memory_utilization,
// vLLM 0.9-0.10 docs of vllm.config; later releases raised it to 0.92) and allocates the cache in
// blocks of 16 tokens (CacheConfig.DEFAULT_BLOCK_SIZE = 16 on CUDA).
inline constexpr double kDefaultGpuMemoryUtilization = 0.9;
inline constexpr std::int64_t kDefaultBlockSize = 16;
// The working reserve the engine keeps beside weights and cache: vLLM measures it with a
// profiling forward pass of max_num_batched_tokens tokens and a sampler pass over max_num_seqs
// sequences before it sizes the cache (Worker.determine_available_memory). ftplan counts that
// pass's largest live set: per token the hidden state, the gate and up outputs of the widest MLP
// and q, k, v, in 16-bit; and FP32 logits for every sampled sequence. vLLM's defaults
// (vllm/engine/arg_utils.py, EngineArgs): max_num_batched_tokens 8192 for the API server on cards
// of 70 GiB and more other than A100 (2048 below), max_num_seqs 1024 there and 256 elsewhere.
// ftplan takes one budget for every card: 8192 tokens and 256 sequences (the logits of 1024
// sequences would add 0.4 GB for a 128k vocabulary).
inline constexpr std::int64_t kProfileTokens = 8192;
inline constexpr std::int64_t kProfileSequences = 256;
Bytes activation_reserve(const GenerationModel& g);

struct GenerationMemory {
  Bytes card;              // the card's memory (driver-visible)
  double utilization = 0;  // gpu_memory_utilization
  Bytes engine;            // card × utilization
  Bytes weights;           // GenerationModel::weights_bytes
  Bytes reserve;           // activation_reserve + the CUDA context
  Bytes kv_budget;         // engine − weights − reserve (negative: the weights do not fit)
  Bytes kv_per_sequence;   // at the context, in whole blocks
  std::int64_t block_size = 0;
  std::int64_t context = 0;
  // floor(kv_budget / kv_per_sequence); 0 when not even one sequence fits.
  std::int64_t max_concurrent_sequences = 0;
  // The weights and the reserve leave room for a cache.
  bool cache_fits() const { return kv_budget.value > 0; }
};

// The memory split of a card of `card_bytes` serving `g` at `context` tokens per sequence.
// `cuda_context`: memory outside the engine's allocator (data/runtime/overheads.yaml).
GenerationMemory generation_memory(const GenerationModel& g, Bytes card_bytes, double utilization,
                                   Bytes cuda_context, std::int64_t context,
                                   std::int64_t block_size = kDefaultBlockSize);

// ---- time --------------------------------------------------------------------------------------

// Achieved fractions of the card's peaks for one pass: linear layers' GEMMs (of the weight
// format's dense rate), attention (of the BF16 rate) and memory (of the bandwidth).
struct GenerationEfficiency {
  double gemm = 1;
  double attention = 1;
  double memory = 1;
  // A decode step's fixed time per decoder layer beyond the roofline (EfficiencyTable's
  // GenerationCosts; 0: the roofline alone).
  double decode_layer_seconds = 0;
};
// The fractions the efficiency table gives a pass of `tokens` tokens on a card of `architecture`:
// the GEMM curve at the widest MLP projection's call (2 × tokens × hidden × intermediate FLOPs)
// times the architecture's multiplier, the FlashAttention-2 forward figure of the architecture
// (else the attention curve), and the memory curve at that projection's weight bytes.
GenerationEfficiency generation_efficiency(const EfficiencyTable& table, const GenerationModel& g,
                                           std::string_view architecture, double tokens);

// Expected distinct routed experts a pass of `tokens` tokens touches per layer, with k of E
// experts per token chosen uniformly: E × (1 − (1 − k/E)^tokens). Dense: 0.
double expected_experts_touched(std::int64_t experts, std::int64_t experts_per_token,
                                double tokens);

// The link between the cards of a tensor-parallel group: two all-reduces per layer (after the
// attention output and after the MLP's down projection; Shoeybi et al. 2019, "Megatron-LM",
// §3) of tokens × hidden × 2 bytes, priced by NCCL's ring model (comm/collectives). Null
// pointers (one card): no link time.
struct TensorParallelLink {
  const Topology* topology = nullptr;
  const CommConstants* constants = nullptr;
};
// The all-reduce time of a pass of `tokens` tokens (0 for tp = 1).
Seconds tensor_parallel_seconds(const GenerationModel& g, const TensorParallelLink& link,
                                double tokens);

struct PassTime {
  Flops linear_flops;     // 2 × active params × tokens
  Flops attention_flops;  // Σ pairs × pair FLOPs
  Bytes bytes;            // weights read + KV read (decode) or written (prefill)
  Bytes weight_bytes;     // of `bytes`
  Bytes kv_bytes;         // of `bytes`
  Seconds compute;        // linear / (rate × gemm eff) + attention / (BF16 rate × attention eff)
  Seconds memory;         // bytes / (bandwidth × memory eff)
  Seconds link;           // tensor-parallel all-reduces, not overlapped with the rest
  Seconds fixed;          // decode: layers × the engine's fixed time per layer
  Seconds roofline() const { return compute > memory ? compute : memory; }
  Seconds time() const { return roofline() + link + fixed; }
  bool compute_bound() const { return compute >= memory; }
  // "link" where the all-reduces take longer than the card's own work, "engine" where the
  // engine's fixed time does.
  std::string_view bound() const {
    if (fixed > roofline() && fixed > link) return "engine";
    return link > roofline() ? "link" : compute_bound() ? "compute" : "bandwidth";
  }
};

// The prefill of `prompts` prompts of `tokens` tokens each in one pass: linear FLOPs 2 × active ×
// tokens × prompts; attention over each prompt's causal (query, key) pairs of each group's span;
// bytes: the weights once (experts touched by all the pass's tokens) and the prompts' KV written.
// A card without the rate its format needs is a UserError naming `field`.
PassTime prefill_time(const GenerationModel& g, const Device& d, std::int64_t tokens,
                      const GenerationEfficiency& e, std::string_view field = "weights",
                      const TensorParallelLink& link = {}, std::int64_t prompts = 1);
// One decode step of `batch` sequences, each at `context` tokens: linear FLOPs 2 × active ×
// batch; attention batch × Σ layers × tokens held × decode pair FLOPs; bytes: dense weights +
// experts × touched / E + batch × KV held. Tokens per second = batch / time.
PassTime decode_time(const GenerationModel& g, const Device& d, std::int64_t batch,
                     std::int64_t context, const GenerationEfficiency& e,
                     std::string_view field = "weights", const TensorParallelLink& link = {});

// ---- many sequences: the time to generate completions (RL rollouts, batch generation) ----------

// `sequences` sequences, each a prompt of `prompt_tokens` and `completion_tokens` generated
// tokens, in waves of at most `batch` sequences (the last wave holds the rest): per wave one
// prefill of its prompts together, then completion_tokens decode steps whose context grows from
// the prompt to prompt + completion. The decode steps are timed at the midpoints of
// kRolloutSegments equal segments of the completion (the midpoint rule; a step's time is
// piecewise linear in its context). Efficiencies from `table` for each pass's tokens.
inline constexpr int kRolloutSegments = 8;
struct RolloutTime {
  std::int64_t waves = 0;
  Seconds prefill;
  Seconds decode;
  Seconds total() const { return prefill + decode; }
  // Generated tokens per second over the whole rollout (completions only).
  double completion_tokens_per_second = 0;
};
//
// Completions of varying length (`completion_lengths`: probabilities of each length in increasing
// order, the longest at most completion_tokens; empty or one length: every completion is
// completion_tokens long). The engine batches continuously (vLLM): a sequence that ends frees its
// slot for the next waiting one.
//  - All sequences at once (sequences ≤ batch): decode step t runs while any sequence is still
//    generating, P = 1 − (1 − s(t))^n with s(t) the share of completions longer than t, with the
//    n·s(t)/P sequences expected to be left; the rollout lasts until its longest completion.
//  - More sequences than slots: while sequences wait, every slot decodes, at the length-biased
//    mean context prompt + E[L²] / (2 E[L]); the last `batch` sequences then run out as above.
//    The steps of the full phase: (sequences − batch) × mean length / batch.
// Prefill as for fixed lengths (waves of at most `batch` prompts).
RolloutTime rollout_time(const GenerationModel& g, const Device& d, const EfficiencyTable& table,
                         std::int64_t sequences, std::int64_t prompt_tokens,
                         std::int64_t completion_tokens, std::int64_t batch,
                         const TensorParallelLink& link = {},
                         const std::vector<LengthBin>& completion_lengths = {});

// ---- one estimate: memory, prefill, decode at a batch, a batch sweep ---------------------------

struct GenerationRequest {
  std::int64_t context = 2048;  // tokens per sequence (prompt and generated)
  std::int64_t batch = 1;       // sequences decoded together
  std::int64_t block_size = kDefaultBlockSize;
  double utilization = kDefaultGpuMemoryUtilization;
};

struct DecodePoint {
  std::int64_t batch = 0;
  GenerationEfficiency efficiency;
  PassTime step;
  bool fits = false;  // batch ≤ max_concurrent_sequences
  double tokens_per_second() const { return static_cast<double>(batch) / step.time().value; }
  double ms_per_token() const { return step.time().value * 1e3; }  // one sequence's latency
};

struct GenerationEstimate {
  GenerationMemory memory;
  GenerationEfficiency prefill_efficiency;
  PassTime prefill;    // one prompt of `context` tokens
  DecodePoint decode;  // at the request's batch, every sequence at `context` tokens
  // Batches 1, 2, 4, ... up to max_concurrent_sequences, and that batch itself (1 when none
  // fits).
  std::vector<DecodePoint> batch_sweep;
  // Where published decode measurements fall around the prediction (the table's generation fit,
  // leave-one-source-out): a decode time t ranges over [t × low, t × high]. 1: no fit.
  double decode_range_low = 1, decode_range_high = 1;
  double prefill_tokens_per_second(std::int64_t context) const {
    return static_cast<double>(context) / prefill.time().value;
  }
};

// Memory and times are per card of the tensor-parallel group (g.tp cards, `link` between them).
// `cuda_context` as in generation_memory; `d` the card (or MIG instance) with `card_bytes` of
// memory; efficiencies from `table` for the card's architecture.
GenerationEstimate estimate_generation(const GenerationModel& g, const Device& d, Bytes card_bytes,
                                       const EfficiencyTable& table, Bytes cuda_context,
                                       const GenerationRequest& request,
                                       const TensorParallelLink& link = {});

}  // namespace ftplan
