// MIG: the profiles of each card that has it, which runs fit which instance, and the rules that
// apply.
#include "render/report_sections.hpp"

#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

namespace ftplan {

namespace {

class MigSection : SectionWriter {
 public:
  using SectionWriter::SectionWriter;

  std::string mig_note(const MigNote& note, const GpuSpec& g) const {
    if (lang() == ReportLang::kEn) return note.text;
    if (note.id == "single_gpu_jobs") return t(Txt::kMigRuleSingle);
    if (note.id == "compute_display_mode") return f(Txt::kMigRuleDisplay, card_name(g));
    if (note.id.starts_with("dispute.")) {
      const MigProfile* p = g.mig.find(note.id.substr(std::string("dispute.").size()));
      if (p)
        return f(Txt::kMigDispute, card_name(g), p->name, n(p->memory_GB.value.value_or(0), 1),
                 source_words(p->memory_GB.dispute));
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
};

}  // namespace

DocSection report_mig_section(const ReportModel& m, const Catalog& catalog,
                              const ReportWords& words) {
  return MigSection(m, catalog, words).mig();
}

}  // namespace ftplan
