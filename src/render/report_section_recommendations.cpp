// Which card for which run: the planner's fewest cards per card type, its recommendation per run
// with the reason, and the fleet for all runs at once.
#include "render/report_sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "plan/rl_step.hpp"
#include "workload/objective.hpp"

namespace ftplan {

namespace {

class RecommendationsSection : SectionWriter {
 public:
  using SectionWriter::SectionWriter;

  std::string rank_reason(RankBy r) const {
    switch (r) {
      case RankBy::kCardHours:
        return t(Txt::kRankCardHours);
      case RankBy::kTime:
        return t(Txt::kRankTime);
      case RankBy::kCost:
        return t(Txt::kRankCost);
      case RankBy::kEnergy:
        break;
    }
    return t(Txt::kRankEnergy);
  }

  std::string which_cell(const RunPlan::PerGpu& pg) const {
    if (!pg.minimum) return t(Txt::kVerdictDoesNotFit);
    const Option& o = *pg.minimum;
    if (o.count == 1) return f(Txt::kWhichOne, n(to_GB(o.free), 0), n(o.time_to_train_hours, 1));
    return f(Txt::kWhichMany, o.count, sharding(o.sharding, o.shard_group), gb(o.model_states, 1),
             n(o.time_to_train_hours, 1));
  }

  std::string choice(const Option& o) const {
    std::string s = fmt::format("{} × {}", o.count, card_name(*o.gpu));
    if (o.mig) s += " · MIG " + code(o.mig->name);
    if (o.count > 1)
      s += fmt::format(" ({}, {})", sharding(o.sharding, o.shard_group), code(o.topology));
    return s;
  }

  std::string reason(const RunPlan& rp) const {
    if (!rp.recommendation) {
      std::vector<std::string> why;
      for (const auto& pg : rp.per_gpu)
        if (!pg.why_not.empty()) why.push_back(reason_text(pg.why_not));
      return f(Txt::kRecNone, rp.run->name, join(why));
    }
    const Option& o = *rp.recommendation;
    std::string close;
    if (rp.close_call) close = "; " + reason_text(rp.close_call_reason);
    const std::string head = f(Txt::kRecHead, rp.run->name, choice(o), rank_reason(m_.plan.rank_by),
                               n(o.card_hours, 1), n(o.time_to_train_hours, 2));
    if (o.count == 1) return head + close + t(Txt::kRecOneCard) + online_parts(rp, o);
    return head + close +
           f(Txt::kRecManyCards, option_split(o, strategy(o.strategy)), code(o.topology),
             percent(o.scaling_efficiency)) +
           online_parts(rp, o);
  }

  // An online run's step in its parts, and the slowest of them (plan/rl_step).
  std::string online_parts(const RunPlan& rp, const Option& o) const {
    if (!o.rl || !o.rl->feasible) return {};
    const RlStep& r = *o.rl;
    Txt slowest = Txt::kRecOnlinePartTraining;
    switch (r.bottleneck) {
      case RlPart::kRollout:
        slowest = Txt::kRecOnlinePartRollout;
        break;
      case RlPart::kWeightSync:
        slowest = Txt::kRecOnlinePartWeightSync;
        break;
      case RlPart::kScoring:
        slowest = Txt::kRecOnlinePartScoring;
        break;
      case RlPart::kTraining:
        break;
    }
    const auto s = [&](Seconds x) { return n(x.value, 2) + " s"; };
    return f(Txt::kRecOnline, objective_traits(rp.run->workload.objective).label, s(r.total),
             s(r.rollout.total()), s(r.weight_sync + r.sleep_wake), s(r.scoring), s(r.training),
             t(slowest));
  }

