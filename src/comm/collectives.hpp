// Cost of ring collectives on a topology: latency + bytes / bandwidth (NCCL's model,
// src/graph/tuning.cc; bus factors from nccl-tests doc/PERFORMANCE.md).
#pragma once

#include <string_view>

#include "comm/topology.hpp"
#include "core/units.hpp"

namespace ftplan {

enum class Collective { kAllReduce, kAllGather, kReduceScatter };
std::string_view collective_name(Collective c);

// Bytes each card receives (and sends) per byte of the full buffer: all-reduce 2(n−1)/n,
// all-gather and reduce-scatter (n−1)/n.
double bus_factor(Collective c, int cards);
// Ring steps: all-reduce 2(n−1), all-gather and reduce-scatter n−1.
int ring_steps(Collective c, int cards);

struct CollectiveCost {
  Collective kind = Collective::kAllReduce;
  Bytes size;               // the full buffer (e.g. all gradients, the whole gathered weight)
  Bytes received_per_card;  // size × bus factor
  // Of those, the bytes that must cross each level (the rest of the card's data comes from
  // cards nearer to it): within the NVLink domain, over PCIe inside the node, over the network.
  Bytes over_nvlink, over_pcie, over_network;
  Seconds min_link_seconds;   // lower bound: slowest level's bytes / its nominal per-direction rate
  Seconds estimated_seconds;  // ring at the slowest crossed link's achieved rate + latency
  LinkLevel slowest = LinkLevel::kPcie;  // the slowest link crossed (see Topology::link)
};

CollectiveCost collective_cost(Collective c, Bytes size, const Topology& t, const CommConstants& k);

}  // namespace ftplan
