#include "render/checkpoint_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/format.hpp"
#include "render/table.hpp"

namespace ftplan {

namespace {

constexpr std::size_t kListedNames = 10;  // names shown per list in the text output

std::string bytes_text(std::uint64_t bytes) {
  const Bytes b(static_cast<double>(bytes));
  return fmt::format("{} B = {} = {}", group_digits(static_cast<std::int64_t>(bytes)),
                     format_GB(b, 3), format_GiB(b, 3));
}

void print_names(std::ostream& out, const std::string& title,
                 const std::vector<std::string>& names) {
  if (names.empty()) return;
  out << fmt::format("  {} ({}):\n", title, names.size());
  for (std::size_t i = 0; i < names.size() && i < kListedNames; ++i)
    out << "    " << names[i] << "\n";
  if (names.size() > kListedNames)
    out << fmt::format("    … and {} more (--json lists all)\n", names.size() - kListedNames);
}

}  // namespace

void print_checkpoint(std::ostream& out, const CheckpointInventory& inv, const std::string& origin,
                      const CheckpointCheck* check, const std::string& note) {
  out << fmt::format("\nCheckpoint (safetensors headers, {}): {} file{}, {} tensors stored\n",
                     origin, inv.files.size(), inv.files.size() == 1 ? "" : "s", inv.stored.size());
  out << fmt::format("  stored: {}\n", bytes_text(inv.stored_bytes));
  out << fmt::format("  logical parameters: {} ({})\n", group_digits(inv.params),
                     format_count_short(static_cast<double>(inv.params)));
  TextTable d({"dtype", "tensors>", "bytes>", "GB>"});
  for (const auto& [dtype, use] : inv.dtypes)
    d.row({dtype, std::to_string(use.tensors), group_digits(static_cast<std::int64_t>(use.bytes)),
           format_fixed(static_cast<double>(use.bytes) / 1e9, 3)});
  d.print(out);
  if (inv.quantization.empty()) {
    out << "  quantization: none found (plain weights)\n";
  } else {
    TextTable q({"quantization", "bits>", "weights>", "parameters>", "stored GB>"});
    for (const auto& f : inv.quantization)
      q.row({f.scheme, std::to_string(f.bits), std::to_string(f.weights), group_digits(f.params),
             format_fixed(static_cast<double>(f.stored_bytes) / 1e9, 3)});
    q.print(out);
  }
  for (const auto& n : inv.notes)
    out << "  note: " << n << "\n";
  if (!note.empty()) out << "  note: " << note << "\n";
  if (!check) return;
  if (check->matches()) {
    out << fmt::format("Cross-check with config.json: matches ({} tensors, {} parameters)\n",
                       check->config_tensors, group_digits(check->config_params));
    return;
  }
  out << "Cross-check with config.json: differs\n";
  out << fmt::format("  tensors: config {}, checkpoint {} (difference {:+})\n",
                     check->config_tensors, check->checkpoint_tensors,
                     check->checkpoint_tensors - check->config_tensors);
  out << fmt::format("  parameters: config {}, checkpoint {} (difference {:+})\n",
                     group_digits(check->config_params), group_digits(check->checkpoint_params),
                     check->checkpoint_params - check->config_params);
  print_names(out, "only in config.json", check->only_in_config);
  print_names(out, "only in the checkpoint", check->only_in_checkpoint);
  std::vector<std::string> shapes;
  for (const auto& s : check->shape_differences)
    shapes.push_back(
        fmt::format("{}: config {}, checkpoint {}", s.pattern, s.config, s.checkpoint));
  print_names(out, "shapes or counts differ", shapes);
}

nlohmann::json checkpoint_json(const CheckpointInventory& inv, const std::string& origin,
                               const CheckpointCheck* check, const std::string& note) {
  nlohmann::json dtypes = nlohmann::json::object();
  for (const auto& [dtype, use] : inv.dtypes)
    dtypes[dtype] = {{"tensors", use.tensors}, {"bytes", use.bytes}};
  nlohmann::json quant = nlohmann::json::array();
  for (const auto& f : inv.quantization)
    quant.push_back({{"scheme", f.scheme},
                     {"bits", f.bits},
                     {"weights", f.weights},
                     {"params", f.params},
                     {"stored_bytes", f.stored_bytes}});
  nlohmann::json j = {
      {"origin", origin},
      {"files", inv.files},
      {"stored_tensors", inv.stored.size()},
      {"logical_tensors", inv.logical.size()},
      {"stored_bytes", inv.stored_bytes},
      {"stored_GB", static_cast<double>(inv.stored_bytes) / 1e9},
      {"stored_GiB", static_cast<double>(inv.stored_bytes) / (1024.0 * 1024.0 * 1024.0)},
      {"params", inv.params},
      {"dtypes", dtypes},
      {"quantization", quant},
      {"metadata", inv.metadata},
      {"notes", inv.notes},
      {"counted_from_checkpoint", !note.empty()}};
  if (!note.empty()) j["note"] = note;
  if (check) {
    nlohmann::json shapes = nlohmann::json::array();
    for (const auto& s : check->shape_differences)
      shapes.push_back(
          {{"pattern", s.pattern}, {"config", s.config}, {"checkpoint", s.checkpoint}});
    j["cross_check"] = {{"matches", check->matches()},
                        {"config_tensors", check->config_tensors},
                        {"checkpoint_tensors", check->checkpoint_tensors},
                        {"tensor_difference", check->checkpoint_tensors - check->config_tensors},
                        {"config_params", check->config_params},
                        {"checkpoint_params", check->checkpoint_params},
                        {"params_difference", check->checkpoint_params - check->config_params},
                        {"only_in_config", check->only_in_config},
                        {"only_in_checkpoint", check->only_in_checkpoint},
                        {"shape_differences", shapes}};
  }
  return j;
}

}  // namespace ftplan
