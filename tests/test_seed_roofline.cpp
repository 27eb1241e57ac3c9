// Roofline and tensor-rate figures R2–R9 and T1–T8 of shared/spec/SEED-FIGURES.md, computed
// through the public API from the catalog data and asserted to the precision the article prints.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "perf/step.hpp"
#include "render/reason_words.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using test::printed;

const Device& device(const std::string& id) {
  static std::map<std::string, Device> cache;
  auto it = cache.find(id);
  if (it == cache.end()) it = cache.emplace(id, make_device(test::catalog().gpu(id))).first;
  return it->second;
}

const EfficiencyTable& defaults() {
  return test::roofline_efficiency();
}

const TrainingFormats& formats() {
  static const TrainingFormats f = load_training_formats(test::catalog());
  return f;
}

double tflops(const std::string& gpu, TensorPrecision p) {
  return to_TFLOPS(*device(gpu).rate(p));
}

const Op& find_op(const StepOps& ops, const std::string& name) {
  for (const auto& op : ops.ops)
    if (op.name == name) return op;
  ADD_FAILURE() << "no op " << name;
  return ops.ops.front();
}

StepOps lora_8b_ops(Method m = Method::kLora) {
  return build_step_ops(test::workload("llama-3.1-8b", m));
}

// ---- roofline ----------------------------------------------------------------------------------

TEST(SeedRoofline, R2_NvidiaLinearLayerExample_315_And_1_FlopPerByte) {
  // NVIDIA GPU Performance Background: 1024 inputs, 4096 outputs, FP16, batch 512 and batch 1.
  const GemmCost batch512 = gemm_cost({512, 4096, 1024}, 2);
  const GemmCost batch1 = gemm_cost({1, 4096, 1024}, 2);
  EXPECT_EQ(printed(intensity(batch512.flops, batch512.bytes), 0), 315);
  EXPECT_EQ(printed(intensity(batch1.flops, batch1.bytes), 0), 1);
  // Batch 512 is compute-bound on the H200 NVL, batch 1 memory-bound (seed's verdicts).
  const double opb = *device("h200-nvl").ops_per_byte(TensorPrecision::kFP16);
  EXPECT_GT(intensity(batch512.flops, batch512.bytes), opb);
  EXPECT_LT(intensity(batch1.flops, batch1.bytes), opb);
}

TEST(SeedRoofline, R3_Llama8B_UpProjection_At_2048_Tokens_About_1250_FlopPerByte) {
  const GemmCost up = gemm_cost({2048, 14336, 4096}, 2);
  EXPECT_EQ(printed(intensity(up.flops, up.bytes), 1), 1246.6);
  EXPECT_NEAR(intensity(up.flops, up.bytes), 1250, 5);  // "etwa 1.250"
  // The op model gives the same GEMM for the 8B up-projection of a 2048-token micro-batch.
  const StepOps ops = lora_8b_ops();
  const Op& op = find_op(ops, "mlp.up_proj.fwd");
  EXPECT_EQ(op.gemm.m, 2048);
  EXPECT_EQ(op.gemm.n, 14336);
  EXPECT_EQ(op.gemm.k, 4096);
  EXPECT_EQ(printed(op.intensity(), 1), 1246.6);
}

TEST(SeedRoofline, R4_OpsPerByte_H200Nvl_174) {
  EXPECT_EQ(printed(*device("h200-nvl").ops_per_byte(TensorPrecision::kBF16), 0), 174);
}

TEST(SeedRoofline, R5_OpsPerByte_RtxPro6000Workstation_281) {
  EXPECT_EQ(printed(*device("rtx-pro-6000").ops_per_byte(TensorPrecision::kBF16), 0), 281);
}

TEST(SeedRoofline, R6_BigGemmsComputeBoundOnBoth_RatioIsTensorRate_1_66_Not_2_7) {
  const StepOps ops = lora_8b_ops();
  const Op& up = find_op(ops, "mlp.up_proj.fwd");
  const OpTiming h = time_op(up, device("h200-nvl"), defaults());
  const OpTiming r = time_op(up, device("rtx-pro-6000"), defaults());
  EXPECT_TRUE(h.compute_bound());
  EXPECT_TRUE(r.compute_bound());
  EXPECT_GT(up.intensity(), *device("rtx-pro-6000").ops_per_byte(TensorPrecision::kBF16));
  EXPECT_EQ(printed(r.time() / h.time(), 2), 1.66);
  // Every base GEMM of the step (all compute-bound) gets the tensor-rate ratio, not 2.7.
  const StepComparison c =
      compare_steps(ops, device("h200-nvl"), defaults(), device("rtx-pro-6000"), defaults());
  EXPECT_EQ(printed(c.class_ratio[static_cast<std::size_t>(OpClass::kGemm)], 2), 1.66);
}

