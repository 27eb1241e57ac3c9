// Model parallelism: what one card of a tensor-, pipeline-, context- or expert-parallel layout
// holds and computes, and what it exchanges with the other cards of its groups each micro-batch.
//
// The layout follows Megatron-LM's (Shoeybi et al. 2019; Narayanan et al. 2021; Korthikanti et
// al. 2022): ranks ordered tensor-parallel fastest, then context-parallel, then data-parallel (the
// expert-parallel groups carved from it), then pipeline stages. Tensor parallelism runs with
// sequence parallelism. Weights: column-parallel (q, k, v, gate, up) and row-parallel (o, down)
// linear layers split over tp, experts over ep (and tp), the embedding and the output layer split
// over the vocabulary; norms and the router replicated. The memory and op models of the whole
// model (memory/, perf/ops) are scaled to one card here; the collectives are costed on the links
// each group crosses (comm/collectives).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "comm/collectives.hpp"
#include "comm/topology.hpp"
#include "core/units.hpp"
#include "memory/activations.hpp"
#include "memory/model_states.hpp"
#include "perf/ops.hpp"
#include "workload/roles.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// One pipeline stage as its cards see the model.
struct Stage {
  int index = 0;            // 0 .. pp-1
  std::int64_t layers = 0;  // decoder layers it holds (all its model chunks together)
  bool first = true;        // holds the embedding (and any vision parts)
  bool last = true;         // holds the final norm, the output layer and the loss
};
// The first and the last stage: where memory and time peak (the same stage when pp = 1).
struct EdgeStages {
  Stage first, last;
  bool single() const { return first.index == last.index; }
  // The distinct ones, first then last: for (int i = 0; i < e.count(); ++i) e[i] ...
  int count() const { return single() ? 1 : 2; }
  const Stage& operator[](int i) const { return i == 0 ? first : last; }
};
EdgeStages edge_stages(const ModelArch& a, const Layout& l);

// "tp 8 · pp 4 · cp 2" (the degrees above 1; empty for data parallel only).
std::string layout_label(const Layout& l);
// "tensor 8 × pipeline 4 (× 5 chunks) × context 1 × data 2 (expert 1)" on `cards` cards.
std::string layout_degrees(const Layout& l, int cards);

// UserError (exit 2) unless the layout divides the model and the cards: the count a multiple of
// tp × pp × cp, heads (and KV heads) and MLP widths over tp, layers over pp × vpp, experts over ep,
// the sequence into 2 × cp chunks, ep over the data-parallel ranks; no MIG instance, an attention
// kernel context parallelism can run. The message names what does not divide.
void check_layout(const Workload& w, const Placement& p);
// The sharding of a layout's data-parallel group when none is asked for: the optimizer states
// split (Megatron's distributed optimizer, ZeRO-1) for a full fine-tune; adapters are small
// enough to replicate.
Sharding layout_sharding(const Workload& w);
// UserError unless the groups fit the topology: tensor parallelism within one node.
void check_layout_topology(const Layout& l, const Topology& t);

// Share of pipeline time lost to the bubble, relative to the m micro-batches' own time:
// (pp − 1) / (vpp · m) (Narayanan et al. 2021 §2.2: 1F1B; interleaved divides it by vpp).
double pipeline_bubble_fraction(const Layout& l, std::int64_t micro_batches);
// Micro-batches whose activations a stage holds at once under 1F1B: min(pp − stage, m); the
// interleaved schedule holds (1 + (pp − 1)/(pp · vpp)) times more (Korthikanti et al. 2022 §4.2.3).
double inflight_micro_batches(const Layout& l, std::int64_t micro_batches, const Stage& s);

