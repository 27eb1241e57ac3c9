#include "render/explain.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <set>

#include "core/error.hpp"
#include "core/format.hpp"
#include "render/json.hpp"
#include "render/table.hpp"

namespace ftplan {

using nlohmann::json;

namespace {

std::string group_of(const std::string& id) {
  return id.substr(0, id.find('.'));
}

// The recorded figures `d` was computed from (ids the trace does not hold are skipped).
std::vector<const Derivation*> inputs_of(const Trace& trace, const Derivation& d) {
  std::vector<const Derivation*> out;
  for (const auto& id : d.depends_on)
    if (const Derivation* from = trace.find(id)) out.push_back(from);
  return out;
}

json node_json(const Trace& trace, const Derivation& d, int depth) {
  json j = derivation_json(d);
  if (depth > 0) {
    json from = json::array();
    for (const Derivation* each : inputs_of(trace, d))
      from.push_back(node_json(trace, *each, depth - 1));
    j["from"] = from;
  }
  return j;
}

// `shown`: figures already printed in full; a second mention refers back to them.
void print_node(std::ostream& out, const Trace& trace, const Derivation& d, int depth,
                const std::string& indent, std::set<std::string>& shown) {
  if (!shown.insert(d.id).second) {
    out << fmt::format("{}{} = {}  — {} (shown above)\n", indent, d.id, format_figure_value(d),
                       d.label);
    return;
  }
  out << fmt::format("{}{} = {}  — {}\n", indent, d.id, format_figure_value(d), d.label);
  out << fmt::format("{}  formula: {}\n", indent, d.formula);
  if (!d.inputs.empty()) {
    std::size_t width = 0;
    for (const auto& [name, value] : d.inputs)
      width = std::max(width, display_width(name));
    out << indent << "  inputs:\n";
    for (const auto& [name, value] : d.inputs)
      out << fmt::format("{}    {:<{}}  {}\n", indent, name, width, value);
  }
  out << fmt::format("{}  source:  {}\n", indent, d.source);
  const auto from = inputs_of(trace, d);
  if (from.empty()) return;
  if (depth <= 0) {
    std::vector<std::string> ids;
    bool unseen = false;
    for (const Derivation* each : from) {
      const bool above = shown.count(each->id) > 0;
      ids.push_back(above ? each->id + " (above)" : each->id);
      unseen |= !above;
    }
    out << fmt::format("{}  from:    {}{}\n", indent, fmt::join(ids, ", "),
                       unseen ? " (--depth to follow)" : "");
    return;
  }
  out << indent << "  from:\n";
  for (const Derivation* each : from)
    print_node(out, trace, *each, depth - 1, indent + "    ", shown);
}

}  // namespace

std::vector<std::string> figure_groups(const Trace& trace) {
  std::vector<std::string> groups;
  for (const auto& d : trace.items()) {
    std::string g = group_of(d.id);
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  }
  return groups;
}

std::vector<const Derivation*> select_figures(const Trace& trace, std::string_view figure,
                                              std::string_view field) {
  if (const Derivation* d = trace.find(std::string(figure))) return {d};
  std::vector<const Derivation*> out;
  for (const auto& d : trace.items())
    if (d.id.size() > figure.size() && d.id.starts_with(figure) && d.id[figure.size()] == '.')
      out.push_back(&d);
  if (!out.empty()) return out;
  std::vector<std::string> valid = figure_groups(trace);
  for (const auto& d : trace.items())
    valid.push_back(d.id);
  throw_unknown_name("figure", field, figure, valid);
}

std::string format_figure_value(const Derivation& d) {
  const double v = d.value;
  if (d.unit == "s") return format_seconds(Seconds(v));
  if (d.unit == "FLOP") return format_si(v, "FLOP");
  if (d.unit == "parameters" || d.unit == "tokens/s" || d.unit == "steps")
    return group_digits(static_cast<std::int64_t>(std::llround(v))) + " " + d.unit;
  if (d.unit.empty())
    return fmt::format("{} ({} %)", format_number(v, 3), format_fixed(100 * v, 1));
  return format_number(v, std::abs(v) >= 100 ? 1 : 3) + " " + d.unit;
}

json explain_json(const Trace& trace, const std::vector<const Derivation*>& figures, int depth) {
  json out = json::array();
  for (const Derivation* d : figures)
    out.push_back(node_json(trace, *d, depth));
  return out;
}

void print_explain(std::ostream& out, const Trace& trace,
                   const std::vector<const Derivation*>& figures, int depth) {
  std::set<std::string> shown;
  for (const Derivation* d : figures) {
    if (!shown.empty()) out << "\n";
    print_node(out, trace, *d, depth, "", shown);
  }
}

json figure_list_json(const Trace& trace) {
  json out = json::array();
  for (const auto& d : trace.items())
    out.push_back({{"id", d.id}, {"label", d.label}, {"value", d.value}, {"unit", d.unit}});
  return out;
}

void print_figure_list(std::ostream& out, const Trace& trace, std::string_view step_not_timed) {
  TextTable t({"figure", "value>", "what"});
  std::string group;
  for (const auto& d : trace.items()) {
    if (!group.empty() && group_of(d.id) != group) t.separator();
    group = group_of(d.id);
    t.row({d.id, format_figure_value(d), d.label});
  }
  t.print(out);
  if (!step_not_timed.empty()) out << "\nno step time on this card: " << step_not_timed << "\n";
}

}  // namespace ftplan
