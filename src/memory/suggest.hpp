// How to make a run fit: changes a user can make to a run that does not fit, each evaluated by
// estimate_memory() itself (and by the solvers of memory/solve for the sequence and the
// micro-batch), never by a formula of its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/reason.hpp"
#include "memory/fit.hpp"
#include "workload/workload.hpp"

namespace ftplan {

enum class SuggestionKind {
  kShard,          // shard the model states over the cards given (FSDP)
  kCards,          // the fewest cards that fit, sharded
  kRecompute,      // recompute activations in the backward pass
  kOptimizer8bit,  // 8-bit optimizer states (full fine-tunes with an Adam-family optimizer)
  kQuantizedBase,  // QLoRA (QDoRA) instead of LoRA (DoRA) or a full fine-tune
  kSequence,       // the longest sequence that fits
  kMicroBatch,     // the largest micro-batch that fits
  kCombined,       // several of the above together, when no one of them fits
};
std::string_view suggestion_kind_name(SuggestionKind k);  // "shard", "cards", ...

// One setting a suggestion changes, by its API key (the CLI option with '_' for '-'): a number
// or a name.
struct SettingChange {
  std::string key;
  std::string text;         // the value when it is a name ("fsdp", "qlora")
  std::int64_t number = 0;  // the value when `text` is empty
  bool is_number() const { return text.empty(); }
};

struct Suggestion {
  SuggestionKind kind = SuggestionKind::kShard;
  std::vector<SettingChange> change;  // applied to the request, they give `memory`
  Reason reason;                      // the change, in words
  MemoryEstimate memory;              // the run with the change, as estimate_memory() gives it
  int size = 0;                       // how large a change it is (suggest.cpp: the ranking rule)
  bool fits() const { return memory.verdict == Verdict::kFits; }
};

// The largest card count the search for more cards tries.
inline constexpr int kSuggestMaxCards = 64;

// Suggestions for a run whose verdict is does-not-fit (none for one that fits or is tight). Only
// changes to a setting's value that differs from the run's own are tried, so a setting the run
// already has (FSDP, QLoRA, full recomputation, an 8-bit optimizer) is never suggested again. The
// list holds the suggestions that make the run fit, ranked. When no one change fits, the changes
// are applied one after the other (suggest.cpp: the order) until the run fits, as one combined
// suggestion; when even that does not fit, the one change that comes closest (the most headroom).
std::vector<Suggestion> suggest_fits(const Workload& w, const Placement& p,
                                     int max_cards = kSuggestMaxCards);

}  // namespace ftplan
