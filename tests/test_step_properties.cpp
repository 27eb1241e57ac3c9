// Properties of the operation model and the step-time estimate: monotonicity, the FLOP formulas
// it must agree with, frozen vs trained weights, and the two-card ratios.
#include <gtest/gtest.h>

#include <iostream>
#include <numeric>
#include <set>

#include "memory/model_states.hpp"
#include "perf/step.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

const EfficiencyTable& defaults() {
  return test::roofline_efficiency();
}

Device device(const std::string& id) {
  return make_device(test::catalog().gpu(id));
}

Workload run(const std::string& model, Method m, std::int64_t seq = 2048,
             Recompute r = Recompute::kFull) {
  Workload w = test::workload(model, m);
  w.seq = seq;
  w.recompute = r;
  return w;
}

StepEstimate step_on(const Workload& w, const std::string& gpu) {
  return estimate_step(build_step_ops(w), device(gpu), defaults());
}

const Op* find(const StepOps& ops, const std::string& name) {
  for (const auto& op : ops.ops)
    if (op.name == name) return &op;
  return nullptr;
}

StepOps only(const StepOps& all, bool (*keep)(const Op&)) {
  StepOps out = all;
  out.ops.clear();
  for (const auto& op : all.ops)
    if (keep(op)) out.ops.push_back(op);
  return out;
}

TEST(StepProperties, MoreTokensGiveHigherGemmIntensity) {
  double previous = 0;
  for (double m : {1.0, 16.0, 128.0, 512.0, 2048.0, 8192.0, 65536.0}) {
    const GemmCost c = gemm_cost({m, 14336, 4096}, 2);
    const double i = intensity(c.flops, c.bytes);
    EXPECT_GT(i, previous) << m;
    previous = i;
  }
  // And in the op model: the up-projection at longer sequences and larger micro-batches.
  previous = 0;
  for (std::int64_t seq : {256, 1024, 4096, 16384}) {
    const StepOps ops = build_step_ops(run("llama-3.1-8b", Method::kLora, seq));
    const double i = find(ops, "mlp.up_proj.fwd")->intensity();
    EXPECT_GT(i, previous) << seq;
    previous = i;
  }
}

TEST(StepProperties, LoraStepIsShorterThanFullStep) {
  for (const char* gpu : {"h200-nvl", "rtx-pro-6000", "b200"}) {
    const StepEstimate lora = step_on(run("llama-3.1-8b", Method::kLora), gpu);
    const StepEstimate full = step_on(run("llama-3.1-8b", Method::kFull), gpu);
    EXPECT_LT(lora.step, full.step) << gpu;
    // No weight gradients for the frozen base, and a tiny optimizer update.
    EXPECT_LT(lora.of(OpClass::kOptimizer), full.of(OpClass::kOptimizer) / 100) << gpu;
  }
}

TEST(StepProperties, QloraAddsDequantizationThatScalesWithBandwidth) {
  const Workload lora = run("llama-3.1-8b", Method::kLora);
  const Workload qlora = run("llama-3.1-8b", Method::kQlora);
  const StepEstimate lh = step_on(lora, "h200-nvl"), qh = step_on(qlora, "h200-nvl");
  const StepEstimate lr = step_on(lora, "rtx-pro-6000"), qr = step_on(qlora, "rtx-pro-6000");
  // QLoRA = LoRA + the dequantizations (its GEMMs run in BF16 like LoRA's).
  EXPECT_NEAR((qh.step - lh.step).value, qh.of(OpClass::kDequant).value, 1e-12);
  EXPECT_NEAR((qr.step - lr.step).value, qr.of(OpClass::kDequant).value, 1e-12);
  EXPECT_GT(qh.of(OpClass::kDequant).value, 0);
  // Memory-bound: the dequantization time scales with 1 / bandwidth.
  EXPECT_NEAR(qr.of(OpClass::kDequant) / qh.of(OpClass::kDequant), 4800.0 / 1792.0, 1e-9);
  Device half = device("h200-nvl");
  half.bandwidth = half.bandwidth / 2;
  const StepEstimate qhalf = estimate_step(build_step_ops(qlora), half, defaults());
  EXPECT_NEAR(qhalf.of(OpClass::kDequant) / qh.of(OpClass::kDequant), 2.0, 1e-9);
}

