#include "comm/topology.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "catalog/figure_reader.hpp"
#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace ftplan {

std::string_view link_level_name(LinkLevel l) {
  switch (l) {
    case LinkLevel::kNvlink:
      return "nvlink";
    case LinkLevel::kPcie:
      return "pcie";
    case LinkLevel::kNetwork:
      return "network";
  }
  return "?";
}

std::vector<std::string> CommConstants::preset_names() const {
  std::vector<std::string> out;
  for (const auto& p : presets)
    out.push_back(p.name);
  return out;
}

std::vector<std::string> CommConstants::network_names() const {
  std::vector<std::string> out;
  for (const auto& n : networks)
    out.push_back(n.name);
  return out;
}

const CommConstants::Network* CommConstants::network(std::string_view name) const {
  for (const auto& n : networks)
    if (n.name == name) return &n;
  return nullptr;
}

const LinkCalibration* CommConstants::calibration(LinkLevel level, const GpuSpec& gpu) const {
  for (const auto& c : link_calibrations)
    if (c.card == gpu.id && c.level == level) return &c;
  return nullptr;
}

double CommConstants::achieved_fraction(LinkLevel level, const GpuSpec& gpu) const {
  if (const LinkCalibration* c = calibration(level, gpu)) return c->achieved_fraction;
  switch (level) {
    case LinkLevel::kNvlink:
      return nvlink_fraction;
    case LinkLevel::kPcie:
      return pcie_fraction;
    case LinkLevel::kNetwork:
      return network_fraction;
  }
  return 1.0;
}

namespace {

const DataFile& need_file(const Catalog& c, std::string_view rel) {
  const DataFile* f = c.file(rel);
  if (!f)
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("data file '{}' is missing from the data folder", rel),
                    std::string(rel));
  return *f;
}

}  // namespace

