// How a stack prepares a quantized (QLoRA) base: PEFT's prepare_model_for_kbit_training casts
// every parameter left in 16 bits to FP32 (stack peft), TRL then casts the embeddings and the
// output layer back to BF16 (stack hf); axolotl, LLaMA-Factory and Unsloth keep them in BF16.
// Each figure below is computed by hand from the tensors' shapes.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "memory/activations.hpp"
#include "memory/model_states.hpp"
#include "memory/step_memory.hpp"
#include "model/config_reader.hpp"
#include "support.hpp"
#include "workload/quant_format.hpp"
#include "workload/roles.hpp"
#include "workload/stack.hpp"

namespace ftplan {
namespace {

using test::workload;

const QuantFormats& formats() {
  static const QuantFormats f = load_quant_formats(test::catalog());
  return f;
}

Workload qlora_on(const std::string& stack, const std::string& model = "llama-3.1-8b") {
  Workload w = workload(model, Method::kQlora);
  w.lora.rank = 32;
  w.stack = &test::stacks().find(stack);
  return w;
}

// Parameters of the catalog model by tensor kind, every layer and copy.
double params_of(const Workload& w, TensorKind kind) {
  double n = 0;
  for (const TensorSpec& t : w.model->params.tensors)
    if (t.kind == kind) n += static_cast<double>(t.total());
  return n;
}

TEST(KbitPreparation, FrozenWeightsInFp32AsEachStackLeavesThem) {
  const Workload none = qlora_on("axolotl"), trl = qlora_on("hf"), peft = qlora_on("peft");
  EXPECT_FALSE(trained_set(none).fp32_unquantized);
  EXPECT_TRUE(trained_set(trl).fp32_unquantized);
  EXPECT_TRUE(trained_set(trl).bf16_embeddings);
  EXPECT_FALSE(trained_set(peft).bf16_embeddings);
  const double norms = params_of(none, TensorKind::kNorm);
  const double biases = params_of(none, TensorKind::kBias);
  const double embedding = params_of(none, TensorKind::kEmbedding);
  const double output = params_of(none, TensorKind::kOutput);
  // Llama 3.1 8B: 65 norms of 4,096 (two per block and the final one), no biases; embedding and
  // untied output layer 128,256 × 4,096 each.
  EXPECT_DOUBLE_EQ(norms, 65.0 * 4096);
  EXPECT_DOUBLE_EQ(biases, 0.0);
  EXPECT_DOUBLE_EQ(embedding, 128256.0 * 4096);
  EXPECT_DOUBLE_EQ(output, 128256.0 * 4096);
  const double base = model_states(none).frozen_weights.value;
  // TRL: the norms take 4 B instead of 2, the embeddings and output layer stay at 2 B.
  EXPECT_DOUBLE_EQ(model_states(trl).frozen_weights.value - base, 2.0 * norms);
  // PEFT alone: every parameter left in 16 bits takes 4 B.
  EXPECT_DOUBLE_EQ(model_states(peft).frozen_weights.value - base,
                   2.0 * (norms + embedding + output));
  // The quantized block weights themselves are unchanged.
  EXPECT_DOUBLE_EQ(model_states(peft).quantization_constants.value,
                   model_states(none).quantization_constants.value);
}

// fms-acceleration's accelerated-peft plugin prepares the 4-bit base with a copy of PEFT's
// preparation that casts nothing: its QLoRA runs keep the 16-bit parameters and the stream in
// BF16, and everything else is stack hf's (a LoRA run on a 16-bit base has hf's figures).
TEST(KbitPreparation, FmsAccelerationIsHfWithoutTheCasts) {
  const Workload fms = qlora_on("fms-acceleration"), trl = qlora_on("hf");
  EXPECT_FALSE(trained_set(fms).fp32_unquantized);
  const double norms = params_of(fms, TensorKind::kNorm);
  EXPECT_DOUBLE_EQ(model_states(trl).frozen_weights.value - model_states(fms).frozen_weights.value,
                   2.0 * norms);
  // Llama 3.1 8B, 32 blocks: each block's checkpointed input at 2 B per value, not TRL's 4.
  EXPECT_DOUBLE_EQ(activation_profile(fms).saved_all.per_token, 32.0 * 2.0 * 4096);
  const std::vector<std::string> lora = {"fit",  "--model", "llama-3.1-8b", "--method",
                                         "lora", "--gpu",   "h200-sxm",     "--json"};
  auto on = [&](const char* stack) {
    auto args = lora;
    args.insert(args.end(), {"--stack", stack});
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["memory_GB"];
  };
  EXPECT_EQ(on("fms-acceleration"), on("hf"));
}

// TRL skips its preparation for a 4-bit base loaded for FSDP (is_sharded_qlora): sharded over
// several cards, stack hf runs the profile without the casts, as fms-acceleration's plugin does;
// on one card, under DDP or in a MIG instance it keeps them.
TEST(KbitPreparation, TrlLeavesABaseShardedByFsdpAsLoaded) {
  const Workload trl = qlora_on("hf"), fms = qlora_on("fms-acceleration");
  const ActivationProfile prof = activation_profile(trl);
  ASSERT_NE(prof.sharded, nullptr);
  EXPECT_EQ(activation_profile(fms).sharded, nullptr);
  EXPECT_EQ(activation_profile(qlora_on("peft")).sharded, nullptr);
  // Llama 3.1 8B: the checkpointed stream in FP32 (4 B) with the casts, BF16 without.
  EXPECT_DOUBLE_EQ(prof.saved_all.per_token, 32.0 * 4.0 * 4096);
  EXPECT_DOUBLE_EQ(prof.sharded->saved_all.per_token, 32.0 * 2.0 * 4096);
  EXPECT_EQ(&prof.placed(test::on("h200-sxm", 2, Sharding::kFsdp)), prof.sharded.get());
  EXPECT_EQ(&prof.placed(test::on("h200-sxm", 4, Sharding::kHsdp)), prof.sharded.get());
  EXPECT_EQ(&prof.placed(test::on("h200-sxm")), &prof);
  EXPECT_EQ(&prof.placed(test::on("h200-sxm", 2, Sharding::kDdp)), &prof);
  EXPECT_EQ(&prof.placed(test::on("h200-sxm", 2, Sharding::kZero2)), &prof);
  // Over two cards the step holds what the plugin's step holds; on one card more.
  auto step = [](const Workload& w, const Placement& p) {
    return estimate_memory(w, p).runtime.step.total().value;
  };
  const Placement two = test::on("h200-sxm", 2, Sharding::kFsdp);
  EXPECT_DOUBLE_EQ(step(trl, two), step(fms, two));
  EXPECT_GT(step(trl, test::on("h200-sxm")), step(fms, test::on("h200-sxm")));
  // Pipeline stages over FSDP: each stage runs its share of the variant without the casts.
  Placement staged = test::on("h200-sxm", 4, Sharding::kFsdp);
  staged.layout.pp = 2;
  EXPECT_DOUBLE_EQ(step(trl, staged), step(fms, staged));
  EXPECT_LT(step(trl, staged), step(trl, two));
}

TEST(KbitPreparation, OnlyListedFormatsAndOnlyBesideAQuantizedBase) {
  Workload gptq = qlora_on("peft");
  gptq.quant = quant_config(formats().find("gptq-int4"));
  EXPECT_FALSE(trained_set(gptq).fp32_unquantized);
  Workload lora = qlora_on("peft");
  lora.method = Method::kLora;  // a 16-bit base: nothing is prepared
  EXPECT_FALSE(trained_set(lora).fp32_unquantized);
  Workload int8 = qlora_on("peft");
  int8.quant = quant_config(formats().find("int8"));
  EXPECT_TRUE(trained_set(int8).fp32_unquantized);
}

const char* kTinyLlama = R"({"model_type": "llama", "hidden_size": 8, "intermediate_size": 24,
  "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 16})";

TEST(KbitPreparation, Fp32StreamBlockByHand) {
  const ModelArch arch = read_hf_config(kTinyLlama, "llama.json", "tiny");
  const BlockShape shape = dense_block_shape(arch);
  ActivationSettings s;
  s.adapted = kAllProjections;
  s.rank = 4;
  s.attention = Attention::kFlash;
  s.autocast = true;
  s.fp32_adapters = true;
  const BlockActivations bf16 = block_activations(shape, s);
  s.fp32_stream = true;
  const BlockActivations fp32 = block_activations(shape, s);
  // The checkpointed input: 2·8 = 16 B per token in BF16, 4·8 = 32 in FP32.
  EXPECT_DOUBLE_EQ(bf16.input.per_token, 16.0);
  EXPECT_DOUBLE_EQ(fp32.input.per_token, 32.0);
  // Saved: the eager RMSNorms keep an FP32 input either way (their own copy, or the FP32 stream
  // itself); the MLP's gate and up outputs and act(gate), 3 × 24 values, take 4 B instead of 2:
  // 3·24·2 = 144 B more. The adapters' inputs stay 16-bit copies (autocast casts them).
  EXPECT_DOUBLE_EQ(fp32.saved.per_token - bf16.saved.per_token, 144.0);
  // A block's backward: the gradients of its input and output (2·8) and of the gated MLP's three
  // intermediates (3·24, wider than attention's 8 + 4 + 4 + 8) in FP32: 2·4·8 + 3·4·24 = 352.
  EXPECT_DOUBLE_EQ(fp32.backward_transient.per_token, 352.0);
  EXPECT_DOUBLE_EQ(bf16.backward_transient.per_token, 176.0);
}

TEST(KbitPreparation, Fp32OutputLayerKeepsItsSixteenBitCastForTheBackward) {
  const Workload trl = qlora_on("hf"), peft = qlora_on("peft");
  EXPECT_DOUBLE_EQ(activation_profile(trl).head_cast.value, 0.0);
  // Llama 3.1 8B's output layer, 128,256 × 4,096, cast to BF16: 2 B each.
  EXPECT_DOUBLE_EQ(activation_profile(peft).head_cast.value, 2.0 * 128256 * 4096);
  // The stream: every block's checkpointed input in FP32 under both.
  EXPECT_DOUBLE_EQ(activation_profile(trl).saved_all.per_token, 32.0 * 4.0 * 4096);
  EXPECT_DOUBLE_EQ(activation_profile(qlora_on("axolotl")).saved_all.per_token, 32.0 * 2.0 * 4096);
  // The cast is held at the loss: at 2,048 tokens the logits make the loss phase the peak, and
  // the cast is in it.
  const StepMemory m = step_memory(activation_profile(peft), {}, peft, test::on("h200-sxm"));
  ASSERT_EQ(m.phase, StepPhase::kLoss);
  EXPECT_DOUBLE_EQ(m.dequant_buffer.value, 2.0 * 128256 * 4096);
}

TEST(KbitPreparation, AStackNamingAnUnknownFormatIsAnError) {
  const std::string text =
      "name: mine\ntitle: t\nattention: sdpa\ncompile: false\n"
      "optimizer: {implementation: fused, memory_passes: 1, basis: b}\n"
      "memory:\n  loss: {kind: fp32-upcast, basis: b}\n"
      "  load: {full_on_each_card: false, bytes_per_param: 2, basis: b}\n"
      "  quantized_base: {fp32_unquantized: [nf4, gptq], bf16_embeddings: true, basis: b}\n"
      "  source: [mem-peft-kbit-prepare]\n"
      "source: [stack-hf-training-args]\n";
  // Checked against the formats: 'gptq' is none of them, and the error names the closest.
  const std::string what = test::error_of([&] {
    parse_stack({"stacks/mine.yaml", text, {}}, test::catalog().sources(), formats().ids());
  });
  ASSERT_FALSE(what.empty()) << "an unknown base format was accepted";
  EXPECT_NE(what.find("stacks/mine.yaml"), std::string::npos) << what;
  EXPECT_NE(what.find("'gptq'"), std::string::npos) << what;
  EXPECT_NE(what.find("gptq-int4"), std::string::npos) << what;
  const StackProfile p = parse_stack({"stacks/mine.yaml", text, {}}, test::catalog().sources());
  EXPECT_TRUE(p.fp32_unquantized_with("nf4"));
  EXPECT_FALSE(p.fp32_unquantized_with("gptq-int4"));
  EXPECT_TRUE(p.bf16_embeddings);
  // Without bf16_embeddings the section is incomplete.
  std::string missing = text;
  missing.replace(missing.find(" bf16_embeddings: true,"), 23, "");
  const std::string incomplete = test::error_of([&] {
    parse_stack({"stacks/mine.yaml", missing, {}}, test::catalog().sources());
  });
  ASSERT_FALSE(incomplete.empty()) << "a quantized_base without bf16_embeddings was accepted";
  EXPECT_NE(incomplete.find("bf16_embeddings"), std::string::npos) << incomplete;
}

// memory.lora states at least one of its keys; fp32_adapters and the held logits are read.
TEST(KbitPreparation, AStackLoraSectionStatesWhatItChanges) {
  const std::string head =
      "name: mine\ntitle: t\nattention: sdpa\ncompile: false\n"
      "optimizer: {implementation: fused, memory_passes: 1, basis: b}\n"
      "memory:\n  loss: {kind: fp32-upcast, held_logits_bytes: 4, basis: b}\n"
      "  load: {full_on_each_card: false, bytes_per_param: 2, basis: b}\n";
  const std::string tail = "  source: [mem-peft-kbit-prepare]\nsource: [stack-hf-training-args]\n";
  const StackProfile p = parse_stack(
      {"stacks/mine.yaml", head + "  lora: {fp32_adapters: true, basis: b}\n" + tail, {}},
      test::catalog().sources());
  EXPECT_TRUE(p.fp32_adapters);
  EXPECT_FALSE(p.fused_lora);
  EXPECT_EQ(p.held_logits_bytes, 4.0);
  const std::string what = test::error_of([&] {
    parse_stack({"stacks/mine.yaml", head + "  lora: {basis: b}\n" + tail, {}},
                test::catalog().sources());
  });
  ASSERT_FALSE(what.empty()) << "a lora section stating nothing was accepted";
  EXPECT_NE(what.find("stacks/mine.yaml"), std::string::npos) << what;
  EXPECT_NE(what.find("'fused_kernels'"), std::string::npos) << what;
  EXPECT_NE(what.find("'fp32_adapters'"), std::string::npos) << what;
  // Held logits above 4 bytes per logit are no dtype.
  std::string wide = head + tail;
  wide.replace(wide.find("held_logits_bytes: 4"), 20, "held_logits_bytes: 8");
  EXPECT_THROW(parse_stack({"stacks/mine.yaml", wide, {}}, test::catalog().sources()), UserError);
}

// The bytes of each op `ftplan step ARGS --json` lists, by op name.
nlohmann::json op_bytes(const std::vector<std::string>& args) {
  std::vector<std::string> full = {"step"};
  full.insert(full.end(), args.begin(), args.end());
  full.emplace_back("--json");
  const auto r = test::run_cli(full);
  EXPECT_EQ(r.code, 0) << r.err;
  const auto step = nlohmann::json::parse(r.out);  // kept: the loop iterates a member
  nlohmann::json by_name = nlohmann::json::object();
  for (const auto& op : step["ops"])
    by_name[op["name"].get<std::string>()] = op["bytes"];
  return by_name;
}

// The FP32 stream's time (perf/ops.cpp): autocast casts each product's FP32 input to 16 bits and
// a 4-bit layer casts its output back, 6 B per element (read 4, write 2, or the reverse); the
// residual adds move 4 B per element. Llama 3.2 3B, 1024 tokens: q_proj 3072 -> 3072, k_proj
// 3072 -> 1024, 28 layers.
TEST(KbitPrep, TheFp32StreamsCastsAreTimedByHand) {
  auto ops = [](const char* stack) {
    return op_bytes({"--model", "llama-3.2-3b", "--method", "qlora", "--gpu", "a100-80gb-sxm",
                     "--seq", "1024", "--micro-batch", "1", "--stack", stack});
  };
  const auto hf = ops("hf");
  EXPECT_DOUBLE_EQ(hf["attn.q_proj.fp32_stream_cast.fwd"].get<double>(),
                   6.0 * 1024 * (3072 + 3072) * 28);
  EXPECT_DOUBLE_EQ(hf["attn.k_proj.fp32_stream_cast.fwd"].get<double>(),
                   6.0 * 1024 * (3072 + 1024) * 28);
  // axolotl keeps the base's other parameters in BF16: no casts, half the residual traffic.
  const auto axolotl = ops("axolotl");
  EXPECT_FALSE(axolotl.contains("attn.q_proj.fp32_stream_cast.fwd"));
  EXPECT_DOUBLE_EQ(hf["residual.fwd"].get<double>(), 2.0 * axolotl["residual.fwd"].get<double>());
}

// bitsandbytes before 0.43.2 kept each 4-bit layer's 16-bit input (MatMul4Bit ctx.tensors =
// (A, B)): --quant-keeps-input. A tiny block, h = 8, I = 24, two query heads of 4 and one key/value
// head: the inputs of q,k,v (8), o (8), gate,up (8) and down (24).
TEST(KbitPrep, QuantizedLayersThatKeepTheirInputsByHand) {
  const BlockShape shape = dense_block_shape(read_hf_config(
      R"({"model_type": "llama", "hidden_size": 8, "intermediate_size": 24,
          "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
          "vocab_size": 16})",
      "llama.json", "tiny"));
  ActivationSettings s;
  s.adapted = kProjQ | kProjV;
  s.rank = 4;
  s.lora_dropout = 0.05;
  s.compiled = true;
  s.attention = Attention::kSdpa;  // SDPA's output is transposed into a new tensor o keeps
  auto extra = [&](ActivationSettings with) {
    ActivationSettings without = with;
    without.quant_keeps_input = false;
    with.quant_keeps_input = true;
    return block_activations(shape, with).saved.per_token -
           block_activations(shape, without).saved.per_token;
  };
  // With dropout the adapters keep their dropped copies, not the input: each distinct input once
  // more, 2·(8 + 8 + 8 + 24) = 96 B per token.
  EXPECT_DOUBLE_EQ(extra(s), 96.0);
  // Under FlashAttention o's input is the kernel's output, which the kernel keeps anyway: 80.
  ActivationSettings flash = s;
  flash.attention = Attention::kFlash;
  EXPECT_DOUBLE_EQ(extra(flash), 80.0);
  // Adapters on every layer reading the shared 16-bit input keep it already: nothing more.
  ActivationSettings all = s;
  all.adapted = kAllProjections;
  all.lora_dropout = 0;
  EXPECT_DOUBLE_EQ(extra(all), 0.0);
  // In an FP32 stream each layer casts its own 16-bit copy: q, k, v 3·16, o 16, gate and up 2·16,
  // down 48: 144.
  ActivationSettings stream = s;
  stream.fp32_stream = true;
  EXPECT_DOUBLE_EQ(extra(stream), 144.0);
}

