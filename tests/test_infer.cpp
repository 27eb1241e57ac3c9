// Generation on one card (infer/generation): KV cache bytes per token and per sequence for GQA,
// MLA, sliding-window and chunked attention, the memory split, the expected experts a batch
// touches, and the decode roofline against hand-computed figures; `ftplan infer` and its errors.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "comm/collectives.hpp"
#include "core/error.hpp"
#include "infer/generation.hpp"
#include "perf/device.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;

GenerationModel served(const std::string& id, KvDtype kv = KvDtype::kBF16,
                       WeightFormat w = WeightFormat::kBF16) {
  return make_generation_model(test::catalog().model(id), w, kv);
}

const KvLayerGroup* group(const GenerationModel& g, const std::string& name) {
  for (const auto& group : g.kv_groups)
    if (group.name == name) return &group;
  return nullptr;
}

void expect_relative(double actual, double expected, double tolerance = 1e-9) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * tolerance) << "expected " << expected;
}

TEST(InferKvCache, GroupedQueryAttentionLlama31_8b) {
  // 32 layers × 2 (K and V) × 8 KV heads × 128 head dim × 2 bytes.
  const GenerationModel g = served("llama-3.1-8b");
  EXPECT_EQ(kv_bytes_per_token(g).value, 32.0 * 2 * 8 * 128 * 2);
  EXPECT_EQ(kv_bytes_per_token(g).value, 131072.0);
  ASSERT_EQ(g.kv_groups.size(), 1u);
  EXPECT_EQ(g.kv_groups[0].name, "full");
  // FP8 halves it.
  EXPECT_EQ(kv_bytes_per_token(served("llama-3.1-8b", KvDtype::kFP8)).value, 65536.0);
  // A sequence of 8192 tokens: 8192 × 131072 B = 1 GiB.
  EXPECT_EQ(kv_bytes_per_sequence(g, 8192, 16).value, 1073741824.0);
}

TEST(InferKvCache, PagedBlocksRoundEachSequenceUp) {
  const GenerationModel g = served("llama-3.1-8b");
  // 100 tokens take 7 blocks of 16 = 112 tokens' room; unrounded: 100.
  EXPECT_EQ(kv_bytes_per_sequence(g, 100, 16).value, 112.0 * 131072);
  EXPECT_EQ(kv_bytes_per_sequence(g, 100, 1).value, 100.0 * 131072);
  EXPECT_EQ(kv_bytes_per_sequence(g, 112, 16).value, 112.0 * 131072);
}

TEST(InferKvCache, MultiHeadLatentAttentionCachesTheLatentAndTheRopeKey) {
  // DeepSeek-V3: (kv_lora_rank 512 + qk_rope_head_dim 64) × 61 layers × 2 bytes.
  const GenerationModel g = served("deepseek-v3");
  EXPECT_EQ(kv_bytes_per_token(g).value, (512.0 + 64) * 61 * 2);
  // Decode attends in the absorbed form: 2 × 128 heads × (576 score + 512 value) per pair.
  ASSERT_EQ(g.kv_groups.size(), 1u);
  EXPECT_EQ(g.kv_groups[0].decode_pair_flops, 2.0 * 128 * (576 + 512));
  // Prefill expands keys and values: 2 × 128 × (192 + 128).
  EXPECT_EQ(g.kv_groups[0].prefill_pair_flops, 2.0 * 128 * (192 + 128));
  // DeepSeek-V2-Lite: the same latent widths over 27 layers.
  EXPECT_EQ(kv_bytes_per_token(served("deepseek-v2-lite")).value, (512.0 + 64) * 27 * 2);
}

