// Model parallelism (parallel/layout): hand-computed pipeline bubble and micro-batches in flight,
// states and activations per card under tensor and pipeline parallelism, the traffic of tensor,
// context, expert and pipeline parallel groups, what one card computes, and the errors for layouts
// that do not divide the model or the cards.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "comm/topology.hpp"
#include "core/error.hpp"
#include "memory/fit.hpp"
#include "parallel/layout.hpp"
#include "perf/ops.hpp"
#include "plan/evaluate.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using test::on;
using test::workload;

Layout layout(int tp, int pp, int cp = 1, int ep = 1, int vpp = 1) {
  Layout l;
  l.tp = tp;
  l.pp = pp;
  l.cp = cp;
  l.ep = ep;
  l.vpp = vpp;
  return l;
}

const CommConstants& constants() {
  static const CommConstants k = load_comm_constants(test::catalog());
  return k;
}

TEST(Layout, PipelineBubbleIsStagesLessOneOverChunksTimesMicroBatches) {
  // Narayanan et al. 2021 §2.2: (p − 1)/m for 1F1B, (p − 1)/(v·m) interleaved.
  EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(layout(1, 4), 16), 3.0 / 16);
  EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(layout(1, 4, 1, 1, 2), 16), 3.0 / 32);
  EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(layout(8, 1), 16), 0.0);
  EXPECT_DOUBLE_EQ(pipeline_bubble_fraction(layout(1, 8), 1), 7.0);
}

TEST(Layout, OneFOneBHoldsStagesLessIndexMicroBatches) {
  const Layout l = layout(1, 4);
  EXPECT_DOUBLE_EQ(inflight_micro_batches(l, 16, {0, 20, true, false}), 4.0);
  EXPECT_DOUBLE_EQ(inflight_micro_batches(l, 16, {3, 20, false, true}), 1.0);
  EXPECT_DOUBLE_EQ(inflight_micro_batches(l, 2, {0, 20, true, false}), 2.0);
  // Interleaved: (1 + (p − 1)/(p·v)) more (Korthikanti et al. 2022 §4.2.3): 4 × 1.375.
  EXPECT_DOUBLE_EQ(inflight_micro_batches(layout(1, 4, 1, 1, 2), 16, {0, 20, true, false}), 5.5);
}

TEST(Layout, StatesPerCardFollowTensorPipelineAndDataSplits) {
  // Llama 3.1 70B full fine-tune, AdamW, tp 8 × pp 4 × dp 2, ZeRO-1: each card holds 1/8 of a
  // stage's 20 layers plus 1/8 of the embedding (first stage), 16-bit weights and gradients
  // whole (4 B) and master weights and Adam states (12 B) over the 2 data-parallel cards.
  Workload w = workload("llama-3.1-70b", Method::kFull);
  const ModelArch& a = w.model->arch;
  const Layout l = layout(8, 4);
  const TrainedSet set = trained_set(w);
  const EdgeStages edges = edge_stages(a, l);
  ASSERT_EQ(edges.first.layers, 20);
  const double h = static_cast<double>(a.hidden), v = static_cast<double>(a.vocab);
  const double embedding = v * h;
  const double blocks = static_cast<double>(w.model->params.total) - 2 * embedding - h;
  const double norms_per_layer = 2 * h;  // replicated over tp, not split
  const double per_card =
      (blocks / 4 - 20 * norms_per_layer + embedding) / 8 + 20 * norms_per_layer;
  const ModelStates first =
      shard_stage_states(stage_states(w, set, l, edges.first), Sharding::kZero1, l, 64);
  EXPECT_NEAR(first.total().value, per_card * (4 + 12.0 / 2), 1e-6 * first.total().value);
  // The last stage holds the output layer instead of the embedding, and the final norm.
  const ModelStates last =
      shard_stage_states(stage_states(w, set, l, edges.last), Sharding::kZero1, l, 64);
  EXPECT_NEAR(last.total().value, (per_card + h) * (4 + 12.0 / 2), 1e-6 * last.total().value);
}

