// Quantized base formats (data/quant_formats.yaml, --base-quant): bytes per tensor from each
// format's stored layout, computed by hand from the libraries' buffer shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "core/error.hpp"
#include "memory/model_states.hpp"
#include "perf/ops.hpp"
#include "support.hpp"
#include "workload/quant_format.hpp"
#include "workload/stack.hpp"

namespace ftplan {
namespace {

const QuantFormats& formats() {
  static const QuantFormats f = load_quant_formats(test::catalog());
  return f;
}
QuantConfig fmt_of(const std::string& id, int group = -1) {
  return quant_config(formats().find(id), group);
}

TEST(QuantFormats, DataRowNf4IsTheSeedsDefaultLayout) {
  const QuantConfig d;  // the seed's NF4 + double quantization
  const QuantConfig n = fmt_of("nf4");
  EXPECT_EQ(n.bits, d.bits);
  EXPECT_EQ(n.block, d.block);
  EXPECT_EQ(n.double_quant, d.double_quant);
  EXPECT_EQ(n.second_block, d.second_block);
  EXPECT_EQ(n.scale_bytes, d.scale_bytes);
  EXPECT_EQ(n.double_quant_scale_bytes, d.double_quant_scale_bytes);
  EXPECT_EQ(n.double_quant_constant_bytes, d.double_quant_constant_bytes);
  EXPECT_EQ(n.zero_bits, d.zero_bits);
  EXPECT_EQ(n.grouping, d.grouping);
  EXPECT_EQ(n.pack, d.pack);
  EXPECT_EQ(n.dequant_flops_per_weight, d.dequant_flops_per_weight);
  EXPECT_EQ(formats().ids(),
            (std::vector<std::string>{"nf4", "gptq-int4", "awq-int4", "int8", "hqq-4", "fp8"}));
}

// Llama 3.1 8B q_proj: W [4096 × 4096].
TEST(QuantFormats, BytesOfA4096SquareWeightPerFormat) {
  struct Case {
    std::string id;
    int group;
    double codes, constants;
  };
  const std::vector<Case> cases = {
      // 4-bit codes: 4096·4096/2. Absmax uint8 per 64 weights (262,144) + FP32 per 256 (1,024).
      {"nf4", -1, 8388608, 262144 + 1024 * 4},
      // FP32 absmax per block of 64 without double quantization is tested below.
      // qweight int32 [512, 4096]; qzeros int32 [32, 512]; scales FP16 [32, 4096]; g_idx [4096].
      {"gptq-int4", -1, 512.0 * 4096 * 4, 32.0 * 512 * 4 + 32.0 * 4096 * 2 + 4096.0 * 4},
      // group_size -1: one group per row: qzeros [1, 512], scales [1, 4096].
      {"gptq-int4", 0, 512.0 * 4096 * 4, 512.0 * 4 + 4096.0 * 2 + 4096.0 * 4},
      // qweight int32 [4096, 512]; qzeros [32, 512]; scales FP16 [32, 4096]; no g_idx.
      {"awq-int4", -1, 4096.0 * 512 * 4, 32.0 * 512 * 4 + 32.0 * 4096 * 2},
      // CB int8 [4096, 4096]; SCB FP32 [4096].
      {"int8", -1, 4096.0 * 4096, 4096.0 * 4},
      // codes two per byte; 16-bit scale and zero per 64 weights.
      {"hqq-4", -1, 8388608, 262144.0 * (2 + 2)},
      // E4M3 bytes; FP32 per 128 × 128 block (32 × 32 blocks), or one per tensor.
      {"fp8", -1, 4096.0 * 4096, 32.0 * 32 * 4},
      {"fp8", 0, 4096.0 * 4096, 4},
  };
  for (const auto& c : cases) {
    const QuantLayoutBytes b = quantized_matrix_bytes(4096, 4096, fmt_of(c.id, c.group));
    EXPECT_DOUBLE_EQ(b.codes, c.codes) << c.id << " group " << c.group;
    EXPECT_DOUBLE_EQ(b.constants, c.constants) << c.id << " group " << c.group;
  }
  QuantConfig no_dq = fmt_of("nf4");
  no_dq.double_quant = false;
  EXPECT_DOUBLE_EQ(quantized_matrix_bytes(4096, 4096, no_dq).constants, 262144.0 * 4);
}

// Shapes that leave partial groups and partial packing words: W [10 × 100], group 64.
TEST(QuantFormats, PartialGroupsAndWordsRoundUpAsTheBuffersAreAllocated) {
  // GPTQ: qweight [ceil(100·4/32) = 13, 10] int32; qzeros [2, ceil(10·4/32) = 2] int32;
  // scales [2, 10] FP16; g_idx [100] int32.
  QuantLayoutBytes g = quantized_matrix_bytes(10, 100, fmt_of("gptq-int4", 64));
  EXPECT_DOUBLE_EQ(g.codes, 13.0 * 10 * 4);
  EXPECT_DOUBLE_EQ(g.constants, 2.0 * 2 * 4 + 2.0 * 10 * 2 + 100.0 * 4);
  // AWQ: qweight [100, 2] int32; qzeros [2, 2]; scales [2, 10].
  QuantLayoutBytes a = quantized_matrix_bytes(10, 100, fmt_of("awq-int4", 64));
  EXPECT_DOUBLE_EQ(a.codes, 100.0 * 2 * 4);
  EXPECT_DOUBLE_EQ(a.constants, 2.0 * 2 * 4 + 2.0 * 10 * 2);
  // NF4 over the flattened 1000 weights: 500 B of codes, 16 blocks, one second-level block.
  QuantLayoutBytes n = quantized_matrix_bytes(10, 100, fmt_of("nf4"));
  EXPECT_DOUBLE_EQ(n.codes, 500);
  EXPECT_DOUBLE_EQ(n.constants, 16 + 4);
  // FP8 blocks of 64: ceil(10/64) · ceil(100/64) = 2 blocks.
  EXPECT_DOUBLE_EQ(quantized_matrix_bytes(10, 100, fmt_of("fp8", 64)).constants, 2.0 * 4);
}

TEST(QuantFormats, DequantizationReadsTheStoredBytesAndWritesThe16BitWeight) {
  const DequantCost nf4 = dequant_cost(4096, 4096, fmt_of("nf4"));
  EXPECT_DOUBLE_EQ(nf4.bytes_read, 8388608 + 262144 + 4096);
  EXPECT_DOUBLE_EQ(nf4.bytes_written, 4096.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(nf4.flops, 4096.0 * 4096 + 262144);  // code·absmax, one absmax per block
  const DequantCost gptq = dequant_cost(4096, 4096, fmt_of("gptq-int4"));
  EXPECT_DOUBLE_EQ(gptq.bytes_read, 8388608 + 65536 + 262144 + 16384);
  EXPECT_DOUBLE_EQ(gptq.flops, 2.0 * 4096 * 4096);  // (q - z) · s
}

// The whole frozen base of Llama 3.1 8B under GPTQ int4, group 128, by hand: per layer
// q, o [4096 × 4096], k, v [1024 × 4096], gate, up [14336 × 4096], down [4096 × 14336].
TEST(QuantFormats, Llama8bGptqBaseByHand) {
  auto gptq = [](double out, double in) {
    const double groups = std::ceil(in / 128);
    return in / 8 * out * 4 + groups * out / 8 * 4 + groups * out * 2 + in * 4;
  };
  const double layer =
      2 * gptq(4096, 4096) + 2 * gptq(1024, 4096) + 2 * gptq(14336, 4096) + gptq(4096, 14336);
  EXPECT_DOUBLE_EQ(layer, 113467392);
  const double bf16 = 2.0 * (2 * 128256.0 * 4096 + 32 * 2 * 4096 + 4096);  // embed, head, norms
  Workload w = test::workload("llama-3.1-8b", Method::kQlora);
  w.quant = fmt_of("gptq-int4");
  const ModelStates s = model_states(w);
  EXPECT_NEAR((s.frozen_weights + s.quantization_constants).value, 32 * layer + bf16, 0.5);
  const double codes = 2 * 8388608.0 + 2 * 2097152.0 + 3 * 29360128.0;  // 4 bits per weight
  EXPECT_NEAR(s.quantization_constants.value, 32 * (layer - codes), 0.5);
}

// The step times the dequantization of the format the base is stored in: a GPTQ q_proj reads its
// packed codes, zeros, scales and g_idx and writes the BF16 weight, in the forward and again in
// the backward pass (the hand count of the test above).
TEST(QuantFormats, TheStepDequantizesTheStoredFormat) {
  Workload w = test::workload("llama-3.1-8b", Method::kQlora);
  w.quant = fmt_of("gptq-int4");
  const StepOps ops = build_step_ops(w);
  const double stored = 4096.0 / 8 * 4096 * 4 + 32.0 * 4096 / 8 * 4 + 32.0 * 4096 * 2 + 4096 * 4;
  int found = 0;
  for (const Op& op : ops.ops)
    if (op.name == "attn.q_proj.gptq-int4_dequant.fwd" ||
        op.name == "attn.q_proj.gptq-int4_dequant.bwd") {
      ++found;
      EXPECT_DOUBLE_EQ(op.bytes.value, stored + 2.0 * 4096 * 4096) << op.name;
      EXPECT_EQ(op.count, 32) << op.name;
    }
  EXPECT_EQ(found, 2);
}

TEST(QuantFormats, BadFormatAndGroupNameTheOptionAndTheValidChoices) {
  auto r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu",
                          "h200-nvl", "--base-quant", "gptq-int8"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("gptq-int8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gptq-int4"), std::string::npos) << r.err;
  r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl",
                     "--base-quant", "awq-int4"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("qlora"), std::string::npos) << r.err;
  r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu", "h200-nvl",
                     "--base-quant", "int8", "--quant-group", "64"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("one scale per output row"), std::string::npos) << r.err;
  r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu", "h200-nvl",
                     "--quant-group", "0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("quant_group"), std::string::npos) << r.err;
  r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu", "h200-nvl",
                     "--quant-group", "32", "--quant-block", "64"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("disagree"), std::string::npos) << r.err;
}