TEST(InferKvCache, SlidingWindowLayersHoldAtMostTheWindow) {
  // gpt-oss-20b: 24 layers alternating sliding (window 128) and full; 8 KV heads × 64.
  const GenerationModel g = served("gpt-oss-20b");
  const KvLayerGroup* sliding = group(g, "sliding");
  const KvLayerGroup* full = group(g, "full");
  ASSERT_TRUE(sliding && full);
  EXPECT_EQ(sliding->layers, 12);
  EXPECT_EQ(full->layers, 12);
  EXPECT_EQ(sliding->span, 128);
  const double per_layer = 2.0 * 8 * 64 * 2;  // 2048 B
  EXPECT_EQ(sliding->bytes_per_token_per_layer.value, per_layer);
  EXPECT_EQ(kv_bytes_per_sequence(g, 8192, 16).value, 12 * per_layer * (8192 + 128));
  // Below the window every layer holds the whole context.
  EXPECT_EQ(kv_bytes_per_sequence(g, 64, 16).value, 24 * per_layer * 64);
  // Gemma 3 1B: 26 layers, every 6th global: 22 sliding (window 512), 4 full; 1 KV head × 256.
  const GenerationModel gemma = served("gemma-3-1b");
  ASSERT_TRUE(group(gemma, "sliding"));
  EXPECT_EQ(group(gemma, "sliding")->layers, 22);
  EXPECT_EQ(kv_bytes_per_sequence(gemma, 4096, 16).value, 4.0 * 4096 * 1024 + 22.0 * 512 * 1024);
}

TEST(InferKvCache, ChunkedAttentionLayersHoldAtMostTheChunk) {
  // Llama 4 Scout: 48 layers, every 4th NoPE (global): 36 chunked (8192 tokens), 12 full.
  const GenerationModel g = served("llama-4-scout-17b-16e");
  ASSERT_TRUE(group(g, "chunked"));
  EXPECT_EQ(group(g, "chunked")->layers, 36);
  EXPECT_EQ(group(g, "chunked")->span, 8192);
  EXPECT_EQ(group(g, "full")->layers, 12);
  const double per_layer = 2.0 * 8 * 128 * 2;
  EXPECT_EQ(kv_bytes_per_sequence(g, 16384, 16).value,
            12 * per_layer * 16384 + 36 * per_layer * 8192);
}

TEST(InferMemory, MaxConcurrentSequencesByHand) {
  const GenerationModel g = served("llama-3.1-8b");
  // Weights: 8,030,261,248 parameters × 2 B.
  EXPECT_EQ(g.weights_bytes.value, 8030261248.0 * 2);
  // Reserve: 8192 tokens × (4096 hidden + 2 × 14336 gate/up + 4096 q + 1024 k + 1024 v) × 2 B
  // + 256 sequences × 128256 vocabulary × 4 B.
  const double reserve = 8192.0 * (4096 + 2 * 14336 + 4096 + 1024 + 1024) * 2 + 256.0 * 128256 * 4;
  EXPECT_EQ(activation_reserve(g).value, reserve);
  const GenerationMemory m = generation_memory(g, Bytes(80e9), 0.9, Bytes(0.5e9), 8192, 16);
  const double budget = 80e9 * 0.9 - 8030261248.0 * 2 - reserve - 0.5e9;
  EXPECT_DOUBLE_EQ(m.kv_budget.value, budget);
  EXPECT_EQ(m.kv_per_sequence.value, 1073741824.0);
  EXPECT_EQ(m.max_concurrent_sequences, static_cast<std::int64_t>(budget / 1073741824.0));
  EXPECT_EQ(m.max_concurrent_sequences, 50);
  // FP8 weights and cache: more room, and each sequence takes half.
  const GenerationModel small = served("llama-3.1-8b", KvDtype::kFP8, WeightFormat::kFP8);
  EXPECT_GT(
      generation_memory(small, Bytes(80e9), 0.9, Bytes(0.5e9), 8192, 16).max_concurrent_sequences,
      2 * m.max_concurrent_sequences);
  // A card too small for the weights: no cache, no sequence.
  const GenerationMemory none = generation_memory(g, Bytes(16e9), 0.9, Bytes(0.5e9), 8192, 16);
  EXPECT_FALSE(none.cache_fits());
  EXPECT_EQ(none.max_concurrent_sequences, 0);
}

