// CPU offload as it costs time: the copies between a card and host memory over the card's PCIe
// link, and the optimizer step on the host (ZeRO-Offload, FSDP CPU offload, activation offloading).
// Copies that prefetch (parameters, saved activations) run beside the pass that needs them; the
// gradients' trip to the host, the host's update and the parameters' trip back follow the last
// backward pass and hide behind nothing (Ren et al. 2021 §4; the DeepSpeed ZeRO-Offload tutorial).
#pragma once

#include "comm/topology.hpp"
#include "memory/model_states.hpp"
#include "workload/workload.hpp"

namespace ftplan {

struct OffloadTime {
  bool any = false;             // some state or activation lives in host memory
  bool update_on_host = false;  // the optimizer step runs on the CPU
  // Per card and micro-batch, each direction: prefetched parameters and offloaded activations in
  // the forward pass; parameters, activations back and gradients out in the backward pass.
  Bytes forward_to_card, forward_to_host;
  Bytes backward_to_card, backward_to_host;
  // Per card and step: gradients to the host before the update, parameters back after it.
  Bytes step_to_host, step_to_card;
  Bytes host_update;           // host memory read and written by this card's share of the update
  BytesPerSecond copy_rate;    // per direction: the card's PCIe link at the achieved fraction
  BytesPerSecond update_rate;  // this card's share of the host memory bandwidth, as achieved
  Seconds forward_copies;      // per micro-batch: the slower direction
  Seconds backward_copies;
  Seconds step_copies;  // per step
  Seconds update;       // per step: the host's optimizer step for this card's share
};

// `saved_activations`: the bytes one micro-batch saves for the backward pass (moved to the host
// and back when activations are offloaded).
OffloadTime offload_time(const Workload& w, const ModelStates& replica, const Placement& p,
                         Bytes saved_activations, const CommConstants& k);

}  // namespace ftplan
