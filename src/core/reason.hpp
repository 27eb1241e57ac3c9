// A reason as the engine states it: a code naming the sentence and its arguments as typed values
// (bytes, a share, a count, a number, a name, a data file's own words, nested reasons). The engine
// fills reasons; render/ words them in a language from the `reasons:` section of
// data/i18n/<lang>.yaml, where each code has one template with its arguments as {name}.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"

namespace ftplan {

// One entry per sentence; kReasonCodes gives each its key in the language files and the names of
// its arguments.
enum class ReasonCode {
  kNone,
  // how a data file's own words are set in a sentence (kQuote arguments)
  kSourceWords,
  // memory/fit: the verdict of one placement
  kWhereCard,
  kWhereCards,
  kWhereMigInstance,
  kFitFits,
  kFitFitsRangePast,  // fits, but the upper end of the peak's range does not
  kFitTight,
  kFitTightReserve,
  kFitDoesNotFit,
  // memory/solve
  kSolveSequence,
  kSolveMicroBatch,
  kSolveUnitTokens,
  kSolveUnitSequences,
  kSolveUnitPairs,  // a preference objective's examples: pairs of sequences
  kSolveLargest,
  kSolveNotEven,
  kSolveFound,
  // memory/suggest: how to make a run fit
  kSuggestShard,
  kSuggestShardAll,  // from hybrid sharding: over every card instead of within groups
  kSuggestCards,
  kSuggestRecompute,
  kSuggestOptimizer8bit,
  kSuggestQuantizedBase,
  kSuggestSequence,
  kSuggestMicroBatch,
  kSuggestCombined,
  // mig/pack
  kPackInstance,
  kPackWholeCard,
  kPackUnplaced,
  // perf/step: a step that cannot be timed
  kNoDenseRate,
  kNoDenseRateBecause,
  kNoVectorRate,
  kNoVectorRateBecause,
  kBandwidthUnknown,
  kFormatUnsupported,
  kRolloutNoRoom,   // plan/rl_step: the rollout engine cannot hold one sequence's cache
  kRolloutTpSplit,  // plan/rl_step: the engine's cards do not divide the cards that generate
  // perf/calibration: a measurement left out of the fit
  kCalibrationOtherPrecision,
  // plan/planner
  kGlobalBatch,
  kPowerLimit,
  kStepUnknown,
  kDeadline,
  kTopologyRejected,
  kFormatNotOnCard,
  kNoCountFits,
  kNoCountFitsClosest,
  kRankCardHours,
  kRankTime,
  kRankCost,
  kRankEnergy,
  kRecommendOneCard,
  kRecommendManyCards,
  kRecommendWithRollout,  // an online run's recommendation and the rollout cards chosen for it
  kNoCandidate,
  kNoCandidateBecause,
  kTooCloseToCall,
  kCount
};
inline constexpr std::size_t kReasonCodeCount = static_cast<std::size_t>(ReasonCode::kCount);

struct ReasonCodeInfo {
  ReasonCode code;
  std::string_view key;                     // the template's key in the language files
  std::vector<std::string_view> arguments;  // the {names} its template may use
};
// Every code but kNone, in the enum's order.
const std::vector<ReasonCodeInfo>& reason_codes();
const ReasonCodeInfo& reason_code_info(ReasonCode code);

struct Reason;

enum class ReasonArgKind {
  kBytes,         // `value` bytes, written in GB with `decimals` places
  kPercent,       // `value` a fraction, written as a percentage with `decimals` places
  kNumber,        // `value` with `decimals` places (-1: the shortest exact form, "600", "0.5")
  kCount,         // `value` a whole number, written without digit groups ("256")
  kGroupedCount,  // `value` a whole number, its thousands grouped ("16,384")
  kName,          // `text`: a card, model, profile, strategy or topology name, written as it is
  kQuote,   // `text`: a data file's (or a library's) own words, kept and marked as a quotation
  kReason,  // `reasons[0]`: a nested reason
  kList,    // `reasons`: several reasons, one after the other
};

struct ReasonArg {
  std::string name;
  ReasonArgKind kind = ReasonArgKind::kName;
  double value = 0;
  int decimals = 0;
  std::string text;
  std::vector<Reason> reasons;
};

struct Reason {
  ReasonCode code = ReasonCode::kNone;
  std::vector<ReasonArg> args;

  Reason() = default;
  explicit Reason(ReasonCode c) : code(c) {}

  bool empty() const { return code == ReasonCode::kNone; }
  const ReasonArg* arg(std::string_view name) const;

  Reason& bytes(std::string_view name, Bytes b, int decimals = 1);
  Reason& percent(std::string_view name, double fraction, int decimals = 0);
  Reason& number(std::string_view name, double v, int decimals = -1);
  Reason& count(std::string_view name, std::int64_t n);
  Reason& digits(std::string_view name, std::int64_t n);  // grouped
  Reason& name(std::string_view name, std::string text);
  Reason& quote(std::string_view name, std::string text);
  Reason& nested(std::string_view name, Reason r);
  Reason& list(std::string_view name, std::vector<Reason> items);

 private:
  Reason& add(std::string_view name, ReasonArgKind kind, double value, int decimals = 0,
              std::string text = {}, std::vector<Reason> reasons = {});
};

}  // namespace ftplan
