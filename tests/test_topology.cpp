// Topologies as data: NVLink domains that end at the node (HGX) or span nodes (NVL72 racks), the
// peers a card reaches over each link level, and the collectives' traffic per level.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "comm/collectives.hpp"
#include "comm/topology.hpp"
#include "core/error.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

const CommConstants& constants() {
  static const CommConstants k = load_comm_constants(test::catalog());
  return k;
}

Topology topology(const std::string& gpu, int cards, const std::string& preset,
                  int cards_per_node = 0) {
  return build_topology(test::catalog().gpu(gpu), cards, preset, constants(), 0, cards_per_node);
}

TEST(Topology, RackScaleDomainSpansItsComputeTrays) {
  // GB200 NVL72: 72 cards in one NVLink domain, 4 per compute tray.
  const Topology rack = topology("b200", 72, "gb200-nvl72");
  EXPECT_EQ(rack.domain_cards, 72);
  EXPECT_EQ(rack.cards_per_node, 4);
  EXPECT_TRUE(rack.domain_spans_nodes());
  const Topology::Peers p = rack.peers();
  EXPECT_EQ(p.nvlink, 71);
  EXPECT_EQ(p.pcie, 0);
  EXPECT_EQ(p.network, 0);
  EXPECT_EQ(rack.slowest().level, LinkLevel::kNvlink);
  // An all-reduce of 1 GB: each card receives 2·(n−1)/n of it, all over NVLink.
  const CollectiveCost c = collective_cost(Collective::kAllReduce, Bytes(1e9), rack, constants());
  EXPECT_DOUBLE_EQ(c.over_nvlink.value, 2 * 1e9 / 72 * 71);
  EXPECT_EQ(c.over_pcie.value, 0);
  EXPECT_EQ(c.over_network.value, 0);
  EXPECT_EQ(c.slowest, LinkLevel::kNvlink);
}

TEST(Topology, RingsCrossTheNetworkOncePerNode) {
  // 16 H100 SXM in 2 nodes of 8: each card's share of its node's network, but a ring collective
  // carries what a card needs from the other node over all 8 NICs of the node together.
  const Topology t = topology("h100-sxm", 16, "nvswitch");
  ASSERT_EQ(t.nodes(), 2);
  EXPECT_DOUBLE_EQ(t.collective_rate(t.inter_node).value, t.inter_node.per_direction.value * 8);
  EXPECT_DOUBLE_EQ(t.collective_rate(t.intra_domain).value, t.intra_domain.per_direction.value);
  const CollectiveCost c = collective_cost(Collective::kAllGather, Bytes(16e9), t, constants());
  // Half the buffer lives in the other node: 8 GB cross into each node once, at the node's rate.
  EXPECT_DOUBLE_EQ(c.over_network.value, 8e9);
  EXPECT_NEAR(c.min_link_seconds.value, 8e9 / (t.inter_node.per_direction.value * 8), 1e-12);
}

TEST(Topology, TwoRacksMeetOverTheTraysNetwork) {
  const Topology two = topology("b200", 144, "gb200-nvl72");
  EXPECT_EQ(two.domains(), 2);
  EXPECT_EQ(two.network_groups(), 2);
  const Topology::Peers p = two.peers();
  EXPECT_EQ(p.nvlink, 71);
  EXPECT_EQ(p.pcie, 0);
  EXPECT_EQ(p.network, 72);
  EXPECT_EQ(two.slowest().level, LinkLevel::kNetwork);
  // Four 400 Gb/s NICs per tray of four cards: 200 GB/s per tray, 50 GB/s per card and direction.
  EXPECT_DOUBLE_EQ(two.inter_node.per_direction.value, 50e9);
  bool named = false;
  for (const auto& n : two.notes)
    named = named || n.find("2 NVLink domains of 72") != std::string::npos;
  EXPECT_TRUE(named);
  // The run's own network figure still wins over the preset's.
  const Topology given =
      build_topology(test::catalog().gpu("b200"), 144, "gb200-nvl72", constants(), 100);
  EXPECT_DOUBLE_EQ(given.inter_node.per_direction.value, 25e9);
}

TEST(Topology, BaseboardDomainEndsAtTheNode) {
  // An NVSwitch baseboard is the node: with 4 cards per node, domains of 4.
  const Topology t = topology("h100-sxm", 16, "nvswitch", 4);
  EXPECT_EQ(t.domain_cards, 4);
  EXPECT_FALSE(t.domain_spans_nodes());
  const Topology::Peers p = t.peers();
  EXPECT_EQ(p.nvlink, 3);
  EXPECT_EQ(p.pcie, 0);
  EXPECT_EQ(p.network, 12);
  // Bridged pairs in an 8-card node: NVLink to the partner, PCIe to the other six.
  const Topology bridged = topology("h200-nvl", 8, "nvlink-bridge-2");
  EXPECT_EQ(bridged.peers().nvlink, 1);
  EXPECT_EQ(bridged.peers().pcie, 6);
  EXPECT_EQ(bridged.peers().network, 0);
}

