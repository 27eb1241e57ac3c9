// Published measurements of generation with a serving engine (data/measured/inference.yaml, or a
// user's file of the same schema), and the validation of the generation model (infer/generation)
// against them. Two kinds of figure:
//   kv_cache: what an engine's startup log prints per card: the tokens its KV cache holds (vLLM
//     "GPU KV cache size: N tokens", or "# GPU blocks: B" × the block size; SGLang "#tokens"),
//     and where printed the memory it gave the cache, the weights' memory and the card's total.
//     Predicted with generation_memory: the tokens are the cache budget in whole blocks of
//     kv_bytes_per_token × block size. The tokens the logged cache memory holds are computed too:
//     a check of the bytes per token alone, free of the memory split.
//   decode: a benchmark's mean time per output token (TPOT) at a concurrency, with fixed input
//     and output lengths. Predicted as one decode step (decode_time) of `concurrency` sequences at
//     the mean context of the decode, input + output / 2; or a decode step timed at one fixed
//     context (`context`: a loop that replays the same step, engine `pytorch`).
// Every figure is per card of the tensor-parallel group, in the unit the source prints (vLLM and
// SGLang print GiB, some versions labelled "GB").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "infer/generation.hpp"

namespace ftplan {

struct PlanningData;

// "vllm", "sglang", "tensorrt-llm", "pytorch" (a bare loop: no engine's memory split; its rows
// give decode figures only).
const std::vector<std::string>& inference_engine_names();

struct MeasuredKvCache {
  std::int64_t tokens = 0;        // tokens the cache holds per card
  std::optional<double> memory;   // the cache's memory per card, in `unit`
  std::optional<double> weights;  // the weights' memory per card, in `unit`
  std::optional<double> card;     // the card's total memory as the engine saw it, in `unit`
  std::string unit;  // kMemoryUnitNames: "GB", "GiB", "MB", "MiB"; empty without a memory figure
};

struct MeasuredDecode {
  std::int64_t input_tokens = 0;   // 0 with `context`
  std::int64_t output_tokens = 0;  // 0 with `context`
  std::int64_t fixed_context = 0;  // a step timed at this context; 0: input and output given
  // The context the step is predicted at: the fixed one, or the decode's mean.
  std::int64_t context() const {
    return fixed_context > 0 ? fixed_context : input_tokens + output_tokens / 2;
  }
  std::int64_t concurrency = 0;  // sequences decoded together
  double tpot_ms = 0;            // mean time per output token, milliseconds
};

struct MeasuredGeneration {
  std::string id;
  std::string source;  // source id (data/sources*.yaml)
  std::string note;
  int line = 0;
  std::string engine;          // one of inference_engine_names()
  std::string engine_version;  // empty: not stated
  std::string model;           // catalog id as written
  std::string gpu;             // catalog id as written
  ModelPtr model_ptr;          // resolved unless skipped
  const GpuSpec* gpu_spec = nullptr;
  int tp = 1;
  WeightFormat weights = WeightFormat::kBF16;
  KvDtype kv_dtype = KvDtype::kBF16;
  double utilization = kDefaultGpuMemoryUtilization;  // vLLM gpu_memory_utilization, SGLang
                                                      // mem_fraction_static
  std::int64_t max_model_len = 0;                     // tokens per request the engine admits
  std::int64_t block_size = kDefaultBlockSize;        // tokens per KV block (SGLang: 1)
  std::optional<MeasuredKvCache> kv_cache;
  std::optional<MeasuredDecode> decode;
  // Why the model cannot predict it; empty: predicted. A skipped row's names are not resolved.
  std::string skip;
};

// Parses a measured-generation file (root key `inference`) strictly: unknown keys, wrong types,
// unknown model, GPU, engine, weight format, KV dtype or source ids, a row with neither a kv_cache
// nor a decode figure, or a memory figure without its unit are UserErrors naming the file, the
// key and the line.
std::vector<MeasuredGeneration> parse_measured_generation(const DataFile& file,
                                                          const Catalog& catalog);

// Whether a data file is a measured-generation file (its root has the key `inference`).
bool is_measured_generation_file(const DataFile& file);

struct GenerationValidationRow {
  const MeasuredGeneration* row = nullptr;
  bool skipped = false;
  std::string reason;  // skipped: why
  // kv_cache
  GenerationMemory memory;                           // the predicted split, at max_model_len
  std::int64_t predicted_tokens = 0;                 // the predicted cache budget in whole blocks
  std::optional<std::int64_t> logged_memory_tokens;  // tokens the logged cache memory holds
  double tokens_error = 0;                           // (predicted − measured) / measured
  std::optional<double> logged_memory_tokens_error;
  std::optional<double> kv_memory_error;  // predicted kv_budget against the logged cache memory
  std::optional<double> weights_error;    // predicted weights against the logged weights
  std::optional<double> card_error;       // the card's memory in the catalog against the log's
  // decode
  double predicted_tpot_ms = 0;
  double tpot_error = 0;
};

struct GenerationErrorSummary {
  int rows = 0;
  double median_abs_error = 0;
  double p90_abs_error = 0;
  double worst_abs_error = 0;
  std::string worst_id;
};

// The engine's fixed decode time per layer (GenerationCosts) fitted to the decode rows: the whole
// microseconds that give the least median absolute error of the time per output token over all
// rows, with the errors at that value, and each source predicted by the value fitted to the
// others (leave-one-source-out: median, 10th and 90th percentiles of the signed errors).
struct DecodeLayerFit {
  double seconds_per_layer = 0;
  int rows = 0;
  int sources = 0;
  double median_abs_error = 0;
  double loso_median_abs_error = 0;
  double error_low = 0;
  double error_high = 0;
};

struct GenerationValidationReport {
  std::vector<GenerationValidationRow> rows;  // in file order, skipped ones included
  GenerationErrorSummary kv_tokens;           // predicted tokens from the card's memory
  GenerationErrorSummary kv_tokens_from_logged_memory;
  GenerationErrorSummary kv_memory;
  GenerationErrorSummary weights;
  GenerationErrorSummary decode_tpot;
  DecodeLayerFit decode_fit;  // the fixed time per layer the decode rows give
  int skipped = 0;
};

GenerationValidationReport validate_generation(const std::vector<MeasuredGeneration>& rows,
                                               const PlanningData& data);

DecodeLayerFit fit_decode_layer_time(const std::vector<MeasuredGeneration>& rows,
                                     const PlanningData& data);

}  // namespace ftplan
