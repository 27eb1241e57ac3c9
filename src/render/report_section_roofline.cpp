// The roofline: ops per byte of the cards, the intensity of the run's matrix products, the step
// by op class on each card, and the roofline chart.
#include "render/report_sections.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

namespace ftplan {

namespace {

class RooflineSection : SectionWriter {
 public:
  using SectionWriter::SectionWriter;

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
      s.blocks.push_back(paragraph(
          f(Txt::kRatioSentence, r.run->name, card_name(*m_.cards[0]), card_name(*m_.cards[c]),
            times(cmp.overall), percent(cmp.compute_bound_share_a), times(cmp.compute_bound_ratio),
            times(cmp.tensor_rate_ratio), times(cmp.memory_bound_ratio), times(cmp.bandwidth_ratio),
            times(cmp.effective_tensor_ratio))));
    }
    s.blocks.push_back(table(step_table()));
    std::vector<std::string> throughput, untimed;
    for (std::size_t c = 0; c < r.steps.size(); ++c) {
      if (r.steps[c].feasible)
        throughput.push_back(f(Txt::kStepThroughput, card_name(*m_.cards[c]),
                               n(r.steps[c].tokens_per_second, 0), n(100 * r.steps[c].mfu, 0)));
      else
        untimed.push_back(
            f(Txt::kUntimed, card_name(*m_.cards[c]), reason_text(r.steps[c].reason)));
    }
    if (!throughput.empty()) s.blocks.push_back(paragraph(join(throughput) + "."));
    if (!untimed.empty()) s.blocks.push_back(list(untimed));
    RooflineChart rc = roofline_chart();
    s.blocks.push_back(chart(rc.text, roofline_svg(rc, numbers())));
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
};

}  // namespace

DocSection report_roofline_section(const ReportModel& m, const Catalog& catalog,
                                   const ReportWords& words) {
  return RooflineSection(m, catalog, words).roofline();
}

}  // namespace ftplan
