// The loss's precision, LoRA dropout, adapters and trained copies outside the blocks, the load
// phase and the four kinds of peak: each against a figure computed by hand for Llama 3.1 8B
// (hidden 4096, q 4096, MLP 14336, vocabulary 128256, untied output layer).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "core/error.hpp"
#include "memory/fit.hpp"
#include "memory/measured_runs.hpp"
#include "memory/overheads.hpp"
#include "server/api.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

constexpr double kH = 4096, kI = 14336, kV = 128256;

// POST /api/fit with a JSON body, as the page sends it.
server::Response post_fit(const std::string& body) {
  static const server::Commands commands = cli::server_commands();
  server::Request r;
  r.method = "POST";
  r.path = "/api/fit";
  r.content_type = "application/json";
  r.body = body;
  return server::handle(r, commands);
}

TEST(LossKinds, LogitsBytesPerTokenByHand) {
  Workload w = test::workload("llama-3.1-8b", Method::kLora);
  auto logits = [&](LossKind k) {
    w.options.loss = k;
    return activation_profile(w).logits.per_token;
  };
  EXPECT_DOUBLE_EQ(logits(LossKind::kFp32Upcast), 3 * 4 * kV);  // 12 B per entry
  EXPECT_DOUBLE_EQ(logits(LossKind::kBf16), 4 * 2 * kV);
  EXPECT_DOUBLE_EQ(logits(LossKind::kChunked), 2 * kV + 2 * kV / 8);
  EXPECT_DOUBLE_EQ(logits(LossKind::kFused), 2 * 4 * kH);
  // The older flag wins over the kind.
  w.options.chunked_loss = true;
  EXPECT_DOUBLE_EQ(logits(LossKind::kBf16), 2 * kV + 2 * kV / 8);
}

TEST(LossKinds, StackDefaultOptionAndContradiction) {
  auto r = test::run_cli(
      {"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"loss\": \"fp32-upcast\""), std::string::npos);
  r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl",
                     "--loss", "fused", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"loss\": \"fused\""), std::string::npos);
  r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl",
                     "--loss", "bf16", "--chunked-loss"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("chunked_loss"), std::string::npos) << r.err;
  r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl",
                     "--loss", "fp16-upcast"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("fp32-upcast"), std::string::npos) << r.err;
}

// PEFT: lora_A(dropout(x)): the mask (1 B) and the dropped copy (FP32 adapters) per adapted
// module instead of the FP32 cast copy: one byte more per input element of each module.
TEST(LoraDropout, AddsAMaskPerAdaptedModuleInput) {
  Workload w = test::workload("llama-3.1-8b", Method::kLora);
  w.recompute = Recompute::kNone;
  const double without = activation_profile(w).saved_one.per_token;
  w.lora.dropout = 0.05;
  const double with = activation_profile(w).saved_one.per_token;
  // q, k, v, gate, up read h wide; o reads q wide; down reads I wide.
  EXPECT_DOUBLE_EQ(with - without, 5 * kH + kH + kI);
  auto r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl",
                          "--lora-dropout", "1.5"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("lora_dropout"), std::string::npos) << r.err;
}

TEST(OutsideTheBlocks, LmHeadAndEmbeddingAdaptersAndTrainedCopies) {
  const Workload base = test::workload("llama-3.1-8b", Method::kLora);
  const ParamCount adapters = trainable_params(base).count;
  Workload w = base;
  w.lora.target_output = true;
  EXPECT_EQ(trainable_params(w).count - adapters, 16 * (128256 + 4096));
  w.lora.target_embedding = true;
  EXPECT_EQ(trainable_params(w).count - adapters, 2 * 16 * (128256 + 4096));

  // modules_to_save lm_head: a trained copy with AdamW's 16 B per parameter; the frozen original
  // stays.
  Workload saved = base;
  saved.lora.train_output = true;
  const ModelStates a = model_states(base), b = model_states(saved);
  EXPECT_DOUBLE_EQ(b.frozen_weights.value, a.frozen_weights.value);
  EXPECT_DOUBLE_EQ((b.total() - a.total()).value, 16.0 * kV * kH);
  // Its copy keeps its input (16-bit, hidden wide).
  EXPECT_DOUBLE_EQ(activation_profile(saved).output_saved.per_token -
                       activation_profile(base).output_saved.per_token,
                   2 * kH);

  auto r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl",
                          "--targets", "q,v,lm_head", "--train-modules", "embed", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "full", "--gpu", "h200-nvl",
                     "--train-modules", "lm_head"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--train-modules applies to LoRA-family methods"), std::string::npos)
      << r.err;
  r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl",
                     "--train-modules", "lm_heads"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("lm_head"), std::string::npos) << r.err;
}