CommConstants load_comm_constants(const Catalog& catalog) {
  CommConstants k;
  const auto& src = catalog.sources();
  {
    const DataFile& f = need_file(catalog, "comm/links.yaml");
    StrictMap root(parse_document(f.text, f.path), f.path, "");
    k.base_latency = Seconds(required_known(root, "base_latency_us", 0, 1e6, src) * 1e-6);
    StrictMap links = root.required_map("links");
    auto read_link = [&](std::string_view name, Seconds& latency, double& fraction) {
      StrictMap l = links.required_map(name);
      latency = Seconds(required_known(l, "step_latency_us", 0, 1e6, src) * 1e-6);
      fraction = required_known(l, "achieved_fraction", 0.01, 1.0, src);
      l.finish();
    };
    read_link("nvlink", k.nvlink_step_latency, k.nvlink_fraction);
    read_link("pcie", k.pcie_step_latency, k.pcie_fraction);
    read_link("network", k.network_step_latency, k.network_fraction);
    links.finish();
    k.cards_per_node = static_cast<int>(required_known(root, "cards_per_node", 1, 1024, src));
    k.network_GBps_per_node = required_known(root, "network_GBps_per_node", 0.1, 1e5, src);
    k.ddp_bucket_MB = required_known(root, "ddp_bucket_MB", 0.001, 1e6, src);
    k.calibration_large_message =
        bytes_from_MiB(required_known(root, "calibration_large_message_MiB", 1, 1048576, src));
    StrictMap host = root.required_map("host");
    k.no_p2p_step_latency =
        Seconds(required_known(host, "no_p2p_step_latency_us", 0, 1e6, src) * 1e-6);
    k.host_copy_fraction = required_known(host, "copy_fraction", 0.01, 1.0, src);
    k.host_memory_GBps_per_node = required_known(host, "memory_GBps_per_node", 0.1, 1e6, src);
    k.host_update_fraction = required_known(host, "update_fraction", 0.01, 1.0, src);
    host.finish();
    root.finish();
  }
  {
    const DataFile& f = need_file(catalog, "comm/topologies.yaml");
    StrictMap root(parse_document(f.text, f.path), f.path, "");
    for (auto& p : root.map_list("presets", true)) {
      CommConstants::Preset preset;
      preset.name = p.required_string("name");
      preset.description = p.required_string("description");
      preset.link = p.required_choice("link", {"pcie", "nvlink-bridge", "nvswitch"});
      preset.domain_cards = static_cast<int>(p.required_integer("domain_cards", 1, 1024));
      preset.domain_within_node = p.optional_bool("domain_within_node").value_or(true);
      preset.cards_per_node =
          static_cast<int>(p.optional_integer("cards_per_node", 1, 1024).value_or(0));
      preset.network_GBps_per_node =
          p.optional_number("network_GBps_per_node", 0.1, 1e5).value_or(0);
      preset.nics_per_node =
          static_cast<int>(p.optional_integer("nics_per_node", 1, 1024).value_or(0));
      preset.gpus = p.string_list("gpus", false);
      for (const auto& id : preset.gpus)
        if (!catalog.find_gpu(id))
          throw_unknown_name("GPU", f.path + ": presets: " + preset.name + ": gpus", id,
                             catalog.gpu_ids());
      preset.note = p.optional_string("note").value_or("");
      for (const auto& id : p.string_list("source", false))
        if (!src.count(id))
          throw UserError(
              ErrorCode::kUnknownName,
              fmt::format("{}: preset '{}' cites unknown source '{}'", f.path, preset.name, id),
              f.path + ": source");
      p.finish();
      k.presets.push_back(std::move(preset));
    }
    root.finish();
  }
  {
    const DataFile& f = need_file(catalog, "comm/networks.yaml");
    StrictMap root(parse_document(f.text, f.path), f.path, "");
    for (auto& n : root.map_list("networks", true)) {
      CommConstants::Network net;
      net.name = n.required_string("name");
      if (k.network(net.name))
        n.fail("name", fmt::format("network '{}' is defined twice", net.name));
      net.description = n.required_string("description");
      net.fabric = n.required_choice("fabric", {"infiniband", "ethernet", "efa"});
      net.nic_Gbps = n.required_number("nic_Gbps", 1, 1e5);
      // The per-direction GB/s the file states must be the Gb/s it states, over 8.
      const double GBps = n.required_number("nic_GBps", 0.125, 1.25e4);
      if (std::abs(GBps - net.nic_GBps()) > 1e-9 * GBps)
        n.fail("nic_GBps", fmt::format("{} Gb/s gives {} GB/s per direction, not {}", net.nic_Gbps,
                                       net.nic_GBps(), GBps));
      net.nics_per_node = static_cast<int>(n.required_integer("nics_per_node", 1, 1024));
      net.rail_optimised = n.required_bool("rail_optimised");
      net.step_latency_us = n.optional_number("step_latency_us", 0.01, 1e6).value_or(0);
      n.required_string("systems");
      const auto sources = n.string_list("source", true);
      if (sources.empty()) n.fail("source", "every network needs at least one source");
      for (const auto& id : sources)
        if (!src.count(id))
          throw UserError(
              ErrorCode::kUnknownName,
              fmt::format("{}: network '{}' cites unknown source '{}'", f.path, net.name, id),
              f.path + ": source");
      n.finish();
      k.networks.push_back(std::move(net));
    }
    root.finish();
  }
  return k;
}

Topology::Peers Topology::peers() const {
  Peers p;
  const bool nvlink = domain_cards > 1;
  p.nvlink = nvlink ? domain_size() - 1 : 0;
  p.pcie = domain_spans_nodes() ? 0 : node_cards() - (nvlink ? domain_size() : 1);
  p.network = cards - 1 - p.nvlink - p.pcie;
  return p;
}

Topology group_topology(const Topology& t, int size, int stride) {
  Topology g = t;
  g.cards = std::max(1, size);
  stride = std::max(1, stride);
  g.domain_cards = t.domain_cards > stride ? t.domain_cards / stride : 1;
  g.cards_per_node = t.cards_per_node > stride ? t.cards_per_node / stride : 1;
  return g;
}

