// Multi-card figures C1–C9 of shared/spec/SEED-FIGURES.md and properties of the comm model.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "comm/traffic.hpp"
#include "core/error.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using test::on;
using test::printed;
using test::workload;

const CommConstants& constants() {
  static const CommConstants k = load_comm_constants(test::catalog());
  return k;
}

CommPlan plan(const Workload& w, const Placement& p, const std::string& topology = "") {
  const Topology t = build_topology(*p.gpu, p.count, topology, constants());
  return plan_communication(w, model_states(w), p, t, constants());
}

TEST(SeedComm, C1_DataParallelMoves2PsiPerStep) {
  const Workload w = workload("llama-3.1-8b", Method::kFull);
  const double grad_bytes = model_states(w).gradients.value;
  for (int n : {2, 4, 8, 64}) {
    const CommPlan p = plan(w, on("h200-sxm", n, Sharding::kDdp));
    EXPECT_EQ(p.strategy, CommStrategy::kDataParallel);
    // 2(N−1)/N of the gradient buffer, i.e. 2Ψ elements as N grows (ZeRO §7.1).
    EXPECT_NEAR(p.received_per_card_per_step.value / grad_bytes, 2.0 * (n - 1) / n, 1e-12) << n;
  }
}

// Under gradient accumulation ZeRO-2 reduces every micro-batch's gradients into their owners'
// partitions; ZeRO-1 and DDP reduce once per step.
TEST(CommModel, Zero2ReducesEveryMicroBatchZero1OncePerStep) {
  Workload w = workload("llama-3.1-8b", Method::kFull);
  const double grad_bytes = model_states(w).gradients.value;
  const int n = 4;
  for (std::int64_t accum : {1, 4}) {
    w.grad_accum = accum;
    const CommPlan z2 = plan(w, on("h200-sxm", n, Sharding::kZero2));
    const CommPlan z1 = plan(w, on("h200-sxm", n, Sharding::kZero1));
    // Reduce-scatter (N−1)/N of the gradients per micro-batch; the all-gather of the updated
    // weights (the same size in BF16) once per step.
    const double rs = grad_bytes * (n - 1) / n;
    EXPECT_NEAR(z2.received_per_card_per_step.value, rs * accum + rs, 1e-6 * rs) << accum;
    EXPECT_NEAR(z1.received_per_card_per_step.value, 2 * rs, 1e-6 * rs) << accum;
  }
}

// FSDP1's no_sync under gradient accumulation (stack hf, the Trainer's loop): the weights are
// gathered for every micro-batch's forward and backward passes, the gradients reduce-scattered
// once per step; with sync_each_batch, or without accumulation, every micro-batch.
TEST(CommModel, Fsdp1NoSyncReduceScattersOncePerStep) {
  Workload w = workload("llama-3.1-8b", Method::kFull);
  w.stack = &test::stacks().find("hf");
  const double rs = model_states(w).gradients.value * 3 / 4;  // (N-1)/N of BF16 gradients
  const Placement four = on("h200-sxm", 4, Sharding::kFsdp);
  for (std::int64_t accum : {1, 4}) {
    w.grad_accum = accum;
    w.options.sync_each_batch = false;
    const double a = static_cast<double>(accum);
    EXPECT_NEAR(plan(w, four).received_per_card_per_step.value, rs * (2 * a + 1), 1e-6 * rs)
        << accum;
    w.options.sync_each_batch = true;
    EXPECT_NEAR(plan(w, four).received_per_card_per_step.value, rs * 3 * a, 1e-6 * rs) << accum;
  }
  // HYBRID_SHARD over 4 cards in groups of 2 (g: the BF16 gradients): per micro-batch the weights'
  // two all-gathers within the group, g/2 each; the reduce-scatter within the group (g/2) and the
  // all-reduce of the g/2 shard across the 2 groups (2 x 1/2 x g/2) once per step under no_sync,
  // every micro-batch with sync_each_batch.
  const double g = model_states(w).gradients.value;
  Placement hybrid = on("h200-sxm", 4, Sharding::kHsdp);
  hybrid.shard_group = 2;
  for (std::int64_t accum : {1, 4}) {
    w.grad_accum = accum;
    const double a = static_cast<double>(accum);
    w.options.sync_each_batch = false;
    EXPECT_NEAR(plan(w, hybrid).received_per_card_per_step.value, g * (a + 1), 1e-6 * g) << accum;
    w.options.sync_each_batch = true;
    EXPECT_NEAR(plan(w, hybrid).received_per_card_per_step.value, g * 2 * a, 1e-6 * g) << accum;
  }
}