TEST(LoadPhase, WeightsAsLoadedPlusTheTensorInTransit) {
  // QLoRA on one card: NF4 weights and constants, BF16 rest, and the largest block weight
  // (gate/up [14336 × 4096]) in BF16 while it is quantized, plus the CUDA context.
  const Workload w = test::workload("llama-3.1-8b", Method::kQlora);
  const MemoryEstimate m = estimate_memory(w, test::on("h200-nvl"));
  const ModelStates& s = m.states;
  EXPECT_DOUBLE_EQ(m.runtime.load.transient.value, 2.0 * kI * kH);
  EXPECT_NEAR(m.load_peak.value,
              (s.frozen_weights + s.trained_weights + s.quantization_constants).value +
                  2.0 * kI * kH + m.runtime.overheads.cuda_context.value,
              1.0);
  EXPECT_FALSE(m.load_is_peak);
  EXPECT_DOUBLE_EQ(m.peak.value, m.step_peak.value);

  // A stack that loads the whole replica on each card before FSDP shards it: Llama 3.1 70B's
  // 16-bit base (2 B × 70.6e9) exceeds what sharding over 8 cards leaves per card.
  StackProfile full = test::stacks().fallback();
  full.load_full_on_each_card = true;
  Workload big = test::workload("llama-3.1-70b", Method::kLora);
  big.stack = &full;
  const MemoryEstimate f = estimate_memory(big, test::on("h200-nvl", 8, Sharding::kFsdp));
  EXPECT_NEAR(f.runtime.load.weights.value,
              8 * (f.states.frozen_weights + f.states.trained_weights).value, 1.0);
  EXPECT_TRUE(f.load_is_peak);
  EXPECT_DOUBLE_EQ(f.peak.value, f.load_peak.value);
  EXPECT_GT(f.load_peak.value, 2.0 * 70e9);
}

TEST(PeakKinds, FourKindsParseAndOrder) {
  auto r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl",
                          "--peak", "nvidia-smi", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"peak\": \"nvidia-smi\""), std::string::npos);
  EXPECT_NE(r.out.find("\"peaks\""), std::string::npos);
  const Workload w = test::workload("llama-3.1-8b", Method::kLora);
  const MemoryEstimate m = estimate_memory(w, test::on("h200-nvl", 2, Sharding::kDdp));
  const OverheadBreakdown& o = m.runtime.overheads;
  const double active = predicted_peak(m, MeasuredPeak::kActive).value;
  EXPECT_DOUBLE_EQ(active, predicted_peak(m, MeasuredPeak::kAllocated).value);
  EXPECT_NEAR(predicted_peak(m, MeasuredPeak::kReserved).value - active, o.allocator_reserve.value,
              1.0);
  EXPECT_NEAR(predicted_peak(m, MeasuredPeak::kNvidiaSmi).value -
                  predicted_peak(m, MeasuredPeak::kReserved).value,
              (o.cuda_context + o.nccl_buffers).value, 1.0);
  EXPECT_GT(o.nccl_buffers.value, 0);
  r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl",
                     "--peak", "nvidia"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nvidia-smi"), std::string::npos) << r.err;
}

