// The report model as a document in one language: every sentence comes from the text table of the
// language (report_text.cpp), every figure from the model, formatted as the language writes
// numbers. The order of the sections is the seed article's.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "render/report.hpp"
#include "render/report_svg.hpp"
#include "workload/roles.hpp"

namespace ftplan {

const std::vector<std::string_view>& report_section_ids() {
  static const std::vector<std::string_view> ids = {
      "cards", "memory", "roofline", "rates", "multi-card", "mig", "recommendations", "method"};
  return ids;
}

namespace {

// "H200 NVL", "RTX PRO 6000 WS": the catalog's short name.
const std::string& card_name(const GpuSpec& g) {
  return g.short_name;
}

std::string code(std::string_view s) {
  return fmt::format("`{}`", s);
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

class Builder {
 public:
  Builder(const ReportModel& m, const Catalog& catalog, ReportLang lang)
      : m_(m), catalog_(catalog), lang_(lang) {
    if (lang == ReportLang::kDe) style_ = {",", "."};
  }

  ReportDocument build() {
    ReportDocument d;
    d.lang = lang_;
    std::vector<std::string> names;
    for (const GpuSpec* g : m_.cards)
      names.push_back(card_name(*g));
    d.title = f(Txt::kTitle, join(names, Txt::kOr));
    d.lead = f(Txt::kLead, code(m_.runs->file));
    d.sections = {cards(),      memory(), roofline(),        rates(),
                  multi_card(), mig(),    recommendations(), method()};
    return d;
  }

 private:
  // ---- text helpers ----------------------------------------------------------------------------
  std::string t(Txt k) const { return std::string(report_text(lang_, k)); }
  template <class... Args>
  std::string f(Txt k, Args&&... args) const {
    return fmt::format(fmt::runtime(report_text(lang_, k)), std::forward<Args>(args)...);
  }
  std::string n(double v, int decimals) const { return localized_number(v, decimals, style_); }
  std::string gb(Bytes b, int decimals) const { return n(to_GB(b), decimals) + " GB"; }
  std::string seconds(Seconds s, int decimals) const { return n(s.value, decimals) + " s"; }
  std::string times(double ratio) const { return n(ratio, 2) + "×"; }
  std::string percent(double fraction) const { return n(100 * fraction, 0) + " %"; }
  std::string dash() const { return "–"; }

  // "A", "A and B", "A, B and C" (or "or").
  std::string join(const std::vector<std::string>& items, Txt conjunction = Txt::kAnd) const {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out += i + 1 == items.size() ? t(conjunction) : ", ";
      out += items[i];
    }
    return out;
  }

  // 8.03 B / 8,03 Mrd.; 41.9 M / 41,9 Mio.
  std::string count(double v) const {
    const auto scaled = [&](double x, Txt unit) {
      return n(x, x >= 100 ? 0 : (x >= 10 ? 1 : 2)) + t(unit);
    };
    if (std::fabs(v) >= 1e9) return scaled(v / 1e9, Txt::kBillion);
    if (std::fabs(v) >= 1e6) return scaled(v / 1e6, Txt::kMillion);
    return n(v, 0);
  }

  std::string verdict(Verdict v) const {
    switch (v) {
      case Verdict::kFits:
        return t(Txt::kVerdictFits);
      case Verdict::kTight:
        return t(Txt::kVerdictTight);
      case Verdict::kDoesNotFit:
        break;
    }
    return t(Txt::kVerdictDoesNotFit);
  }

  std::string verdict_mark(Verdict v) const {
    return v == Verdict::kFits ? "✓" : (v == Verdict::kTight ? "~" : "✗");
  }

  std::string recompute(Recompute r) const {
    switch (r) {
      case Recompute::kFull:
        return t(Txt::kRecomputeFull);
      case Recompute::kSelective:
        return t(Txt::kRecomputeSelective);
      case Recompute::kNone:
        break;
    }
    return t(Txt::kRecomputeNone);
  }

  std::string method(const Workload& w) const {
    if (method_traits(w.method).trains_base)
      return f(Txt::kMethodFull, code(optimizer_name(w.optimizer)));
    return f(Txt::kMethodAdapter, method_label(w.method), w.lora.rank);
  }

  std::string sharding(Sharding s) const {
    switch (s) {
      case Sharding::kNone:
        return t(Txt::kShardingNone);
      case Sharding::kDdp:
        return "DDP";
      case Sharding::kZero1:
        return "ZeRO-1";
      case Sharding::kZero2:
        return "ZeRO-2";
      case Sharding::kFsdp:
        break;
    }
    return "FSDP";
  }

  std::string strategy(CommStrategy s) const {
    switch (s) {
      case CommStrategy::kSingleCard:
        return t(Txt::kStrategySingle);
      case CommStrategy::kDataParallel:
        return t(Txt::kStrategyDataParallel);
      case CommStrategy::kZero1:
        return "ZeRO-1";
      case CommStrategy::kZero2:
        return "ZeRO-2";
      case CommStrategy::kFsdp:
        return t(Txt::kStrategyFsdp);
      case CommStrategy::kLoraDataParallel:
        return t(Txt::kStrategyLoraDataParallel);
      case CommStrategy::kShardedBase:
        break;
    }
    return t(Txt::kStrategyShardedBase);
  }

  std::string op_class(OpClass c) const {
    static constexpr Txt names[] = {
        Txt::kClassGemm,      Txt::kClassAttention, Txt::kClassAdapter,
        Txt::kClassDequant,   Txt::kClassNorm,      Txt::kClassElementwise,
        Txt::kClassEmbedding, Txt::kClassLoss,      Txt::kClassOptimizer};
    return t(names[static_cast<std::size_t>(c)]);
  }

  // "NVLink 4 bridge" / "NVLink-4-Brücke", "PCIe Gen5 x16", "network".
  std::string link(const Link& l, const GpuSpec& g) const {
    switch (l.level) {
      case LinkLevel::kNvlink:
        return f(
            g.nvlink.kind == LinkKind::kSwitch ? Txt::kLinkNvlinkSwitch : Txt::kLinkNvlinkBridge,
            g.nvlink.generation);
      case LinkLevel::kPcie:
        return fmt::format("PCIe Gen{} x{}", g.pcie.generation, g.pcie.lanes);
      case LinkLevel::kNetwork:
        break;
    }
    return t(Txt::kLinkNetwork);
  }

  DocBlock paragraph(std::string text) const {
    DocBlock b;
    b.kind = DocBlock::Kind::kParagraph;
    b.text = std::move(text);
    return b;
  }
  DocBlock heading(std::string text) const {
    DocBlock b;
    b.kind = DocBlock::Kind::kHeading;
    b.text = std::move(text);
    return b;
  }
  DocBlock list(std::vector<std::string> items) const {
    DocBlock b;
    b.kind = DocBlock::Kind::kList;
    b.items = std::move(items);
    return b;
  }
  DocBlock table(DocTable tbl) const {
    DocBlock b;
    b.kind = DocBlock::Kind::kTable;
    b.table = std::move(tbl);
    return b;
  }
  DocBlock chart(const ChartText& text, std::string svg) const {
    DocBlock b;
    b.kind = DocBlock::Kind::kChart;
    b.text = text.title;
    b.items = {text.description};
    b.svg = std::move(svg);
    return b;
  }

  // ---- (a) the cards ---------------------------------------------------------------------------
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

  // ---- (b) which runs fit ----------------------------------------------------------------------
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
    s.blocks.push_back(chart(bars.text, stacked_bar_svg(bars, style_)));
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

  // ---- (c) the roofline ------------------------------------------------------------------------
  const Op* op_named(const std::string& name) const {
    for (const auto& op : m_.roofline.ops.ops)
      if (op.name == name) return &op;
    return nullptr;
  }

  std::string bound(const std::optional<bool>& compute_bound) const {
    if (!compute_bound) return dash();
    return t(*compute_bound ? Txt::kComputeBound : Txt::kMemoryBound);
  }

  std::string gemm_label(const ReportGemm& g) const {
    if (g.reference)
      return f(Txt::kReferenceLinear, n(g.shape.k, 0), n(g.shape.n, 0), n(g.shape.m, 0));
    const Workload& w = m_.roofline.workload;
    const Op* op = op_named(g.op_name);
    if (op && op->op_class == OpClass::kAdapter)
      return f(Txt::kOpAdapterLabel, w.model->arch.name, w.lora.rank, code(g.op_name));
    return f(Txt::kOpGemmLabel, w.model->arch.name, code(g.op_name), n(g.shape.m, 0));
  }

  DocSection roofline() const {
    const ReportRoofline& r = m_.roofline;
    DocSection s{"roofline", t(Txt::kRooflineTitle), {}};
    s.blocks.push_back(paragraph(t(Txt::kRooflineDefinition)));
    if (m_.references.size() >= 2) {
      const ReferenceGemm& a = m_.references[0];
      const ReferenceGemm& b = m_.references[1];
      if (a.shape.n == b.shape.n && a.shape.k == b.shape.k) {
        const GemmCost ca = a.cost(), cb = b.cost();
        s.blocks.push_back(
            paragraph(f(Txt::kRooflineNvidiaExample, n(a.shape.k, 0), n(a.shape.n, 0),
                        n(intensity(ca.flops, ca.bytes), 0), n(a.shape.m, 0),
                        n(intensity(cb.flops, cb.bytes), 0), n(b.shape.m, 0))));
      }
    }
    DocTable opb;
    opb.caption = t(Txt::kOpsPerByteCaption);
    opb.headers = {t(Txt::kColCard), t(Txt::kColDenseBf16), t(Txt::kColBandwidth), "ops:byte"};
    opb.numeric = {false, true, true, true};
    for (const Device& d : r.devices) {
      const auto rate = d.rate(TensorPrecision::kBF16);
      const auto ratio = d.ops_per_byte(TensorPrecision::kBF16);
      opb.rows.push_back(
          {card_name(*d.gpu), rate ? n(to_TFLOPS(*rate), 1) + " TFLOPS" : t(Txt::kUnknown),
           n(to_GBps(d.bandwidth), 0) + " GB/s", ratio ? n(*ratio, 0) : t(Txt::kUnknown)});
    }
    s.blocks.push_back(table(std::move(opb)));

    DocTable gemms;
    gemms.caption = t(Txt::kIntensityCaption);
    gemms.headers = {t(Txt::kColOperation), "M × N × K", t(Txt::kColPrecision),
                     t(Txt::kColIntensity)};
    gemms.numeric = {false, true, false, true};
    for (const Device& d : r.devices) {
      gemms.headers.push_back(f(Txt::kColOnCard, card_name(*d.gpu)));
      gemms.numeric.push_back(false);
    }
    for (const auto& g : r.gemms) {
      std::vector<std::string> row = {
          gemm_label(g),
          fmt::format("{} × {} × {}", n(g.shape.m, 0), n(g.shape.n, 0), n(g.shape.k, 0)),
          upper(tensor_precision_name(g.precision)), n(g.intensity, 1)};
      for (const auto& cb : g.compute_bound)
        row.push_back(bound(cb));
      gemms.rows.push_back(std::move(row));
    }
    s.blocks.push_back(table(std::move(gemms)));
    if (!r.run) return s;

    // Which of the run's big GEMMs are compute-bound where, and what that means for the ratios.
    std::vector<std::string> compute_bound_on, memory_bound_on;
    for (const auto& g : r.gemms) {
      const Op* op = g.reference ? nullptr : op_named(g.op_name);
      if (!op || op->op_class != OpClass::kGemm) continue;
      for (std::size_t c = 0; c < g.compute_bound.size(); ++c)
        if (g.compute_bound[c])
          (*g.compute_bound[c] ? compute_bound_on : memory_bound_on)
              .push_back(card_name(*m_.cards[c]));
    }
    if (!compute_bound_on.empty() && memory_bound_on.empty())
      s.blocks.push_back(paragraph(f(Txt::kGemmsComputeBound, join(compute_bound_on))));
    s.blocks.push_back(paragraph(f(Txt::kMemoryBoundOps, r.workload.lora.rank)));
    for (std::size_t c = 1; c < r.versus_first.size(); ++c) {
      if (!r.versus_first[c]) continue;
      const StepComparison& cmp = *r.versus_first[c];
      s.blocks.push_back(paragraph(f(Txt::kRatioSentence, r.run->name, card_name(*m_.cards[0]),
                                     card_name(*m_.cards[c]), times(cmp.overall),
                                     percent(cmp.compute_bound_share_a),
                                     times(cmp.compute_bound_ratio), times(cmp.tensor_rate_ratio),
                                     times(cmp.memory_bound_ratio), times(cmp.bandwidth_ratio))));
    }
    s.blocks.push_back(table(step_table()));
    std::vector<std::string> throughput, untimed;
    for (std::size_t c = 0; c < r.steps.size(); ++c) {
      if (r.steps[c].feasible)
        throughput.push_back(f(Txt::kStepThroughput, card_name(*m_.cards[c]),
                               n(r.steps[c].tokens_per_second, 0), n(100 * r.steps[c].mfu, 0)));
      else
        untimed.push_back(f(Txt::kUntimed, card_name(*m_.cards[c]), r.steps[c].reason));
    }
    if (!throughput.empty()) s.blocks.push_back(paragraph(join(throughput) + "."));
    if (!untimed.empty()) s.blocks.push_back(list(untimed));
    RooflineChart rc = roofline_chart();
    s.blocks.push_back(chart(rc.text, roofline_svg(rc, style_)));
    return s;
  }

  DocTable step_table() const {
    const ReportRoofline& r = m_.roofline;
    const Workload& w = r.workload;
    DocTable tbl;
    tbl.caption = f(Txt::kStepCaption, r.run->name, w.model->arch.name, method(w),
                    n(static_cast<double>(w.tokens_per_micro_batch()), 0),
                    upper(compute_format_name(w.precision)));
    tbl.headers = {t(Txt::kColOpClass)};
    for (const GpuSpec* g : m_.cards)
      tbl.headers.push_back(f(Txt::kColMsOn, card_name(*g)));
    for (std::size_t c = 1; c < m_.cards.size(); ++c)
      tbl.headers.push_back(card_name(*m_.cards[0]) + " / " + card_name(*m_.cards[c]));
    tbl.headers.push_back(f(Txt::kColComputeBoundOn, card_name(*m_.cards[0])));
    tbl.numeric.assign(tbl.headers.size(), true);
    tbl.numeric[0] = false;
    const auto ms = [&](std::size_t c, Seconds s) {
      return r.steps[c].feasible ? n(s.value * 1e3, 1) : dash();
    };
    const auto ratio = [&](std::size_t c, double v) {
      return r.versus_first[c] && v > 0 ? times(v) : dash();
    };
    for (auto cls : kAllOpClasses) {
      const std::size_t i = static_cast<std::size_t>(cls);
      bool present = false;
      for (const auto& st : r.steps)
        present |= st.feasible && st.of(cls).value > 0;
      if (!present) continue;
      std::vector<std::string> row = {op_class(cls)};
      for (std::size_t c = 0; c < r.steps.size(); ++c)
        row.push_back(ms(c, r.steps[c].of(cls)));
      for (std::size_t c = 1; c < r.steps.size(); ++c)
        row.push_back(ratio(c, r.versus_first[c] ? r.versus_first[c]->class_ratio[i] : 0));
      const StepEstimate& a = r.steps[0];
      row.push_back(a.feasible && a.of(cls).value > 0
                        ? percent(a.class_compute_bound_seconds[i] / a.of(cls))
                        : dash());
      tbl.rows.push_back(std::move(row));
    }
    std::vector<std::string> total = {t(Txt::kStepRow)};
    for (std::size_t c = 0; c < r.steps.size(); ++c)
      total.push_back(ms(c, r.steps[c].step));
    for (std::size_t c = 1; c < r.steps.size(); ++c)
      total.push_back(ratio(c, r.versus_first[c] ? r.versus_first[c]->overall : 0));
    total.push_back(r.steps[0].feasible ? percent(r.steps[0].compute_bound_share()) : dash());
    tbl.rows.push_back(std::move(total));
    return tbl;
  }

  RooflineChart roofline_chart() const {
    const ReportRoofline& r = m_.roofline;
    RooflineChart c;
    c.text = {"chart-roofline", f(Txt::kChartRooflineTitle, r.run->name),
              t(Txt::kChartRooflineDesc)};
    c.x_label = t(Txt::kAxisIntensity);
    c.y_label = t(Txt::kAxisTflops);
    c.points_legend = t(Txt::kRooflinePoints);
    for (std::size_t i = 0; i < r.devices.size(); ++i) {
      const Device& d = r.devices[i];
      const auto rate = d.rate(TensorPrecision::kBF16);
      if (!rate) continue;
      c.roofs.push_back(
          {f(Txt::kRoofLabel, card_name(*d.gpu), n(to_TFLOPS(*rate), 1), n(to_GBps(d.bandwidth), 0),
             n(*d.ops_per_byte(TensorPrecision::kBF16), 0)),
           to_TFLOPS(*rate), to_GBps(d.bandwidth) / 1000, static_cast<int>(i)});
    }
    for (const auto& p : r.points)
      for (std::size_t i = 0; i < p.achieved.size(); ++i)
        if (p.achieved[i])
          c.points.push_back(
              {r.ops.ops[p.op].intensity(), *p.achieved[i] / 1e12, static_cast<int>(i)});
    for (const auto& g : r.gemms) {
      if (g.reference) continue;
      const Op* op = op_named(g.op_name);
      c.markers.push_back(
          {g.intensity,
           f(op && op->op_class == OpClass::kAdapter ? Txt::kMarkerAdapter : Txt::kMarkerGemm,
             n(g.intensity, 0))});
    }
    return c;
  }

  // ---- (d) tensor rates ------------------------------------------------------------------------
  std::string precision_label(TensorPrecision p) const {
    return upper(tensor_precision_name(p)) + (p == TensorPrecision::kINT8 ? " (TOPS)" : "");
  }

  // Notes that share a text are given once: "RTX PRO 6000 Server, BF16 and FP16: ...".
  struct GroupedNotes {
    std::vector<std::string> texts;
    std::vector<std::vector<std::string>> cards, subjects;
    void add(const std::string& text, const std::string& card, const std::string& subject) {
      const auto it = std::find(texts.begin(), texts.end(), text);
      const auto i = static_cast<std::size_t>(it - texts.begin());
      if (it == texts.end()) {
        texts.push_back(text);
        cards.emplace_back();
        subjects.emplace_back();
      }
      if (std::find(cards[i].begin(), cards[i].end(), card) == cards[i].end())
        cards[i].push_back(card);
      if (std::find(subjects[i].begin(), subjects[i].end(), subject) == subjects[i].end())
        subjects[i].push_back(subject);
    }
  };

  // A card made from the same chip as the first compared card (same architecture and memory):
  // its ratio to that card says nothing about the comparison.
  bool same_chip_as_first(const GpuSpec& g) const {
    const GpuSpec& a = *m_.cards.front();
    return g.architecture == a.architecture && g.memory_type.value == a.memory_type.value &&
           g.datasheet_GB.value == a.datasheet_GB.value;
  }

  DocSection rates() const {
    const ReportRates& r = m_.rates;
    DocSection s{"rates", t(Txt::kRatesTitle), {}};
    s.blocks.push_back(paragraph(t(Txt::kRatesIntro)));
    std::vector<std::size_t> versus;  // cards the first compared card is set against
    for (std::size_t c = 1; c < r.cards.size(); ++c)
      if (!same_chip_as_first(*r.cards[c])) versus.push_back(c);
    DocTable tbl;
    tbl.caption = t(Txt::kRatesCaption);
    tbl.headers = {t(Txt::kColPrecision)};
    for (const GpuSpec* g : r.cards)
      tbl.headers.push_back(card_name(*g));
    for (std::size_t c : versus)
      tbl.headers.push_back(card_name(*r.cards[0]) + " / " + card_name(*r.cards[c]));
    tbl.numeric.assign(tbl.headers.size(), true);
    tbl.numeric[0] = false;
    GroupedNotes unknown;
    for (auto p : kAllTensorPrecisions) {
      bool any = false;
      for (const GpuSpec* g : r.cards)
        any |= g->tensor_figure(p).value.has_value();
      if (!any) continue;  // a precision no card has a rate for
      std::vector<std::string> row = {precision_label(p)};
      for (const GpuSpec* g : r.cards) {
        const Figure<double>& fig = g->tensor_figure(p);
        if (!fig.value) {
          row.push_back(t(Txt::kUnknown));
          unknown.add(fig.unknown_reason, card_name(*g), upper(tensor_precision_name(p)));
          continue;
        }
        row.push_back(n(*fig.value, 1) + (fig.sparse_halved ? "*" : ""));
      }
      for (std::size_t c : versus) {
        const auto& ratio = r.first_over[c][static_cast<std::size_t>(p)];
        row.push_back(ratio ? times(*ratio) : dash());
      }
      tbl.rows.push_back(std::move(row));
    }
    s.blocks.push_back(table(std::move(tbl)));
    std::vector<std::string> notes;
    for (std::size_t i = 0; i < unknown.texts.size(); ++i)
      notes.push_back(f(Txt::kRateUnknown, join(unknown.cards[i]), join(unknown.subjects[i]),
                        unknown.texts[i]));
    for (const GpuSpec* g : r.cards) {
      std::vector<std::string> with_accumulate;
      std::string mode;
      for (auto p : kAllTensorPrecisions) {
        const auto& fig = g->tensor_figure(p);
        if (fig.accumulate.empty()) continue;
        with_accumulate.push_back(upper(tensor_precision_name(p)));
        mode = upper(fig.accumulate);
      }
      if (!with_accumulate.empty())
        notes.push_back(f(Txt::kAccumulateNote, card_name(*g), join(with_accumulate), mode));
    }
    for (std::size_t c : versus) {
      const auto& bf16 = r.first_over[c][static_cast<std::size_t>(TensorPrecision::kBF16)];
      const auto& fp8 = r.first_over[c][static_cast<std::size_t>(TensorPrecision::kFP8)];
      if (bf16 && fp8)
        s.blocks.push_back(
            paragraph(f(Txt::kRatesRatio, card_name(*r.cards[0]), card_name(*r.cards[c]),
                        n(to_TFLOPS(*r.devices[0].rate(TensorPrecision::kBF16)), 1),
                        n(to_TFLOPS(*r.devices[c].rate(TensorPrecision::kBF16)), 1), times(*bf16),
                        times(*fp8))));
      else if (!bf16)
        s.blocks.push_back(paragraph(f(Txt::kRatesNoRatio, card_name(*r.cards[c]))));
    }
    s.blocks.push_back(list(notes));

    s.blocks.push_back(paragraph(t(Txt::kFormatsIntro)));
    DocTable formats;
    formats.caption = t(Txt::kFormatsCaption);
    formats.headers = {t(Txt::kColFormat)};
    for (const GpuSpec* g : r.cards)
      formats.headers.push_back(card_name(*g));
    formats.numeric.assign(formats.headers.size(), false);
    // Footnotes by text: cards that share a rule share its note.
    GroupedNotes why;
    const auto& names = compute_format_names();
    for (std::size_t i = 0; i < names.size(); ++i) {
      std::vector<std::string> row = {upper(names[i])};
      for (std::size_t c = 0; c < r.cards.size(); ++c) {
        const FormatSupport& fs = r.formats[c][i];
        std::string cell = t(fs.supported ? Txt::kYes : Txt::kNo);
        const std::string& text = fs.supported ? fs.caveat : fs.reason;
        if (!text.empty()) {
          why.add(text, card_name(*r.cards[c]), upper(names[i]));
          const auto at = std::find(why.texts.begin(), why.texts.end(), text) - why.texts.begin();
          cell += fmt::format(" [{}]", at + 1);
        }
        row.push_back(cell);
      }
      formats.rows.push_back(std::move(row));
    }
    s.blocks.push_back(table(std::move(formats)));
    std::vector<std::string> format_notes;
    for (std::size_t i = 0; i < why.texts.size(); ++i)
      format_notes.push_back(fmt::format("[{}] {}, {}: {}", i + 1, join(why.cards[i]),
                                         join(why.subjects[i]), why.texts[i]));
    s.blocks.push_back(list(format_notes));
    return s;
  }

  // ---- (e) more than one card ------------------------------------------------------------------
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
      s.blocks.push_back(chart(lc.text, line_chart_svg(lc, style_)));
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
      for (const auto& p : series.points)
        if (p.result.memory.verdict == Verdict::kFits && p.result.step.feasible)
          ls.points.emplace_back(p.count, p.result.tokens_per_second);
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

  // ---- (f) MIG ---------------------------------------------------------------------------------
  std::string mig_note(const MigNote& note, const GpuSpec& g) const {
    if (lang_ == ReportLang::kEn) return note.text;
    if (note.id == "single_gpu_jobs") return t(Txt::kMigRuleSingle);
    if (note.id == "compute_display_mode") return f(Txt::kMigRuleDisplay, card_name(g));
    if (note.id.starts_with("dispute.")) {
      const MigProfile* p = g.mig.find(note.id.substr(std::string("dispute.").size()));
      if (p)
        return f(Txt::kMigDispute, card_name(g), p->name, n(p->memory_GB.value.value_or(0), 1),
                 p->memory_GB.dispute);
    }
    return note.text;
  }

  DocSection mig() const {
    DocSection s{"mig", t(Txt::kMigTitle), {}};
    s.blocks.push_back(paragraph(t(Txt::kMigIntro)));
    if (m_.mig.empty()) s.blocks.push_back(paragraph(t(Txt::kMigNone)));
    std::vector<std::string> notes;
    std::set<std::string> seen;
    for (const auto& mc : m_.mig) {
      const MigSpec& spec = mc.gpu->mig;
      s.blocks.push_back(heading(card_name(*mc.gpu)));
      DocTable profiles;
      profiles.caption = f(Txt::kMigProfilesCaption, card_name(*mc.gpu));
      profiles.headers = {t(Txt::kColProfile), t(Txt::kColInstanceMemory),
                          t(Txt::kColInstancesPerCard), t(Txt::kColComputeSlices)};
      profiles.numeric = {false, true, true, true};
      for (std::size_t i = 0; i < spec.profiles.size(); ++i) {
        const MigProfile& p = spec.profiles[i];
        profiles.rows.push_back({code(p.name), gb(p.memory(), 1),
                                 std::to_string(mc.card.most_instances[i]),
                                 fmt::format("{}/{}", p.compute_slices, spec.compute_slices)});
      }
      s.blocks.push_back(table(std::move(profiles)));
      DocTable fit;
      fit.caption = f(Txt::kMigFitCaption, card_name(*mc.gpu));
      fit.headers = {t(Txt::kColRun)};
      for (const auto& p : spec.profiles)
        fit.headers.push_back(code(p.name));
      fit.headers.push_back(t(Txt::kColSmallestFit));
      fit.headers.push_back(t(Txt::kColJobsPerCard));
      fit.numeric.assign(fit.headers.size(), true);
      fit.numeric[0] = false;
      for (std::size_t r = 0; r < mc.runs.size(); ++r) {
        const MigFitReport& rep = mc.runs[r];
        std::vector<std::string> row = {m_.memory[r].run->name};
        for (const auto& pf : rep.profiles)
          row.push_back(gb(pf.memory.free, 1) + " " + verdict_mark(pf.memory.verdict));
        const MigProfileFit* smallest = rep.smallest_fit(mc.card);
        row.push_back(smallest
                          ? code(spec.profiles[static_cast<std::size_t>(smallest->profile)].name)
                          : dash());
        row.push_back(smallest ? std::to_string(smallest->most_per_card) : dash());
        fit.rows.push_back(std::move(row));
      }
      s.blocks.push_back(table(std::move(fit)));
      for (const auto& note : mc.notes)
        if (note.id != "single_gpu_jobs" || seen.insert(note.id).second)
          notes.push_back(mig_note(note, *mc.gpu));
    }
    if (!notes.empty()) s.blocks.push_back(list(notes));
    return s;
  }

  // ---- (g) which card for which run -----------------------------------------------------------
  std::string rank_reason(RankBy r) const {
    switch (r) {
      case RankBy::kCardHours:
        return t(Txt::kRankCardHours);
      case RankBy::kTime:
        return t(Txt::kRankTime);
      case RankBy::kCost:
        return t(Txt::kRankCost);
      case RankBy::kEnergy:
        break;
    }
    return t(Txt::kRankEnergy);
  }

  std::string which_cell(const RunPlan::PerGpu& pg) const {
    if (!pg.minimum) return t(Txt::kVerdictDoesNotFit);
    const Option& o = *pg.minimum;
    if (o.count == 1) return f(Txt::kWhichOne, n(to_GB(o.free), 0), n(o.time_to_train_hours, 1));
    return f(Txt::kWhichMany, o.count, sharding(o.sharding), gb(o.model_states, 1),
             n(o.time_to_train_hours, 1));
  }

  std::string choice(const Option& o) const {
    std::string s = fmt::format("{} × {}", o.count, card_name(*o.gpu));
    if (o.mig) s += " · MIG " + code(o.mig->name);
    if (o.count > 1) s += fmt::format(" ({}, {})", sharding(o.sharding), code(o.topology));
    return s;
  }

  std::string reason(const RunPlan& rp) const {
    if (!rp.recommendation) {
      std::vector<std::string> why;
      for (const auto& pg : rp.per_gpu)
        if (!pg.why_not.empty()) why.push_back(pg.why_not);
      return f(Txt::kRecNone, rp.run->name, join(why));
    }
    const Option& o = *rp.recommendation;
    const std::string head = f(Txt::kRecHead, rp.run->name, choice(o), rank_reason(m_.plan.rank_by),
                               n(o.card_hours, 1), n(o.time_to_train_hours, 2));
    if (o.count == 1) return head + t(Txt::kRecOneCard);
    return head + f(Txt::kRecManyCards, strategy(o.strategy), code(o.topology),
                    percent(o.scaling_efficiency));
  }

  DocSection recommendations() const {
    DocSection s{"recommendations", t(Txt::kRecTitle), {}};
    std::vector<std::string> counts = {"1"};
    for (int c : m_.counts)
      counts.push_back(std::to_string(c));
    s.blocks.push_back(paragraph(
        f(Txt::kRecIntro, join(counts, Txt::kOr), m_.runs->allow_mig ? t(Txt::kRecIntroMig) : "",
          n(static_cast<double>(m_.plan.evaluations), 0), rank_reason(m_.plan.rank_by))));
    DocTable which;
    which.caption = t(Txt::kWhichCaption);
    which.headers = {t(Txt::kColRun)};
    for (const GpuSpec* g : m_.cards)
      which.headers.push_back(card_name(*g));
    which.numeric.assign(which.headers.size(), false);
    for (const auto& rp : m_.plan.runs) {
      std::vector<std::string> row = {rp.run->name};
      for (const GpuSpec* g : m_.cards) {
        std::string cell = dash();
        for (const auto& pg : rp.per_gpu)
          if (pg.gpu == g) cell = which_cell(pg);
        row.push_back(cell);
      }
      which.rows.push_back(std::move(row));
    }
    s.blocks.push_back(table(std::move(which)));

    DocTable rec;
    rec.caption = t(Txt::kRecCaption);
    rec.headers = {t(Txt::kColRun),         t(Txt::kColChoice),   t(Txt::kColMicroBatch),
                   t(Txt::kColRecompute),   t(Txt::kColStep),     t(Txt::kColTokensPerSecond),
                   t(Txt::kColTimeToTrain), t(Txt::kColCardHours)};
    rec.numeric = {false, false, true, false, true, true, true, true};
    std::vector<std::string> reasons;
    for (const auto& rp : m_.plan.runs) {
      reasons.push_back(reason(rp));
      if (!rp.recommendation) {
        rec.rows.push_back({rp.run->name, t(Txt::kVerdictDoesNotFit), dash(), dash(), dash(),
                            dash(), dash(), dash()});
        continue;
      }
      const Option& o = *rp.recommendation;
      rec.rows.push_back({rp.run->name, choice(o), n(static_cast<double>(o.micro_batch), 0),
                          recompute(o.recompute), seconds(o.step_seconds, 2),
                          n(o.tokens_per_second, 0), n(o.time_to_train_hours, 2) + " h",
                          n(o.card_hours, 2)});
    }
    s.blocks.push_back(table(std::move(rec)));
    s.blocks.push_back(list(reasons));

    std::vector<std::string> bridged;
    int bridge_cards = 0;
    for (const GpuSpec* g : m_.cards)
      if (g->nvlink.kind == LinkKind::kBridge) {
        bridged.push_back(card_name(*g));
        bridge_cards = std::max(bridge_cards, g->nvlink.bridge_max_cards);
      }
    if (!bridged.empty() && !m_.scaling.empty())
      s.blocks.push_back(paragraph(f(Txt::kRecSharded, join(bridged), bridge_cards)));
    s.blocks.push_back(paragraph(t(Txt::kRecOneJob)));

    s.blocks.push_back(paragraph(t(Txt::kFleetIntro)));
    DocTable fleet;
    fleet.caption = t(Txt::kFleetCaption);
    fleet.headers = {t(Txt::kColCard), t(Txt::kColFleetCards), t(Txt::kColWithoutMig),
                     t(Txt::kColMultiCardRuns), t(Txt::kColCannotHold)};
    fleet.numeric = {false, true, true, true, false};
    for (const auto& fe : m_.plan.fleet)
      fleet.rows.push_back({card_name(*fe.gpu), std::to_string(fe.cards),
                            std::to_string(fe.cards_without_mig),
                            std::to_string(fe.multi_card_runs_cards),
                            fe.unplaced.empty() ? dash() : join(fe.unplaced)});
    s.blocks.push_back(table(std::move(fleet)));
    return s;
  }

  // ---- (h) how the figures were derived, and what was not measured ------------------------------
  std::vector<std::string> source_ids() const {
    std::vector<std::string> ids;
    const auto add = [&](const std::vector<std::string>& more) {
      for (const auto& id : more)
        if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    };
    for (const GpuSpec* g : m_.rates.cards) {
      add(g->visible_MiB.sources);
      add(g->bandwidth_GBps.sources);
      add(g->tdp_W.sources);
      for (auto p : {TensorPrecision::kBF16, TensorPrecision::kFP8})
        add(g->tensor_figure(p).sources);
      add(g->pcie.sources);
      add(g->nvlink.sources);
      if (g->mig.supported) add(g->mig.sources);
    }
    for (const auto& r : m_.references)
      add(r.sources);
    for (const auto& fs : m_.rates.formats)
      for (const auto& s : fs)
        add(s.sources);
    for (const MigRule* r : {&m_.mig_rules.single_gpu_jobs, &m_.mig_rules.compute_display_mode})
      add(r->sources);
    return ids;
  }

  DocSection method() const {
    DocSection s{"method", t(Txt::kMethodTitle), {}};
    s.blocks.push_back(
        list({f(Txt::kMethodMemory, n(kTightHeadroomFraction * 100, 0)), t(Txt::kMethodRoofline),
              t(Txt::kMethodStep), t(Txt::kMethodComm), t(Txt::kMethodPlanner)}));
    s.blocks.push_back(paragraph(t(Txt::kMethodExplain)));
    s.blocks.push_back(heading(t(Txt::kSourcesHeading)));
    s.blocks.push_back(paragraph(t(Txt::kSourcesNote)));
    std::vector<std::string> sources;
    for (const auto& id : source_ids()) {
      const SourceInfo* info = catalog_.source(id);
      if (!info) continue;
      // Title and id only: the report fetches nothing and links nowhere; the addresses are in
      // data/sources-*.yaml.
      sources.push_back(fmt::format("{} ({})", info->title, code(info->id)));
    }
    s.blocks.push_back(list(sources));
    s.blocks.push_back(heading(t(Txt::kNotMeasuredHeading)));
    std::vector<std::string> not_measured = {t(Txt::kNotMeasuredSteps), t(Txt::kNotMeasuredMemory),
                                             t(Txt::kNotMeasuredComm), t(Txt::kNotMeasuredEnergy)};
    s.blocks.push_back(list(not_measured));
    return s;
  }

  const ReportModel& m_;
  const Catalog& catalog_;
  ReportLang lang_;
  NumberStyle style_;
};

}  // namespace

ReportFormat parse_report_format(std::string_view name, std::string_view field) {
  if (name == "md" || name == "markdown") return ReportFormat::kMarkdown;
  if (name == "html") return ReportFormat::kHtml;
  throw_unknown_name("report format", field, name, {"md", "html"});
}

ReportDocument report_document(const ReportModel& model, const Catalog& catalog, ReportLang lang) {
  return Builder(model, catalog, lang).build();
}

}  // namespace ftplan