TEST(Layout, ExpertsSplitOverExpertParallelRanks) {
  // Mixtral 8x7B, ep 8: one expert per card per layer; the rest whole.
  Workload w = workload("mixtral-8x7b", Method::kFull);
  const TrainedSet set = trained_set(w);
  const Stage all{0, w.model->arch.layers, true, true};
  const StageStates one = stage_states(w, set, layout(1, 1), all);
  const StageStates spread = stage_states(w, set, layout(1, 1, 1, 8), all);
  EXPECT_NEAR(spread.experts.total() / one.experts.total(), 1.0 / 8, 1e-12);
  EXPECT_NEAR(spread.dense.total() / one.dense.total(), 1.0, 1e-12);
}

TEST(Layout, ActivationsPerCardSplitOverTensorParallelAndStageLayers) {
  // Sequence parallelism splits every saved tensor of a block over tp (Korthikanti et al. 2022,
  // sbh(34 + 5as/h)/t); a stage keeps its 20 of 80 layers for its micro-batches in flight.
  Workload w = workload("llama-3.1-70b", Method::kFull);
  w.recompute = Recompute::kSelective;
  const ActivationProfile whole = activation_profile(w);
  const Layout l = layout(8, 4);
  const EdgeStages e = edge_stages(w.model->arch, l);
  const ActivationProfile first = stage_profile(whole, w.model->arch, l, e.first, 16);
  const ActivationProfile last = stage_profile(whole, w.model->arch, l, e.last, 16);
  EXPECT_NEAR(first.saved_all.per_token / whole.saved_all.per_token, 20.0 / 80 * 4 / 8, 1e-12);
  EXPECT_NEAR(last.saved_all.per_token / whole.saved_all.per_token, 20.0 / 80 * 1 / 8, 1e-12);
  EXPECT_NEAR(first.saved_one.per_token / whole.saved_one.per_token, 1.0 / 8, 1e-12);
  // The logits (vocabulary-parallel) on the last stage only.
  EXPECT_EQ(first.logits.per_token, 0.0);
  EXPECT_NEAR(last.logits.per_token / whole.logits.per_token, 1.0 / 8, 1e-12);
}

TEST(Layout, FirstStageHoldsMoreActivationsThanTheLast) {
  Workload w = workload("llama-3.1-70b", Method::kFull);
  w.seq = 4096;
  w.grad_accum = 16;
  w.recompute = Recompute::kSelective;
  Placement p = on("h100-sxm", 64, Sharding::kZero1);
  p.layout = layout(8, 4);
  const MemoryEstimate m = estimate_memory(w, p);
  ASSERT_EQ(m.stage_count, 2);
  EXPECT_EQ(m.stages[0].stage, 0);
  EXPECT_EQ(m.stages[1].stage, 3);
  EXPECT_GT(m.stages[0].activations, m.stages[1].activations);
  EXPECT_EQ(m.peak, std::max(m.stages[0].peak, m.stages[1].peak));
}

TEST(Layout, TensorParallelTrafficIsFourGathersAndScattersPerLayerAndPass) {
  // Llama 3.1 8B, seq 4096, tp 8, full recomputation: per layer and pass (forward, backward,
  // recomputed forward) 2 all-gathers and 2 reduce-scatters of [4096 × 4096] BF16 = 33.55 MB,
  // each card receiving 7/8 of it: 32 × 3 × 4 × 29.36 MB = 11.27 GB per micro-batch.
  Workload w = workload("llama-3.1-8b", Method::kFull);
  w.seq = 4096;
  const Layout l = layout(8, 1);
  const Topology t = build_topology(test::catalog().gpu("h100-sxm"), 8, "nvswitch", constants());
  const LayoutTraffic x = layout_traffic(w, l, edge_stages(w.model->arch, l).first, t, constants());
  const double message = 4096.0 * 4096 * 2;
  EXPECT_EQ(x.tp.collectives, 32 * 3 * 4);
  EXPECT_NEAR(x.tp.received.value, 32 * 3 * 4 * message * 7 / 8, 1.0);
  EXPECT_EQ(x.tp.link, LinkLevel::kNvlink);
  EXPECT_EQ(x.cp.collectives, 0);
  EXPECT_EQ(x.pp.collectives, 0);
}