TEST(KbitPrep, QuantKeepsInputFromTheCommandLineAndRunsFiles) {
  auto fit = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"fit",   "--model", "llama-3.1-8b", "--method",
                                     "qlora", "--gpu",   "a10g",         "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto old = fit({"--quant-keeps-input", "--recompute", "none"});
  const auto now = fit({"--recompute", "none"});
  EXPECT_TRUE(old["options"]["quant_keeps_input"].get<bool>());
  EXPECT_FALSE(now["options"]["quant_keeps_input"].get<bool>());
  EXPECT_GT(old["memory_GB"]["peak"].get<double>(), now["memory_GB"]["peak"].get<double>());
  // LitGPT's QLoRA rows ran on the bitsandbytes 0.42 it pinned: the row says so.
  const auto r = test::run_cli({"validate", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto validated = nlohmann::json::parse(r.out);  // kept: the loop iterates a member
  for (const auto& row : validated["runs"])
    if (row["id"] == "LG2") {
      EXPECT_TRUE(row["workload"]["options"]["quant_keeps_input"].get<bool>());
    }
}

// The element-wise kernels around eager adapters (perf/ops.cpp, emit_lora_chain), by hand for
// Llama 3.2 3B at 1024 tokens: q_proj 3072 -> 3072 and k_proj 3072 -> 1024 in 28 layers. The
// scaling multiply reads and writes the 16-bit product (4 B per output element); PEFT's FP32
// adapters under mixed precision cast the input to FP32 and autocast casts it back (6 B per input
// element each); dropout reads the input, writes the dropped copy and a one-byte mask.
TEST(EagerAdapters, TheLoraChainIsTimedByHand) {
  auto ops = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "--model",       "llama-3.2-3b", "--method", "lora",          "--gpu",
        "a100-80gb-sxm", "--seq",        "1024",     "--micro-batch", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return op_bytes(args);
  };
  const double q_in = 1024.0 * 3072 * 28;
  const double k_out = 1024.0 * 1024 * 28;
  const auto mixed = ops({});
  EXPECT_DOUBLE_EQ(mixed["attn.q_proj.lora_in_cast.fwd"].get<double>(), 6 * q_in);
  EXPECT_DOUBLE_EQ(mixed["attn.q_proj.lora_autocast.bwd"].get<double>(), 6 * q_in);
  EXPECT_DOUBLE_EQ(mixed["attn.q_proj.lora_scale.fwd"].get<double>(), 4 * q_in);
  EXPECT_DOUBLE_EQ(mixed["attn.k_proj.lora_scale.bwd"].get<double>(), 4 * k_out);
  EXPECT_FALSE(mixed.contains("attn.q_proj.lora_dropout.fwd"));
  // Dropout on the FP32 copy: 4 B read, 4 B written, 1 B of mask.
  EXPECT_DOUBLE_EQ(ops({"--lora-dropout", "0.1"})["attn.q_proj.lora_dropout.fwd"].get<double>(),
                   9 * q_in);
  // Pure BF16 on a stack whose adapters follow the model (torchtune) keeps them in BF16: no
  // casts, dropout on the 16-bit input.
  const auto pure = ops({"--pure-bf16", "--lora-dropout", "0.1", "--stack", "torchtune"});
  EXPECT_FALSE(pure.contains("attn.q_proj.lora_in_cast.fwd"));
  EXPECT_DOUBLE_EQ(pure["attn.q_proj.lora_dropout.bwd"].get<double>(), 5 * q_in);
  // PEFT 0.12+ (stack hf) keeps them in FP32 in pure BF16 too, without autocast: the input cast
  // up, no cast back for lora_A, the scaling on FP32 (8 B per output element) and the FP32 sum
  // cast down to 16 bits (6 B per output element).
  const auto peft_pure = ops({"--pure-bf16"});
  EXPECT_DOUBLE_EQ(peft_pure["attn.q_proj.lora_in_cast.fwd"].get<double>(), 6 * q_in);
  EXPECT_FALSE(peft_pure.contains("attn.q_proj.lora_autocast.fwd"));
  EXPECT_DOUBLE_EQ(peft_pure["attn.k_proj.lora_scale.fwd"].get<double>(), 8 * k_out);
  EXPECT_DOUBLE_EQ(peft_pure["attn.k_proj.lora_out_cast.bwd"].get<double>(), 6 * k_out);
  EXPECT_FALSE(mixed.contains("attn.k_proj.lora_out_cast.fwd"));
  // A QLoRA base TRL prepares carries an FP32 stream: the adapters' input already is FP32, so
  // only autocast's cast down remains.
  const auto stream = op_bytes({"--model", "llama-3.2-3b", "--method", "qlora", "--gpu",
                                "a100-80gb-sxm", "--seq", "1024", "--micro-batch", "1"});
  EXPECT_FALSE(stream.contains("attn.q_proj.lora_in_cast.fwd"));
  EXPECT_DOUBLE_EQ(stream["attn.q_proj.lora_autocast.fwd"].get<double>(), 6 * q_in);
  // Compiled adapters fuse the chain into their neighbours.
  const auto compiled = ops({"--compile", "--lora-dropout", "0.1"});
  for (const char* name : {"attn.q_proj.lora_scale.fwd", "attn.q_proj.lora_dropout.fwd",
                           "attn.q_proj.lora_in_cast.fwd"})
    EXPECT_FALSE(compiled.contains(name)) << name;
}

// The optimizer update as memory counts the states (ParamPrecision): fused AdamW, one pass, over
// Llama 3.2 3B's 3,212,749,824 parameters. Mixed precision reads the 16-bit weight, its gradient,
// the FP32 master and two FP32 states (2+2+4+8 B) and writes weight, master and states (2+4+8);
// pure BF16 has no master and BF16 states (2+2+4 read, 2+4 written). PEFT's FP32 adapters in pure
// BF16 are FP32 weights with FP32 gradients and states: 4+4+8 read, 4+8 written, no master.
TEST(EagerAdapters, TheOptimizerUpdateFollowsThePrecisionByHand) {
  auto update = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"--model", "llama-3.2-3b", "--gpu", "h200-sxm"};
    args.insert(args.end(), extra.begin(), extra.end());
    return op_bytes(args)["optimizer.update"].get<double>();
  };
  const double n = 3212749824.0;
  EXPECT_DOUBLE_EQ(update({"--method", "full"}), 30.0 * n);
  EXPECT_DOUBLE_EQ(update({"--method", "full", "--pure-bf16"}), 14.0 * n);
  // LoRA r16 on all seven projections: 24,313,856 adapter parameters.
  const double a = 24313856.0;
  EXPECT_DOUBLE_EQ(update({"--method", "lora"}), 30.0 * a);
  EXPECT_DOUBLE_EQ(update({"--method", "lora", "--pure-bf16"}), 28.0 * a);
  EXPECT_DOUBLE_EQ(update({"--method", "lora", "--pure-bf16", "--stack", "torchtune"}), 14.0 * a);
}

