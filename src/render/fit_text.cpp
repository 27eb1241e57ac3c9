#include "render/fit_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "core/format.hpp"
#include "parallel/layout.hpp"
#include "render/labels.hpp"
#include "render/reason_words.hpp"
#include "render/table.hpp"
#include "workload/objective.hpp"

namespace ftplan {

namespace {

// ", within groups of 8 cards, 4 groups" under hybrid sharding.
std::string hybrid_groups(const Placement& p) {
  if (p.sharding != Sharding::kHsdp || p.shard_group <= 0) return {};
  const int dp = std::max(1, p.layout.dp(p.count));
  return fmt::format(" (states split within groups of {} cards, replicated over {} groups)",
                     p.shard_group * p.layout.model_parallel(), dp / p.shard_group);
}

// The settings the activation model reads, in one line.
std::string step_settings(const Workload& w) {
  std::string out =
      fmt::format("seq {} × micro-batch {}{}, recompute {}, {} attention", w.seq, w.micro_batch,
                  w.sequences_per_micro_batch() != w.micro_batch
                      ? fmt::format(" ({} sequences)", w.sequences_per_micro_batch())
                      : std::string(),
                  recompute_label(w), attention_name(w.attention));
  const TrainingOptions& o = w.options;
  if (w.grad_accum > 1) out += fmt::format(", grad-accum {}", w.grad_accum);
  if (o.compile) out += ", compiled";
  if (o.pure_bf16) out += ", pure BF16";
  if (o.quant_keeps_input) out += ", quantized layers keep their inputs";
  if (o.sync_each_batch) out += ", gradients synced every micro-batch";
  if (o.non_reentrant) out += ", non-reentrant checkpoints";
  if (o.chunked_loss)
    out += fmt::format(", chunked loss ({})", o.loss_chunks);
  else if (o.loss != LossKind::kFp32Upcast)
    out += fmt::format(", {} loss", loss_kind_name(o.loss));
  if (o.optimizer_in_backward) out += ", optimizer in backward";
  if (o.optimizer_impl)
    out += fmt::format(", {} optimizer update", optimizer_impl_name(*o.optimizer_impl));
  if (o.experts_impl && w.model->arch.is_moe())
    out += fmt::format(", experts {}", experts_impl_name(*o.experts_impl));
  if (o.offload_optimizer) out += ", optimizer offloaded";
  if (o.offload_parameters) out += ", parameters offloaded";
  if (o.offload_activations) out += ", activations offloaded";
  return out + fmt::format(", peak {}", peak_kind_name(w.peak));
}

// `text` in lines of at most `width` bytes (the reasons' words are ASCII in English), the first
// after `first`, the others after `indent`.
std::string wrapped(const std::string& text, const std::string& first, const std::string& indent,
                    std::size_t width = 96) {
  std::string out = first;
  std::size_t line = first.size();
  bool empty = true;  // no word on the line yet
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (!empty && line + 1 + word.size() > width) {
      out += "\n" + indent;
      line = indent.size();
      empty = true;
    }
    if (!empty) {
      out += ' ';
      ++line;
    }
    out += word;
    line += word.size();
    empty = false;
  }
  return out + "\n";
}

}  // namespace