TEST(SeedComm, C2_8B_FullFineTune_AllReduces_16_GB_Of_Bf16_Gradients) {
  const Workload w = workload("llama-3.1-8b", Method::kFull);
  const CommPlan p = plan(w, on("h200-nvl", 2, Sharding::kDdp));
  ASSERT_EQ(p.calls().size(), 1u);
  EXPECT_EQ(printed(to_GB(p.calls()[0].cost.size), 2), 16.06);
  EXPECT_EQ(printed(to_GB(p.calls()[0].cost.size), 0), 16);
}

TEST(SeedComm, C3_FsdpMovesOneAndAHalfTimesDataParallel) {
  const Workload w = workload("llama-3.1-8b", Method::kFull);
  for (int n : {2, 4, 8}) {
    const double ddp = plan(w, on("h200-nvl", n, Sharding::kDdp)).received_per_card_per_step.value;
    const double fsdp =
        plan(w, on("h200-nvl", n, Sharding::kFsdp)).received_per_card_per_step.value;
    EXPECT_NEAR(fsdp / ddp, 1.5, 1e-12) << n;
  }
}

TEST(SeedComm, C4_70B_Lora_ShardedBase_141_212_247_GB_PerCardPerMicroBatch) {
  const Workload w = workload("llama-3.3-70b", Method::kLora);
  const std::pair<int, double> expected[] = {{2, 141}, {4, 212}, {8, 247}};
  for (auto [n, gb] : expected) {
    const CommPlan p = plan(w, on("rtx-pro-6000", n, Sharding::kFsdp));
    EXPECT_EQ(p.strategy, CommStrategy::kShardedBase);
    // The base all-gathers (forward + backward) carry the figure; the adapters add 0.2 %.
    Bytes base_gathers;
    for (const auto& c : p.calls())
      if (c.what.find("frozen base") != std::string::npos) base_gathers += c.cost.received_per_card;
    EXPECT_EQ(printed(to_GB(base_gathers), 0), gb) << n;
    EXPECT_NEAR(to_GB(p.received_per_card_per_micro_batch), gb, gb * 0.01) << n;
  }
}

TEST(SeedComm, C5_141_GB_Needs_2_2_s_Over_PcieGen5_And_0_3_s_Over_A_2WayBridge) {
  const Workload w = workload("llama-3.3-70b", Method::kLora);
  const CommPlan pcie = plan(w, on("rtx-pro-6000", 2, Sharding::kFsdp), "pcie");
  const CommPlan bridge = plan(w, on("h200-nvl", 2, Sharding::kFsdp), "nvlink-bridge-2");
  Seconds pcie_base, bridge_base;
  for (const auto& c : pcie.calls())
    if (c.what.find("frozen base") != std::string::npos) pcie_base += c.cost.min_link_seconds;
  for (const auto& c : bridge.calls())
    if (c.what.find("frozen base") != std::string::npos) bridge_base += c.cost.min_link_seconds;
  EXPECT_EQ(printed(pcie_base.value, 1), 2.2);
  EXPECT_EQ(printed(bridge_base.value, 1), 0.3);
  EXPECT_GE(pcie.min_link_seconds_per_micro_batch.value, 2.2);
}

TEST(SeedComm, C6_LinkRatesFromTheCardData) {
  const GpuSpec& h200 = test::catalog().gpu("h200-nvl");
  EXPECT_EQ(h200.nvlink.GBps_per_gpu_both_directions, 900);
  EXPECT_EQ(to_GBps(h200.nvlink.per_direction()), 450);
  EXPECT_EQ(h200.nvlink.bridge_max_cards, 4);
  EXPECT_EQ(h200.pcie.GBps_both_directions, 128);
  EXPECT_EQ(to_GBps(h200.pcie.per_direction()), 64);
}