// FSDP's root unit stays gathered from forward through backward; DDP's buckets copy the gradients
// (hf). Llama 3.1 70B: hidden 8192, vocabulary 128256, untied output layer.
TEST(StackBuffers, FsdpRootAndDdpBucketCopyByHand) {
  // A stack whose root FSDP unit holds the embeddings and the output layer (torchtune's configs
  // shard those separately, so its own profile leaves the term off).
  StackProfile without = test::stacks().find("torchtune");
  ASSERT_FALSE(without.fsdp_root_unsharded);
  StackProfile with = without;
  with.fsdp_root_unsharded = true;
  Workload w = test::workload("llama-3.1-70b", Method::kLora);
  w.seq = 8192;  // logits of 4 x 8192 tokens: the loss phase is the peak either way
  w.micro_batch = 4;
  const Placement eight = test::on("a100-80gb-sxm", 8, Sharding::kFsdp);
  const double root = 2.0 * (2.0 * 128256 * 8192 + 8192);  // embeddings, output, final norm
  const double output = 2.0 * 128256 * 8192;               // the output layer alone
  w.stack = &with;
  const MemoryEstimate a = estimate_memory(w, eight);
  w.stack = &without;
  const MemoryEstimate b = estimate_memory(w, eight);
  // Not a state between steps: the backward pass reshards it.
  EXPECT_NEAR(a.states_on_card.value, b.states_on_card.value, 1.0);
  // In the loss phase the root's other 7/8 take the place of the output layer gathered alone.
  ASSERT_EQ(a.runtime.step.phase, StepPhase::kLoss);
  ASSERT_EQ(b.runtime.step.phase, StepPhase::kLoss);
  EXPECT_NEAR(a.runtime.step.gathered_params.value, root * 7 / 8, 1.0);
  EXPECT_NEAR(b.runtime.step.gathered_params.value, output, 1.0);
  // In a block's backward it is there beside the block's working set (a short sequence, whose
  // block phase is the peak).
  w.seq = 512;
  w.micro_batch = 1;
  const MemoryEstimate a1 = estimate_memory(w, eight);
  w.stack = &with;
  const MemoryEstimate b1 = estimate_memory(w, eight);
  ASSERT_EQ(a1.runtime.step.phase, StepPhase::kBlockBackward);
  ASSERT_EQ(b1.runtime.step.phase, StepPhase::kBlockBackward);
  EXPECT_NEAR((b1.runtime.step.gathered_params - a1.runtime.step.gathered_params).value,
              root * 7 / 8, 1.0);

  // Where the optimizer update is the peak (a full fine-tune with torch's foreach AdamW), the
  // root is resharded and the peak does not move.
  Workload full = test::workload("llama-3.1-8b", Method::kFull);
  full.options.optimizer_impl = OptimizerImpl::kForeach;
  full.recompute = Recompute::kFull;
  const Placement two = test::on("a100-80gb-sxm", 2, Sharding::kFsdp);
  full.stack = &with;
  const MemoryEstimate c = estimate_memory(full, two);
  full.stack = &without;
  const MemoryEstimate d = estimate_memory(full, two);
  ASSERT_EQ(c.runtime.step.phase, StepPhase::kOptimizerUpdate);
  EXPECT_NEAR(c.step_peak.value, d.step_peak.value, 1.0);
  // The Transformers Trainer runs Accelerate's FSDP1, whose root is kept the same way.
  EXPECT_TRUE(test::stacks().find("hf").fsdp_root_unsharded);

  StackProfile hf = test::stacks().find("hf");
  ASSERT_TRUE(hf.ddp_gradient_copy);
  full = test::workload("llama-3.1-8b", Method::kFull);
  full.stack = &hf;
  const Placement ddp = test::on("h200-nvl", 2, Sharding::kDdp);
  const MemoryEstimate e = estimate_memory(full, ddp);
  hf.ddp_gradient_copy = false;
  const MemoryEstimate f = estimate_memory(full, ddp);
  EXPECT_NEAR((e.states_on_card - f.states_on_card).value, 2.0 * 8030261248.0, 1.0);
  EXPECT_NEAR(e.runtime.states.stack_buffers.value, 2.0 * 8030261248.0, 1.0);
}

