// How the figures were derived: the models in brief, the sources the data cites, and what was
// not measured.
#include "render/report_sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace ftplan {

namespace {

class MethodSection : SectionWriter {
 public:
  using SectionWriter::SectionWriter;

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
};

}  // namespace

DocSection report_method_section(const ReportModel& m, const Catalog& catalog,
                                 const ReportWords& words) {
  return MethodSection(m, catalog, words).method();
}

}  // namespace ftplan