// The share of tensor `t` a card of stage `s` holds (1: all of it): blocks by the stage's layers
// and their split, experts over tp × ep, embedding on the first stage (and a tied copy on the
// last) and the output layer on the last, both split over tp; vision parts on the first stage.
double tensor_share(const TensorSpec& t, const ModelArch& a, const Layout& l, const Stage& s);
// Model states of one card of stage `s` before ZeRO/FSDP sharding, expert tensors apart (they
// are sharded over the expert-data-parallel ranks, dp·cp/ep, the rest over dp·cp).
struct StageStates {
  ModelStates dense;
  ModelStates experts;
  ModelStates total() const;
};
StageStates stage_states(const Workload& w, const TrainedSet& set, const Layout& l, const Stage& s);
// The states of each edge stage of `l` (stage_states for edge_stages): they depend on the run
// and the layout, not on the micro-batch, recomputation or card count, so the planner computes
// them once per layout.
struct LayoutStates {
  EdgeStages stages;
  std::array<StageStates, 2> states;  // parallel to stages[i]
};
LayoutStates layout_states(const Workload& w, const TrainedSet& set, const Layout& l);
// The data-parallel group of a model-parallel placement as one data-parallel placement: dp × cp
// cards (the context-parallel ranks hold the same weights), no layout. What its gradients are
// reduced over and its states sharded over.
Placement data_parallel_group(const Placement& p);
// ZeRO/FSDP over the data-parallel groups of `cards` cards.
ModelStates shard_stage_states(const StageStates& s, Sharding sharding, const Layout& l, int cards);

// The activation profile of one card of stage `s` for the sequence one card sees (seq / cp): the
// blocks' terms over tp (sequence parallelism splits every one of them), the stage's layers and
// its micro-batches in flight; the output layer's and the loss's terms on the last stage only.
ActivationProfile stage_profile(const ActivationProfile& whole, const ModelArch& a, const Layout& l,
                                const Stage& s, std::int64_t micro_batches);

// One card's ops of stage `s` for one micro-batch: block ops for the stage's layers with tokens
// over cp and the weight dimension over tp (experts: ep times more tokens each, ep times fewer
// experts), embedding ops on the first stage and output-layer ops on the last; the optimizer over
// the share of the trained states the card holds (`trained_share`).
StepOps stage_step_ops(const StepOps& whole, const ModelArch& a, const Layout& l, const Stage& s,
                       double trained_share);

// What one card of stage `s` holds and computes per micro-batch: its model states before
// ZeRO/FSDP sharding, and its ops (stage_step_ops, the optimizer over the card's share of the
// replica's trained weights). `replica` = model_states(w, set).
struct CardWork {
  ModelStates states;
  StepOps ops;
};
CardWork card_work(const Workload& w, const TrainedSet& set, const ModelStates& replica,
                   const StepOps& whole, const Layout& l, const Stage& s);
// The same from the stage's states already known (stage_states(...).total()).
CardWork card_work(const ModelStates& stage, const ModelStates& replica, const StepOps& whole,
                   const ModelArch& a, const Layout& l, const Stage& s);

// What a layout's groups exchange per micro-batch on one card of a stage.
struct LayoutTraffic {
  struct Group {
    Bytes received;   // per card and micro-batch
    Seconds seconds;  // at the achieved rate of the link the group crosses
    LinkLevel link = LinkLevel::kNvlink;
    int collectives = 0;  // per micro-batch
  };
  // Tensor parallel with sequence parallelism: all-gather before and reduce-scatter after the
  // attention and the MLP of each layer, in the forward pass, the backward pass and a full
  // recomputation (Korthikanti et al. 2022 §4.2.2); exposed.
  Group tp;
  // Context parallel: ring attention passes each card's K and V chunk around the ring in the
  // forward pass, K, V and their gradients in the backward pass; hidden behind the attention core.
  Group cp;
  // Expert parallel: all-to-all dispatch and combine of each routed token copy per MoE layer,
  // forward and backward (and recomputation); exposed.
  Group ep;
  // Pipeline: the stage's activation out and its gradient back, per model chunk; exposed.
  Group pp;
};
LayoutTraffic layout_traffic(const Workload& w, const Layout& l, const Stage& s, const Topology& t,
                             const CommConstants& k);

}  // namespace ftplan