// A loop that keeps the model's output (`output = model(...)` until after `loss.backward()`) holds
// its logits through the whole backward pass: FP32 where the model upcasts them itself (the
// fsdp-qlora stack). Llama 2 7B: vocabulary 32000; 2 x 2048 tokens per micro-batch.
TEST(StackBuffers, HeldLogitsByHand) {
  const StackProfile& held = test::stacks().find("fsdp-qlora");
  ASSERT_EQ(held.held_logits_bytes, 4.0);
  EXPECT_EQ(test::stacks().find("pytorch").held_logits_bytes, 0.0);
  StackProfile without = held;
  without.held_logits_bytes = 0;
  Workload w = test::workload("llama-2-7b", Method::kLora);
  w.seq = 2048;
  w.micro_batch = 2;
  w.options.pure_bf16 = true;
  const Placement two = test::on("rtx-3090", 2, Sharding::kFsdp);
  const double logits = 4.0 * 32000 * 2048 * 2;
  w.stack = &held;
  const MemoryEstimate a = estimate_memory(w, two);
  w.stack = &without;
  const MemoryEstimate b = estimate_memory(w, two);
  // The block phase is the peak either way (LoRA with every block recomputed): the held logits
  // are there beside the block's working set, and nowhere between steps.
  ASSERT_EQ(a.runtime.step.phase, StepPhase::kBlockBackward);
  ASSERT_EQ(b.runtime.step.phase, StepPhase::kBlockBackward);
  EXPECT_NEAR(a.runtime.step.logits_and_loss.value, logits, 1.0);
  EXPECT_EQ(b.runtime.step.logits_and_loss.value, 0.0);
  EXPECT_NEAR((a.runtime.step.total() - b.runtime.step.total()).value, logits, 1.0);
  EXPECT_NEAR(a.states_on_card.value, b.states_on_card.value, 1.0);
  // A fused output layer and loss leaves no logits to hold.
  w.stack = &held;
  w.options.loss = LossKind::kFused;
  EXPECT_EQ(activation_profile(w).held_logits.per_token, 0.0);
  // The breakdown names them for what they are in a block's backward.
  const auto r = test::run_cli({"fit", "--model", "llama-2-7b", "--method", "lora", "--pure-bf16",
                                "--stack", "fsdp-qlora", "--gpu", "rtx-3090", "--gpus", "2",
                                "--shard", "fsdp", "--micro-batch", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("logits the training loop holds"), std::string::npos) << r.out;
}

// PEFT 0.12+ keeps the adapters of a BF16 model in FP32 also in pure BF16 (stack hf:
// memory.lora.fp32_adapters): FP32 weights, gradients and AdamW states, the same 16 B per
// adapter parameter as mixed precision counts; a stack whose adapters follow the model's dtype
// (torchtune) halves the states and drops the master copy. Llama 3.1 8B, LoRA r16 on all seven
// projections: 41,943,040 adapter parameters.
TEST(StackBuffers, PeftFp32AdaptersInPureBf16ByHand) {
  ASSERT_TRUE(test::stacks().find("hf").fp32_adapters);
  ASSERT_FALSE(test::stacks().find("torchtune").fp32_adapters);
  ASSERT_FALSE(test::stacks().find("fsdp-qlora").fp32_adapters);
  Workload w = test::workload("llama-3.1-8b", Method::kLora);
  const Placement one = test::on("h200-nvl", 1, Sharding::kNone);
  const double adapters = 41943040.0;
  w.stack = &test::stacks().find("hf");
  const MemoryEstimate mixed = estimate_memory(w, one);
  w.options.pure_bf16 = true;
  const MemoryEstimate peft_pure = estimate_memory(w, one);
  EXPECT_TRUE(activation_settings(w).fp32_adapters);
  EXPECT_EQ(peft_pure.runtime.states.pure_bf16_saving.value, 0.0);
  EXPECT_NEAR(peft_pure.states_on_card.value, mixed.states_on_card.value, 1.0);
  w.stack = &test::stacks().find("torchtune");
  const MemoryEstimate own_pure = estimate_memory(w, one);
  EXPECT_FALSE(activation_settings(w).fp32_adapters);
  // No FP32 master (4 B) and BF16 AdamW states (4 B instead of 8): 8 B per adapter parameter.
  EXPECT_NEAR(own_pure.runtime.states.pure_bf16_saving.value, 8.0 * adapters, 1.0);
  // A trained copy of the output layer (modules_to_save) beside PEFT's FP32 adapters is a BF16
  // parameter: only its 128,256 x 4,096 weights save the 8 B.
  w.stack = &test::stacks().find("hf");
  parse_train_modules("lm_head", w.lora);
  const MemoryEstimate with_head = estimate_memory(w, one);
  EXPECT_NEAR(with_head.runtime.states.pure_bf16_saving.value, 8.0 * 128256 * 4096,
              1e-6 * 8.0 * 128256 * 4096);
}

// Accelerate casts the trained FSDP flat parameters of a 16-bit model to FP32 when it prepares
// FSDP in mixed precision (the Trainer's --bf16): the Trainer's stacks hold what torchtitan holds.
// PowerLM-3b, 3,510,819,072 parameters, full fine-tune on two A100s: 12 B / 2 per parameter
// between steps, FP32 gradient shards of 4 B / 2 in the backward pass (fms-acceleration's run
// ends its training at 8 B per parameter and card with those gradients). Pure BF16 (no --bf16)
// has nothing cast: 6 B / 2 per parameter, BF16 gradients.
TEST(StackBuffers, TrainerStacksHoldFp32ShardsUnderFsdpInMixedPrecision) {
  const double n = 3510819072.0;
  const Placement two = test::on("a100-80gb-sxm", 2, Sharding::kFsdp);
  for (const char* name : {"hf", "peft", "fms-acceleration"}) {
    ASSERT_TRUE(test::stacks().find(name).fsdp_fp32_parameters) << name;
    Workload w = test::workload("powerlm-3b", Method::kFull);
    w.stack = &test::stacks().find(name);
    const MemoryEstimate mixed = estimate_memory(w, two);
    EXPECT_NEAR(mixed.states_on_card.value, n * 12 / 2, 1e-9 * n) << name;
    EXPECT_NEAR(mixed.runtime.states.gradients_in_step.value, n * 4 / 2, 1e-9 * n) << name;
    w.options.pure_bf16 = true;
    const MemoryEstimate pure = estimate_memory(w, two);
    EXPECT_NEAR(pure.states_on_card.value, n * 6 / 2, 1e-9 * n) << name;
    EXPECT_NEAR(pure.runtime.states.gradients_in_step.value, n * 2 / 2, 1e-9 * n) << name;
    EXPECT_EQ(pure.runtime.states.fp32_parameter_shift.value, 0.0) << name;
  }
}

// torchtitan shards FP32 parameters under a BF16 mixed-precision policy: 16 B per parameter as in
// the ZeRO count, but between steps the card holds only the FP32 shards and the AdamW states
// (12 B / 8 per parameter on 8 cards), and the backward pass produces FP32 gradient shards (4 B /
// 8), not 2 B ones. Llama 3.1 8B, 8,030,261,248 parameters, FSDP over 8 H100s.
TEST(StackBuffers, TorchtitanShardsFp32ParametersAndGradients) {
  const StackProfile& titan = test::stacks().find("torchtitan");
  ASSERT_TRUE(titan.fsdp_fp32_parameters);
  StackProfile without = titan;
  without.fsdp_fp32_parameters = false;
  without.fsdp_root_unsharded = false;
  StackProfile with = without;
  with.fsdp_fp32_parameters = true;
  Workload w = test::workload("llama-3.1-8b", Method::kFull);
  const double n = 8030261248.0;
  const Placement eight = test::on("h100-sxm", 8, Sharding::kFsdp);
  w.stack = &with;
  const MemoryEstimate a = estimate_memory(w, eight);
  EXPECT_NEAR(a.states_on_card.value, n * 12 / 8, 1e-9 * n);
  EXPECT_NEAR(a.runtime.states.gradients_in_step.value, n * 4 / 8, 1e-9 * n);
  EXPECT_NEAR(a.runtime.states.fp32_parameter_shift.value, n * 2 / 8, 1e-9 * n);
  w.stack = &without;
  const MemoryEstimate b = estimate_memory(w, eight);
  EXPECT_NEAR(b.states_on_card.value, n * 14 / 8, 1e-9 * n);
  EXPECT_NEAR(b.runtime.states.gradients_in_step.value, n * 2 / 8, 1e-9 * n);
  // Pure BF16 parameters have no FP32 copy to shard; one card is not sharded.
  w.stack = &with;
  w.options.pure_bf16 = true;
  EXPECT_EQ(estimate_memory(w, eight).runtime.states.fp32_parameter_shift.value, 0.0);
  w.options.pure_bf16 = false;
  EXPECT_EQ(estimate_memory(w, test::on("h200-nvl")).runtime.states.fp32_parameter_shift.value,
            0.0);
  // The JSON states it (GB), and the load phase reads each card's FP32 shard: 4 B per parameter.
  auto r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "full", "--gpu", "h100-sxm",
                          "--gpus", "8", "--shard", "fsdp", "--stack", "torchtitan", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["memory_GB"]["states_moved"]["fp32_parameter_shift"].get<double>(), n * 2 / 8 / 1e9,
              0.001)
      << r.out.substr(0, 3000);
  EXPECT_NEAR(j["memory_GB"]["load"]["weights"].get<double>(), n * 4 / 8 / 1e9, 0.001);
}

