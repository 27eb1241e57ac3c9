#include "mig/pack.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <deque>
#include <unordered_map>

#include "core/error.hpp"
#include "core/format.hpp"
#include "memory/model_states.hpp"

namespace ftplan {

std::string_view pack_home_name(PackHome h) {
  switch (h) {
    case PackHome::kInstance:
      return "mig-instance";
    case PackHome::kWholeCard:
      return "whole-card";
    case PackHome::kUnplaced:
      return "unplaced";
  }
  return "?";
}

namespace {

// The search visits states (instances still to place); the queues a pack file can hold need far
// fewer. Past this the search stops with an error rather than claim an optimum it did not prove.
constexpr long kMaxSearchSteps = 5'000'000;

int ceil_div(long a, long b) {
  return static_cast<int>((a + b - 1) / b);
}

// Exact minimum number of cards, by iterative deepening over the card count K from a lower
// bound: feasible(d, K) asks whether K cards hold the remaining demand d. Every solution has a
// card holding a job of the largest profile still in d, so the search picks that card's layout
// among the maximal layouts containing that profile (a non-maximal layout holds less); layouts
// that take the same instances out of d, or fewer of each, are skipped. A state proven
// infeasible with K cards is remembered (it is infeasible with fewer too).
class CoverSearch {
 public:
  CoverSearch(const MigCard& card, std::vector<int> demand)
      : card_(card), spec_(card.spec()), d_(std::move(demand)) {}

  int lower_bound() const {
    long compute = 0, memory = 0, instances = 0;
    int bound = 0;
    for (std::size_t p = 0; p < d_.size(); ++p) {
      if (d_[p] == 0) continue;
      const MigProfile& prof = spec_.profiles[p];
      compute += static_cast<long>(d_[p]) * prof.compute_slices;
      memory += static_cast<long>(d_[p]) * prof.memory_slices;
      instances += d_[p];
      assert(card_.most_instances[p] > 0);
      bound = std::max(bound, ceil_div(d_[p], card_.most_instances[p]));
    }
    bound = std::max(bound, ceil_div(compute, spec_.compute_slices));
    bound = std::max(bound, ceil_div(memory, spec_.memory_slices));
    bound = std::max(bound, ceil_div(instances, spec_.max_instances));
    return bound;
  }

  bool feasible(int cards) {
    int largest = -1;
    for (auto it = card_.size_order.rbegin(); it != card_.size_order.rend(); ++it)
      if (d_[static_cast<std::size_t>(*it)] > 0) {
        largest = *it;
        break;
      }
    if (largest < 0) return true;
    if (cards == 0 || lower_bound() > cards) return false;
    const std::string key = encode();
    if (auto it = failed_.find(key); it != failed_.end() && it->second >= cards) return false;
    if (++steps_ > kMaxSearchSteps)
      throw UserError(ErrorCode::kUnsupported,
                      fmt::format("packing {} instances on {} needs more than {} search steps "
                                  "to prove the optimum; split the queue into smaller pack files",
                                  total(), card_.gpu->name, group_digits(kMaxSearchSteps)),
                      "pack");

    // What each candidate card takes out of d: min(layout, d), deduplicated, dominated ones
    // dropped, most memory slices first (a good first guess).
    std::vector<std::vector<int>> takes;
    for (std::size_t i : card_.maximal) {
      const MigLayout& l = card_.layouts[i];
      if (l.counts[static_cast<std::size_t>(largest)] == 0) continue;
      std::vector<int> take(d_.size());
      for (std::size_t p = 0; p < d_.size(); ++p)
        take[p] = std::min(l.counts[p], d_[p]);
      takes.push_back(std::move(take));
    }
    std::vector<std::vector<int>> useful;
    for (std::size_t i = 0; i < takes.size(); ++i) {
      bool dominated = false;
      for (std::size_t j = 0; j < takes.size() && !dominated; ++j) {
        if (i == j) continue;
        const bool covers = contains(takes[j], takes[i]);
        dominated = covers && (takes[j] != takes[i] || j < i);
      }
      if (!dominated) useful.push_back(takes[i]);
    }
    std::stable_sort(useful.begin(), useful.end(),
                     [&](const auto& a, const auto& b) { return slices(a) > slices(b); });
    for (const auto& take : useful) {
      for (std::size_t p = 0; p < d_.size(); ++p)
        d_[p] -= take[p];
      chosen_.push_back(take);
      if (feasible(cards - 1)) return true;
      chosen_.pop_back();
      for (std::size_t p = 0; p < d_.size(); ++p)
        d_[p] += take[p];
    }
    int& known = failed_[key];
    known = std::max(known, cards);
    return false;
  }

  long steps() const { return steps_; }
  const std::vector<std::vector<int>>& chosen() const { return chosen_; }

 private:
  static bool contains(const std::vector<int>& big, const std::vector<int>& small) {
    for (std::size_t p = 0; p < big.size(); ++p)
      if (big[p] < small[p]) return false;
    return true;
  }
  long slices(const std::vector<int>& counts) const {
    long s = 0;
    for (std::size_t p = 0; p < counts.size(); ++p)
      s += static_cast<long>(counts[p]) * spec_.profiles[p].memory_slices;
    return s;
  }
  long total() const {
    long n = 0;
    for (int v : d_)
      n += v;
    return n;
  }
  std::string encode() const {
    std::string key;
    for (int v : d_)
      key += fmt::format("{},", v);
    return key;
  }

