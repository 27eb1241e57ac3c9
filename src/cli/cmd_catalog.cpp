// ftplan gpus / ftplan models / ftplan params: what the catalogs hold.
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "core/format.hpp"
#include "render/json.hpp"
#include "render/table.hpp"

namespace ftplan::cli {
namespace {

std::string rate_cell(const GpuSpec& g, TensorPrecision p) {
  const auto& f = g.tensor_figure(p);
  if (!f.value) return "unknown";
  return format_number(*f.value, 1);
}

void print_gpus(Context& ctx, bool json_out) {
  const Catalog& c = ctx.catalog();
  if (json_out) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& g : c.gpus())
      arr.push_back(gpu_json(g));
    ctx.out << nlohmann::json{{"gpus", arr}}.dump(2) << "\n";
    return;
  }
  ctx.out << "GPU catalog: driver-visible memory (GB = 1e9 B), bandwidth, dense tensor TFLOPS\n\n";
  TextTable t(
      {"id", "memory GB>", "GB/s>", "BF16>", "FP8>", "FP4>", "NVLink", "MIG", "CC>", "TDP W>"});
  for (const auto& g : c.gpus()) {
    std::string link = g.nvlink.kind == LinkKind::kNone
                           ? fmt::format("PCIe{} only", g.pcie.generation)
                           : fmt::format("{} {}", link_kind_name(g.nvlink.kind),
                                         format_number(g.nvlink.GBps_per_gpu_both_directions));
    t.row({g.id, format_fixed(to_GB(g.capacity()), 1),
           format_number(g.bandwidth_GBps.value.value_or(0)), rate_cell(g, TensorPrecision::kBF16),
           rate_cell(g, TensorPrecision::kFP8), rate_cell(g, TensorPrecision::kFP4), link,
           g.mig.supported ? std::to_string(g.mig.max_instances) + " max" : "-",
           g.compute_capability.value.value_or("?"), format_number(g.tdp_W.value.value_or(0))});
  }
  t.print(ctx.out);
  ctx.out << "\nNVLink figures: GB/s per GPU, both directions. 'unknown': the vendor publishes no "
             "dense rate.\n"
             "ftplan gpus --json lists every figure with its source.\n";
}

void print_models(Context& ctx, bool json_out) {
  const Catalog& c = ctx.catalog();
  if (json_out) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& m : c.models())
      arr.push_back(model_summary_json(*m));
    ctx.out << nlohmann::json{{"models", arr}}.dump(2) << "\n";
    return;
  }
  TextTable t({"id", "type", "parameters>", "layers>", "hidden>", "heads/kv>", "experts>", "vocab>",
               "tied"});
  for (const auto& m : c.models()) {
    const ModelArch& a = m->arch;
    t.row({a.id, a.model_type, group_digits(m->params.total), std::to_string(a.layers),
           std::to_string(a.hidden), fmt::format("{}/{}", a.heads, a.kv_heads),
           a.is_moe() ? fmt::format("{} (top {})", a.num_experts, a.experts_per_token) : "-",
           std::to_string(a.vocab), a.tied_embeddings ? "yes" : "no"});
  }
  t.print(ctx.out);
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void print_params(Context& ctx, const std::string& id, bool json_out) {
  ModelPtr m = ctx.resolve_model(id);
  if (json_out) {
    ctx.out << params_json(*m).dump(2) << "\n";
    return;
  }
  const ParamInventory& inv = m->params;
  ctx.out << fmt::format("{} ({}): {} parameters ({})\n\n", m->arch.name, m->arch.model_type,
                         group_digits(inv.total),
                         format_count_short(static_cast<double>(inv.total)));
  TextTable t({"tensor", "shape", "kind", "copies>", "parameters>"});
  for (const auto& tensor : inv.tensors)
    t.row({tensor.name, shape_text(tensor.shape), std::string(tensor_kind_name(tensor.kind)),
           std::to_string(tensor.copies()), group_digits(tensor.total())});
  t.print(ctx.out);
  ctx.out << fmt::format(
      "\n{{L}}: decoder layer index (0..{}), {{E}}: expert index. Copies = layers (x experts).\n\n",
      m->arch.layers - 1);
  TextTable s({"group", "parameters>"});
  s.row({"block linear weights", group_digits(inv.block_linear)});
  s.row({"embedding + output", group_digits(inv.embedding_and_output)});
  s.row({"norms", group_digits(inv.norms)});
  if (inv.biases) s.row({"biases", group_digits(inv.biases)});
  if (inv.other) s.row({"other", group_digits(inv.other)});
  s.separator();
  s.row({"total", group_digits(inv.total)});
  if (m->arch.is_moe())
    s.row({"active per token (no embedding lookup)", group_digits(inv.active_per_token)});
  s.print(ctx.out);
  for (const auto& note : m->arch.defaults_applied)
    ctx.out << "default applied: " << note << "\n";
}

const bool registered_gpus =
    register_command({"gpus", "List the GPU catalog (every figure has a source; --json)",
                      [](CLI::App& app, Context& ctx) {
                        auto json_out = std::make_shared<bool>(false);
                        app.add_flag("--json", *json_out, "Print JSON");
                        return [&ctx, json_out] { print_gpus(ctx, *json_out); };
                      },
                      10});

const bool registered_models =
    register_command({"models", "List the model catalog",
                      [](CLI::App& app, Context& ctx) {
                        auto json_out = std::make_shared<bool>(false);
                        app.add_flag("--json", *json_out, "Print JSON");
                        return [&ctx, json_out] { print_models(ctx, *json_out); };
                      },
                      11});

const bool registered_params = register_command(
    {"params", "Exact parameter inventory of a model: every tensor, its shape and kind",
     [](CLI::App& app, Context& ctx) {
       auto model = std::make_shared<std::string>();
       auto json_out = std::make_shared<bool>(false);
       app.add_option("--model", *model, "Catalog model id or path to a Hugging Face config.json")
           ->required();
       app.add_flag("--json", *json_out, "Print JSON");
       return [&ctx, model, json_out] { print_params(ctx, *model, *json_out); };
     },
     12});

}  // namespace
}  // namespace ftplan::cli