// A model-parallel run spans several cards whatever its data-parallel degree: NCCL's buffers are
// on each card under tensor parallelism 4 alone as under 4-way data parallelism (4 MiB x 2 x 16
// channels, data/runtime/overheads.yaml).
TEST(StackBuffers, NcclBuffersUnderTensorParallelismAlone) {
  Workload w = test::workload("llama-3.1-8b", Method::kFull);
  Placement tp = test::on("h100-sxm", 4, Sharding::kZero1);
  tp.layout.tp = 4;
  const double expected = 4.0 * 1024 * 1024 * 2 * 16;
  EXPECT_DOUBLE_EQ(estimate_memory(w, tp).runtime.overheads.nccl_buffers.value, expected);
  EXPECT_DOUBLE_EQ(estimate_memory(w, test::on("h100-sxm", 4, Sharding::kZero1))
                       .runtime.overheads.nccl_buffers.value,
                   expected);
  EXPECT_EQ(estimate_memory(w, test::on("h100-sxm")).runtime.overheads.nccl_buffers.value, 0.0);
}

// Megatron keeps gradients in a persistent FP32 main-grad buffer: with BF16 parameters and the
// distributed optimizer, 6 + 12/d bytes per parameter (Megatron Core's table), here d = 8.
TEST(StackBuffers, MegatronKeepsFp32GradientsResident) {
  const StackProfile& megatron = test::stacks().find("megatron");
  ASSERT_TRUE(megatron.fp32_main_gradients);
  Workload w = test::workload("llama-3.1-8b", Method::kFull);
  w.stack = &megatron;
  const double n = 8030261248.0;
  const MemoryEstimate m = estimate_memory(w, test::on("h100-sxm", 8, Sharding::kZero1));
  EXPECT_TRUE(m.runtime.states.gradients_persistent);
  EXPECT_NEAR(m.states_on_card.value, n * (6 + 12.0 / 8), 1e-9 * n);
  EXPECT_EQ(m.runtime.step.gradients.value, 0.0);
  // LoRA: the buffer holds the adapters' gradients only, in FP32.
  Workload lora = test::workload("llama-3.1-8b", Method::kLora);
  const MemoryEstimate hf = estimate_memory(lora, test::on("h100-sxm"));
  lora.stack = &megatron;
  const MemoryEstimate mg = estimate_memory(lora, test::on("h100-sxm"));
  EXPECT_NEAR((mg.states_on_card - hf.states_on_card).value, 2 * hf.states.gradients.value, 1.0);
}