BytesPerSecond Topology::collective_rate(const Link& l) const {
  if (l.level != LinkLevel::kNetwork || peers().network == 0) return l.per_direction;
  return l.per_direction * (static_cast<double>(cards) / network_groups());
}

const Link& Topology::slowest() const {
  const Peers p = peers();
  if (p.network > 0) return inter_node;
  if (p.pcie > 0 || domain_cards == 1) return intra_node;
  return intra_domain;
}

std::string default_topology(const GpuSpec& gpu, int cards) {
  if (cards <= 1) return "pcie";
  switch (gpu.nvlink.kind) {
    case LinkKind::kSwitch:
      return "nvswitch";
    case LinkKind::kBridge:
      return gpu.nvlink.bridge_max_cards >= 4 && cards > 2 ? "nvlink-bridge-4" : "nvlink-bridge-2";
    case LinkKind::kNone:
      return "pcie";
  }
  return "pcie";
}

P2p parse_p2p(std::string_view text, std::string_view field) {
  for (P2p p : {P2p::kAuto, P2p::kOn, P2p::kOff})
    if (p2p_name(p) == text) return p;
  throw_unknown_name("peer-to-peer setting", field, text, {"auto", "on", "off"});
}

std::string_view p2p_name(P2p p) {
  switch (p) {
    case P2p::kAuto:
      break;
    case P2p::kOn:
      return "on";
    case P2p::kOff:
      return "off";
  }
  return "auto";
}

namespace {

const CommConstants::Preset* find_preset(const CommConstants& k, const std::string& name) {
  for (const auto& p : k.presets)
    if (p.name == name) return &p;
  return nullptr;
}

// The node network: a named one (its NICs, or `nics_per_node` of them), else the preset's, else
// the default (one NIC of links.yaml's rate per node); --network-GBps overrides the rate.
NodeNetwork node_network(const CommConstants& k, const CommConstants::Preset& preset,
                         const NodeOptions& o) {
  NodeNetwork n;
  if (!o.network.empty()) {
    const CommConstants::Network* net = k.network(o.network);
    if (!net) throw_unknown_name("network", "network", o.network, k.network_names());
    n.name = net->name;
    n.nics_per_node = o.nics_per_node > 0 ? o.nics_per_node : net->nics_per_node;
    n.rail_optimised = net->rail_optimised;
    n.GBps_per_node = net->GBps_per_node(n.nics_per_node);
  } else if (preset.network_GBps_per_node > 0) {
    n.name = preset.name;
    n.nics_per_node = preset.nics_per_node;
    n.GBps_per_node = preset.network_GBps_per_node;
    if (o.nics_per_node > 0 && preset.nics_per_node > 0) {
      n.GBps_per_node *= static_cast<double>(o.nics_per_node) / preset.nics_per_node;
      n.nics_per_node = o.nics_per_node;
    }
  } else {
    n.nics_per_node = o.nics_per_node > 0 ? o.nics_per_node : 1;
    n.GBps_per_node = n.nics_per_node * k.network_GBps_per_node;
  }
  if (o.network_GBps_per_node > 0) {
    n.GBps_per_node = o.network_GBps_per_node;
    if (o.network.empty()) n.name = "custom";
  }
  return n;
}

}  // namespace

int node_size(const CommConstants& k, std::string_view preset_name, int cards_per_node) {
  if (cards_per_node > 0) return cards_per_node;
  const CommConstants::Preset* preset = find_preset(k, std::string(preset_name));
  return preset && preset->cards_per_node > 0 ? preset->cards_per_node : k.cards_per_node;
}

Topology build_topology(const GpuSpec& gpu, int cards, std::string_view preset_name,
                        const CommConstants& k, double network_GBps_per_node, int cards_per_node,
                        P2p p2p) {
  NodeOptions o;
  o.network_GBps_per_node = network_GBps_per_node;
  o.cards_per_node = cards_per_node;
  return build_topology(gpu, cards, preset_name, k, o, p2p);
}

