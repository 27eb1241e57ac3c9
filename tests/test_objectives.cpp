// Preference objectives (workload/objective.hpp): what a pair, a reference model and the passes
// without gradient add to memory, operations and traffic, checked against the supervised run they
// reduce to, and their errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "comm/topology.hpp"
#include "comm/traffic.hpp"
#include "core/error.hpp"
#include "memory/activations.hpp"
#include "memory/fit.hpp"
#include "memory/model_states.hpp"
#include "perf/ops.hpp"
#include "plan/runs.hpp"
#include "support.hpp"
#include "workload/objective.hpp"
#include "workload/roles.hpp"
#include "workload/trainer_file.hpp"

namespace ftplan {
namespace {

Workload preference(const std::string& model, Objective o, Method m, std::int64_t micro_batch) {
  Workload w = test::workload(model, m);
  w.objective = o;
  w.micro_batch = micro_batch;
  return w;
}

// The supervised run with the same sequences in its micro-batch: a pair's two sequences as two.
Workload sft_of(const Workload& w) {
  Workload s = w;
  s.objective = Objective::kSft;
  s.micro_batch = w.sequences_per_micro_batch();
  s.options.precompute_reference = false;
  return s;
}

Flops forward_flops(const StepOps& ops) {
  Flops f;
  for (const Op& op : ops.ops)
    if (op.phase == Phase::kForward) f += op.total_flops();
  return f;
}

TEST(Objectives, APairIsTwoSequencesAndKtoOne) {
  EXPECT_EQ(
      preference("llama-3.1-8b", Objective::kDpo, Method::kFull, 3).sequences_per_micro_batch(), 6);
  EXPECT_EQ(
      preference("llama-3.1-8b", Objective::kKto, Method::kFull, 3).sequences_per_micro_batch(), 3);
  const Workload dpo = preference("llama-3.1-8b", Objective::kDpo, Method::kLora, 2);
  EXPECT_EQ(dpo.tokens_per_micro_batch(), 2 * 2 * 2048);
  EXPECT_DOUBLE_EQ(dpo.tokens_per_example(), 2 * 2048.0);
}

// DPO memory = the policy's states + a frozen 16-bit reference copy (2 B per parameter) + the
// activations of both sequences of each pair + the reference pass's 16-bit logits.
TEST(Objectives, DpoMemoryIsPolicyPlusReferencePlusTwoSequences) {
  const Placement p = test::on("h200-nvl");
  const Workload dpo = preference("llama-3.1-8b", Objective::kDpo, Method::kFull, 1);
  const Workload sft = sft_of(dpo);
  const ModelStates d = model_states(dpo), s = model_states(sft);
  const double params = static_cast<double>(dpo.model->params.total);
  EXPECT_DOUBLE_EQ(d.reference_weights.value, 2.0 * params);
  EXPECT_DOUBLE_EQ(d.total().value, s.total().value + 2.0 * params);

  const MemoryEstimate md = estimate_memory(dpo, p), ms = estimate_memory(sft, p);
  EXPECT_DOUBLE_EQ(md.runtime.step.saved_activations.value,
                   ms.runtime.step.saved_activations.value);
  // The loss phase holds the reference's logits beside the policy's: 2 B × vocabulary × tokens.
  Workload at_loss = dpo;
  at_loss.recompute = Recompute::kNone;  // the loss phase is the peak
  const MemoryEstimate ml = estimate_memory(at_loss, p);
  const double logits = 2.0 * static_cast<double>(dpo.model->arch.vocab) * 2 * 2048;
  EXPECT_DOUBLE_EQ(ml.runtime.step.scoring_logits.value, logits);
  const MemoryEstimate sl = estimate_memory(sft_of(at_loss), p);
  ASSERT_EQ(ml.runtime.step.phase, StepPhase::kLoss);
  ASSERT_EQ(sl.runtime.step.phase, StepPhase::kLoss);
  EXPECT_NEAR(ml.activations.value - sl.activations.value, logits, 1.0);
}

TEST(Objectives, AdaptersAreTheirOwnReferenceAndPrecomputedOnesNeedNone) {
  const Workload lora = preference("llama-3.1-8b", Objective::kDpo, Method::kLora, 1);
  EXPECT_EQ(model_states(lora).reference_weights.value, 0);
  EXPECT_EQ(model_states(lora).total(), model_states(sft_of(lora)).total());
  EXPECT_EQ(no_grad_forward_passes(lora), 1);

  Workload pre = preference("llama-3.1-8b", Objective::kDpo, Method::kFull, 1);
  pre.options.precompute_reference = true;
  EXPECT_EQ(model_states(pre).reference_weights.value, 0);
  EXPECT_EQ(no_grad_forward_passes(pre), 0);
  const Placement p = test::on("h200-nvl");
  EXPECT_EQ(estimate_memory(pre, p).peak, estimate_memory(sft_of(pre), p).peak);

  const Workload orpo = preference("llama-3.1-8b", Objective::kOrpo, Method::kFull, 1);
  EXPECT_EQ(model_states(orpo).reference_weights.value, 0);
  EXPECT_EQ(no_grad_forward_passes(orpo), 0);
}

// The reference is prepared like the policy: sharded under FSDP (ZeRO-3), whole under ZeRO-1/2.
TEST(Objectives, TheReferenceCopyIsShardedOnlyWithTheWeights) {
  const Workload dpo = preference("llama-3.1-8b", Objective::kDpo, Method::kFull, 1);
  const ModelStates r = model_states(dpo);
  EXPECT_DOUBLE_EQ(shard_states(r, Sharding::kFsdp, 4).reference_weights.value,
                   r.reference_weights.value / 4);
  EXPECT_DOUBLE_EQ(shard_states(r, Sharding::kZero2, 4).reference_weights.value,
                   r.reference_weights.value);
}

// Operations: the policy's forward and backward over both sequences, plus one forward pass of the
// reference over them (DPO), or for KTO two reference passes and one policy pass without gradient.
TEST(Objectives, StepOpsAddTheForwardPassesWithoutGradient) {
  const Workload dpo = preference("llama-3.1-8b", Objective::kDpo, Method::kFull, 1);
  const StepOps d = build_step_ops(dpo), s = build_step_ops(sft_of(dpo));
  EXPECT_EQ(d.tokens_per_micro_batch, s.tokens_per_micro_batch);
  EXPECT_NEAR(forward_flops(d).value / forward_flops(s).value, 2.0, 1e-12);
  EXPECT_NEAR((d.micro_batch_flops() - s.micro_batch_flops()).value, forward_flops(s).value,
              1e-6 * forward_flops(s).value);

  const Workload kto = preference("llama-3.1-8b", Objective::kKto, Method::kFull, 2);
  const StepOps k = build_step_ops(kto), ks = build_step_ops(sft_of(kto));
  EXPECT_NEAR(forward_flops(k).value / forward_flops(ks).value, 4.0, 1e-12);

  Workload pre = dpo;
  pre.options.precompute_reference = true;
  EXPECT_NEAR(build_step_ops(pre).micro_batch_flops().value, s.micro_batch_flops().value,
              1e-9 * s.micro_batch_flops().value);
}

// With adapters the reference is the base with the adapters switched off: its pass runs no
// adapter products.
TEST(Objectives, TheAdapterReferencePassSkipsTheAdapters) {
  const Workload dpo = preference("llama-3.1-8b", Objective::kDpo, Method::kLora, 1);
  const StepOps d = build_step_ops(dpo), s = build_step_ops(sft_of(dpo));
  Flops adapter_fwd;
  for (const Op& op : s.ops)
    if (op.phase == Phase::kForward && op.op_class == OpClass::kAdapter)
      adapter_fwd += op.total_flops();
  ASSERT_GT(adapter_fwd.value, 0);
  EXPECT_NEAR((forward_flops(d) - forward_flops(s)).value, (forward_flops(s) - adapter_fwd).value,
              1e-6 * forward_flops(s).value);
  for (const Op& op : d.ops)
    if (op.name.starts_with("no_grad.")) EXPECT_NE(op.op_class, OpClass::kAdapter) << op.name;
}

TEST(Objectives, FsdpGathersTheReferenceForItsPass) {
  const Workload dpo = preference("llama-3.1-8b", Objective::kDpo, Method::kFull, 1);
  const Placement p = test::on("h200-nvl", 4, Sharding::kFsdp);
  const CommConstants k = load_comm_constants(test::catalog());
  const Topology t = build_topology(*p.gpu, p.count, "", k);
  const CommPlan plan = plan_communication(dpo, model_states(dpo), p, t, k);
  bool found = false;
  for (const CommCall& c : plan.calls())
    if (c.what == "all-gather reference weights") {
      found = true;
      EXPECT_DOUBLE_EQ(c.cost.size.value, 2.0 * static_cast<double>(dpo.model->params.total));
    }
  EXPECT_TRUE(found);

  // PPO, full fine-tune: the reference copy (the whole model, 2 B per parameter) for its pass, the
  // reward model and the value model (sequence classifiers: no lm_head of 128,256 × 4,096) for
  // one pass each.
  Workload ppo = test::workload("llama-3.1-8b", Method::kFull);
  ppo.objective = Objective::kPpo;
  const CommPlan ppo_plan = plan_communication(ppo, model_states(ppo), p, t, k);
  const double params = static_cast<double>(ppo.model->params.total);
  const double classifier = params - 128256.0 * 4096.0;
  double gathered = 0;
  for (const CommCall& c : ppo_plan.calls())
    if (c.what == "all-gather reference weights") gathered = c.cost.size.value;
  EXPECT_DOUBLE_EQ(gathered, 2.0 * params + 2 * 2.0 * classifier);
}

TEST(Objectives, NamesAndErrors) {
  EXPECT_EQ(parse_run_method("dpo").objective, Objective::kDpo);
  EXPECT_FALSE(parse_run_method("dpo").method.has_value());
  EXPECT_EQ(parse_run_method("qlora").method, Method::kQlora);
  try {
    parse_run_method("dp0");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("dpo"), std::string::npos) << e.what();
    EXPECT_EQ(e.field(), "method");
  }
  try {
    resolve_run_method("lora", "qlora", false);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.field(), "adapter");
  }
  try {
    resolve_run_method("simpo", "", true);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.field(), "precompute_ref");
    EXPECT_NE(std::string(e.what()).find("dpo, ipo, kto"), std::string::npos) << e.what();
  }
  EXPECT_EQ(resolve_run_method("kto", "qlora", true).method, Method::kQlora);
  EXPECT_EQ(resolve_run_method("ipo", "", false).method, Method::kFull);
}

