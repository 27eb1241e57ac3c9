// The report's first section: the compared cards and their datasheet figures (memory, bandwidth,
// power, cooling, form factor, links, MIG).
#include "render/report_sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace ftplan {

namespace {

class CardsSection : SectionWriter {
 public:
  using SectionWriter::SectionWriter;

  std::string cooling(const std::string& v) const {
    if (v == "passive") return t(Txt::kCoolingPassive);
    if (v == "active") return t(Txt::kCoolingActive);
    if (v == "liquid") return t(Txt::kCoolingLiquid);
    if (v == "system") return t(Txt::kCoolingSystem);
    return v;
  }
  std::string form_factor(const std::string& v) const {
    if (v == "pcie-dual-slot") return t(Txt::kFormPcieDual);
    if (v == "pcie-single-slot") return t(Txt::kFormPcieSingle);
    return upper(v);
  }
  std::string card_link(const GpuSpec& g) const {
    const std::string pcie = fmt::format("PCIe Gen{} x{}, {} GB/s", g.pcie.generation, g.pcie.lanes,
                                         n(g.pcie.GBps_both_directions, 0));
    switch (g.nvlink.kind) {
      case LinkKind::kBridge:
        return f(Txt::kCardLinkBridge, g.nvlink.generation, g.nvlink.bridge_max_cards,
                 n(g.nvlink.GBps_per_gpu_both_directions, 0), pcie);
      case LinkKind::kSwitch:
        return f(Txt::kCardLinkSwitch, g.nvlink.generation,
                 n(g.nvlink.GBps_per_gpu_both_directions, 0), pcie);
      case LinkKind::kNone:
        break;
    }
    return f(Txt::kCardLinkNone, pcie);
  }
  template <class T>
  std::string known(const Figure<T>& fig, const std::function<std::string(const T&)>& show) const {
    return fig.value ? show(*fig.value) : t(Txt::kUnknown);
  }

  DocSection cards() const {
    DocSection s{"cards", t(Txt::kCardsTitle), {}};
    std::vector<std::string> names, also;
    for (const GpuSpec* g : m_.cards)
      names.push_back(card_name(*g));
    s.blocks.push_back(paragraph(f(Txt::kCardsLead, join(names))));
    DocTable tbl;
    tbl.headers = {t(Txt::kColCard),      t(Txt::kColMemoryVisible),
                   t(Txt::kColDatasheet), t(Txt::kColMemoryType),
                   t(Txt::kColBandwidth), t(Txt::kColPower),
                   t(Txt::kColCooling),   t(Txt::kColFormFactor),
                   t(Txt::kColLink),      "MIG"};
    tbl.numeric = {false, true, true, false, true, true, false, false, false, false};
    for (const GpuSpec* g : m_.rates.cards) {
      const auto number = [&](int decimals, const char* unit) {
        return std::function<std::string(const double&)>(
            [this, decimals, unit](const double& v) { return n(v, decimals) + unit; });
      };
      const auto text =
          std::function<std::string(const std::string&)>([](const std::string& v) { return v; });
      tbl.rows.push_back(
          {card_name(*g), g->visible_MiB.value ? gb(g->capacity(), 1) : t(Txt::kUnknown),
           known(g->datasheet_GB, number(0, " GB")), known(g->memory_type, text),
           known(g->bandwidth_GBps, number(0, " GB/s")), known(g->tdp_W, number(0, " W")),
           known(g->cooling, std::function<std::string(const std::string&)>(
                                 [this](const std::string& v) { return cooling(v); })),
           known(g->form_factor, std::function<std::string(const std::string&)>(
                                     [this](const std::string& v) { return form_factor(v); })),
           card_link(*g), g->mig.supported ? f(Txt::kMigUpTo, g->mig.max_instances) : t(Txt::kNo)});
    }
    s.blocks.push_back(table(std::move(tbl)));
    for (const GpuSpec* g : m_.rates.cards)
      if (std::find(m_.cards.begin(), m_.cards.end(), g) == m_.cards.end())
        also.push_back(card_name(*g));
    if (!also.empty()) s.blocks.push_back(paragraph(f(Txt::kCardsAlso, join(also), join(names))));
    return s;
  }
};

}  // namespace

DocSection report_cards_section(const ReportModel& m, const Catalog& catalog,
                                const ReportWords& words) {
  return CardsSection(m, catalog, words).cards();
}

}  // namespace ftplan
