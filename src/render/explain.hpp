// ftplan explain: how a figure was derived, read from a Trace — its formula, inputs with values
// and units, source, and the figures it was computed from, followed to a given depth. Shared by
// the CLI (text and --json) and the HTTP API.
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "core/trace.hpp"

namespace ftplan {

// The figures `figure` names: the id itself ("memory.peak"), or every id under it as a group
// ("memory" → memory.*), in the order they were recorded. An unknown figure is a UserError
// (field `field`) naming the closest ids and groups.
std::vector<const Derivation*> select_figures(const Trace& trace, std::string_view figure,
                                              std::string_view field = "figure");

// The groups of a trace: "memory", "perf", ... (the part of each id before its first dot).
std::vector<std::string> figure_groups(const Trace& trace);

// A figure's value with its unit, as explain prints it: "23.41 GB", "188 ms", "0.401 (40.1 %)".
std::string format_figure_value(const Derivation& d);

// Each figure with its derivation and, `depth` levels down, the figures it was computed from
// ("from"; a figure not recorded in the trace is left out).
nlohmann::json explain_json(const Trace& trace, const std::vector<const Derivation*>& figures,
                            int depth);
void print_explain(std::ostream& out, const Trace& trace,
                   const std::vector<const Derivation*>& figures, int depth);

// Every figure of the trace: id, label, value, unit (explain --list). `step_not_timed`: why the
// run's step has no time on its card, when it has none.
nlohmann::json figure_list_json(const Trace& trace);
void print_figure_list(std::ostream& out, const Trace& trace, std::string_view step_not_timed = {});

}  // namespace ftplan
