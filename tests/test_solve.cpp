// The solvers: the answer fits and one step more does not; and the seed's verdicts keep holding
// with activations counted.
#include <gtest/gtest.h>

#include "memory/solve.hpp"
#include "render/reason_words.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using test::on;
using test::on_mig;
using test::workload;

// Returns whether an answer was found (none: even one step does not fit, which is checked).
bool expect_boundary(const Workload& base, const Placement& p, const SolveResult& r,
                     const std::string& what) {
  EXPECT_FALSE(r.at_limit) << what;
  EXPECT_FALSE(r.binding.empty()) << what;
  Workload at = base, beyond = base;
  if (r.largest == 0) {
    (r.what == SolveFor::kSequence ? beyond.seq : beyond.micro_batch) = r.step;
    EXPECT_NE(estimate_memory(beyond, p).verdict, Verdict::kFits) << what;
    return false;
  }
  (r.what == SolveFor::kSequence ? at.seq : at.micro_batch) = r.largest;
  (r.what == SolveFor::kSequence ? beyond.seq : beyond.micro_batch) = r.largest + r.step;
  EXPECT_EQ(estimate_memory(at, p).verdict, Verdict::kFits) << what;
  EXPECT_NE(estimate_memory(beyond, p).verdict, Verdict::kFits) << what;
  EXPECT_EQ(r.largest % r.step, 0) << what;
  EXPECT_GE(r.largest_tight, r.largest) << what;
  return true;
}

TEST(Solve, AnswerFitsAndOneStepMoreDoesNot) {
  struct Case {
    std::string model;
    Method method;
    Placement placement;
  };
  const std::vector<Case> cases = {
      {"llama-3.1-8b", Method::kLora, on("rtx-pro-6000")},
      {"llama-3.1-8b", Method::kQlora, on_mig("h200-nvl", "1g.18gb")},
      {"qwen3-32b", Method::kLora, on("h200-nvl")},
      {"llama-3.3-70b", Method::kQlora, on("rtx-pro-6000")},
      {"llama-3.3-70b", Method::kLora, on("h200-nvl", 2, Sharding::kFsdp)},
      {"llama-3.1-8b", Method::kFull, on("rtx-pro-6000", 2, Sharding::kFsdp)},
      {"qwen3-30b-a3b", Method::kLora, on("b200")},
      {"gemma-3-12b", Method::kLora, on("l40s")},
  };
  int answered = 0, asked = 0;
  for (const auto& c : cases)
    for (Recompute rc : {Recompute::kFull, Recompute::kNone}) {
      Workload w = workload(c.model, c.method);
      w.recompute = rc;
      const std::string what =
          c.model + " on " + c.placement.gpu->id + " recompute " + std::string(recompute_name(rc));
      answered += expect_boundary(w, c.placement, max_sequence(w, c.placement), what + " seq");
      answered +=
          expect_boundary(w, c.placement, max_micro_batch(w, c.placement), what + " micro-batch");
      asked += 2;
    }
  // Without recomputation a 2048-token sequence of some cases fits no micro-batch; the others
  // have an answer.
  EXPECT_GT(answered * 4, asked * 3) << answered << " of " << asked;
  // Other sequence steps work the same way.
  const Workload w = workload("llama-3.1-8b", Method::kLora);
  EXPECT_TRUE(expect_boundary(w, on("rtx-pro-6000"), max_sequence(w, on("rtx-pro-6000"), 1000),
                              "step 1000"));
}

TEST(Solve, M8_70B_LoraOnOneH200NvlIsNotPlannableAt2048Tokens) {
  const Workload w = workload("llama-3.3-70b", Method::kLora);
  EXPECT_EQ(w.seq, 2048);
  EXPECT_NE(estimate_memory(w, on("h200-nvl")).verdict, Verdict::kFits);
  const SolveResult r = max_sequence(w, on("h200-nvl"));
  EXPECT_EQ(r.largest, 0);
  EXPECT_EQ(r.binding, "model states on the card");
}

TEST(Solve, M5_8B_LoraOnRtxPro6000LeavesRoomForLongSequences) {
  // The seed: 86 GB free after the model states. With activations, sequences of 16k tokens and
  // more fit at the defaults (full recomputation, FlashAttention, an unchunked loss), and the
  // output layer's logits are what runs out.
  const Workload w = workload("llama-3.1-8b", Method::kLora);
  const SolveResult r = max_sequence(w, on("rtx-pro-6000"));
  EXPECT_GE(r.largest, 16384);
  EXPECT_NE(r.binding.find("logits"), std::string::npos) << r.binding;
  // A chunked loss moves the limit up: then the recomputed block binds.
  Workload chunked = w;
  chunked.options.chunked_loss = true;
  EXPECT_GT(max_sequence(chunked, on("rtx-pro-6000")).largest, 2 * r.largest);
}

TEST(Solve, M13_SeedVerdictsHoldWithActivations) {
  for (const char* gpu : {"h200-nvl", "rtx-pro-6000"}) {
    for (const auto& [model, method] :
         {std::pair<const char*, Method>{"llama-3.1-8b", Method::kLora},
          {"qwen3-32b", Method::kLora},
          {"llama-3.3-70b", Method::kQlora}}) {
      const MemoryEstimate m = estimate_memory(workload(model, method), on(gpu));
      EXPECT_EQ(m.verdict, Verdict::kFits) << model << " on " << gpu;
      EXPECT_GT(m.activations.value, 0) << model;
    }
  }
  // M10: the 8B full fine-tune still fits the H200 NVL with activations; M11: not one RTX PRO
  // 6000, but two with FSDP.
  EXPECT_EQ(estimate_memory(workload("llama-3.1-8b", Method::kFull), on("h200-nvl")).verdict,
            Verdict::kFits);
  EXPECT_EQ(estimate_memory(workload("llama-3.1-8b", Method::kFull), on("rtx-pro-6000")).verdict,
            Verdict::kDoesNotFit);
  EXPECT_EQ(estimate_memory(workload("llama-3.1-8b", Method::kFull),
                            on("rtx-pro-6000", 2, Sharding::kFsdp))
                .verdict,
            Verdict::kFits);
}

TEST(Solve, NothingFitsIsAResultNotAnError) {
  const Workload w = workload("llama-3.1-405b", Method::kFull);
  const SolveResult r = max_micro_batch(w, on("rtx-4090"));
  EXPECT_EQ(r.largest, 0);
  EXPECT_EQ(r.largest_tight, 0);
  EXPECT_NE(word_reason(r.reason).find("not even"), std::string::npos);
}

}  // namespace
}  // namespace ftplan
