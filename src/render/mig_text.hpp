// Text renderings of MIG results (`ftplan mig`, `ftplan pack`).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "mig/fit.hpp"
#include "mig/layout.hpp"
#include "mig/pack.hpp"

namespace ftplan {

void print_mig_notes(std::ostream& out, const std::vector<MigNote>& notes);
// One table row per profile (all of them when `only` is null).
void print_mig_fit(std::ostream& out, const std::string& title, const MigFitReport& report,
                   const MigCard& card, const MigProfile* only = nullptr);
// The queue packed (`file`: where it was read from; `total_jobs`: the jobs of every experiment)
// and the rule that picks each job's profile.
void print_pack_heading(std::ostream& out, const std::string& file,
                        const std::vector<PackJob>& jobs, int total_jobs);
void print_pack(std::ostream& out, const std::vector<PackJob>& jobs, const PackResult& result,
                const MigCard& card);

}  // namespace ftplan
