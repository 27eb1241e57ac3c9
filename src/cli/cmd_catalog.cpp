// ftplan gpus / ftplan models / ftplan params: what the catalogs hold.
#include <optional>

#include "cli/cli.hpp"
#include "model/checkpoint.hpp"
#include "render/catalog_text.hpp"
#include "render/checkpoint_text.hpp"
#include "render/detect_text.hpp"
#include "render/json.hpp"

namespace ftplan::cli {
namespace {

// The catalog's cards (with the card files given by path) as JSON or as the text table.
void list_gpus(Context& ctx, const std::vector<std::string>& files, bool json_out) {
  for (const auto& f : files)
    ctx.resolve_gpu(f);
  const Catalog& c = ctx.catalog();
  if (!json_out) {
    print_gpus(ctx.out, c);
    return;
  }
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& g : c.gpus())
    arr.push_back(gpu_json(g));
  print_json(ctx, "gpus", nlohmann::json{{"gpus", arr}});
}

// The cards of this machine (nvidia-smi, or a saved output of it) and the catalog cards they are.
void list_detected(Context& ctx, const std::string& file, bool json_out) {
  const DetectedMachine& m = ctx.detect_machine(file);
  if (json_out)
    print_json(ctx, "gpus-detect", detected_json(m));
  else
    print_detected(ctx.out, m);
}

// The catalog's models as JSON or as the text table.
void list_models(Context& ctx, bool json_out) {
  const Catalog& c = ctx.catalog();
  if (!json_out) {
    print_models(ctx.out, c);
    return;
  }
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& m : c.models())
    arr.push_back(model_summary_json(*m));
  print_json(ctx, "models", nlohmann::json{{"models", arr}});
}

// The parameter inventory of a model, and its checkpoint's when safetensors headers are at hand
// (a cache, a folder, a download, or --safetensors), as JSON or as text.
void show_params(Context& ctx, const std::string& id, const std::string& safetensors,
                 bool json_out) {
  const ModelSource source = ctx.resolve_model_source(id, true, safetensors);
  const Model& m = *source.model;
  std::optional<CheckpointCheck> check;
  if (source.checkpoint && !source.counted_from_checkpoint)
    check = cross_check(*source.checkpoint, m.params);
  const std::string note = source.counted_from_checkpoint ? m.note : std::string();
  if (json_out) {
    auto j = params_json(m);
    j["origin"] = source.origin;
    if (source.checkpoint)
      j["checkpoint"] = checkpoint_json(*source.checkpoint, source.checkpoint_origin,
                                        check ? &*check : nullptr, note);
    print_json(ctx, "params", std::move(j));
    return;
  }
  print_params(ctx.out, m);
  if (source.checkpoint)
    print_checkpoint(ctx.out, *source.checkpoint, source.checkpoint_origin,
                     check ? &*check : nullptr, note);
}

const bool registered_gpus =
    register_command({"gpus", "List the GPU catalog (every figure has a source; --json)",
                      [](CLI::App& app, Context& ctx) {
                        auto json_out = std::make_shared<bool>(false);
                        auto detect = std::make_shared<std::string>();
                        auto files = std::make_shared<std::vector<std::string>>();
                        app.add_flag("--json", *json_out, "Print JSON");
                        app.add_option("--gpu", *files,
                                       "A card file to list with the catalog (repeatable): its "
                                       "figures without a source show as user-supplied");
                        CLI::Option* detect_option =
                            app.add_option("--detect", *detect,
                                           "List this machine's cards (runs nvidia-smi), or "
                                           "those of a saved output of `" +
                                               std::string(kSmiQuery) + "` given as FILE")
                                ->expected(0, 1);
                        return [&ctx, json_out, detect, detect_option, files] {
                          if (detect_option->count() > 0)
                            list_detected(ctx, *detect, *json_out);
                          else
                            list_gpus(ctx, *files, *json_out);
                        };
                      },
                      10});

const bool registered_models =
    register_command({"models", "List the model catalog",
                      [](CLI::App& app, Context& ctx) {
                        auto json_out = std::make_shared<bool>(false);
                        app.add_flag("--json", *json_out, "Print JSON");
                        return [&ctx, json_out] { list_models(ctx, *json_out); };
                      },
                      11});

const bool registered_params = register_command(
    {"params", "Exact parameter inventory of a model: every tensor, its shape and kind",
     [](CLI::App& app, Context& ctx) {
       auto model = std::make_shared<std::string>();
       auto safetensors = std::make_shared<std::string>();
       auto json_out = std::make_shared<bool>(false);
       app.add_option("--model", *model,
                      "Catalog model id, Hugging Face id (org/name[@revision]), folder holding "
                      "config.json, or path to a config.json")
           ->required();
       app.add_option("--safetensors", *safetensors,
                      "A .safetensors file or model.safetensors.index.json whose headers to "
                      "count and cross-check (only the headers are read)");
       app.add_flag("--json", *json_out, "Print JSON");
       return [&ctx, model, safetensors, json_out] {
         show_params(ctx, *model, *safetensors, *json_out);
       };
     },
     12});

}  // namespace
}  // namespace ftplan::cli
