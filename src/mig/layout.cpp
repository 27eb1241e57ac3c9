#include "mig/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <numeric>

#include "core/error.hpp"

namespace ftplan {

namespace {

// A user's card file can describe any geometry; the catalog's cards need a few hundred steps.
constexpr long kMaxEnumerationSteps = 2'000'000;

bool starts_at(const MigProfile& p, int slice) {
  return std::find(p.placements.begin(), p.placements.end(), slice) != p.placements.end();
}

// Depth-first walk over the memory slices in order: at each slice an instance of a profile that
// may start there does (its slices are then skipped), or none does. Every placement that
// satisfies the rule is visited exactly once.
class Enumerator {
 public:
  explicit Enumerator(const GpuSpec& gpu) : gpu_(gpu), spec_(gpu.mig) {
    counts_.assign(spec_.profiles.size(), 0);
  }

  void walk(int slice) {
    if (++steps_ > kMaxEnumerationSteps)
      throw UserError(ErrorCode::kUnsupported,
                      fmt::format("{}: the MIG geometry ({} memory slices, {} profiles) has too "
                                  "many placements to enumerate",
                                  gpu_.source_file.empty() ? gpu_.id : gpu_.source_file,
                                  spec_.memory_slices, spec_.profiles.size()),
                      "mig");
    if (slice == spec_.memory_slices) {
      record();
      return;
    }
    // Instances first, the empty slice last: the first witness of each layout starts at slice 0.
    for (std::size_t i = 0; i < spec_.profiles.size(); ++i) {
      if (static_cast<int>(current_.size()) >= spec_.max_instances) break;
      const MigProfile& p = spec_.profiles[i];
      if (!starts_at(p, slice) || slice + p.memory_slices > spec_.memory_slices) continue;
      if (counts_[i] >= p.max_count || compute_ + p.compute_slices > spec_.compute_slices) continue;
      current_.push_back({static_cast<int>(i), slice});
      ++counts_[i];
      compute_ += p.compute_slices;
      walk(slice + p.memory_slices);
      compute_ -= p.compute_slices;
      --counts_[i];
      current_.pop_back();
    }
    walk(slice + 1);
  }

  std::map<std::vector<int>, MigLayout> found;

 private:
  void record() {
    if (current_.empty() || found.count(counts_)) return;
    MigLayout l;
    l.counts = counts_;
    l.instances = current_;
    l.compute_slices = compute_;
    for (const auto& inst : current_)
      l.memory_slices += spec_.profiles[static_cast<std::size_t>(inst.profile)].memory_slices;
    found.emplace(counts_, std::move(l));
  }

  const GpuSpec& gpu_;
  const MigSpec& spec_;
  std::vector<int> counts_;
  std::vector<MigInstance> current_;
  int compute_ = 0;
  long steps_ = 0;
};

bool contains(const std::vector<int>& big, const std::vector<int>& small) {
  for (std::size_t i = 0; i < big.size(); ++i)
    if (big[i] < small[i]) return false;
  return true;
}

}  // namespace

bool is_valid_placement(const MigSpec& spec, const std::vector<MigInstance>& instances) {
  if (!spec.supported || static_cast<int>(instances.size()) > spec.max_instances) return false;
  std::vector<bool> occupied(static_cast<std::size_t>(spec.memory_slices), false);
  std::vector<int> counts(spec.profiles.size(), 0);
  int compute = 0;
  for (const auto& inst : instances) {
    if (inst.profile < 0 || static_cast<std::size_t>(inst.profile) >= spec.profiles.size())
      return false;
    const MigProfile& p = spec.profiles[static_cast<std::size_t>(inst.profile)];
    if (!starts_at(p, inst.start) || inst.start + p.memory_slices > spec.memory_slices)
      return false;
    for (int s = inst.start; s < inst.start + p.memory_slices; ++s) {
      if (occupied[static_cast<std::size_t>(s)]) return false;
      occupied[static_cast<std::size_t>(s)] = true;
    }
    if (++counts[static_cast<std::size_t>(inst.profile)] > p.max_count) return false;
    compute += p.compute_slices;
  }
  return compute <= spec.compute_slices;
}

bool is_whole_card(const MigSpec& spec, const MigProfile& profile) {
  return profile.compute_slices == spec.compute_slices &&
         profile.memory_slices == spec.memory_slices;
}

const MigLayout* MigCard::find(const std::vector<int>& counts) const {
  auto it = index.find(counts);
  return it == index.end() ? nullptr : &layouts[it->second];
}

MigCard make_mig_card(const GpuSpec& gpu) {
  assert(gpu.mig.supported && "make_mig_card needs a card with MIG");
  const MigSpec& spec = gpu.mig;
  MigCard card;
  card.gpu = &gpu;
  Enumerator e(gpu);
  e.walk(0);
  for (auto& [counts, layout] : e.found)
    card.layouts.push_back(std::move(layout));
  std::stable_sort(card.layouts.begin(), card.layouts.end(),
                   [](const MigLayout& a, const MigLayout& b) {
                     return a.instance_count() > b.instance_count();
                   });
  for (std::size_t i = 0; i < card.layouts.size(); ++i)
    card.index.emplace(card.layouts[i].counts, i);

  for (std::size_t i = 0; i < card.layouts.size(); ++i) {
    bool is_maximal = true;
    for (std::size_t j = 0; j < card.layouts.size() && is_maximal; ++j)
      if (j != i && contains(card.layouts[j].counts, card.layouts[i].counts)) is_maximal = false;
    if (is_maximal) card.maximal.push_back(i);
  }

  card.most_instances.assign(spec.profiles.size(), 0);
  for (const auto& l : card.layouts)
    for (std::size_t p = 0; p < l.counts.size(); ++p)
      card.most_instances[p] = std::max(card.most_instances[p], l.counts[p]);

  card.size_order.resize(spec.profiles.size());
  std::iota(card.size_order.begin(), card.size_order.end(), 0);
  std::stable_sort(card.size_order.begin(), card.size_order.end(), [&](int a, int b) {
    const MigProfile& pa = spec.profiles[static_cast<std::size_t>(a)];
    const MigProfile& pb = spec.profiles[static_cast<std::size_t>(b)];
    if (pa.memory_slices != pb.memory_slices) return pa.memory_slices < pb.memory_slices;
    if (pa.compute_slices != pb.compute_slices) return pa.compute_slices < pb.compute_slices;
    return pa.memory() < pb.memory();
  });
  return card;
}

}  // namespace ftplan