  const MigCard& card_;
  const MigSpec& spec_;
  std::vector<int> d_;
  std::vector<std::vector<int>> chosen_;
  std::unordered_map<std::string, int> failed_;
  long steps_ = 0;
};

PackedExperiment place_experiment(const PackJob& job, const MigCard& card, const MigRules& rules) {
  const GpuSpec& gpu = *card.gpu;
  PackedExperiment x;
  const ModelStates replica = model_states(job.workload);
  x.fit = fit_mig(job.workload, replica, card, rules);
  Placement whole;
  whole.gpu = &gpu;
  x.whole_card = estimate_memory(job.workload, replica, whole);
  const MigProfileFit* smallest = x.fit.smallest_fit(card);
  if (smallest && !smallest->whole_card) {
    x.home = PackHome::kInstance;
    x.profile = smallest->profile;
    x.reason = Reason(ReasonCode::kPackInstance).nested("reason", smallest->memory.reason);
  } else if (x.whole_card.verdict == Verdict::kFits) {
    x.home = PackHome::kWholeCard;
    x.reason = Reason(ReasonCode::kPackWholeCard).nested("reason", x.whole_card.reason);
  } else {
    x.home = PackHome::kUnplaced;
    x.reason = Reason(ReasonCode::kPackUnplaced)
                   .name("card", gpu.name)
                   .name("verdict", std::string(verdict_name(x.whole_card.verdict)))
                   .nested("reason", x.whole_card.reason);
  }
  return x;
}

}  // namespace

CardCover fewest_cards(const MigCard& card, const std::vector<int>& demand) {
  assert(demand.size() == card.spec().profiles.size());
  CardCover cover;
  CoverSearch search(card, demand);
  cover.lower_bound = search.lower_bound();
  int cards = cover.lower_bound;
  while (!search.feasible(cards))
    ++cards;
  cover.cards = cards;
  cover.search_steps = search.steps();
  cover.per_card = search.chosen();
  assert(static_cast<int>(cover.per_card.size()) <= cover.cards);
  cover.cards = static_cast<int>(cover.per_card.size());
  return cover;
}

PackResult pack(const std::vector<PackJob>& jobs, const MigCard& card, const MigRules& rules) {
  const MigSpec& spec = card.spec();
  PackResult r;
  r.gpu = card.gpu;
  r.notes = mig_notes(*card.gpu, rules);
  r.notes.push_back(
      {rules.instance_layout.id, rules.instance_layout.text, rules.instance_layout.sources});

  std::vector<int> demand(spec.profiles.size(), 0);
  // Jobs waiting for an instance of each profile: (experiment, job number), in queue order.
  std::vector<std::deque<std::pair<int, int>>> waiting(spec.profiles.size());
  for (std::size_t e = 0; e < jobs.size(); ++e) {
    PackedExperiment x = place_experiment(jobs[e], card, rules);
    const int count = jobs[e].count;
    if (x.home == PackHome::kInstance) {
      demand[static_cast<std::size_t>(x.profile)] += count;
      for (int j = 1; j <= count; ++j)
        waiting[static_cast<std::size_t>(x.profile)].emplace_back(static_cast<int>(e), j);
    }
    if (x.home == PackHome::kUnplaced)
      r.jobs_unplaced += count;
    else
      r.jobs_placed += count;
    r.experiments.push_back(std::move(x));
  }

  const CardCover cover = fewest_cards(card, demand);
  r.mig_cards = cover.cards;
  r.lower_bound = cover.lower_bound;
  r.search_steps = cover.search_steps;
  for (const auto& counts : cover.per_card) {
    const MigLayout* layout = card.find(counts);
    assert(layout && "a cover takes at most a maximal layout's instances");
    PackedCard c;
    c.counts = counts;
    for (const MigInstance& inst : layout->instances) {
      auto& queue = waiting[static_cast<std::size_t>(inst.profile)];
      assert(!queue.empty());
      c.jobs.push_back({inst.profile, inst.start, queue.front().first, queue.front().second});
      queue.pop_front();
    }
    r.cards.push_back(std::move(c));
  }
  for (std::size_t e = 0; e < jobs.size(); ++e) {
    if (r.experiments[e].home != PackHome::kWholeCard) continue;
    for (int j = 1; j <= jobs[e].count; ++j) {
      PackedCard c;
      c.mig = false;
      c.jobs.push_back({-1, 0, static_cast<int>(e), j});
      r.cards.push_back(std::move(c));
      ++r.whole_cards;
    }
  }
  r.cards_one_job_per_card = r.jobs_placed;
  return r;
}

}  // namespace ftplan

namespace ftplan {

std::string pack_profile_rule() {
  return fmt::format(
      "each job goes into the smallest MIG profile (fewest memory slices, then fewest compute "
      "slices) where its verdict is `fits`, the rule of `ftplan fit`: the estimated peak leaves at "
      "least {:.0f} % of the instance. `tight` is not enough: that margin absorbs allocator "
      "fragmentation, transient spikes and the error of the activation estimate. The smallest "
      "such profile leaves the most slices to the other jobs; a job that fits no profile smaller "
      "than the whole card runs alone on a card with MIG off",
      kTightHeadroomFraction * 100);
}

std::string pack_optimality_statement(const PackResult& r, const MigCard& card) {
  if (r.jobs_placed == 0) return "no job fits one card: nothing to pack";
  if (r.mig_cards == 0) return "optimal: every job needs a whole card with MIG off, one card each";
  return fmt::format(
      "optimal: an exact search over the {} valid MIG layouts of the {} proves that no fewer "
      "cards hold these jobs, each in the profile chosen by the rule ({} MIG card{} from a lower "
      "bound of {}, {} search steps){}",
      card.layouts.size(), card.gpu->name, r.mig_cards, r.mig_cards == 1 ? "" : "s", r.lower_bound,
      r.search_steps,
      r.whole_cards > 0 ? fmt::format("; plus {} card{} with MIG off, one per job that needs a "
                                      "whole card",
                                      r.whole_cards, r.whole_cards == 1 ? "" : "s")
                        : "");
}

}  // namespace ftplan
