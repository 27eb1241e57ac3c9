// The activation model: Korthikanti et al.'s per-layer count for a GPT layer, and properties that
// hold for every catalog model (linear in the micro-batch, checkpointing lowers the saved
// activations, FlashAttention removes the s² term), and the options that move model states.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "memory/activations.hpp"
#include "memory/states_on_card.hpp"
#include "memory/step_memory.hpp"
#include "model/config_reader.hpp"
#include "perf/ops.hpp"
#include "perf/step.hpp"
#include "support.hpp"
#include "workload/optimizer.hpp"

namespace ftplan {
namespace {

using test::on;
using test::workload;

// A GPT-style block as Korthikanti et al. 2022 count it: multi-head attention (k and v as wide
// as q), a 4h GeLU MLP, LayerNorm kept as its 16-bit input, dropout after attention and MLP and
// on the attention probabilities; every weight trained.
BlockShape gpt_block(std::int64_t h, std::int64_t a) {
  BlockShape b;
  b.hidden = h;
  b.q_dim = h;
  b.kv_dim = h;
  b.heads = a;
  b.mlp_width = 4 * h;
  b.gated_mlp = false;
  b.norms = 2;
  b.norm_upcasts = false;
  b.dropout = true;
  return b;
}

ActivationSettings full_finetune(Attention attention) {
  ActivationSettings s;
  s.full_finetune = true;
  s.attention = attention;
  return s;
}

TEST(Activations, GptLayerIsKorthikanti34sbhPlus5as2b) {
  // GPT-3 175B's layer (h = 12288, a = 96) at s = 2048, b = 1, and a small one.
  for (auto [h, a] : {std::pair<std::int64_t, std::int64_t>{12288, 96}, {1024, 16}}) {
    const BlockShape gpt = gpt_block(h, a);
    const std::int64_t s = 2048, b = 1;
    const double sbh = static_cast<double>(s * b * h);
    // Korthikanti §4.1: sbh(34 + 5as/h) bytes per layer in 16-bit.
    const double korthikanti =
        sbh * (34.0 + 5.0 * static_cast<double>(a * s) / static_cast<double>(h));
    const BlockActivations eager = block_activations(gpt, full_finetune(Attention::kEager));
    EXPECT_DOUBLE_EQ(eager.saved.per_token, 34.0 * static_cast<double>(h)) << h;
    EXPECT_DOUBLE_EQ(eager.saved.per_seq_squared, 5.0 * static_cast<double>(a)) << h;
    EXPECT_DOUBLE_EQ(eager.saved.at(s, b).value, korthikanti) << h;
    // Selective recomputation keeps 34sbh (§5); full recomputation keeps the input, 2sbh.
    EXPECT_DOUBLE_EQ((eager.saved + eager.attention_core * -1.0).at(s, b).value, 34.0 * sbh);
    EXPECT_DOUBLE_EQ(eager.input.at(s, b).value, 2.0 * sbh);
    // FlashAttention: the same 34sbh, no s² term, plus one FP32 logsumexp per row and head
    // (4 B x a per token), which Korthikanti's count (written before FlashAttention) does not have.
    const BlockActivations flash = block_activations(gpt, full_finetune(Attention::kFlash));
    EXPECT_DOUBLE_EQ(flash.saved.per_seq_squared, 0.0);
    EXPECT_DOUBLE_EQ(flash.saved.at(s, b).value, 34.0 * sbh + 4.0 * static_cast<double>(a * s * b));
  }
}

TEST(Activations, GqaKeepsKAndVAtKvDimWithFlashAttention) {
  // Llama 3.1 8B: q_dim 4096, kv_dim 1024. SDPA receives K and V repeated to all 32 heads.
  const ModelArch& arch = test::catalog().model("llama-3.1-8b")->arch;
  ActivationSettings s = full_finetune(Attention::kFlash);
  const double flash = block_activations(dense_block_shape(arch), s).saved.per_token;
  s.attention = Attention::kSdpa;
  const double sdpa = block_activations(dense_block_shape(arch), s).saved.per_token;
  // K and V: 2 x 2 B x (4096 - 1024) more; SDPA's transposed output is a second copy that the
  // trained o_proj keeps (2 B x 4096).
  EXPECT_DOUBLE_EQ(sdpa - flash, 2.0 * 2.0 * (4096 - 1024) + 2.0 * 4096);
}

TEST(Activations, SwiGluKeepsGateUpActAndProductEagerAndDropsActCompiled) {
  const ModelArch& arch = test::catalog().model("llama-3.1-8b")->arch;
  ActivationSettings s = full_finetune(Attention::kFlash);
  const double eager = block_activations(dense_block_shape(arch), s).saved.per_token;
  s.compiled = true;
  const double compiled = block_activations(dense_block_shape(arch), s).saved.per_token;
  // Compiled: act(gate) is recomputed (2 B x I) and the two RMSNorms keep their 16-bit input
  // instead of an FP32 copy plus the normalised tensor (6 - 2 = 4 B x h each).
  EXPECT_DOUBLE_EQ(eager - compiled, 2.0 * 14336 + 2 * 4.0 * 4096);
}

TEST(Activations, LoraKeepsOnlyTheInputsOfAdaptedProjections) {
  const ModelArch& arch = test::catalog().model("llama-3.1-8b")->arch;
  const BlockShape shape = dense_block_shape(arch);
  ActivationSettings lora;
  lora.adapted = kProjQ | kProjV;
  lora.rank = 8;
  lora.compiled = true;
  const double qv = block_activations(shape, lora).saved.per_token;
  lora.adapted = kProjQ | kProjV | kProjDown;
  const double qv_down = block_activations(shape, lora).saved.per_token;
  // Adapting down adds its input (the product, I wide) and its x·A (r wide).
  EXPECT_DOUBLE_EQ(qv_down - qv, 2.0 * 14336 + 2.0 * 8);
  // FP32 adapters (PEFT's default) cast the input once per adapted module and autocast casts
  // each copy back to 16 bits for the product: one 16-bit copy per module instead of the shared
  // input (measured on an H200, bench/results/h200-sxm-20261204); x·A stays 16-bit.
  lora.adapted = kProjQ | kProjV;
  lora.fp32_adapters = true;
  const double qv_fp32 = block_activations(shape, lora).saved.per_token;
  EXPECT_DOUBLE_EQ(qv_fp32 - qv, 2 * 2.0 * 4096 - 2.0 * 4096);
  // A full fine-tune keeps every projection's input.
  EXPECT_GT(block_activations(shape, full_finetune(Attention::kFlash)).saved.per_token, qv_fp32);
}

TEST(Activations, GemmaExtraNormsAndQkNormsAreCounted) {
  const ModelArch& arch = test::catalog().model("gemma-3-4b")->arch;
  ASSERT_EQ(arch.norms_per_layer, 4);
  ASSERT_TRUE(arch.qk_norm);
  BlockShape shape = dense_block_shape(arch);
  const ActivationSettings s = full_finetune(Attention::kFlash);
  const double four = block_activations(shape, s).saved.per_token;
  shape.norms = 2;
  shape.qk_norm = false;
  const double two = block_activations(shape, s).saved.per_token;
  // Eager RMSNorm with a trained weight: 6 B per value; two more norms over h, q and k norms.
  EXPECT_DOUBLE_EQ(four - two, 6.0 * (2 * arch.hidden + arch.q_dim() + arch.kv_dim()));
}

TEST(Activations, MoeCountsRoutedTokensTimesTopK) {
  const ModelArch& arch = test::catalog().model("qwen3-30b-a3b")->arch;
  BlockShape shape = moe_block_shape(arch);
  ASSERT_GT(shape.experts_per_token, 1);
  ActivationSettings s = full_finetune(Attention::kFlash);
  s.compiled = true;
  const double k = block_activations(shape, s).saved.per_token;
  shape.experts_per_token += 1;
  const double k1 = block_activations(shape, s).saved.per_token;
  // One more routed copy: its input (h), gate, up and product (3 x I_e), its weighted output (h).
  EXPECT_DOUBLE_EQ(k1 - k, 2.0 * (2 * arch.hidden + 3 * arch.moe_intermediate));
}

TEST(Activations, Qwen2MoeSharedExpertGateKeepsItsOutputAndTheSharedExpertsOutput) {
  // sigmoid(shared_expert_gate(x)) * shared_expert(x) (modeling_qwen2_moe.py): the product keeps
  // the shared expert's output (h) and the one-wide sigmoid output, 2 B each per token.
  const ModelArch& arch = test::catalog().model("qwen1.5-moe-a2.7b")->arch;
  BlockShape shape = moe_block_shape(arch);
  ASSERT_TRUE(shape.shared_expert_gated);
  ASSERT_EQ(shape.shared_expert_width, 5632);
  const ActivationSettings s = full_finetune(Attention::kFlash);
  const double gated = block_activations(shape, s).saved.per_token;
  shape.shared_expert_gated = false;
  const double plain = block_activations(shape, s).saved.per_token;
  EXPECT_DOUBLE_EQ(gated - plain, 2.0 * (arch.hidden + 1));
}

TEST(Activations, LinearInMicroBatchForEveryModelAndMethod) {
  // Within one phase of the step, every term but the fixed buffers (the dequantized weight, the
  // FSDP working set) is proportional to the micro-batch. The peak is the larger of two phases,
  // so configurations whose peak phase changes between micro-batches are left out; most (three in
  // four) keep theirs.
  int checked = 0, total = 0;
  for (const auto& m : test::catalog().models())
    for (Method method : {Method::kFull, Method::kLora, Method::kQlora})
      for (Recompute rc : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
        for (Attention att : {Attention::kFlash, Attention::kSdpa, Attention::kEager}) {
          Workload w = workload(m->arch.id, method);
          w.recompute = rc;
          w.attention = att;
          w.seq = 1024;
          auto step = [&](std::int64_t b) {
            w.micro_batch = b;
            return estimate_memory(w, on("b300")).runtime.step;
          };
          auto variable = [](const StepMemory& s) {
            return (s.total() - s.dequant_buffer - s.gathered_params - s.gradients).value;
          };
          const StepMemory one = step(1);
          ++total;
          bool same_phase = true;
          for (std::int64_t b : {2, 3, 8}) {
            const StepMemory many = step(b);
            if (many.phase != one.phase || many.gradients != one.gradients) {
              same_phase = false;
              continue;
            }
            EXPECT_NEAR(variable(many), static_cast<double>(b) * variable(one),
                        1e-9 * variable(one) * static_cast<double>(b))
                << m->arch.id << " " << method_name(method) << " micro-batch " << b;
          }
          checked += same_phase;
        }
  EXPECT_GT(checked * 4, total * 3) << checked << " of " << total;
  // The profile's terms are per token (and per s²·b): proportional to the micro-batch for
  // every method, full fine-tunes included.
  for (const auto& m : test::catalog().models()) {
    const ActivationProfile p = activation_profile(workload(m->arch.id, Method::kFull));
    for (const TokenBytes& t : {p.saved_all, p.recompute, p.backward_transient, p.logits})
      EXPECT_DOUBLE_EQ(t.at(2048, 6).value, 6 * t.at(2048, 1).value) << m->arch.id;
  }
}

TEST(Activations, CheckpointingLowersThem) {
  for (const auto& m : test::catalog().models())
    for (Method method : {Method::kFull, Method::kLora, Method::kQlora})
      for (Attention att : {Attention::kFlash, Attention::kSdpa, Attention::kEager}) {
        Workload w = workload(m->arch.id, method);
        w.attention = att;
        auto saved = [&](Recompute rc) {
          Workload x = w;
          x.recompute = rc;
          return activation_profile(x).saved_all.at(4096, 2).value;
        };
        auto peak = [&](Recompute rc) {
          Workload x = w;
          x.recompute = rc;
          return estimate_memory(x, on("b300")).activations.value;
        };
        const double none = saved(Recompute::kNone), selective = saved(Recompute::kSelective),
                     full = saved(Recompute::kFull);
        EXPECT_LT(full, selective) << m->arch.id;
        if (att == Attention::kEager)
          EXPECT_LT(selective, none) << m->arch.id;  // the s² probabilities are recomputed
        else
          EXPECT_EQ(selective, none) << m->arch.id;  // the kernel keeps no s² term to drop
        // The step's peak: lower with full recomputation, except that a full fine-tune's peak
        // at the end of the backward pass is its gradients plus one block either way (the
        // recomputed block replaces the kept one; its input, 2 B x h per token, stays).
        const double one_input = 2.0 * static_cast<double>(m->arch.hidden) * 4096 * 2;
        EXPECT_LE(peak(Recompute::kFull), peak(Recompute::kNone) + one_input) << m->arch.id;
        if (method != Method::kFull) EXPECT_LT(peak(Recompute::kFull), peak(Recompute::kNone));
      }
}

// Layer-wise checkpointing (Megatron --recompute-method block, torchtitan's selective_ac_option
// n): of Llama 3.1 8B's 32 blocks, 16 keep only their input and the other 16 keep everything, so
// the saved bytes are the mean of full and no recomputation; the rebuilt block is as large as
// under full recomputation, the largest kept block as without. For every catalog model the
// saved bytes grow as fewer blocks are rebuilt, from full recomputation's to none's.
TEST(Activations, LayerWiseCheckpointingKeepsTheOtherBlocksWhole) {
  Workload w = workload("llama-3.1-8b", Method::kFull);
  auto profile = [&](Recompute rc, std::int64_t layers) {
    Workload x = w;
    x.recompute = rc;
    x.recompute_layers = layers;
    return activation_profile(x);
  };
  const ActivationProfile none = profile(Recompute::kNone, 0), full = profile(Recompute::kFull, 0),
                          half = profile(Recompute::kFull, 16);
  EXPECT_DOUBLE_EQ(half.saved_all.per_token,
                   16 * full.saved_one.per_token + 16 * none.saved_one.per_token);
  EXPECT_DOUBLE_EQ(half.saved_one.per_token, none.saved_one.per_token);
  EXPECT_DOUBLE_EQ(half.recompute.per_token, full.recompute.per_token);
  // All 32 named: every block, as the default 0.
  EXPECT_DOUBLE_EQ(profile(Recompute::kFull, 32).saved_all.per_token, full.saved_all.per_token);

  for (const auto& m : test::catalog().models()) {
    Workload x = workload(m->arch.id, Method::kLora);
    x.recompute = Recompute::kFull;
    const std::int64_t blocks = m->arch.layers;
    double previous = activation_profile(x).saved_all.at(4096, 1).value;  // every block
    for (std::int64_t k : {blocks - 1, blocks / 2, std::int64_t{1}}) {
      if (k < 1 || k >= blocks) continue;
      x.recompute_layers = k;
      const double saved = activation_profile(x).saved_all.at(4096, 1).value;
      EXPECT_GE(saved, previous) << m->arch.id << " " << k;
      previous = saved;
    }
    Workload plain = x;
    plain.recompute = Recompute::kNone;
    plain.recompute_layers = 0;
    EXPECT_LE(previous, activation_profile(plain).saved_all.at(4096, 1).value) << m->arch.id;
  }
}

// The step rebuilds only the checkpointed blocks: half the blocks, half the recompute FLOPs, and
// a step between no and full recomputation.
TEST(Activations, LayerWiseCheckpointingRecomputesItsShareOfTheBlocks) {
  const Device h100 = make_device(test::catalog().gpu("h100-sxm"));
  Workload w = workload("llama-3.1-8b", Method::kFull);
  auto run = [&](Recompute rc, std::int64_t layers) {
    Workload x = w;
    x.recompute = rc;
    x.recompute_layers = layers;
    const StepOps ops = build_step_ops(x);
    double rebuilt = 0;
    for (const Op& op : ops.ops)
      if (op.phase == Phase::kRecompute) rebuilt += op.total_flops().value;
    return std::pair{rebuilt, estimate_step(ops, h100, test::roofline_efficiency()).step.value};
  };
  const auto [full_flops, full_step] = run(Recompute::kFull, 0);
  const auto [half_flops, half_step] = run(Recompute::kFull, 16);
  const auto [none_flops, none_step] = run(Recompute::kNone, 0);
  EXPECT_GT(full_flops, 0);
  EXPECT_DOUBLE_EQ(half_flops, full_flops / 2);
  EXPECT_DOUBLE_EQ(none_flops, 0);
  EXPECT_LT(half_step, full_step);
  EXPECT_GT(half_step, none_step);
}

// Layer-wise checkpointing is full recomputation of some blocks: with another mode, or more
// blocks than the model has, it is an error naming recompute_layers.
TEST(Activations, LayerWiseCheckpointingNeedsFullRecomputeAndAModelsBlockCount) {
  auto error = [](Recompute rc, std::int64_t layers) {
    Workload w = workload("llama-3.1-8b", Method::kFull);
    w.recompute = rc;
    w.recompute_layers = layers;
    try {
      validate(w);
    } catch (const UserError& e) {
      EXPECT_EQ(e.field(), "recompute_layers");
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error(Recompute::kSelective, 8).find("needs recompute full"), std::string::npos);
  EXPECT_NE(error(Recompute::kFull, 33).find("the model's 32 blocks"), std::string::npos);
  // A count no model takes is named as such whatever the mode.
  EXPECT_NE(error(Recompute::kSelective, -1).find("the model's 32 blocks"), std::string::npos);
  EXPECT_EQ(error(Recompute::kFull, 32), "accepted");
}

// In a model of dense and MoE blocks (DeepSeek's first dense blocks, GLM-4.5-Air's), the kinds
// share the rebuilt blocks so that exactly k are rebuilt: one block fewer moves exactly one block
// from rebuilt to kept, so the saved bytes grow by one dense or one MoE block's difference at
// every step, never by none and never by two.
TEST(Activations, LayerWiseCheckpointingRebuildsExactlyKBlocksOverBothKinds) {
  int mixed = 0;
  for (const auto& m : test::catalog().models()) {
    if (!m->arch.is_moe() || m->arch.dense_layers() <= 0) continue;
    ++mixed;
    Workload x = workload(m->arch.id, Method::kLora);
    x.recompute = Recompute::kFull;
    const std::int64_t blocks = m->arch.layers;
    auto saved = [&](std::int64_t k) {
      x.recompute_layers = k;
      return activation_profile(x).saved_all.per_token;
    };
    std::vector<double> steps;
    double previous = saved(blocks);
    for (std::int64_t k = blocks - 1; k >= 1; --k) {
      const double now = saved(k);
      ASSERT_GT(now, previous) << m->arch.id << " k=" << k;
      const double step = now - previous;
      bool known = false;
      for (double s : steps)
        known = known || std::abs(step - s) <= 1e-9 * s;
      if (!known) steps.push_back(step);
      previous = now;
    }
    EXPECT_LE(steps.size(), 2u) << m->arch.id;
  }
  EXPECT_GE(mixed, 2);
}

// torchtitan's per-op policy on Llama 3.1 8B (hidden 4096, 32 heads, kv 1024, MLP 14336): a block
// keeps its input, the attention kernel's output and FP32 logsumexp, and the 1st, 3rd, 5th and
// 7th of its products q, k, v, o, gate, up, down: q, v, gate and down.
TEST(Activations, PerOpPolicyKeepsEveryOtherProductByHand) {
  const StackProfile& titan = test::stacks().find("torchtitan");
  ASSERT_EQ(titan.selective, SelectivePolicy::kPerOp);
  Workload w = workload("llama-3.1-8b", Method::kFull);
  w.stack = &titan;
  w.recompute = Recompute::kSelective;
  w.attention = Attention::kSdpa;
  const double per_block = 2.0 * (4096 + 4096 + 1024 + 4096 + 14336 + 4096) + 4.0 * 32;
  EXPECT_DOUBLE_EQ(activation_profile(w).saved_all.per_token, 32 * per_block);
  EXPECT_DOUBLE_EQ(activation_profile(w).saved_all.per_seq_squared, 0.0);
  // LoRA r16 on q and v: each adapter's lora_A and lora_B products follow its base product, so
  // the kept ones are q, q's lora_B, v, v's lora_B, gate and down.
  Workload lora = workload("llama-3.1-8b", Method::kLora);
  lora.lora.targets = kProjQ | kProjV;
  lora.lora.rank = 16;
  lora.stack = &titan;
  lora.recompute = Recompute::kSelective;
  lora.attention = Attention::kSdpa;
  const double lora_block =
      2.0 * (4096 + 4096 + 4096 + 1024 + 1024 + 4096 + 14336 + 4096) + 4.0 * 32;
  EXPECT_DOUBLE_EQ(activation_profile(lora).saved_all.per_token, 32 * lora_block);
  // The default stack's selective keeps everything but the attention core: with SDPA that is all.
  w.stack = &test::stacks().find("hf");
  Workload none = w;
  none.recompute = Recompute::kNone;
  EXPECT_DOUBLE_EQ(activation_profile(w).saved_all.per_token,
                   activation_profile(none).saved_all.per_token);
}

// For every catalog model and method, the per-op policy keeps less than no recomputation and
// more than full recomputation, and its step takes longer than the attention-core policy's and
// less than full recomputation's (it rebuilds the unkept products, not the attention kernel).
TEST(Activations, PerOpPolicyLiesBetweenNoneAndFull) {
  const StackProfile& titan = test::stacks().find("torchtitan");
  const Device h100 = make_device(test::catalog().gpu("h100-sxm"));
  for (const auto& m : test::catalog().models())
    for (Method method : {Method::kFull, Method::kLora}) {
      Workload w = workload(m->arch.id, method);
      w.stack = &titan;
      w.attention = Attention::kFlash;
      auto saved = [&](Recompute rc) {
        Workload x = w;
        x.recompute = rc;
        return activation_profile(x).saved_all.at(4096, 1).value;
      };
      auto step = [&](Recompute rc, const StackProfile* stack) {
        Workload x = w;
        x.recompute = rc;
        x.stack = stack;
        return estimate_step(build_step_ops(x), h100, test::roofline_efficiency()).step.value;
      };
      EXPECT_LT(saved(Recompute::kSelective), saved(Recompute::kNone)) << m->arch.id;
      EXPECT_GT(saved(Recompute::kSelective), saved(Recompute::kFull)) << m->arch.id;
      StackProfile core = titan;
      core.selective = SelectivePolicy::kAttentionCore;
      const double per_op = step(Recompute::kSelective, &titan);
      EXPECT_GT(per_op, step(Recompute::kSelective, &core)) << m->arch.id;
      EXPECT_LT(per_op, step(Recompute::kFull, &titan)) << m->arch.id;
    }
}

// The memory model and the step-time model number a block's products alike under the per-op
// policy: the products whose outputs the step does not rebuild are those whose outputs the memory
// model keeps. For every catalog model (dense, GQA, MLA, MoE with and without shared experts and
// dense layers) and method: the kept bytes per token equal the blocks' inputs and attention
// kernel outputs plus 2 bytes times the output width of each forward product without a recompute
// copy.
TEST(Activations, PerOpPolicyKeepsTheSameProductsInMemoryAndTime) {
  const StackProfile& titan = test::stacks().find("torchtitan");
  for (const auto& m : test::catalog().models())
    for (Method method : {Method::kFull, Method::kLora}) {
      Workload w = workload(m->arch.id, method);
      if (method == Method::kLora) w.lora.targets = kAllProjections;
      w.stack = &titan;
      w.attention = Attention::kFlash;
      w.recompute = Recompute::kSelective;
      const StepOps ops = build_step_ops(w);
      std::set<std::string> rebuilt;
      for (const Op& op : ops.ops)
        if (op.phase == Phase::kRecompute) rebuilt.insert(op.name);
      double kept = 0;
      for (const Op& op : ops.ops) {
        const bool product = op.op_class == OpClass::kGemm || op.op_class == OpClass::kAdapter;
        const bool in_block = op.name.starts_with("attn.") || op.name.starts_with("mlp.") ||
                              op.name.starts_with("moe.");
        if (op.phase != Phase::kForward || !product || !in_block || !op.gemm.valid()) continue;
        if (op.name.find("dora_weight") != std::string::npos) continue;
        const std::string twin = op.name.substr(0, op.name.size() - 4) + ".recompute";
        if (!rebuilt.contains(twin)) kept += 2.0 * op.gemm.n * static_cast<double>(op.count);
      }
      const ModelArch& a = m->arch;
      const double per_block = 2.0 * static_cast<double>(a.hidden) +
                               2.0 * static_cast<double>(a.attention_out_dim()) +
                               4.0 * static_cast<double>(a.heads);
      const double fixed = per_block * static_cast<double>(a.layers);
      EXPECT_NEAR(activation_profile(w).saved_all.per_token, fixed + kept, 1e-9 * (fixed + kept))
          << a.id << " " << method_name(method);
    }
}

// Compiled blocks keep no must-save output that their backward pass never reads: under the
// per-op policy, Llama 3.1 8B's down projection (product 7 of 7, kept) adds only to the residual
// stream, so compiling drops 2 B x 4096 per token and block; the output projection (product 4) is
// rebuilt either way. With LoRA on every projection the down projection's lora_B output (product
// 21 of 21, kept) goes as well; its lora_A output stays (lora_B's weight gradient reads it).
TEST(Activations, CompiledPerOpPolicyDropsOutputsOnlyAddedToTheResidual) {
  const StackProfile& titan = test::stacks().find("torchtitan");
  auto saved = [&](Workload w, bool compiled) {
    w.stack = &titan;
    w.attention = Attention::kFlash;
    w.recompute = Recompute::kSelective;
    w.options.compile = compiled;
    return activation_profile(w).saved_all.per_token;
  };
  const Workload full = workload("llama-3.1-8b", Method::kFull);
  EXPECT_DOUBLE_EQ(saved(full, false) - saved(full, true), 2.0 * 4096 * 32);
  Workload lora = workload("llama-3.1-8b", Method::kLora);
  lora.lora.targets = kAllProjections;
  EXPECT_DOUBLE_EQ(saved(lora, false) - saved(lora, true), 2.0 * (4096 + 4096) * 32);
  // Never more kept when compiled (equal where the residual products are rebuilt anyway, as in
  // MoE-only blocks, or where post-norms read both outputs: four norms per block).
  for (const auto& m : test::catalog().models()) {
    const Workload w = workload(m->arch.id, Method::kFull);
    if (m->arch.norms_per_layer >= 4)
      EXPECT_DOUBLE_EQ(saved(w, true), saved(w, false)) << m->arch.id;
    else
      EXPECT_LE(saved(w, true), saved(w, false)) << m->arch.id;
  }
}

TEST(Activations, FlashAttentionRemovesTheSequenceSquaredTerm) {
  for (const auto& m : test::catalog().models()) {
    Workload w = workload(m->arch.id, Method::kLora);
    w.recompute = Recompute::kNone;
    for (Attention att : {Attention::kFlash, Attention::kSdpa}) {
      w.attention = att;
      const ActivationProfile p = activation_profile(w);
      EXPECT_EQ(p.saved_all.per_seq_squared, 0.0) << m->arch.id;
      EXPECT_EQ(p.backward_transient.per_seq_squared, 0.0) << m->arch.id;
      // Linear in the sequence: twice the tokens, twice the bytes.
      EXPECT_DOUBLE_EQ(p.saved_all.at(8192, 1).value, 2 * p.saved_all.at(4096, 1).value);
    }
    w.attention = Attention::kEager;
    const ActivationProfile eager = activation_profile(w);
    EXPECT_GT(eager.saved_all.per_seq_squared, 0.0) << m->arch.id;
    EXPECT_GT(eager.saved_all.at(8192, 1).value, 2 * eager.saved_all.at(4096, 1).value);
  }
}

TEST(Activations, ChunkedLossKeepsOnly16BitLogitsAndOneChunk) {
  Workload w = workload("llama-3.1-8b", Method::kLora);
  const double V = 128256;
  EXPECT_DOUBLE_EQ(activation_profile(w).logits.per_token, 3 * 4 * V);
  w.options.chunked_loss = true;
  EXPECT_DOUBLE_EQ(activation_profile(w).logits.per_token, 2 * V + 2 * V / 8);
}

TEST(Activations, QloraDequantizesTheLargestWeightToBf16) {
  const Workload w = workload("llama-3.1-8b", Method::kQlora);
  EXPECT_DOUBLE_EQ(activation_profile(w).dequant_buffer.value, 14336.0 * 4096 * 2);
  // It is part of a block's backward phase, whenever that phase is the peak.
  Workload small = w;
  small.seq = 128;
  small.options.chunked_loss = true;
  const StepMemory m = estimate_memory(small, on("h200-nvl")).runtime.step;
  ASSERT_EQ(m.phase, StepPhase::kBlockBackward);
  EXPECT_DOUBLE_EQ(m.dequant_buffer.value, 14336.0 * 4096 * 2);
}

// The output layer's backward follows the loss: the logits' 16-bit gradient (every chunk's), the
// final hidden state's gradient and the head's weight gradient; a chunked output layer adds each
// chunk's partial head gradient through a second head-sized buffer. Llama 3.1 8B, full
// fine-tune with its optimizer in the backward pass, full recomputation, 1024 x 2 tokens, chunked
// loss: the head gradient is 2 B x 128256 x 4096, twice over; the logits' gradient 2 B x 128256
// per token, the hidden state's 2 B x 4096.
TEST(Activations, OutputLayerBackwardHoldsTheLogitsGradientAndTheHeadGradients) {
  Workload w = workload("llama-3.1-8b", Method::kFull);
  w.seq = 1024;
  w.micro_batch = 2;
  w.recompute = Recompute::kFull;
  w.options.chunked_loss = true;
  w.options.pure_bf16 = true;
  w.options.optimizer_in_backward = true;
  const ActivationProfile prof = activation_profile(w);
  const double V = 128256, h = 4096, tokens = 2048;
  const StepMemory m = estimate_memory(w, on("h200-nvl")).runtime.step;
  ASSERT_EQ(m.phase, StepPhase::kLoss);
  EXPECT_DOUBLE_EQ(m.gradients.value, 2 * (2 * V * h));
  EXPECT_DOUBLE_EQ(m.logits_and_loss.value,
                   prof.output_saved.at(1024, 2).value + 2 * V * tokens + 2 * h * tokens);
  EXPECT_DOUBLE_EQ(m.saved_activations.value, prof.saved_all.at(1024, 2).value);
  // One output product, nothing accumulated: the head gradient once. Without recomputation, at
  // 256 x 2 tokens, the cross-entropy on 16-bit logits (logits, log-probabilities and their
  // gradients: 8 B x 128256 per token) holds less than the output layer's backward (2 B x 128256
  // per token and the head gradient).
  w.seq = 256;
  w.recompute = Recompute::kNone;
  w.options.chunked_loss = false;
  w.options.loss = LossKind::kBf16;
  const StepMemory one = estimate_memory(w, on("h200-nvl")).runtime.step;
  ASSERT_EQ(one.phase, StepPhase::kLoss);
  EXPECT_DOUBLE_EQ(one.gradients.value, 2 * V * h);
  EXPECT_DOUBLE_EQ(one.logits_and_loss.value,
                   activation_profile(w).output_saved.at(256, 2).value + 2 * V * 512 + 2 * h * 512);
  // A frozen head (LoRA) has no weight gradient; a fused output layer and loss hold no logits.
  Workload lora = workload("llama-3.1-8b", Method::kLora);
  lora.options.chunked_loss = true;
  EXPECT_DOUBLE_EQ(estimate_memory(lora, on("h200-nvl")).runtime.step.gradients.value, 0.0);
  lora.options.chunked_loss = false;
  lora.options.loss = LossKind::kFused;
  EXPECT_DOUBLE_EQ(activation_profile(lora).logits_gradient.per_token, 0.0);
}

TEST(Activations, OffloadKeepsOneBlockOnTheCard) {
  Workload w = workload("llama-3.1-8b", Method::kLora);
  w.recompute = Recompute::kNone;
  const ActivationProfile p = activation_profile(w);
  w.options.offload_activations = true;
  const MemoryEstimate m = estimate_memory(w, on("h200-nvl"));
  EXPECT_DOUBLE_EQ(m.runtime.step.saved_activations.value, p.saved_one.at(w.seq, 1).value);
  EXPECT_LT(m.activations,
            estimate_memory(workload("llama-3.1-8b", Method::kLora), on("h200-nvl")).activations +
                p.saved_all.at(w.seq, 1));
}

TEST(OnCardStates, PagedOptimizerStatesAreHostEvictableNotCounted) {
  const Workload w = workload("llama-3.1-8b", Method::kFull, Optimizer::kPagedAdamW8bit);
  const MemoryEstimate m = estimate_memory(w, on("rtx-4090"));
  EXPECT_DOUBLE_EQ(m.runtime.states.paged.value, m.states.optimizer_states.value);
  EXPECT_LT(m.states_on_card + m.runtime.states.paged, m.states.total());
}

TEST(OnCardStates, PureBf16DropsTheMasterCopyAndHalvesAdamStates) {
  Workload w = workload("llama-3.1-8b", Method::kFull);
  w.options.pure_bf16 = true;
  const ModelStates s = model_states(w);
  const MemoryEstimate m = estimate_memory(w, on("h200-nvl"));
  // Weights (2 B) + AdamW m, v in BF16 (4 B): 6 B per parameter on the card besides gradients.
  EXPECT_DOUBLE_EQ(m.states_on_card.value, 6.0 * static_cast<double>(w.model->params.total));
  EXPECT_DOUBLE_EQ(m.runtime.states.pure_bf16_saving.value,
                   (s.master_weights + s.optimizer_states / 2).value);
}

TEST(OnCardStates, OptimizerInBackwardKeepsOneGradient) {
  Workload w = workload("llama-3.1-8b", Method::kFull);
  w.options.optimizer_in_backward = true;
  const MemoryEstimate m = estimate_memory(w, on("h200-nvl"));
  // The largest tensor: the embedding or the output layer, 128256 x 4096, BF16 gradient.
  EXPECT_DOUBLE_EQ(m.runtime.states.gradients_produced.value, 2.0 * 128256 * 4096);
  w.grad_accum = 4;
  EXPECT_THROW(validate(w), UserError);
}

TEST(OnCardStates, GradientAccumulationKeepsGradientsResident) {
  Workload w = workload("llama-3.1-8b", Method::kFull);
  const MemoryEstimate one = estimate_memory(w, on("h200-nvl"));
  EXPECT_FALSE(one.runtime.states.gradients_persistent);
  w.grad_accum = 8;
  const MemoryEstimate eight = estimate_memory(w, on("h200-nvl"));
  EXPECT_TRUE(eight.runtime.states.gradients_persistent);
  EXPECT_DOUBLE_EQ(eight.states_on_card.value, eight.states.total().value);
  // The loss phase now holds the gradients too: the peak cannot be lower.
  EXPECT_GE(eight.peak, one.peak);
}

// A peak's range: the model's error spread on published runs (data/runtime/overheads.yaml
// model_error), [peak / (1 + high), peak / (1 + low)]; a reserved peak's range is widened to the
// allocator's reserve at the 10th and 90th percentile of its measured share of what the step
// allocates, whichever reaches further.
TEST(PeakRange, TheModelsErrorSpreadsThePeakAndTheReserveWidensIt) {
  Workload w = workload("llama-3.1-8b", Method::kLora);
  w.recompute = Recompute::kFull;
  const RuntimeOverheads& t = *w.overheads;
  ASSERT_TRUE(t.model_error.present());
  ASSERT_LT(t.model_error.low, 0);
  ASSERT_GT(t.model_error.high, 0);
  w.peak = PeakKind::kAllocated;
  const MemoryEstimate a = estimate_memory(w, on("h200-nvl"));
  EXPECT_NEAR(a.peak_low.value, a.peak.value / (1 + t.model_error.high), 1.0);
  EXPECT_NEAR(a.peak_high.value, a.peak.value / (1 + t.model_error.low), 1.0);

  w.peak = PeakKind::kReserved;
  const MemoryEstimate m = estimate_memory(w, on("h200-nvl"));
  const double step = m.runtime.step.total().value;
  const double reserve_high =
      m.peak.value + step * (t.reserve_with_recompute.high - t.reserve_with_recompute.median);
  const double reserve_low =
      m.peak.value - step * (t.reserve_with_recompute.median - t.reserve_with_recompute.low);
  EXPECT_NEAR(m.peak_high.value, std::max(reserve_high, m.peak.value / (1 + t.model_error.low)),
              1.0);
  EXPECT_NEAR(m.peak_low.value, std::min(reserve_low, m.peak.value / (1 + t.model_error.high)),
              1.0);
  EXPECT_LT(m.peak_low, m.peak);
  EXPECT_GT(m.peak_high, m.peak);
}

// A run that fits with more than a tenth of the card to spare, but whose range reaches past the
// card, says so in its reason: Llama 3.2 1B LoRA on 19,456 tokens on an L40S (48.3 GB) peaks at
// about 42.7 GB, and the reserve at its 90th percentile takes it past 48.3 GB. At 2,048 tokens
// the range stays on the card and the reason is the plain one.
TEST(PeakRange, AFitWhoseRangeReachesPastTheCardSaysSo) {
  Workload w = workload("llama-3.2-1b", Method::kLora);
  w.seq = 19456;
  const MemoryEstimate m = estimate_memory(w, on("l40s"));
  ASSERT_EQ(m.verdict, Verdict::kFits);
  EXPECT_GT(m.peak_high, m.capacity);
  EXPECT_EQ(m.reason.code, ReasonCode::kFitFitsRangePast);
  w.seq = 2048;
  const MemoryEstimate small = estimate_memory(w, on("l40s"));
  ASSERT_EQ(small.verdict, Verdict::kFits);
  EXPECT_LT(small.peak_high, small.capacity);
  EXPECT_EQ(small.reason.code, ReasonCode::kFitFits);
}

TEST(OnCardStates, CpuOffloadLeavesOnlyTheWorkingSet) {
  Workload w = workload("llama-3.1-70b", Method::kFull);
  w.options.offload_optimizer = true;
  w.options.offload_parameters = true;
  const MemoryEstimate m = estimate_memory(w, on("a100-80gb-sxm", 8, Sharding::kFsdp));
  EXPECT_EQ(m.states_on_card.value, 0.0);
  EXPECT_DOUBLE_EQ(m.runtime.states.host.value, m.states.total().value);
  EXPECT_GT(m.runtime.step.gathered_params.value, 0.0);
  // Nothing of the states stays on the card: all of it is free for the step.
  EXPECT_DOUBLE_EQ(m.free.value, m.capacity.value);
}

TEST(OnCardStates, FsdpBlockBackwardHoldsTwoBlocksOfWeightsAndOfGradients) {
  // Llama 3.1 70B, full fine-tune on 8 cards: one block's BF16 weights (q, k, v, o, the MLP, two
  // norms) are gathered for its backward and the next block's are prefetched; its gradients are
  // produced while the previous block's reduce-scatter input is still held.
  Workload w = workload("llama-3.1-70b", Method::kFull);
  w.recompute = Recompute::kFull;
  const MemoryEstimate m = estimate_memory(w, on("a100-80gb-sxm", 8, Sharding::kFsdp));
  const double h = 8192, kv = 1024, inter = 28672;
  const double block = 2.0 * (2 * h * h + 2 * h * kv + 3 * h * inter + 2 * h);
  ASSERT_EQ(m.runtime.step.phase, StepPhase::kBlockBackward);
  EXPECT_NEAR(m.runtime.step.gathered_params.value, 2 * block + 2 * block, 1e-6 * block);
  // One card alone gathers nothing and reduces nothing.
  EXPECT_EQ(estimate_memory(w, on("h200-nvl")).runtime.step.gathered_params.value, 0.0);
}

TEST(OnCardStates, OptimizerOffloadKeepsWeightsAndOneBlocksGradients) {
  Workload w = workload("llama-3.1-8b", Method::kFull);
  w.options.offload_optimizer = true;
  const MemoryEstimate m = estimate_memory(w, on("h200-nvl"));
  const ModelStates& s = m.states;
  EXPECT_DOUBLE_EQ(m.states_on_card.value, s.trained_weights.value);
  EXPECT_DOUBLE_EQ(m.runtime.states.host.value,
                   (s.master_weights + s.optimizer_states + s.gradients).value);
  // The BF16 weights stay on the card; gradients pass through it one block at a time.
  EXPECT_DOUBLE_EQ(m.free.value, (m.capacity - s.trained_weights).value);
  // One block's BF16 gradients at a time: q, k, v, o and the MLP of Llama 3.1 8B.
  const double block = 2.0 * (2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336);
  EXPECT_NEAR(m.runtime.states.gradients_produced.value, block, 2.0 * 2 * 4096);  // + norms
}

// A stack that shards through FSDP1 takes the FSDP1 share when it shards over several cards and
// recomputes blocks (the runs it was measured on); FSDP2, one card, DDP and runs without
// recomputation keep the one-card shares.
TEST(Overheads, Fsdp1ShardingTakesItsOwnReserveShare) {
  Workload w = workload("llama-3.1-8b", Method::kLora);
  w.peak = PeakKind::kReserved;
  w.stack = &test::stacks().find("hf");
  const RuntimeOverheads& t = test::overheads();
  ASSERT_TRUE(t.reserve_fsdp1.present());
  auto share = [](const Workload& x, const Placement& p) {
    const MemoryEstimate m = estimate_memory(x, p);
    return m.runtime.overheads.allocator_reserve.value / m.runtime.step.total().value;
  };
  const MemoryEstimate fsdp = estimate_memory(w, on("h200-nvl", 2, Sharding::kFsdp));
  EXPECT_TRUE(fsdp.runtime.overheads.reserve_fsdp1);
  EXPECT_NEAR(share(w, on("h200-nvl", 2, Sharding::kFsdp)), t.reserve_fsdp1.share.median, 1e-9);
  EXPECT_NEAR(share(w, on("h200-nvl", 2, Sharding::kZero2)), t.reserve_fsdp1.share.median, 1e-9);
  EXPECT_NEAR(share(w, on("h200-nvl")), t.reserve_with_recompute.median, 1e-9);
  EXPECT_NEAR(share(w, on("h200-nvl", 2, Sharding::kDdp)), t.reserve_with_recompute.median, 1e-9);
  Workload titan = w;
  titan.stack = &test::stacks().find("torchtitan");
  EXPECT_FALSE(titan.stack->fsdp1);
  EXPECT_NEAR(share(titan, on("h200-nvl", 2, Sharding::kFsdp)), t.reserve_with_recompute.median,
              1e-9);
  Workload kept = w;
  kept.recompute = Recompute::kNone;
  EXPECT_NEAR(share(kept, on("h200-nvl", 2, Sharding::kFsdp)), t.reserve_without_recompute.median,
              1e-9);
  // The range of a reserved peak spans the share's 10th to 90th percentile.
  const OverheadBreakdown& o = fsdp.runtime.overheads;
  EXPECT_NEAR(o.allocator_reserve_high.value,
              t.reserve_fsdp1.share.high * fsdp.runtime.step.total().value, 1.0);
}

// Gradient accumulation under FSDP1's no_sync keeps every card's gradients unsharded until the
// last micro-batch; where the adapters share the blocks' units with the frozen weights
// (use_orig_params), those get gradients too. By hand for Llama 2 7B, LoRA r 8 on q and v, pure
// BF16, two cards: the blocks' frozen weights are the model less the embeddings, the output layer
// and the final norm (6,738,415,616 - 2 x 32,000 x 4,096 - 4,096 = 6,476,267,520) at 2 B, and the
// adapters' 4,194,304 BF16 gradients are there whole, not halved.
TEST(Overheads, Fsdp1NoSyncAccumulatesUnshardedGradients) {
  Workload w = workload("llama-2-7b", Method::kLora);
  w.lora.rank = 8;
  w.lora.targets = parse_targets("q,v");
  w.options.pure_bf16 = true;
  w.grad_accum = 4;
  w.stack = &test::stacks().find("litgpt");
  const Placement two = on("a100-40gb-sxm", 2, Sharding::kFsdp);
  const double frozen = 2.0 * 6476267520.0, adapters = 2.0 * 4194304;
  auto extra = [&](const Workload& x, const Placement& p) {
    return estimate_memory(x, p).runtime.states.unsharded_gradients.value;
  };
  EXPECT_DOUBLE_EQ(extra(w, two), frozen + adapters / 2);
  const MemoryEstimate m = estimate_memory(w, two);
  EXPECT_LE(m.runtime.states.unsharded_gradients, m.states_on_card);
  // Four cards: the same unsharded gradients, three quarters of the adapters' beyond the shard.
  EXPECT_DOUBLE_EQ(extra(w, on("a100-40gb-sxm", 4, Sharding::kFsdp)), frozen + adapters * 0.75);
  // No accumulation, a reduce-scatter after every micro-batch (sync_each_batch), one card, FSDP2
  // (torchtune) or DDP: nothing unsharded.
  Workload one_step = w;
  one_step.grad_accum = 1;
  EXPECT_EQ(extra(one_step, two), 0.0);
  Workload synced = w;
  synced.options.sync_each_batch = true;
  EXPECT_EQ(extra(synced, two), 0.0);
  EXPECT_DOUBLE_EQ(
      (estimate_memory(w, two).states_on_card - estimate_memory(synced, two).states_on_card).value,
      frozen + adapters / 2);
  EXPECT_EQ(extra(w, on("a100-40gb-sxm")), 0.0);
  EXPECT_EQ(extra(w, on("a100-40gb-sxm", 2, Sharding::kDdp)), 0.0);
  Workload tune = w;
  tune.stack = &test::stacks().find("torchtune");
  EXPECT_FALSE(tune.stack->fsdp_no_sync);
  EXPECT_EQ(extra(tune, two), 0.0);
  // The Trainer (stack hf) accumulates under no_sync too, but PEFT's wrap policy gives the
  // adapters units of their own: only the adapters' gradients, the card's shard of them again.
  Workload hf = w;
  hf.stack = &test::stacks().find("hf");
  EXPECT_TRUE(hf.stack->fsdp_no_sync);
  EXPECT_FALSE(hf.stack->fsdp_unit_gradients);
  EXPECT_DOUBLE_EQ(extra(hf, two), estimate_memory(hf, two).states.gradients.value);
  EXPECT_DOUBLE_EQ(extra(hf, two), adapters / 2);
  // A full fine-tune under it: the whole model's BF16 gradients, (N - 1) / N of them beyond the
  // shard.
  Workload full = hf;
  full.method = Method::kFull;
  EXPECT_DOUBLE_EQ(extra(full, on("a100-40gb-sxm", 4, Sharding::kFsdp)), 2.0 * 6738415616.0 * 0.75);
}

// The Trainer's reentrant checkpoint around an all-frozen FSDP1 unit (PEFT's adapters in units of
// their own): the reshard hook keeps each finished block's input and its gradient until the
// backward pass ends, so the last block's backward holds twice every other block's checkpointed
// input and its own (fms-acceleration's Mistral LoRA run at batch 4 over two A100s).
TEST(Activations, ReentrantCheckpointAroundFrozenFsdp1UnitsKeepsEachBlocksInput) {
  Workload w = workload("mistral-7b-v0.1", Method::kLora);
  w.lora.targets = parse_targets("q,k,v,o");
  w.options.pure_bf16 = true;
  w.seq = 4096;
  w.micro_batch = 4;
  w.stack = &test::stacks().find("hf");
  ASSERT_TRUE(w.stack->fsdp1_reentrant_checkpoint);
  const ActivationProfile prof = activation_profile(w);
  const Bytes saved = prof.saved_all.at(4096, 4), one = prof.saved_one.at(4096, 4);
  const Placement two = on("a100-80gb-sxm", 2, Sharding::kFsdp);
  const StepMemory m = estimate_memory(w, two).runtime.step;
  EXPECT_EQ(m.phase, StepPhase::kBlockBackward);
  EXPECT_DOUBLE_EQ(m.saved_activations.value, 2.0 * saved.value - one.value);
  // Without it: FSDP2 (torchtune), a full fine-tune (its units train), one card, DDP, or blocks
  // kept without recomputation hold at most every block's input once.
  auto held = [&](const Workload& x, const Placement& p) {
    return estimate_memory(x, p).runtime.step.saved_activations.value;
  };
  Workload tune = w;
  tune.stack = &test::stacks().find("torchtune");
  EXPECT_LE(held(tune, two), saved.value);
  Workload full = w;
  full.method = Method::kFull;
  EXPECT_LE(held(full, two), saved.value);
  EXPECT_LE(held(w, on("a100-80gb-sxm")), saved.value);
  EXPECT_LE(held(w, on("a100-80gb-sxm", 2, Sharding::kDdp)), saved.value);
  Workload plain = w;
  plain.options.non_reentrant = true;  // use_reentrant=False: the peak goes back to the loss
  EXPECT_LE(held(plain, two), saved.value);
  EXPECT_LT(estimate_memory(plain, two).peak, estimate_memory(w, two).peak);
  Workload litgpt = w;
  litgpt.stack = &test::stacks().find("litgpt");
  EXPECT_FALSE(litgpt.stack->fsdp1_reentrant_checkpoint);
  EXPECT_LE(held(litgpt, two), activation_profile(litgpt).saved_all.at(4096, 4).value);
}

TEST(Overheads, ReservedAddsTheAllocatorReserveAndSeveralCardsAddNccl) {
  Workload w = workload("llama-3.1-8b", Method::kLora);
  w.peak = PeakKind::kAllocated;
  const MemoryEstimate allocated = estimate_memory(w, on("h200-nvl"));
  w.peak = PeakKind::kReserved;
  const MemoryEstimate reserved = estimate_memory(w, on("h200-nvl"));
  EXPECT_NEAR((reserved.peak - allocated.peak).value,
              reserved.runtime.overheads.allocator_reserve.value, 1.0);
  // A share of the step's memory: the larger one when blocks are recomputed (the default).
  EXPECT_DOUBLE_EQ(
      reserved.runtime.overheads.allocator_reserve.value,
      test::overheads().reserve_with_recompute.median * reserved.runtime.step.total().value);
  w.recompute = Recompute::kNone;
  const MemoryEstimate kept = estimate_memory(w, on("h200-nvl"));
  EXPECT_DOUBLE_EQ(
      kept.runtime.overheads.allocator_reserve.value,
      test::overheads().reserve_without_recompute.median * kept.runtime.step.total().value);
  EXPECT_LT(test::overheads().reserve_without_recompute.median,
            test::overheads().reserve_with_recompute.median);
  w.recompute = Recompute::kFull;
  EXPECT_EQ(reserved.runtime.overheads.nccl_buffers.value, 0.0);
  EXPECT_GT(estimate_memory(w, on("h200-nvl", 2, Sharding::kFsdp)).runtime.overheads.nccl_buffers,
            Bytes(0));
  // cuBLAS workspaces by compute capability: 32 MiB on Hopper, 8.125 MiB on Ada.
  EXPECT_DOUBLE_EQ(reserved.runtime.overheads.cublas_workspace.value, 32.0 * 1048576);
  EXPECT_DOUBLE_EQ(estimate_memory(w, on("rtx-4090")).runtime.overheads.cublas_workspace.value,
                   8519680.0);
}

TEST(Activations, PeakIsStatesOnCardPlusActivationsPlusOverhead) {
  for (const auto& m : test::catalog().models())
    for (Method method : {Method::kFull, Method::kLora, Method::kQlora}) {
      const MemoryEstimate e = estimate_memory(workload(m->arch.id, method), on("b300"));
      EXPECT_DOUBLE_EQ(e.peak.value, (e.states_on_card + e.activations + e.overhead).value);
      EXPECT_GT(e.activations.value, 0.0);
      EXPECT_GT(e.overhead.value, 0.0);
      EXPECT_LE(e.states_on_card, e.states.total());
    }
}

}  // namespace
}  // namespace ftplan

namespace ftplan {
namespace {

// A tiny Phi block (modeling_phi.py): h = 8, 2 heads of 4 (k and v as wide as q), I = 32, one
// LayerNorm feeding attention and a non-gated MLP in parallel, resid_pdrop > 0.
const char* kTinyPhi = R"({"model_type": "phi", "hidden_size": 8, "intermediate_size": 32,
  "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 16, "resid_pdrop": 0.1})";

TEST(Activations, ParallelNonGatedBlockByHand) {
  const ModelArch arch = read_hf_config(kTinyPhi, "phi.json", "tiny");
  const BlockShape shape = dense_block_shape(arch);
  EXPECT_FALSE(shape.gated_mlp);
  EXPECT_TRUE(shape.parallel_block);
  EXPECT_EQ(shape.norms, 1);
  // Full fine-tune in pure 16-bit, FlashAttention, eager, bytes per token:
  //   attention: the LayerNorm keeps its 16-bit input 2·8 = 16 (no normalised copy: its fused
  //   backward computes the weight's gradient from the input), q/k/v's shared input 2·8 = 16,
  //   Q K V 2·(8 + 8 + 8) = 48, O 2·8 + FP32 logsumexp 4·2 = 24, dropout mask 1·8 = 8: 112.
  //   MLP: no norm and no input of its own (fc1 reads the tensor q, k, v keep), GELU's input
  //   (fc1's output) 2·32 = 64, fc2's input (GELU's output) 2·32 = 64, dropout mask 8: 136.
  //   Total 248.
  const BlockActivations full = block_activations(shape, full_finetune(Attention::kFlash));
  EXPECT_DOUBLE_EQ(full.saved.per_token, 248.0);
  // Under autocast (FP32 master weights) the LayerNorm keeps the FP32 copy autocast makes of its
  // input instead: 4·8 = 32, 16 more: 264.
  ActivationSettings mixed = full_finetune(Attention::kFlash);
  mixed.autocast = true;
  EXPECT_DOUBLE_EQ(block_activations(shape, mixed).saved.per_token, 264.0);
  // An RMSNorm in PyTorch ops in its place keeps its FP32 input and, the weight being trained,
  // its normalised 16-bit output: 4·8 + 2·8 = 48, 32 more than the LayerNorm: 280.
  BlockShape rms = shape;
  rms.layer_norm = false;
  EXPECT_DOUBLE_EQ(block_activations(rms, full_finetune(Attention::kFlash)).saved.per_token, 280.0);
  // The same block with two norms in sequence (StarCoder2's layout) adds the post-attention
  // norm (16) and the MLP's own input (16): 280.
  BlockShape sequential = shape;
  sequential.parallel_block = false;
  sequential.norms = 2;
  EXPECT_DOUBLE_EQ(block_activations(sequential, full_finetune(Attention::kFlash)).saved.per_token,
                   280.0);
  // LoRA r = 8 on every target (gate included: the block has none) with 16-bit adapters:
  //   attention: the norm's 16-bit input 16, the shared 16-bit input 16, Q K V 48, O and
  //   logsumexp 24, x·A of q, k, v, o 2·8·4 = 64, mask 8: 176.
  //   MLP: nothing for fc1's input (shared with q, k, v), GELU's input 64, fc2's input 64, x·A of
  //   fc1 and fc2 2·8·2 = 32, mask 8: 168. Total 344.
  ActivationSettings lora;
  lora.adapted = kAllProjections;
  lora.rank = 8;
  lora.attention = Attention::kFlash;
  EXPECT_DOUBLE_EQ(block_activations(shape, lora).saved.per_token, 344.0);
  // fc1 alone adapted: attention 16 + 48 + 24 + 8 = 96 (no projection of its own keeps the
  // normed input); MLP: the normed input, now kept for fc1's adapter, 16, GELU's input 64, fc2
  // frozen keeps no input, x·A 2·8 = 16, mask 8: 104. Total 200.
  lora.adapted = kProjUp;
  EXPECT_DOUBLE_EQ(block_activations(shape, lora).saved.per_token, 200.0);
}

}  // namespace
}  // namespace ftplan