TEST(Objectives, RunsFilesTakeTheObjectiveAndCountBothSequences) {
  const std::string text =
      "runs:\n"
      "  - {name: pref, model: llama-3.1-8b, method: dpo, adapter: lora, rank: 8, tokens: "
      "131072000,\n"
      "     global_batch: 32}\n"
      "  - {name: sft, model: llama-3.1-8b, method: lora, rank: 8, tokens: 131072000, "
      "global_batch: "
      "32}\n";
  const ModelResolver resolve = [](const std::string& id) { return test::catalog().model(id); };
  const RunsFile f =
      parse_runs_file(text, "runs.yaml", test::catalog(), test::stacks(), resolve, nullptr);
  ASSERT_EQ(f.runs.size(), 2u);
  EXPECT_EQ(f.runs[0].workload.objective, Objective::kDpo);
  EXPECT_EQ(f.runs[0].workload.method, Method::kLora);
  EXPECT_EQ(f.runs[0].workload.lora.rank, 8);
  // The same tokens take half the steps when each example is a pair.
  EXPECT_DOUBLE_EQ(f.runs[0].steps(), 1000);
  EXPECT_DOUBLE_EQ(f.runs[1].steps(), 2000);

  const std::string bad =
      "runs:\n  - {name: a, model: llama-3.1-8b, method: orpo, precompute_ref: true, tokens: "
      "1e9}\n";
  try {
    parse_runs_file(bad, "runs.yaml", test::catalog(), test::stacks(), resolve, nullptr);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("precompute_ref"), std::string::npos) << e.what();
  }
}

