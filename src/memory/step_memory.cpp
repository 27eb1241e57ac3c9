#include "memory/step_memory.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "core/format.hpp"
#include "workload/objective.hpp"
#include "workload/roles.hpp"

namespace ftplan {

namespace {

// Each phase's words: in sentences, as the JSON's id, in a table's heading.
struct PhaseWords {
  StepPhase phase;
  std::string_view name, id, word;
};
constexpr PhaseWords kPhaseWords[] = {
    {StepPhase::kLoss, "loss and output layer (end of the forward pass)", "loss", "loss"},
    {StepPhase::kBlockBackward, "backward pass of a block", "block-backward", "backward"},
    {StepPhase::kOptimizerUpdate, "optimizer update (after the backward pass)", "optimizer-update",
     "optimizer update"},
};

const PhaseWords& words_of(StepPhase phase) {
  for (const PhaseWords& w : kPhaseWords)
    if (w.phase == phase) return w;
  return kPhaseWords[0];  // unreachable: every phase has a row
}

}  // namespace

std::string_view step_phase_name(StepPhase phase) {
  return words_of(phase).name;
}

std::string_view step_phase_id(StepPhase phase) {
  return words_of(phase).id;
}

std::string_view step_phase_word(StepPhase phase) {
  return words_of(phase).word;
}

std::string_view StepMemory::largest_term() const {
  const std::pair<Bytes, std::string_view> terms[] = {
      {saved_activations, "saved activations of the decoder blocks"},
      {logits_and_loss, "logits and loss of the output layer"},
      {recompute, "recomputed activations of one block"},
      {backward_transient, "gradients of one block's activations"},
      {gradients, "model gradients produced in the backward pass"},
      {dequant_buffer, phase == StepPhase::kLoss ? "16-bit cast of the FP32 output layer"
                                                 : "dequantized weight buffer"},
      {gathered_params, "all-gathered parameters (FSDP)"},
      {scoring_logits, "logits of the reference model's forward pass"},
      {update_temporaries, "temporaries of the optimizer update"},
  };
  const auto* best =
      std::max_element(std::begin(terms), std::end(terms),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
  return best->second;
}

StepMemory step_memory(const ActivationProfile& prof, const OnCardStates& states, const Workload& w,
                       const Placement& p) {
  const std::int64_t s = w.seq, b = w.sequences_per_micro_batch();
  const bool fsdp = p.sharding == Sharding::kFsdp && p.count > 1 && !p.mig;
  const bool gathered = fsdp || w.options.offload_parameters;
  // Saved activations on the card: all blocks', or, offloaded, one block's worth in flight
  // (torchtune OffloadActivations moves them to host memory as they are produced).
  const Bytes saved_one = prof.saved_one.at(s, b);
  const Bytes saved = w.options.offload_activations ? saved_one : prof.saved_all.at(s, b);

  // Loss phase: every block's saved activations, the output layer's inputs, the logits and the
  // loss, and the gradient of the final hidden state; under FSDP the output layer's weight is
  // all-gathered.
  StepMemory loss;
  loss.phase = StepPhase::kLoss;
  loss.saved_activations = saved;
  loss.logits_and_loss =
      prof.output_saved.at(s, b) + prof.logits.at(s, b) + prof.hidden_gradient.at(s, b);
  // FSDP does not reshard the root unit after forward (FSDP1 _post_forward_reshard frees only
  // non-root units; FSDP2 likewise): what no block holds (the embeddings, the final norm, the
  // output layer) stays gathered from the forward pass through the backward pass, which reshards
  // it before the optimizer update. Elsewhere the output layer alone is gathered for the loss.
  const bool root_resident = w.stack && w.stack->fsdp_root_unsharded && fsdp;
  Bytes root_gathered{0};
  if (root_resident) {
    // The card's own shard is already there (all of it is gathered when offloaded to the host).
    const double shards = static_cast<double>(p.count);
    root_gathered = prof.root_params * (w.options.offload_parameters ? 1.0 : 1.0 - 1.0 / shards);
    loss.gathered_params = root_gathered;
  } else if (gathered) {
    loss.gathered_params = prof.output_params;
  }
  // An FP32 output layer's 16-bit cast, kept from its product to its backward pass.
  loss.dequant_buffer = prof.head_cast;
  // A preference objective scores the micro-batch again without gradient after the policy's
  // forward pass (TRL: the reference's log-probabilities, KTO's KL batch), one pass at a time,
  // while the policy's logits are still held for the backward pass.
  if (no_grad_forward_passes(w) > 0) loss.scoring_logits = prof.scoring_logits.at(s, b);
  // The output layer's backward, which follows: the logits' 16-bit gradient (under a chunked loss
  // every chunk's, since autograd runs each chunk's loss backward before any chunk's output
  // product, made earlier in the forward pass), the final hidden state's gradient and, when the
  // head is trained, its weight gradient. Where that gradient is accumulated (one partial
  // product per chunk, or into gradients kept from an earlier micro-batch), each partial comes
  // in a second head-sized buffer before it is added.
  if (prof.logits_gradient.per_token > 0) {
    // The head's gradient shard as produced: in FP32 where the stack shards FP32 parameters.
    const double scale = states.fp32_parameter_shift.value > 0 ? 2.0 : 1.0;
    const Bytes head = prof.head_gradients * (scale / (fsdp ? static_cast<double>(p.count) : 1.0));
    const bool accumulated =
        w.options.effective_loss() == LossKind::kChunked || states.gradients_persistent;
    StepMemory out = loss;
    out.logits_and_loss = prof.output_saved.at(s, b) + prof.logits_gradient.at(s, b) +
                          prof.hidden_gradient.at(s, b) + prof.held_logits.at(s, b);
    out.scoring_logits = Bytes(0);
    out.gradients =
        (states.gradients_persistent ? Bytes(0) : std::min(states.gradients_first, head)) +
        (accumulated ? head : Bytes(0));
    if (out.total() > loss.total()) loss = out;
  }

  // A loop that keeps its output bound until the model returns the next one (the stack's
  // memory.loss.previous_graph_held) holds the previous micro-batch's logits, and through them its
  // graph, for the whole of this forward pass. At the pass's end the card holds every block's
  // saved activations, this micro-batch's returned logits, the previous ones, and what the
  // previous graph's nodes keep as plain attributes (the quantized layers' inputs); rebinding
  // the output frees the last two before the loss.
  if (prof.previous_graph_inputs.per_token > 0) {
    StepMemory returned;
    returned.phase = StepPhase::kLoss;
    returned.saved_activations = saved + prof.previous_graph_inputs.at(s, b);
    returned.logits_and_loss = prof.output_saved.at(s, b) + prof.held_logits.at(s, b) * 2.0;
    returned.gathered_params = loss.gathered_params;
    returned.dequant_buffer = loss.dequant_buffer;
    if (returned.total() > loss.total()) loss = returned;
  }

  // Block phase: one block's backward (recomputed activations and the gradients of its
  // activations), the dequantized weight, the FSDP working set (this block and the prefetched
  // next one, FSDP2's default, plus this block's unsharded gradients), while the model's
  // gradients are produced. Saved activations shrink and gradients grow block by block, so the
  // phase peaks at one end: its start (every block's activations, the output layer's gradients)
  // or its end (all gradients, the first block's activations).
  StepMemory block;
  block.phase = StepPhase::kBlockBackward;
  block.recompute = prof.recompute.at(s, b);
  block.logits_and_loss = prof.held_logits.at(s, b);  // the loop's hold on the model's output
  block.backward_transient = prof.backward_transient.at(s, b);
  block.dequant_buffer = prof.dequant_buffer;  // zero unless a weight is materialised
  if (gathered) block.gathered_params = prof.layer_params * 2.0 + prof.layer_gradients;
  // FSDP's reduce-scatter reads a copy of a block's gradients on its own stream, and FSDP2 keeps
  // that copy until the next block's reduce-scatter is issued (FSDPCommContext
  // reduce_scatter_state): the previous block's gradients are still there as this block's are
  // produced.
  if (fsdp) block.gathered_params += prof.layer_gradients;
  block.gathered_params += root_gathered;
  // A reentrant checkpoint around an all-frozen FSDP1 unit (StackProfile::
  // fsdp1_reentrant_checkpoint): the unit hooks the recomputed block's detached input for its
  // reshard and drops the hook only when the backward pass ends, so each finished block keeps its
  // input and the input's gradient until then. At the last block's backward the card holds
  // twice every other block's checkpointed input, and that block's own.
  const Bytes end_saved =
      fsdp && fsdp1_reentrant_frozen_units(w) ? saved * 2.0 - saved_one : saved_one;
  const Bytes start = saved + states.gradients_first;
  const Bytes end = end_saved + states.gradients_produced;
  if (start >= end) {
    block.saved_activations = saved;
    block.gradients = states.gradients_first;
  } else {
    block.saved_activations = end_saved;
    block.gradients = states.gradients_produced;
  }

  // Update phase: the optimizer step, after the backward pass has freed the activations: every
  // gradient the backward pass produced (persistent ones are resident) and the update's
  // temporaries.
  StepMemory update;
  update.phase = StepPhase::kOptimizerUpdate;
  update.gradients = states.gradients_produced;
  update.update_temporaries = states.update_temporaries;

  StepMemory* phases[] = {&loss, &block, &update};
  StepMemory* peak = phases[0];
  for (StepMemory* m : phases)
    if (m->total() > peak->total()) peak = m;
  for (const StepMemory* m : phases)
    if (m != peak) peak->other_phase = std::max(peak->other_phase, m->total());
  return *peak;
}

LoadMemory load_memory(const Workload& w, const ActivationProfile& profile,
                       const ModelStates& per_card, const Placement& p,
                       const OverheadBreakdown& overheads) {
  LoadMemory l;
  // The weights as stored on the card; master weights, gradients and optimizer states are made
  // by the first step. FSDP CPU offload keeps the parameters on the host.
  const int cards = p.mig ? 1 : p.count;
  const bool full = w.stack && w.stack->load_full_on_each_card && p.sharding == Sharding::kFsdp;
  const double n = full ? static_cast<double>(cards) : 1.0;
  const double cast = w.stack ? w.stack->load_bytes_per_param / 2.0 : 1.0;
  if (!w.options.offload_parameters || full)
    l.weights = (per_card.frozen_weights + per_card.trained_weights) * (n * cast) +
                per_card.quantization_constants * n;
  // A quantized base is quantized at load one weight at a time: its 16-bit copy is in transit.
  if (method_traits(w.method).quantized_base) l.transient = profile.dequant_buffer;
  l.outside = overheads.outside_allocator();
  return l;
}

RuntimeMemory runtime_memory(const Workload& w, const ModelStates& per_card, const Placement& p,
                             Trace* trace) {
  return runtime_memory(w, activation_profile(w), per_card, p, trace);
}

RuntimeMemory runtime_memory(const Workload& w, const ActivationProfile& base_profile,
                             const ModelStates& per_card, const Placement& p, Trace* trace) {
  // A stack that leaves a sharded quantized base as loaded runs the profile without its casts.
  const ActivationProfile& profile = base_profile.placed(p);
  RuntimeMemory r;
  r.states = on_card_states(w, profile, per_card, p);
  r.step = step_memory(profile, r.states, w, p);
  r.activations = r.step.total();
  // The allocator's reserve follows the backward pass's churn: recomputation's share applies
  // when the backward pass rebuilds something.
  const bool rebuilds = profile.rebuilds();
  if (w.overheads) {
    const bool fsdp1 = w.stack && w.stack->fsdp1;
    r.overheads = overheads_for(*w.overheads, p, r.step.total(), rebuilds, fsdp1);
    // Accumulating gradients persist through the step, but zero_grad(set_to_none=True) frees
    // them between steps: each step's first micro-batch produces them in its backward pass, as
    // a step without accumulation does, and the allocator keeps what it cached then (reserved
    // memory only grows). The reserve covers that first micro-batch's reserved peak too.
    if (r.states.gradients_persistent && w.grad_accum > 1) {
      Workload first = w;
      first.grad_accum = 1;
      const OnCardStates s1 = on_card_states(first, profile, per_card, p);
      if (!s1.gradients_persistent) {
        const StepMemory m1 = step_memory(profile, s1, first, p);
        const OverheadBreakdown o1 = overheads_for(*w.overheads, p, m1.total(), rebuilds, fsdp1);
        const Bytes made = s1.resident + m1.total();
        const Bytes allocated = r.states.resident + r.step.total();
        auto cover = [&](Bytes& reserve, Bytes first_reserve) {
          if (made + first_reserve > allocated + reserve)
            reserve = made + first_reserve - allocated;
        };
        cover(r.overheads.allocator_reserve, o1.allocator_reserve);
        cover(r.overheads.allocator_reserve_low, o1.allocator_reserve_low);
        cover(r.overheads.allocator_reserve_high, o1.allocator_reserve_high);
      }
    }
    r.overhead = r.overheads.total(w.peak);
  }
  r.load = load_memory(w, profile, per_card, p, r.overheads);
  if (trace) {
    const StepMemory& m = r.step;
    trace->add({"memory.activations",
                "memory of one micro-batch at its peak (activations, logits, gradients, buffers)",
                to_GB(r.activations),
                "GB",
                "the larger of the loss phase (all saved activations + logits and loss) and a "
                "block's backward (recomputed activations + activation gradients + model "
                "gradients produced), plus dequantization and FSDP buffers",
                {{"peak phase", std::string(step_phase_name(m.phase))},
                 {"saved activations", format_GB(m.saved_activations, 3)},
                 {"logits and loss", format_GB(m.logits_and_loss, 3)},
                 {"recomputed block", format_GB(m.recompute, 3)},
                 {"activation gradients", format_GB(m.backward_transient, 3)},
                 {"model gradients", format_GB(m.gradients, 3)},
                 {m.phase == StepPhase::kLoss ? "FP32 output layer cast to 16 bits"
                                              : "dequantization buffer",
                  format_GB(m.dequant_buffer, 3)},
                 {"gathered parameters", format_GB(m.gathered_params, 3)},
                 {"reference logits", format_GB(m.scoring_logits, 3)},
                 {"other phase", format_GB(m.other_phase, 3)},
                 {"tokens per micro-batch", group_digits(w.tokens_per_micro_batch())},
                 {"recompute", std::string(recompute_name(w.recompute))},
                 {"attention", std::string(attention_name(w.attention))}},
                "Korthikanti et al. 2022 §4-5 per tensor shape; FlashAttention (Dao et al. "
                "2022); PyTorch autograd saved tensors"});
    trace->add({"memory.states_on_card",
                "model states on the card during the step",
                to_GB(r.states.resident),
                "GB",
                "model states per card − offloaded − paged optimizer states − gradients "
                "produced in the backward pass (counted in the micro-batch memory)",
                {{"offloaded to host", format_GB(r.states.host, 3)},
                 {"paged (host-evictable)", format_GB(r.states.paged, 3)},
                 {"gradients persist", r.states.gradients_persistent ? "yes" : "no"}},
                "ZeRO-Offload / FSDP CPU offload; QLoRA §3 paged optimizers; PyTorch zero_grad",
                {"memory.states_per_card"}});
    if (w.overheads)
      trace->add({"memory.overhead",
                  "runtime overhead per card",
                  to_GB(r.overhead),
                  "GB",
                  "CUDA context + cuBLAS and cuBLASLt workspaces + NCCL buffers (several cards) "
                  "+ allocator reserve (peak reserved: a share of the micro-batch memory, larger "
                  "with recomputation and under FSDP1 sharding)",
                  {{"CUDA context", format_GB(r.overheads.cuda_context, 3)},
                   {"cuBLAS + cuBLASLt workspaces", format_GB(r.overheads.inside_allocator(), 3)},
                   {"NCCL buffers", format_GB(r.overheads.nccl_buffers, 3)},
                   {"allocator reserve", format_GB(r.overheads.allocator_reserve, 3)},
                   {"recomputation", rebuilds ? "yes" : "no"},
                   {"FSDP1 share", r.overheads.reserve_fsdp1 ? "yes" : "no"},
                   {"peak kind", std::string(peak_kind_name(w.peak))}},
                  w.overheads->file,
                  {"memory.activations"}});
  }
  return r;
}

}  // namespace ftplan