Topology build_topology(const GpuSpec& gpu, int cards, std::string_view preset_name,
                        const CommConstants& k, const NodeOptions& nodes, P2p p2p) {
  const int cards_per_node = nodes.cards_per_node;
  const std::string name =
      preset_name.empty() ? default_topology(gpu, cards) : std::string(preset_name);
  const CommConstants::Preset* preset = find_preset(k, name);
  if (!preset) throw_unknown_name("topology", "topology", name, k.preset_names());

  if (!preset->gpus.empty() &&
      std::find(preset->gpus.begin(), preset->gpus.end(), gpu.id) == preset->gpus.end())
    throw UserError(ErrorCode::kUnsupported,
                    fmt::format("topology '{}' is built with {} only, not {}", name,
                                fmt::join(preset->gpus, ", "), gpu.id),
                    "topology");
  Topology t;
  t.preset = name;
  t.cards = cards;
  t.cards_per_node = cards_per_node > 0           ? cards_per_node
                     : preset->cards_per_node > 0 ? preset->cards_per_node
                                                  : k.cards_per_node;
  t.domain_cards = preset->domain_cards;
  t.network = node_network(k, *preset, nodes);
  const double network = t.network.GBps_per_node;
  const CommConstants::Network* fabric = k.network(nodes.network);

  // PCIe between domains: NVIDIA lists both directions added (Gen5 x16: 128 GB/s = 64 per
  // direction).
  t.intra_node = {
      LinkLevel::kPcie, fmt::format("PCIe Gen{} x{}", gpu.pcie.generation, gpu.pcie.lanes),
      gpu.pcie.per_direction(), k.pcie_step_latency, k.achieved_fraction(LinkLevel::kPcie, gpu)};
  // The network: the node's bandwidth shared by the cards of the node that send at once.
  t.inter_node = {
      LinkLevel::kNetwork,
      fmt::format("network ({}{} GB/s per node and direction)",
                  fabric ? fmt::format("{}, {} NICs, ", fabric->name, t.network.nics_per_node) : "",
                  network),
      bytes_per_second_from_GBps(network / std::min(t.cards_per_node, std::max(cards, 1))),
      fabric && fabric->step_latency_us > 0 ? Seconds(fabric->step_latency_us * 1e-6)
                                            : k.network_step_latency,
      k.achieved_fraction(LinkLevel::kNetwork, gpu)};
  t.p2p = p2p == P2p::kAuto ? gpu.pcie.p2p : p2p == P2p::kOn;
  if (!t.p2p) {
    // Staged through host memory: each byte a card sends is written to host memory and read by
    // the next card, so the node's host memory carries 2 × (cards on the node) × the rate.
    const int node = std::min(t.cards_per_node, std::max(cards, 1));
    const BytesPerSecond host =
        bytes_per_second_from_GBps(k.host_memory_GBps_per_node / (2.0 * node));
    t.intra_node.name += " (no peer-to-peer: staged through host memory)";
    t.intra_node.per_direction = std::min(t.intra_node.per_direction, host);
    t.intra_node.step_latency = std::max(t.intra_node.step_latency, k.no_p2p_step_latency);
  }
  t.intra_domain = t.intra_node;

  if (preset->link != "pcie") {
    const bool want_switch = preset->link == "nvswitch";
    if (gpu.nvlink.kind == LinkKind::kNone)
      throw UserError(
          ErrorCode::kUnsupported,
          fmt::format("{} has no NVLink ({}); topology '{}' is impossible — use 'pcie'", gpu.name,
                      gpu.nvlink.note.empty() ? "the card's data lists none" : gpu.nvlink.note,
                      name),
          "topology");
    if (want_switch && gpu.nvlink.kind != LinkKind::kSwitch)
      throw UserError(
          ErrorCode::kUnsupported,
          fmt::format(
              "{} joins cards with NVLink bridges, not an NVSwitch baseboard; use nvlink-bridge-{}",
              gpu.name, gpu.nvlink.bridge_max_cards),
          "topology");
    if (!want_switch && gpu.nvlink.kind != LinkKind::kBridge)
      throw UserError(
          ErrorCode::kUnsupported,
          fmt::format("{} sits on an NVSwitch baseboard; bridges do not apply — use 'nvswitch'",
                      gpu.name),
          "topology");
    if (!want_switch && preset->domain_cards > gpu.nvlink.bridge_max_cards)
      throw UserError(
          ErrorCode::kUnsupported,
          fmt::format("{}'s NVLink bridge joins at most {} cards; '{}' needs {}", gpu.name,
                      gpu.nvlink.bridge_max_cards, name, preset->domain_cards),
          "topology");
    t.intra_domain = {
        LinkLevel::kNvlink,
        fmt::format("NVLink {} {}", gpu.nvlink.generation, want_switch ? "switch" : "bridge"),
        gpu.nvlink.per_direction(), k.nvlink_step_latency,
        k.achieved_fraction(LinkLevel::kNvlink, gpu)};
    if (preset->domain_within_node)
      t.domain_cards = std::min(preset->domain_cards, t.cards_per_node);
    if (!preset->note.empty() && cards > 1) t.notes.push_back(preset->note);
  }

  // Notes a user must read before blaming the cards (seed C7–C9).
  if (t.domain_cards > 1 && cards > t.domain_cards && t.cards_per_node > t.domain_cards)
    t.notes.push_back(fmt::format(
        "{} cards form {} NVLink domains of at most {}; traffic between domains crosses {}", cards,
        t.domains(), t.domain_cards, t.intra_node.name));
  if (gpu.nvlink.kind == LinkKind::kNone && cards > 1) {
    // The card's data says how its cards talk without NVLink (peer-to-peer caveats, vendor paths).
    t.notes.push_back(gpu.nvlink.note);
    if (t.p2p)
      t.notes.push_back(
          "PCIe peer-to-peer on bare-metal Linux needs the IOMMU disabled and ACS disabled on "
          "PCIe switches (NCCL user guide, troubleshooting); otherwise traffic is staged through "
          "host memory (--p2p off times that)");
  }
  if (!t.p2p && cards > 1)
    t.notes.push_back(fmt::format(
        "no PCIe peer-to-peer{}: NCCL stages every transfer through host memory, {} per ring "
        "step, at most {} per card and direction (the host's memory carries each byte twice)",
        gpu.pcie.p2p_note.empty() || p2p == P2p::kOff ? "" : " (" + gpu.pcie.p2p_note + ")",
        format_seconds(t.intra_node.step_latency), format_GBps(t.intra_node.per_direction)));
  // A measured fraction is named where the run crosses that link.
  auto crossed = [&](LinkLevel l) {
    if (cards <= 1) return false;
    if (l == LinkLevel::kNvlink) return t.domain_cards > 1;
    const Topology::Peers peers = t.peers();
    if (l == LinkLevel::kPcie) return peers.pcie > 0 || t.domain_cards == 1;
    return peers.network > 0;
  };
  for (const auto& c : k.link_calibrations)
    if (c.card == gpu.id && crossed(c.level))
      t.notes.push_back(fmt::format("{} achieved fraction {:.2f} measured on this card ({}): {}",
                                    link_level_name(c.level), c.achieved_fraction, c.file,
                                    c.basis));
  if (t.domain_spans_nodes() && t.domains() > 1)
    t.notes.push_back(fmt::format(
        "{} cards form {} NVLink domains of {}; traffic between domains crosses the network, "
        "{} GB/s per node of {} cards and direction",
        cards, t.domains(), t.domain_cards, network, t.cards_per_node));
  else if (!t.domain_spans_nodes() && t.nodes() > 1)
    t.notes.push_back(fmt::format(
        "{} nodes of {} cards: traffic between nodes shares {} GB/s per node and direction",
        t.nodes(), t.cards_per_node, network));
  if (t.network_groups() > 1 && t.network.nics_per_node > 1 && !t.network.rail_optimised)
    t.notes.push_back(fmt::format(
        "network '{}' has {} NICs per node but is not rail-optimised: rings between nodes may "
        "share switch uplinks, so {} GB/s per node is an upper bound",
        t.network.name, t.network.nics_per_node, network));
  return t;
}

}  // namespace ftplan
