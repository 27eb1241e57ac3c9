#include "mig/fit.hpp"

#include <fmt/format.h>

#include <cassert>

#include "core/format.hpp"
#include "memory/model_states.hpp"

namespace ftplan {

std::optional<Seconds> mig_instance_step_time(const Workload&, const Placement&) {
  return std::nullopt;  // perf/ hook: see mig/fit.hpp
}

const MigProfileFit* MigFitReport::smallest_fit(const MigCard& card) const {
  for (int p : card.size_order)
    if (profiles[static_cast<std::size_t>(p)].fits &&
        profiles[static_cast<std::size_t>(p)].most_per_card > 0)
      return &profiles[static_cast<std::size_t>(p)];
  return nullptr;
}

MigFitReport fit_mig(const Workload& w, const MigCard& card, const MigRules& rules, Trace* trace) {
  return fit_mig(w, model_states(w, trace), card, rules, trace);
}

MigFitReport fit_mig(const Workload& w, const ModelStates& replica, const MigCard& card,
                     const MigRules& rules, Trace* trace) {
  const GpuSpec& gpu = *card.gpu;
  const MigSpec& spec = gpu.mig;
  assert(spec.supported);
  MigFitReport r;
  r.gpu = &gpu;
  r.profiles.reserve(spec.profiles.size());
  for (std::size_t i = 0; i < spec.profiles.size(); ++i) {
    const MigProfile& prof = spec.profiles[i];
    Placement p;
    p.gpu = &gpu;
    p.mig = &prof;
    MigProfileFit f;
    f.profile = static_cast<int>(i);
    f.memory = estimate_memory(w, replica, p);
    f.fits = f.memory.verdict == Verdict::kFits;
    f.max_count = prof.max_count;
    f.most_per_card = card.most_instances[i];
    f.whole_card = is_whole_card(spec, prof);
    f.compute_fraction = static_cast<double>(prof.compute_slices) / spec.compute_slices;
    f.memory_fraction = static_cast<double>(prof.memory_slices) / spec.memory_slices;
    f.step_time = mig_instance_step_time(w, p);
    if (trace)
      trace->add({fmt::format("mig.{}.free", prof.name),
                  fmt::format("free in one {} instance after model states", prof.name),
                  to_GB(f.memory.free),
                  "GB",
                  "profile memory − model states (one instance holds the whole run: no sharding)",
                  {{"profile memory", format_GB(f.memory.capacity, 3)},
                   {"model states", format_GB(f.memory.states.total(), 3)},
                   {"instances per card", std::to_string(f.most_per_card)}},
                  "seed § MIG; profile memory from the card's data file"});
    r.profiles.push_back(std::move(f));
  }
  r.notes = mig_notes(gpu, rules);
  return r;
}

}  // namespace ftplan
