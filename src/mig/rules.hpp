// The MIG rules ftplan states with every MIG result, read from data/mig/rules.yaml, and the notes
// a card's MIG result carries (rules that apply to it, disputed profile figures).
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.hpp"

namespace ftplan {

struct MigRule {
  std::string id;  // "single_gpu_jobs", ...
  std::string text;
  std::vector<std::string> sources;
};

struct MigRules {
  MigRule single_gpu_jobs;       // NCCL does not run across MIG instances
  MigRule compute_display_mode;  // cards with requires_compute_display_mode
  MigRule instance_layout;       // how instances share a card (mig/layout.hpp)
};

// Parses data/mig/rules.yaml (strictly; every source id must be defined).
MigRules load_mig_rules(const Catalog& catalog);

// A note shown with a MIG result: a rule that applies to the card or a disputed figure.
struct MigNote {
  std::string id;  // the rule id, or "dispute.<profile>"
  std::string text;
  std::vector<std::string> sources;
};

// The notes for one MIG card: the single-GPU rule always; the display-mode rule where the card
// requires it; one note per profile whose memory figure is disputed in the data.
std::vector<MigNote> mig_notes(const GpuSpec& gpu, const MigRules& rules);

}  // namespace ftplan