TEST(Objectives, TheCommandLineTakesThemAndSaysWhatIsHeld) {
  const auto r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "dpo", "--adapter",
                                "lora", "--gpu", "h200-nvl", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "dpo");
  EXPECT_EQ(j["adapter"], "lora");
  EXPECT_EQ(j["reference"], "adapters off");
  EXPECT_EQ(j["sequences_per_example"], 2);

  const auto text =
      test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "dpo", "--gpu", "h200-nvl"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("reference model weights (16-bit)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("DPO (pairs, frozen reference copy)"), std::string::npos) << text.out;

  const auto from = test::run_cli(
      {"fit", "--from", std::string(FTPLAN_SOURCE_DIR) + "/tests/data/trainers/axolotl-dpo.yml",
       "--model", "llama-3.1-8b", "--gpu", "h200-nvl", "--json"});
  ASSERT_EQ(from.code, 0) << from.err;
  const auto fj = nlohmann::json::parse(from.out);
  EXPECT_EQ(fj["method"], "dpo");
  EXPECT_EQ(fj["adapter"], "lora");
  EXPECT_EQ(fj["micro_batch"], 2);

  const auto solved =
      test::run_cli({"max", "--model", "llama-3.1-8b", "--method", "dpo", "--adapter", "lora",
                     "--gpu", "h200-nvl", "--solve", "micro-batch"});
  ASSERT_EQ(solved.code, 0) << solved.err;
  EXPECT_NE(solved.out.find("pairs of sequences of 2048 tokens"), std::string::npos) << solved.out;

  const auto bad = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--adapter",
                                  "qlora", "--gpu", "h200-nvl"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("method dpo with adapter qlora"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace ftplan

namespace ftplan {
namespace {

std::string setting_of(const TrainerFile& f, std::string_view as) {
  return f.setting(as);
}

// A reward model: the same decoder with a one-output score head in place of the language-model
// head (AutoModelForSequenceClassification, num_labels 1), trained on both sequences of a pair.
Workload reward(const std::string& model, Method m, std::int64_t micro_batch = 1) {
  Workload w = preference(model, Objective::kReward, m, micro_batch);
  use_objective_model(w);
  return w;
}

TEST(Objectives, ARewardModelHasAScoreHeadInPlaceOfTheLmHead) {
  // Llama 3.1 8B, untied: lm_head [128,256 × 4,096] leaves, score [1 × 4,096] comes.
  const Workload full = reward("llama-3.1-8b", Method::kFull);
  const Workload sft = test::workload("llama-3.1-8b", Method::kFull);
  const ParamCount V = 128256, H = 4096;
  EXPECT_EQ(sft.model->params.total, 8030261248);  // the catalog's model is left as it was
  EXPECT_EQ(full.model->params.total, 8030261248 - V * H + H);
  EXPECT_EQ(full.sequences_per_micro_batch(), 2);
  // AdamW, full: 2 + 2 + 4 + 8 = 16 B per parameter, and no reference copy.
  const ModelStates states = model_states(full);
  EXPECT_EQ(states.reference_weights.value, 0);
  EXPECT_DOUBLE_EQ(states.total().value, 16.0 * static_cast<double>(full.model->params.total));
  // Tied (Llama 3.2 1B): the embedding stays, the score head is its own tensor.
  const Workload tied = reward("llama-3.2-1b", Method::kFull);
  EXPECT_EQ(tied.model->params.total,
            test::workload("llama-3.2-1b", Method::kFull).model->params.total + 2048);
  // LoRA: the adapters and the score head (PEFT saves a sequence-classification head).
  const Workload lora = reward("llama-3.1-8b", Method::kLora);
  EXPECT_EQ(trained_set(lora).trained_params,
            trained_set(test::workload("llama-3.1-8b", Method::kLora)).trained_params + H);
  EXPECT_EQ(no_grad_forward_passes(lora), 0);
}

TEST(Objectives, ARewardModelHasNoVocabularyWideLogits) {
  // The output layer's product is T × H × 1, and the loss holds one score per token where a
  // language-model head holds the vocabulary's logits: with the FP32 upcast, 3 × 4 B per output
  // in the loss's backward, so 12 B per token instead of 12 V B.
  const Workload rm = reward("llama-3.1-8b", Method::kFull);
  ASSERT_EQ(rm.options.effective_loss(), LossKind::kFp32Upcast);
  const double T = 2 * 2048;
  int heads = 0;
  for (const Op& op : build_step_ops(rm).ops)
    if (op.name == "lm_head.fwd") {
      ++heads;
      EXPECT_DOUBLE_EQ(op.total_flops().value, 2 * T * 4096);
    }
  EXPECT_EQ(heads, 1);
  EXPECT_DOUBLE_EQ(activation_profile(rm).logits.per_token, 12.0);
  EXPECT_DOUBLE_EQ(
      activation_profile(test::workload("llama-3.1-8b", Method::kFull)).logits.per_token,
      12.0 * 128256);
  // So a pair of 2,048-token sequences needs less than its supervised twin (same tokens, an LM
  // head) by at least the logits.
  Workload lm = sft_of(rm);
  lm.model = test::workload("llama-3.1-8b", Method::kFull).model;
  const Placement p = test::on("h200-nvl");
  EXPECT_LT(estimate_memory(rm, p).peak.value,
            estimate_memory(lm, p).peak.value - 2.0 * 128256 * T);
}

TEST(Objectives, RewardModelsFromTheCommandLineRunsAndTrainerFiles) {
  const auto fit = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "reward",
                                  "--adapter", "lora", "--gpu", "h200-nvl", "--json"});
  ASSERT_EQ(fit.code, 0) << fit.err;
  const auto j = nlohmann::json::parse(fit.out);
  EXPECT_EQ(j["method"], "reward");
  EXPECT_EQ(j["reference"], "none");
  const auto pre = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "reward",
                                  "--precompute-ref", "--gpu", "h200-nvl"});
  EXPECT_EQ(pre.code, 2);
  EXPECT_NE(pre.err.find("precompute"), std::string::npos) << pre.err;
  const auto online = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "reward",
                                     "--prompt-len", "256", "--gpu", "h200-nvl"});
  EXPECT_EQ(online.code, 2);
  EXPECT_NE(online.err.find("--prompt-len"), std::string::npos) << online.err;

  const TrainerFile factory = read_trainer_file(
      "model_name_or_path: meta-llama/Llama-3.1-8B\nstage: rm\nfinetuning_type: lora\n"
      "template: llama3\n",
      "rm.yaml", test::catalog().model_ids());
  EXPECT_EQ(setting_of(factory, "method"), "reward");
  EXPECT_EQ(setting_of(factory, "adapter"), "lora");
  const TrainerFile axolotl = read_trainer_file(
      "base_model: meta-llama/Llama-3.1-8B\nreward_model: true\nsequence_len: 2048\n", "rm.yml",
      test::catalog().model_ids());
  EXPECT_EQ(setting_of(axolotl, "method"), "reward");

  const auto plan = test::run_cli(
      {"plan", "-", "--json"},
      "candidates:\n  gpus: [h200-nvl]\n  counts: [1]\n  mig: false\n"
      "runs:\n  - {name: rm, model: llama-3.1-8b, method: reward, adapter: lora, tokens: 1e7}\n");
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_TRUE(
      nlohmann::json::parse(plan.out)["runs"][0]["recommendation"].value("feasible", false));
}

