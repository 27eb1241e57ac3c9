#include "render/scale_text.hpp"

#include <fmt/format.h>

#include "core/format.hpp"
#include "render/reason_words.hpp"
#include "render/table.hpp"
#include "workload/objective.hpp"

namespace ftplan {

void print_rl_step(std::ostream& out, const Workload& w, const RlStep& r) {
  if (!r.online || !r.feasible) return;
  const std::string where =
      r.mode == RolloutMode::kColocated
          ? fmt::format(
                "colocated: an engine on each of the {} training cards with {:.0f} % of "
                "its memory{}",
                r.rollout_cards, 100 * w.rollout.engine_memory,
                w.rollout.sleep ? ", asleep while the step trains" : "")
          : fmt::format("separate: {} × {}, {} engine(s) of {} card(s)", r.rollout_cards,
                        r.rollout_gpu->name, r.engines, r.engine_tp);
  out << fmt::format(
      "\n{} step: {} prompts × {} completions = {} sequences of {} + {} tokens{}\n"
      "rollout ({}): {} sequences per engine{}, {} at once (its KV cache holds {} in {}), "
      "{} wave(s)\n",
      objective_traits(w.objective).label, r.prompts, r.group, r.sequences, w.rollout.prompt_len,
      w.rollout.completion_len,
      w.rollout.completion_len_mean > 0
          ? fmt::format(" at most ({:.0f} on average)", mean_completion_len(w))
          : "",
      where, r.sequences_per_engine,
      r.rounds > 1 ? fmt::format(" in each of {} rounds", r.rounds) : "", r.concurrent,
      r.engine_memory.max_concurrent_sequences, format_GB(r.engine_memory.kv_budget),
      r.rollout.waves);
  TextTable t({"part", "seconds>", "share>"});
  const std::pair<std::string, Seconds> parts[] = {
      {"rollout: prefill", r.rollout.prefill},
      {"rollout: decode", r.rollout.decode},
      {fmt::format("weight sync ({} in 16 bit)", format_GB(r.sync_bytes)), r.weight_sync},
      {"engine sleep and wake", r.sleep_wake},
      {"scoring (forward passes without gradient)", r.scoring},
      {fmt::format("training ({} epoch(s){})", r.epochs,
                   holds_value_model(w) ? ", policy and value model" : ""),
       r.training},
      {"step", r.total}};
  for (const auto& [what, s] : parts)
    t.row({what, format_fixed(s.value, 3),
           format_fixed(r.total.value > 0 ? 100 * s.value / r.total.value : 0, 1) + " %"});
  t.print(out);
  if (r.overlapped)
    out << "async: the engines generate the next step while this one trains, so the step is the "
           "longer of rollout + weight sync and scoring + training, not the parts' sum\n";
  out << fmt::format("bottleneck: {} · generated tokens/s (all engines, whole step) {:.0f}\n",
                     rl_part_name(r.bottleneck), r.completion_tokens_per_second);
}

void print_scale(std::ostream& out, const Workload& w, const ScaleResult& r) {
  const Placement& p = r.placement;
  out << fmt::format("{} · {} on {} × {}\n", w.model->arch.name, run_method_short(w), p.count,
                     p.gpu->name);
  out << fmt::format("strategy: {} · topology: {} · micro-batch {} × {} tokens, {} per step\n\n",
                     comm_strategy_name(r.comm.strategy), r.topology.preset, w.micro_batch, w.seq,
                     w.grad_accum);
  const Layout& l = p.layout;
  if (!l.trivial())
    out << fmt::format("layout: {}; cards per replica: {}\n", layout_degrees(l, p.count),
                       l.model_parallel());
  out << fmt::format("memory per card: model states {}, peak {} of {} — {}\n",
                     format_GB(r.memory.states.total()), format_GB(r.memory.peak),
                     format_GB(r.memory.capacity), verdict_name(r.memory.verdict));
  for (int i = 0; i < r.memory.stage_count; ++i) {
    const auto& st = r.memory.stages[static_cast<std::size_t>(i)];
    out << fmt::format("  stage {} ({} layers{}): states {}, activations {}, peak {}\n", st.stage,
                       st.layers,
                       st.stage == 0          ? ", embedding"
                       : st.stage == l.pp - 1 ? ", output layer and loss"
                                              : "",
                       format_GB(st.states_on_card), format_GB(st.activations), format_GB(st.peak));
  }
  out << "\n";
  if (!r.step.feasible) {
    out << "step time: cannot be estimated — " << word_reason(r.step.reason) << "\n";
    return;
  }
  TextTable t(
      {"collective", "per", "buffer GB>", "received GB/card>", "min link s>", "estimated s>"});
  for (const auto& c : r.comm.calls())
    t.row({std::string(c.what), c.per_micro_batch ? "micro-batch" : "step",
           format_fixed(to_GB(c.cost.size), 2), format_fixed(to_GB(c.cost.received_per_card), 2),
           format_fixed(c.cost.min_link_seconds.value, 3),
           format_fixed(c.cost.estimated_seconds.value, 3)});
  if (!l.trivial()) {
    const std::pair<const LayoutTraffic::Group*, const char*> groups[] = {
        {&r.layout.tp, "tensor parallel: all-gather + reduce-scatter"},
        {&r.layout.cp, "context parallel: ring attention K/V"},
        {&r.layout.ep, "expert parallel: all-to-all"},
        {&r.layout.pp, "pipeline: activations to the next stage"}};
    for (const auto& [g, what] : groups)
      if (g->collectives > 0)
        t.row({what, fmt::format("micro-batch ×{}", g->collectives), "",
               format_fixed(to_GB(g->received), 2), "", format_fixed(g->seconds.value, 3)});
  }
  if (r.comm.call_count > 0 || !l.trivial()) {
    t.print(out);
    const Link& link = r.topology.link(r.comm.link);
    out << fmt::format(
        "\nreceived per card: {} per micro-batch, {} per step\n"
        "link: {} ({} per direction, nominal); lower bound {} per micro-batch, {} per step\n",
        format_GB(r.comm.received_per_card_per_micro_batch, 2),
        format_GB(r.comm.received_per_card_per_step, 2), link.name, format_GBps(link.per_direction),
        format_seconds(r.comm.min_link_seconds_per_micro_batch),
        format_seconds(r.comm.min_link_seconds_per_step));
  } else {
    out << "no traffic between cards\n";
  }
  out << fmt::format(
      "compute {} per step; communication {} (at achieved link rates), exposed {} -> step {}\n"
      "scaling efficiency {:.1f} % · tokens/s (all cards) {:.0f}\n",
      format_seconds(r.scale.compute_per_step), format_seconds(r.scale.comm_per_step),
      format_seconds(r.scale.exposed_per_step), format_seconds(r.scale.step_seconds),
      100 * r.scale.scaling_efficiency, r.tokens_per_second);
  print_rl_step(out, w, r.rl);
  if (!l.trivial())
    out << fmt::format(
        "model parallel: stage {}'s card timed (the slower edge stage); exchanges exposed {} per "
        "step, pipeline bubble {} per step ((pp − 1)/(vpp · micro-batches) = {:.1f} %)\n",
        r.stage, format_seconds(r.layout_exposed_per_step), format_seconds(r.bubble_per_step),
        100 * pipeline_bubble_fraction(l, w.grad_accum));
  if (r.offload.any) {
    const OffloadTime& o = r.offload;
    out << fmt::format(
        "CPU offload per card: {} to the card and {} to the host per micro-batch (prefetched "
        "beside the passes), {} per micro-batch at {} per direction",
        format_GB(o.forward_to_card + o.backward_to_card, 2),
        format_GB(o.forward_to_host + o.backward_to_host, 2),
        format_seconds(o.forward_copies + o.backward_copies), format_GBps(o.copy_rate));
    if (o.update_on_host)
      out << fmt::format(
          "; optimizer step on the host: {} of host memory traffic in {}, copies around it {}",
          format_GB(o.host_update, 1), format_seconds(o.update), format_seconds(o.step_copies));
    out << "\n";
  }
  for (const auto& n : r.topology.notes)
    out << "note: " << n << "\n";
}

void print_scale_sweep(std::ostream& out, const Workload& w,
                       const std::vector<std::vector<ScaleResult>>& rows,
                       const std::vector<const GpuSpec*>& gpus) {
  out << fmt::format("{} · {} · micro-batch {} × {} tokens: scaling over 1, 2, 4, 8 cards\n\n",
                     w.model->arch.name, run_method_short(w), w.micro_batch, w.seq);
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    out << gpus[g]->name << "\n";
    TextTable t({"cards>", "strategy", "topology", "verdict", "GB recv/card/step>", "exposed s>",
                 "step s>", "tokens/s>", "efficiency>"});
    for (const auto& r : rows[g]) {
      const bool timed = r.step.feasible;
      t.row({std::to_string(r.placement.count), std::string(comm_strategy_name(r.comm.strategy)),
             r.topology.preset, std::string(verdict_name(r.memory.verdict)),
             format_fixed(to_GB(r.comm.received_per_card_per_step), 1),
             timed ? format_fixed(r.scale.exposed_per_step.value, 3) : "-",
             timed ? format_fixed(r.scale.step_seconds.value, 3) : "-",
             timed ? format_fixed(r.tokens_per_second, 0) : "-",
             timed ? format_fixed(100 * r.scale.scaling_efficiency, 1) + " %" : "-"});
    }
    t.print(out);
    out << "\n";
  }
}

}  // namespace ftplan
