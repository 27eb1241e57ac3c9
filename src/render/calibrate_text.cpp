#include "render/calibrate_text.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/format.hpp"
#include "render/labels.hpp"
#include "render/reason_words.hpp"
#include "render/table.hpp"

namespace ftplan {

namespace {

// A signed percentage; |x| < 0.05 % prints as +0.0 (no "-0.0").
std::string percent(double fraction) {
  const double p = 100 * fraction;
  return fmt::format("{:+.1f}", std::fabs(p) < 0.05 ? 0.0 : p);
}

std::string micros(Seconds s) {
  return format_fixed(s.value * 1e6, 1);
}

std::string gb(const std::optional<Bytes>& b) {
  return b ? format_fixed(to_GB(*b), 2) : "-";
}

std::string error_cell(const std::optional<double>& e) {
  return e ? percent(*e) : "-";
}

}  // namespace

void print_bench_import_summary(std::ostream& out, const CardMatch& card, const CalibrationFit& fit,
                                const EfficiencyTable& defaults) {
  out << fmt::format("{} -> {} ({})\n\n", fit.table.calibration.device, card.gpu->id, card.basis);
  TextTable t({"class", "side", "size per call", "benchmarks>", "measured>", "default>"});
  for (const auto& r : fit.ranges) {
    const EfficiencyCurve& d = r.curve == Curve::kCompute ? defaults.of(r.op_class).compute
                                                          : defaults.of(r.op_class).memory;
    t.row({std::string(op_class_name(r.op_class)), std::string(curve_name(r.curve)),
           size_range_label(r), std::to_string(r.measurements.size()), format_fixed(r.fraction, 3),
           format_fixed(d.ranges[r.index].fraction, 3)});
  }
  t.print(out);
  out << "\nkept the defaults: ";
  for (std::size_t i = 0; i < fit.kept_defaults.size(); ++i)
    out << (i ? "; " : "") << fit.kept_defaults[i];
  out << "\n";
}

void print_link_import_summary(std::ostream& out, const CardMatch& card, const LinkFit& fit,
                               LinkLevel level, double default_fraction) {
  out << fmt::format(
      "{} -> {} ({})\n{}: bus bandwidth {} of {} nominal per direction -> achieved fraction "
      "{:.3f} (default {:.2f})\n",
      fit.header.device, card.gpu->id, card.basis, link_level_name(level),
      format_GBps(fit.busbw, 1), format_GBps(fit.nominal), fit.calibration.achieved_fraction,
      default_fraction);
}

void print_calibration_written(std::ostream& out, const std::string& path) {
  out << fmt::format(
      "\nwrote {}: use it with --calibration {}, or put it into "
      "$FTPLAN_CALIBRATION_DIR\n",
      path, path);
}

void print_bench_predictions(std::ostream& out, const CardMatch& card, const std::string& label,
                             const std::vector<BenchMeasurement>& measurements,
                             const std::vector<BenchPrediction>& predictions,
                             const std::vector<BenchErrorSummary>& summary) {
  out << fmt::format("{} ({})\ncalibration: {}\n\n", card.gpu->id, card.basis, label);
  TextTable t({"benchmark", "bound", "size>", "measured µs>", "default µs>", "err %>",
               "calibrated µs>", "err %>"});
  for (const auto& p : predictions) {
    const BenchMeasurement& m = *p.measurement;
    t.row(
        {m.bench->id + (m.excluded.empty() ? "" : " *"), std::string(curve_name(m.curve)),
         fmt::format("{} {}", format_fixed(m.size, 1), m.curve == Curve::kCompute ? "GFLOP" : "MB"),
         micros(m.measured()), micros(p.with_defaults.time()), percent(p.error_defaults),
         micros(p.with_calibration.time()), percent(p.error_calibration)});
  }
  t.print(out);
  out << "err % = (predicted − measured) / measured; * = not used by the calibration fit\n\n";
  TextTable s({"absolute error", "n>", "default median %>", "worst %>", "calibrated median %>",
               "worst %>"});
  for (const auto& e : summary)
    s.row({e.group, std::to_string(e.count), format_fixed(100 * e.median_abs_defaults, 1),
           format_fixed(100 * e.worst_abs_defaults, 1),
           format_fixed(100 * e.median_abs_calibration, 1),
           format_fixed(100 * e.worst_abs_calibration, 1)});
  s.print(out);
  for (const auto& m : measurements)
    if (!m.timed) out << fmt::format("not timed: {}: {}\n", m.bench->id, word_reason(m.excluded));
}

void print_step_checks(std::ostream& out, const StepResults& r, const CardMatch& card,
                       const EfficiencyTable& e, const std::vector<StepCheck>& checks,
                       const std::vector<StepErrorSummary>& summary) {
  out << fmt::format("measured steps on {} -> {} ({})\nefficiency: {}\n\n", r.device.name,
                     card.gpu->id, card.basis, efficiency_label(e));
  TextTable t({"row", "status", "step ms>", "ftplan ms>", "err %>", "alloc GB>", "ftplan GB>",
               "err %>", "reserved GB>", "ftplan GB>", "err %>", "ftplan verdict"});
  for (const auto& c : checks) {
    const StepRow& row = *c.row;
    t.row({row.id, row.status, row.ok() ? format_fixed(row.median.value * 1e3, 1) : "-",
           c.predicted ? format_fixed(c.step.value * 1e3, 1) : "-", error_cell(c.error_step),
           gb(row.peak_allocated), format_fixed(to_GB(c.allocated.peak), 2),
           error_cell(c.error_allocated), gb(row.peak_reserved),
           format_fixed(to_GB(c.reserved.peak), 2), error_cell(c.error_reserved),
           std::string(verdict_name(c.reserved.verdict))});
  }
  t.print(out);
  out << "err % = (ftplan − measured) / measured; GB = 10^9 B\n\n";
  TextTable s({"absolute error", "rows>", "median %>", "worst %>"});
  for (const auto& e2 : summary)
    s.row({e2.figure, std::to_string(e2.count), format_fixed(100 * e2.median_abs, 1),
           format_fixed(100 * e2.worst_abs, 1)});
  s.print(out);
  for (const auto& c : checks)
    if (!c.row->ok() && !c.row->reason.empty())
      out << fmt::format("{}: {}: {}\n", c.row->id, c.row->status, c.row->reason);
  out << fmt::format("measured with attention '{}' (ftplan: flash), LoRA from {}, adapters {}\n",
                     r.attention, r.lora_impl,
                     checks.empty() || checks.front().row->adapter_dtype.empty()
                         ? "?"
                         : checks.front().row->adapter_dtype);
  if (!r.note.empty()) out << "the results file says: " << r.note << "\n";
}

}  // namespace ftplan
