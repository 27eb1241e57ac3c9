#include "render/compare_text.hpp"

#include <fmt/format.h>

#include "core/format.hpp"
#include "render/reason_words.hpp"
#include "render/table.hpp"
#include "workload/objective.hpp"

namespace ftplan {

namespace {

std::string rate_cell(const Device& d, TensorPrecision p, bool& any_halved) {
  const auto& f = d.gpu->tensor_figure(p);
  auto r = d.rate(p);
  if (!r) return "unknown";
  std::string s = format_number(to_TFLOPS(*r), 1);
  if (f.sparse_halved) {
    any_halved = true;
    s += "*";
  }
  return s;
}

std::string ratio_cell(std::optional<FlopsPerSecond> a, std::optional<FlopsPerSecond> b) {
  if (!a || !b) return "-";
  return format_fixed(*a / *b, 2) + "×";
}

std::string support_cell(const FormatSupport& s, std::vector<std::string>& notes) {
  if (!s.supported || !s.caveat.empty()) {
    notes.push_back(s.supported ? s.caveat : s.reason);
    return fmt::format("{} [{}]", s.supported ? "yes" : "no", notes.size());
  }
  return "yes";
}

}  // namespace

void print_rates(std::ostream& out, const Device& a, const Device& b,
                 const TrainingFormats& formats) {
  const std::string ida = a.gpu->id, idb = b.gpu->id;
  out << fmt::format("{} (A) vs {} (B)\n\n", a.name(), b.name());
  bool halved = false;
  TextTable t({"dense tensor rate", ida + ">", idb + ">", "A / B>"});
  for (auto p : kAllTensorPrecisions) {
    const std::string unit = p == TensorPrecision::kINT8 ? "TOPS" : "TFLOPS";
    t.row({fmt::format("{} {}", tensor_precision_name(p), unit), rate_cell(a, p, halved),
           rate_cell(b, p, halved), ratio_cell(a.rate(p), b.rate(p))});
  }
  t.separator();
  t.row({"memory bandwidth GB/s", format_number(to_GBps(a.bandwidth), 1),
         format_number(to_GBps(b.bandwidth), 1), format_fixed(a.bandwidth / b.bandwidth, 2) + "×"});
  for (auto p : {TensorPrecision::kBF16, TensorPrecision::kFP8, TensorPrecision::kFP4}) {
    auto oa = a.ops_per_byte(p), ob = b.ops_per_byte(p);
    if (!oa && !ob) continue;
    t.row({fmt::format("ops:byte {} (FLOP/B)", tensor_precision_name(p)),
           oa ? format_fixed(*oa, 0) : "unknown", ob ? format_fixed(*ob, 0) : "unknown", ""});
  }
  t.print(out);
  if (halved)
    out << "* the vendor prints this rate with 2:4 structured sparsity; shown halved (dense). "
           "Sparse rates apply only to weights pruned to NVIDIA's 2:4 pattern; fine-tuning "
           "produces dense weights.\n";
  for (const Device* d : {&a, &b})
    for (auto p : {TensorPrecision::kBF16, TensorPrecision::kFP8})
      if (!d->rate(p)) out << "unknown: " << word_reason(d->missing_rate(p)) << "\n";

  std::vector<std::string> notes;
  out << "\n";
  TextTable f({"training format", ida, idb});
  for (const auto& name : compute_format_names()) {
    const ComputeFormat cf = parse_compute_format(name);
    const std::string ca = support_cell(formats.check(*a.gpu, cf), notes);
    const std::string cb = support_cell(formats.check(*b.gpu, cf), notes);
    f.row({formats.format(cf).name, ca, cb});
  }
  f.print(out);
  for (std::size_t i = 0; i < notes.size(); ++i)
    out << fmt::format("[{}] {}\n", i + 1, notes[i]);
}

void print_step_comparison(std::ostream& out, const Device& a, const Device& b,
                           const StepPair& sp) {
  const Workload& w = *sp.workload;
  const StepComparison& c = sp.comparison;
  out << fmt::format("\nstep time: {} · {} · {} tokens per micro-batch · {}\n\n",
                     w.model->arch.name, run_method_short(w), w.tokens_per_micro_batch(),
                     compute_format_name(w.precision));
  TextTable t(
      {"op class", a.gpu->id + " ms>", b.gpu->id + " ms>", "B / A>", "compute-bound on A %>"});
  for (auto cls : kAllOpClasses) {
    const std::size_t i = static_cast<std::size_t>(cls);
    const Seconds ta = sp.a.of(cls);
    if (ta.value <= 0) continue;
    t.row({std::string(op_class_name(cls)), format_fixed(ta.value * 1e3, 2),
           format_fixed(sp.b.of(cls).value * 1e3, 2), format_fixed(c.class_ratio[i], 2) + "×",
           format_fixed(100 * sp.a.class_compute_bound_seconds[i] / ta, 0)});
  }
  // The host's time (launches the GPU waits for, the trainer's fixed time) is outside the
  // cards' own work that the ratios compare.
  const double step_ratio = sp.a.step.value > 0 ? sp.b.step / sp.a.step : 0;
  if (sp.a.host_seconds.value > 0 || sp.b.host_seconds.value > 0)
    t.row({"host", format_fixed(sp.a.host_seconds.value * 1e3, 2),
           format_fixed(sp.b.host_seconds.value * 1e3, 2), "", ""});
  t.separator();
  t.row({"step", format_fixed(sp.a.step.value * 1e3, 2), format_fixed(sp.b.step.value * 1e3, 2),
         format_fixed(step_ratio, 2) + "×", format_fixed(100 * sp.a.compute_bound_share(), 0)});
  t.print(out);
  out << fmt::format("tokens/s: {} {:.0f}, {} {:.0f}; MFU {:.1f} % and {:.1f} %\n", a.gpu->id,
                     sp.a.tokens_per_second, b.gpu->id, sp.b.tokens_per_second, 100 * sp.a.mfu,
                     100 * sp.b.mfu);
  out << fmt::format(
      "\nOn the cards' own work A is {:.2f}× as fast: between the tensor-rate ratio {:.2f}× "
      "({:.2f}× at "
      "datasheet rates, times the efficiency each architecture reaches in measured runs) and the "
      "bandwidth ratio {:.2f}×. The ops that are compute-bound on A take {:.0f} % of that work and "
      "run {:.2f}× faster on A; the memory-bound rest runs {:.2f}× faster. The overall ratio is "
      "their time-weighted mean. With the host's time, which the GPU waits for on both cards, "
      "the step is {:.2f}× as fast.\n",
      c.overall, c.effective_tensor_ratio, c.tensor_rate_ratio, c.bandwidth_ratio,
      100 * c.compute_bound_share_a, c.compute_bound_ratio, c.memory_bound_ratio, step_ratio);
}

}  // namespace ftplan
