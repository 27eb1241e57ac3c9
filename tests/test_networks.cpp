// Node networks as data (data/comm/networks.yaml): each fabric's NICs and their rate, the rate
// per node they give, and ftplan scale's --network, --nics-per-node and --nodes.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "comm/topology.hpp"
#include "core/error.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;

const CommConstants& constants() {
  static const CommConstants k = load_comm_constants(test::catalog());
  return k;
}

TEST(Networks, FileLoadsWithTheNamedFabrics) {
  const auto names = constants().network_names();
  for (const char* want : {"ib-hdr-200", "ib-ndr-400", "ib-xdr-800", "roce-400", "roce-200",
                           "efa-p4d", "efa-p5", "ethernet-100"})
    EXPECT_NE(constants().network(want), nullptr) << want;
  EXPECT_EQ(names.size(), constants().networks.size());
}

TEST(Networks, EveryEntryCitesKnownSources) {
  // The loader rejects unknown ids and entries without one; read the file to see each has some.
  const DataFile* f = test::catalog().file("comm/networks.yaml");
  ASSERT_NE(f, nullptr);
  std::size_t names = 0, sources = 0;
  for (std::size_t at = 0; (at = f->text.find("\n  - name:", at)) != std::string::npos; ++at)
    ++names;
  for (std::size_t at = 0; (at = f->text.find("\n    source: [", at)) != std::string::npos; ++at)
    ++sources;
  EXPECT_EQ(names, constants().networks.size());
  EXPECT_EQ(sources, names);
}

TEST(Networks, RatePerNodeIsNicsTimesGbpsOverEight) {
  // Hand figures, per direction, GB = 10^9 bytes.
  const std::map<std::string, double> want = {
      {"ib-hdr-200", 8 * 200 / 8.0},  // 200 GB/s
      {"ib-ndr-400", 400},            // 8 x 400 Gb/s
      {"ib-xdr-800", 800},            // 8 x 800 Gb/s
      {"roce-400", 400},              // 8 x 400 GbE
      {"roce-200", 25},               // 1 x 200 GbE
      {"efa-p4d", 50},                // 4 x 100 Gb/s = 400 Gb/s
      {"efa-p5", 400},                // 3200 Gb/s
      {"ethernet-100", 12.5},         // 1 x 100 GbE
  };
  for (const auto& [name, GBps] : want) {
    const CommConstants::Network* n = constants().network(name);
    ASSERT_NE(n, nullptr) << name;
    EXPECT_DOUBLE_EQ(n->GBps_per_node(n->nics_per_node), GBps) << name;
  }
  const CommConstants::Network& ndr = *constants().network("ib-ndr-400");
  EXPECT_DOUBLE_EQ(ndr.nic_GBps(), 50);
  EXPECT_TRUE(ndr.rail_optimised);
  EXPECT_EQ(ndr.nics_per_node, 8);
}

TEST(Networks, TopologyTakesTheFabricAndItsNicCount) {
  const GpuSpec& gpu = test::catalog().gpu("h200-sxm");
  NodeOptions o;
  o.network = "ib-ndr-400";
  const Topology t = build_topology(gpu, 32, "", constants(), o);
  EXPECT_EQ(t.network.name, "ib-ndr-400");
  EXPECT_EQ(t.network.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(t.network.GBps_per_node, 400);
  // The node's rate shared by its 8 cards.
  EXPECT_DOUBLE_EQ(to_GBps(t.inter_node.per_direction), 50);
  o.nics_per_node = 1;
  EXPECT_DOUBLE_EQ(build_topology(gpu, 32, "", constants(), o).network.GBps_per_node, 50);
  // --network-GBps still overrides the rate.
  o.network_GBps_per_node = 123;
  EXPECT_DOUBLE_EQ(build_topology(gpu, 32, "", constants(), o).network.GBps_per_node, 123);
}

TEST(Networks, DefaultStaysOneNicOf400Gbps) {
  const Topology t = build_topology(test::catalog().gpu("h200-sxm"), 16, "", constants());
  EXPECT_EQ(t.network.name, "default");
  EXPECT_EQ(t.network.nics_per_node, 1);
  EXPECT_DOUBLE_EQ(t.network.GBps_per_node, 50);
}

TEST(Networks, SeveralNicsWithoutRailsSayUplinksMayBeShared) {
  NodeOptions o;
  o.network = "efa-p5";
  const Topology t = build_topology(test::catalog().gpu("h200-sxm"), 16, "", constants(), o);
  bool said = false;
  for (const auto& n : t.notes)
    said = said || n.find("may share switch uplinks") != std::string::npos;
  EXPECT_TRUE(said);
  o.network = "ib-ndr-400";
  for (const auto& n :
       build_topology(test::catalog().gpu("h200-sxm"), 16, "", constants(), o).notes)
    EXPECT_EQ(n.find("may share switch uplinks"), std::string::npos) << n;
}

TEST(Networks, UnknownNameInTopologyIsAUserError) {
  NodeOptions o;
  o.network = "ib-ndr400";
  try {
    build_topology(test::catalog().gpu("h200-sxm"), 16, "", constants(), o);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("ib-ndr-400"), std::string::npos) << e.what();
  }
}