TEST(Layout, ContextParallelRingPassesKeyValueChunks) {
  // Llama 3.1 8B (K and V 1024 wide each), seq 32768, cp 4: a card's chunk of 8192 tokens of K
  // and V is 8192 × 2048 × 2 B = 33.55 MB; it receives the 3 other chunks per layer in the
  // forward pass and the recomputed forward, K, V and their gradients in the backward pass:
  // 32 layers × 4 × 3 × 33.55 MB = 12.88 GB.
  Workload w = workload("llama-3.1-8b", Method::kFull);
  w.seq = 32768;
  const Layout l = layout(1, 1, 4);
  const Topology t = build_topology(test::catalog().gpu("h100-sxm"), 4, "nvswitch", constants());
  const LayoutTraffic x = layout_traffic(w, l, edge_stages(w.model->arch, l).first, t, constants());
  const double chunk = 8192.0 * 2048 * 2;
  EXPECT_NEAR(x.cp.received.value, 32 * 4 * 3 * chunk, 1.0);
}

TEST(Layout, ExpertParallelAllToAllCarriesRoutedCopies) {
  // Mixtral 8x7B (top 2 of 8, h 4096), seq 4096, ep 8: dispatch and combine of 4096 × 2 copies
  // × 4096 × 2 B = 67.1 MB each, 7/8 of it leaving the card, per MoE layer in three passes:
  // 32 × 3 × 2 × 58.7 MB = 11.27 GB.
  Workload w = workload("mixtral-8x7b", Method::kFull);
  w.seq = 4096;
  const Layout l = layout(1, 1, 1, 8);
  const Topology t = build_topology(test::catalog().gpu("h100-sxm"), 8, "nvswitch", constants());
  const LayoutTraffic x = layout_traffic(w, l, edge_stages(w.model->arch, l).first, t, constants());
  const double size = 4096.0 * 2 * 4096 * 2;
  EXPECT_EQ(x.ep.collectives, 32 * 3 * 2);
  EXPECT_NEAR(x.ep.received.value, 32 * 3 * 2 * size * 7 / 8, 1.0);
}

TEST(Layout, GroupsSpacedBeyondANodeCrossTheNetwork) {
  const Topology t = build_topology(test::catalog().gpu("h100-sxm"), 64, "nvswitch", constants());
  EXPECT_EQ(group_topology(t, 8, 1).slowest().level, LinkLevel::kNvlink);
  EXPECT_EQ(group_topology(t, 8, 8).slowest().level, LinkLevel::kNetwork);
  EXPECT_EQ(group_topology(t, 4, 2).slowest().level, LinkLevel::kNvlink);
}

TEST(Layout, ACardComputesItsShareOfTheModel) {
  // Tensor parallelism splits the block GEMMs' FLOPs over tp; context parallelism the attention
  // core's over cp; pipeline stages hold their layers' work and only the last the output layer.
  Workload w = workload("llama-3.1-8b", Method::kFull);
  w.seq = 8192;
  const StepOps whole = build_step_ops(w);
  auto flops = [](const StepOps& s, OpClass c) {
    double f = 0;
    for (const Op& op : s.ops)
      if (op.op_class == c && op.phase != Phase::kOptimizer && op.name.rfind("lm_head", 0) != 0)
        f += op.total_flops().value;
    return f;
  };
  const ModelArch& a = w.model->arch;
  const Layout tp = layout(4, 1);
  const StepOps by_tp = stage_step_ops(whole, a, tp, edge_stages(a, tp).first, 0.25);
  EXPECT_NEAR(flops(by_tp, OpClass::kGemm) / flops(whole, OpClass::kGemm), 0.25, 1e-9);
  const Layout cp = layout(1, 1, 2);
  const StepOps by_cp = stage_step_ops(whole, a, cp, edge_stages(a, cp).first, 1.0);
  EXPECT_NEAR(flops(by_cp, OpClass::kAttention) / flops(whole, OpClass::kAttention), 0.5, 1e-9);
  const Layout pp = layout(1, 4);
  const EdgeStages e = edge_stages(a, pp);
  const StepOps first = stage_step_ops(whole, a, pp, e.first, 0.25);
  const StepOps last = stage_step_ops(whole, a, pp, e.last, 0.25);
  EXPECT_NEAR(flops(first, OpClass::kGemm) / flops(whole, OpClass::kGemm), 0.25, 1e-9);
  auto has = [](const StepOps& s, const std::string& prefix) {
    for (const Op& op : s.ops)
      if (op.name.rfind(prefix, 0) == 0) return true;
    return false;
  };
  EXPECT_TRUE(has(first, "embedding.") && !has(first, "lm_head."));
  EXPECT_TRUE(has(last, "lm_head.") && !has(last, "embedding."));
}