TEST(SeedComm, C7_EightBridgedH200Nvl_FormTwoNvlinkDomainsWithPcieBetween) {
  const Topology t = build_topology(test::catalog().gpu("h200-nvl"), 8, "", constants());
  EXPECT_EQ(t.preset, "nvlink-bridge-4");
  EXPECT_EQ(t.domains(), 2);
  EXPECT_EQ(t.slowest().level, LinkLevel::kPcie);
  ASSERT_FALSE(t.notes.empty());
  EXPECT_NE(t.notes[0].find("2 NVLink domains"), std::string::npos) << t.notes[0];
  // Four cards stay within one bridge: NVLink is the slowest link crossed.
  EXPECT_EQ(build_topology(test::catalog().gpu("h200-nvl"), 4, "", constants()).slowest().level,
            LinkLevel::kNvlink);
  // No preset puts 8 NVL cards behind one bridge or a switch.
  EXPECT_THROW(build_topology(test::catalog().gpu("h200-nvl"), 8, "nvswitch", constants()),
               UserError);
}

TEST(SeedComm, C8_RtxPro6000NeverHasNvlink) {
  for (const char* id : {"rtx-pro-6000", "rtx-pro-6000-server", "rtx-pro-6000-maxq"}) {
    const GpuSpec& g = test::catalog().gpu(id);
    EXPECT_EQ(default_topology(g, 2), "pcie") << id;
    try {
      build_topology(g, 2, "nvlink-bridge-2", constants());
      ADD_FAILURE() << id << ": NVLink accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("has no NVLink"), std::string::npos) << e.what();
    }
    const Topology t = build_topology(g, 2, "pcie", constants());
    bool iommu = false;
    for (const auto& n : t.notes)
      iommu |= n.find("IOMMU") != std::string::npos && n.find("ACS") != std::string::npos;
    EXPECT_TRUE(iommu) << id;
  }
}

TEST(SeedComm, C9_ServerEditionNotesTheEnhancedPeerToPeerPath) {
  const Topology t =
      build_topology(test::catalog().gpu("rtx-pro-6000-server"), 2, "pcie", constants());
  bool noted = false;
  for (const auto& n : t.notes)
    noted |= n.find("enhanced PCIe peer-to-peer") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(CommProperties, MoreCardsLessMemoryButMoreReceivedApproachingTwiceTheBase) {
  const Workload w = workload("llama-3.3-70b", Method::kLora);
  const double base = model_states(w).frozen_weights.value;
  double previous_received = 0, previous_memory = 1e300;
  for (int n : {2, 4, 8, 16, 32, 64, 128}) {
    const Placement p = on("h200-nvl", n, Sharding::kFsdp);
    const double memory = estimate_memory(w, p).states.total().value;
    const double received = plan(w, p, "pcie").received_per_card_per_micro_batch.value;
    EXPECT_LT(memory, previous_memory) << n;
    EXPECT_GT(received, previous_received) << n;
    EXPECT_LT(received, 2.0 * base * 1.01) << n;
    previous_memory = memory;
    previous_received = received;
  }
  EXPECT_GT(previous_received, 1.95 * base);
}

TEST(CommProperties, NvlinkIsFasterThanPcieForTheSameBytes) {
  const Workload w = workload("llama-3.1-8b", Method::kFull);
  const Placement p = on("h200-nvl", 2, Sharding::kFsdp);
  const CommPlan nv = plan(w, p, "nvlink-bridge-2");
  const CommPlan pcie = plan(w, p, "pcie");
  EXPECT_EQ(nv.received_per_card_per_step.value, pcie.received_per_card_per_step.value);
  EXPECT_LT(nv.min_link_seconds_per_step.value, pcie.min_link_seconds_per_step.value);
  EXPECT_LT(nv.calls()[0].cost.estimated_seconds.value,
            pcie.calls()[0].cost.estimated_seconds.value);
}

TEST(CommProperties, ExposedTimeShrinksWithMoreComputeToHideBehind) {
  const Workload w = workload("llama-3.1-8b", Method::kFull);
  const Placement p = on("rtx-pro-6000", 2, Sharding::kFsdp);
  const Topology t = build_topology(*p.gpu, 2, "", constants());
  const CommPlan cp = plan_communication(w, model_states(w), p, t, constants());
  const ScaleEstimate little =
      estimate_scaling(cp, {Seconds(0.1), Seconds(0.2), Seconds(0.01)}, w, t, constants());
  const ScaleEstimate lots =
      estimate_scaling(cp, {Seconds(10), Seconds(20), Seconds(0.01)}, w, t, constants());
  EXPECT_GT(little.exposed_per_step.value, lots.exposed_per_step.value);
  EXPECT_LT(little.scaling_efficiency, lots.scaling_efficiency);
  EXPECT_LE(lots.scaling_efficiency, 1.0);
}

TEST(CommProperties, SingleCardMovesNothing) {
  const CommPlan p = plan(workload("llama-3.1-8b", Method::kLora), on("rtx-pro-6000"));
  EXPECT_EQ(p.strategy, CommStrategy::kSingleCard);
  EXPECT_EQ(p.received_per_card_per_step.value, 0);
}

}  // namespace
}  // namespace ftplan

