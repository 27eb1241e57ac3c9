// More than one card: traffic between cards per strategy and count, scaling per run with its
// chart, and the topologies (bridges, switches, NVLink domains, nodes).
#include "render/report_sections.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "workload/roles.hpp"

namespace ftplan {

namespace {

class MultiCardSection : SectionWriter {
 public:
  using SectionWriter::SectionWriter;

  DocSection multi_card() const {
    DocSection s{"multi-card", t(Txt::kMultiTitle), {}};
    s.blocks.push_back(paragraph(t(Txt::kMultiIntro)));
    if (m_.counts.empty()) {
      s.blocks.push_back(paragraph(t(Txt::kMultiNoCounts)));
      return s;
    }
    // The figures the text discusses: a full fine-tune's gradients and FSDP's factor; the largest
    // sharded base and what it costs on each link.
    const ReportTrafficRow* full_ddp = nullptr;
    const ReportTrafficRow* full_fsdp = nullptr;
    const ReportTrafficRow* sharded_base = nullptr;
    for (const auto& row : m_.traffic) {
      if (method_traits(row.run->workload.method).trains_base) {
        if (!full_ddp && row.sharding == Sharding::kDdp) full_ddp = &row;
        if (!full_fsdp && row.sharding == Sharding::kFsdp && full_ddp && full_ddp->run == row.run)
          full_fsdp = &row;
      } else if (row.strategy == CommStrategy::kShardedBase &&
                 (!sharded_base || row.plans.front().received_per_card_per_step >
                                       sharded_base->plans.front().received_per_card_per_step)) {
        sharded_base = &row;
      }
    }
    std::vector<std::string> figures;
    if (full_ddp && full_fsdp && full_fsdp->over_data_parallel &&
        full_ddp->plans.front().call_count > 0)
      figures.push_back(f(
          Txt::kMultiFull, full_ddp->run->name, gb(full_ddp->plans.front().calls()[0].cost.size, 0),
          n(*full_fsdp->over_data_parallel, 1),
          gb(full_fsdp->plans.front().received_per_card_per_step, 0), m_.counts.front()));
    if (sharded_base) {
      std::vector<std::string> at;
      for (std::size_t i = 0; i < sharded_base->counts.size(); ++i)
        at.push_back(f(Txt::kAtCards, gb(sharded_base->frozen_base[i].received_per_card, 0),
                       sharded_base->counts[i]));
      std::string text = f(Txt::kMultiSharded, sharded_base->run->name, join(at));
      const std::string bounds = link_bounds(*sharded_base->run);
      if (!bounds.empty())
        text += " " + f(Txt::kMultiLinks,
                        gb(sharded_base->frozen_base.front().received_per_card, 0), bounds);
      figures.push_back(text);
    }
    if (!figures.empty()) s.blocks.push_back(list(figures));

    DocTable tbl;
    tbl.caption = t(Txt::kTrafficCaption);
    tbl.headers = {t(Txt::kColRun), t(Txt::kColStrategy)};
    for (int c : m_.counts)
      tbl.headers.push_back(f(Txt::kColNCards, c));
    tbl.numeric.assign(tbl.headers.size(), true);
    tbl.numeric[0] = tbl.numeric[1] = false;
    for (const auto& row : m_.traffic) {
      std::vector<std::string> cells = {row.run->name, strategy(row.strategy)};
      for (const auto& p : row.plans)
        cells.push_back(n(to_GB(p.received_per_card_per_step), 1));
      tbl.rows.push_back(std::move(cells));
    }
    s.blocks.push_back(table(std::move(tbl)));

    for (const auto& sc : m_.scaling) {
      s.blocks.push_back(heading(f(Txt::kScalingHeading, sc.run->name)));
      s.blocks.push_back(table(scaling_table(sc)));
      LineChart lc = scaling_chart(sc);
      s.blocks.push_back(chart(lc.text, line_chart_svg(lc, numbers())));
    }
    s.blocks.push_back(heading(t(Txt::kTopologyHeading)));
    s.blocks.push_back(list(topology_notes()));
    return s;
  }

  // The nominal-rate lower bound of a sharded run's traffic per micro-batch on each link, at the
  // smallest allowed count (from the scaling evaluation), each link named once.
  std::string link_bounds(const PlannedRun& run) const {
    std::vector<std::string> items;
    std::set<std::string> seen;
    for (const auto& sc : m_.scaling) {
      if (sc.run != &run) continue;
      for (const auto& series : sc.series)
        for (const auto& p : series.points) {
          if (p.count != m_.counts.front() || !p.result.step.feasible) continue;
          const Link& l = p.result.topology.link(p.result.comm.link);
          const std::string name = link(l, *series.gpu);
          if (!seen.insert(name).second) continue;
          items.push_back(f(Txt::kLinkBound, seconds(p.frozen_base.min_link_seconds, 1), name,
                            n(to_GBps(l.per_direction), 0)));
        }
    }
    return join(items);
  }

  std::string topology_label(const ReportScaleSeries& series) const {
    if (series.forced_pcie) return t(Txt::kPcieOnly);
    return series.gpu->nvlink.kind == LinkKind::kNone
               ? "PCIe"
               : f(series.gpu->nvlink.kind == LinkKind::kSwitch ? Txt::kLinkNvlinkSwitch
                                                                : Txt::kLinkNvlinkBridge,
                   series.gpu->nvlink.generation);
  }

