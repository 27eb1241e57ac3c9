// The training setup's one home: the optimizer table, the roles per tensor, and the methods and
// optimizers they bring (Lion, Muon, DoRA, QDoRA), with byte counts computed here by hand.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

#include "core/error.hpp"
#include "memory/activations.hpp"
#include "memory/model_states.hpp"
#include "memory/states_on_card.hpp"
#include "perf/efficiency.hpp"
#include "perf/step.hpp"
#include "server/api.hpp"
#include "support.hpp"
#include "workload/roles.hpp"

namespace ftplan {
namespace {

using nlohmann::json;

// Llama 3.1 8B by hand (config.json: hidden 4096, 32 layers, 32 heads, 8 KV heads of 128,
// intermediate 14336, vocabulary 128256, untied embeddings):
// per layer q 4096·4096 + k 1024·4096 + v 1024·4096 + o 4096·4096 + 3 · 14336·4096.
constexpr double kBlockLinear = 32.0 * (2 * 4096.0 * 4096 + 2 * 1024.0 * 4096 + 3 * 14336.0 * 4096);
constexpr double kEmbeddingAndHead = 2 * 128256.0 * 4096;
constexpr double kNorms = 2 * 4096.0 * 32 + 4096;
constexpr double kTotal = kBlockLinear + kEmbeddingAndHead + kNorms;  // 8,030,261,248
// LoRA r16 on all seven projections: r·(in + out) per module and layer.
constexpr double kLoraR16 =
    32.0 * 16 *
    ((4096 + 4096) * 2 + (4096 + 1024) * 2 + (4096 + 14336) * 2 + (14336 + 4096));  // 41,943,040
// DoRA's magnitudes: one per output feature of each adapted module and layer.
constexpr double kMagnitudes = 32.0 * (4096 + 1024 + 1024 + 4096 + 14336 + 14336 + 4096);

ModelStates states(Method m, Optimizer o, bool pure_bf16 = false) {
  Workload w = test::workload("llama-3.1-8b", m, o);
  w.options.pure_bf16 = pure_bf16;
  return model_states(w);
}

double trained_bytes(const ModelStates& s) {
  return (s.trained_weights + s.gradients + s.master_weights + s.optimizer_states).value;
}

const EfficiencyTable& efficiencies() {
  static const EfficiencyTable e = default_efficiency(test::catalog());
  return e;
}

StepEstimate step(const Workload& w) {
  return estimate_step(build_step_ops(w), make_device(test::catalog().gpu("h200-nvl")),
                       efficiencies());
}

TEST(OptimizerTable, EveryOptimizerHasOneRowAndItsNameRoundTrips) {
  std::set<std::string_view> names;
  for (const OptimizerRow& r : optimizer_table()) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_EQ(parse_optimizer(r.name), r.id);
    EXPECT_EQ(&optimizer_row(r.id), &r);
    EXPECT_FALSE(r.basis.empty()) << r.name;
    EXPECT_GE(r.memory_passes, 1) << r.name;
    // A row that hands some parameters to another optimizer names one that treats every one.
    if (r.rule != MatrixRule::kEvery)
      EXPECT_EQ(optimizer_row(r.others).rule, MatrixRule::kEvery) << r.name;
  }
  EXPECT_EQ(optimizer_names().size(), optimizer_table().size());
  try {
    parse_optimizer("lino");
    FAIL() << "an unknown optimizer is accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("lion"), std::string::npos) << e.what();
    EXPECT_EQ(e.field(), "optimizer");
  }
}

TEST(OptimizerTable, LionKeepsOneMomentum) {
  // Full fine-tune: 2 (weight) + 2 (gradient) + 4 (FP32 master) + 4 (momentum) = 12 B.
  const ModelStates s = states(Method::kFull, Optimizer::kLion);
  EXPECT_DOUBLE_EQ(s.total().value, 12 * kTotal);
  EXPECT_DOUBLE_EQ(s.optimizer_states.value, 4 * kTotal);
  // Its momentum follows the parameter dtype: BF16 with no master copy (pure BF16): 2+2+2 = 6 B.
  EXPECT_DOUBLE_EQ(on_card_states(test::workload("llama-3.1-8b", Method::kFull, Optimizer::kLion),
                                  activation_profile(test::workload("llama-3.1-8b", Method::kFull,
                                                                    Optimizer::kLion)),
                                  s, test::on("h200-nvl"))
                       .resident.value,
                   (12 - 2) * kTotal);  // gradients are produced in the backward pass, not resident
  Workload bf16 = test::workload("llama-3.1-8b", Method::kFull, Optimizer::kLion);
  bf16.options.pure_bf16 = true;
  const OnCardStates pure = on_card_states(bf16, activation_profile(bf16), s, test::on("h200-nvl"));
  EXPECT_DOUBLE_EQ(pure.resident.value, (2 + 2) * kTotal);
  // The update: 11 FLOPs per parameter, one fused pass.
  const StepOps ops =
      build_step_ops(test::workload("llama-3.1-8b", Method::kFull, Optimizer::kLion));
  for (const Op& op : ops.ops)
    if (op.name == "optimizer.update") EXPECT_DOUBLE_EQ(op.flops.value, 11 * kTotal);
}

TEST(OptimizerTable, MuonUpdatesHiddenMatricesAndHandsTheRestToAdamW) {
  // Block linear weights: 12 B (one FP32 momentum); embeddings, head and norms: AdamW's 16 B.
  const ModelStates s = states(Method::kFull, Optimizer::kMuon);
  EXPECT_DOUBLE_EQ(s.total().value, 12 * kBlockLinear + 16 * (kEmbeddingAndHead + kNorms));
  EXPECT_DOUBLE_EQ(s.optimizer_states.value, 4 * kBlockLinear + 8 * (kEmbeddingAndHead + kNorms));
  EXPECT_DOUBLE_EQ(s.total().value, 100566892544.0);

  // LoRA adapters are 2-D hidden matrices: all Muon.
  EXPECT_DOUBLE_EQ(trained_bytes(states(Method::kLora, Optimizer::kMuon)), 12 * kLoraR16);
  // DoRA's magnitudes are vectors: AdamW.
  EXPECT_DOUBLE_EQ(trained_bytes(states(Method::kDora, Optimizer::kMuon)),
                   12 * kLoraR16 + 16 * kMagnitudes);
}

TEST(OptimizerTable, MuonOrthogonalisesEachMatrixOnTheTensorCores) {
  // Per Newton-Schulz step of an m x n matrix (m <= n): 4m²n + 2m³ + 3m² + 2mn.
  EXPECT_DOUBLE_EQ(newton_schulz_flops_per_step(4096, 4096),
                   6 * 4096.0 * 4096 * 4096 + 5 * 4096.0 * 4096);
  EXPECT_DOUBLE_EQ(newton_schulz_flops_per_step(14336, 4096),
                   newton_schulz_flops_per_step(4096, 14336));
  const TrainedMatrix k_proj{1024, 4096, 32, true, true};
  EXPECT_DOUBLE_EQ(optimizer_cost(Optimizer::kMuon, k_proj).orthogonalize_flops,
                   5 * 32 * newton_schulz_flops_per_step(1024, 4096));
  const TrainedMatrix embedding{128256, 4096, 1, true, false};
  EXPECT_EQ(optimizer_cost(Optimizer::kMuon, embedding).orthogonalize_flops, 0);

  // The step's optimizer GEMMs: 5 steps x (2m²n + 2m³ + 2m²n) over every block matrix.
  auto gemms = [](double m, double n) { return 4 * m * m * n + 2 * m * m * m; };
  const double expected =
      5 * 32.0 * (2 * gemms(4096, 4096) + 2 * gemms(1024, 4096) + 3 * gemms(4096, 14336));
  const StepOps ops =
      build_step_ops(test::workload("llama-3.1-8b", Method::kFull, Optimizer::kMuon));
  double tensor_flops = 0;
  for (const Op& op : ops.ops)
    if (op.phase == Phase::kOptimizer && op.unit == ComputeUnit::kTensor)
      tensor_flops += op.total_flops().value;
  EXPECT_DOUBLE_EQ(tensor_flops, expected);
  // So its update takes longer than AdamW's on the same card.
  const StepEstimate muon = step(test::workload("llama-3.1-8b", Method::kFull, Optimizer::kMuon));
  const StepEstimate adamw = step(test::workload("llama-3.1-8b", Method::kFull));
  EXPECT_GT(muon.optimizer.value, adamw.optimizer.value);
}

TEST(Roles, EachMethodGivesEachTensorItsRole) {
  for (const std::string& name : method_names()) {
    const Method m = parse_method(name);
    EXPECT_EQ(method_traits(m).method, m);
    EXPECT_FALSE(method_label(m).empty());
  }
  const Workload full = test::workload("llama-3.1-8b", Method::kFull);
  for (const TensorRole& r : trained_set(full).roles)
    EXPECT_TRUE(r.trained()) << r.tensor->name;

  Workload lora = test::workload("llama-3.1-8b", Method::kQlora);
  lora.lora.targets = kProjQ | kProjV;
  const TrainedSet set = trained_set(lora);
  for (const TensorRole& r : set.roles) {
    const TensorSpec& t = *r.tensor;
    EXPECT_FALSE(r.trained()) << t.name;
    EXPECT_EQ(r.quantized(), t.is_block_linear()) << t.name;
    EXPECT_EQ(r.adapted(), t.projections == kProjQ || t.projections == kProjV) << t.name;
  }
  EXPECT_DOUBLE_EQ(static_cast<double>(set.trained_params), 32.0 * 16 * (8192 + 5120));
  EXPECT_DOUBLE_EQ(static_cast<double>(set.frozen_quantized_params), kBlockLinear);
  EXPECT_DOUBLE_EQ(static_cast<double>(set.frozen16_params), kEmbeddingAndHead + kNorms);
}

TEST(Roles, DoraTrainsAMagnitudePerOutputFeature) {
  EXPECT_DOUBLE_EQ(kLoraR16, 41943040.0);
  EXPECT_DOUBLE_EQ(kMagnitudes, 1376256.0);
  const Workload dora = test::workload("llama-3.1-8b", Method::kDora);
  EXPECT_DOUBLE_EQ(static_cast<double>(trainable_params(dora).count), kLoraR16 + kMagnitudes);
  // BF16 base + 16 B per trained parameter (AdamW).
  const ModelStates s = model_states(dora);
  EXPECT_DOUBLE_EQ(s.frozen_weights.value, 2 * kTotal);
  EXPECT_DOUBLE_EQ(s.total().value, 2 * kTotal + 16 * (kLoraR16 + kMagnitudes));
  EXPECT_DOUBLE_EQ(s.total().value, 16753631232.0);
  // QDoRA: QLoRA's NF4 base, DoRA's trained set.
  const ModelStates q = model_states(test::workload("llama-3.1-8b", Method::kQdora));
  const ModelStates ql = model_states(test::workload("llama-3.1-8b", Method::kQlora));
  EXPECT_DOUBLE_EQ(q.frozen_weights.value, ql.frozen_weights.value);
  EXPECT_DOUBLE_EQ(q.quantization_constants.value, ql.quantization_constants.value);
  EXPECT_DOUBLE_EQ(trained_bytes(q), 16 * (kLoraR16 + kMagnitudes));
}

TEST(Roles, DoraKeepsBothOutputsAndBuildsEachWeightForItsNorm) {
  Workload lora = test::workload("llama-3.1-8b", Method::kLora);
  Workload dora = test::workload("llama-3.1-8b", Method::kDora);
  lora.recompute = dora.recompute = Recompute::kNone;
  // Each adapted module keeps its base output and its adapter output (FP32 adapters run under
  // autocast, so 16-bit too), out wide: 32 layers x 43,008 features x 4 B per token.
  const ActivationProfile pl = activation_profile(lora), pd = activation_profile(dora);
  EXPECT_DOUBLE_EQ(pd.saved_all.per_token - pl.saved_all.per_token, 4 * kMagnitudes);
  // The weight-norm buffer: B·A and W + s·B·A of the largest module (gate/up, 14336 x 4096) in
  // FP32.
  EXPECT_DOUBLE_EQ(pd.dequant_buffer.value, 2 * 4 * 14336.0 * 4096);
  EXPECT_EQ(pl.dequant_buffer.value, 0);
  // QDoRA adds the BF16 dequantized weight to it.
  EXPECT_DOUBLE_EQ(
      activation_profile(test::workload("llama-3.1-8b", Method::kQdora)).dequant_buffer.value,
      (2 + 2 * 4) * 14336.0 * 4096);

  // Time: B·A per module and layer in each forward (2·out·in·r FLOPs), and the row norms.
  const StepOps ops = build_step_ops(dora);
  double dora_weight = 0;
  for (const Op& op : ops.ops)
    if (op.name.find(".dora_weight.fwd") != std::string::npos)
      dora_weight += op.total_flops().value;
  EXPECT_DOUBLE_EQ(dora_weight, 2 * 16 * kBlockLinear);
  EXPECT_GT(step(dora).step.value, step(lora).step.value);
  EXPECT_GT(estimate_memory(dora, test::on("h200-nvl")).peak.value,
            estimate_memory(lora, test::on("h200-nvl")).peak.value);
}

TEST(Roles, NewMethodsAndOptimizersWorkInTheCliAndTheApi) {
  auto cli = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "dora", "--optimizer",
                            "muon", "--gpu", "h200-nvl", "--json"});
  ASSERT_EQ(cli.code, 0) << cli.err;
  const json j = json::parse(cli.out);
  EXPECT_EQ(j["params"]["trainable"].get<double>(), kLoraR16 + kMagnitudes);
  EXPECT_EQ(j["method"], "dora");
  EXPECT_EQ(j["optimizer"], "muon");

  server::Request r;
  r.method = "POST";
  r.path = "/api/fit";
  r.content_type = "application/json";
  r.body = R"({"model": "llama-3.1-8b", "method": "dora", "optimizer": "muon", "gpu": "h200-nvl"})";
  const server::Response api = server::handle(r, cli::server_commands());
  ASSERT_EQ(api.status, 200) << api.body;
  EXPECT_EQ(json::parse(api.body), j);

  for (const char* m : {"dora", "qdora"}) {
    auto step_cli = test::run_cli({"step", "--model", "llama-3.1-8b", "--method", m, "--optimizer",
                                   "lion", "--gpu", "rtx-pro-6000"});
    EXPECT_EQ(step_cli.code, 0) << step_cli.err;
    EXPECT_NE(step_cli.out.find("tokens per second"), std::string::npos);
    auto scale_cli = test::run_cli({"scale", "--model", "llama-3.1-8b", "--method", m,
                                    "--optimizer", "muon", "--gpu", "h200-nvl", "--json"});
    EXPECT_EQ(scale_cli.code, 0) << scale_cli.err;
  }
  // The planner takes them from a runs file.
  const std::string runs = ::testing::TempDir() + "dora-muon-runs.yaml";
  {
    std::ofstream f(runs);
    f << "candidates:\n  gpus: [h200-nvl, rtx-pro-6000]\n  counts: [1, 2]\nruns:\n"
         "  - name: dora\n    model: llama-3.1-8b\n    method: qdora\n    optimizer: lion\n"
         "    tokens: 10e6\n"
         "  - name: muon\n    model: llama-3.1-8b\n    method: full\n    optimizer: muon\n"
         "    tokens: 10e6\n";
  }
  auto plan = test::run_cli({"plan", runs, "--json"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("\"qdora\""), std::string::npos);
  EXPECT_NE(plan.out.find("\"muon\""), std::string::npos);

  auto bad =
      test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "droa", "--gpu", "h200-nvl"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("dora"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace ftplan
