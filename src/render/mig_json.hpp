// JSON renderings of MIG results (`ftplan mig --json`, `ftplan pack --json`, later the HTTP API).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "mig/fit.hpp"
#include "mig/layout.hpp"
#include "mig/pack.hpp"

namespace ftplan {

// The card's MIG geometry: slices, instance limit, the maximal layouts with a placement each.
nlohmann::json mig_layouts_json(const MigCard& card);
nlohmann::json mig_notes_json(const std::vector<MigNote>& notes);
// One run in every profile: workload keys, `instances` (profile, memory_GB, max_count, free_GB,
// fits, verdict, headroom_GB, ...), `smallest_fitting_profile`, `notes`. GB = 1e9 B.
nlohmann::json mig_fit_json(const Workload& w, const MigFitReport& report, const MigCard& card);
// One packing of a queue on one card type: cards, layout per card, the one-job-per-card count.
nlohmann::json pack_json(const std::vector<PackJob>& jobs, const PackResult& result,
                         const MigCard& card);

}  // namespace ftplan