  DocTable scaling_table(const ReportScaling& sc) const {
    DocTable tbl;
    tbl.caption =
        f(Txt::kScalingCaption, sc.run->name, n(static_cast<double>(sc.workload.micro_batch), 0),
          n(static_cast<double>(sc.run->global_batch), 0));
    tbl.headers = {t(Txt::kColCard),        t(Txt::kColCards),      t(Txt::kColTopology),
                   t(Txt::kColSlowestLink), t(Txt::kColReceived),   t(Txt::kColLinkBound),
                   t(Txt::kColExposed),     t(Txt::kColEfficiency), t(Txt::kColTokensPerSecond),
                   t(Txt::kColVerdict)};
    tbl.numeric = {false, true, false, false, true, true, true, true, true, false};
    for (const auto& series : sc.series)
      for (const auto& p : series.points) {
        if (series.forced_pcie && p.count == 1) continue;  // the same card alone, shown above
        const ScaleResult& res = p.result;
        const bool single = p.count == 1;
        std::vector<std::string> row = {
            card_name(*series.gpu), std::to_string(p.count),
            single
                ? dash()
                : code(res.topology.preset) + (series.forced_pcie ? " " + t(Txt::kHeldToPcie) : ""),
            single ? dash() : link(res.topology.link(res.comm.link), *series.gpu)};
        const bool timed = res.memory.verdict == Verdict::kFits && res.step.feasible;
        if (timed) {
          row.push_back(single ? dash() : gb(res.comm.received_per_card_per_micro_batch, 1));
          row.push_back(single ? dash() : seconds(res.comm.min_link_seconds_per_micro_batch, 2));
          row.push_back(seconds(res.scale.exposed_per_step, 2));
          row.push_back(percent(res.scale.scaling_efficiency));
          row.push_back(n(res.tokens_per_second, 0));
        } else {
          row.insert(row.end(), 5, dash());
        }
        row.push_back(res.step.feasible || res.memory.verdict != Verdict::kFits
                          ? verdict(res.memory.verdict)
                          : t(Txt::kCannotBeTimed));
        tbl.rows.push_back(std::move(row));
      }
    return tbl;
  }

  LineChart scaling_chart(const ReportScaling& sc) const {
    LineChart c;
    c.text = {"chart-scaling-" + std::to_string(&sc - m_.scaling.data()),
              f(Txt::kChartScalingTitle, sc.run->name), t(Txt::kChartScalingDesc)};
    c.x_label = t(Txt::kAxisCards);
    c.y_label = t(Txt::kAxisTokens);
    c.x_ticks.push_back(1);
    for (int n_cards : m_.counts)
      c.x_ticks.push_back(n_cards);
    for (std::size_t i = 0; i < sc.series.size(); ++i) {
      const auto& series = sc.series[i];
      LineSeries ls;
      ls.label = card_name(*series.gpu) + ", " + topology_label(series);
      const auto card = std::find(m_.cards.begin(), m_.cards.end(), series.gpu) - m_.cards.begin();
      ls.style = static_cast<int>(card);
      ls.dashed = series.forced_pcie;
      // A line on NVLink ends at the most cards one NVLink domain joins: beyond them the cards
      // talk over PCIe, as the same card's dashed line (held to PCIe) shows, and the label says so.
      const bool on_nvlink = !series.forced_pcie && series.gpu->nvlink.kind != LinkKind::kNone;
      int last_on_nvlink = 0;
      bool beyond = false;
      for (const auto& p : series.points) {
        if (p.result.memory.verdict != Verdict::kFits || !p.result.step.feasible) continue;
        const bool nvlink = p.result.topology.link(p.result.comm.link).level == LinkLevel::kNvlink;
        if (on_nvlink && p.count > 1 && !nvlink) {
          beyond = true;
          continue;
        }
        if (p.count > 1) last_on_nvlink = p.count;
        ls.points.emplace_back(p.count, p.result.tokens_per_second);
      }
      if (beyond && last_on_nvlink > 0)
        ls.label = card_name(*series.gpu) + ", " +
                   f(Txt::kNvlinkUpTo, topology_label(series), last_on_nvlink);
      c.series.push_back(std::move(ls));
    }
    return c;
  }

  std::vector<std::string> topology_notes() const {
    std::vector<std::string> items;
    for (const GpuSpec* g : m_.cards) {
      const ReportTopology* largest = nullptr;
      for (const auto& rt : m_.topologies)
        if (rt.gpu == g && (!largest || rt.topology.cards > largest->topology.cards)) largest = &rt;
      switch (g->nvlink.kind) {
        case LinkKind::kBridge:
          items.push_back(f(Txt::kTopoBridge, card_name(*g), g->nvlink.bridge_max_cards,
                            n(g->nvlink.GBps_per_gpu_both_directions, 0),
                            n(g->pcie.GBps_both_directions, 0)));
          break;
        case LinkKind::kSwitch:
          items.push_back(f(Txt::kTopoSwitch, card_name(*g)));
          break;
        case LinkKind::kNone:
          items.push_back(f(Txt::kTopoP2p, card_name(*g)));
          break;
      }
      if (largest && largest->topology.domain_cards > 1 && largest->topology.domains() > 1)
        items.push_back(f(Txt::kTopoDomains, largest->topology.cards, card_name(*g),
                          largest->topology.domains(), largest->topology.domain_cards,
                          link(largest->topology.intra_node, *g)));
      if (largest && largest->topology.nodes() > 1)
        items.push_back(f(Txt::kTopoNodes, largest->topology.cards, card_name(*g),
                          largest->topology.nodes(), largest->topology.cards_per_node));
    }
    return items;
  }
};

}  // namespace

DocSection report_multi_card_section(const ReportModel& m, const Catalog& catalog,
                                     const ReportWords& words) {
  return MultiCardSection(m, catalog, words).multi_card();
}

}  // namespace ftplan