TEST(InferWeights, FormatsCountTheirScales) {
  EXPECT_EQ(weight_format_bytes(WeightFormat::kBF16), 2.0);
  EXPECT_EQ(weight_format_bytes(WeightFormat::kFP8), 1.0);
  EXPECT_EQ(weight_format_bytes(WeightFormat::kNVFP4), 0.5 + 1.0 / 16);
  EXPECT_EQ(weight_format_bytes(WeightFormat::kINT4), 0.5 + 2.0 / 128);
  EXPECT_EQ(weight_format_bytes(WeightFormat::kMXFP4), 0.5 + 1.0 / 32);
  EXPECT_EQ(weight_format_precision(WeightFormat::kNVFP4), TensorPrecision::kFP4);
  EXPECT_EQ(weight_format_precision(WeightFormat::kMXFP4), TensorPrecision::kBF16);
  // Only the decoder's linear layers take the format: Llama 3.1 8B in FP8 keeps its embedding
  // and output layer (2 × 128256 × 4096) and norms (32 × 2 × 4096 + 4096) in 16-bit.
  const GenerationModel fp8 = served("llama-3.1-8b", KvDtype::kBF16, WeightFormat::kFP8);
  const double sixteen = 2.0 * 128256 * 4096 + 32.0 * 2 * 4096 + 4096;
  EXPECT_EQ(fp8.weights_bytes.value, (8030261248.0 - sixteen) * 1 + sixteen * 2);
}

TEST(InferMoe, ExpectedExpertsTouched) {
  EXPECT_DOUBLE_EQ(expected_experts_touched(8, 2, 1), 2.0);
  // 8 × (1 − (6/8)^2) = 3.5
  EXPECT_DOUBLE_EQ(expected_experts_touched(8, 2, 2), 3.5);
  EXPECT_NEAR(expected_experts_touched(128, 8, 4096), 128.0, 1e-9);
  EXPECT_EQ(expected_experts_touched(0, 0, 64), 0.0);
  // A MoE decode step at batch 1 reads fewer weight bytes than the model holds.
  const GenerationModel g = served("qwen3-30b-a3b");
  const Device d = make_device(test::catalog().gpu("h200-nvl"));
  const GenerationEfficiency e{0.8, 0.5, 0.9};
  const PassTime one = decode_time(g, d, 1, 1024, e);
  const PassTime many = decode_time(g, d, 256, 1024, e);
  EXPECT_LT(one.weight_bytes.value, 0.2 * g.weights_bytes.value);
  EXPECT_GT(many.weight_bytes.value, one.weight_bytes.value);
  EXPECT_LE(many.weight_bytes.value, g.dense_weight_bytes.value + g.expert_weight_bytes.value);
}

TEST(InferDecode, BandwidthBoundAtBatchOneByHand) {
  const GenerationModel g = served("llama-3.1-8b");
  const Device d = make_device(test::catalog().gpu("h200-nvl"));
  const GenerationEfficiency e{0.8, 0.5, 0.9};
  const double rate = d.rate(TensorPrecision::kBF16)->value;
  const double bandwidth = d.bandwidth.value;
  // Untied: every weight but the input embedding (128256 × 4096) is read once per step.
  const double active = 8030261248.0 - 128256.0 * 4096;
  EXPECT_EQ(g.active_params, active);
  EXPECT_EQ(g.dense_weight_bytes.value, active * 2);
  const PassTime t = decode_time(g, d, 1, 8192, e);
  const double linear = 2 * active;
  const double attention = 32.0 * 8192 * 4 * 32 * 128;
  const double bytes = active * 2 + 8192.0 * 131072;
  const double compute = linear / (rate * 0.8) + attention / (rate * 0.5);
  const double memory = bytes / (bandwidth * 0.9);
  expect_relative(t.compute.value, compute);
  expect_relative(t.memory.value, memory);
  expect_relative(t.time().value, std::max(compute, memory));
  EXPECT_EQ(t.bound(), "bandwidth");
}