TEST(Objectives, TrainerFilesNameTheObjectiveAndItsAdapter) {
  const TrainerFile axolotl = read_trainer_file(
      "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_r: 8\nrl: dpo\n"
      "sequence_len: 2048\nmicro_batch_size: 2\n",
      "dpo.yaml", test::catalog().model_ids());
  EXPECT_EQ(axolotl.format, TrainerFormat::kAxolotl);
  EXPECT_EQ(setting_of(axolotl, "method"), "dpo");
  EXPECT_EQ(setting_of(axolotl, "adapter"), "lora");

  const TrainerFile factory = read_trainer_file(
      "model_name_or_path: meta-llama/Llama-3.1-8B\nstage: dpo\npref_loss: simpo\n"
      "finetuning_type: lora\ntemplate: llama3\n",
      "simpo.yaml", test::catalog().model_ids());
  EXPECT_EQ(factory.format, TrainerFormat::kLlamaFactory);
  EXPECT_EQ(setting_of(factory, "method"), "simpo");
  EXPECT_EQ(setting_of(factory, "adapter"), "lora");

  const TrainerFile kto = read_trainer_file(
      "model_name_or_path: meta-llama/Llama-3.1-8B\nstage: kto\nfinetuning_type: full\n"
      "template: llama3\n",
      "kto.yaml", test::catalog().model_ids());
  EXPECT_EQ(setting_of(kto, "method"), "kto");
  EXPECT_EQ(setting_of(kto, "adapter"), "full");

  const TrainerFile trl = read_trainer_file(
      "{\"per_device_train_batch_size\": 2, \"precompute_ref_log_probs\": true, \"bf16\": true}",
      "dpo_config.json", test::catalog().model_ids());
  EXPECT_EQ(setting_of(trl, "precompute_ref"), "true");
}

}  // namespace
}  // namespace ftplan