TEST(StepProperties, AllComputeBoundWorkloadRatioIsTheTensorRateRatio) {
  const StepOps gemms = only(build_step_ops(run("llama-3.1-8b", Method::kLora)),
                             [](const Op& op) { return op.op_class == OpClass::kGemm; });
  const StepComparison c =
      compare_steps(gemms, device("h200-nvl"), defaults(), device("rtx-pro-6000"), defaults());
  EXPECT_DOUBLE_EQ(c.compute_bound_share_a, 1.0);
  EXPECT_NEAR(c.overall, 835.5 / 503.8, 1e-12);
  EXPECT_NEAR(c.overall, c.tensor_rate_ratio, 1e-12);
}

TEST(StepProperties, AllMemoryBoundWorkloadRatioIsTheBandwidthRatio) {
  const StepOps memory_ops =
      only(build_step_ops(run("llama-3.1-8b", Method::kQlora)), [](const Op& op) {
        return op.unit == ComputeUnit::kVector || op.op_class == OpClass::kAdapter;
      });
  const StepComparison c =
      compare_steps(memory_ops, device("h200-nvl"), defaults(), device("rtx-pro-6000"), defaults());
  EXPECT_DOUBLE_EQ(c.compute_bound_share_a, 0.0);
  EXPECT_NEAR(c.overall, 4800.0 / 1792.0, 1e-12);
  EXPECT_NEAR(c.overall, c.bandwidth_ratio, 1e-12);
}

TEST(StepProperties, RealStepRatioLiesBetweenTensorRateAndBandwidthRatios) {
  for (Method m : {Method::kFull, Method::kLora, Method::kQlora}) {
    const StepOps ops = build_step_ops(run("llama-3.1-8b", m));
    const StepComparison c =
        compare_steps(ops, device("h200-nvl"), defaults(), device("rtx-pro-6000"), defaults());
    EXPECT_GT(c.overall, c.tensor_rate_ratio) << method_name(m);
    EXPECT_LT(c.overall, c.bandwidth_ratio) << method_name(m);
    // It is the time-weighted mean of the compute-bound and memory-bound parts.
    const double s = c.compute_bound_share_a;
    EXPECT_NEAR(c.overall, s * c.compute_bound_ratio + (1 - s) * c.memory_bound_ratio, 1e-9);
  }
}

TEST(StepProperties, DenseFullFineTuneFlopsAre6NTokensPlusAttention) {
  const Workload w = run("llama-3.1-8b", Method::kFull, 2048, Recompute::kNone);
  const StepOps ops = build_step_ops(w);
  const ModelArch& a = w.model->arch;
  const double T = 2048;
  const double n_active = static_cast<double>(w.model->params.active_per_token);
  // Narayanan et al. 2021: forward 2N + backward 4N per token; attention QKᵀ and P·V 4·d FLOPs
  // per (query, key) pair and head in the forward pass, 2.5× that in the backward.
  const double attention =
      3.5 * 4 * static_cast<double>(a.head_dim * a.heads * a.layers) * causal_pairs(2048, 0);
  const double formula = 6 * n_active * T + attention;
  EXPECT_NEAR(ops.micro_batch_flops().value / formula, 1.0, 0.002);
  // Model FLOPs are exactly the 6·N_active·tokens (norm weights aside: < 0.01 %).
  EXPECT_NEAR(ops.model_flops_per_micro_batch().value / (6 * n_active * T), 1.0, 1e-4);
}

TEST(StepProperties, MoeModelFlopsFollowActiveParameters) {
  const Workload w = run("qwen3-30b-a3b", Method::kFull, 2048, Recompute::kNone);
  const StepOps ops = build_step_ops(w);
  const double n_active = static_cast<double>(w.model->params.active_per_token);
  EXPECT_NEAR(ops.model_flops_per_micro_batch().value / (6 * n_active * 2048), 1.0, 1e-4);
  // Each expert sees T·k/E tokens; the router is one GEMM over all tokens.
  const ModelArch& a = w.model->arch;
  const Op* expert = find(ops, "moe.expert.gate_proj.fwd");
  ASSERT_NE(expert, nullptr);
  EXPECT_DOUBLE_EQ(expert->gemm.m, 2048.0 * static_cast<double>(a.experts_per_token) /
                                       static_cast<double>(a.num_experts));
  EXPECT_EQ(expert->count, a.moe_layers * a.num_experts);
  ASSERT_NE(find(ops, "moe.router.fwd"), nullptr);
  EXPECT_EQ(find(ops, "moe.router.fwd")->gemm.n, a.num_experts);
}

