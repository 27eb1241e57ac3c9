// Runs beyond one node: for each run that needs more cards than a node holds, per card type the
// fewest cards that hold it, how the planner lays them out (tensor, pipeline, context, expert
// parallelism; the sharding of the data-parallel group) and what that costs in traffic.
#include <fmt/format.h>

#include <string>

#include "comm/topology.hpp"
#include "parallel/layout.hpp"
#include "render/report_sections.hpp"

namespace ftplan {

namespace {

class MultiNodeSection : SectionWriter {
 public:
  using SectionWriter::SectionWriter;

  static bool beyond_a_node(const Option& o) { return !o.mig && o.nodes > 1; }

  bool any() const {
    for (const auto& rp : m_.plan.runs) {
      if (rp.recommendation && beyond_a_node(*rp.recommendation)) return true;
      for (const auto& pg : rp.per_gpu)
        if (pg.minimum && beyond_a_node(*pg.minimum)) return true;
    }
    return false;
  }

  std::string layout_cell(const Option& o) const {
    std::string s = layout_label(o.layout);
    const std::string shard = sharding(o.sharding, o.shard_group);
    return s.empty() ? shard : s + ", " + shard;
  }

  DocSection multi_node() const {
    DocSection s{"multi-node", t(Txt::kNodesTitle), {}};
    const CommConstants k = load_comm_constants(catalog_);
    s.blocks.push_back(
        paragraph(f(Txt::kNodesIntro, k.cards_per_node, n(k.network_GBps_per_node, 0))));
    DocTable tbl;
    tbl.caption = t(Txt::kNodesCaption);
    tbl.headers = {t(Txt::kColRun),     t(Txt::kColCard),       t(Txt::kColCards),
                   t(Txt::kColNodes),   t(Txt::kColLayout),     t(Txt::kColReceivedStep),
                   t(Txt::kColExposed), t(Txt::kColEfficiency), t(Txt::kColTimeToTrain)};
    tbl.numeric = {false, false, true, true, false, true, true, true, true};
    for (const auto& rp : m_.plan.runs)
      for (const auto& pg : rp.per_gpu) {
        if (!pg.minimum || !beyond_a_node(*pg.minimum)) continue;
        const Option& o = *pg.minimum;
        const bool recommended = rp.recommendation && rp.recommendation->gpu == o.gpu &&
                                 rp.recommendation->count == o.count;
        tbl.rows.push_back(
            {rp.run->name + (recommended ? " (" + t(Txt::kNodesRecommended) + ")" : ""),
             card_name(*o.gpu), n(o.count, 0),
             fmt::format("{} × {}", n(o.nodes, 0), n(o.cards_per_node, 0)), layout_cell(o),
             gb(o.received_per_card_per_step, 1), seconds(o.exposed_seconds, 2),
             percent(o.scaling_efficiency), n(o.time_to_train_hours, 1) + " h"});
      }
    s.blocks.push_back(table(std::move(tbl)));
    return s;
  }
};

}  // namespace

std::optional<DocSection> report_multi_node_section(const ReportModel& m, const Catalog& catalog,
                                                    const ReportWords& words) {
  const MultiNodeSection w(m, catalog, words);
  if (!w.any()) return std::nullopt;
  return w.multi_node();
}

}  // namespace ftplan