// Megatron's optimizer offload (HybridDeviceOptimizer, --optimizer-cpu-offload) moves the FP32
// master weights and the Adam states to the host; the step copies the gradients out of the
// main-grad buffer, which stays on the card: 2 B of weights + 4 B of FP32 gradients per
// parameter. ZeRO-Offload (the other stacks) sends the gradients to the host as well.
TEST(StackBuffers, MegatronOptimizerOffloadKeepsTheMainGradBuffer) {
  Workload w = test::workload("llama-3.1-8b", Method::kFull);
  w.options.offload_optimizer = true;
  const double n = 8030261248.0;
  const Placement p = test::on("h100-sxm", 8, Sharding::kZero1);
  const MemoryEstimate zero_offload = estimate_memory(w, p);
  EXPECT_NEAR(zero_offload.states_on_card.value, n * 2, 1e-9 * n);
  w.stack = &test::stacks().find("megatron");
  const MemoryEstimate m = estimate_memory(w, p);
  EXPECT_TRUE(m.runtime.states.gradients_persistent);
  EXPECT_NEAR(m.states_on_card.value, n * (2 + 4), 1e-9 * n);
  EXPECT_NEAR(m.runtime.states.host.value, n * (4 + 8) / 8, 1e-9 * n);
}

// DeepSpeed's estimator for a mixed-precision Adam full fine-tune, Llama 3.1 8B (8,030,261,248
// parameters; largest layer: the embedding, 128256 × 4096) on 8 cards.
TEST(StackBuffers, DeepSpeedZeroEstimateByHand) {
  const StackProfile& ds = test::stacks().find("deepspeed");
  Workload w = test::workload("llama-3.1-8b", Method::kFull);
  w.stack = &ds;
  const double n = 8, params = 8030261248.0, largest = 128256.0 * 4096;
  const MemoryEstimate z3 = estimate_memory(w, test::on("a100-80gb-sxm", 8, Sharding::kFsdp));
  // Ours: 16 B / 8 per parameter; DeepSpeed: 18 B / 8 + 4 B × the largest layer.
  EXPECT_NEAR(z3.runtime.states.stack_buffers.value, params * 2 / n + 4 * largest, 1.0);
  const MemoryEstimate z2 = estimate_memory(w, test::on("a100-80gb-sxm", 8, Sharding::kZero2));
  // Ours: 2 B whole + 14 B / 8; DeepSpeed: 4 B whole + 16 B / 8.
  EXPECT_NEAR(z2.runtime.states.stack_buffers.value, params * (2 + 2 / n), 1.0);
  // LoRA: not a full fine-tune, the estimator does not apply.
  Workload lora = test::workload("llama-3.1-8b", Method::kLora);
  lora.stack = &ds;
  EXPECT_EQ(estimate_memory(lora, test::on("a100-80gb-sxm", 8, Sharding::kFsdp))
                .runtime.states.stack_buffers.value,
            0);
}