TEST(StepProperties, LoraModelFlopsAreForwardInputGradientAndAdapters) {
  const Workload w = run("llama-3.1-8b", Method::kLora, 2048, Recompute::kNone);
  const StepOps ops = build_step_ops(w);
  const double T = 2048;
  const double n_active = static_cast<double>(w.model->params.active_per_token);
  const double adapters = static_cast<double>(trainable_params(w).count);
  // 4·N per token for the frozen base (no weight gradient) + 6 per adapter parameter.
  EXPECT_NEAR(ops.model_flops_per_micro_batch().value / (4 * n_active * T + 6 * adapters * T), 1.0,
              1e-4);
}

TEST(StepProperties, FrozenWeightsGetInputGradientsButNoWeightGradients) {
  auto names = [](const StepOps& ops) {
    std::set<std::string> s;
    for (const auto& op : ops.ops)
      s.insert(op.name);
    return s;
  };
  const auto lora = names(build_step_ops(run("llama-3.1-8b", Method::kLora)));
  const auto full = names(build_step_ops(run("llama-3.1-8b", Method::kFull)));
  for (const char* base : {"attn.q_proj", "attn.k_proj", "attn.v_proj", "attn.o_proj",
                           "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "lm_head"}) {
    const std::string b = base;
    EXPECT_TRUE(lora.count(b + ".dgrad")) << b;
    EXPECT_FALSE(lora.count(b + ".wgrad")) << b;
    EXPECT_TRUE(full.count(b + ".dgrad")) << b;
    EXPECT_TRUE(full.count(b + ".wgrad")) << b;
  }
  // Both adapter matrices get both gradients.
  for (const char* g : {".lora_a.wgrad", ".lora_a.dgrad", ".lora_b.wgrad", ".lora_b.dgrad"})
    EXPECT_TRUE(lora.count(std::string("mlp.down_proj") + g)) << g;
  EXPECT_FALSE(lora.count("embedding.wgrad"));
  EXPECT_TRUE(full.count("embedding.wgrad"));
}

TEST(StepProperties, ArchitectureVariantsShapeTheGemms) {
  // GQA: k and v project to n_kv · d.
  const StepOps llama = build_step_ops(run("llama-3.1-8b", Method::kLora));
  EXPECT_EQ(find(llama, "attn.k_proj.fwd")->gemm.n, 8 * 128);
  // Qwen-style biases ride in the GEMM epilogue: 2·M·N·K + M·N.
  const StepOps qwen = build_step_ops(run("qwen2.5-7b", Method::kLora));
  const Op* q = find(qwen, "attn.q_proj.fwd");
  EXPECT_DOUBLE_EQ(q->flops.value, 2 * q->gemm.m * q->gemm.n * q->gemm.k + q->gemm.m * q->gemm.n);
  // Phi: one fused qkv projection of q + 2·kv outputs.
  const Workload phi = run("phi-4", Method::kFull);
  const StepOps phi_ops = build_step_ops(phi);
  const Op* qkv = find(phi_ops, "attn.qkv_proj.fwd");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->gemm.n, phi.model->arch.q_dim() + 2 * phi.model->arch.kv_dim());
  // Tied embeddings: the output layer multiplies by the embedding matrix.
  const StepOps tied = build_step_ops(run("llama-3.2-1b", Method::kFull));
  EXPECT_NE(find(tied, "lm_head.fwd"), nullptr);
  EXPECT_NE(find(tied, "lm_head.wgrad"), nullptr);
}

