// Properties of the model-state accounting that hold for every catalog model.
#include <gtest/gtest.h>

#include "memory/model_states.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

TEST(MemoryProperties, TrainableBytesGrowWithRank) {
  for (const auto& m : test::catalog().models()) {
    Workload w = test::workload(m->arch.id, Method::kLora);
    double previous = 0;
    for (int rank : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
      w.lora.rank = rank;
      const ModelStates s = model_states(w);
      const double trained =
          (s.trained_weights + s.gradients + s.master_weights + s.optimizer_states).value;
      EXPECT_GT(trained, previous) << m->arch.id << " rank " << rank;
      previous = trained;
    }
  }
}

TEST(MemoryProperties, FsdpOverNCardsDividesModelStatesByN) {
  for (const auto& m : test::catalog().models())
    for (Method method : {Method::kFull, Method::kLora, Method::kQlora}) {
      const Workload w = test::workload(m->arch.id, method);
      const double one = estimate_memory(w, test::on("h200-nvl")).states.total().value;
      for (int n : {2, 3, 4, 8, 16}) {
        const double per_card =
            estimate_memory(w, test::on("h200-nvl", n, Sharding::kFsdp)).states.total().value;
        EXPECT_NEAR(per_card * n, one, one * 1e-12) << m->arch.id << " n=" << n;
      }
    }
}

TEST(MemoryProperties, DdpReplicatesAndZeroStagesSplitMoreAndMore) {
  const Workload w = test::workload("llama-3.1-8b", Method::kFull);
  const double none =
      estimate_memory(w, test::on("h200-nvl", 4, Sharding::kDdp)).states.total().value;
  const double z1 =
      estimate_memory(w, test::on("h200-nvl", 4, Sharding::kZero1)).states.total().value;
  const double z2 =
      estimate_memory(w, test::on("h200-nvl", 4, Sharding::kZero2)).states.total().value;
  const double z3 =
      estimate_memory(w, test::on("h200-nvl", 4, Sharding::kFsdp)).states.total().value;
  EXPECT_EQ(none, model_states(w).total().value);
  EXPECT_GT(none, z1);
  EXPECT_GT(z1, z2);
  EXPECT_GT(z2, z3);
}

TEST(MemoryProperties, QloraBelowLoraBelowFullForEveryModel) {
  for (const auto& m : test::catalog().models()) {
    const double q = model_states(test::workload(m->arch.id, Method::kQlora)).total().value;
    const double l = model_states(test::workload(m->arch.id, Method::kLora)).total().value;
    const double f = model_states(test::workload(m->arch.id, Method::kFull)).total().value;
    EXPECT_LT(q, l) << m->arch.id;
    EXPECT_LT(l, f) << m->arch.id;
  }
}

TEST(MemoryProperties, OptimizerBytesPerTrainedParameter) {
  const Workload base = test::workload("llama-3.1-8b", Method::kFull);
  const double n = static_cast<double>(base.model->params.total);
  auto per_param = [&](Optimizer o) {
    Workload w = base;
    w.optimizer = o;
    return model_states(w).total().value / n;
  };
  EXPECT_DOUBLE_EQ(per_param(Optimizer::kAdamW), 16.0);
  EXPECT_DOUBLE_EQ(per_param(Optimizer::kAdamW8bit), 10.0);
  EXPECT_DOUBLE_EQ(per_param(Optimizer::kAdamWBf16), 8.0);
  EXPECT_DOUBLE_EQ(per_param(Optimizer::kSgdMomentum), 12.0);
  EXPECT_DOUBLE_EQ(per_param(Optimizer::kSgd), 8.0);
  // Adafactor: 8 B plus a factored second moment far smaller than Adam's 8 B per parameter.
  EXPECT_GT(per_param(Optimizer::kAdafactor), 8.0);
  EXPECT_LT(per_param(Optimizer::kAdafactor), 8.1);
}

TEST(MemoryProperties, QuantizedBytesAreExactForPartialBlocks) {
  QuantConfig q;  // 4 bits, block 64, double quantization with 256
  // 64 × 256 weights: 8192 B of codes, 256 one-byte absmax values, one FP32 second-level constant.
  QuantizedBytes b = quantized_weight_bytes(64 * 256, q);
  EXPECT_EQ(b.codes.value, 8192);
  EXPECT_EQ(b.constants.value, 256 + 4);
  // One weight more opens a new block and a new second-level block.
  b = quantized_weight_bytes(64 * 256 + 1, q);
  EXPECT_EQ(b.codes.value, 8193);
  EXPECT_EQ(b.constants.value, 257 + 8);
}

}  // namespace
}  // namespace ftplan
