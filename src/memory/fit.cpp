#include "memory/fit.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/format.hpp"
#include "memory/activations.hpp"
#include "memory/step_memory.hpp"
#include "parallel/layout.hpp"
#include "workload/objective.hpp"

namespace ftplan {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kFits:
      return "fits";
    case Verdict::kTight:
      return "tight";
    case Verdict::kDoesNotFit:
      return "does-not-fit";
  }
  return "?";
}

Verdict verdict_for(Bytes capacity, Bytes peak) {
  if (peak > capacity) return Verdict::kDoesNotFit;
  if ((capacity - peak).value < kTightHeadroomFraction * capacity.value) return Verdict::kTight;
  return Verdict::kFits;
}

MemoryEstimate estimate_memory(const Workload& w, const Placement& p, Trace* trace) {
  return estimate_memory(w, model_states(w, trace), p, trace);
}

MemoryEstimate estimate_memory(const Workload& w, const ModelStates& replica, const Placement& p,
                               Trace* trace) {
  return estimate_memory(w, replica, activation_profile(w), p, trace);
}

namespace {

// The figures once the states on the card, the step's activations and the overheads are known.
void finish(MemoryEstimate& m, const Workload& w, const Placement& p) {
  m.states_on_card = m.runtime.states.resident;
  m.activations = m.runtime.activations;
  m.overhead = m.runtime.overhead;
  m.capacity = p.mig ? p.mig->memory() : p.gpu->capacity();
  // What the states leave free on the card: those moved to host memory (offload), paged out or
  // never made (pure BF16) are not on it; gradients are, whether they persist or not.
  const OnCardStates& on = m.runtime.states;
  m.free = m.capacity - (m.states.total() - on.host - on.paged - on.pure_bf16_saving);
  m.step_peak = m.states_on_card + m.activations + m.overhead;
  // A colocated engine (vLLM) claims gpu_memory_utilization × the card's memory when it starts and
  // keeps it, unless it sleeps while the step trains (sleep level 1: weights to host memory, the
  // cache freed); it then wakes beside the policy's states for the rollout.
  if (is_online(w) && w.rollout.mode == RolloutMode::kColocated) {
    m.rollout_engine = m.capacity * w.rollout.engine_memory;
    if (w.rollout.sleep) {
      m.rollout_peak = m.states_on_card + m.overhead + m.rollout_engine;
      if (m.rollout_peak > m.step_peak) m.step_peak = m.rollout_peak;
    } else {
      m.step_peak += m.rollout_engine;
      m.rollout_peak = m.step_peak;
    }
  }
  m.load_peak = m.runtime.load.total();
  m.load_is_peak = m.load_peak > m.step_peak;
  m.peak = m.load_is_peak ? m.load_peak : m.step_peak;
  // The range: the model's error spread on published runs, and for a reserved step peak the
  // allocator's reserve spread; a step peak's range stays above the load phase.
  const OverheadBreakdown& ranges = m.runtime.overheads;
  const bool with_reserve = !m.load_is_peak && OverheadBreakdown::counts_reserve(w.peak);
  m.peak_low = ranges.range_low(m.peak, with_reserve);
  m.peak_high = ranges.range_high(m.peak, with_reserve);
  if (!m.load_is_peak) m.peak_low = std::max(m.load_peak, m.peak_low);
  m.headroom = m.capacity - m.peak;
  m.verdict = verdict_for(m.capacity, m.peak);
  // The reserve is elastic: on a failed allocation the caching allocator releases its free cached
  // blocks and retries. A step whose allocated peak fits may run (measured: an H200 at 141 GB
  // allocated and 149 GB reserved, where the reserve model asked for 167 GB), or stop on
  // fragmentation (a 7.8 GiB request with 8.2 GiB cached in pieces): tight, not out.
  const Bytes reserve = m.runtime.overheads.allocator_reserve;
  if (m.verdict == Verdict::kDoesNotFit && !m.load_is_peak &&
      OverheadBreakdown::counts_reserve(w.peak) && reserve.value > 0 &&
      (m.peak - reserve).value <= m.capacity.value) {
    m.verdict = Verdict::kTight;
    m.tight_by_reserve = true;
  }
}

// Tensor, pipeline, context or expert parallelism (parallel/layout.hpp): each edge stage's card
// holds its share of the states, sharded over its data-parallel group, and the activations of
// its layers, micro-batches in flight and 1/cp of each sequence.
MemoryEstimate layout_memory(const Workload& w, const ActivationProfile& profile,
                             const Placement& p, const LayoutStates& known) {
  const Layout& l = p.layout;
  const ModelArch& a = w.model->arch;
  Workload card = w;
  card.seq = std::max<std::int64_t>(1, w.seq / l.cp);
  const Placement group = data_parallel_group(p);
  const EdgeStages& edges = known.stages;
  MemoryEstimate best;
  const int n = edges.count();
  for (int i = 0; i < n; ++i) {
    const Stage& st = edges[i];
    MemoryEstimate m;
    m.states =
        shard_stage_states(known.states[static_cast<std::size_t>(i)], p.sharding, l, p.count);
    m.runtime = runtime_memory(card, stage_profile(profile, a, l, st, w.grad_accum), m.states,
                               group, nullptr);
    finish(m, w, p);
    best.stages[static_cast<std::size_t>(i)] = {st.index,      st.layers,  m.states_on_card,
                                                m.activations, m.overhead, m.peak};
    if (i == 0 || m.peak > best.peak) {
      const auto stages = best.stages;
      best = m;
      best.stages = stages;
      best.peak_stage = st.index;
    }
  }
  best.stage_count = l.pp > 1 ? n : 0;
  return best;
}

}  // namespace