// Layer-wise checkpointing through the command line, a runs file and the API: the setting as
// reports print it, the JSON key, and an error for a mode it does not apply to.
TEST(MemoryOptions, RecomputeLayersEverywhere) {
  auto fit = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "full", "--gpu",
                            "h200-nvl", "--recompute-layers", "16"});
  ASSERT_EQ(fit.code, 0) << fit.err;
  EXPECT_NE(fit.out.find("recompute full (16 of 32 blocks)"), std::string::npos) << fit.out;
  auto bad = test::run_cli({"step", "--model", "llama-3.1-8b", "--method", "full", "--gpu",
                            "h200-nvl", "--recompute", "selective", "--recompute-layers", "16"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("recompute_layers 16 checkpoints whole blocks"), std::string::npos)
      << bad.err;

  const std::string runs = ::testing::TempDir() + "recompute-layers-runs.yaml";
  {
    std::ofstream f(runs);
    f << "candidates:\n  gpus: [h200-nvl]\n  counts: [1]\nruns:\n"
         "  - name: half\n    model: llama-3.1-8b\n    method: full\n"
         "    recompute_layers: 16\n    tokens: 10e6\n";
  }
  auto plan = test::run_cli({"plan", runs, "--json"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("\"recompute_layers\": 16"), std::string::npos) << plan.out;

  const server::Response resp = post_fit(R"({"model": "llama-3.1-8b", "method": "full",
      "gpu": "h200-nvl", "recompute_layers": 16, "json": true})");
  ASSERT_EQ(resp.status, 200) << resp.body;
  const auto j = nlohmann::json::parse(resp.body);
  EXPECT_EQ(j["recompute_layers"], 16) << resp.body.substr(0, 2000);
}

