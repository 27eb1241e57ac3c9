// Hybrid sharding (--shard hsdp): states split within groups of cards and replicated across them,
// the gathers within a group and the gradient shards all-reduced across groups, the default group
// (one node's data-parallel cards), the planner choosing it across nodes, and its errors.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "comm/topology.hpp"
#include "comm/traffic.hpp"
#include "core/error.hpp"
#include "memory/fit.hpp"
#include "memory/model_states.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using test::on;
using test::workload;

const CommConstants& constants() {
  static const CommConstants k = load_comm_constants(test::catalog());
  return k;
}

Placement hybrid(const std::string& gpu, int count, int group) {
  Placement p = on(gpu, count, Sharding::kHsdp);
  p.shard_group = group;
  return p;
}

TEST(HybridSharding, EachCardHoldsOneGroupsShare) {
  // Llama 3.1 8B (8,030,261,248 parameters), full fine-tune with AdamW: 16 B per parameter
  // (16-bit weights and gradients, FP32 master weights, two FP32 moments) = 128.48 GB per
  // replica. HSDP over 32 cards in groups of 8: 128.48 / 8 = 16.06 GB per card, as FSDP on 8.
  const Workload w = workload("llama-3.1-8b", Method::kFull);
  const double params = 8030261248.0;
  const MemoryEstimate h = estimate_memory(w, hybrid("h100-sxm", 32, 8));
  EXPECT_NEAR(h.states.total().value, params * 16 / 8, 1e3);
  const MemoryEstimate f8 = estimate_memory(w, on("h100-sxm", 8, Sharding::kFsdp));
  EXPECT_DOUBLE_EQ(h.peak.value, f8.peak.value);
  // FSDP over all 32 holds a quarter of that.
  const MemoryEstimate f32 = estimate_memory(w, on("h100-sxm", 32, Sharding::kFsdp));
  EXPECT_NEAR(f32.states.total().value, params * 16 / 32, 1e3);
}

TEST(HybridSharding, GathersStayInTheGroupAndShardsAreAllReducedAcross) {
  // The same run on 16 × H100 SXM (2 nodes of 8 on NVSwitch), groups of 8. Within a group, per
  // micro-batch: the 16-bit weights (16.06 GB) all-gathered forward and backward and the
  // gradients (16.06 GB) reduce-scattered, each card receiving 7/8: 14.05 GB each, over NVLink.
  // Across the 2 groups: each card's gradient shard (16.06 / 8 = 2.008 GB) all-reduced with its
  // peer in the other node: 2 × 1/2 × 2.008 GB received, over the network.
  const Workload w = workload("llama-3.1-8b", Method::kFull);
  const double bf16 = 8030261248.0 * 2;
  const Placement p = hybrid("h100-sxm", 16, 8);
  const Topology t = build_topology(*p.gpu, 16, "nvswitch", constants());
  const CommPlan c = plan_communication(w, model_states(w), p, t, constants());
  EXPECT_EQ(c.strategy, CommStrategy::kHsdp);
  EXPECT_EQ(c.shard_group, 8);
  EXPECT_EQ(c.replicas, 2);
  ASSERT_EQ(c.calls().size(), 4u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(c.calls()[i].cost.received_per_card.value, bf16 * 7 / 8, 1e3) << i;
    EXPECT_EQ(c.calls()[i].cost.slowest, LinkLevel::kNvlink) << c.calls()[i].what;
  }
  const CommCall& across = c.calls()[3];
  EXPECT_EQ(across.cost.kind, Collective::kAllReduce);
  EXPECT_NEAR(across.cost.size.value, bf16 / 8, 1e3);
  EXPECT_NEAR(across.cost.received_per_card.value, bf16 / 8, 1e3);
  EXPECT_EQ(across.cost.slowest, LinkLevel::kNetwork);
  // FSDP over the 16 cards sends each gather over the network instead; per micro-batch it
  // receives 3 × 15/16 × 16.06 GB against HSDP's 3 × 7/8 + 1/8.
  const CommPlan f =
      plan_communication(w, model_states(w), on("h100-sxm", 16, Sharding::kFsdp), t, constants());
  EXPECT_EQ(f.calls()[0].cost.slowest, LinkLevel::kNetwork);
  EXPECT_NEAR(f.received_per_card_per_micro_batch.value, 3 * bf16 * 15 / 16, 1e4);
  EXPECT_NEAR(c.received_per_card_per_micro_batch.value, bf16 * (3.0 * 7 / 8 + 1.0 / 8), 1e4);
}

TEST(HybridSharding, AdaptersGatherTheBaseWithinTheGroup) {
  // LoRA on a sharded base: the base is gathered within each group, only the adapters' gradient
  // shards cross the groups.
  Workload w = workload("llama-3.1-70b", Method::kLora);
  const Placement p = hybrid("h100-sxm", 16, 8);
  const Topology t = build_topology(*p.gpu, 16, "nvswitch", constants());
  const ModelStates s = model_states(w);
  const CommPlan c = plan_communication(w, s, p, t, constants());
  EXPECT_EQ(c.strategy, CommStrategy::kShardedBaseHybrid);
  const CommCall& across = c.calls()[c.calls().size() - 1];
  EXPECT_EQ(across.cost.kind, Collective::kAllReduce);
  EXPECT_NEAR(across.cost.size.value, s.gradients.value / 8, 1.0);
  EXPECT_LT(across.cost.size.value, 1e-3 * s.frozen_weights.value);
}

