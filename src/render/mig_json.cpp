#include "render/mig_json.hpp"

#include "render/json.hpp"
#include "render/reason_words.hpp"

namespace ftplan {

using nlohmann::json;

namespace {

double gb(Bytes b) {
  return round_to(to_GB(b), 3);
}

json counts_json(const MigCard& card, const std::vector<int>& counts) {
  json j = json::object();
  for (std::size_t p = 0; p < counts.size(); ++p)
    if (counts[p] > 0) j[card.spec().profiles[p].name] = counts[p];
  return j;
}

json instance_fit_json(const MigCard& card, const MigProfileFit& f) {
  const MigProfile& prof = card.profile(f.profile);
  const MemoryEstimate& m = f.memory;
  json j = {{"profile", prof.name},
            {"capacity_GB", prof.memory_GB.value.value_or(0)},
            {"memory_source", prof.memory_GB.sources},
            {"compute_slices", prof.compute_slices},
            {"memory_slices", prof.memory_slices},
            {"max_count", f.max_count},
            {"most_per_card", f.most_per_card},
            {"whole_card", f.whole_card},
            {"compute_fraction", round_to(f.compute_fraction, 4)},
            {"memory_fraction", round_to(f.memory_fraction, 4)},
            {"model_states_GB", gb(m.states.total())},
            {"free_GB", gb(m.free)},
            {"activations_GB", gb(m.activations)},
            {"overhead_GB", gb(m.overhead)},
            {"peak_GB", gb(m.peak)},
            {"headroom_GB", gb(m.headroom)},
            // Exact byte counts of the figures above, for GiB and MiB (nvidia-smi's unit).
            {"capacity_bytes", whole_bytes(m.capacity)},
            {"model_states_bytes", whole_bytes(m.states.total())},
            {"free_bytes", whole_bytes(m.free)},
            {"peak_bytes", whole_bytes(m.peak)},
            {"headroom_bytes", whole_bytes(m.headroom)},
            {"fits", f.fits},
            {"verdict", verdict_name(m.verdict)},
            {"reason", word_reason(m.reason)},
            {"step_seconds", f.step_time ? json(f.step_time->value) : json(nullptr)}};
  if (!prof.memory_GB.dispute.empty()) j["memory_dispute"] = prof.memory_GB.dispute;
  return j;
}

}  // namespace

json mig_layouts_json(const MigCard& card) {
  const MigSpec& spec = card.spec();
  json maximal = json::array();
  for (std::size_t i : card.maximal) {
    const MigLayout& l = card.layouts[i];
    json placement = json::array();
    for (const auto& inst : l.instances)
      placement.push_back(
          {{"profile", card.profile(inst.profile).name}, {"start_slice", inst.start}});
    maximal.push_back({{"counts", counts_json(card, l.counts)},
                       {"compute_slices", l.compute_slices},
                       {"memory_slices", l.memory_slices},
                       {"placement", placement}});
  }
  return {{"max_instances", spec.max_instances},
          {"compute_slices", spec.compute_slices},
          {"memory_slices", spec.memory_slices},
          {"requires_compute_display_mode", spec.requires_compute_display_mode},
          {"valid_layouts", card.layouts.size()},
          {"maximal_layouts", maximal}};
}

json mig_notes_json(const std::vector<MigNote>& notes) {
  json out = json::array();
  for (const auto& n : notes)
    out.push_back({{"id", n.id}, {"text", n.text}, {"source", n.sources}});
  return out;
}

json mig_fit_json(const Workload& w, const MigFitReport& report, const MigCard& card) {
  json j = workload_json(w);
  j["gpu"] = report.gpu->id;
  j["gpu_name"] = report.gpu->name;
  j["mig"] = mig_layouts_json(card);
  j["per_instance"] = true;
  json instances = json::array();
  for (const auto& f : report.profiles)
    instances.push_back(instance_fit_json(card, f));
  j["instances"] = instances;
  const MigProfileFit* smallest = report.smallest_fit(card);
  j["smallest_fitting_profile"] =
      smallest ? json(card.profile(smallest->profile).name) : json(nullptr);
  j["concurrent_jobs_per_card"] = smallest ? smallest->most_per_card : 0;
  j["notes"] = mig_notes_json(report.notes);
  return j;
}

json pack_json(const std::vector<PackJob>& jobs, const PackResult& r, const MigCard& card) {
  json experiments = json::array();
  for (std::size_t e = 0; e < jobs.size(); ++e) {
    const PackedExperiment& x = r.experiments[e];
    json xj = {{"name", jobs[e].name},
               {"count", jobs[e].count},
               {"home", pack_home_name(x.home)},
               {"reason", word_reason(x.reason)}};
    if (x.home == PackHome::kInstance) {
      const MigProfileFit& f = x.fit.profiles[static_cast<std::size_t>(x.profile)];
      xj["profile"] = card.profile(x.profile).name;
      xj["capacity_GB"] = gb(f.memory.capacity);
      xj["model_states_GB"] = gb(f.memory.states.total());
      xj["free_GB"] = gb(f.memory.free);
      xj["headroom_GB"] = gb(f.memory.headroom);
      xj["verdict"] = verdict_name(f.memory.verdict);
    } else {
      xj["profile"] = nullptr;
      xj["capacity_GB"] = gb(x.whole_card.capacity);
      xj["model_states_GB"] = gb(x.whole_card.states.total());
      xj["free_GB"] = gb(x.whole_card.free);
      xj["headroom_GB"] = gb(x.whole_card.headroom);
      xj["verdict"] = verdict_name(x.whole_card.verdict);
    }
    experiments.push_back(xj);
  }
  json layout = json::array();
  for (std::size_t c = 0; c < r.cards.size(); ++c) {
    const PackedCard& card_out = r.cards[c];
    json jobs_j = json::array();
    for (const auto& pj : card_out.jobs) {
      json jj = {{"experiment", jobs[static_cast<std::size_t>(pj.experiment)].name},
                 {"job", pj.job}};
      if (card_out.mig) {
        jj["profile"] = card.profile(pj.profile).name;
        jj["start_slice"] = pj.start;
      }
      jobs_j.push_back(jj);
    }
    json cj = {{"card", c + 1}, {"mig", card_out.mig}, {"jobs", jobs_j}};
    if (card_out.mig) cj["counts"] = counts_json(card, card_out.counts);
    layout.push_back(cj);
  }
  return {{"gpu", r.gpu->id},
          {"gpu_name", r.gpu->name},
          {"cards", r.total_cards()},
          {"mig_cards", r.mig_cards},
          {"whole_cards", r.whole_cards},
          {"optimal", true},
          {"optimality", pack_optimality_statement(r, card)},
          {"lower_bound", r.lower_bound},
          {"search_steps", r.search_steps},
          {"one_job_per_card_cards", r.cards_one_job_per_card},
          {"cards_saved", r.cards_one_job_per_card - r.total_cards()},
          {"jobs_placed", r.jobs_placed},
          {"jobs_unplaced", r.jobs_unplaced},
          {"rule", pack_profile_rule()},
          {"experiments", experiments},
          {"layout", layout},
          {"mig", mig_layouts_json(card)},
          {"notes", mig_notes_json(r.notes)}};
}

}  // namespace ftplan
