// Which MIG instances can share one card: the valid layouts of a card, derived from its profiles'
// placements and slice counts (data/gpus/*.yaml, `mig:`). Per card, independent of any workload.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "catalog/gpu.hpp"

namespace ftplan {

// One GPU instance: a profile (index into MigSpec::profiles) and the memory slice it starts at.
struct MigInstance {
  int profile = 0;
  int start = 0;  // occupies memory slices [start, start + profile.memory_slices)
};

// Instances that can exist side by side on one card: how many of each profile, and one placement
// that realises those counts.
struct MigLayout {
  std::vector<int> counts;             // per profile, in MigSpec::profiles order
  std::vector<MigInstance> instances;  // a witness placement, by start slice
  int compute_slices = 0;              // used by the instances
  int memory_slices = 0;               // used by the instances
  int instance_count() const { return static_cast<int>(instances.size()); }
};

// The layout rule (NVIDIA MIG user guide, GPU instance placements; NVML: creating an instance
// fails if it overlaps occupied memory slices):
//  1. an instance of profile p starts at one of p.placements and occupies the memory slices
//     [start, start + p.memory_slices); no two instances share a memory slice;
//  2. the instances' compute slices add up to at most the card's compute_slices;
//  3. at most p.max_count instances of p, and at most max_instances in all.
// Example, 7-slice parts (8 memory slices): 3g at 4 (slices 4-7) + 2g at 0 + 1g at 2 + 1g at 3
// is valid (3 + 2 + 1 + 1 = 7 compute slices); 3g at 0 + 3g at 4 + 1g is not (no slice left).
bool is_valid_placement(const MigSpec& spec, const std::vector<MigInstance>& instances);

// A profile that spans every compute and memory slice: the whole card as one instance.
bool is_whole_card(const MigSpec& spec, const MigProfile& profile);

// The layouts of one MIG card, computed once per card.
struct MigCard {
  const GpuSpec* gpu = nullptr;
  // Every distinct count vector a valid placement realises (the empty one excluded), each with a
  // witness; more instances first. Removing an instance keeps a placement valid, so this set is
  // closed under taking fewer instances.
  std::vector<MigLayout> layouts;
  std::vector<std::size_t> maximal;  // indices into `layouts` of those no other layout contains
  std::vector<int> most_instances;   // per profile: the most instances of it one layout holds
  std::vector<int> size_order;       // profile indices, smallest first: fewer memory slices, then
                                     // fewer compute slices, then less memory
  std::map<std::vector<int>, std::size_t> index;  // counts -> position in `layouts`

  const MigSpec& spec() const { return gpu->mig; }
  // The profile at index `p` of the card's profile list (an index a layout or instance holds).
  const MigProfile& profile(int p) const { return spec().profiles[static_cast<std::size_t>(p)]; }
  // The layout with exactly these counts, or nullptr when no valid placement realises them.
  const MigLayout* find(const std::vector<int>& counts) const;
};

// Enumerates the layouts of `gpu` (which must have MIG). A card file whose geometry has too many
// placements to enumerate is a UserError naming it.
MigCard make_mig_card(const GpuSpec& gpu);

}  // namespace ftplan