json scale_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"scale", "--model", "llama-3.1-8b", "--method",
                                   "full",  "--gpu",   "h200-sxm",     "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = test::run_cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? json::parse(r.out) : json();
}

TEST(NetworksCli, NodesTimesCardsPerNodeAndMoreNicsCutNetworkTime) {
  const json one = scale_json({"--nodes", "4", "--network", "ib-ndr-400", "--nics-per-node", "1"});
  const json eight = scale_json({"--nodes", "4", "--network", "ib-ndr-400"});
  ASSERT_TRUE(one.is_object() && eight.is_object());
  EXPECT_EQ(one["topology"]["cards"], 32);
  EXPECT_EQ(one["topology"]["nodes"], 4);
  EXPECT_EQ(one["network"]["name"], "ib-ndr-400");
  EXPECT_EQ(one["network"]["nics_per_node"], 1);
  EXPECT_EQ(eight["network"]["nics_per_node"], 8);
  EXPECT_DOUBLE_EQ(one["network"]["GBps_per_node"].get<double>(), 50);
  EXPECT_DOUBLE_EQ(eight["network"]["GBps_per_node"].get<double>(), 400);
  EXPECT_EQ(eight["network"]["rail_optimised"], true);
  EXPECT_LT(eight["comm_seconds_per_step"].get<double>(),
            one["comm_seconds_per_step"].get<double>());
  EXPECT_LE(eight["step_seconds"].get<double>(), one["step_seconds"].get<double>());
  // --gpus that agrees is fine.
  EXPECT_EQ(scale_json({"--nodes", "2", "--gpus", "16"})["topology"]["cards"], 16);
}

TEST(NetworksCli, DefaultNetworkIsReported) {
  const json j = scale_json({"--gpus", "16"});
  EXPECT_EQ(j["network"]["name"], "default");
  EXPECT_DOUBLE_EQ(j["network"]["GBps_per_node"].get<double>(), 50);
  EXPECT_EQ(j["network"]["nics_per_node"], 1);
  EXPECT_EQ(j["network"]["rail_optimised"], false);
}

TEST(NetworksCli, BadInputIsExit2WithAReason) {
  const auto bad = test::run_cli({"scale", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                  "h200-sxm", "--network", "ib-ndr400"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("unknown network 'ib-ndr400'"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("did you mean ib-ndr-400"), std::string::npos) << bad.err;
  const auto clash = test::run_cli({"scale", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                    "h200-sxm", "--nodes", "4", "--gpus", "16"});
  EXPECT_EQ(clash.code, 2);
  EXPECT_NE(clash.err.find("--nodes 4 with 8 cards per node is 32 cards, but --gpus says 16"),
            std::string::npos)
      << clash.err;
  const auto zero = test::run_cli({"scale", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                   "h200-sxm", "--nodes", "0"});
  EXPECT_EQ(zero.code, 2);
}

}  // namespace
}  // namespace ftplan