TEST(Topology, PeersAddUpForEveryPresetAndCount) {
  for (const auto& preset : constants().presets)
    for (const auto& gpu : test::catalog().gpus())
      for (int cards : {1, 2, 3, 8, 9, 72, 100}) {
        Topology t;
        try {
          t = build_topology(gpu, cards, preset.name, constants());
        } catch (const UserError&) {
          continue;  // a preset the card cannot have
        }
        const Topology::Peers p = t.peers();
        EXPECT_GE(p.nvlink, 0);
        EXPECT_GE(p.pcie, 0);
        EXPECT_GE(p.network, 0);
        EXPECT_EQ(p.nvlink + p.pcie + p.network, cards - 1) << preset.name << " " << gpu.id;
      }
}

TEST(Topology, ARackOfOtherCardsIsRefused) {
  try {
    topology("h100-sxm", 72, "gb200-nvl72");
    FAIL() << "an NVL72 rack of H100 SXM accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("b200"), std::string::npos) << e.what();
    EXPECT_EQ(e.field(), "topology");
  }
}

// PCIe peer-to-peer: on where the card's data allows it, off on a GeForce card whose driver has
// none; off stages every transfer through host memory: NCCL's SHM latency per ring step, and a rate
// the host's memory bounds, as it carries each byte twice.
TEST(Topology, WithoutPeerToPeerTrafficIsStagedThroughHostMemory) {
  const CommConstants& k = constants();
  const GpuSpec& geforce = test::catalog().gpu("rtx-4090");
  EXPECT_FALSE(geforce.pcie.p2p);
  EXPECT_TRUE(test::catalog().gpu("rtx-pro-6000").pcie.p2p);
  const Topology off = build_topology(geforce, 8, "", k);
  EXPECT_FALSE(off.p2p);
  // 8 cards on the node: 409.6 GB/s of host memory / (2 × 8) = 25.6 GB/s per card and direction,
  // below the Gen4 x16 link's 32.
  EXPECT_NEAR(off.intra_node.per_direction.value, k.host_memory_GBps_per_node * 1e9 / 16, 1);
  EXPECT_LT(off.intra_node.per_direction.value, geforce.pcie.per_direction().value);
  EXPECT_DOUBLE_EQ(off.intra_node.step_latency.value, k.no_p2p_step_latency.value);
  bool noted = false;
  for (const auto& n : off.notes)
    noted |= n.find("no PCIe peer-to-peer") != std::string::npos;
  EXPECT_TRUE(noted);
  // Two cards: the link, not host memory, bounds the rate; the latency still grows.
  const Topology two = build_topology(geforce, 2, "", k);
  EXPECT_DOUBLE_EQ(two.intra_node.per_direction.value, geforce.pcie.per_direction().value);
  // Forced on, the same card runs as peer-to-peer PCIe; the all-reduce takes longer without.
  const Topology on = build_topology(geforce, 8, "", k, 0, 0, P2p::kOn);
  EXPECT_TRUE(on.p2p);
  EXPECT_DOUBLE_EQ(on.intra_node.per_direction.value, geforce.pcie.per_direction().value);
  const Bytes size(1e9);
  EXPECT_GT(collective_cost(Collective::kAllReduce, size, off, k).estimated_seconds.value,
            collective_cost(Collective::kAllReduce, size, on, k).estimated_seconds.value);
  EXPECT_EQ(parse_p2p("off"), P2p::kOff);
  try {
    parse_p2p("of");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("off"), std::string::npos) << e.what();
  }
}

TEST(Topology, PeerToPeerIsAnOptionOfScaleAndRunsFiles) {
  auto run = [](const char* p2p) {
    auto r =
        test::run_cli({"scale", "--model", "llama-3.1-8b", "--method", "full", "--gpu",
                       "rtx-pro-6000", "--gpus", "8", "--shard", "fsdp", "--p2p", p2p, "--json"});
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto on = run("auto"), off = run("off");
  EXPECT_GT(off["comm_seconds_per_step"].get<double>(), on["comm_seconds_per_step"].get<double>());
  auto bad = test::run_cli({"scale", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                            "rtx-pro-6000", "--gpus", "2", "--p2p", "maybe"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("auto"), std::string::npos) << bad.err;
  const std::string runs =
      "runs:\n  - {name: r, model: llama-3.1-8b, method: lora, tokens: 1e6, seq: 2048, "
      "global_batch: 8}\n";
  const std::string path = ::testing::TempDir() + "/p2p-runs.yaml";
  auto plan = [&](const std::string& candidates) {
    std::ofstream(path) << candidates << runs;
    return test::run_cli({"plan", path, "--gpu", "rtx-4090", "--json"});
  };
  const auto forced = plan("candidates: {p2p: off, counts: [1, 2]}\n");
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_EQ(nlohmann::json::parse(forced.out)["candidates"]["p2p"], "off");
  const auto typo = plan("candidates: {p2p: of}\n");
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("p2p"), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("did you mean on, off"), std::string::npos) << typo.err;
}

}  // namespace
}  // namespace ftplan
