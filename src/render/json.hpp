// JSON renderings shared by the CLI's --json output and the HTTP API (same shapes in both).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>

#include "catalog/catalog.hpp"
#include "core/trace.hpp"
#include "memory/fit.hpp"
#include "memory/measured_runs.hpp"
#include "memory/solve.hpp"
#include "memory/suggest.hpp"
#include "workload/workload.hpp"

namespace ftplan {

nlohmann::json gpu_json(const GpuSpec& g);
nlohmann::json model_summary_json(const Model& m);
nlohmann::json params_json(const Model& m);
nlohmann::json workload_json(const Workload& w);
nlohmann::json placement_json(const Placement& p);
// {"tp", "pp", "vpp", "cp", "ep", "dp", "shard", "shard_group"} of a layout on `cards` cards;
// shard_group: the data-parallel cards the sharding splits the states over (1: replicated).
nlohmann::json layout_json(const Layout& l, int cards, Sharding sharding, int shard_group);
// `memory_GB` per card (GB = 1e9 B) with the breakdown, `params`, `verdict`, `reason`, and
// `suggestions` (how to make it fit; empty when it does).
nlohmann::json fit_json(const Workload& w, const Placement& p, const MemoryEstimate& m,
                        const std::vector<Suggestion>& suggestions = {});
// One suggestion: kind, change (API keys and values), reason, memory_GB (peak, headroom,
// capacity), verdict, fits.
nlohmann::json suggestion_json(const Suggestion& s);
nlohmann::json trace_json(const Trace& t);
// One derivation: id, label, value, unit, formula, inputs, source, depends_on.
nlohmann::json derivation_json(const Derivation& d);
// The step memory and overheads of one card (memory_GB.step, memory_GB.overheads).
nlohmann::json runtime_memory_json(const MemoryEstimate& m, PeakKind kind);
// The memory of one card in GB (1e9 B), as fit and max print it: capacity, model states, free,
// activations, overhead, peak, headroom, the breakdown, and the runtime memory above.
// The first and last pipeline stage's card (MemoryEstimate::stages): layers, states on the card,
// activations and peak in GB; empty without a pipeline.
nlohmann::json memory_stages_json(const MemoryEstimate& m);
nlohmann::json memory_gb_json(const MemoryEstimate& m, PeakKind kind);
// The same figures as exact byte counts (memory_bytes), without the runtime detail: capacity,
// model states, states on the card, free, activations, overhead, peak, headroom, the breakdown
// and a colocated rollout engine. GiB and MiB (nvidia-smi's unit) are converted from these, not
// from the GB figures rounded to 3 decimals.
nlohmann::json memory_bytes_json(const MemoryEstimate& m);
// A byte count as a whole number of bytes for the JSON (`*_bytes` keys).
std::int64_t whole_bytes(Bytes b);
// ftplan validate: every run (predicted or skipped, with the reason), the summaries.
nlohmann::json validation_json(const ValidationReport& r);
// ftplan max: the solved value, the binding constraint, and the estimates either side.
nlohmann::json solve_json(const Workload& w, const Placement& p, const SolveResult& r);

// Round to a fixed number of decimals for output (keeps JSON readable and stable).
double round_to(double v, int decimals);

}  // namespace ftplan
