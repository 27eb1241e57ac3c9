// How the cards of a run are joined: NVLink domains (bridges or a switch), PCIe between domains,
// a network between nodes (seed § "Mehr als eine Karte: NVLink gegen PCIe").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "core/units.hpp"

namespace ftplan {

enum class LinkLevel { kNvlink, kPcie, kNetwork };
std::string_view link_level_name(LinkLevel l);

// One kind of link with its cost constants (data/comm/links.yaml).
struct Link {
  LinkLevel level = LinkLevel::kPcie;
  std::string name;                // "NVLink 4 bridge", "PCIe Gen5 x16", "network"
  BytesPerSecond per_direction;    // nominal, per card and direction
  Seconds step_latency;            // per ring step (NCCL hwLat)
  double achieved_fraction = 1.0;  // large-message bus bandwidth / nominal (nccl-tests)
};

// An achieved fraction of a link kind measured on one card (ftplan calibrate import of an
// ftplan-nccl/1 file; comm/link_calibration): replaces the default fraction for that card.
struct LinkCalibration {
  std::string card;  // catalog id
  LinkLevel level = LinkLevel::kNvlink;
  double achieved_fraction = 1.0;  // large-message bus bandwidth / nominal per direction
  std::string file;                // where it was read from
  std::string basis;               // how it was measured
};

// Constants of the collective model, read once from data/comm/*.yaml.
struct CommConstants {
  Seconds base_latency;
  Seconds nvlink_step_latency, pcie_step_latency, network_step_latency;
  double nvlink_fraction = 1, pcie_fraction = 1, network_fraction = 1;
  // Measured fractions (--calibration), each for one card and link kind.
  std::vector<LinkCalibration> link_calibrations;
  // Link calibration: all-reduces from this buffer size on make the large-message bus bandwidth.
  Bytes calibration_large_message;
  int cards_per_node = 8;
  double network_GBps_per_node = 50;
  double ddp_bucket_MB = 25;
  // CPU offload (comm/offload): host copies at this fraction of the card's PCIe rate; the host's
  // optimizer step at update_fraction of the node's memory bandwidth, shared by its cards.
  double host_copy_fraction = 1;
  Seconds no_p2p_step_latency;  // per ring step where NCCL stages through host memory
  double host_memory_GBps_per_node = 0;
  double host_update_fraction = 1;
  struct Preset {
    std::string name;
    std::string description;
    std::string link;  // "pcie" | "nvlink-bridge" | "nvswitch"
    int domain_cards = 1;
    // The NVLink domain ends at the node (an HGX baseboard: at most the node's cards), or spans
    // nodes (a rack-scale domain such as NVL72: many compute trays, one NVLink domain).
    bool domain_within_node = true;
    int cards_per_node = 0;            // the system's own node size; 0: the run's (default 8)
    double network_GBps_per_node = 0;  // the system's NICs per node and direction; 0: default
    int nics_per_node = 0;             // how many NICs make that rate; 0: not stated
    std::vector<std::string> gpus;     // cards the system is built with; empty: any with the link
    std::string note;                  // what a user must know about the preset
  };
  std::vector<Preset> presets;
  std::vector<std::string> preset_names() const;
  // A named node network (data/comm/networks.yaml): NICs of one rate, so many per node.
  struct Network {
    std::string name;
    std::string description;
    std::string fabric;  // "infiniband" | "ethernet" | "efa"
    double nic_Gbps = 0;
    int nics_per_node = 1;
    bool rail_optimised = false;  // one NIC per GPU, each rail on its own leaf switch
    double step_latency_us = 0;   // 0: the default network step latency
    // Per direction, in GB/s (10^9 bytes): one NIC, and `nics` of them.
    double nic_GBps() const { return nic_Gbps / 8; }
    double GBps_per_node(int nics) const { return nics * nic_GBps(); }
  };
  std::vector<Network> networks;
  std::vector<std::string> network_names() const;
  const Network* network(std::string_view name) const;
  // The achieved fraction of `level` on `gpu`: its calibration if one was given, else the default.
  double achieved_fraction(LinkLevel level, const GpuSpec& gpu) const;
  const LinkCalibration* calibration(LinkLevel level, const GpuSpec& gpu) const;
};

CommConstants load_comm_constants(const Catalog& catalog);

// The network a run's nodes use, as reported (ftplan scale --json "network").
struct NodeNetwork {
  std::string name = "default";  // a networks.yaml name, a preset's, "default" or "custom"
  double GBps_per_node = 0;      // per direction
  int nics_per_node = 1;         // 0: not stated
  bool rail_optimised = false;
};

// How the nodes of a run are built (ftplan scale --network, --nics-per-node, --network-GBps,
// --cards-per-node); zero or empty: the preset's or the default.
struct NodeOptions {
  std::string network;               // a name in data/comm/networks.yaml
  int nics_per_node = 0;             // NICs per node (default: the network's)
  double network_GBps_per_node = 0;  // overrides the rate the NICs give
  int cards_per_node = 0;
};

struct Topology {
  std::string preset;
  int cards = 1;
  int domain_cards = 1;  // cards per NVLink domain (1: no NVLink)
  int cards_per_node = 8;
  Link intra_domain;  // within an NVLink domain (unused when domain_cards == 1)
  Link intra_node;    // between domains of one node: PCIe
  Link inter_node;    // between nodes: the network (share of the node's bandwidth per card)
  std::vector<std::string> notes;  // caveats a user must know (peer-to-peer, bridge limits, ...)
  bool p2p = true;                 // PCIe peer-to-peer between the cards
  NodeNetwork network;             // the network between nodes