TEST(InferDecode, ComputeBoundAtALargeBatchByHand) {
  const GenerationModel g = served("llama-3.1-8b");
  const Device d = make_device(test::catalog().gpu("h200-nvl"));
  const GenerationEfficiency e{0.8, 0.5, 0.9};
  const double rate = d.rate(TensorPrecision::kBF16)->value;
  const double active = 8030261248.0 - 128256.0 * 4096;
  const PassTime t = decode_time(g, d, 4096, 128, e);
  const double compute =
      2 * active * 4096 / (rate * 0.8) + 4096.0 * 32 * 128 * 4 * 32 * 128 / (rate * 0.5);
  const double memory = (active * 2 + 4096.0 * 128 * 131072) / (d.bandwidth.value * 0.9);
  expect_relative(t.time().value, std::max(compute, memory));
  EXPECT_GT(compute, memory);
  EXPECT_EQ(t.bound(), "compute");
}

TEST(InferDecode, TheEnginesFixedTimePerLayerAddsToTheRoofline) {
  // A serving engine's decode step: the roofline, plus a fixed time per decoder layer; where that
  // time exceeds the roofline the step is the engine's (a small model at batch 1).
  const GenerationModel g = served("llama-3.1-8b");
  const Device d = make_device(test::catalog().gpu("h200-nvl"));
  GenerationEfficiency e{0.8, 0.5, 0.9};
  const PassTime bare = decode_time(g, d, 1, 8192, e);
  e.decode_layer_seconds = 50e-6;
  const PassTime t = decode_time(g, d, 1, 8192, e);
  EXPECT_EQ(g.layers, 32);
  expect_relative(t.fixed.value, 32 * 50e-6);
  expect_relative(t.time().value, bare.time().value + 32 * 50e-6);
  EXPECT_EQ(t.roofline(), bare.roofline());
  EXPECT_EQ(t.bound(), "bandwidth");
  const GenerationModel small = served("qwen3-0.6b");
  const PassTime s = decode_time(small, d, 1, 128, e);
  EXPECT_GT(s.fixed, s.roofline());
  EXPECT_EQ(s.bound(), "engine");
  // The prefill is compute: no fixed time is added to it.
  EXPECT_EQ(prefill_time(g, d, 1024, e).fixed.value, 0);
  // The table's figure reaches every estimate (infer --json: fixed_seconds).
  const auto r = test::run_cli({"infer", "--model", "llama-3.1-8b", "--gpu", "h200-nvl",
                                "--context", "8192", "--batch", "1", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const double per_layer = default_efficiency(test::catalog()).generation.seconds_per_decode_layer;
  EXPECT_GT(per_layer, 0);
  EXPECT_NEAR(json::parse(r.out)["decode"]["fixed_seconds"].get<double>(), 32 * per_layer, 1e-12);
  // The decode time's range is where the fit's measurements fell around their predictions:
  // measured = predicted / (1 + error), at the 90th and 10th percentile errors.
  const FitRecord& f = default_efficiency(test::catalog()).generation.fit;
  ASSERT_TRUE(f.present());
  const json j = json::parse(r.out);
  const double ms = j["decode_ms_per_token"].get<double>();
  EXPECT_NEAR(j["decode_ms_per_token_range"][0].get<double>(), ms / (1 + f.error_high), 1e-5);
  EXPECT_NEAR(j["decode_ms_per_token_range"][1].get<double>(), ms / (1 + f.error_low), 1e-5);
  EXPECT_LT(j["decode_ms_per_token_range"][0].get<double>(), ms);
  EXPECT_GT(j["decode_ms_per_token_range"][1].get<double>(), ms);
}

TEST(InferPrefill, CausalAttentionAndWeightsOnce) {
  const GenerationModel g = served("llama-3.1-8b");
  const Device d = make_device(test::catalog().gpu("h200-nvl"));
  const GenerationEfficiency e{0.7, 0.4, 0.9};
  const PassTime t = prefill_time(g, d, 4096, e);
  const double active = 8030261248.0 - 128256.0 * 4096;
  EXPECT_EQ(t.linear_flops.value, 2 * active * 4096);
  // 4 × heads × head_dim per (query, key) pair, 4096 × 4097 / 2 causal pairs per layer.
  EXPECT_EQ(t.attention_flops.value, 32.0 * 4096 * 4097 / 2 * 4 * 32 * 128);
  EXPECT_EQ(t.weight_bytes.value, active * 2);
  EXPECT_EQ(t.bound(), "compute");
}

TEST(InferEstimate, SweepDoublesUpToTheMaxAndMarksWhatFits) {
  const GenerationModel g = served("llama-3.1-8b");
  const GpuSpec& gpu = test::catalog().gpu("h200-nvl");
  const Device d = make_device(gpu);
  GenerationRequest r;
  r.context = 8192;
  r.batch = 1000;
  const GenerationEstimate e =
      estimate_generation(g, d, gpu.capacity(), test::roofline_efficiency(), Bytes(0.3e9), r);
  const std::int64_t top = e.memory.max_concurrent_sequences;
  ASSERT_GT(top, 8);
  EXPECT_FALSE(e.decode.fits);
  ASSERT_GE(e.batch_sweep.size(), 2u);
  EXPECT_EQ(e.batch_sweep.front().batch, 1);
  EXPECT_EQ(e.batch_sweep.back().batch, top);
  for (std::size_t i = 1; i < e.batch_sweep.size(); ++i) {
    EXPECT_TRUE(e.batch_sweep[i].fits);
    // More sequences per step: more tokens per second, each token later.
    EXPECT_GT(e.batch_sweep[i].tokens_per_second(), e.batch_sweep[i - 1].tokens_per_second());
    EXPECT_GE(e.batch_sweep[i].ms_per_token(), e.batch_sweep[i - 1].ms_per_token());
  }
}

TEST(InferCli, JsonHasTheFiguresAndEchoesTheInputs) {
  const auto r = test::run_cli({"infer", "--model", "llama-3.1-8b", "--gpu", "h200-nvl",
                                "--context", "8192", "--batch", "32", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "infer");
  EXPECT_EQ(j["kv_bytes_per_token"], 131072.0);
  EXPECT_EQ(j["kv_bytes_per_sequence"], 1073741824.0);
  EXPECT_EQ(j["context"], 8192);
  EXPECT_EQ(j["batch"], 32);
  EXPECT_EQ(j["kv_dtype"], "bf16");
  EXPECT_EQ(j["weights"], "bf16");
  EXPECT_EQ(j["block_size"], 16);
  EXPECT_DOUBLE_EQ(j["gpu_memory_utilization"].get<double>(), 0.9);
  EXPECT_NEAR(j["weights_GB"].get<double>(), 16.06, 0.01);
  for (const char* key : {"kv_cache_GB", "prefill_tokens_per_second", "decode_tokens_per_second",
                          "decode_ms_per_token"})
    EXPECT_GT(j[key].get<double>(), 0) << key;
  EXPECT_GE(j["max_concurrent_sequences"].get<int>(), 32);
  EXPECT_TRUE(j["batch_fits"].get<bool>());
  EXPECT_TRUE(j["bound"] == "bandwidth" || j["bound"] == "compute");
  ASSERT_FALSE(j["batch_sweep"].empty());
  EXPECT_EQ(j["batch_sweep"][0]["batch"], 1);
  EXPECT_EQ(j["batch_sweep"][0]["bound"], "bandwidth");
  // The text names its units and says what is not modelled.
  const auto text =
      test::run_cli({"infer", "--model", "llama-3.1-8b", "--gpu", "h200-nvl", "--context", "8192"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("GB = 10^9 bytes"), std::string::npos);
  EXPECT_NE(text.out.find("max concurrent sequences"), std::string::npos);
  EXPECT_NE(text.out.find("speculative decoding"), std::string::npos);
}

TEST(InferCli, ABatchThatDoesNotFitIsSaidNotRefused) {
  const auto r = test::run_cli(
      {"infer", "--model", "llama-3.1-8b", "--gpu", "l4", "--context", "32768", "--batch", "64"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("batch 64 does not fit"), std::string::npos) << r.out;
}

TEST(InferCli, BadInputNamesTheOptionAndExitsTwo) {
  const auto zero =
      test::run_cli({"infer", "--model", "llama-3.1-8b", "--gpu", "h200-nvl", "--context", "0"});
  EXPECT_EQ(zero.code, 2);
  EXPECT_NE(zero.err.find("--context must be at least 1"), std::string::npos) << zero.err;
  const auto dtype =
      test::run_cli({"infer", "--model", "llama-3.1-8b", "--gpu", "h200-nvl", "--kv-dtype", "fp9"});
  EXPECT_EQ(dtype.code, 2);
  EXPECT_NE(dtype.err.find("fp9"), std::string::npos) << dtype.err;
  EXPECT_NE(dtype.err.find("fp8"), std::string::npos) << dtype.err;
  const auto weights =
      test::run_cli({"infer", "--model", "llama-3.1-8b", "--gpu", "h200-nvl", "--weights", "int3"});
  EXPECT_EQ(weights.code, 2);
  EXPECT_NE(weights.err.find("int4"), std::string::npos) << weights.err;
  const auto cards =
      test::run_cli({"infer", "--model", "llama-3.1-8b", "--gpu", "h200-nvl", "--gpus", "0"});
  EXPECT_EQ(cards.code, 2);
  EXPECT_NE(cards.err.find("--gpus must be at least 1"), std::string::npos) << cards.err;
  const auto share = test::run_cli(
      {"infer", "--model", "llama-3.1-8b", "--gpu", "h200-nvl", "--gpu-memory-utilization", "1.5"});
  EXPECT_EQ(share.code, 2);
  EXPECT_NE(share.err.find("--gpu-memory-utilization"), std::string::npos) << share.err;
  // NVFP4 needs FP4 tensor cores: Hopper has none.
  const auto fp4 = test::run_cli(
      {"infer", "--model", "llama-3.1-8b", "--gpu", "h200-nvl", "--weights", "nvfp4"});
  EXPECT_EQ(fp4.code, 2);
  EXPECT_NE(fp4.err.find("nvfp4"), std::string::npos) << fp4.err;
}

}  // namespace
}  // namespace ftplan

namespace ftplan {
namespace {

TEST(InferTensorParallel, WeightsAndKvHeadsSplitOverTheCards) {
  const ModelPtr m = test::catalog().model("llama-3.1-8b");
  const GenerationModel two = make_generation_model(m, WeightFormat::kBF16, KvDtype::kBF16, 2);
  // 4 of 8 KV heads per card; norms (32 layers × 2 × 4096 + 4096) whole, the rest halved.
  EXPECT_EQ(kv_bytes_per_token(two).value, 65536.0);
  const double norms = 32.0 * 2 * 4096 + 4096;
  EXPECT_EQ(two.weights_bytes.value, (8030261248.0 - norms) / 2 * 2 + norms * 2);
  EXPECT_EQ(two.kv_groups[0].decode_pair_flops, 4.0 * 16 * 128);
  // 16 cards, 8 KV heads: each card keeps one KV head (a replica).
  const GenerationModel sixteen = make_generation_model(m, WeightFormat::kBF16, KvDtype::kBF16, 16);
  EXPECT_EQ(kv_bytes_per_token(sixteen).value, 32.0 * 2 * 1 * 128 * 2);
  // Three cards divide neither 32 heads nor 8 KV heads.
  try {
    make_generation_model(m, WeightFormat::kBF16, KvDtype::kBF16, 3, "gpus");
    ADD_FAILURE() << "tp 3 accepted";
  } catch (const UserError& e) {
    EXPECT_EQ(e.field(), "gpus");
    EXPECT_NE(std::string(e.what()).find("gpus = 3"), std::string::npos) << e.what();
  }
  // MLA: every card keeps the whole latent.
  const GenerationModel v3 = make_generation_model(test::catalog().model("deepseek-v3"),
                                                   WeightFormat::kFP8, KvDtype::kBF16, 8);
  EXPECT_EQ(kv_bytes_per_token(v3).value, (512.0 + 64) * 61 * 2);
}

TEST(InferTensorParallel, TwoAllReducesPerLayerAddToTheStep) {
  const ModelPtr m = test::catalog().model("llama-3.1-8b");
  const GenerationModel g = make_generation_model(m, WeightFormat::kBF16, KvDtype::kBF16, 2);
  const GpuSpec& gpu = test::catalog().gpu("h100-sxm");
  const CommConstants k = load_comm_constants(test::catalog());
  const Topology t = build_topology(gpu, 2, "", k);
  const TensorParallelLink link{&t, &k};
  const CollectiveCost one = collective_cost(Collective::kAllReduce, Bytes(64.0 * 4096 * 2), t, k);
  EXPECT_DOUBLE_EQ(tensor_parallel_seconds(g, link, 64).value,
                   one.estimated_seconds.value * 2 * 32);
  const Device d = make_device(gpu);
  const GenerationEfficiency e{0.8, 0.5, 0.9};
  const PassTime with = decode_time(g, d, 64, 2048, e, "weights", link);
  const PassTime without = decode_time(g, d, 64, 2048, e);
  EXPECT_DOUBLE_EQ(with.time().value, without.time().value + with.link.value);
  EXPECT_GT(with.link.value, 0);
  // One card: no link.
  const GenerationModel single = make_generation_model(m, WeightFormat::kBF16, KvDtype::kBF16);
  EXPECT_EQ(tensor_parallel_seconds(single, link, 64).value, 0);
}

TEST(InferCli, TensorParallelRunsAndSaysSo) {
  const auto r = test::run_cli({"infer", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus",
                                "4", "--context", "8192", "--batch", "16", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["gpus"], 4);
  EXPECT_GT(j["decode"]["link_seconds"].get<double>(), 0);
  EXPECT_GT(j["max_concurrent_sequences"].get<int>(), 16);
  const auto bad =
      test::run_cli({"infer", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "3"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("gpus = 3"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace ftplan

namespace ftplan {
namespace {

TEST(InferRollout, PromptsPrefilledTogetherReadTheWeightsOnce) {
  const GenerationModel g = make_generation_model(test::catalog().model("llama-3.1-8b"),
                                                  WeightFormat::kBF16, KvDtype::kBF16);
  const Device d = make_device(test::catalog().gpu("h200-nvl"));
  const GenerationEfficiency e{0.8, 0.5, 0.9};
  const PassTime one = prefill_time(g, d, 256, e);
  const PassTime four = prefill_time(g, d, 256, e, "weights", {}, 4);
  EXPECT_EQ(four.weight_bytes.value, one.weight_bytes.value);
  EXPECT_EQ(four.linear_flops.value, 4 * one.linear_flops.value);
  EXPECT_EQ(four.attention_flops.value, 4 * one.attention_flops.value);
  EXPECT_EQ(four.kv_bytes.value, 4 * one.kv_bytes.value);
}

TEST(InferRollout, WavesOfPrefillAndGrowingDecodeByHand) {
  const GenerationModel g = make_generation_model(test::catalog().model("llama-3.1-8b"),
                                                  WeightFormat::kBF16, KvDtype::kBF16);
  const GpuSpec& gpu = test::catalog().gpu("h200-nvl");
  const Device d = make_device(gpu);
  const EfficiencyTable& table = test::roofline_efficiency();
  // One wave of 4 sequences, 128 prompt tokens, 8 completion tokens: one segment per step, each
  // timed at its midpoint context 128 + round(i + 0.5), i = 0..7: 129 .. 136.
  const RolloutTime r = rollout_time(g, d, table, 4, 128, 8, 4);
  EXPECT_EQ(r.waves, 1);
  const double prefill =
      prefill_time(g, d, 128, generation_efficiency(table, g, gpu.architecture, 512), "weights", {},
                   4)
          .time()
          .value;
  const GenerationEfficiency e = generation_efficiency(table, g, gpu.architecture, 4);
  double decode = 0;
  for (std::int64_t c = 129; c <= 136; ++c)
    decode += decode_time(g, d, 4, c, e).time().value;
  expect_relative(r.prefill.value, prefill);
  expect_relative(r.decode.value, decode);
  expect_relative(r.completion_tokens_per_second, 32 / (prefill + decode));
  // Ten sequences in batches of 4: three waves, the last of 2; more than two waves of 4.
  const RolloutTime ten = rollout_time(g, d, table, 10, 128, 8, 4);
  EXPECT_EQ(ten.waves, 3);
  EXPECT_GT(ten.total().value, 2 * r.total().value);
  EXPECT_LT(ten.total().value, 3 * r.total().value);
  // Longer completions take longer per token (the context grows).
  const RolloutTime longer = rollout_time(g, d, table, 4, 128, 4096, 4);
  EXPECT_GT(longer.decode.value / 4096, r.decode.value / 8);
}

TEST(InferRollout, CompletionsOfVaryingLengthRunOutByHand) {
  const GenerationModel g = make_generation_model(test::catalog().model("llama-3.1-8b"),
                                                  WeightFormat::kBF16, KvDtype::kBF16);
  const GpuSpec& gpu = test::catalog().gpu("h200-nvl");
  const Device d = make_device(gpu);
  const EfficiencyTable& table = test::roofline_efficiency();
  // Four sequences started together, half ending at 100 tokens, half at 200. Steps 1-100: all
  // four decode, at the middle context 128 + 50. Steps 101-200 run while any of the four is left,
  // P = 1 − 0.5^4 = 15/16, with 4 × 0.5 / (15/16) = 2.13 → 2 sequences, at context 128 + 150.
  const std::vector<LengthBin> halves = {{100, 0.5}, {200, 0.5}};
  const RolloutTime r = rollout_time(g, d, table, 4, 128, 200, 4, {}, halves);
  const auto step = [&](std::int64_t batch, std::int64_t context) {
    return decode_time(
               g, d, batch, context,
               generation_efficiency(table, g, gpu.architecture, static_cast<double>(batch)))
        .time()
        .value;
  };
  expect_relative(r.decode.value, 100 * step(4, 178) + 100 * (15.0 / 16) * step(2, 278));
  const RolloutTime fixed = rollout_time(g, d, table, 4, 128, 200, 4);
  expect_relative(r.prefill.value, fixed.prefill.value);
  // 4 × 150 tokens generated on average.
  expect_relative(r.completion_tokens_per_second, 600 / r.total().value);
  // One length is the fixed case.
  expect_relative(rollout_time(g, d, table, 4, 128, 200, 4, {}, {{200, 1}}).total().value,
                  fixed.total().value);
  // Ten sequences on four slots: while six wait, every slot decodes: (10 − 4) × 150 / 4 = 225
  // steps at the length-biased mean context 128 + E[L²] / (2 E[L]) = 128 + 25000 / 300 = 211;
  // the last four run out as above.
  const RolloutTime ten = rollout_time(g, d, table, 10, 128, 200, 4, {}, halves);
  expect_relative(ten.decode.value, 225 * step(4, 211) + r.decode.value);
}

TEST(InferRollout, GreatestEntropyLengthsKeepTheMean) {
  for (const double mean : {100.0, 1060.0, 1982.0, 3500.0}) {
    const std::vector<LengthBin> d = max_entropy_lengths(mean, 3964);
    ASSERT_EQ(d.size(), 64u);
    double total = 0, sum = 0;
    for (const auto& b : d) {
      total += b.count;
      sum += b.count * b.tokens;
      EXPECT_LE(b.tokens, 3964);
    }
    EXPECT_NEAR(total, 1, 1e-12);
    EXPECT_NEAR(sum, mean, 1e-6 * mean) << mean;
    // Below half the limit the probabilities fall with the length, above it they rise; at half
    // (1982) they are even.
    const double first = d.front().count, last = d.back().count;
    if (mean < 1900) EXPECT_GT(first, last);
    if (mean > 2100) EXPECT_LT(first, last);
    if (mean == 1982.0) EXPECT_NEAR(first / last, 1, 1e-6);
  }
  // A mean at the limit: every completion runs to it.
  EXPECT_EQ(max_entropy_lengths(3964, 3964).size(), 1u);
}

}  // namespace
}  // namespace ftplan
