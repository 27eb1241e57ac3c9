// ftplan compare: two cards side by side: dense tensor rates per precision, bandwidth, ops:byte,
// their ratios and the training formats each supports; with --model, also one workload's step
// time on both, per op class, and why the overall ratio lands where it does.
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "cli/perf_options.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "perf/step.hpp"
#include "render/perf_json.hpp"
#include "render/table.hpp"

namespace ftplan::cli {
namespace {

struct CompareOptions {
  std::vector<std::string> gpus;
  WorkloadOptions workload;
  CalibrationOptions calibration;
  bool json = false;
};

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
      if (!d->rate(p)) out << "unknown: " << d->missing_rate_reason(p) << "\n";

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
                     w.model->arch.name, method_name(w.method), w.tokens_per_micro_batch(),
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
  t.separator();
  t.row({"step", format_fixed(sp.a.step.value * 1e3, 2), format_fixed(sp.b.step.value * 1e3, 2),
         format_fixed(c.overall, 2) + "×", format_fixed(100 * sp.a.compute_bound_share(), 0)});
  t.print(out);
  out << fmt::format("tokens/s: {} {:.0f}, {} {:.0f}; MFU {:.1f} % and {:.1f} %\n", a.gpu->id,
                     sp.a.tokens_per_second, b.gpu->id, sp.b.tokens_per_second, 100 * sp.a.mfu,
                     100 * sp.b.mfu);
  out << fmt::format(
      "\nA is {:.2f}× as fast overall: between the tensor-rate ratio {:.2f}× and the bandwidth "
      "ratio {:.2f}×. The ops that are compute-bound on A take {:.0f} % of its step and run "
      "{:.2f}× faster on A; the memory-bound rest runs {:.2f}× faster. The overall ratio is "
      "their time-weighted mean.\n",
      c.overall, c.tensor_rate_ratio, c.bandwidth_ratio, 100 * c.compute_bound_share_a,
      c.compute_bound_ratio, c.memory_bound_ratio);
}

const bool registered = register_command(
    {"compare",
     "Two cards side by side: dense rates, bandwidth, ops:byte, ratios, training formats; with "
     "--model, one run's step time on both",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<CompareOptions>();
       app.add_option("--gpu", o->gpus, "A GPU id or card file; give exactly two: --gpu A --gpu B")
           ->required();
       o->workload.add_to(app, true, false);
       o->calibration.add_to(app);
       app.add_flag("--json", o->json, "Print JSON");
       return [&ctx, o] {
         if (o->gpus.size() != 2)
           throw UserError(ErrorCode::kInvalidValue,
                           fmt::format("compare takes exactly two cards (--gpu A --gpu B), got {}",
                                       o->gpus.size()),
                           "gpu");
         const GpuSpec& ga = ctx.resolve_gpu(o->gpus[0]);
         const GpuSpec& gb = ctx.resolve_gpu(o->gpus[1]);
         const Device a = make_device(ga), b = make_device(gb);
         const TrainingFormats formats = load_training_formats(ctx.catalog());
         std::optional<StepPair> step;
         std::optional<Workload> w;
         std::optional<StepOps> ops;
         if (!o->workload.model.empty() || !o->workload.method.empty()) {
           if (o->workload.model.empty() || o->workload.method.empty())
             throw UserError(ErrorCode::kMissingKey,
                             "a step comparison needs both --model and --method",
                             o->workload.model.empty() ? "model" : "method");
           w = o->workload.build(ctx);
           require_training_format(ga, w->precision, formats);
           require_training_format(gb, w->precision, formats);
           ops = build_step_ops(*w);
           const EfficiencyTable ea = o->calibration.for_gpu(ctx, ga, false);
           const EfficiencyTable eb = o->calibration.for_gpu(ctx, gb, false);
           StepPair sp{&*w, &*ops, estimate_step(*ops, a, ea), estimate_step(*ops, b, eb), {}};
           for (const StepEstimate* s : {&sp.a, &sp.b})
             if (!s->feasible)
               throw UserError(ErrorCode::kUnsupported,
                               fmt::format("cannot compare step times: {}", s->reason), "gpu");
           sp.comparison = compare_steps(*ops, a, ea, b, eb);
           step = std::move(sp);
         }
         if (o->json) {
           ctx.out << compare_json(a, b, formats, step).dump(2) << "\n";
           return;
         }
         print_rates(ctx.out, a, b, formats);
         if (step) print_step_comparison(ctx.out, a, b, *step);
       };
     },
     45});

}  // namespace
}  // namespace ftplan::cli
