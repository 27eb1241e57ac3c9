#include "core/reason.hpp"

#include <utility>

namespace ftplan {

const std::vector<ReasonCodeInfo>& reason_codes() {
  static const std::vector<ReasonCodeInfo> codes = {
      {ReasonCode::kSourceWords, "source_words", {"text"}},
      {ReasonCode::kWhereCard, "where_card", {"card"}},
      {ReasonCode::kWhereCards, "where_cards", {"count", "card"}},
      {ReasonCode::kWhereMigInstance, "where_mig_instance", {"profile", "card"}},
      {ReasonCode::kFitFits, "fit_fits", {"peak", "headroom", "capacity", "where"}},
      {ReasonCode::kFitFitsRangePast,
       "fit_fits_range_past",
       {"peak", "headroom", "capacity", "where", "high"}},
      {ReasonCode::kFitTight, "fit_tight", {"peak", "headroom", "capacity", "where", "share"}},
      {ReasonCode::kFitTightReserve,
       "fit_tight_reserve",
       {"peak", "allocated", "capacity", "where"}},
      {ReasonCode::kFitDoesNotFit, "fit_does_not_fit", {"peak", "capacity", "where", "excess"}},
      {ReasonCode::kSolveSequence, "solve_sequence", {}},
      {ReasonCode::kSolveMicroBatch, "solve_micro_batch", {}},
      {ReasonCode::kSolveUnitTokens, "solve_unit_tokens", {"micro_batch"}},
      {ReasonCode::kSolveUnitSequences, "solve_unit_sequences", {"seq"}},
      {ReasonCode::kSolveUnitPairs, "solve_unit_pairs", {"seq"}},
      {ReasonCode::kSolveLargest, "solve_largest", {"what", "value", "unit"}},
      {ReasonCode::kSolveNotEven, "solve_not_even", {"what", "value", "unit", "reason", "binding"}},
      {ReasonCode::kSolveFound,
       "solve_found",
       {"what", "value", "unit", "peak", "capacity", "next", "next_peak", "verdict", "binding"}},
      {ReasonCode::kSuggestShard, "suggest_shard", {"count"}},
      {ReasonCode::kSuggestShardAll, "suggest_shard_all", {"count", "group"}},
      {ReasonCode::kSuggestCards, "suggest_cards", {"count", "card"}},
      {ReasonCode::kSuggestRecompute, "suggest_recompute", {"recompute"}},
      {ReasonCode::kSuggestOptimizer8bit, "suggest_optimizer_8bit", {"optimizer"}},
      {ReasonCode::kSuggestQuantizedBase, "suggest_quantized_base", {"method", "format"}},
      {ReasonCode::kSuggestSequence, "suggest_sequence", {"seq"}},
      {ReasonCode::kSuggestMicroBatch, "suggest_micro_batch", {"micro_batch"}},
      {ReasonCode::kSuggestCombined, "suggest_combined", {"changes"}},
      {ReasonCode::kPackInstance, "pack_instance", {"reason"}},
      {ReasonCode::kPackWholeCard, "pack_whole_card", {"reason"}},
      {ReasonCode::kPackUnplaced, "pack_unplaced", {"card", "verdict", "reason"}},
      {ReasonCode::kNoDenseRate, "no_dense_rate", {"vendor", "format", "card"}},
      {ReasonCode::kNoDenseRateBecause,
       "no_dense_rate_because",
       {"vendor", "format", "card", "why"}},
      {ReasonCode::kNoVectorRate, "no_vector_rate", {"vendor", "card"}},
      {ReasonCode::kNoVectorRateBecause, "no_vector_rate_because", {"vendor", "card", "why"}},
      {ReasonCode::kBandwidthUnknown, "bandwidth_unknown", {}},
      {ReasonCode::kFormatUnsupported, "format_unsupported", {"why"}},
      {ReasonCode::kRolloutNoRoom,
       "rollout_no_room",
       {"engine", "weights", "reserve", "context", "card"}},
      {ReasonCode::kRolloutTpSplit, "rollout_tp_split", {"tp", "cards"}},
      {ReasonCode::kCalibrationOtherPrecision, "calibration_other_precision", {"precision"}},
      {ReasonCode::kGlobalBatch, "global_batch", {"global_batch", "micro_batch", "cards"}},
      {ReasonCode::kPowerLimit, "power_limit", {"cards", "tdp", "limit"}},
      {ReasonCode::kStepUnknown, "step_unknown", {}},
      {ReasonCode::kDeadline, "deadline", {"hours", "deadline"}},
      {ReasonCode::kTopologyRejected, "topology_rejected", {"why"}},
      {ReasonCode::kFormatNotOnCard, "format_not_on_card", {"format", "card", "why"}},
      {ReasonCode::kNoCountFits, "no_count_fits", {}},
      {ReasonCode::kNoCountFitsClosest, "no_count_fits_closest", {"count", "card", "reason"}},
      {ReasonCode::kRankCardHours, "rank_card_hours", {}},
      {ReasonCode::kRankTime, "rank_time", {}},
      {ReasonCode::kRankCost, "rank_cost", {}},
      {ReasonCode::kRankEnergy, "rank_energy", {}},
      {ReasonCode::kRecommendOneCard,
       "recommend_one_card",
       {"count", "card", "rank", "card_hours", "hours"}},
      {ReasonCode::kRecommendManyCards,
       "recommend_many_cards",
       {"count", "card", "rank", "card_hours", "hours", "strategy", "topology", "efficiency"}},
      {ReasonCode::kRecommendWithRollout,
       "recommend_with_rollout",
       {"recommendation", "rollout_count", "rollout_card", "tried"}},
      {ReasonCode::kNoCandidate, "no_candidate", {}},
      {ReasonCode::kNoCandidateBecause, "no_candidate_because", {"why"}},
      {ReasonCode::kTooCloseToCall,
       "too_close_to_call",
       {"count", "card", "rank", "low", "high", "other_low", "other_high"}},
  };
  return codes;
}

const ReasonCodeInfo& reason_code_info(ReasonCode code) {
  return reason_codes()[static_cast<std::size_t>(code) - 1];
}

const ReasonArg* Reason::arg(std::string_view n) const {
  for (const auto& a : args)
    if (a.name == n) return &a;
  return nullptr;
}

// Every builder appends one argument: a figure (with its decimals), a text, or reasons.
Reason& Reason::add(std::string_view n, ReasonArgKind kind, double value, int decimals,
                    std::string text, std::vector<Reason> reasons) {
  ReasonArg a;
  a.name = std::string(n);
  a.kind = kind;
  a.value = value;
  a.decimals = decimals;
  a.text = std::move(text);
  a.reasons = std::move(reasons);
  args.push_back(std::move(a));
  return *this;
}

Reason& Reason::bytes(std::string_view n, Bytes b, int decimals) {
  return add(n, ReasonArgKind::kBytes, b.value, decimals);
}

Reason& Reason::percent(std::string_view n, double fraction, int decimals) {
  return add(n, ReasonArgKind::kPercent, fraction, decimals);
}

Reason& Reason::number(std::string_view n, double v, int decimals) {
  return add(n, ReasonArgKind::kNumber, v, decimals);
}

Reason& Reason::count(std::string_view n, std::int64_t v) {
  return add(n, ReasonArgKind::kCount, static_cast<double>(v));
}

Reason& Reason::digits(std::string_view n, std::int64_t v) {
  return add(n, ReasonArgKind::kGroupedCount, static_cast<double>(v));
}

Reason& Reason::name(std::string_view n, std::string text) {
  return add(n, ReasonArgKind::kName, 0, 0, std::move(text));
}

Reason& Reason::quote(std::string_view n, std::string text) {
  return add(n, ReasonArgKind::kQuote, 0, 0, std::move(text));
}

Reason& Reason::nested(std::string_view n, Reason r) {
  std::vector<Reason> one;
  one.push_back(std::move(r));
  return add(n, ReasonArgKind::kReason, 0, 0, {}, std::move(one));
}

Reason& Reason::list(std::string_view n, std::vector<Reason> items) {
  return add(n, ReasonArgKind::kList, 0, 0, {}, std::move(items));
}

}  // namespace ftplan
