#include "render/step_text.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/format.hpp"
#include "render/labels.hpp"
#include "render/table.hpp"

namespace ftplan {

namespace {

constexpr std::size_t kTopOps = 15;

std::string ms(Seconds s) {
  return format_fixed(s.value * 1e3, 2);
}
std::string percent(double share) {
  return format_fixed(100 * share, 1);
}

void print_classes(std::ostream& out, const StepEstimate& s) {
  TextTable t({"op class", "time ms>", "share %>", "compute-bound %>"});
  for (auto c : kAllOpClasses) {
    const Seconds time = s.of(c);
    if (time.value <= 0) continue;
    const Seconds cb = s.class_compute_bound_seconds[static_cast<std::size_t>(c)];
    t.row({std::string(op_class_name(c)), ms(time), percent(time / s.step), percent(cb / time)});
  }
  // The framework's fixed time per micro-batch belongs to no op class.
  Seconds fixed = s.step;
  for (auto c : kAllOpClasses)
    fixed -= s.of(c);
  if (fixed.value > 0) t.row({"framework", ms(fixed), percent(fixed / s.step), "0.0"});
  t.separator();
  t.row({"step", ms(s.step), "100.0", percent(s.compute_bound_share())});
  t.print(out);
}

void print_ops(std::ostream& out, const StepOps& ops, const std::vector<OpTiming>& timings,
               bool all) {
  struct Row {
    const Op* op;
    OpTiming t;
    Seconds total;
  };
  std::vector<Row> rows;
  for (std::size_t i = 0; i < ops.ops.size(); ++i) {
    const Op& op = ops.ops[i];
    rows.push_back({&op, timings[i], timings[i].time() * static_cast<double>(op.count)});
  }
  if (!all)
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& a, const Row& b) { return a.total > b.total; });
  const std::size_t shown = all ? rows.size() : std::min(kTopOps, rows.size());
  out << (all ? fmt::format("\nall {} ops (per micro-batch; the optimizer per step)\n", rows.size())
              : fmt::format("\nthe {} slowest of {} ops (per micro-batch; --all-ops lists all)\n",
                            shown, rows.size()));
  TextTable t(
      {"op", "class", "precision", "count>", "GFLOP>", "GB>", "FLOP/B>", "bound", "time ms>"});
  for (std::size_t i = 0; i < shown; ++i) {
    const Op& op = *rows[i].op;
    t.row({op.name, std::string(op_class_name(op.op_class)),
           op.unit == ComputeUnit::kTensor ? std::string(tensor_precision_name(op.precision))
                                           : "fp32 vec",
           std::to_string(op.count), format_fixed(op.total_flops().value / 1e9, 1),
           format_fixed(to_GB(op.total_bytes()), 3), format_fixed(op.intensity(), 1),
           rows[i].t.compute_bound() ? "compute" : "memory",
           format_fixed(rows[i].total.value * 1e3, 3)});
  }
  t.print(out);
}

}  // namespace

void print_step(std::ostream& out, const Workload& w, const Device& d, const StepOps& ops,
                const StepEstimate& s, const EfficiencyTable& e,
                const std::vector<OpTiming>& timings, bool all_ops) {
  out << fmt::format("{} · {}\n", run_title(w), compute_format_name(w.precision));
  out << fmt::format(
      "on {} · {} tokens per micro-batch (seq {} × {}), grad-accum {}, recompute {}, attention "
      "{}{}\n",
      d.name(), ops.tokens_per_micro_batch, w.seq, w.sequences_per_micro_batch(), w.grad_accum,
      recompute_label(w), attention_name(w.attention),
      w.stack ? fmt::format(", stack {}", w.stack->name) : std::string());
  if (w.lengths.varies())
    out << fmt::format(
        "lengths: {} real tokens per sequence on average, the longest {} (the memory peak); {}; "
        "tokens per second count real tokens, not padding\n",
        format_fixed(w.tokens_per_sequence(), 1), w.seq,
        w.lengths.packing        ? (w.lengths.padding_free
                                        ? "packed into rows of seq tokens, attention within each sample"
                                        : "packed into rows of seq tokens, attention across the row")
        : w.lengths.padding_free ? "concatenated without padding, attention within each sample"
                                 : "each micro-batch padded to its longest sequence");
  out << "efficiency: " << efficiency_label(e) << "\n\n";
  print_classes(out, s);
  out << "\n";
  TextTable t({"figure", "value>", ""});
  t.row({"forward", ms(s.forward) + " ms", "per micro-batch"});
  t.row({"backward", ms(s.backward) + " ms",
         s.recompute.value > 0 ? fmt::format("incl. recompute {} ms", ms(s.recompute))
                               : "per micro-batch"});
  t.row({"host", ms(s.host) + " ms",
         "per micro-batch: launch waits (inside forward and backward) and fixed framework time"});
  t.row({"optimizer update", ms(s.optimizer) + " ms", "per step"});
  t.row({"step", ms(s.step) + " ms", fmt::format("{} × micro-batch + update", ops.grad_accum)});
  t.row({"step range", fmt::format("{}–{} ms", ms(s.step_low), ms(s.step_high)),
         "how far measured steps scatter around the model (10th-90th percentile)"});
  t.row({"tokens per second", format_fixed(s.tokens_per_second, 0),
         fmt::format("range {}–{}", format_fixed(s.tokens_per_second_low, 0),
                     format_fixed(s.tokens_per_second_high, 0))});
  t.row({"MFU", percent(s.mfu) + " %",
         fmt::format("model FLOPs / (step time × {} dense {})", format_TFLOPS(s.peak),
                     tensor_precision_name(ops.mfu_precision))});
  t.row({"compute-bound time", percent(s.compute_bound_share()) + " %", "of the step"});
  t.print(out);
  print_ops(out, ops, timings, all_ops);
  out << "\nModel FLOPs: 6·N_active per token for a full fine-tune; for LoRA/QLoRA forward + "
         "input gradient (4·N_active) + the adapters. Recomputation and attention scores are "
         "hardware FLOPs, not model FLOPs.\n";
  if (d.mig) out << "note: " << d.assumption << "\n";
}

}  // namespace ftplan
