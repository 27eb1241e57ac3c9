// What a parallel strategy moves between cards per micro-batch and per optimizer step, how long
// the links need at least, and how much of it hides behind compute.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>

#include "comm/collectives.hpp"
#include "comm/topology.hpp"
#include "core/trace.hpp"
#include "memory/model_states.hpp"
#include "workload/workload.hpp"

namespace ftplan {

enum class CommStrategy {
  kSingleCard,
  kDataParallel,  // full fine-tune, replicated: all-reduce of gradients per step (ZeRO: 2Ψ)
  kZero1,         // optimizer states sharded: reduce-scatter gradients + all-gather weights (2Ψ)
  kZero2,         // + gradients sharded: same volume as ZeRO-1
  kFsdp,  // ZeRO-3: all-gather weights forward and backward + reduce-scatter gradients (3Ψ)
  kLoraDataParallel,  // LoRA/QLoRA, base replicated: all-reduce of the adapter gradients
  kShardedBase,       // LoRA/QLoRA with the frozen base sharded: base gathered forward and backward
  // Hybrid sharding: kFsdp (kShardedBase for adapters) within each shard group, and an all-reduce
  // of each card's gradient shard with its peers in the other groups (PyTorch HYBRID_SHARD).
  kHsdp,
  kShardedBaseHybrid,
};
std::string_view comm_strategy_name(CommStrategy s);
CommStrategy comm_strategy(const Workload& w, const Placement& p);

enum class OverlapWith { kForward, kBackward, kNothing };

// What a collective carries.
enum class CommPayload { kGradients, kTrainedWeights, kFrozenBase };

// One collective of the strategy.
struct CommCall {
  std::string_view what;  // "all-gather weights (forward)" (a literal: no allocation)
  CommPayload payload = CommPayload::kGradients;
  bool per_micro_batch = true;  // else once per optimizer step
  OverlapWith overlap = OverlapWith::kNothing;
  CollectiveCost cost;
};

// At most eight collectives per strategy; a fixed array keeps planning allocation-free.
inline constexpr std::size_t kMaxCommCalls = 8;

struct CommPlan {
  CommStrategy strategy = CommStrategy::kSingleCard;
  std::array<CommCall, kMaxCommCalls> call_storage{};
  std::size_t call_count = 0;
  Bytes received_per_card_per_micro_batch;
  Bytes received_per_card_per_step;
  Seconds min_link_seconds_per_micro_batch;  // lower bound at nominal link rates
  Seconds min_link_seconds_per_step;
  LinkLevel link = LinkLevel::kPcie;  // the slowest link crossed (Topology::link names it)
  // Hybrid sharding: the cards of each shard group and the groups (replicas); 1 and the cards
  // otherwise.
  int shard_group = 1;
  int replicas = 1;

  std::span<const CommCall> calls() const { return {call_storage.data(), call_count}; }
};

// Of one payload, per micro-batch: what each card receives and the lower bound of its link time
// at nominal rates (the seed's sharded 70B LoRA: 141 GB of frozen base, >= 2.2 s over PCIe Gen5).
struct PayloadTraffic {
  Bytes received_per_card;
  Seconds min_link_seconds;
};
PayloadTraffic per_micro_batch(const CommPlan& plan, CommPayload payload);

// `replica` = model_states(w) (the planner computes it once per workload).
CommPlan plan_communication(const Workload& w, const ModelStates& replica, const Placement& p,
                            const Topology& t, const CommConstants& k, Trace* trace = nullptr);

// Compute time of one micro-batch on one card, from the step model.
struct ComputeTimes {
  Seconds forward;
  Seconds backward;   // including recomputation
  Seconds optimizer;  // the update, once per step
};

struct ScaleEstimate {
  Seconds compute_per_step;       // grad_accum × (forward + backward) + optimizer (+ pipeline
                                  // bubble under a layout)
  Seconds comm_per_step;          // estimated collective time (achieved rates), before overlap
  Seconds exposed_per_step;       // what does not hide behind compute
  Seconds step_seconds;           // compute + exposed
  double scaling_efficiency = 1;  // compute / step: the share of ideal N× throughput
};

// Exposed communication = max(0, comm − overlappable compute) per phase: forward gathers hide
// behind the forward pass, backward gathers and gradient reductions behind the backward pass
// (bucketed; the last bucket and the first layer's gather cannot hide).
// With `trace`, records the communication time, exposed time, step time and scaling efficiency.
ScaleEstimate estimate_scaling(const CommPlan& plan, const ComputeTimes& compute, const Workload& w,
                               const Topology& t, const CommConstants& k, Trace* trace = nullptr);

}  // namespace ftplan
