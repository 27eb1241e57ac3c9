#include "render/comm_json.hpp"

#include "render/json.hpp"
#include "render/reason_words.hpp"

namespace ftplan {

using nlohmann::json;

namespace {
json link_json(const Link& l) {
  return {{"level", link_level_name(l.level)},
          {"name", l.name},
          {"GBps_per_direction", round_to(to_GBps(l.per_direction), 2)},
          {"achieved_fraction", l.achieved_fraction},
          {"step_latency_us", round_to(l.step_latency.value * 1e6, 2)}};
}
}  // namespace

json topology_json(const Topology& t) {
  json j = {{"preset", t.preset},
            {"cards", t.cards},
            {"nvlink_domains", t.domain_cards > 1 ? t.domains() : 0},
            {"cards_per_domain", t.domain_cards},
            {"nodes", t.nodes()},
            {"cards_per_node", t.cards_per_node},
            {"slowest_link", link_json(t.slowest())},
            {"notes", t.notes}};
  if (t.domain_cards > 1) j["nvlink"] = link_json(t.intra_domain);
  j["pcie"] = link_json(t.intra_node);
  if (t.nodes() > 1) j["network"] = link_json(t.inter_node);
  return j;
}

json comm_plan_json(const CommPlan& c, const Topology& t) {
  json calls = json::array();
  for (const auto& call : c.calls())
    calls.push_back({{"what", call.what},
                     {"collective", collective_name(call.cost.kind)},
                     {"per", call.per_micro_batch ? "micro-batch" : "step"},
                     {"buffer_GB", round_to(to_GB(call.cost.size), 4)},
                     {"received_GB_per_card", round_to(to_GB(call.cost.received_per_card), 4)},
                     {"over_nvlink_GB", round_to(to_GB(call.cost.over_nvlink), 4)},
                     {"over_pcie_GB", round_to(to_GB(call.cost.over_pcie), 4)},
                     {"over_network_GB", round_to(to_GB(call.cost.over_network), 4)},
                     {"min_link_seconds", round_to(call.cost.min_link_seconds.value, 6)},
                     {"estimated_seconds", round_to(call.cost.estimated_seconds.value, 6)}});
  return {{"strategy", comm_strategy_name(c.strategy)},
          {"received_GB_per_card_per_microbatch",
           round_to(to_GB(c.received_per_card_per_micro_batch), 3)},
          {"received_GB_per_card_per_step", round_to(to_GB(c.received_per_card_per_step), 3)},
          {"min_link_seconds", round_to(c.min_link_seconds_per_micro_batch.value, 4)},
          {"min_link_seconds_per_step", round_to(c.min_link_seconds_per_step.value, 4)},
          {"link", c.strategy == CommStrategy::kSingleCard ? "none" : t.link(c.link).name},
          {"collectives", calls}};
}

json rl_step_json(const RlStep& r) {
  json j = {{"feasible", r.feasible},
            {"placement", rollout_mode_name(r.mode)},
            {"rollout_gpu", r.rollout_gpu ? r.rollout_gpu->id : std::string()},
            {"rollout_cards", r.rollout_cards},
            {"engines", r.engines},
            {"engine_tp", r.engine_tp},
            {"prompts", r.prompts},
            {"group_size", r.group},
            {"sequences", r.sequences},
            {"generation_rounds", r.rounds},
            {"sequences_per_engine", r.sequences_per_engine},
            {"engine_GB", round_to(to_GB(r.engine_memory.engine), 3)},
            {"engine_weights_GB", round_to(to_GB(r.engine_memory.weights), 3)},
            {"kv_cache_GB", round_to(to_GB(std::max(Bytes(), r.engine_memory.kv_budget)), 3)},
            {"kv_cache_bytes", whole_bytes(std::max(Bytes(), r.engine_memory.kv_budget))},
            {"max_concurrent_sequences", r.engine_memory.max_concurrent_sequences},
            {"concurrent_sequences", r.concurrent},
            {"epochs", r.epochs}};
  if (!r.feasible) {
    j["reason"] = word_reason(r.reason);
    return j;
  }
  j["waves"] = r.rollout.waves;
  j["seconds"] = {{"rollout", round_to(r.rollout.total().value, 4)},
                  {"prefill", round_to(r.rollout.prefill.value, 4)},
                  {"decode", round_to(r.rollout.decode.value, 4)},
                  {"weight_sync", round_to(r.weight_sync.value, 4)},
                  {"sleep_wake", round_to(r.sleep_wake.value, 4)},
                  {"scoring", round_to(r.scoring.value, 4)},
                  {"training", round_to(r.training.value, 4)},
                  {"step", round_to(r.total.value, 4)}};
  j["sync_GB"] = round_to(to_GB(r.sync_bytes), 3);
  j["bottleneck"] = rl_part_name(r.bottleneck);
  j["overlapped"] = r.overlapped;
  j["completion_tokens_per_second"] = round_to(r.completion_tokens_per_second, 1);
  return j;
}

json scale_json(const ScaleResult& r) {
  json j = placement_json(r.placement);
  j.update(comm_plan_json(r.comm, r.topology));
  j["topology"] = topology_json(r.topology);
  const NodeNetwork& n = r.topology.network;
  j["network"] = {{"name", n.name},
                  {"GBps_per_node", round_to(n.GBps_per_node, 3)},
                  {"nics_per_node", n.nics_per_node},
                  {"rail_optimised", n.rail_optimised}};
  j["memory_GB"] = {{"model_states", round_to(to_GB(r.memory.states.total()), 3)},
                    {"peak", round_to(to_GB(r.memory.peak), 3)},
                    {"capacity", round_to(to_GB(r.memory.capacity), 3)},
                    {"headroom", round_to(to_GB(r.memory.headroom), 3)}};
  j["verdict"] = verdict_name(r.memory.verdict);
  j["compute_seconds_per_step"] = round_to(r.scale.compute_per_step.value, 4);
  j["comm_seconds_per_step"] = round_to(r.scale.comm_per_step.value, 4);
  j["exposed_seconds"] = round_to(r.scale.exposed_per_step.value, 4);
  j["step_seconds"] = round_to(r.scale.step_seconds.value, 4);
  j["scaling_efficiency"] = round_to(r.scale.scaling_efficiency, 4);
  j["tokens_per_second"] = round_to(r.tokens_per_second, 1);
  if (r.rl.online) j["rl"] = rl_step_json(r.rl);
  if (!r.placement.layout.trivial()) {
    auto group = [](const LayoutTraffic::Group& g) {
      return json{{"received_GB_per_micro_batch", round_to(to_GB(g.received), 4)},
                  {"seconds_per_micro_batch", round_to(g.seconds.value, 5)},
                  {"collectives_per_micro_batch", g.collectives},
                  {"link", link_level_name(g.link)}};
    };
    j["model_parallel"] = {
        {"tp", group(r.layout.tp)},
        {"cp", group(r.layout.cp)},
        {"ep", group(r.layout.ep)},
        {"pp", group(r.layout.pp)},
        {"timed_stage", r.stage},
        {"exposed_seconds_per_step", round_to(r.layout_exposed_per_step.value, 4)},
        {"bubble_seconds_per_step", round_to(r.bubble_per_step.value, 4)},
        {"memory_stages", memory_stages_json(r.memory)}};
  }
  if (r.offload.any) {
    const OffloadTime& o = r.offload;
    j["offload"] = {
        {"to_card_GB_per_micro_batch", round_to(to_GB(o.forward_to_card + o.backward_to_card), 3)},
        {"to_host_GB_per_micro_batch", round_to(to_GB(o.forward_to_host + o.backward_to_host), 3)},
        {"to_card_GB_per_step", round_to(to_GB(o.step_to_card), 3)},
        {"to_host_GB_per_step", round_to(to_GB(o.step_to_host), 3)},
        {"copy_GBps_per_direction", round_to(o.copy_rate.value / 1e9, 2)},
        {"copy_seconds_per_micro_batch", round_to((o.forward_copies + o.backward_copies).value, 4)},
        {"update_on_host", o.update_on_host},
        {"host_update_GB", round_to(to_GB(o.host_update), 3)},
        {"host_update_seconds", round_to(o.update.value, 4)}};
  }
  return j;
}

}  // namespace ftplan