// The new options reach the planner through a runs file and fit through the API (JSON keys are
// the options' names with '_').
TEST(MemoryOptions, RunsFileAndApi) {
  const std::string runs = ::testing::TempDir() + "memory-options-runs.yaml";
  {
    std::ofstream f(runs);
    f << "candidates:\n  gpus: [h200-nvl]\n  counts: [1]\nruns:\n"
         "  - name: gptq\n    model: llama-3.1-8b\n    method: qlora\n"
         "    base_quant: gptq-int4\n    quant_group: 64\n    loss: fused\n"
         "    lora_dropout: 0.1\n    train_modules: lm_head\n    peak: nvidia-smi\n"
         "    tokens: 10e6\n";
  }
  auto plan = test::run_cli({"plan", runs, "--json"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_NE(plan.out.find("\"gptq-int4\""), std::string::npos);
  {
    std::ofstream f(runs);
    f << "runs:\n  - name: bad\n    model: llama-3.1-8b\n    method: qlora\n"
         "    base_quant: awq-int3\n    tokens: 10e6\n";
  }
  plan = test::run_cli({"plan", runs});
  EXPECT_EQ(plan.code, 2);
  EXPECT_NE(plan.err.find("awq-int4"), std::string::npos) << plan.err;
  EXPECT_NE(plan.err.find("base_quant"), std::string::npos) << plan.err;

  const server::Response resp =
      post_fit(R"({"model": "llama-3.1-8b", "method": "qlora", "gpu": "h200-nvl", "base_quant":
                   "fp8", "quant_group": 0, "loss": "bf16", "peak": "active", "json": true})");
  ASSERT_EQ(resp.status, 200) << resp.body;
  const auto j = nlohmann::json::parse(resp.body);
  EXPECT_EQ(j["quantization"]["format"], "fp8");
  EXPECT_EQ(j["quantization"]["block"], 0);
  EXPECT_EQ(j["options"]["loss"], "bf16");
  EXPECT_EQ(j["peak"], "active");
}

// The reserve's spread is read strictly: a 10th percentile above the median share, or a 90th below
// it, names the file, the key and what was expected.
TEST(RuntimeOverheads, ReserveSpreadMustBracketTheShare) {
  const DataFile* f = test::catalog().file("runtime/overheads.yaml");
  ASSERT_NE(f, nullptr);
  auto error_with = [&](const std::string& from, const std::string& to) {
    std::string text(f->text);
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    try {
      parse_runtime_overheads({f->path, text, ""}, test::catalog().sources());
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string e = error_with("low_with_recompute: 0.212", "low_with_recompute: 0.3");
  EXPECT_NE(e.find("runtime/overheads.yaml"), std::string::npos) << e;
  EXPECT_NE(e.find("low_with_recompute"), std::string::npos) << e;
  EXPECT_NE(e.find("10th percentile at most the median"), std::string::npos) << e;
  e = error_with("high_without_recompute: 0.103", "high_without_recompute: 0.05");
  EXPECT_NE(e.find("high_without_recompute"), std::string::npos) << e;
  EXPECT_NE(e.find("90th percentile at least the median"), std::string::npos) << e;
  e = error_with("high_with_recompute: 0.464", "high_with_recompute: 1.5");
  EXPECT_NE(e.find("high_with_recompute"), std::string::npos) << e;
  // The built-in table itself parses, and its spreads bracket the shares.
  const RuntimeOverheads t = parse_runtime_overheads(*f, test::catalog().sources());
  EXPECT_LE(t.reserve_with_recompute.low, t.reserve_with_recompute.median);
  EXPECT_GE(t.reserve_without_recompute.high, t.reserve_without_recompute.median);
}

// LitGPT's loop keeps `logits` bound until the model returns the next micro-batch's, so the
// last micro-batch's logits and graph live on through the next forward pass; bitsandbytes 0.42's
// MatMul4Bit keeps each 4-bit layer's input on that graph as a plain attribute (ctx.tensors),
// which the backward pass does not release. At the end of the next forward pass the card holds
// one 16-bit copy of every distinct quantized input of every block not recomputed. Llama 3.1 8B
// under SDPA: q, k and v read one input (h), o_proj the attention output (h), gate and up one
// input (h), down the product (I): 2 B x (3 x 4096 + 14336) per token and block, 32 blocks,
// 2 x 512 tokens.
TEST(StackBuffers, PreviousGraphInputsByHand) {
  const StackProfile& litgpt = test::stacks().find("litgpt");
  ASSERT_TRUE(litgpt.previous_graph_held);
  EXPECT_FALSE(test::stacks().find("hf").previous_graph_held);
  StackProfile released = litgpt;
  released.previous_graph_held = false;
  Workload w = test::workload("llama-3.1-8b", Method::kQlora);
  w.seq = 512;
  w.micro_batch = 2;
  w.recompute = Recompute::kNone;
  w.attention = Attention::kSdpa;
  w.lora.targets = kProjQ | kProjV;
  w.options.quant_keeps_input = true;
  w.options.pure_bf16 = true;
  w.options.loss = LossKind::kBf16;  // the stack's: cross-entropy on each 16-bit chunk
  w.stack = &litgpt;
  const double held = 2.0 * (3 * 4096 + 14336) * 32 * 512 * 2;
  EXPECT_NEAR(activation_profile(w).previous_graph_inputs.at(512, 2).value, held, 1.0);
  const Placement one = test::on("a10g", 1, Sharding::kNone);
  const MemoryEstimate a = estimate_memory(w, one);
  w.stack = &released;
  const MemoryEstimate b = estimate_memory(w, one);
  // Without the held graph the peak is the loss: 16-bit cross-entropy holds 4 x 2 B per logit
  // (vocabulary 128,256) and the final hidden state's gradient 2 B x 4096 per token. With it, the
  // end of the forward pass: the held inputs beside the saved activations, and two sets of
  // returned 16-bit logits (this micro-batch's and the previous one's), 2 x 2 B per logit.
  ASSERT_EQ(a.runtime.step.phase, StepPhase::kLoss);
  ASSERT_EQ(b.runtime.step.phase, StepPhase::kLoss);
  EXPECT_NEAR((a.runtime.step.saved_activations - b.runtime.step.saved_activations).value, held,
              1.0);
  const double tokens = 512 * 2;
  const double loss_only = (4 * 2.0 * 128256 + 2.0 * 4096) * tokens;
  const double returned = 2 * 2.0 * 128256 * tokens;
  EXPECT_NEAR((a.runtime.step.total() - b.runtime.step.total()).value, held + returned - loss_only,
              1.0);
  // Nothing is held without the kept inputs (bitsandbytes 0.43.2 and later), or for blocks that
  // full recomputation rebuilds: their forward pass leaves no graph.
  w.stack = &litgpt;
  w.options.quant_keeps_input = false;
  EXPECT_EQ(activation_profile(w).previous_graph_inputs.per_token, 0.0);
  w.options.quant_keeps_input = true;
  w.recompute = Recompute::kFull;
  EXPECT_EQ(activation_profile(w).previous_graph_inputs.per_token, 0.0);
  w.recompute_layers = 8;  // 8 of the 32 blocks rebuilt, 24 keep their graph
  EXPECT_NEAR(activation_profile(w).previous_graph_inputs.at(512, 2).value, held * 24 / 32, 1.0);
}

}  // namespace
}  // namespace ftplan
