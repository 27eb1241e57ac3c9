#include "comm/collectives.hpp"

#include <algorithm>

namespace ftplan {

std::string_view collective_name(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "all-reduce";
    case Collective::kAllGather:
      return "all-gather";
    case Collective::kReduceScatter:
      return "reduce-scatter";
  }
  return "?";
}

double bus_factor(Collective c, int n) {
  if (n <= 1) return 0;
  const double share = static_cast<double>(n - 1) / n;
  return c == Collective::kAllReduce ? 2 * share : share;
}

int ring_steps(Collective c, int n) {
  if (n <= 1) return 0;
  return c == Collective::kAllReduce ? 2 * (n - 1) : n - 1;
}

CollectiveCost collective_cost(Collective c, Bytes size, const Topology& t,
                               const CommConstants& k) {
  CollectiveCost out;
  out.kind = c;
  out.size = size;
  const int n = t.cards;
  if (n <= 1) return out;
  out.received_per_card = size * bus_factor(c, n);
  // Each card holds 1/n of the buffer. Of the (n−1)/n it must receive, (k−1)/n comes from its
  // NVLink domain, (m−k)/n from the other domains of its node, (n−m)/n from other nodes
  // (k = domain size, m = cards per node). All-reduce moves this twice (reduce-scatter +
  // all-gather).
  const double per_card = size.value / n * (c == Collective::kAllReduce ? 2 : 1);
  const Topology::Peers peers = t.peers();
  out.over_nvlink = Bytes(per_card * peers.nvlink);
  out.over_pcie = Bytes(per_card * peers.pcie);
  out.over_network = Bytes(per_card * peers.network);
  auto level_time = [&](Bytes b, const Link& l) {
    return b.value > 0 ? b / t.collective_rate(l) : Seconds(0);
  };
  out.min_link_seconds = std::max({level_time(out.over_nvlink, t.intra_domain),
                                   level_time(out.over_pcie, t.intra_node),
                                   level_time(out.over_network, t.inter_node)});
  const Link& slow = t.slowest();
  out.slowest = slow.level;
  out.estimated_seconds =
      k.base_latency + slow.step_latency * ring_steps(c, n) +
      out.received_per_card / (t.collective_rate(slow) * slow.achieved_fraction);
  return out;
}

}  // namespace ftplan
