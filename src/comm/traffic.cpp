#include "comm/traffic.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/format.hpp"
#include "workload/objective.hpp"
#include "workload/roles.hpp"

namespace ftplan {

std::string_view comm_strategy_name(CommStrategy s) {
  switch (s) {
    case CommStrategy::kSingleCard:
      return "single card";
    case CommStrategy::kDataParallel:
      return "data parallel (DDP)";
    case CommStrategy::kZero1:
      return "ZeRO-1";
    case CommStrategy::kZero2:
      return "ZeRO-2";
    case CommStrategy::kFsdp:
      return "FSDP / ZeRO-3";
    case CommStrategy::kLoraDataParallel:
      return "LoRA data parallel (base replicated)";
    case CommStrategy::kShardedBase:
      return "sharded frozen base (FSDP)";
    case CommStrategy::kHsdp:
      return "HSDP (FSDP within groups, replicated across)";
    case CommStrategy::kShardedBaseHybrid:
      return "sharded frozen base within groups (HSDP)";
  }
  return "?";
}

CommStrategy comm_strategy(const Workload& w, const Placement& p) {
  if (p.count <= 1 || p.mig) return CommStrategy::kSingleCard;
  // Only adapters are trained (no base weight): their gradients are all that is reduced.
  const bool adapters = !method_traits(w.method).trains_base;
  switch (p.sharding) {
    case Sharding::kNone:
    case Sharding::kDdp:
      return adapters ? CommStrategy::kLoraDataParallel : CommStrategy::kDataParallel;
    case Sharding::kZero1:
      return adapters ? CommStrategy::kLoraDataParallel : CommStrategy::kZero1;
    case Sharding::kZero2:
      return adapters ? CommStrategy::kLoraDataParallel : CommStrategy::kZero2;
    case Sharding::kFsdp:
      return adapters ? CommStrategy::kShardedBase : CommStrategy::kFsdp;
    case Sharding::kHsdp:
      // Unresolved, or one group: FSDP over them all.
      if (p.shard_group <= 0 || p.shard_group >= p.count) return comm_strategy(w, sharding_view(p));
      return adapters ? CommStrategy::kShardedBaseHybrid : CommStrategy::kHsdp;
  }
  return CommStrategy::kSingleCard;
}

PayloadTraffic per_micro_batch(const CommPlan& plan, CommPayload payload) {
  PayloadTraffic out;
  for (const CommCall& c : plan.calls())
    if (c.per_micro_batch && c.payload == payload) {
      out.received_per_card += c.cost.received_per_card;
      out.min_link_seconds += c.cost.min_link_seconds;
    }
  return out;
}

namespace {

// The frozen and scoring models' weights a sharded step gathers for its passes without gradient,
// per card: the reference copy (reference_weights less the reward model) once per reference pass,
// PPO's reward model once and its value model (the same classifier, trained) once.
Bytes frozen_pass_gathers(const Workload& w, const ModelStates& s) {
  const ObjectiveTraits& t = objective_traits(w.objective);
  const Bytes reference_copy = s.reference_weights - s.reward_weights;
  Bytes out = reference_copy * static_cast<double>(uses_reference(w) ? t.reference_passes : 0);
  out += s.reward_weights * static_cast<double>((t.reward_model ? 1 : 0) + (t.value_model ? 1 : 0));
  return out;
}

}  // namespace

CommPlan plan_communication(const Workload& w, const ModelStates& s, const Placement& p,
                            const Topology& t, const CommConstants& k, Trace* trace) {
  CommPlan plan;
  plan.strategy = comm_strategy(w, p);
  plan.link = t.slowest().level;
  // Hybrid sharding: the sharded strategy's collectives run within each group of consecutive
  // ranks; each card then all-reduces its gradient shard with the cards of the same rank in the
  // other groups, one group's size apart.
  const bool hybrid =
      plan.strategy == CommStrategy::kHsdp || plan.strategy == CommStrategy::kShardedBaseHybrid;
  if (hybrid) {
    plan.shard_group = p.shard_group;
    plan.replicas = std::max(1, p.count / p.shard_group);
  }
  const Topology within = hybrid ? group_topology(t, plan.shard_group, 1) : Topology();
  const Topology& group = hybrid ? within : t;
  auto add_on = [&](const Topology& on, std::string_view what, CommPayload payload, Collective c,
                    Bytes size, bool per_mb, OverlapWith overlap) {
    plan.call_storage[plan.call_count++] = {what, payload, per_mb, overlap,
                                            collective_cost(c, size, on, k)};
  };
  auto add = [&](std::string_view what, CommPayload payload, Collective c, Bytes size, bool per_mb,
                 OverlapWith overlap) { add_on(group, what, payload, c, size, per_mb, overlap); };
  // What is gathered: the 16-bit weights of what is trained, plus the frozen base (BF16, or NF4
  // codes and constants for QLoRA: FSDP gathers the stored form) where it is sharded.
  const Bytes gradients = s.gradients;
  const Bytes trained = s.trained_weights;
  const Bytes base = s.frozen_weights + s.quantization_constants;
  // FSDP1's no_sync under gradient accumulation (StackProfile::fsdp_no_sync): the gradients are
  // reduced in the last micro-batch's backward pass only, once per step; under HYBRID_SHARD both
  // the reduce-scatter within the group and the all-reduce across the groups wait for it.
  const bool scatter_each_micro_batch = !fsdp_no_sync_accumulation(w);
  switch (plan.strategy) {
    case CommStrategy::kSingleCard:
      break;
    case CommStrategy::kDataParallel:
    case CommStrategy::kLoraDataParallel:
      // ZeRO paper §7.1: an all-reduce of the gradients per step, 2Ψ of traffic (reduce-scatter Ψ +
      // all-gather Ψ); for LoRA only the adapters' gradients (seed: "small on every link").
      add("all-reduce gradients", CommPayload::kGradients, Collective::kAllReduce, gradients, false,
          OverlapWith::kBackward);
      break;
    case CommStrategy::kZero1:
    case CommStrategy::kZero2:
      // ZeRO-1/2 (§7.2.1): reduce-scatter of the gradients, all-gather of the updated weights: 2Ψ.
      // ZeRO-2 partitions the gradients, so it reduces each backward pass's gradients into their
      // owners' partitions as the pass runs: every micro-batch under gradient accumulation
      // (DeepSpeed stage_1_and_2.py, partition_gradients); ZeRO-1 keeps whole gradients and
      // reduces once per step.
      add("reduce-scatter gradients", CommPayload::kGradients, Collective::kReduceScatter,
          gradients, plan.strategy == CommStrategy::kZero2, OverlapWith::kBackward);
      add("all-gather updated weights", CommPayload::kTrainedWeights, Collective::kAllGather,
          trained, false, OverlapWith::kNothing);
      break;
    case CommStrategy::kFsdp:
    case CommStrategy::kHsdp:
      // ZeRO-3 (§7.2.2): weights all-gathered before the forward and again before the backward
      // pass, gradients reduce-scattered: 3Ψ, 1.5× data parallel (seed C3).
      add("all-gather weights (forward)", CommPayload::kTrainedWeights, Collective::kAllGather,
          trained, true, OverlapWith::kForward);
      add("all-gather weights (backward)", CommPayload::kTrainedWeights, Collective::kAllGather,
          trained, true, OverlapWith::kBackward);
      add("reduce-scatter gradients", CommPayload::kGradients, Collective::kReduceScatter,
          gradients, scatter_each_micro_batch, OverlapWith::kBackward);
      // Forward passes without gradient gather their weights as well: the reference copy, sharded
      // like the policy, each of its passes; PPO's reward model and its value model (a trained
      // copy of the same sequence classifier) one pass each; the policy again for KTO's KL batch.
      if (const Bytes scoring = frozen_pass_gathers(w, s); scoring > Bytes())
        add("all-gather reference weights", CommPayload::kFrozenBase, Collective::kAllGather,
            scoring, true, OverlapWith::kForward);
      if (const int passes = policy_no_grad_passes(w); passes > 0)
        add("all-gather weights (forward without gradient)", CommPayload::kTrainedWeights,
            Collective::kAllGather, trained * static_cast<double>(passes), true,
            OverlapWith::kForward);
      break;
    case CommStrategy::kShardedBase:
    case CommStrategy::kShardedBaseHybrid:
      // Seed § "Mehr als eine Karte": each card stores 1/N of the frozen base and receives the
      // other (N−1)/N layer by layer in the forward pass and again in the backward pass (which
      // needs the weights to pass gradients to earlier layers' adapters): per micro-batch, whatever
      // its size.
      add("all-gather frozen base (forward)", CommPayload::kFrozenBase, Collective::kAllGather,
          base, true, OverlapWith::kForward);
      add("all-gather frozen base (backward)", CommPayload::kFrozenBase, Collective::kAllGather,
          base, true, OverlapWith::kBackward);
      // The adapters are sharded with their modules and travel along: small next to the base.
      add("all-gather adapters (forward)", CommPayload::kTrainedWeights, Collective::kAllGather,
          trained, true, OverlapWith::kForward);
      add("all-gather adapters (backward)", CommPayload::kTrainedWeights, Collective::kAllGather,
          trained, true, OverlapWith::kBackward);
      add("reduce-scatter adapter gradients", CommPayload::kGradients, Collective::kReduceScatter,
          gradients, scatter_each_micro_batch, OverlapWith::kBackward);
      // The reference (the base with the adapters off) and KTO's KL batch: the base once more
      // per forward pass without gradient.
      if (const int passes = no_grad_forward_passes(w); passes > 0)
        add("all-gather frozen base (forward without gradient)", CommPayload::kFrozenBase,
            Collective::kAllGather, base * static_cast<double>(passes), true,
            OverlapWith::kForward);
      break;
  }
  if (hybrid)
    // Each backward pass's reduced shard, across the groups (FSDP2's default; skipping it until
    // the last micro-batch, set_requires_all_reduce(False), trades memory for less traffic; FSDP1's
    // no_sync skips it with the reduce-scatter).
    add_on(group_topology(t, plan.replicas, plan.shard_group),
           "all-reduce gradient shards across groups", CommPayload::kGradients,
           Collective::kAllReduce, gradients / static_cast<double>(plan.shard_group),
           scatter_each_micro_batch, OverlapWith::kBackward);
  for (const auto& c : plan.calls()) {
    const double per_step = c.per_micro_batch ? static_cast<double>(w.grad_accum) : 1.0;
    if (c.per_micro_batch) {
      plan.received_per_card_per_micro_batch += c.cost.received_per_card;
      plan.min_link_seconds_per_micro_batch += c.cost.min_link_seconds;
    }
    plan.received_per_card_per_step += c.cost.received_per_card * per_step;
    plan.min_link_seconds_per_step += c.cost.min_link_seconds * per_step;
  }
  if (trace && plan.strategy != CommStrategy::kSingleCard) {
    Derivation d{"comm.received_per_card",
                 "bytes each card receives per optimizer step",
                 to_GB(plan.received_per_card_per_step),
                 "GB",
                 "Σ collectives: buffer × bus factor (all-reduce 2(N−1)/N, all-gather / "
                 "reduce-scatter (N−1)/N), "
                 "× micro-batches per step for per-micro-batch collectives",
                 {{"strategy", std::string(comm_strategy_name(plan.strategy))},
                  {"cards", std::to_string(t.cards)},
                  {"micro-batches per step", std::to_string(w.grad_accum)}},
                 "ZeRO paper §7; nccl-tests PERFORMANCE.md; seed § NVLink gegen PCIe",
                 {"memory.model_states"}};
    for (const auto& c : plan.calls())
      d.inputs.emplace_back(
          c.what, fmt::format("{} of {}", collective_name(c.cost.kind), format_GB(c.cost.size, 2)));
    trace->add(std::move(d));
    trace->add(
        {"comm.min_link_seconds",
         "lower bound on link time per step",
         plan.min_link_seconds_per_step.value,
         "s",
         "per collective: bytes crossing each link level / its nominal per-direction rate (between "
         "nodes: the node's whole network rate, as NCCL's rings cross once per node); the "
         "slowest level counts",
         {{"slowest link", t.slowest().name},
          {"per direction", format_GBps(t.collective_rate(t.slowest()))}},
         "seed C5 (141 GB over PCIe Gen5 at 64 GB/s ≥ 2.2 s)",
         {"comm.received_per_card"}});
  }
  return plan;
}

ScaleEstimate estimate_scaling(const CommPlan& plan, const ComputeTimes& compute, const Workload& w,
                               const Topology& t, const CommConstants& k, Trace* trace) {
  ScaleEstimate e;
  const double micro_batches = static_cast<double>(w.grad_accum);
  e.compute_per_step = (compute.forward + compute.backward) * micro_batches + compute.optimizer;
  Seconds fwd_mb, bwd_mb, none_mb, bwd_step, none_step;
  Seconds first_layer;  // the first layer's gather starts before any compute it could hide behind
  const double layers = std::max<double>(1, static_cast<double>(w.model->arch.layers));
  for (const auto& c : plan.calls()) {
    const Seconds time = c.cost.estimated_seconds;
    if (c.per_micro_batch) {
      if (c.overlap == OverlapWith::kForward) {
        fwd_mb += time;
        first_layer += time / layers;
      } else if (c.overlap == OverlapWith::kBackward) {
        bwd_mb += time;
      } else {
        none_mb += time;
      }
    } else if (c.overlap == OverlapWith::kBackward) {
      bwd_step += time;
    } else {
      none_step += time;
    }
    e.comm_per_step += time * (c.per_micro_batch ? micro_batches : 1.0);
  }
  auto exposed = [](Seconds comm, Seconds hide) { return comm > hide ? comm - hide : Seconds(0); };
  Seconds per_mb =
      exposed(fwd_mb, compute.forward) + exposed(bwd_mb, compute.backward) + none_mb + first_layer;
  // Gradient reductions once per step run in buckets during the last micro-batch's backward pass;
  // the last bucket (PyTorch DDP: 25 MB) starts when the backward pass ends.
  Seconds last_bucket;
  if (bwd_step.value > 0) {
    const CollectiveCost bucket =
        collective_cost(Collective::kAllReduce, bytes_from_GB(k.ddp_bucket_MB / 1000), t, k);
    last_bucket = std::min(bucket.estimated_seconds, bwd_step);
  }
  e.exposed_per_step =
      per_mb * micro_batches + exposed(bwd_step, compute.backward) + last_bucket + none_step;
  e.step_seconds = e.compute_per_step + e.exposed_per_step;
  e.scaling_efficiency = e.step_seconds.value > 0 ? e.compute_per_step / e.step_seconds : 1.0;
  if (trace && plan.strategy != CommStrategy::kSingleCard) {
    const Link& slowest = t.link(plan.link);
    trace->add({"comm.seconds",
                "time of the collectives per step, before overlap",
                e.comm_per_step.value,
                "s",
                "Σ collectives: base latency + ring steps × step latency + bytes received per card "
                "/ (slowest link's per-direction rate × achieved fraction), × micro-batches per "
                "step for per-micro-batch collectives",
                {{"slowest link", slowest.name},
                 {"per direction (nominal)", format_GBps(t.collective_rate(slowest))},
                 {"micro-batches per step", std::to_string(w.grad_accum)}},
                "nccl-tests PERFORMANCE.md (bus bandwidth); comm constants data file",
                {"comm.received_per_card"}});
    trace->add({"comm.exposed_seconds",
                "communication not hidden behind compute, per step",
                e.exposed_per_step.value,
                "s",
                "communication per step less what hides behind compute: forward gathers behind "
                "the forward per micro-batch, backward gathers and gradient reductions behind the "
                "backward per micro-batch (max(0, comm − compute) each); the first layer's gather "
                "and the last DDP bucket of a gradient reduction cannot hide",
                {{"communication per step", format_seconds(e.comm_per_step)},
                 {"forward per micro-batch", format_seconds(compute.forward)},
                 {"backward per micro-batch", format_seconds(compute.backward)},
                 {"DDP bucket", fmt::format("{} MB", format_number(k.ddp_bucket_MB))}},
                "PyTorch DDP gradient bucketing (Li et al. 2020); FSDP prefetching",
                {"comm.seconds", "perf.step_seconds"}});
    trace->add({"scale.step_seconds",
                "time of one optimizer step on the cards together",
                e.step_seconds.value,
                "s",
                "compute per step (grad_accum × (forward + backward) + optimizer update, ÷ N cards "
                "where ZeRO/FSDP shards it) + exposed communication",
                {{"compute per step", format_seconds(e.compute_per_step)},
                 {"exposed communication", format_seconds(e.exposed_per_step)},
                 {"cards (N)", std::to_string(t.cards)}},
                "compute: the step model (perf.step_seconds); communication: the overlap model "
                "(comm.exposed_seconds)",
                {"perf.step_seconds", "comm.exposed_seconds"}});
    trace->add({"scale.efficiency",
                "scaling efficiency: the share of N× the one-card throughput",
                e.scaling_efficiency,
                "",
                "compute per step / step time",
                {{"compute per step", format_seconds(e.compute_per_step)},
                 {"step time", format_seconds(e.step_seconds)}},
                "definition",
                {"scale.step_seconds"}});
  }
  return e;
}

}  // namespace ftplan
