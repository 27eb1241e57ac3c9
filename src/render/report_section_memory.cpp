// Which runs fit: the runs, their memory per card on one card and sharded, the chart of memory
// against capacity, and a summary per run.
#include "render/report_sections.hpp"

#include <string>
#include <vector>

namespace ftplan {

namespace {

class MemorySection : SectionWriter {
 public:
  using SectionWriter::SectionWriter;

  std::string placement_label(const ReportMemory& r) const {
    return r.count == 1 ? card_name(*r.gpu)
                        : f(Txt::kShardedCard, r.count, card_name(*r.gpu), sharding(r.sharding));
  }

  std::vector<std::string> memory_cells(const std::string& run, const ReportMemory& r) const {
    const MemoryEstimate& e = r.memory;
    return {run,           placement_label(r),   gb(e.states.total(), 1),
            gb(e.free, 1), gb(e.activations, 1), gb(e.overhead, 1),
            gb(e.peak, 1), verdict(e.verdict)};
  }

  DocSection memory() const {
    std::vector<std::string> sizes;
    for (const GpuSpec* g : m_.cards)
      sizes.push_back(g->datasheet_GB.value ? n(*g->datasheet_GB.value, 0)
                                            : n(to_GB(g->capacity()), 0));
    DocSection s{"memory", f(Txt::kMemoryTitle, join(sizes)), {}};
    s.blocks.push_back(paragraph(f(Txt::kMemoryLead, n(kTightHeadroomFraction * 100, 0))));

    DocTable runs;
    runs.caption = t(Txt::kRunsCaption);
    runs.headers = {t(Txt::kColRun),       t(Txt::kColModel),   t(Txt::kColMethod),
                    t(Txt::kColParams),    t(Txt::kColTrained), t(Txt::kColSeqMicroBatch),
                    t(Txt::kColRecompute), t(Txt::kColTokens),  t(Txt::kColGlobalBatch)};
    runs.numeric = {false, false, false, true, true, true, false, true, true};
    for (const auto& row : m_.memory) {
      const Workload& w = row.workload;
      runs.rows.push_back(
          {row.run->name, w.model->arch.name, method(w), count(static_cast<double>(row.params)),
           count(static_cast<double>(row.trained)),
           n(static_cast<double>(w.seq), 0) + " × " + n(static_cast<double>(w.micro_batch), 0),
           recompute(w.recompute), count(row.run->tokens),
           n(static_cast<double>(row.run->global_batch), 0)});
    }
    s.blocks.push_back(table(std::move(runs)));

    DocTable fit;
    fit.caption = t(Txt::kMemoryCaption);
    fit.headers = {t(Txt::kColRun),  t(Txt::kColPlacement),   t(Txt::kColModelStates),
                   t(Txt::kColFree), t(Txt::kColActivations), t(Txt::kColOverhead),
                   t(Txt::kColPeak), t(Txt::kColVerdict)};
    fit.numeric = {false, false, true, true, true, true, true, false};
    StackedBarChart bars;
    bars.text = {"chart-memory", t(Txt::kChartMemoryTitle), t(Txt::kChartMemoryDesc)};
    bars.axis_label = t(Txt::kAxisGB);
    bars.legend = {t(Txt::kLegendStatesOnCard), t(Txt::kLegendActivations),
                   t(Txt::kLegendOverhead)};
    bars.limit_legend = t(Txt::kLegendCapacity);
    for (const auto& row : m_.memory) {
      std::vector<const ReportMemory*> all;
      for (const auto& r : row.one_card)
        all.push_back(&r);
      for (const auto& r : row.sharded)
        all.push_back(&r);
      for (const ReportMemory* r : all) {
        fit.rows.push_back(memory_cells(row.run->name, *r));
        const MemoryEstimate& e = r->memory;
        bars.rows.push_back(
            {row.run->name,
             placement_label(*r),
             f(Txt::kPeakOf, gb(e.peak, 1), gb(e.capacity, 1)),
             {{to_GB(e.states_on_card), 0}, {to_GB(e.activations), 1}, {to_GB(e.overhead), 2}},
             to_GB(e.capacity)});
      }
    }
    s.blocks.push_back(table(std::move(fit)));
    s.blocks.push_back(chart(bars.text, stacked_bar_svg(bars, numbers())));
    s.blocks.push_back(list(fit_summary()));
    return s;
  }

  // Per run: where it fits one card, with what is free; where it needs more, the planner's fewest
  // cards of that type with every state sharded. Runs that fit every card are named together.
  std::vector<std::string> fit_summary() const {
    std::vector<std::string> items, everywhere;
    for (const auto& row : m_.memory) {
      std::vector<std::string> on_cards;
      bool all_fit = true;
      for (const auto& r : row.one_card) {
        const Txt k = r.memory.verdict == Verdict::kFits    ? Txt::kFitsOn
                      : r.memory.verdict == Verdict::kTight ? Txt::kTightOn
                                                            : Txt::kDoesNotFitOn;
        on_cards.push_back(f(k, card_name(*r.gpu), gb(r.memory.free, 1)));
        all_fit &= r.memory.verdict == Verdict::kFits;
      }
      if (all_fit) {
        everywhere.push_back(row.run->name);
        continue;
      }
      std::string item = row.run->name + ": " + join(on_cards);
      for (const auto& r : row.sharded)
        item += f(Txt::kFitSharded, r.count, card_name(*r.gpu), sharding(r.sharding),
                  gb(r.memory.states.total(), 1), verdict(r.memory.verdict));
      items.push_back(item + ".");
    }
    if (!everywhere.empty())
      items.insert(items.begin(),
                   f(everywhere.size() == 1 ? Txt::kFitAllOne : Txt::kFitAll, join(everywhere)));
    return items;
  }
};

}  // namespace

DocSection report_memory_section(const ReportModel& m, const Catalog& catalog,
                                 const ReportWords& words) {
  return MemorySection(m, catalog, words).memory();
}

}  // namespace ftplan
