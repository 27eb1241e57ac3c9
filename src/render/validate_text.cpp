#include "render/validate_text.hpp"

#include <fmt/format.h>

#include <string>

#include "core/format.hpp"
#include "render/reason_words.hpp"
#include "render/table.hpp"
#include "workload/objective.hpp"
#include "workload/roles.hpp"

namespace ftplan {

namespace {

// The settings of a run in a few words.
std::string settings(const MeasuredRun& run) {
  const Workload& w = run.workload;
  std::string ac = fmt::format("AC-{}", recompute_name(w.recompute));
  if (w.recompute == Recompute::kNone) ac = "no-AC";
  if (w.recompute == Recompute::kFull && w.recompute_layers > 0 &&
      w.recompute_layers < w.model->arch.layers)
    ac = fmt::format("AC-{}/{}", w.recompute_layers, w.model->arch.layers);
  std::string s = fmt::format("{} {}×{}", ac, w.seq, w.micro_batch);
  if (w.options.compile) s += " compile";
  if (w.options.chunked_loss) s += " chunked";
  if (w.options.optimizer_in_backward) s += " opt-in-bwd";
  if (w.options.offload_activations) s += " act-offload";
  if (w.options.offload_parameters) s += " cpu-offload";
  if (w.options.quant_keeps_input) s += " q-keeps-in";
  if (w.options.sync_each_batch) s += " sync-each";
  if (w.options.non_reentrant) s += " non-reentrant";
  if (w.options.optimizer_impl)
    s += fmt::format(" opt-{}", optimizer_impl_name(*w.options.optimizer_impl));
  if (w.options.experts_impl && w.model->arch.is_moe())
    s += fmt::format(" experts-{}", experts_impl_name(*w.options.experts_impl));
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
  // Sources publish GB, GiB, MB or MiB: the figures are in the source's unit, named in a column of
  // its own.
  TextTable t({"run", "model", "method", "settings", "cards", "peak", "measured>", "predicted>",
               "unit", "error>"});
  for (const auto& row : r.rows) {
    if (row.skipped) continue;
    const MeasuredRun& run = *row.run;
    const double unit = bytes_per_memory_unit(run.unit);
    t.row({run.id, run.model, method_cell(run), settings(run),
           fmt::format("{}× {}", run.placement.count, run.gpu),
           std::string(measured_peak_name(run.peak)) + (run.peak_stated ? "" : "?"),
           format_fixed(*run.measured, 2), format_fixed(row.predicted.value / unit, 2), run.unit,
           format_signed_share(row.error)});
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
  out << "\nper software stack\n";
  TextTable k({"stack", "runs>", "median>", "worst>", "worst run"});
  for (const auto& e : r.per_stack)
    k.row({e.source, std::to_string(e.rows), fmt::format("{:.1f} %", 100 * e.median_abs_error),
           fmt::format("{:.1f} %", 100 * e.worst_abs_error), e.worst_id});
  k.print(out);
  if (r.spread.rows > 0)
    out << fmt::format(
        "\nthe model's error on the {} rows of the {} none of its figures was taken from: "
        "median |error| {:.1f} %, 10th to 90th percentile {:+.1f} % to {:+.1f} %; a peak's range "
        "is where that spread puts the measured figure, widened for a reserved peak to the "
        "allocator's reserve at the 10th to 90th percentile of its measured share\n",
        r.spread.rows,
        r.spread.sources == 1 ? std::string("source") : fmt::format("{} sources", r.spread.sources),
        100 * r.spread.median_abs_error, 100 * r.spread.low, 100 * r.spread.high);
  if (r.ranged > 0)
    out << fmt::format("peaks measured inside their predicted range: {} of {}\n", r.inside_range,
                       r.ranged);
  if (r.spread.rows > 0)
    out << fmt::format(
        "  of the {} rows above, with the spread drawn from the other sources' rows only "
        "(leave-one-source-out): {} inside\n",
        r.spread.rows, r.spread.loso_inside);
}

}  // namespace ftplan

namespace ftplan {

void print_throughput_validation(std::ostream& out, const ThroughputReport& r) {
  out << "\nStep model vs published throughput (tokens per second per card)\n"
         "error = (predicted - measured) / measured; 'loso': predicted with constants fitted "
         "without the run's source\n\n";
  TextTable t({"run", "stack", "model", "method", "cards", "measured>", "predicted>", "error>",
               "loso pred.>", "loso err.>"});
  for (const auto& row : r.rows) {
    if (!row.compared) continue;
    const MeasuredRun& run = *row.run;
    t.row({run.id, run.stack ? run.stack->name : "?", run.model,
           std::string(method_name(run.workload.method)),
           fmt::format("{}× {}", run.placement.count, run.gpu), fmt::format("{:.0f}", row.measured),
           fmt::format("{:.0f}", row.predicted), format_signed_share(row.error),
           fmt::format("{:.0f}", row.loso_predicted), format_signed_share(row.loso_error)});
  }
  t.print(out);
  int skipped = 0;
  for (const auto& row : r.rows)
    skipped += row.compared ? 0 : 1;
  if (skipped > 0) {
    out << fmt::format("\nnot compared ({}): settings the step model does not cover\n", skipped);
    for (const auto& row : r.rows)
      if (!row.compared) out << fmt::format("  {:5} {}\n", row.run->id, row.reason);
  }
  out << fmt::format(
      "\nsummary: {} runs from {} sources; median |error| {:.1f} % with the table's constants, "
      "{:.1f} % leave-one-source-out ({:.0f} % of runs within 25 %; 10th-90th percentile of the "
      "error {:+.0f} % to {:+.0f} %)\n",
      r.compared, r.sources, 100 * r.median_abs_error, 100 * r.loso_median_abs_error,
      100 * r.loso_within_25, 100 * r.loso_error_p10, 100 * r.loso_error_p90);
  if (!r.per_source.empty()) {
    out << "\nper source: absolute error\n";
    TextTable s({"source", "runs>", "median>", "worst>", "worst run", "loso median>"});
    for (const auto& x : r.per_source)
      s.row({x.source, std::to_string(x.runs), format_share(x.median_abs_error),
             format_share(x.worst_abs_error), x.worst_id, format_share(x.loso_median_abs_error)});
    s.print(out);
  }
  out << "constants fitted on every run:";
  for (const auto& [arch, scale] : r.fitted.architecture_scale)
    out << fmt::format(" {} ×{:.3f}", arch, scale);
  out << fmt::format(", launch {:.1f} µs, {:.1f} ms per micro-batch\n", r.fitted.launch_us,
                     r.fitted.micro_batch_ms);
}

nlohmann::json throughput_json(const ThroughputReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows) {
    nlohmann::json j = {
        {"id", row.run->id}, {"source", row.run->source}, {"compared", row.compared}};
    if (row.run->stack) j["stack"] = row.run->stack->name;
    if (row.compared) {
      j["measured_tokens_per_second_per_gpu"] = row.measured;
      j["predicted_tokens_per_second_per_gpu"] = row.predicted;
      j["error"] = row.error;
      j["loso_predicted_tokens_per_second_per_gpu"] = row.loso_predicted;
      j["loso_error"] = row.loso_error;
    } else {
      j["reason"] = row.reason;
    }
    rows.push_back(std::move(j));
  }
  nlohmann::json fitted = {{"launch_us", r.fitted.launch_us},
                           {"micro_batch_ms", r.fitted.micro_batch_ms}};
  for (const auto& [arch, scale] : r.fitted.architecture_scale)
    fitted["architecture_scale"][arch] = scale;
  nlohmann::json per_source = nlohmann::json::array();
  for (const auto& x : r.per_source)
    per_source.push_back({{"source", x.source},
                          {"rows", x.runs},
                          {"median_abs_error", x.median_abs_error},
                          {"worst_abs_error", x.worst_abs_error},
                          {"worst_id", x.worst_id},
                          {"loso_median_abs_error", x.loso_median_abs_error}});
  return {{"rows", r.compared},
          {"per_source", per_source},
          {"sources", r.sources},
          {"median_abs_error", r.median_abs_error},
          {"loso_median_abs_error", r.loso_median_abs_error},
          {"loso_within_25_percent", r.loso_within_25},
          {"loso_error_p10", r.loso_error_p10},
          {"loso_error_p90", r.loso_error_p90},
          {"fitted", fitted},
          {"runs", rows}};
}

namespace {

std::string online_reason(const OnlineRow& row) {
  return row.no_step.empty() ? row.reason : "the model finds no step: " + word_reason(row.no_step);
}

}  // namespace

void print_online_validation(std::ostream& out, const OnlineReport& r) {
  if (r.rows.empty()) return;
  out << "\nOnline runs (GRPO, PPO, RLOO) vs published step times (seconds per step)\n"
         "the whole step: rollout, weight sync, scoring and training, as `ftplan scale` times "
         "it; no constant fitted to these runs\n\n";
  TextTable t({"run", "model", "method", "cards", "measured>", "predicted>", "error>", "rollout>",
               "scoring>", "training>", "slowest"});
  for (const auto& row : r.rows) {
    if (!row.compared) continue;
    const MeasuredRun& run = *row.run;
    const RlStep& s = row.step;
    t.row({run.id, run.model, run_method_short(run.workload),
           fmt::format("{}× {}", run.placement.count, run.gpu), fmt::format("{:.1f}", row.measured),
           fmt::format("{:.1f}", row.predicted), format_signed_share(row.error),
           fmt::format("{:.1f}", s.rollout.total().value), fmt::format("{:.1f}", s.scoring.value),
           fmt::format("{:.1f}", s.training.value), std::string(rl_part_name(s.bottleneck))});
  }
  t.print(out);
  for (const auto& row : r.rows)
    if (!row.compared)
      out << fmt::format("  not compared: {} {}\n", row.run->id, online_reason(row));
  if (r.compared > 0)
    out << fmt::format(
        "summary: {} runs from {} source(s); median |error| {:.1f} % (median error {:+.1f} %), "
        "worst {:.1f} % ({})\n",
        r.compared, r.sources, 100 * r.median_abs_error, 100 * r.median_error,
        100 * r.worst_abs_error, r.worst_id);
}

nlohmann::json online_json(const OnlineReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows) {
    nlohmann::json j = {
        {"id", row.run->id}, {"source", row.run->source}, {"compared", row.compared}};
    if (row.compared) {
      const RlStep& s = row.step;
      j["measured_step_seconds"] = row.measured;
      j["predicted_step_seconds"] = row.predicted;
      j["error"] = row.error;
      j["parts_seconds"] = {{"rollout", s.rollout.total().value},
                            {"weight_sync", (s.weight_sync + s.sleep_wake).value},
                            {"scoring", s.scoring.value},
                            {"training", s.training.value}};
      j["bottleneck"] = rl_part_name(s.bottleneck);
    } else {
      j["reason"] = online_reason(row);
    }
    rows.push_back(std::move(j));
  }
  return {{"rows", r.compared},
          {"sources", r.sources},
          {"median_abs_error", r.median_abs_error},
          {"median_error", r.median_error},
          {"worst_abs_error", r.worst_abs_error},
          {"worst_id", r.worst_id},
          {"runs", rows}};
}

}  // namespace ftplan