TEST(StepProperties, SlidingWindowLimitsTheAttendedSpan) {
  EXPECT_EQ(causal_pairs(10, 0), 55);
  EXPECT_EQ(causal_pairs(10, 4), 1 + 2 + 3 + 4 * 7);
  EXPECT_EQ(causal_pairs(4, 10), 10);
  const Workload w = run("gemma-3-12b", Method::kLora, 8192);
  const ModelArch& a = w.model->arch;
  ASSERT_GT(a.sliding_layers, 0);
  ASSERT_LT(a.sliding_window, 8192);
  const StepOps ops = build_step_ops(w);
  const Op* full = find(ops, "attention.core.fwd");
  const Op* sliding = find(ops, "attention.sliding.fwd");
  ASSERT_NE(full, nullptr);
  ASSERT_NE(sliding, nullptr);
  EXPECT_EQ(sliding->count, a.sliding_layers);
  EXPECT_EQ(full->count, a.layers - a.sliding_layers);
  EXPECT_NEAR(sliding->flops / full->flops,
              causal_pairs(8192, a.sliding_window) / causal_pairs(8192, 0), 1e-12);
}

TEST(StepProperties, FlashAttentionMovesNoScoresEagerDoes) {
  auto attention_bytes = [](Attention kind, std::int64_t seq) {
    Workload w = run("llama-3.1-8b", Method::kLora, seq);
    w.attention = kind;
    return find(build_step_ops(w), "attention.core.fwd")->bytes.value;
  };
  // FlashAttention: Q, K, V, O and the row statistics only, linear in the sequence.
  EXPECT_NEAR(attention_bytes(Attention::kFlash, 4096) / attention_bytes(Attention::kFlash, 2048),
              2.0, 1e-12);
  // Eager: the s² score matrix dominates, close to 4× for twice the tokens.
  const double eager =
      attention_bytes(Attention::kEager, 4096) / attention_bytes(Attention::kEager, 2048);
  EXPECT_GT(eager, 3.5);
  EXPECT_GT(attention_bytes(Attention::kEager, 2048),
            10 * attention_bytes(Attention::kFlash, 2048));
  const StepEstimate flash = step_on(run("llama-3.1-8b", Method::kLora), "h200-nvl");
  Workload we = run("llama-3.1-8b", Method::kLora);
  we.attention = Attention::kEager;
  EXPECT_GT(step_on(we, "h200-nvl").of(OpClass::kAttention), flash.of(OpClass::kAttention));
}

TEST(StepProperties, RecomputationCostsForwardWork) {
  const StepEstimate none =
      step_on(run("llama-3.1-8b", Method::kLora, 2048, Recompute::kNone), "h200-nvl");
  const StepEstimate sel =
      step_on(run("llama-3.1-8b", Method::kLora, 2048, Recompute::kSelective), "h200-nvl");
  const StepEstimate full =
      step_on(run("llama-3.1-8b", Method::kLora, 2048, Recompute::kFull), "h200-nvl");
  EXPECT_EQ(none.recompute.value, 0);
  EXPECT_LT(none.step, sel.step);
  EXPECT_LT(sel.step, full.step);
  // Full recomputation re-runs every block's forward: less than one whole forward pass (the
  // embedding, output layer and loss are not recomputed), more than 90 % of it for the 8B.
  EXPECT_LT(full.recompute, full.forward);
  EXPECT_GT(full.recompute / full.forward, 0.9);
  // Recomputation adds hardware FLOPs, never model FLOPs.
  EXPECT_DOUBLE_EQ(none.model_flops.value, full.model_flops.value);
  EXPECT_GT(full.hardware_flops, none.hardware_flops);
  EXPECT_GT(none.mfu, full.mfu);
}

TEST(StepProperties, GradientAccumulationRepeatsTheMicroBatchOnly) {
  Workload w = run("llama-3.1-8b", Method::kFull);
  const StepEstimate one = step_on(w, "h200-nvl");
  w.grad_accum = 4;
  const StepEstimate four = step_on(w, "h200-nvl");
  EXPECT_NEAR(four.step.value, 4 * one.micro_batch.value + one.optimizer.value, 1e-12);
  EXPECT_NEAR(four.optimizer.value, one.optimizer.value, 1e-15);
  EXPECT_EQ(four.tokens, 4 * 2048);
  EXPECT_GT(four.tokens_per_second, one.tokens_per_second);  // the update is amortised
}

