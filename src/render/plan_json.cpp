#include "render/plan_json.hpp"

#include <algorithm>

#include "render/comm_json.hpp"
#include "render/json.hpp"
#include "render/reason_words.hpp"

namespace ftplan {

using nlohmann::json;

json option_json(const Option& o) {
  json j = {{"gpu", o.gpu ? o.gpu->id : ""},
            {"count", o.count},
            {"strategy", comm_strategy_name(o.strategy)},
            {"shard", sharding_name(o.sharding)},
            {"topology", std::string(o.topology)},
            {"micro_batch", o.micro_batch},
            {"grad_accum", o.grad_accum},
            {"recompute", recompute_name(o.recompute)},
            {"feasible", o.feasible}};
  j["layout"] = layout_json(o.layout, o.count, o.sharding, o.shard_group);
  if (o.mig) j["mig"] = o.mig->name;
  if (o.rollout_gpu)
    j["rollout"] = {
        {"gpu", o.rollout_gpu->id}, {"cards", o.rollout_cards}, {"chosen", o.rollout_chosen}};
  if (o.rl) j["rl"] = rl_step_json(*o.rl);
  if (!o.reason.empty()) j["reason"] = word_reason(o.reason);
  j["verdict"] = verdict_name(o.verdict);
  j["memory_GB"] = {{"model_states", round_to(to_GB(o.model_states), 3)},
                    {"peak", round_to(to_GB(o.peak), 3)},
                    {"capacity", round_to(to_GB(o.capacity), 3)},
                    {"free", round_to(to_GB(o.free), 3)}};
  if (o.feasible) {
    j["step_seconds"] = round_to(o.step_seconds.value, 4);
    j["step_seconds_range"] = {round_to(o.step_seconds.value * o.range_low, 4),
                               round_to(o.step_seconds.value * o.range_high, 4)};
    j["exposed_seconds"] = round_to(o.exposed_seconds.value, 4);
    j["received_GB_per_card_per_step"] = round_to(to_GB(o.received_per_card_per_step), 3);
    j["scaling_efficiency"] = round_to(o.scaling_efficiency, 4);
    j["tokens_per_second"] = round_to(o.tokens_per_second, 1);
    j["tokens_per_second_range"] = {round_to(o.tokens_per_second / o.range_high, 1),
                                    round_to(o.tokens_per_second / o.range_low, 1)};
    j["time_to_train_hours"] = round_to(o.time_to_train_hours, 4);
    j["time_to_train_hours_range"] = {round_to(o.time_to_train_hours * o.range_low, 4),
                                      round_to(o.time_to_train_hours * o.range_high, 4)};
    j["card_hours"] = round_to(o.card_hours, 4);
    j["energy_kWh"] = round_to(o.energy_kWh, 3);
    j["cost_USD"] = o.cost_USD ? json(round_to(*o.cost_USD, 2)) : json(nullptr);
  }
  return j;
}

json plan_json(const Plan& plan, const RunsFile& file) {
  json runs = json::array();
  for (const auto& rp : plan.runs) {
    const PlannedRun& run = *rp.run;
    json r = workload_json(run.workload);
    r.erase("micro_batch");
    r.erase("grad_accum");
    r.erase("recompute");
    r["run"] = run.name;
    r["global_batch"] = run.global_batch;
    r["tokens"] = run.tokens;
    r["steps"] = run.steps();
    r["count"] = run.count;
    if (run.deadline_hours) r["deadline_hours"] = *run.deadline_hours;
    r["recommendation"] = rp.recommendation ? option_json(*rp.recommendation) : json(nullptr);
    r["why"] = word_reason(rp.recommendation_reason);
    r["too_close_to_call"] = rp.close_call.has_value();
    if (rp.close_call) {
      r["close_call"] = option_json(*rp.close_call);
      r["close_call"]["why"] = word_reason(rp.close_call_reason);
    }
    json per_gpu = json::array();
    for (const auto& pg : rp.per_gpu) {
      json g = {{"gpu", pg.gpu->id}, {"name", pg.gpu->name}};
      g["minimum"] = pg.minimum ? option_json(*pg.minimum) : json(nullptr);
      g["fastest"] = pg.fastest ? option_json(*pg.fastest) : json(nullptr);
      g["mig"] = pg.best_mig ? option_json(*pg.best_mig) : json(nullptr);
      if (!pg.why_not.empty()) g["why_not"] = word_reason(pg.why_not);
      per_gpu.push_back(g);
    }
    r["per_gpu"] = per_gpu;
    json alternatives = json::array();
    for (const auto& o : rp.alternatives)
      alternatives.push_back(option_json(o));
    r["alternatives"] = alternatives;
    json rejected = json::array();
    for (const auto& o : rp.rejected)
      rejected.push_back(option_json(o));
    r["rejected"] = rejected;
    r["evaluations"] = rp.evaluations;
    runs.push_back(r);
  }
  json fleet = json::array();
  for (const auto& f : plan.fleet)
    fleet.push_back({{"gpu", f.gpu->id},
                     {"cards", f.cards},
                     {"cards_without_mig", f.cards_without_mig},
                     {"cards_for_single_card_runs", f.mig_cards},
                     {"cards_for_multi_card_runs", f.multi_card_runs_cards},
                     {"unplaced_runs", f.unplaced}});
  json gpus = json::array();
  for (const auto* g : file.gpus)
    gpus.push_back(g->id);
  return {{"file", file.file},
          {"rank_by", rank_by_name(plan.rank_by)},
          {"candidates",
           {{"gpus", gpus},
            {"counts", file.counts},
            {"mig", file.allow_mig},
            {"p2p", p2p_name(file.p2p)}}},
          {"runs", runs},
          {"fleet", fleet},
          {"evaluations", plan.evaluations}};
}

}  // namespace ftplan
