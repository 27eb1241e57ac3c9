// Does a run fit each MIG profile of a card, with how much room, and how many such jobs run on one
// card at once. Memory comes from estimate_memory() with Placement::mig (one home for the memory
// model and the verdict rule); this file only applies it per profile.
#pragma once

#include <optional>
#include <vector>

#include "core/trace.hpp"
#include "core/units.hpp"
#include "memory/fit.hpp"
#include "mig/layout.hpp"
#include "mig/rules.hpp"
#include "workload/workload.hpp"

namespace ftplan {

struct MigProfileFit {
  int profile = 0;        // index into MigSpec::profiles
  MemoryEstimate memory;  // capacity = the profile's memory; free = capacity − model states
  // The run fits one instance: fit's verdict is `fits` (the peak leaves at least
  // kTightHeadroomFraction of the instance). `tight` does not count: the margin absorbs
  // fragmentation, transient spikes and the error of the activation estimate (memory/fit.hpp).
  bool fits = false;
  int max_count = 0;        // the profile's instance count (data, NVIDIA MIG user guide)
  int most_per_card = 0;    // the most instances of it one valid layout holds (mig/layout.hpp)
  bool whole_card = false;  // spans every slice: the card as one instance
  // Share of the card one instance gets: compute slices / card compute slices and memory slices
  // / card memory slices (each memory slice carries its share of L2 and bandwidth).
  double compute_fraction = 0;
  double memory_fraction = 0;
  std::optional<Seconds> step_time;  // from mig_instance_step_time(); empty until perf/ fills it
};

struct MigFitReport {
  const GpuSpec* gpu = nullptr;
  std::vector<MigProfileFit> profiles;  // in MigSpec::profiles order
  std::vector<MigNote> notes;
  // The smallest profile (MigCard::size_order) the run fits, or nullptr.
  const MigProfileFit* smallest_fit(const MigCard& card) const;
};

// The run `w` in one instance of each profile of `card`. `replica`: model_states(w), computed once
// per workload by the caller (the per-profile path does not recompute it).
MigFitReport fit_mig(const Workload& w, const ModelStates& replica, const MigCard& card,
                     const MigRules& rules, Trace* trace = nullptr);
MigFitReport fit_mig(const Workload& w, const MigCard& card, const MigRules& rules,
                     Trace* trace = nullptr);

// Hook for the step-time model of src/perf/: the time of one training step of `w` in the single
// MIG instance `instance.mig` (compute_fraction of the card's SMs, memory_fraction of its memory
// bandwidth). mig/ models no time itself: this returns nothing until perf/ provides a step time
// for a placement; then it is called here and `ftplan mig` reports it (JSON step_time_s).
std::optional<Seconds> mig_instance_step_time(const Workload& w, const Placement& instance);

}  // namespace ftplan
