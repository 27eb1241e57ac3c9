#include "render/detect_text.hpp"

#include <fmt/format.h>

#include "render/json.hpp"
#include "render/table.hpp"

namespace ftplan {

namespace {

std::string number_or_na(const std::optional<double>& v, std::string_view unit) {
  return v ? fmt::format("{:g} {}", *v, unit) : std::string("n/a");
}

}  // namespace

void print_detected(std::ostream& out, const DetectedMachine& m) {
  out << fmt::format("Local machine ({}): {} GPU{}\n\n", m.file, m.device_count(),
                     m.device_count() == 1 ? "" : "s");
  TextTable t({"count>", "nvidia-smi name", "catalog card", "memory", "power limit"});
  for (const auto& g : m.groups) {
    const SmiDevice& d = g.devices.front();
    t.row({std::to_string(g.count()), g.smi_name, g.gpu ? g.gpu->id : "-",
           number_or_na(d.memory_MiB, "MiB"), number_or_na(d.power_limit_W, "W")});
  }
  t.print(out);
  out << "\n";
  for (const auto& g : m.groups) {
    if (g.gpu)
      out << fmt::format("{} -> {} ({}): {}\n", g.smi_name, g.gpu->id, g.gpu->name, g.basis);
    else
      out << fmt::format("{}: not in the catalog: {}\n", g.smi_name, g.problem);
  }
  if (m.groups.size() == 1 && m.groups.front().gpu)
    out << fmt::format("\n--gpu local plans for {} x {} (--gpus N for another count).\n",
                       m.groups.front().count(), m.groups.front().gpu->id);
  else if (m.groups.size() > 1)
    out << "\nDifferent kinds of card: --gpu local needs one kind; name the card with --gpu ID.\n";
}

nlohmann::json detected_json(const DetectedMachine& m) {
  nlohmann::json cards = nlohmann::json::array();
  for (const auto& g : m.groups) {
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : g.devices)
      devices.push_back(
          {{"memory_MiB", d.memory_MiB ? nlohmann::json(*d.memory_MiB) : nullptr},
           {"power_limit_W", d.power_limit_W ? nlohmann::json(*d.power_limit_W) : nullptr},
           {"bus_id", d.bus_id}});
    nlohmann::json c = {{"smi_name", g.smi_name},
                        {"count", g.count()},
                        {"gpu", g.gpu ? nlohmann::json(g.gpu->id) : nullptr},
                        {"devices", devices}};
    if (g.gpu) {
      c["basis"] = g.basis;
      c["card"] = gpu_json(*g.gpu);
    } else {
      c["problem"] = g.problem;
    }
    cards.push_back(std::move(c));
  }
  const bool single = m.groups.size() == 1 && m.groups.front().gpu;
  return {{"source", m.file},
          {"gpu_count", m.device_count()},
          {"cards", cards},
          {"local", single ? nlohmann::json({{"gpu", m.groups.front().gpu->id},
                                             {"gpus", m.groups.front().count()}})
                           : nlohmann::json(nullptr)}};
}

}  // namespace ftplan
