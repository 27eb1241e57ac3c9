#include "comm/offload.hpp"

#include <algorithm>

namespace ftplan {

OffloadTime offload_time(const Workload& w, const ModelStates& replica, const Placement& p,
                         Bytes saved_activations, const CommConstants& k) {
  OffloadTime o;
  const TrainingOptions& opt = w.options;
  o.any = opt.offload_optimizer || opt.offload_parameters || opt.offload_activations;
  if (!o.any || !p.gpu) return o;
  const int cards = p.mig ? 1 : std::max(1, p.count);
  // Hybrid sharding: the states of FSDP over one shard group.
  const Placement v = sharding_view(p);
  const int shards = v.mig ? 1 : std::max(1, v.count);
  const ModelStates s = shard_states(replica, v.sharding, shards);
  // The card's share of the update: ZeRO-1/2 and FSDP split the optimizer over the cards.
  const bool split =
      shards > 1 && (v.sharding == Sharding::kZero1 || v.sharding == Sharding::kZero2 ||
                     v.sharding == Sharding::kFsdp);
  const double share = split ? 1.0 / shards : 1.0;
  const Bytes grads = replica.gradients * share, weights16 = replica.trained_weights * share;
  o.copy_rate = p.gpu->pcie.per_direction() * k.host_copy_fraction;
  const int node_cards = std::min(cards, k.cards_per_node);
  o.update_rate =
      bytes_per_second_from_GBps(k.host_memory_GBps_per_node / node_cards) * k.host_update_fraction;

  if (opt.offload_activations) {
    o.forward_to_host += saved_activations;
    o.backward_to_card += saved_activations;
  }
  // FSDP CPU offload: the shard of every parameter lives on the host and comes to the card for
  // the forward and again for the backward pass; its gradients go back every micro-batch; the
  // optimizer steps the host's copy, so nothing returns after the update.
  if (opt.offload_parameters) {
    const Bytes weights = s.frozen_weights + s.trained_weights + s.quantization_constants;
    o.forward_to_card += weights + s.reference_weights;
    o.backward_to_card += weights;
    o.backward_to_host += s.gradients;
    o.update_on_host = true;
  } else if (opt.offload_optimizer) {
    // ZeRO-Offload: the gradients go to the host once the backward passes are done, the updated
    // 16-bit parameters come back.
    o.step_to_host = grads;
    o.step_to_card = weights16;
    o.update_on_host = true;
  }
  if (o.update_on_host) {
    // Read the gradient; read and write the master copy and the states; write the 16-bit copy
    // (read and written where it is itself the master, in pure 16-bit training).
    const bool master = replica.master_weights.value > 0;
    o.host_update = grads + (replica.master_weights + replica.optimizer_states) * (2.0 * share) +
                    weights16 * (master ? 1.0 : 2.0);
  }
  auto copy = [&](Bytes a, Bytes b) {
    return o.copy_rate.value > 0 ? Seconds(std::max(a.value, b.value) / o.copy_rate.value)
                                 : Seconds();
  };
  o.forward_copies = copy(o.forward_to_card, o.forward_to_host);
  o.backward_copies = copy(o.backward_to_card, o.backward_to_host);
  o.step_copies = copy(o.step_to_card, Bytes()) + copy(o.step_to_host, Bytes());
  if (o.update_rate.value > 0) o.update = Seconds(o.host_update.value / o.update_rate.value);
  return o;
}

}  // namespace ftplan