// A bare loop's FP32 model under autocast (stack pytorch: autocast_weight_casts) casts each
// trained weight to 16 bits before its product and its gradient back: 6 B per weight each way.
// Llama 3.2 3B's output layer is its embedding (128256 x 3072), trained in a full fine-tune.
TEST(EagerAdapters, AnFp32ModelUnderAutocastCastsItsWeightsByHand) {
  auto ops = [](const char* stack, bool pure) {
    std::vector<std::string> args = {"--model", "llama-3.2-3b", "--method", "full",
                                     "--gpu",   "h200-sxm",     "--stack",  stack};
    if (pure) args.emplace_back("--pure-bf16");
    return op_bytes(args);
  };
  const auto loop = ops("pytorch", false);
  EXPECT_DOUBLE_EQ(loop["attn.q_proj.weight_cast.fwd"].get<double>(), 6.0 * 3072 * 3072 * 28);
  EXPECT_DOUBLE_EQ(loop["mlp.down_proj.weight_cast.bwd"].get<double>(), 6.0 * 8192 * 3072 * 28);
  EXPECT_DOUBLE_EQ(loop["lm_head.weight_cast.fwd"].get<double>(), 6.0 * 128256 * 3072);
  // The Trainer's stack does not declare the casts; pure BF16 has no FP32 weights to cast.
  EXPECT_FALSE(ops("hf", false).contains("attn.q_proj.weight_cast.fwd"));
  EXPECT_FALSE(ops("pytorch", true).contains("attn.q_proj.weight_cast.fwd"));
}

}  // namespace
}  // namespace ftplan
