#include "render/catalog_text.hpp"

#include <fmt/format.h>

#include "core/format.hpp"
#include "render/table.hpp"

namespace ftplan {

namespace {

std::string rate_cell(const GpuSpec& g, TensorPrecision p) {
  const auto& f = g.tensor_figure(p);
  if (!f.value) return "unknown";
  return format_number(*f.value, 1);
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

void print_gpus(std::ostream& out, const Catalog& catalog) {
  out << "GPU catalog: driver-visible memory (GB = 1e9 B), bandwidth, dense tensor TFLOPS\n\n";
  TextTable t(
      {"id", "memory GB>", "GB/s>", "BF16>", "FP8>", "FP4>", "NVLink", "MIG", "CC>", "TDP W>"});
  for (const auto& g : catalog.gpus()) {
    std::string link = g.nvlink.kind == LinkKind::kNone
                           ? fmt::format("PCIe{} only", g.pcie.generation)
                           : fmt::format("{}{} {}", g.nvlink.fabric == "nvlink" ? "" : "IF ",
                                         link_kind_name(g.nvlink.kind),
                                         format_number(g.nvlink.GBps_per_gpu_both_directions));
    t.row({g.user_supplied ? g.id + " (user-supplied)" : g.id, format_fixed(to_GB(g.capacity()), 1),
           format_number(g.bandwidth_GBps.value.value_or(0)), rate_cell(g, TensorPrecision::kBF16),
           rate_cell(g, TensorPrecision::kFP8), rate_cell(g, TensorPrecision::kFP4), link,
           g.mig.supported ? std::to_string(g.mig.max_instances) + " max" : "-",
           g.compute_capability.value.value_or("?"), format_number(g.tdp_W.value.value_or(0))});
  }
  t.print(out);
  for (const auto& g : catalog.gpus())
    for (const auto& a : g.assumptions)
      out << "assumption: " << a << "\n";
  out << "\nNVLink figures: GB/s per GPU, both directions ('IF': AMD Infinity Fabric links). "
         "'unknown': the vendor publishes no dense rate.\n"
         "ftplan gpus --json lists every figure with its source.\n";
}

void print_models(std::ostream& out, const Catalog& catalog) {
  TextTable t({"id", "type", "parameters>", "layers>", "hidden>", "heads/kv>", "experts>", "vocab>",
               "tied"});
  for (const auto& m : catalog.models()) {
    const ModelArch& a = m->arch;
    t.row({a.id, a.model_type, group_digits(m->params.total), std::to_string(a.layers),
           std::to_string(a.hidden), fmt::format("{}/{}", a.heads, a.kv_heads),
           a.is_moe() ? fmt::format("{} (top {})", a.num_experts, a.experts_per_token) : "-",
           std::to_string(a.vocab), a.tied_embeddings ? "yes" : "no"});
  }
  t.print(out);
}

void print_params(std::ostream& out, const Model& m) {
  const ParamInventory& inv = m.params;
  out << fmt::format("{} ({}): {} parameters ({})\n\n", m.arch.name, m.arch.model_type,
                     group_digits(inv.total), format_count_short(static_cast<double>(inv.total)));
  const bool parts = inv.vision + inv.projector > 0;
  std::vector<std::string> header = {"tensor", "shape", "kind", "copies>", "parameters>"};
  if (parts) header.insert(header.begin() + 3, "part");
  TextTable t(header);
  for (const auto& tensor : inv.tensors) {
    std::vector<std::string> row = {tensor.name, shape_text(tensor.shape),
                                    std::string(tensor_kind_name(tensor.kind)),
                                    std::to_string(tensor.copies()), group_digits(tensor.total())};
    if (parts) row.insert(row.begin() + 3, std::string(model_part_name(tensor.part)));
    t.row(row);
  }
  t.print(out);
  out << fmt::format(
      "\n{{L}}: decoder layer index (0..{}), {{E}}: expert index. Copies = layers (x experts).\n",
      m.arch.layers - 1);
  if (m.arch.has_vision()) {
    out << fmt::format(
        "Vision tower: {{L}} is its encoder layer (0..{}). Vision tower and projector are frozen "
        "in training.\n",
        m.arch.vision.layers - 1);
    if (m.arch.vision.deepstack_mergers > 0)
      out << fmt::format(
          "Deepstack mergers: {{L}} is the merger (0..{}), one per tapped vision layer.\n",
          m.arch.vision.deepstack_mergers - 1);
  }
  out << "\n";
  if (parts) {
    TextTable p({"part", "parameters>"});
    p.row({"text decoder", group_digits(inv.text)});
    p.row({"vision tower", group_digits(inv.vision)});
    p.row({"projector", group_digits(inv.projector)});
    p.print(out);
    out << "\n";
  }
  TextTable s({"group", "parameters>"});
  if (parts) s.row({"text decoder:", ""});
  s.row({"block linear weights", group_digits(inv.block_linear)});
  s.row({"embedding + output", group_digits(inv.embedding_and_output)});
  s.row({"norms", group_digits(inv.norms)});
  if (inv.biases) s.row({"biases", group_digits(inv.biases)});
  if (inv.other) s.row({"other", group_digits(inv.other)});
  s.separator();
  s.row({"total", group_digits(inv.total)});
  if (m.arch.is_moe())
    s.row({"active per token (no embedding lookup)", group_digits(inv.active_per_token)});
  s.print(out);
  for (const auto& note : m.arch.defaults_applied)
    out << "default applied: " << note << "\n";
  if (m.arch.mtp_layers > 0)
    out << fmt::format(
        "not counted: {} multi-token-prediction layer(s) in the checkpoint "
        "(num_nextn_predict_layers); transformers does not load them\n",
        m.arch.mtp_layers);
}

}  // namespace ftplan
