#include "catalog/device_match.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/error.hpp"
#include "core/text.hpp"

namespace ftplan {

namespace {

std::vector<std::string> ids_of(const std::vector<const GpuSpec*>& cards) {
  std::vector<std::string> ids;
  for (const GpuSpec* g : cards)
    ids.push_back(g->id);
  return ids;
}

bool starts_with_word(const std::string& name, const std::string& prefix) {
  return name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         name[prefix.size()] == ' ';
}

// Steps 1 and 2 of the rule: by name alone. Several candidates left: the caller reports them.
std::vector<const GpuSpec*> by_name(const Catalog& catalog, const std::string& device,
                                    std::string& basis) {
  for (const auto& g : catalog.gpus())
    if (g.name == device) {
      basis = "the device name equals the catalog name";
      return {&g};
    }
  std::vector<const GpuSpec*> prefixed, sxm;
  for (const auto& g : catalog.gpus())
    if (starts_with_word(g.name, device)) prefixed.push_back(&g);
  for (const GpuSpec* g : prefixed)
    if (g->name.find("SXM") != std::string::npos) sxm.push_back(g);
  if (prefixed.size() == 1) {
    basis = fmt::format("the only catalog name that starts with '{}'", device);
    return prefixed;
  }
  if (sxm.size() == 1) {
    basis = fmt::format("'{}' is how the SXM module reports itself ({} start with it)", device,
                        fmt::join(ids_of(prefixed), ", "));
    return sxm;
  }
  // The names nvidia-smi prints, as the card files list them ("NVIDIA H100 80GB HBM3").
  auto same = [&](const std::string& n) { return equal_ignoring_case(n, device); };
  std::vector<const GpuSpec*> smi;
  for (const auto& g : catalog.gpus())
    if (std::any_of(g.smi_names.begin(), g.smi_names.end(), same)) smi.push_back(&g);
  if (smi.size() == 1 && prefixed.empty()) {
    basis = fmt::format("'{}' is a name nvidia-smi prints for {} (its card file's smi_names)",
                        device, smi.front()->id);
    return smi;
  }
  return prefixed;
}

// Step 3: same compute capability, same driver-visible memory in MiB.
std::vector<const GpuSpec*> by_capability_and_memory(const Catalog& catalog,
                                                     const DeviceIdentity& d) {
  std::vector<const GpuSpec*> out;
  if (d.compute_capability.empty() || !d.memory) return out;
  const double mib = std::round(d.memory->value / kBytesPerMiB);
  for (const auto& g : catalog.gpus())
    if (g.compute_capability.value == d.compute_capability && g.visible_MiB.value &&
        *g.visible_MiB.value == mib)
      out.push_back(&g);
  return out;
}

std::string memory_remark(const GpuSpec& g, const DeviceIdentity& d) {
  if (!d.memory || !g.visible_MiB.value) return "";
  const double mib = std::round(d.memory->value / kBytesPerMiB);
  if (mib == *g.visible_MiB.value) return fmt::format("; memory {} MiB as in the card's data", mib);
  return fmt::format("; memory {} MiB where the card's data has {} MiB (ECC mode or driver)", mib,
                     *g.visible_MiB.value);
}

[[noreturn]] void no_card(const Catalog& catalog, const DeviceIdentity& d, std::string_view file,
                          const std::vector<const GpuSpec*>& candidates) {
  const std::string what = fmt::format(
      "{}: device '{}' (compute capability {}{})", file, d.name,
      d.compute_capability.empty() ? "unknown" : d.compute_capability,
      d.memory ? fmt::format(", {} MiB", std::round(d.memory->value / kBytesPerMiB)) : "");
  if (!candidates.empty())
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{} matches several catalog cards: {}; name the card with --gpu ID",
                                what, fmt::join(ids_of(candidates), ", ")),
                    "gpu");
  std::vector<std::string> same_cc;
  for (const auto& g : catalog.gpus())
    if (g.compute_capability.value == d.compute_capability) same_cc.push_back(g.id);
  throw UserError(ErrorCode::kUnknownName,
                  fmt::format("{} matches no catalog card{}; name it with --gpu ID, or add a card "
                              "file (--gpu FILE, data/gpus schema)",
                              what,
                              same_cc.empty() ? ""
                                              : fmt::format(" (cards of that compute capability: "
                                                            "{})",
                                                            fmt::join(same_cc, ", "))),
                  "gpu");
}

}  // namespace

CardMatch match_card(const Catalog& catalog, const DeviceIdentity& d, std::string_view file) {
  std::string basis;
  std::vector<const GpuSpec*> named = by_name(catalog, d.name, basis);
  if (named.size() > 1) no_card(catalog, d, file, named);
  if (named.size() == 1) {
    const GpuSpec& g = *named.front();
    if (!d.compute_capability.empty() && g.compute_capability.value &&
        *g.compute_capability.value != d.compute_capability)
      throw UserError(
          ErrorCode::kInvalidValue,
          fmt::format("{}: device '{}' reports compute capability {}, but its catalog "
                      "card {} has {}; name the card with --gpu ID",
                      file, d.name, d.compute_capability, g.id, *g.compute_capability.value),
          "gpu");
    return {&g, basis + memory_remark(g, d)};
  }
  std::vector<const GpuSpec*> same = by_capability_and_memory(catalog, d);
  if (same.size() != 1) no_card(catalog, d, file, same);
  return {same.front(),
          fmt::format("no catalog name matches '{}'; the only card of compute capability {} with "
                      "{} MiB of driver-visible memory",
                      d.name, d.compute_capability, *same.front()->visible_MiB.value)};
}

}  // namespace ftplan
