// Online objectives (GRPO, PPO, RLOO): the step as rollout + weight sync + scoring + training, the
// rollout engine's memory beside training, the models each objective holds, the batch a step
// generates, and their errors. Expected figures come from the generation model and the training
// evaluation they compose, called directly.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "infer/generation.hpp"
#include "memory/fit.hpp"
#include "memory/model_states.hpp"
#include "perf/ops.hpp"
#include "plan/evaluate.hpp"
#include "plan/runs.hpp"
#include "render/reason_words.hpp"
#include "support.hpp"
#include "workload/objective.hpp"

namespace ftplan {
namespace {

const PlanningData& data() {
  static const PlanningData d = PlanningData::load(test::catalog());
  return d;
}

Workload online(const std::string& model, Objective o, Method m, std::int64_t micro_batch = 4) {
  Workload w = test::workload(model, m);
  w.objective = o;
  w.micro_batch = micro_batch;
  return w;
}

Evaluation evaluate(Workload w, const Placement& p) {
  resolve_rollout_batch(w, p.count, false);
  const Topology t = build_topology(*p.gpu, p.count, "", data().comm);
  return evaluate_placement(w, model_states(w), build_step_ops(w), p, t, data());
}

TEST(Rl, GrpoStepIsRolloutSyncScoringAndTraining) {
  Workload w = online("qwen2.5-7b", Objective::kGrpo, Method::kLora);
  w.rollout.prompts_per_step = 16;
  const Placement p = test::on("h200-nvl", 4, Sharding::kDdp);
  const Evaluation e = evaluate(w, p);
  ASSERT_TRUE(e.step.feasible) << word_reason(e.step.reason);
  const RlStep& r = e.rl;
  ASSERT_TRUE(r.online);
  // 16 prompts × 8 completions over 4 colocated engines: 32 sequences each.
  EXPECT_EQ(r.group, 8);
  EXPECT_EQ(r.sequences, 128);
  EXPECT_EQ(r.engines, 4);
  EXPECT_EQ(r.sequences_per_engine, 32);
  // The parts add up to the step, which is what the evaluation reports as its step time.
  EXPECT_NEAR(r.total.value,
              (r.rollout.total() + r.weight_sync + r.sleep_wake + r.scoring + r.training).value,
              1e-12);
  EXPECT_DOUBLE_EQ(e.scale.step_seconds.value, r.total.value);
  EXPECT_GT(r.rollout.total().value, 0);
  EXPECT_GT(r.scoring.value, 0);
  EXPECT_GT(r.training.value, 0);

  // The rollout is the generation model's, on an engine with 0.3 of the card beside training.
  const GenerationModel g = make_generation_model(w.model, WeightFormat::kBF16, KvDtype::kBF16);
  const GenerationMemory m = generation_memory(g, p.gpu->capacity(), 0.3, Bytes(), 512 + 256);
  EXPECT_EQ(r.engine_memory.max_concurrent_sequences, m.max_concurrent_sequences);
  const std::int64_t batch = std::min<std::int64_t>(32, m.max_concurrent_sequences);
  EXPECT_EQ(r.concurrent, batch);
  const RolloutTime expected =
      rollout_time(g, make_device(p), data().efficiency(*p.gpu), 32, 512, 256, batch);
  EXPECT_DOUBLE_EQ(r.rollout.total().value, expected.total().value);

  // Colocated: the weights are copied on the card, read and written once at its bandwidth.
  const Bytes weights(2.0 * static_cast<double>(w.model->params.total));
  EXPECT_DOUBLE_EQ(r.weight_sync.value, (weights * 2.0 / make_device(p).bandwidth).value);

  // The bottleneck is the largest part.
  const double largest = std::max({r.rollout.total().value, (r.weight_sync + r.sleep_wake).value,
                                   r.scoring.value, r.training.value});
  const double named = r.bottleneck == RlPart::kRollout      ? r.rollout.total().value
                       : r.bottleneck == RlPart::kWeightSync ? (r.weight_sync + r.sleep_wake).value
                       : r.bottleneck == RlPart::kScoring    ? r.scoring.value
                                                             : r.training.value;
  EXPECT_DOUBLE_EQ(named, largest);

  // Longer completions make the rollout longer and leave training as it was per token.
  Workload longer = w;
  longer.rollout.completion_len = 1024;
  const Evaluation el = evaluate(longer, p);
  EXPECT_GT(el.rl.rollout.decode.value, 3 * r.rollout.decode.value);
}

TEST(Rl, EpochsRepeatTrainingAndNotTheRollout) {
  Workload w = online("qwen2.5-7b", Objective::kGrpo, Method::kLora);
  w.rollout.prompts_per_step = 8;
  const Placement p = test::on("h200-nvl", 2, Sharding::kDdp);
  const Evaluation one = evaluate(w, p);
  w.rollout.epochs = 3;
  const Evaluation three = evaluate(w, p);
  EXPECT_NEAR(three.rl.training.value, 3 * one.rl.training.value, 1e-9);
  EXPECT_DOUBLE_EQ(three.rl.rollout.total().value, one.rl.rollout.total().value);
  EXPECT_DOUBLE_EQ(three.rl.scoring.value, one.rl.scoring.value);
}

TEST(Rl, TheColocatedEngineTakesItsShareOfTheCard) {
  Workload w = online("llama-3.1-8b", Objective::kGrpo, Method::kLora);
  resolve_rollout_batch(w, 1, false);
  const Placement p = test::on("h200-nvl");
  const MemoryEstimate m = estimate_memory(w, p);
  EXPECT_DOUBLE_EQ(m.rollout_engine.value, 0.3 * m.capacity.value);
  EXPECT_DOUBLE_EQ(m.step_peak.value,
                   (m.states_on_card + m.activations + m.overhead + m.rollout_engine).value);
  // Asleep while training: the larger of the training step and the awake engine beside the states.
  w.rollout.sleep = true;
  const MemoryEstimate s = estimate_memory(w, p);
  const Bytes training = s.states_on_card + s.activations + s.overhead;
  const Bytes awake = s.states_on_card + s.overhead + s.rollout_engine;
  EXPECT_DOUBLE_EQ(s.step_peak.value, std::max(training, awake).value);
  EXPECT_LT(s.step_peak, m.step_peak);
  // Separate rollout cards: nothing beside training.
  w.rollout.sleep = false;
  w.rollout.mode = RolloutMode::kSeparate;
  EXPECT_EQ(estimate_memory(w, p).rollout_engine.value, 0);
}

TEST(Rl, EachObjectiveHoldsItsModels) {
  const auto states = [](Objective o, Method m, double kl) {
    Workload w = online("llama-3.1-8b", o, m);
    w.rollout.kl = kl;
    return model_states(w);
  };
  const Workload sft = test::workload("llama-3.1-8b", Method::kFull);
  const ModelStates base = model_states(sft);
  const double copy = 2.0 * static_cast<double>(sft.model->params.total);
  // GRPO's default KL coefficient is 0: TRL loads no reference model.
  EXPECT_EQ(states(Objective::kGrpo, Method::kFull, -1).reference_weights.value, 0);
  EXPECT_DOUBLE_EQ(states(Objective::kGrpo, Method::kFull, 0.04).reference_weights.value, copy);
  // With adapters the reference is the base with them off: no copy.
  EXPECT_EQ(states(Objective::kRloo, Method::kLora, -1).reference_weights.value, 0);
  // PPO: reference and reward model frozen, the value model trained as the policy. Reward and
  // value model are sequence classifiers: no language-model head (lm_head, 128,256 × 4,096).
  const double head = 128256.0 * 4096;
  const ModelStates ppo = states(Objective::kPpo, Method::kFull, -1);
  EXPECT_DOUBLE_EQ(ppo.reference_weights.value, 2 * copy - 2 * head);
  EXPECT_DOUBLE_EQ(ppo.trained_weights.value, 2 * base.trained_weights.value - 2 * head);
  EXPECT_DOUBLE_EQ(ppo.optimizer_states.value, 2 * base.optimizer_states.value - 8 * head);
  EXPECT_DOUBLE_EQ(ppo.master_weights.value, 2 * base.master_weights.value - 4 * head);

  // Passes without gradient: the policy's old log-probabilities, the reference's when the KL
  // coefficient is not 0, PPO's value and reward models.
  Workload grpo = online("llama-3.1-8b", Objective::kGrpo, Method::kFull);
  EXPECT_EQ(no_grad_forward_passes(grpo), 1);
  grpo.rollout.kl = 0.04;
  EXPECT_EQ(no_grad_forward_passes(grpo), 2);
  EXPECT_EQ(no_grad_forward_passes(online("llama-3.1-8b", Objective::kPpo, Method::kFull)), 4);
  // PPO trains its value model too: twice the computing per epoch, four epochs by default.
  EXPECT_EQ(rl_epochs(online("llama-3.1-8b", Objective::kPpo, Method::kFull)), 4);
}

TEST(Rl, TheBatchIsPromptsTimesGroup) {
  Workload w = online("llama-3.1-8b", Objective::kGrpo, Method::kLora, 2);
  w.rollout.prompts_per_step = 16;
  resolve_rollout_batch(w, 4, false);
  EXPECT_EQ(w.seq, 512 + 256);
  EXPECT_EQ(w.grad_accum, 16);  // 16 × 8 = 128 sequences = 2 × 16 × 4

  Workload d = online("llama-3.1-8b", Objective::kGrpo, Method::kLora, 3);
  resolve_rollout_batch(d, 2, false);  // neither given: the fewest whole passes, lcm(8, 6) = 24
  EXPECT_EQ(d.rollout.prompts_per_step, 3);
  EXPECT_EQ(d.grad_accum, 4);

  Workload bad = online("llama-3.1-8b", Objective::kGrpo, Method::kLora, 3);
  bad.rollout.prompts_per_step = 5;
  try {
    resolve_rollout_batch(bad, 1, false);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.field(), "prompts_per_step");
    EXPECT_NE(std::string(e.what()).find("40 sequences do not split"), std::string::npos)
        << e.what();
  }
  Workload accum = online("llama-3.1-8b", Objective::kGrpo, Method::kLora, 1);
  accum.grad_accum = 3;
  EXPECT_THROW(resolve_rollout_batch(accum, 1, true), UserError);  // 3 is not a multiple of 8
}

TEST(Rl, SeparateRolloutCardsTakeTheFewestThatHoldTheModel) {
  Workload w = online("llama-3.1-70b", Objective::kGrpo, Method::kQlora, 1);
  w.rollout.mode = RolloutMode::kSeparate;
  w.rollout.gpus = 8;
  w.rollout.gpu = &test::catalog().gpu("h100-sxm");
  w.rollout.prompts_per_step = 8;
  const Placement p = test::on("h200-nvl", 2, Sharding::kDdp);
  const Evaluation e = evaluate(w, p);
  ASSERT_TRUE(e.step.feasible) << word_reason(e.step.reason);
  const RlStep& r = e.rl;
  ASSERT_GT(r.engine_tp, 1);
  EXPECT_EQ(r.engines, 8 / r.engine_tp);
  // One engine of half as many cards holds no sequence: the weights and reserve fill it.
  const GenerationModel half =
      make_generation_model(w.model, WeightFormat::kBF16, KvDtype::kBF16, r.engine_tp / 2);
  EXPECT_EQ(generation_memory(half, w.rollout.gpu->capacity(), kDefaultGpuMemoryUtilization,
                              data().overheads.cuda_context, w.seq)
                .max_concurrent_sequences,
            0);
  EXPECT_GT(r.weight_sync.value, 0);
}

TEST(Rl, GenerationRoundsSplitTheRolloutAndSyncOnce) {
  // TRL up to 0.17 generated once per micro-batch: four rounds of 8 sequences per engine instead
  // of one of 32. Each round is the generation model's rollout of its share; the weights move
  // once, a sleeping engine wakes each round.
  Workload w = online("qwen2.5-7b", Objective::kGrpo, Method::kLora);
  w.rollout.prompts_per_step = 16;
  w.rollout.sleep = true;
  const Placement p = test::on("h200-nvl", 4, Sharding::kDdp);
  const RlStep one = evaluate(w, p).rl;
  w.rollout.generation_rounds = 4;
  const RlStep four = evaluate(w, p).rl;
  ASSERT_TRUE(four.feasible) << word_reason(four.reason);
  EXPECT_EQ(four.rounds, 4);
  EXPECT_EQ(four.sequences_per_engine, 8);
  const GenerationModel g = make_generation_model(w.model, WeightFormat::kBF16, KvDtype::kBF16);
  const RolloutTime round = rollout_time(g, make_device(p), data().efficiency(*p.gpu), 8, 512, 256,
                                         std::min<std::int64_t>(8, four.concurrent));
  EXPECT_NEAR(four.rollout.total().value, 4 * round.total().value, 1e-9 * round.total().value);
  EXPECT_EQ(four.rollout.waves, 4 * round.waves);
  EXPECT_GT(four.rollout.total().value, one.rollout.total().value);  // smaller batches
  EXPECT_DOUBLE_EQ(four.weight_sync.value, one.weight_sync.value);
  EXPECT_NEAR(four.sleep_wake.value, 4 * one.sleep_wake.value, 1e-12);
  EXPECT_DOUBLE_EQ(four.training.value, one.training.value);
}

TEST(Rl, CompletionsOfVaryingLengthTrainOnTheirMean) {
  // Completions of 1024 tokens at most, 300 on average: the engine decodes fewer sequences as
  // they end, and training without padding runs on prompt + mean tokens.
  Workload w = online("qwen2.5-7b", Objective::kGrpo, Method::kLora);
  w.rollout.prompts_per_step = 16;
  w.rollout.completion_len = 1024;
  const Placement p = test::on("h200-nvl", 4, Sharding::kDdp);
  const Evaluation fixed = evaluate(w, p);
  w.rollout.completion_len_mean = 300;
  w.lengths.padding_free = true;
  set_online_sequence(w);
  EXPECT_EQ(w.seq, 512 + 1024);  // the memory peak: the longest
  EXPECT_NEAR(w.tokens_per_sequence(), 512 + 300, 1e-6);
  const Evaluation varied = evaluate(w, p);
  ASSERT_TRUE(varied.rl.feasible);
  EXPECT_EQ(varied.memory.peak, fixed.memory.peak);
  EXPECT_LT(varied.rl.rollout.decode.value, fixed.rl.rollout.decode.value);
  EXPECT_LT(varied.rl.training.value, 0.7 * fixed.rl.training.value);
  const GenerationModel g = make_generation_model(w.model, WeightFormat::kBF16, KvDtype::kBF16);
  const RolloutTime expected =
      rollout_time(g, make_device(p), data().efficiency(*p.gpu), 32, 512, 1024,
                   varied.rl.concurrent, {}, max_entropy_lengths(300, 1024));
  EXPECT_DOUBLE_EQ(varied.rl.rollout.total().value, expected.total().value);
  EXPECT_NEAR(varied.rl.completion_tokens_per_second, 128 * 300 / varied.rl.total.value, 1e-6);
}

TEST(Rl, AStatedEngineSizeIsUsedOrRefused) {
  Workload w = online("qwen2.5-7b", Objective::kGrpo, Method::kLora);
  w.rollout.prompts_per_step = 16;
  w.rollout.rollout_tp = 2;
  const Evaluation two = evaluate(w, test::on("h200-nvl", 4, Sharding::kDdp));
  ASSERT_TRUE(two.rl.feasible) << word_reason(two.rl.reason);
  EXPECT_EQ(two.rl.engine_tp, 2);
  EXPECT_EQ(two.rl.engines, 2);
  EXPECT_EQ(two.rl.sequences_per_engine, 64);
  // Four cards per engine on two training cards: no engine fits, and the reason says why.
  w.rollout.rollout_tp = 4;
  const Evaluation bad = evaluate(w, test::on("h200-nvl", 2, Sharding::kDdp));
  EXPECT_FALSE(bad.rl.feasible);
  EXPECT_EQ(bad.rl.reason.code, ReasonCode::kRolloutTpSplit);
  EXPECT_NE(word_reason(bad.rl.reason).find("4 cards (--rollout-tp)"), std::string::npos)
      << word_reason(bad.rl.reason);
}

TEST(Rl, AnEngineWithoutRoomIsNamed) {
  Workload w = online("llama-3.1-70b", Objective::kGrpo, Method::kQlora, 1);
  w.rollout.engine_memory = 0.2;  // 30 GB of an H200 NVL cannot hold 141 GB of 16-bit weights
  const Evaluation e = evaluate(w, test::on("h200-nvl"));
  EXPECT_FALSE(e.step.feasible);
  EXPECT_FALSE(e.rl.feasible);
  EXPECT_EQ(e.step.reason.code, ReasonCode::kRolloutNoRoom);
  EXPECT_NE(word_reason(e.step.reason).find("--engine-memory"), std::string::npos);
}

TEST(Rl, TheJsonSaysWhyNoRolloutCanRun) {
  // The same engine through `scale --json`: feasible false, and the reason in words (the page
  // shows it in the step box).
  const auto r =
      test::run_cli({"scale", "--model", "llama-3.1-70b", "--method", "grpo", "--adapter", "qlora",
                     "--gpu", "h200-nvl", "--gpus", "1", "--engine-memory", "0.2", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto rl = nlohmann::json::parse(r.out).at("rl");
  EXPECT_FALSE(rl.at("feasible").get<bool>());
  EXPECT_NE(rl.value("reason", "").find("--engine-memory"), std::string::npos) << rl.dump();
  EXPECT_FALSE(rl.contains("seconds"));
}

TEST(Rl, TheCommandLineAnswersAndRefusesWhatDoesNotApply) {
  const auto r = test::run_cli({"scale", "--model", "qwen2.5-7b", "--method", "grpo", "--adapter",
                                "lora", "--gpu", "h200-nvl", "--gpus", "2", "--micro-batch", "4",
                                "--prompts-per-step", "8", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "grpo");
  EXPECT_EQ(j["rollout"]["group_size"], 8);
  EXPECT_EQ(j["grad_accum"], 8);  // 8 × 8 = 64 = 4 × 8 × 2
  const auto& s = j["rl"]["seconds"];
  EXPECT_NEAR(s["step"].get<double>(),
              s["rollout"].get<double>() + s["weight_sync"].get<double>() +
                  s["sleep_wake"].get<double>() + s["scoring"].get<double>() +
                  s["training"].get<double>(),
              5e-4);
  EXPECT_DOUBLE_EQ(j["step_seconds"].get<double>(), s["step"].get<double>());

  const auto text = test::run_cli({"scale", "--model", "qwen2.5-7b", "--method", "ppo", "--adapter",
                                   "lora", "--gpu", "h200-nvl"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find(" prompts × 1 completions = "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("bottleneck: "), std::string::npos) << text.out;

  const auto fit = test::run_cli(
      {"fit", "--model", "llama-3.1-8b", "--method", "grpo", "--gpu", "h200-nvl", "--json"});
  ASSERT_EQ(fit.code, 0) << fit.err;
  const auto fj = nlohmann::json::parse(fit.out);
  EXPECT_NEAR(fj["memory_GB"]["rollout_engine"].get<double>(),
              0.3 * fj["memory_GB"]["capacity"].get<double>(), 2e-3);

  const std::pair<std::vector<std::string>, std::string> bad[] = {
      {{"--method", "lora", "--group-size", "4"}, "--group-size applies to the online"},
      {{"--method", "grpo", "--seq", "1024"}, "give --prompt-len, --completion-len"},
      {{"--method", "grpo", "--seq-mean", "700"}, "--completion-len-mean instead of --seq-mean"},
      {{"--method", "grpo", "--completion-len-mean", "300"},
       "completion_len_mean is the mean tokens per completion: 1 to completion_len (256), got 300"},
      {{"--method", "grpo", "--generation-rounds", "0"}, "generation_rounds must be 1 to 4096"},
      {{"--method", "grpo", "--prompts-per-step", "6", "--generation-rounds", "4"},
       "6 prompts per step do not split into 4 generation rounds"},
      {{"--method", "grpo", "--rollout-tp", "3"}, "rollout_tp is the cards one engine spans"},
      {{"--method", "grpo", "--group-size", "1"}, "group_size must be at least 2"},
      {{"--method", "grpo", "--rollout-gpu", "h100-sxm"}, "rollout_gpu names the cards"},
      {{"--method", "grpo", "--engine-memory", "1.5"}, "engine_memory is the engine's share"},
      {{"--method", "grpo", "--rollout", "remote"}, "colocated"},
      {{"--method", "grpo", "--precompute-ref"}, "precompute_ref applies"},
  };
  for (const auto& [args, message] : bad) {
    std::vector<std::string> all = {"fit", "--model", "llama-3.1-8b", "--gpu", "h200-nvl"};
    all.insert(all.end(), args.begin(), args.end());
    const auto e = test::run_cli(all);
    EXPECT_EQ(e.code, 2) << args[1];
    EXPECT_NE(e.err.find(message), std::string::npos) << e.err;
  }
}

TEST(Rl, RunsFilesTakeTheRolloutSettings) {
  const std::string text =
      "runs:\n"
      "  - {name: rl, model: llama-3.1-8b, method: grpo, adapter: lora, prompts_per_step: 32,\n"
      "     group_size: 4, prompt_len: 256, completion_len: 768, tokens: 1e8}\n";
  const ModelResolver resolve = [](const std::string& id) { return test::catalog().model(id); };
  const RunsFile f =
      parse_runs_file(text, "runs.yaml", test::catalog(), test::stacks(), resolve, nullptr);
  ASSERT_EQ(f.runs.size(), 1u);
  const PlannedRun& run = f.runs[0];
  EXPECT_EQ(run.global_batch, 128);
  EXPECT_EQ(run.workload.seq, 1024);
  EXPECT_EQ(group_size(run.workload), 4);
  // Tokens trained per step: 128 sequences of 1024 tokens.
  EXPECT_DOUBLE_EQ(run.steps(), std::ceil(1e8 / (128.0 * 1024)));

  // Completions of 300 tokens on average, generated in two rounds by engines of two cards.
  const RunsFile varied = parse_runs_file(
      "runs:\n  - {name: rl, model: llama-3.1-8b, method: grpo, prompts_per_step: 32, group_size: "
      "4,\n     prompt_len: 256, completion_len: 768, completion_len_mean: 300, "
      "generation_rounds: 2,\n     rollout_tp: 2, tokens: 1e8}\n",
      "runs.yaml", test::catalog(), test::stacks(), resolve, nullptr);
  const Workload& vw = varied.runs[0].workload;
  EXPECT_EQ(vw.seq, 1024);
  EXPECT_NEAR(vw.tokens_per_sequence(), 556, 1e-6);
  EXPECT_EQ(vw.rollout.generation_rounds, 2);
  EXPECT_EQ(vw.rollout.rollout_tp, 2);
  EXPECT_NEAR(varied.runs[0].steps(), std::ceil(1e8 / (128.0 * 556)), 1);

  const std::pair<std::string, std::string> bad[] = {
      {"{name: a, model: llama-3.1-8b, method: lora, group_size: 4, tokens: 1e8}", "group_size"},
      {"{name: a, model: llama-3.1-8b, method: grpo, seq: 1024, tokens: 1e8}", "seq"},
      {"{name: a, model: llama-3.1-8b, method: grpo, global_batch: 12, tokens: 1e8}",
       "global_batch"},
      {"{name: a, model: llama-3.1-8b, method: grpo, rollout: remote, tokens: 1e8}", "rollout"},
      {"{name: a, model: llama-3.1-8b, method: grpo, seq_mean: 300, tokens: 1e8}", "seq_mean"},
      {"{name: a, model: llama-3.1-8b, method: grpo, completion_len_mean: 0, tokens: 1e8}",
       "completion_len_mean"},
      {"{name: a, model: llama-3.1-8b, method: grpo, rollout_tp: 3, tokens: 1e8}", "rollout_tp"},
  };
  for (const auto& [run_text, key] : bad) {
    try {
      parse_runs_file("runs:\n  - " + run_text + "\n", "runs.yaml", test::catalog(), test::stacks(),
                      resolve, nullptr);
      ADD_FAILURE() << "no error for " << run_text;
    } catch (const UserError& e) {
      EXPECT_EQ(e.field(), "runs[0]." + key) << e.what();
    }
  }
}

// The planner's recommendation for the one run of a runs file.
nlohmann::json planned(const std::string& runs_yaml) {
  const auto r = test::run_cli({"plan", "-", "--json"}, runs_yaml);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out)["runs"][0]["recommendation"] : nlohmann::json();
}

TEST(Rl, ThePlannerTimesTheWholeOnlineStep) {
  // The planner ranks an online run on its whole step (rollout, weight sync, scoring, training),
  // as `scale` times it for the same placement, not on the training part alone.
  const auto rec = planned(
      "candidates:\n  gpus: [h100-sxm]\n  counts: [4]\n  mig: false\n"
      "runs:\n  - {name: rl, model: qwen2.5-7b, method: grpo, adapter: lora,\n"
      "     micro_batch: 4, prompts_per_step: 16, completion_len: 1024,\n"
      "     tokens: 1e7}\n");
  ASSERT_TRUE(rec.value("feasible", false)) << rec.dump();
  const auto s = test::run_cli({"scale",
                                "--model",
                                "qwen2.5-7b",
                                "--method",
                                "grpo",
                                "--adapter",
                                "lora",
                                "--gpu",
                                "h100-sxm",
                                "--gpus",
                                "4",
                                "--micro-batch",
                                "4",
                                "--prompts-per-step",
                                "16",
                                "--completion-len",
                                "1024",
                                "--shard",
                                rec["shard"].get<std::string>(),
                                "--recompute",
                                rec["recompute"].get<std::string>(),
                                "--json"});
  ASSERT_EQ(s.code, 0) << s.err;
  const auto j = nlohmann::json::parse(s.out);
  ASSERT_GT(j["rl"]["seconds"]["rollout"].get<double>(), 0) << j["rl"].dump();
  EXPECT_NEAR(rec["step_seconds"].get<double>(), j["step_seconds"].get<double>(),
              1e-6 * j["step_seconds"].get<double>());
  EXPECT_NEAR(rec["tokens_per_second"].get<double>(), j["tokens_per_second"].get<double>(),
              1e-6 * j["tokens_per_second"].get<double>());
}

TEST(Rl, ThePlanAndTheReportGiveTheStepsParts) {
  // The recommendation carries its online step in parts (as scale's rl), they add up to the step
  // it was ranked on, and the report's reason names them.
  const std::string runs =
      "candidates:\n  gpus: [h100-sxm]\n  counts: [1]\n  mig: false\n"
      "runs:\n  - {name: rl, model: qwen2.5-7b, method: grpo, adapter: lora,\n"
      "     completion_len: 512, tokens: 1e7}\n";
  const auto rec = planned(runs);
  ASSERT_TRUE(rec.value("feasible", false)) << rec.dump();
  const auto& s = rec.at("rl").at("seconds");
  const double sum = s["rollout"].get<double>() + s["weight_sync"].get<double>() +
                     s["sleep_wake"].get<double>() + s["scoring"].get<double>() +
                     s["training"].get<double>();
  EXPECT_NEAR(sum, rec["step_seconds"].get<double>(), 1e-3 * sum);
  EXPECT_NEAR(s["step"].get<double>(), rec["step_seconds"].get<double>(), 1e-3 * sum);
  const auto report = test::run_cli({"report", "-"}, runs);
  ASSERT_EQ(report.code, 0) << report.err;
  const std::string training = fmt::format("training {:.2f} s", s["training"].get<double>());
  EXPECT_NE(report.out.find("Each GRPO step of"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find(training), std::string::npos) << training;
}

TEST(Rl, AsyncRolloutsOverlapTraining) {
  // One step off-policy on cards of their own: the step is the longer of rollout + weight sync
  // (the engines, on the next step) and scoring + training (the trainer, on this one).
  const std::vector<std::string> run = {
      "scale",    "--model",       "llama-3.1-8b", "--method",       "grpo", "--adapter",
      "lora",     "--gpu",         "h100-sxm",     "--gpus",         "4",    "--rollout",
      "separate", "--rollout-gpu", "h200-nvl",     "--rollout-gpus", "2",    "--json"};
  const auto seq = test::run_cli(run);
  std::vector<std::string> with_async = run;
  with_async.push_back("--async-rollout");
  const auto async = test::run_cli(with_async);
  ASSERT_EQ(seq.code, 0) << seq.err;
  ASSERT_EQ(async.code, 0) << async.err;
  const auto a = nlohmann::json::parse(async.out).at("rl");
  const auto s = nlohmann::json::parse(seq.out).at("rl");
  const auto& p = a.at("seconds");
  const double generating = p["rollout"].get<double>() + p["weight_sync"].get<double>();
  const double trainer = p["scoring"].get<double>() + p["training"].get<double>();
  EXPECT_TRUE(a["overlapped"].get<bool>());
  EXPECT_FALSE(s["overlapped"].get<bool>());
  EXPECT_NEAR(p["step"].get<double>(), std::max(generating, trainer), 2e-4);
  EXPECT_NEAR(s["seconds"]["step"].get<double>(), generating + trainer, 2e-4);
  EXPECT_EQ(a["bottleneck"], generating > trainer ? "rollout" : "training");
  EXPECT_EQ(nlohmann::json::parse(async.out)["rollout"]["async_rollout"], true);
  // A colocated engine shares the training cards: nothing to overlap.
  const auto colocated = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "grpo",
                                        "--gpu", "h100-sxm", "--async-rollout", "--json"});
  EXPECT_EQ(colocated.code, 2);
  EXPECT_EQ(nlohmann::json::parse(colocated.err)["error"]["field"], "async_rollout")
      << colocated.err;
  const auto sft = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                  "h100-sxm", "--async-rollout"});
  EXPECT_EQ(sft.code, 2);
  EXPECT_NE(sft.err.find("online objectives"), std::string::npos) << sft.err;
  // Runs files take it, at its key.
  const auto bad = test::run_cli({"plan", "-", "--json"},
                                 "runs:\n  - {name: a, model: llama-3.1-8b, method: grpo, "
                                 "async_rollout: true, tokens: 1e7}\n");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("runs[0].async_rollout"), std::string::npos) << bad.err;
}

TEST(Rl, StepSaysWhatItTimes) {
  // `step` times one card's passes of the training part; it says where the whole step is.
  const auto r = test::run_cli({"step", "--model", "qwen2.5-7b", "--method", "grpo", "--adapter",
                                "lora", "--gpu", "h200-nvl"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("scoring and training passes of the GRPO step"), std::string::npos) << r.err;
  const auto sft =
      test::run_cli({"step", "--model", "qwen2.5-7b", "--method", "lora", "--gpu", "h200-nvl"});
  ASSERT_EQ(sft.code, 0) << sft.err;
  EXPECT_EQ(sft.err.find("rollout"), std::string::npos) << sft.err;
}

TEST(Rl, ExplainDerivesTheOnlineStep) {
  // explain's rl.* figures are scale's parts for the same run, and the peak follows the rollout
  // engine the fit adds.
  const std::vector<std::string> run = {"--model",      "qwen2.5-7b", "--method",     "grpo",
                                        "--adapter",    "lora",       "--gpu",        "h200-nvl",
                                        "--prompt-len", "1024",       "--group-size", "4"};
  auto with = [&](std::vector<std::string> head, std::vector<std::string> tail) {
    head.insert(head.end(), run.begin(), run.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  const auto x = test::run_cli(with({"explain", "rl"}, {"--json"}));
  ASSERT_EQ(x.code, 0) << x.err;
  const auto sc = test::run_cli(with({"scale"}, {"--gpus", "1", "--json"}));
  ASSERT_EQ(sc.code, 0) << sc.err;
  const auto scaled = nlohmann::json::parse(sc.out);
  const auto& parts = scaled.at("rl").at("seconds");
  std::map<std::string, double> figures;
  const auto listed = nlohmann::json::parse(x.out);
  for (const auto& f : listed.at("figures"))
    figures[f.at("id").get<std::string>()] = f.at("value").get<double>();
  EXPECT_NEAR(figures["rl.step_seconds"], parts["step"].get<double>(), 1e-3);
  EXPECT_NEAR(figures["rl.rollout_seconds"], parts["rollout"].get<double>(), 1e-3);
  EXPECT_NEAR(figures["rl.scoring_seconds"], parts["scoring"].get<double>(), 1e-3);
  EXPECT_NEAR(figures["rl.training_seconds"], parts["training"].get<double>(), 1e-3);
  const auto peak = test::run_cli(with({"explain", "memory.peak"}, {"--json"}));
  ASSERT_EQ(peak.code, 0) << peak.err;
  const auto explained = nlohmann::json::parse(peak.out);
  const auto& p = explained.at("figures").at(0);
  const auto fit = test::run_cli(with({"fit"}, {"--json"}));
  ASSERT_EQ(fit.code, 0) << fit.err;
  const auto fitted = nlohmann::json::parse(fit.out);
  const auto& m = fitted.at("memory_GB");
  EXPECT_NEAR(p.at("value").get<double>(), m["peak"].get<double>(), 1e-3);
  EXPECT_NE(p.dump().find("memory.rollout_engine"), std::string::npos) << p.dump();
}

TEST(Rl, SeparateRolloutCardsCountInTheRunsCardHours) {
  // 4 H100 train while 2 H200 NVL generate: six cards are rented for the run's hours.
  const auto rec = planned(
      "candidates:\n  gpus: [h100-sxm]\n  counts: [4]\n  mig: false\n"
      "runs:\n  - {name: rl, model: llama-3.1-8b, method: grpo, adapter: lora,\n"
      "     micro_batch: 4, prompts_per_step: 16, rollout: separate,\n"
      "     rollout_gpu: h200-nvl, rollout_gpus: 2, tokens: 1e7}\n");
  ASSERT_TRUE(rec.value("feasible", false)) << rec.dump();
  // The JSON gives card hours to 0.1 h: six times the hours within half of that (and of the
  // hours' own rounding, six times over).
  EXPECT_NEAR(rec["card_hours"].get<double>(), 6.0 * rec["time_to_train_hours"].get<double>(),
              0.06);
}

// A GRPO run on 4 training cards of three types, its rollout cards left to the planner
// (`rollout_gpu` as given, `rollout_gpus` the most, or the count).
std::string rollout_runs(const std::string& rollout_gpu, int rollout_gpus) {
  return "candidates:\n  gpus: [h100-sxm, h200-nvl, l40s]\n  counts: [4]\n  mig: false\n"
         "runs:\n  - {name: rl, model: llama-3.1-8b, method: grpo, adapter: lora,\n"
         "     micro_batch: 4, prompts_per_step: 32, completion_len: 1024, rollout: separate,\n"
         "     rollout_gpu: " +
         rollout_gpu + ", rollout_gpus: " + std::to_string(rollout_gpus) + ", tokens: 1e7}\n";
}

nlohmann::json planned_by(const std::string& runs_yaml, const std::string& rank) {
  const auto r = test::run_cli({"plan", "-", "--rank-by", rank, "--json"}, runs_yaml);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out)["runs"][0]["recommendation"] : nlohmann::json();
}

TEST(Rl, ThePlannerChoosesTheRolloutCards) {
  // With rollout_gpu auto the planner tries each candidate card at 1, 2 and 4 cards for the
  // rollout of each training placement: its recommendation is at least as good, by the ranked
  // figure, as the best plan with any one of those rollouts fixed.
  for (const std::string rank : {"card-hours", "time"}) {
    const auto chosen = planned_by(rollout_runs("auto", 4), rank);
    ASSERT_TRUE(chosen.value("feasible", false)) << chosen.dump();
    ASSERT_TRUE(chosen.contains("rollout")) << chosen.dump();
    EXPECT_TRUE(chosen["rollout"]["chosen"].get<bool>());
    const std::string key = rank == "time" ? "time_to_train_hours" : "card_hours";
    const double best = chosen[key].get<double>();
    int compared = 0;
    for (const std::string gpu : {"h100-sxm", "h200-nvl", "l40s"}) {
      for (const int n : {1, 2, 4}) {
        const auto fixed = planned_by(rollout_runs(gpu, n), rank);
        if (!fixed.value("feasible", false)) continue;
        ++compared;
        EXPECT_FALSE(fixed["rollout"]["chosen"].get<bool>());
        EXPECT_EQ(fixed["rollout"]["gpu"], gpu);
        EXPECT_EQ(fixed["rollout"]["cards"], n);
        EXPECT_LE(best, fixed[key].get<double>() * (1 + 1e-9))
            << rank << ": " << n << " × " << gpu << " beats the chosen "
            << chosen["rollout"].dump();
        // The chosen rollout itself, fixed, gives the same figure.
        if (chosen["rollout"]["gpu"] == gpu && chosen["rollout"]["cards"] == n)
          EXPECT_NEAR(fixed[key].get<double>(), best, 1e-6 * best);
      }
    }
    EXPECT_GE(compared, 5) << rank;
  }
  // The reason says where the rollouts run and among how many choices (3 cards × 1, 2, 4).
  const auto r = test::run_cli({"plan", "-", "--json"}, rollout_runs("auto", 4));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto why = nlohmann::json::parse(r.out)["runs"][0]["why"].get<std::string>();
  EXPECT_NE(why.find("rollouts on"), std::string::npos) << why;
  EXPECT_NE(why.find("best of 9 card types and counts"), std::string::npos) << why;
}

TEST(Rl, ChosenRolloutCardsAreThePlannersChoice) {
  // One run's command has no candidates to choose among: it says where auto applies.
  const auto r =
      test::run_cli({"scale", "--model", "llama-3.1-8b", "--method", "grpo", "--adapter", "lora",
                     "--rollout", "separate", "--rollout-gpu", "auto", "--gpu", "h100-sxm"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.err.find("runs file"), std::string::npos) << r.err;
}

TEST(Rl, ChosenRolloutCardsNeedASeparateRollout) {
  const auto r =
      test::run_cli({"plan", "-", "--json"},
                    "runs:\n  - {name: rl, model: llama-3.1-8b, method: grpo, adapter: lora,\n"
                    "     rollout_gpu: auto, tokens: 1e7}\n");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.err.find("rollout_gpu"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rollout separate"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ftplan