MemoryEstimate memory_figures(const Workload& w, const ModelStates& replica,
                              const ActivationProfile& profile, const Placement& placement,
                              const LayoutStates* layout) {
  // Hybrid sharding: each card holds what FSDP over its shard group would.
  const Placement p = sharding_view(placement);
  if (!p.layout.trivial() && !p.mig)
    return layout_memory(w, profile, p,
                         layout ? *layout : layout_states(w, trained_set(w), p.layout));
  MemoryEstimate m;
  const int cards = p.mig ? 1 : p.count;
  m.states = shard_states(replica, p.sharding, cards);
  m.runtime = runtime_memory(w, profile, m.states, p, nullptr);
  finish(m, w, p);
  return m;
}

Reason placement_where(const Placement& p) {
  const int cards = p.mig ? 1 : p.count;
  if (p.mig)
    return Reason(ReasonCode::kWhereMigInstance)
        .name("profile", p.mig->name)
        .name("card", p.gpu->name);
  if (cards > 1)
    return Reason(ReasonCode::kWhereCards).count("count", cards).name("card", p.gpu->name);
  return Reason(ReasonCode::kWhereCard).name("card", p.gpu->name);
}

Reason memory_reason(const MemoryEstimate& m, const Placement& p) {
  switch (m.verdict) {
    case Verdict::kFits:
      // The peak fits with room to spare, but where measured peaks fall reaches past the card.
      if (m.peak_high > m.capacity)
        return Reason(ReasonCode::kFitFitsRangePast)
            .bytes("peak", m.peak)
            .bytes("headroom", m.headroom)
            .bytes("capacity", m.capacity)
            .nested("where", placement_where(p))
            .bytes("high", m.peak_high);
      return Reason(ReasonCode::kFitFits)
          .bytes("peak", m.peak)
          .bytes("headroom", m.headroom)
          .bytes("capacity", m.capacity)
          .nested("where", placement_where(p));
    case Verdict::kTight:
      if (m.tight_by_reserve)
        return Reason(ReasonCode::kFitTightReserve)
            .bytes("peak", m.peak)
            .bytes("allocated", m.peak - m.runtime.overheads.allocator_reserve)
            .bytes("capacity", m.capacity)
            .nested("where", placement_where(p));
      return Reason(ReasonCode::kFitTight)
          .bytes("peak", m.peak)
          .bytes("headroom", m.headroom)
          .bytes("capacity", m.capacity)
          .nested("where", placement_where(p))
          .percent("share", kTightHeadroomFraction);
    case Verdict::kDoesNotFit:
      break;
  }
  return Reason(ReasonCode::kFitDoesNotFit)
      .bytes("peak", m.peak)
      .bytes("capacity", m.capacity)
      .nested("where", placement_where(p))
      .bytes("excess", m.peak - m.capacity);
}