TEST(QuantFormats, OptionReachesFitJsonAndChangesTheStates) {
  auto r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu",
                          "h200-nvl", "--base-quant", "int8", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"format\": \"int8\""), std::string::npos);
  for (const std::string cmd : {"step", "max", "scale"}) {
    std::vector<std::string> args = {
        cmd,        "--model",      "llama-3.1-8b", "--method",      "qlora", "--gpu",
        "h200-nvl", "--base-quant", "hqq-4",        "--quant-group", "32"};
    if (cmd == "max") args.insert(args.end(), {"--solve", "micro-batch"});
    const auto x = test::run_cli(args);
    EXPECT_EQ(x.code, 0) << cmd << ": " << x.err;
  }
}

}  // namespace
}  // namespace ftplan

namespace ftplan {
namespace {

// The formats table and the stacks' memory section are read strictly: a bad value names the
// file, the key and the closest valid name.
TEST(QuantFormats, DataFilesAreReadStrictly) {
  const auto& sources = test::catalog().sources();
  const std::string bad_grouping =
      "formats:\n  - {id: nf4, name: x, bits: 4, grouping: rows, group: 64, group_min: 1,\n"
      "     pack: flat, container_bits: 8, scale_bytes: 4, zero_bits: 0,\n"
      "     index_bytes_per_input: 0, dequant_flops_per_weight: 1, dequant_output_bytes: 2,\n"
      "     basis: x, source: mem-qlora-2023}\n";
  std::string e = test::error_of([&] {
    parse_quant_formats({"data/quant_formats.yaml", bad_grouping, ""}, sources);
  });
  EXPECT_NE(e.find("data/quant_formats.yaml"), std::string::npos) << e;
  EXPECT_NE(e.find("row"), std::string::npos) << e;
  const std::string bad_loss =
      "name: hf\ntitle: x\nattention: sdpa\ncompile: false\n"
      "optimizer: {implementation: fused, memory_passes: 1, basis: x}\n"
      "memory:\n  loss: {kind: fp32, basis: x}\n"
      "  load: {full_on_each_card: false, bytes_per_param: 2, basis: x}\n"
      "  source: mem-hf-loss-upcast\nsource: stack-hf-training-args\n";
  e = test::error_of([&] { parse_stack({"data/stacks/hf.yaml", bad_loss, ""}, sources); });
  EXPECT_NE(e.find("data/stacks/hf.yaml"), std::string::npos) << e;
  EXPECT_NE(e.find("fp32-upcast"), std::string::npos) << e;
  const std::string bad_policy =
      "name: torchtitan\ntitle: x\nattention: flash\ncompile: false\n"
      "optimizer: {implementation: fused, memory_passes: 1, basis: x}\n"
      "recompute: {selective: per-operator, basis: x}\nsource: stack-torchtitan-config\n";
  e = test::error_of([&] {
    parse_stack({"data/stacks/torchtitan.yaml", bad_policy, ""}, sources);
  });
  EXPECT_NE(e.find("data/stacks/torchtitan.yaml"), std::string::npos) << e;
  EXPECT_NE(e.find("selective"), std::string::npos) << e;
  EXPECT_NE(e.find("per-op"), std::string::npos) << e;
}

}  // namespace
}  // namespace ftplan