  DocSection recommendations() const {
    DocSection s{"recommendations", t(Txt::kRecTitle), {}};
    std::vector<std::string> counts = {"1"};
    for (int c : m_.counts)
      counts.push_back(std::to_string(c));
    s.blocks.push_back(paragraph(
        f(Txt::kRecIntro, join(counts, Txt::kOr), m_.runs->allow_mig ? t(Txt::kRecIntroMig) : "",
          n(static_cast<double>(m_.plan.evaluations), 0), rank_reason(m_.plan.rank_by))));
    DocTable which;
    which.caption = t(Txt::kWhichCaption);
    which.headers = {t(Txt::kColRun)};
    for (const GpuSpec* g : m_.cards)
      which.headers.push_back(card_name(*g));
    which.numeric.assign(which.headers.size(), false);
    for (const auto& rp : m_.plan.runs) {
      std::vector<std::string> row = {rp.run->name};
      for (const GpuSpec* g : m_.cards) {
        std::string cell = dash();
        for (const auto& pg : rp.per_gpu)
          if (pg.gpu == g) cell = which_cell(pg);
        row.push_back(cell);
      }
      which.rows.push_back(std::move(row));
    }
    s.blocks.push_back(table(std::move(which)));

    DocTable rec;
    rec.caption = t(Txt::kRecCaption);
    rec.headers = {t(Txt::kColRun),         t(Txt::kColChoice),   t(Txt::kColMicroBatch),
                   t(Txt::kColRecompute),   t(Txt::kColStep),     t(Txt::kColTokensPerSecond),
                   t(Txt::kColTimeToTrain), t(Txt::kColCardHours)};
    rec.numeric = {false, false, true, false, true, true, true, true};
    std::vector<std::string> reasons;
    for (const auto& rp : m_.plan.runs) {
      reasons.push_back(reason(rp));
      if (!rp.recommendation) {
        rec.rows.push_back({rp.run->name, t(Txt::kVerdictDoesNotFit), dash(), dash(), dash(),
                            dash(), dash(), dash()});
        continue;
      }
      const Option& o = *rp.recommendation;
      rec.rows.push_back(
          {rp.run->name, choice(o), n(static_cast<double>(o.micro_batch), 0),
           recompute(o.recompute), seconds(o.step_seconds, 2), n(o.tokens_per_second, 0),
           n(o.time_to_train_hours, 2) + " h (" + n(o.time_to_train_hours * o.range_low, 2) + "–" +
               n(o.time_to_train_hours * o.range_high, 2) + ")",
           n(o.card_hours, 2)});
    }
    s.blocks.push_back(table(std::move(rec)));
    s.blocks.push_back(list(reasons));

    std::vector<std::string> bridged;
    int bridge_cards = 0;
    for (const GpuSpec* g : m_.cards)
      if (g->nvlink.kind == LinkKind::kBridge) {
        bridged.push_back(card_name(*g));
        bridge_cards = std::max(bridge_cards, g->nvlink.bridge_max_cards);
      }
    if (!bridged.empty() && !m_.scaling.empty())
      s.blocks.push_back(paragraph(f(Txt::kRecSharded, join(bridged), bridge_cards)));
    s.blocks.push_back(paragraph(t(Txt::kRecOneJob)));

    s.blocks.push_back(paragraph(t(Txt::kFleetIntro)));
    DocTable fleet;
    fleet.caption = t(Txt::kFleetCaption);
    fleet.headers = {t(Txt::kColCard), t(Txt::kColFleetCards), t(Txt::kColWithoutMig),
                     t(Txt::kColMultiCardRuns), t(Txt::kColCannotHold)};
    fleet.numeric = {false, true, true, true, false};
    for (const auto& fe : m_.plan.fleet)
      fleet.rows.push_back({card_name(*fe.gpu), std::to_string(fe.cards),
                            std::to_string(fe.cards_without_mig),
                            std::to_string(fe.multi_card_runs_cards),
                            fe.unplaced.empty() ? dash() : join(fe.unplaced)});
    s.blocks.push_back(table(std::move(fleet)));
    return s;
  }
};

}  // namespace

DocSection report_recommendations_section(const ReportModel& m, const Catalog& catalog,
                                          const ReportWords& words) {
  return RecommendationsSection(m, catalog, words).recommendations();
}

}  // namespace ftplan