void print_fit(std::ostream& out, const Workload& w, const Placement& p,
               const TrainedParams& trained, const MemoryEstimate& m,
               const std::vector<Suggestion>& suggestions) {
  const ParamCount total = w.model->params.total;
  out << run_title(w) << "\n";
  out << fmt::format(
      "on {} × {}{}{}\n", p.count, p.gpu->name,
      p.count > 1 ? fmt::format(", {} sharding{}", sharding_name(p.sharding), hybrid_groups(p))
                  : "",
      p.mig ? fmt::format(", one MIG instance {}", p.mig->name) : "");
  const Layout& l = p.layout;
  if (!l.trivial())
    out << fmt::format(
        "layout: {}; the figures are one card of stage {} (of {}), the one with the higher peak\n",
        layout_degrees(l, p.count), m.peak_stage, l.pp);
  out << step_settings(w) << "\n\n";
  out << fmt::format("parameters  {} total ({}), {} trainable ({}, {:.2f} %)\n\n",
                     group_digits(total), format_count_short(static_cast<double>(total)),
                     group_digits(trained.count),
                     format_count_short(static_cast<double>(trained.count)),
                     100.0 * static_cast<double>(trained.count) / static_cast<double>(total));
  TextTable t({"memory per card", "GB>", "GiB>"});
  auto row = [&](const std::string& name, Bytes b) {
    t.row({name, format_fixed(to_GB(b), 2), format_fixed(to_GiB(b), 2)});
  };
  auto sub = [&](const std::string& name, Bytes b) {
    if (b.value != 0) row("  " + name, b);
  };
  const ModelStates& s = m.states;
  if (s.frozen_weights.value > 0) row("frozen base weights", s.frozen_weights);
  if (s.quantization_constants.value > 0) row("quantization constants", s.quantization_constants);
  row("trained weights (16-bit)", s.trained_weights);
  row("gradients", s.gradients);
  if (s.master_weights.value > 0) row("master weights (FP32)", s.master_weights);
  row("optimizer states", s.optimizer_states);
  if (s.reference_weights.value > 0)
    row(frozen_model_copies(w) > 1 ? "reference and reward model weights (16-bit)"
                                   : "reference model weights (16-bit)",
        s.reference_weights);
  t.separator();
  row("model states", s.total());
  const RuntimeMemory& r = m.runtime;
  if (m.states_on_card != s.total()) {
    sub("pure BF16: no FP32 master, BF16 states", -r.states.pure_bf16_saving);
    sub("FSDP2 FP32 parameters: no resident 16-bit copy", -r.states.fp32_parameter_shift);
    sub("FSDP2 FP32 parameters: FP32 gradient shards", r.states.fp32_parameter_shift);
    sub("offloaded to host memory", -r.states.host);
    sub("paged, host-evictable (not counted)", -r.states.paged);
    sub("gradients (produced in backward)", -r.states.gradients_in_step);
    sub("stack buffers (DDP buckets, FP32 main gradients, DeepSpeed)", r.states.stack_buffers);
    sub("FSDP no_sync: gradients accumulated unsharded", r.states.unsharded_gradients);
    row("model states on the card", m.states_on_card);
  }
  t.separator();
  const StepMemory& st = r.step;
  row(st.phase == StepPhase::kOptimizerUpdate
          ? std::string("gradients and update (optimizer peak)")
          : fmt::format("activations ({} peak)", step_phase_word(st.phase)),
      m.activations);
  sub("saved activations", st.saved_activations);
  // In a block's backward the only logits left are those the training loop still holds.
  sub(st.phase == StepPhase::kBlockBackward ? "logits the training loop holds" : "logits and loss",
      st.logits_and_loss);
  sub("recomputed block", st.recompute);
  sub("activation gradients", st.backward_transient);
  sub("model gradients", st.gradients);
  sub(st.phase == StepPhase::kLoss ? "FP32 output layer cast to 16 bits" : "dequantization buffer",
      st.dequant_buffer);
  sub("gathered parameters (FSDP)", st.gathered_params);
  sub("optimizer update temporaries", st.update_temporaries);
  sub(is_online(w) ? "logits of the passes without gradient" : "reference model logits",
      st.scoring_logits);
  row("runtime overhead", m.overhead);
  sub("CUDA context", r.overheads.cuda_context);
  sub("cuBLAS/cuBLASLt workspaces", r.overheads.inside_allocator());
  sub("NCCL buffers", r.overheads.nccl_buffers);
  if (OverheadBreakdown::counts_reserve(w.peak))
    sub("allocator reserve", r.overheads.allocator_reserve);
  if (m.rollout_engine.value > 0) {
    if (w.rollout.sleep) {
      row("rollout engine, awake (states on the card and overheads beside it)", m.rollout_peak);
    } else {
      row(fmt::format("rollout engine ({:.0f} % of the card, colocated)",
                      100 * w.rollout.engine_memory),
          m.rollout_engine);
    }
  }
  if (m.load_is_peak) {
    row("step peak", m.step_peak);
    row("load (weights as loaded, tensor in transit)", m.load_peak);
  }
  row(fmt::format("peak ({}{})", peak_kind_name(w.peak), m.load_is_peak ? ", load phase" : ""),
      m.peak);
  // Where measured peaks fall around the model's: its error spread on published runs, widened
  // for a reserved peak to the allocator's reserve at its measured 10th and 90th percentile.
  if (m.peak_high > m.peak_low)
    t.row({"  range (10th-90th pct. of measured runs)",
           format_fixed(to_GB(m.peak_low), 1) + "–" + format_fixed(to_GB(m.peak_high), 1),
           format_fixed(to_GiB(m.peak_low), 1) + "–" + format_fixed(to_GiB(m.peak_high), 1)});
  t.separator();
  row(p.mig ? "capacity (MIG instance)" : "capacity (driver-visible)", m.capacity);
  row("free after model states", m.free);
  row("headroom after peak", m.headroom);
  t.print(out);
  if (m.stage_count > 0) {
    out << "\npipeline stages, one card each:\n";
    TextTable stages({"stage>", "layers>", "states on card GB>", "activations GB>", "peak GB>"});
    for (int i = 0; i < m.stage_count; ++i) {
      const auto& one = m.stages[static_cast<std::size_t>(i)];
      stages.row({std::to_string(one.stage), std::to_string(one.layers),
                  format_fixed(to_GB(one.states_on_card), 2),
                  format_fixed(to_GB(one.activations), 2), format_fixed(to_GB(one.peak), 2)});
    }
    stages.print(out);
  }
  out << fmt::format("\nverdict: {} — {}\n", verdict_name(m.verdict), word_reason(m.reason));
  if (suggestions.empty()) return;
  out << (suggestions.front().fits() ? "\nTo make it fit:\n"
                                     : "\nTo make it fit (nothing tried fits; the closest):\n");
  int n = 0;
  for (const Suggestion& sug : suggestions) {
    std::string options;
    for (const SettingChange& c : sug.change) {
      std::string key = c.key;
      std::replace(key.begin(), key.end(), '_', '-');
      options += fmt::format("{}--{} {}", options.empty() ? "" : " ", key,
                             c.is_number() ? std::to_string(c.number) : c.text);
    }
    out << wrapped(word_reason(sug.reason), fmt::format("  {}. ", ++n), "     ");
    out << fmt::format("     {}: peak {} GB, headroom {} GB, {}\n", options,
                       format_fixed(to_GB(sug.memory.peak), 1),
                       format_fixed(to_GB(sug.memory.headroom), 1),
                       verdict_name(sug.memory.verdict));
  }
}

}  // namespace ftplan