TEST(StepProperties, StepSumsAreConsistent) {
  const StepEstimate s = step_on(run("llama-3.1-8b", Method::kQlora), "rtx-pro-6000");
  ASSERT_TRUE(s.feasible);
  Seconds classes, phases;
  for (auto t : s.class_seconds)
    classes += t;
  for (auto t : s.phase_seconds)
    phases += t;
  EXPECT_NEAR(classes.value, s.step.value, 1e-12);
  EXPECT_NEAR(phases.value, s.step.value, 1e-12);
  EXPECT_NEAR((s.compute_bound_seconds + s.memory_bound_seconds).value, s.step.value, 1e-12);
  EXPECT_NEAR(s.tokens_per_second, 2048 / s.step.value, 1e-9);
  EXPECT_GT(s.mfu, 0.05);
  EXPECT_LT(s.mfu, 0.8);
  // The comm model's view: per-layer compute times.
  EXPECT_EQ(s.layers, 32);
  EXPECT_NEAR(s.forward_per_layer().value * 32, s.forward.value, 1e-12);
}

TEST(StepProperties, Fp8HalvesTheBlockGemmTimeAndAddsCasts) {
  Workload w = run("llama-3.1-8b", Method::kFull);
  const StepEstimate bf16 = step_on(w, "h200-nvl");
  w.precision = ComputeFormat::kFP8;
  const StepOps ops = build_step_ops(w);
  EXPECT_EQ(find(ops, "mlp.up_proj.fwd")->precision, TensorPrecision::kFP8);
  EXPECT_EQ(find(ops, "lm_head.fwd")->precision, TensorPrecision::kBF16);
  EXPECT_NE(find(ops, "mlp.up_proj.fp8_cast.fwd"), nullptr);
  const StepEstimate fp8 = estimate_step(ops, device("h200-nvl"), defaults());
  EXPECT_LT(fp8.of(OpClass::kGemm), bf16.of(OpClass::kGemm) * 0.6);
  EXPECT_GT(fp8.of(OpClass::kElementwise), bf16.of(OpClass::kElementwise));
  EXPECT_EQ(to_TFLOPS(fp8.peak), 1670.5);  // MFU against the FP8 peak
}

TEST(StepProperties, MigInstanceScalesRatesAndBandwidthBySlices) {
  const GpuSpec& g = test::catalog().gpu("h200-nvl");
  const Device whole = make_device(g);
  const Device one = make_device(g, *g.mig.find("1g.18gb"));
  EXPECT_NEAR(one.rate(TensorPrecision::kBF16)->value,
              whole.rate(TensorPrecision::kBF16)->value / 7, 1);
  EXPECT_NEAR(one.bandwidth.value, whole.bandwidth.value / 8, 1);
  EXPECT_NE(one.assumption.find("compute slices"), std::string::npos);
  const StepOps ops = build_step_ops(run("llama-3.1-8b", Method::kQlora));
  const StepEstimate a = estimate_step(ops, whole, defaults());
  const StepEstimate b = estimate_step(ops, one, defaults());
  EXPECT_GT(b.step / a.step, 7.0);
  EXPECT_LT(b.step / a.step, 8.0 + 1e-9);
}

TEST(StepProperties, CalibrationWithHalfGemmEfficiencyDoublesGemmTime) {
  const std::string path =
      std::string(FTPLAN_SOURCE_DIR) + "/tests/cases/calibration/h200-half-gemm.yaml";
  cli::Context ctx(std::cout, std::cerr);
  const std::string text = ctx.read_file(path, "calibration");
  EfficiencyTable cal = parse_efficiency({path, text, {}}, test::catalog().sources());
  inherit_host_and_fit(cal, defaults());
  EXPECT_TRUE(cal.is_calibration());
  EXPECT_EQ(cal.card(), "h200-nvl");
  const StepOps ops = build_step_ops(run("llama-3.1-8b", Method::kLora));
  const StepEstimate d = estimate_step(ops, device("h200-nvl"), defaults());
  const StepEstimate c = estimate_step(ops, device("h200-nvl"), cal);
  EXPECT_NEAR(c.of(OpClass::kGemm) / d.of(OpClass::kGemm), 2.0, 1e-9);
  for (auto cls : {OpClass::kAttention, OpClass::kAdapter, OpClass::kElementwise})
    EXPECT_DOUBLE_EQ(c.of(cls).value, d.of(cls).value) << op_class_name(cls);
}

