#include "render/validate_text.hpp"

#include <fmt/format.h>

#include "core/format.hpp"
#include "render/table.hpp"
#include "workload/roles.hpp"

namespace ftplan {

namespace {

std::string percent(double v) {
  return fmt::format("{:+.1f} %", 100 * v);
}

// The settings of a run in a few words.
std::string settings(const MeasuredRun& run) {
  const Workload& w = run.workload;
  std::string s = fmt::format("{} {}×{}",
                              recompute_name(w.recompute) == std::string_view("none")
                                  ? "no-AC"
                                  : fmt::format("AC-{}", recompute_name(w.recompute)),
                              w.seq, w.micro_batch);
  if (w.options.compile) s += " compile";
  if (w.options.chunked_loss) s += " chunked";
  if (w.options.optimizer_in_backward) s += " opt-in-bwd";
  if (w.options.offload_activations) s += " act-offload";
  if (w.options.offload_parameters) s += " cpu-offload";
  return s;
}

std::string method_cell(const MeasuredRun& run) {
  const Workload& w = run.workload;
  if (method_traits(w.method).trains_base)
    return fmt::format("full {}", optimizer_name(w.optimizer));
  return fmt::format("{} r{} {}", method_name(w.method), w.lora.rank,
                     projection_set_name(w.lora.targets));
}

}  // namespace

void print_validation(std::ostream& out, const std::string& file, const ValidationReport& r) {
  out << fmt::format(
      "Memory model vs published measurements ({})\n"
      "per card; error = (predicted - measured) / measured, in the source's kind of peak and "
      "unit\n\n",
      file);
  TextTable t(
      {"run", "model", "method", "settings", "cards", "peak", "measured>", "predicted>", "error>"});
  for (const auto& row : r.rows) {
    if (row.skipped) continue;
    const MeasuredRun& run = *row.run;
    const double unit = run.unit == "GiB" ? kBytesPerGiB : kBytesPerGB;
    t.row({run.id, run.model, method_cell(run), settings(run),
           fmt::format("{}× {}", run.placement.count, run.gpu),
           std::string(measured_peak_name(run.peak)) + (run.peak_stated ? "" : "?"),
           fmt::format("{:.2f} {}", *run.measured, run.unit),
           fmt::format("{:.2f} {}", row.predicted.value / unit, run.unit), percent(row.error)});
  }
  t.print(out);
  bool assumed = false;
  for (const auto& row : r.rows)
    assumed |= !row.skipped && !row.run->peak_stated;
  if (assumed)
    out << "(peak?: the source does not say which peak; the run's note gives the assumption)\n";
  if (r.skipped > 0) {
    out << fmt::format("\nskipped ({}): settings the memory model does not cover\n", r.skipped);
    for (const auto& row : r.rows)
      if (row.skipped)
        out << fmt::format("  {:<5} {}: {}\n", row.run->id, row.run->source, row.reason);
  }
  out << "\nsummary: absolute error\n";
  TextTable s({"source", "runs>", "median>", "worst>", "worst run"});
  for (const auto& e : r.per_source)
    s.row({e.source, std::to_string(e.rows), fmt::format("{:.1f} %", 100 * e.median_abs_error),
           fmt::format("{:.1f} %", 100 * e.worst_abs_error), e.worst_id});
  s.separator();
  s.row({"all", std::to_string(r.overall.rows),
         fmt::format("{:.1f} %", 100 * r.overall.median_abs_error),
         fmt::format("{:.1f} %", 100 * r.overall.worst_abs_error), r.overall.worst_id});
  s.print(out);
}

}  // namespace ftplan