MemoryEstimate estimate_memory(const Workload& w, const ModelStates& replica,
                               const ActivationProfile& profile, const Placement& p, Trace* trace) {
  MemoryEstimate m = memory_figures(w, replica, profile, p);
  m.reason = memory_reason(m, p);
  const int cards = p.mig ? 1 : p.count;
  if (trace) {
    // ZeRO paper §5 (P_os, P_os+g, P_os+g+p): what each sharding strategy splits N ways.
    const Layout& l = p.layout;
    if (l.trivial() || p.mig) {
      trace->add(
          {"memory.states_per_card",
           "model states per card",
           to_GB(m.states.total()),
           "GB",
           "model states of one replica, split across the cards: ddp none; zero1 master "
           "weights and optimizer states ÷ N; zero2 also gradients ÷ N; fsdp everything ÷ N; "
           "hsdp everything ÷ the shard group's N, the groups holding the same",
           {{"sharding", std::string(sharding_name(p.sharding))},
            {"cards (N)", std::to_string(sharding_view(p).count)},
            {"model states of one replica", format_GB(replica.total(), 3)}},
           "ZeRO paper §5 (Rajbhandari et al. 2020); PyTorch FSDP",
           {"memory.model_states"}});
      m.runtime =
          runtime_memory(w, profile, m.states, sharding_view(p), trace);  // records its derivation
    } else {
      // The layout's figures come from its stage (parallel/layout): the runtime breakdown of the
      // whole model would not describe them.
      trace->add({"memory.states_per_card",
                  "model states per card",
                  to_GB(m.states.total()),
                  "GB",
                  "each tensor's share on one card of the stage: block matrices ÷ tp, experts ÷ "
                  "(tp × ep), the stage's layers of pp, embedding and output layer ÷ tp on the "
                  "first and last stage; then the sharding over the data-parallel group (dp × cp; "
                  "experts dp × cp ÷ ep)",
                  {{"tp", std::to_string(l.tp)},
                   {"pp", std::to_string(l.pp)},
                   {"cp", std::to_string(l.cp)},
                   {"ep", std::to_string(l.ep)},
                   {"dp", std::to_string(l.dp(cards))},
                   {"stage", std::to_string(m.peak_stage)},
                   {"sharding", std::string(sharding_name(p.sharding))},
                   {"model states of one replica", format_GB(replica.total(), 3)}},
                  "Megatron-LM (Shoeybi et al. 2019; Narayanan et al. 2021); ZeRO paper §5",
                  {"memory.model_states"}});
    }
    trace->add(
        {"memory.capacity",
         "memory a run can use",
         to_GB(m.capacity),
         "GB",
         p.mig ? "the MIG profile's memory"
               : "driver-visible memory (nvidia-smi MiB × 1,048,576 B)",
         {{"card", p.gpu->id},
          {"visible MiB", p.mig ? "-" : format_number(p.gpu->visible_MiB.value.value_or(0))}},
         "GPU data file (nvidia-smi memory.total)"});
    trace->add(
        {"memory.free",
         "free after model states",
         to_GB(m.free),
         "GB",
         "capacity − model states per card (one replica's states split across the cards by the "
         "sharding) + the states offloaded, paged or not kept (pure BF16)",
         {{"capacity", format_GB(m.capacity, 3)},
          {"model states per card", format_GB(m.states.total(), 3)},
          {"offloaded, paged or not kept",
           format_GB(
               m.runtime.states.host + m.runtime.states.paged + m.runtime.states.pure_bf16_saving,
               3)},
          {"sharding", std::string(sharding_name(p.sharding))},
          {"cards", std::to_string(cards)}},
         "seed § memory: what is left for activations, the CUDA context and temporary buffers",
         {"memory.capacity", "memory.states_per_card"}});
    if (m.rollout_engine > Bytes())
      trace->add({"memory.rollout_engine",
                  "colocated rollout engine (weights and KV cache) per card",
                  to_GB(m.rollout_engine),
                  "GB",
                  w.rollout.sleep ? "capacity × engine share; asleep while the step trains, so "
                                    "the peak is the larger of the step and the rollout"
                                  : "capacity × engine share, held beside the step's memory",
                  {{"capacity", format_GB(m.capacity, 3)},
                   {"engine share", format_number(w.rollout.engine_memory, 3)},
                   {"sleep", w.rollout.sleep ? "yes" : "no"}},
                  "vLLM claims gpu_memory_utilization × the card when it starts (TRL "
                  "vllm_gpu_memory_utilization)",
                  {"memory.capacity"}});
    std::vector<std::pair<std::string, std::string>> inputs = {
        {"model states on the card", format_GB(m.states_on_card, 3)},
        {"activations", format_GB(m.activations, 3)},
        {"overhead", format_GB(m.overhead, 3)}};
    std::vector<std::string> from = {"memory.states_on_card", "memory.activations",
                                     "memory.overhead"};
    if (m.rollout_engine > Bytes()) {
      inputs.emplace_back("rollout engine", format_GB(m.rollout_engine, 3));
      from.emplace_back("memory.rollout_engine");
    }
    inputs.emplace_back("step", format_GB(m.step_peak, 3));
    inputs.emplace_back("load", format_GB(m.load_peak, 3));
    inputs.emplace_back("peak phase", m.load_is_peak ? "load" : "step");
    trace->add({"memory.peak", "estimated peak per card", to_GB(m.peak), "GB",
                "the peak phase's total: the larger of step = model states on the card + "
                "activations + overhead (+ a colocated rollout engine), and load = weights as "
                "loaded + the tensor in transit + CUDA context and NCCL",
                std::move(inputs),
                "memory/activations (Korthikanti et al. 2022) and runtime overheads",
                std::move(from)});
  }
  return m;
}

Sharding auto_sharding(const Workload& w, const ModelStates& replica, const Placement& p) {
  if (p.count <= 1 || p.mig) return Sharding::kNone;
  if (!p.layout.trivial()) return layout_sharding(w);
  Placement one;
  one.gpu = p.gpu;
  return estimate_memory(w, replica, one).verdict == Verdict::kFits ? Sharding::kDdp
                                                                    : Sharding::kFsdp;
}

}  // namespace ftplan