TEST(Layout, ScaleOnALayoutReportsGroupsBubbleAndThroughput) {
  const auto r = test::run_cli({"scale",
                                "--model",
                                "llama-3.1-70b",
                                "--method",
                                "full",
                                "--gpu",
                                "h100-sxm",
                                "--gpus",
                                "64",
                                "--tp",
                                "8",
                                "--pp",
                                "4",
                                "--seq",
                                "4096",
                                "--grad-accum",
                                "16",
                                "--shard",
                                "zero1",
                                "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["layout"]["dp"], 2);
  EXPECT_EQ(j["model_parallel"]["tp"]["link"], "nvlink");
  EXPECT_GT(j["model_parallel"]["bubble_seconds_per_step"].get<double>(), 0.0);
  EXPECT_EQ(j["model_parallel"]["memory_stages"].size(), 2u);
  // Throughput: two replicas × 16 × 4096 tokens per step.
  EXPECT_NEAR(j["tokens_per_second"].get<double>() * j["step_seconds"].get<double>(),
              2 * 16 * 4096.0, 2 * 16 * 4096.0 * 1e-3);
}

TEST(Layout, MoreTensorParallelismLowersEachCardsCompute) {
  // On one node, tp 8 instead of tp 2 (with 4× the replicas over 8 cards -> 1) gives each card a
  // quarter of the block work: compute per step falls.
  auto compute = [](const std::string& tp, const std::string& gpus) {
    const auto r = test::run_cli({"scale", "--model", "llama-3.1-8b", "--method", "full", "--gpu",
                                  "h100-sxm", "--gpus", gpus, "--tp", tp, "--json"});
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["compute_seconds_per_step"].get<double>();
  };
  EXPECT_LT(compute("8", "8"), compute("2", "2"));
}

// check_layout's message for `l` on `count` cards of Llama 3.1 70B (or `model`).
std::string layout_error(const Layout& l, int count, const std::string& model = "llama-3.1-70b",
                         Attention attention = Attention::kFlash) {
  Workload w = workload(model, Method::kFull);
  w.attention = attention;
  Placement p = on("h100-sxm", count);
  p.layout = l;
  try {
    check_layout(w, p);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(Layout, WithoutACountTheLayoutGetsTheFewestCardsItNeeds) {
  // One replica, or enough data-parallel ranks for the expert groups: dp · cp a multiple of ep.
  EXPECT_EQ(layout(8, 4).min_cards(), 32);
  EXPECT_EQ(layout(2, 1, 1, 8).min_cards(), 16);
  EXPECT_EQ(layout(1, 1, 2, 8).min_cards(), 8);
  EXPECT_EQ(layout(1, 1, 4, 2).min_cards(), 4);
  const auto r = test::run_cli({"scale", "--model", "mixtral-8x7b", "--method", "full", "--gpu",
                                "h100-sxm", "--ep", "8", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpus"], 8);
  // --shard auto under a layout: the distributed optimizer (ZeRO-1) of a full fine-tune.
  EXPECT_EQ(j["layout"]["shard"], "zero1");
}

TEST(Layout, ImpossibleLayoutsSayWhatDoesNotDivide) {
  EXPECT_NE(layout_error(layout(3, 1), 3).find("64 heads, which --tp 3 does not divide"),
            std::string::npos);
  EXPECT_NE(layout_error(layout(8, 1), 12).find("12 cards do not split into replicas of 8"),
            std::string::npos);
  EXPECT_NE(layout_error(layout(1, 3), 3).find("80 layers do not divide into 3"),
            std::string::npos);
  EXPECT_NE(layout_error(layout(1, 1, 1, 2), 2).find("has none: drop --ep"), std::string::npos);
  EXPECT_NE(layout_error(layout(1, 1, 2), 2, "llama-3.1-70b", Attention::kEager).find("ring"),
            std::string::npos);
  EXPECT_NE(layout_error(layout(1, 1, 1, 1, 2), 1).find("needs --pp 2"), std::string::npos);
  EXPECT_NE(layout_error(layout(1, 1, 1, 3), 3, "mixtral-8x7b").find("8 experts"),
            std::string::npos);
  EXPECT_EQ(layout_error(layout(8, 2), 16), "");
}

TEST(Layout, TensorParallelAcrossNodesIsRefusedAtTheCommandLine) {
  const auto r = test::run_cli({"scale", "--model", "llama-3.1-70b", "--method", "full", "--gpu",
                                "h100-sxm", "--gpus", "16", "--tp", "16"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("must stay inside one node"), std::string::npos) << r.err;
}

TEST(Layout, FitShowsTheStagesOfAPipeline) {
  const auto r = test::run_cli({"fit", "--model", "llama-3.1-70b", "--method", "lora", "--gpu",
                                "rtx-pro-6000", "--pp", "2", "--gpus", "2", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["pipeline_stages"].size(), 2u);
  EXPECT_EQ(j["pipeline_stages"][1]["layers"], 40);
  EXPECT_EQ(j["layout"]["pp"], 2);
  // Half of everything per card (embedding and output layer are the same size): the frozen BF16
  // base at 2 B and the adapters at 16 B per parameter (AdamW, mixed precision).
  const double frozen = j["params"]["frozen"].get<double>();
  const double trained = j["params"]["trainable"].get<double>();
  EXPECT_NEAR(j["memory_GB"]["model_states"].get<double>(), (2 * frozen + 16 * trained) / 2 / 1e9,
              0.01);
}

// The planner's recommendation for Llama 3.1 70B in full on H100 SXM at the counts given.
nlohmann::json plan_70b_full(const std::string& counts) {
  const auto r = test::run_cli({"plan", "-", "--json"},
                               "candidates:\n  gpus: [h100-sxm]\n  counts: [" + counts +
                                   "]\n  mig: false\n"
                                   "runs:\n  - name: big\n    model: llama-3.1-70b\n"
                                   "    method: full\n    seq: 4096\n    global_batch: 64\n"
                                   "    tokens: 1e8\n");
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out)["runs"][0]["recommendation"] : nlohmann::json();
}

TEST(Layout, ThePlannerFindsALayoutWhereShardingAloneDoesNotFit) {
  // Llama 3.1 70B in full on 16 × H100 SXM (85.5 GB): FSDP leaves 70.6 GB of states per card and
  // no room for the step; splitting the model over tensor and pipeline ranks keeps it whole per
  // stage. The planner's choice for the card must be such a layout, one that divides the model.
  const auto rec = plan_70b_full("16");
  ASSERT_TRUE(rec["feasible"].get<bool>()) << rec.dump();
  const auto& l = rec["layout"];
  const int tp = l["tp"], pp = l["pp"], cp = l["cp"];
  EXPECT_GT(tp * pp * cp, 1) << l.dump();
  EXPECT_EQ(l["dp"].get<int>() * tp * pp * cp, 16);
  EXPECT_EQ(64 % tp, 0);  // heads
  EXPECT_EQ(80 % pp, 0);  // layers
}

TEST(Layout, TheReasonNamesTheLayoutNotASingleCard) {
  // 70B LoRA on a BF16 base, H100 SXM only: the planner picks a model-parallel layout; its reason
  // says how the cards split the run (the degrees, then the data-parallel strategy only when
  // several replicas train), never "single card".
  const auto r =
      test::run_cli({"plan", "-", "--json"},
                    "runs:\n  - {name: big, model: llama-3.3-70b, method: lora, rank: 16, "
                    "tokens: 1e8, gpus: [h100-sxm]}\n");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto run = nlohmann::json::parse(r.out)["runs"][0];
  const auto& l = run["recommendation"]["layout"];
  ASSERT_GT(l["tp"].get<int>() * l["pp"].get<int>(), 1) << l.dump();
  const std::string why = run["why"].get<std::string>();
  std::string label = "tp " + std::to_string(l["tp"].get<int>());
  if (l["pp"].get<int>() > 1) label += " · pp " + std::to_string(l["pp"].get<int>());
  EXPECT_NE(why.find(label), std::string::npos) << why;
  EXPECT_EQ(why.find("single card"), std::string::npos) << why;
}

TEST(Layout, ThePlannersLayoutIsTheOneScaleEvaluates) {
  // The planner times a layout's stages once per card type and reuses them at every count (8
  // cards tried before 16 here); `scale` evaluates the same placement from scratch. Both must
  // give the same step, throughput, overlap and memory.
  const auto rec = plan_70b_full("8, 16");
  ASSERT_TRUE(rec["feasible"].get<bool>()) << rec.dump();
  const auto& l = rec["layout"];
  ASSERT_GT(l["tp"].get<int>() * l["pp"].get<int>() * l["cp"].get<int>(), 1) << l.dump();
  const auto s = test::run_cli({"scale",
                                "--model",
                                "llama-3.1-70b",
                                "--method",
                                "full",
                                "--gpu",
                                "h100-sxm",
                                "--gpus",
                                std::to_string(rec["count"].get<int>()),
                                "--tp",
                                std::to_string(l["tp"].get<int>()),
                                "--pp",
                                std::to_string(l["pp"].get<int>()),
                                "--vpp",
                                std::to_string(l["vpp"].get<int>()),
                                "--cp",
                                std::to_string(l["cp"].get<int>()),
                                "--shard",
                                l["shard"].get<std::string>(),
                                "--seq",
                                "4096",
                                "--micro-batch",
                                std::to_string(rec["micro_batch"].get<int>()),
                                "--grad-accum",
                                std::to_string(rec["grad_accum"].get<int>()),
                                "--recompute",
                                rec["recompute"].get<std::string>(),
                                "--json"});
  ASSERT_EQ(s.code, 0) << s.err;
  const auto j = nlohmann::json::parse(s.out);
  for (const char* key :
       {"step_seconds", "tokens_per_second", "exposed_seconds", "scaling_efficiency"})
    EXPECT_NEAR(rec[key].get<double>(), j[key].get<double>(), 1e-9 + 1e-6 * j[key].get<double>())
        << key;
  for (const char* key : {"peak", "model_states"})
    EXPECT_NEAR(rec["memory_GB"][key].get<double>(), j["memory_GB"][key].get<double>(), 1e-6)
        << key;
}

TEST(Layout, ARunsFileFixesTheLayoutOrSaysWhyItCannot) {
  const auto dir = std::filesystem::temp_directory_path() / "ftplan-test-layout-runs";
  std::filesystem::create_directories(dir);
  const auto path = dir / "runs.yaml";
  const std::string head =
      "candidates:\n  gpus: [h200-sxm]\n  counts: [8, 16]\n  mig: false\n"
      "runs:\n  - name: fixed\n    model: llama-3.1-70b\n    method: full\n"
      "    seq: 4096\n    global_batch: 64\n    tokens: 1e8\n";
  std::ofstream(path) << head << "    tp: 8\n    pp: 2\n";
  const auto r = test::run_cli({"plan", path.string(), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& rec = j["runs"][0]["recommendation"];
  ASSERT_TRUE(rec["feasible"].get<bool>()) << rec.dump();
  EXPECT_EQ(rec["layout"]["tp"], 8);
  EXPECT_EQ(rec["layout"]["pp"], 2);
  EXPECT_EQ(rec["count"], 16);  // the only count that holds a tp 8 × pp 2 replica
  std::ofstream(path) << head << "    pp: 3\n";
  const auto bad = test::run_cli({"plan", path.string()});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("runs[0].pp"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("80 layers do not divide into 3"), std::string::npos) << bad.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ftplan