  int domains() const { return (cards + domain_cards - 1) / domain_cards; }
  int nodes() const { return (cards + cards_per_node - 1) / cards_per_node; }
  // Cards in the same node as a given card, and in the same NVLink domain.
  int node_cards() const { return cards < cards_per_node ? cards : cards_per_node; }
  int domain_size() const { return cards < domain_cards ? cards : domain_cards; }
  // A rack-scale NVLink domain holds several nodes: no PCIe tier, the network joins domains.
  bool domain_spans_nodes() const { return domain_cards > cards_per_node; }
  // The other cards of a run one card reaches over each link level: its NVLink domain, the
  // other domains of its node over PCIe, the rest over the network.
  struct Peers {
    int nvlink = 0;
    int pcie = 0;
    int network = 0;
  };
  Peers peers() const;
  // Groups the network joins: nodes, or rack-scale domains.
  int network_groups() const { return domain_spans_nodes() ? domains() : nodes(); }
  // The slowest link a ring over all cards crosses.
  const Link& slowest() const;
  // The rate a ring collective gets on a link level, per card and direction. NCCL's rings (one
  // per NIC) cross between network groups (nodes, or rack-scale NVLink domains) once per group:
  // each byte a group needs enters it once and spreads inside it over the faster links, so the
  // network carries it over all the group's NICs together, not over one card's share.
  BytesPerSecond collective_rate(const Link& l) const;
  const Link& link(LinkLevel level) const {
    return level == LinkLevel::kNvlink ? intra_domain
           : level == LinkLevel::kPcie ? intra_node
                                       : inter_node;
  }
};

// The best topology the card supports for `cards` cards: an NVSwitch baseboard for SXM parts,
// bridges of the largest size the card allows, else PCIe.
std::string default_topology(const GpuSpec& gpu, int cards);

// PCIe peer-to-peer between the cards: as the card's data says (kAuto), or forced.
enum class P2p { kAuto, kOn, kOff };
P2p parse_p2p(std::string_view text, std::string_view field = "p2p");
std::string_view p2p_name(P2p p);

// Builds the topology; a preset the card cannot have (NVLink on an RTX PRO 6000, a 4-way bridge
// on a card whose bridge joins 2) is a UserError naming the reason. `network_GBps_per_node` <= 0
// takes the default. Without peer-to-peer (`p2p`, by default the card's own data) the PCIe tier
// is staged through host memory: NCCL's SHM latency per step, and a rate the node's host memory
// bounds, as it carries every byte twice.
Topology build_topology(const GpuSpec& gpu, int cards, std::string_view preset,
                        const CommConstants& constants, double network_GBps_per_node = 0,
                        int cards_per_node = 0, P2p p2p = P2p::kAuto);
// The same with a named network (an unknown name is a UserError naming the closest ones) and
// its NIC count: the node's rate is NICs x the NIC's rate, unless `nodes.network_GBps_per_node`
// sets it.
Topology build_topology(const GpuSpec& gpu, int cards, std::string_view preset,
                        const CommConstants& constants, const NodeOptions& nodes,
                        P2p p2p = P2p::kAuto);
// The topology a group of `size` cards spaced `stride` ranks apart sees: its members share NVLink
// domains and nodes only as far as the stride allows, and each gets its card's share of the NICs.
Topology group_topology(const Topology& t, int size, int stride);
// The node size a run gets: `cards_per_node` if given, else the preset's, else the default.
int node_size(const CommConstants& constants, std::string_view preset, int cards_per_node = 0);

}  // namespace ftplan