TEST(StepProperties, TraceRecordsTheHeadlineDerivations) {
  const StepOps ops = build_step_ops(run("llama-3.1-8b", Method::kLora));
  const Device d = device("h200-nvl");
  const StepEstimate s = estimate_step(ops, d, defaults());
  Trace trace;
  trace_step(ops, d, defaults(), s, trace);
  ASSERT_NE(trace.find("perf.mfu"), nullptr);
  EXPECT_EQ(trace.find("perf.mfu")->value, s.mfu);
  EXPECT_EQ(trace.find("perf.step_seconds")->value, s.step.value);
  EXPECT_NEAR(trace.find("perf.ops_per_byte")->value, 835.5 / 4.8, 1e-9);
  EXPECT_NE(trace.find("perf.model_flops")->formula.find("6·N_active"), std::string::npos);
}

TEST(StepProperties, DefaultEfficienciesByCallSize) {
  const EfficiencyTable& e = defaults();
  EXPECT_EQ(e.compute(OpClass::kGemm, Flops(240e9)), 0.78);  // the 8B up-projection
  EXPECT_EQ(e.compute(OpClass::kGemm, Flops(68e9)), 0.74);
  EXPECT_EQ(e.compute(OpClass::kGemm, Flops(0.27e9)), 0.08);  // a rank-16 adapter product
  EXPECT_EQ(e.memory(OpClass::kNorm, Bytes(200e6)), 0.90);
  EXPECT_EQ(e.memory(OpClass::kNorm, Bytes(0.5e6)), 0.30);
  EXPECT_EQ(e.compute(OpClass::kAttention, Flops(1e12)), 0.50);
  for (auto c : kAllOpClasses)
    for (double size : {1e-3, 1.0, 1e3, 1e6}) {
      EXPECT_GT(e.of(c).compute.at(size), 0);
      EXPECT_LE(e.of(c).compute.at(size), 1);
      EXPECT_GT(e.of(c).memory.at(size), 0);
      EXPECT_LE(e.of(c).memory.at(size), 1);
    }
}

// Attention runs FlashAttention-2 under both flash and SDPA; on Hopper it is timed at that
// kernel's published H100 utilisation (below the curve), elsewhere at the curve; eager attention
// keeps the curve everywhere.
TEST(StepProperties, AttentionTimedAsItsKernelOnTheArchitecture) {
  for (Attention kind : {Attention::kFlash, Attention::kSdpa, Attention::kEager}) {
    Workload w = run("llama-3.1-8b", Method::kLora, 8192);
    w.attention = kind;
    const StepOps ops = build_step_ops(w);
    const Op* fwd = find(ops, "attention.core.fwd");
    const Op* bwd = find(ops, "attention.core.bwd");
    ASSERT_TRUE(fwd && bwd);
    const double curve_fwd = defaults().compute(OpClass::kAttention, fwd->flops);
    const double curve_bwd = defaults().compute(OpClass::kAttention, bwd->flops);
    const double h_fwd = time_op(*fwd, device("h100-sxm"), defaults()).compute_efficiency;
    const double h_bwd = time_op(*bwd, device("h100-sxm"), defaults()).compute_efficiency;
    const double a_fwd = time_op(*fwd, device("a100-80gb-sxm"), defaults()).compute_efficiency;
    EXPECT_DOUBLE_EQ(a_fwd, curve_fwd);
    if (kind == Attention::kEager) {
      EXPECT_EQ(fwd->kernel, AttentionKernel::kNone);
      EXPECT_DOUBLE_EQ(h_fwd, curve_fwd);
      EXPECT_DOUBLE_EQ(h_bwd, curve_bwd);
    } else {
      EXPECT_EQ(fwd->kernel, AttentionKernel::kFlash2);
      EXPECT_NEAR(h_fwd, 0.34, 0.03);
      EXPECT_NEAR(h_bwd, 0.32, 0.03);
      EXPECT_LT(h_fwd, curve_fwd);
      // The prepared step times it the same way: slower on the H100 than with the curve alone.
      EfficiencyTable curve_only = defaults();
      curve_only.attention_kernels.clear();
      EXPECT_GT(estimate_step(ops, device("h100-sxm"), defaults()).backward.value,
                estimate_step(ops, device("h100-sxm"), curve_only).backward.value);
      EXPECT_DOUBLE_EQ(estimate_step(ops, device("a100-80gb-sxm"), defaults()).step.value,
                       estimate_step(ops, device("a100-80gb-sxm"), curve_only).step.value);
    }
  }
}

}  // namespace
}  // namespace ftplan