TEST(SeedRoofline, R7_Rank16AdapterGemm_About_16_FlopPerByte) {
  // x[2048×4096] · A[4096×16]
  const GemmCost a = gemm_cost({2048, 16, 4096}, 2);
  EXPECT_EQ(printed(intensity(a.flops, a.bytes), 1), 15.8);
  const StepOps ops = lora_8b_ops();
  const Op& op = find_op(ops, "attn.q_proj.lora_a.fwd");
  EXPECT_EQ(printed(op.intensity(), 1), 15.8);
  EXPECT_FALSE(time_op(op, device("h200-nvl"), defaults()).compute_bound());
  EXPECT_FALSE(time_op(op, device("rtx-pro-6000"), defaults()).compute_bound());
}

TEST(SeedRoofline, R8_MemoryBoundParts_GoByBandwidth_2_7_And_3_0) {
  // Activations, norms, optimizer step, adapters, NF4 dequantization: the 8B QLoRA step has all.
  const StepOps ops = lora_8b_ops(Method::kQlora);
  const StepComparison ws =
      compare_steps(ops, device("h200-nvl"), defaults(), device("rtx-pro-6000"), defaults());
  for (auto cls : {OpClass::kElementwise, OpClass::kNorm, OpClass::kOptimizer, OpClass::kAdapter,
                   OpClass::kDequant}) {
    const double r = ws.class_ratio[static_cast<std::size_t>(cls)];
    EXPECT_EQ(printed(r, 1), 2.7) << op_class_name(cls);
    EXPECT_NEAR(r, 4800.0 / 1792.0, 1e-9) << op_class_name(cls);
  }
  // The Server Edition has no published dense rate, but its memory-bound CUDA-core work can be
  // timed: 3.0× slower than on the H200 NVL.
  const Device& server = device("rtx-pro-6000-server");
  int checked = 0;
  for (const auto& op : ops.ops) {
    if (op.unit != ComputeUnit::kVector) continue;
    const OpTiming h = time_op(op, device("h200-nvl"), defaults());
    const OpTiming s = time_op(op, server, defaults());
    ASSERT_FALSE(h.compute_bound()) << op.name;
    EXPECT_EQ(printed(s.time() / h.time(), 1), 3.0) << op.name;
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

TEST(SeedRoofline, R9_Bandwidths_4800_1792_1597_GBps) {
  EXPECT_EQ(to_GBps(device("h200-nvl").bandwidth), 4800);
  EXPECT_EQ(to_GBps(device("rtx-pro-6000").bandwidth), 1792);
  EXPECT_EQ(to_GBps(device("rtx-pro-6000-server").bandwidth), 1597);
  EXPECT_EQ(printed(4800.0 / to_GBps(device("rtx-pro-6000").bandwidth), 1), 2.7);
  EXPECT_EQ(printed(4800.0 / to_GBps(device("rtx-pro-6000-server").bandwidth), 1), 3.0);
}

// ---- tensor rates
// --------------------------------------------------------------------------------

TEST(SeedTensorRates, T1_H200Nvl_Dense_Bf16_835_5_Fp8_1670_5) {
  EXPECT_EQ(tflops("h200-nvl", TensorPrecision::kBF16), 835.5);
  EXPECT_EQ(tflops("h200-nvl", TensorPrecision::kFP8), 1670.5);
  // Both are the vendor's sparse rates halved.
  const GpuSpec& g = test::catalog().gpu("h200-nvl");
  EXPECT_TRUE(g.tensor_figure(TensorPrecision::kBF16).sparse_halved);
  EXPECT_TRUE(g.tensor_figure(TensorPrecision::kFP8).sparse_halved);
}

TEST(SeedTensorRates, T2_RtxPro6000Workstation_Dense_Bf16_503_8_Fp8_1007_6_Fp32Accumulate) {
  EXPECT_EQ(tflops("rtx-pro-6000", TensorPrecision::kBF16), 503.8);
  EXPECT_EQ(tflops("rtx-pro-6000", TensorPrecision::kFP8), 1007.6);
  const GpuSpec& g = test::catalog().gpu("rtx-pro-6000");
  EXPECT_EQ(g.tensor_figure(TensorPrecision::kBF16).accumulate, "fp32");
  EXPECT_EQ(*g.boost_clock_MHz.value, 2617);
}

TEST(SeedTensorRates, T3_H200NvlOverWorkstation_1_66_InBf16AndFp8) {
  EXPECT_EQ(printed(tflops("h200-nvl", TensorPrecision::kBF16) /
                        tflops("rtx-pro-6000", TensorPrecision::kBF16),
                    2),
            1.66);
  EXPECT_EQ(printed(tflops("h200-nvl", TensorPrecision::kFP8) /
                        tflops("rtx-pro-6000", TensorPrecision::kFP8),
                    2),
            1.66);
}

TEST(SeedTensorRates, T4_MaxQ_Bf16_438_9_H200NvlOverIt_1_90) {
  EXPECT_EQ(tflops("rtx-pro-6000-maxq", TensorPrecision::kBF16), 438.9);
  EXPECT_EQ(printed(tflops("h200-nvl", TensorPrecision::kBF16) /
                        tflops("rtx-pro-6000-maxq", TensorPrecision::kBF16),
                    2),
            1.90);
}

TEST(SeedTensorRates, T5_ServerEdition_NoDenseRate_IsADataGap) {
  const Device& server = device("rtx-pro-6000-server");
  EXPECT_FALSE(server.rate(TensorPrecision::kBF16));
  EXPECT_FALSE(server.rate(TensorPrecision::kFP8));
  const std::string why = word_reason(server.missing_rate(TensorPrecision::kBF16));
  EXPECT_NE(why.find("NVIDIA publishes no dense BF16 rate for the RTX PRO 6000 Blackwell Server "
                     "Edition"),
            std::string::npos)
      << why;
  // The timing API reports it as infeasible (for the planner), it does not throw.
  const StepEstimate s = estimate_step(lora_8b_ops(), server, defaults());
  EXPECT_FALSE(s.feasible);
  EXPECT_EQ(word_reason(s.reason), why);
  // The CLI names the gap and exits 2.
  const auto r = test::run_cli(
      {"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "rtx-pro-6000-server"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("NVIDIA publishes no dense BF16 rate for the RTX PRO 6000 Blackwell "
                       "Server Edition"),
            std::string::npos)
      << r.err;
  // compare shows it as unknown, with the reason.
  const auto c = test::run_cli({"compare", "--gpu", "h200-nvl", "--gpu", "rtx-pro-6000-server"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("unknown"), std::string::npos);
  const auto j = nlohmann::json::parse(
      test::run_cli({"compare", "--gpu", "h200-nvl", "--gpu", "rtx-pro-6000-server", "--json"})
          .out);
  for (const auto& row : j["dense_rates"])
    if (row["precision"] == "bf16") {
      EXPECT_TRUE(row["b"]["TFLOPS"].is_null());
      EXPECT_NE(row["b"]["reason"].get<std::string>().find("1 PFLOP"), std::string::npos);
      EXPECT_TRUE(row["ratio"].is_null());
    }
}

TEST(SeedTensorRates, T6_DenseRatesOnly_SparseOnlyLabelled) {
  // Every device rate is the catalog's dense figure, never the vendor's 2:4-sparse rate.
  for (const auto& g : test::catalog().gpus()) {
    const Device d = make_device(g);
    for (auto p : kAllTensorPrecisions) {
      const auto& f = g.tensor_figure(p);
      if (!f.value) continue;
      EXPECT_EQ(to_TFLOPS(*d.rate(p)), *f.value) << g.id << " " << tensor_precision_name(p);
    }
  }
  const auto r = test::run_cli({"compare", "--gpu", "h200-nvl", "--gpu", "rtx-pro-6000"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("835.5*"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2:4"), std::string::npos);
  const auto j = nlohmann::json::parse(
      test::run_cli({"compare", "--gpu", "h200-nvl", "--gpu", "rtx-pro-6000", "--json"}).out);
  for (const auto& row : j["dense_rates"])
    if (row["precision"] == "bf16") {
      EXPECT_EQ(row["a"]["TFLOPS"], 835.5);
      EXPECT_EQ(row["a"]["sparse_halved"], true);
      EXPECT_FALSE(row["b"].contains("sparse_halved"));
    }
}

TEST(SeedTensorRates, T7_QloraDequantizesToBf16ForEveryGemm) {
  const StepOps ops = lora_8b_ops(Method::kQlora);
  std::int64_t base_fwd = 0, base_dgrad = 0, dequant_fwd = 0, dequant_bwd = 0, dequant_rec = 0,
               base_rec = 0;
  auto ends = [](const std::string& s, const std::string& e) {
    return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
  };
  for (const auto& op : ops.ops) {
    if (op.op_class == OpClass::kGemm) {
      EXPECT_EQ(op.precision, TensorPrecision::kBF16) << op.name;
      if (op.name.rfind("lm_head", 0) == 0) continue;  // the output layer stays BF16, unquantized
      if (op.phase == Phase::kForward) base_fwd += op.count;
      if (op.phase == Phase::kRecompute) base_rec += op.count;
      if (ends(op.name, ".dgrad")) base_dgrad += op.count;
    }
    if (op.op_class == OpClass::kDequant) {
      if (op.phase == Phase::kForward) dequant_fwd += op.count;
      if (op.phase == Phase::kBackward) dequant_bwd += op.count;
      if (op.phase == Phase::kRecompute) dequant_rec += op.count;
    }
  }
  EXPECT_EQ(base_fwd, 7 * 32);
  EXPECT_EQ(dequant_fwd, base_fwd);    // one dequantization per use in the forward pass
  EXPECT_EQ(dequant_bwd, base_dgrad);  // and again for the input gradient
  EXPECT_EQ(dequant_rec, base_rec);    // and for the recomputed forward
  // An FP8 or FP4 compute format does not apply to QLoRA.
  Workload w = test::workload("llama-3.1-8b", Method::kQlora);
  w.precision = ComputeFormat::kFP8;
  try {
    build_step_ops(w);
    ADD_FAILURE() << "QLoRA with FP8 accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("QLoRA multiplies in BF16"), std::string::npos);
  }
}

TEST(SeedTensorRates, T8_TrainingFormatSupportMatrix) {
  auto check = [](const std::string& gpu, ComputeFormat f) {
    return formats().check(test::catalog().gpu(gpu), f);
  };
  // FP8 with Transformer Engine: Hopper, Ada, Blackwell; not Ampere.
  for (const char* g : {"h200-nvl", "rtx-pro-6000", "l40s", "rtx-4090", "b200"})
    EXPECT_TRUE(check(g, ComputeFormat::kFP8).supported) << g;
  EXPECT_FALSE(check("l40s", ComputeFormat::kFP8).caveat.empty());  // CUDA/cuBLASLt on Ada
  const FormatSupport a100 = check("a100-80gb-sxm", ComputeFormat::kFP8);
  EXPECT_FALSE(a100.supported);
  EXPECT_NE(a100.reason.find("8.9 or higher"), std::string::npos) << a100.reason;
  // MXFP8 and NVFP4: Blackwell only; the H200 NVL gets neither.
  EXPECT_FALSE(check("h200-nvl", ComputeFormat::kMXFP8).supported);
  EXPECT_FALSE(check("h200-nvl", ComputeFormat::kNVFP4).supported);
  EXPECT_TRUE(check("b200", ComputeFormat::kMXFP8).supported);
  EXPECT_TRUE(check("b200", ComputeFormat::kNVFP4).supported);
  EXPECT_TRUE(check("b300", ComputeFormat::kNVFP4).supported);
  // RTX PRO 6000 (CC 12.0): MXFP8 refused with TE's message, so NVFP4 only.
  for (const char* g : {"rtx-pro-6000", "rtx-pro-6000-server", "rtx-pro-6000-maxq"}) {
    const FormatSupport mx = check(g, ComputeFormat::kMXFP8);
    EXPECT_FALSE(mx.supported) << g;
    EXPECT_NE(mx.reason.find("MXFP8 (for all gemm layouts) is not supported on 12.0+ "
                             "architectures yet."),
              std::string::npos)
        << mx.reason;
    const FormatSupport nv = check(g, ComputeFormat::kNVFP4);
    EXPECT_TRUE(nv.supported) << g;
    EXPECT_NE(nv.caveat.find("TE 2.19"), std::string::npos);
    EXPECT_NE(nv.caveat.find("stochastic rounding"), std::string::npos);
  }
  // The CLI refuses an unsupported format with exit 2, naming format, card and reason.
  const auto r = test::run_cli({"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                "rtx-pro-6000", "--precision", "mxfp8"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("MXFP8 training is not supported on NVIDIA RTX PRO 6000 Blackwell "
                       "Workstation Edition (compute capability 12.0)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("not supported on 12.0+ architectures yet"), std::string::npos);
}

}  // namespace
}  // namespace ftplan
