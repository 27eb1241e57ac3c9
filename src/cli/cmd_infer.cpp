// ftplan infer: serving a model on a card (or a tensor-parallel group of cards): KV cache bytes
// per token and per sequence, how a card's memory splits between weights, a reserve and the
// cache, the most sequences that fit, and the prefill and decode rates on the roofline
// (infer/generation).
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "cli/perf_options.hpp"
#include "core/error.hpp"
#include "infer/generation.hpp"
#include "render/infer_text.hpp"
#include "render/reason_words.hpp"

namespace ftplan::cli {
namespace {

struct InferOptions {
  std::string model;
  PlacementOptions placement;
  CalibrationOptions calibration;
  int gpus = 1;
  long long context = 2048;
  long long batch = 1;
  long long block_size = kDefaultBlockSize;
  double utilization = kDefaultGpuMemoryUtilization;
  std::string kv_dtype = "bf16";
  std::string weights = "bf16";
  bool json = false;
};

void require_at_least_one(long long value, const char* option, const char* what) {
  if (value < 1)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("--{} must be at least 1 ({}), got {}", option, what, value),
                    option);
}

// The card must publish the dense rates a run in `weights` needs (its GEMMs' and BF16 attention).
void require_rates(const Device& d, WeightFormat weights) {
  for (const TensorPrecision p : {weight_format_precision(weights), TensorPrecision::kBF16})
    if (!d.rate(p))
      throw UserError(ErrorCode::kUnsupported,
                      fmt::format("no generation estimate with --weights {}: {}",
                                  weight_format_name(weights), word_reason(d.missing_rate(p))),
                      p == TensorPrecision::kBF16 ? "gpu" : "weights");
}

const bool registered_infer = register_command(
    {"infer",
     "Generation (serving) per card: KV cache per token, max concurrent sequences, prefill and "
     "decode tokens/s",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<InferOptions>();
       app.add_option("--model", o->model,
                      "Catalog model id (ftplan models), Hugging Face id (org/name), folder "
                      "holding config.json, or path to a Hugging Face config.json")
           ->required();
       o->placement.add_to(app, false, true, true);
       app.add_option("--gpus", o->gpus,
                      "Cards one copy of the model is split over by tensor parallelism (default 1; "
                      "figures per card)");
       app.add_option("--context", o->context,
                      "Tokens per sequence, prompt and generated (default 2048)");
       app.add_option("--batch", o->batch, "Sequences decoded together (default 1)");
       app.add_option("--kv-dtype", o->kv_dtype,
                      fmt::format("KV cache element type: {} (default bf16)",
                                  fmt::join(kv_dtype_names(), " | ")));
       app.add_option("--weights", o->weights,
                      "Linear weights as served: bf16 | fp8 (W8A8) | nvfp4 (W4A4) | int4 "
                      "(GPTQ/AWQ W4A16) | mxfp4 (W4A16) (default bf16)");
       app.add_option("--block-size", o->block_size,
                      "Tokens per paged KV block (default 16, vLLM's)");
       app.add_option("--gpu-memory-utilization", o->utilization,
                      "Share of the card's memory the engine may use (default 0.9, vLLM's)");
       o->calibration.add_to(app);
       app.add_flag("--json", o->json, "Print JSON (GB = 1e9 B)");
       return [&ctx, o] {
         require_at_least_one(o->context, "context", "tokens per sequence");
         require_at_least_one(o->batch, "batch", "sequences decoded together");
         require_at_least_one(o->block_size, "block-size", "tokens per KV block");
         if (!(o->utilization > 0 && o->utilization <= 1))
           throw UserError(ErrorCode::kInvalidValue,
                           fmt::format("--gpu-memory-utilization must be above 0 and at most 1, "
                                       "got {}",
                                       o->utilization),
                           "gpu-memory-utilization");
         if (o->gpus < 1)
           throw UserError(ErrorCode::kInvalidValue,
                           fmt::format("--gpus must be at least 1 (cards), got {}", o->gpus),
                           "gpus");
         const KvDtype kv = parse_kv_dtype(o->kv_dtype, "kv-dtype");
         const WeightFormat weights = parse_weight_format(o->weights, "weights");
         const ModelPtr model = ctx.resolve_model(o->model);
         const Placement p = o->placement.build(ctx);
         if (o->gpus > 1 && p.mig)
           throw UserError(ErrorCode::kUnsupported,
                           fmt::format("--gpus {} with --mig {}: a model split over cards runs on "
                                       "whole cards; drop --mig or give --gpus 1",
                                       o->gpus, p.mig->name),
                           "gpus");
         const Device d = make_device(p);
         require_rates(d, weights);
         const EfficiencyTable table = o->calibration.for_gpu(ctx, *p.gpu, true);
         const GenerationModel g = make_generation_model(model, weights, kv, o->gpus, "gpus");
         // The cards of a tensor-parallel group and the link between them (comm/).
         const CommConstants constants = load_comm_constants(ctx.catalog());
         Topology topology;
         TensorParallelLink link;
         if (o->gpus > 1) {
           topology = build_topology(*p.gpu, o->gpus, p.topology, constants);
           link = {&topology, &constants};
         }
         GenerationRequest r;
         r.context = o->context;
         r.batch = o->batch;
         r.block_size = o->block_size;
         r.utilization = o->utilization;
         const Bytes card = p.mig ? p.mig->memory() : p.gpu->capacity();
         const GenerationEstimate e =
             estimate_generation(g, d, card, table, ctx.overheads().cuda_context, r, link);
         const InferView view{g, d, r, e, o->gpus > 1 ? &topology : nullptr};
         if (o->json)
           print_json(ctx, "infer", infer_json(view));
         else
           print_infer(ctx.out, view);
       };
     },
     42});

}  // namespace
}  // namespace ftplan::cli