TEST(HybridSharding, TheDefaultGroupIsOneNodesDataParallelCards) {
  Placement p = hybrid("h100-sxm", 32, 0);
  resolve_shard_group(p, 8);
  EXPECT_EQ(p.shard_group, 8);
  // Under tp 2 a node of 8 holds 4 data-parallel ranks; 32 cards have 16 of them.
  Placement q = hybrid("h100-sxm", 32, 0);
  q.layout.tp = 2;
  resolve_shard_group(q, 8);
  EXPECT_EQ(q.shard_group, 4);
  // 12 cards on nodes of 8: the group must divide 12; gcd(12, 8) = 4.
  Placement r = hybrid("h100-sxm", 12, 0);
  resolve_shard_group(r, 8);
  EXPECT_EQ(r.shard_group, 4);
  // A group that is given stays.
  Placement given = hybrid("h100-sxm", 32, 16);
  resolve_shard_group(given, 8);
  EXPECT_EQ(given.shard_group, 16);
}

TEST(HybridSharding, AGroupThatDoesNotDivideIsAClearError) {
  const auto r =
      test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "full", "--gpu", "h100-sxm",
                     "--gpus", "16", "--shard", "hsdp", "--shard-group", "3"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--shard-group 3 of the 16 data-parallel cards"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("1, 2, 4, 8, 16"), std::string::npos) << r.err;
  const auto other =
      test::run_cli({"scale", "--model", "llama-3.1-8b", "--method", "full", "--gpu", "h100-sxm",
                     "--gpus", "16", "--shard", "fsdp", "--shard-group", "8"});
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.err.find("applies to hybrid sharding"), std::string::npos) << other.err;
}

TEST(HybridSharding, FitAndScaleReportTheGroups) {
  const auto fit = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "full", "--gpu",
                                  "h100-sxm", "--gpus", "32", "--shard", "hsdp", "--json"});
  ASSERT_EQ(fit.code, 0) << fit.err;
  const auto j = nlohmann::json::parse(fit.out);
  EXPECT_EQ(j["layout"]["shard"], "hsdp");
  EXPECT_EQ(j["layout"]["shard_group"], 8);
  EXPECT_NEAR(j["memory_GB"]["model_states"].get<double>(), 128.48 / 8, 0.01);
  const auto scale =
      test::run_cli({"scale", "--model", "llama-3.1-8b", "--method", "full", "--gpu", "h100-sxm",
                     "--gpus", "32", "--shard", "hsdp", "--cards-per-node", "4", "--json"});
  ASSERT_EQ(scale.code, 0) << scale.err;
  const auto s = nlohmann::json::parse(scale.out);
  EXPECT_EQ(s["layout"]["shard_group"], 4);  // the node size given
  EXPECT_NE(s["strategy"].get<std::string>().find("HSDP"), std::string::npos) << s["strategy"];
}

TEST(HybridSharding, WhenTheGroupsShareIsTooMuchShardingOverAllIsSuggested) {
  // Llama 3.1 70B in full on 32 × H100 SXM in groups of 8: 141 GB of states per card do not fit
  // 85.5 GB; over all 32 cards they are 35.3 GB.
  const auto r = test::run_cli({"fit", "--model", "llama-3.1-70b", "--method", "full", "--gpu",
                                "h100-sxm", "--gpus", "32", "--shard", "hsdp", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "does-not-fit");
  bool found = false;
  for (const auto& s : j["suggestions"])
    if (s["kind"] == "shard") {
      found = true;
      EXPECT_EQ(s["change"]["shard"], "fsdp");
      EXPECT_TRUE(s["fits"].get<bool>());
      EXPECT_NE(s["reason"].get<std::string>().find("all 32 cards"), std::string::npos) << s;
      EXPECT_NE(s["reason"].get<std::string>().find("groups of 8"), std::string::npos) << s;
    }
  EXPECT_TRUE(found) << j["suggestions"].dump();
}

TEST(HybridSharding, ThePlannerShardsWithinNodesAcrossSeveral) {
  // Llama 3.1 8B in full on 16 × H100 SXM (two nodes, the default network of one 400 Gb/s NIC
  // per node): 128 GB of states per replica do not fit one card, so they are sharded; FSDP over
  // all 16 would gather every layer over the network, HSDP over one node keeps it on NVLink.
  const std::string runs =
      "candidates: {gpus: [h100-sxm], counts: [16], mig: false}\n"
      "runs:\n"
      "  - {name: 8B full, model: llama-3.1-8b, method: full, seq: 4096, global_batch: 64, "
      "tokens: 1e8}\n";
  const auto r = test::run_cli({"plan", "-", "--json"}, runs);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rec = nlohmann::json::parse(r.out)["runs"][0]["recommendation"];
  EXPECT_EQ(rec["shard"], "hsdp") << rec.dump();
  EXPECT_EQ(rec["layout"]["shard_group"], 8);
}

}  // namespace
}  // namespace ftplan
