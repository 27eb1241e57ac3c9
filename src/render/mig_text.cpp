#include "render/mig_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/format.hpp"
#include "render/reason_words.hpp"
#include "render/table.hpp"
#include "workload/objective.hpp"

namespace ftplan {

namespace {

std::string gb_cell(Bytes b) {
  return format_fixed(to_GB(b), 1);
}

std::string card_heading(const MigCard& card) {
  const MigSpec& s = card.spec();
  return fmt::format("{} with MIG: up to {} instances over {} compute and {} memory slices",
                     card.gpu->name, s.max_instances, s.compute_slices, s.memory_slices);
}

std::string slices_cell(const MigProfile& p) {
  return fmt::format("{}c/{}m", p.compute_slices, p.memory_slices);
}

}  // namespace

void print_mig_notes(std::ostream& out, const std::vector<MigNote>& notes) {
  out << "notes:\n";
  for (const auto& n : notes)
    out << fmt::format("  - {} [{}]\n", n.text, fmt::join(n.sources, ", "));
}

void print_mig_fit(std::ostream& out, const std::string& title, const MigFitReport& report,
                   const MigCard& card, const MigProfile* only) {
  out << title << "\n";
  out << "on one instance of each profile of the " << card_heading(card) << "\n\n";
  TextTable t({"profile", "slices", "memory GB>", "per card>", "model states GB>", "free GB>",
               "peak GB>", "headroom GB>", "verdict"});
  for (const auto& f : report.profiles) {
    const MigProfile& p = card.profile(f.profile);
    if (only && &p != only) continue;
    t.row({p.name + (f.whole_card ? " (whole card)" : ""), slices_cell(p),
           format_number(p.memory_GB.value.value_or(0), 1), std::to_string(f.most_per_card),
           gb_cell(f.memory.states.total()), gb_cell(f.memory.free), gb_cell(f.memory.peak),
           gb_cell(f.memory.headroom), std::string(verdict_name(f.memory.verdict))});
  }
  t.print(out);
  out << "\nfree = instance memory − model states; headroom = instance memory − estimated peak;\n"
         "per card = the most instances of the profile one valid layout holds. Verdict rule as "
         "in `ftplan fit`.\n";
  if (const MigProfileFit* s = report.smallest_fit(card)) {
    const MigProfile& p = card.profile(s->profile);
    out << fmt::format(
        "\nsmallest profile where it fits: {} — {} such job{} run at once on one {}\n", p.name,
        s->most_per_card, s->most_per_card == 1 ? "" : "s", card.gpu->name);
  } else {
    out << fmt::format("\nit fits no MIG profile of the {}\n", card.gpu->name);
  }
  out << "\n";
  print_mig_notes(out, report.notes);
}

void print_pack_heading(std::ostream& out, const std::string& file,
                        const std::vector<PackJob>& jobs, int total_jobs) {
  out << fmt::format("pack {}: {} experiment{}, {} jobs\nrule: {}\n", file, jobs.size(),
                     jobs.size() == 1 ? "" : "s", total_jobs, pack_profile_rule());
}

void print_pack(std::ostream& out, const std::vector<PackJob>& jobs, const PackResult& r,
                const MigCard& card) {
  out << "on the " << card_heading(card) << "\n\n";
  TextTable t({"experiment", "jobs>", "run", "runs in", "memory GB>", "model states GB>",
               "free GB>", "verdict"});
  for (std::size_t e = 0; e < jobs.size(); ++e) {
    const PackedExperiment& x = r.experiments[e];
    const MemoryEstimate& m = x.home == PackHome::kInstance
                                  ? x.fit.profiles[static_cast<std::size_t>(x.profile)].memory
                                  : x.whole_card;
    std::string home = x.home == PackHome::kInstance    ? card.profile(x.profile).name
                       : x.home == PackHome::kWholeCard ? "whole card, MIG off"
                                                        : "unplaced";
    t.row(
        {jobs[e].name, std::to_string(jobs[e].count),
         fmt::format("{} {}", jobs[e].workload.model->arch.id, run_method_short(jobs[e].workload)),
         home, gb_cell(m.capacity), gb_cell(m.states.total()), gb_cell(m.free),
         std::string(verdict_name(m.verdict))});
  }
  t.print(out);
  for (std::size_t e = 0; e < jobs.size(); ++e)
    if (r.experiments[e].home != PackHome::kInstance)
      out << fmt::format("  {}: {}\n", jobs[e].name, word_reason(r.experiments[e].reason));

  out << fmt::format("\ncards: {} {}\n", r.total_cards(), card.gpu->id);
  for (std::size_t c = 0; c < r.cards.size(); ++c) {
    const PackedCard& pc = r.cards[c];
    if (!pc.mig) {
      const PackedJob& j = pc.jobs.front();
      out << fmt::format("  card {}  MIG off, whole card: {} #{}\n", c + 1,
                         jobs[static_cast<std::size_t>(j.experiment)].name, j.job);
      continue;
    }
    std::vector<std::string> parts;
    for (std::size_t p = 0; p < pc.counts.size(); ++p)
      if (pc.counts[p] > 0)
        parts.push_back(fmt::format("{} × {}", pc.counts[p], card.spec().profiles[p].name));
    out << fmt::format("  card {}  MIG {}\n", c + 1, fmt::join(parts, " + "));
    for (const PackedJob& j : pc.jobs) {
      const MigProfile& p = card.profile(j.profile);
      const std::string slices = p.memory_slices == 1 ? fmt::format("slice {}", j.start)
                                                      : fmt::format("slices {}-{}", j.start,
                                                                    j.start + p.memory_slices - 1);
      out << fmt::format("    {:<10} {:<11} {} #{}\n", p.name, slices,
                         jobs[static_cast<std::size_t>(j.experiment)].name, j.job);
    }
  }
  out << fmt::format("{}\n", pack_optimality_statement(r, card));
  out << fmt::format(
      "one job per whole card instead: {} card{}{}\n", r.cards_one_job_per_card,
      r.cards_one_job_per_card == 1 ? "" : "s",
      r.cards_one_job_per_card > r.total_cards()
          ? fmt::format(" (MIG saves {})", r.cards_one_job_per_card - r.total_cards())
          : "");
  if (r.jobs_unplaced > 0)
    out << fmt::format("unplaced: {} job{} that do not fit one card (see above)\n", r.jobs_unplaced,
                       r.jobs_unplaced == 1 ? "" : "s");
  out << "\n";
  print_mig_notes(out, r.notes);
}

}  // namespace ftplan