namespace ftplan {
namespace {

TEST(ScaleCli, JsonHasTheDocumentedKeysAndTheSeedFigures) {
  auto r = test::run_cli({"scale", "--model", "llama-3.3-70b", "--method", "lora", "--gpu",
                          "rtx-pro-6000", "--gpus", "2", "--shard", "fsdp", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // C4 + C5: ~141 GB per card per micro-batch (base 141.1 + adapters), >= 2.2 s over PCIe Gen5.
  EXPECT_NEAR(j["received_GB_per_card_per_microbatch"].get<double>(), 141.7, 0.1);
  EXPECT_GE(j["min_link_seconds"].get<double>(), 2.2);
  EXPECT_EQ(j["link"], "PCIe Gen5 x16");
  EXPECT_EQ(j["strategy"], "sharded frozen base (FSDP)");
  EXPECT_GT(j["exposed_seconds"].get<double>(), 0.0);
  EXPECT_LE(j["scaling_efficiency"].get<double>(), 1.0);
}

TEST(ScaleCli, W4_BeyondFourCardsBothCardsCrossPcie) {
  auto r = test::run_cli({"scale", "--model", "llama-3.3-70b", "--method", "lora", "--gpu",
                          "h200-nvl", "--gpu", "rtx-pro-6000", "--sweep", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto sweep = nlohmann::json::parse(r.out)["sweep"];
  auto at = [&](const std::string& gpu, int n) {
    for (const auto& e : sweep)
      if (e["gpu"] == gpu && e["gpus"] == n) return e;
    ADD_FAILURE() << gpu << " x" << n << " missing";
    return nlohmann::json();
  };
  // 2 and 4 H200 NVL stay inside one NVLink bridge; 8 cross PCIe between two domains, as every
  // RTX PRO 6000 setup does.
  EXPECT_EQ(at("h200-nvl", 2)["link"], "NVLink 4 bridge");
  EXPECT_EQ(at("h200-nvl", 4)["link"], "NVLink 4 bridge");
  EXPECT_EQ(at("h200-nvl", 8)["link"], "PCIe Gen5 x16");
  for (int n : {2, 4, 8})
    EXPECT_EQ(at("rtx-pro-6000", n)["link"], "PCIe Gen5 x16");
  // Inside a domain the sharded 70B LoRA scales far better on H200 NVL than over PCIe.
  EXPECT_GT(at("h200-nvl", 4)["scaling_efficiency"].get<double>(),
            at("rtx-pro-6000", 4)["scaling_efficiency"].get<double>() + 0.2);
}

}  // namespace
}  // namespace ftplan
