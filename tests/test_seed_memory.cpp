// Memory figures M1–M14 and G4 of shared/spec/SEED-FIGURES.md, computed through the public API
// from the catalog data and asserted to the precision the article prints.
#include <gtest/gtest.h>

#include "memory/model_states.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using test::on;
using test::on_mig;
using test::printed;
using test::workload;

double states_GB(const Workload& w, const Placement& p) {
  return to_GB(estimate_memory(w, p).states.total());
}
double free_GB(const Workload& w, const Placement& p) {
  return to_GB(estimate_memory(w, p).free);
}

TEST(SeedMemory, M1_Llama31_8B_Has_8_03_B_Parameters) {
  EXPECT_EQ(
      printed(static_cast<double>(test::catalog().model("llama-3.1-8b")->params.total) / 1e9, 2),
      8.03);
}

TEST(SeedMemory, M2_Lora_R16_Trains_41_9_M_Parameters) {
  EXPECT_EQ(
      printed(static_cast<double>(trainable_params(workload("llama-3.1-8b", Method::kLora)).count) /
                  1e6,
              1),
      41.9);
}

TEST(SeedMemory, M3_FullOverLoraRatioIsAbout190) {
  const double full =
      static_cast<double>(trainable_params(workload("llama-3.1-8b", Method::kFull)).count);
  const double lora =
      static_cast<double>(trainable_params(workload("llama-3.1-8b", Method::kLora)).count);
  EXPECT_EQ(printed(full / lora, 1), 191.5);
  EXPECT_NEAR(full / lora, 190, 2.0);  // the article's "about 190×"
}

TEST(SeedMemory, M4_8B_Lora_ModelStates_16_7_GB) {
  EXPECT_EQ(printed(states_GB(workload("llama-3.1-8b", Method::kLora), on("rtx-pro-6000")), 1),
            16.7);
}

TEST(SeedMemory, M5_8B_Lora_Leaves_86_GB_On_RtxPro6000) {
  EXPECT_EQ(printed(free_GB(workload("llama-3.1-8b", Method::kLora), on("rtx-pro-6000")), 0), 86);
}

TEST(SeedMemory, M6_Qwen3_32B_Lora_Leaves_35_GB_On_RtxPro6000) {
  EXPECT_EQ(printed(free_GB(workload("qwen3-32b", Method::kLora), on("rtx-pro-6000")), 0), 35);
}

TEST(SeedMemory, M7_Llama33_70B_Bf16_Base_Is_141_GB) {
  const Workload w = workload("llama-3.3-70b", Method::kLora);
  EXPECT_EQ(printed(to_GB(model_states(w).frozen_weights), 0), 141);
}

TEST(SeedMemory, M8_70B_Lora_Leaves_About_6_GB_On_H200Nvl_TooLittle) {
  const Workload w = workload("llama-3.3-70b", Method::kLora);
  const MemoryEstimate m = estimate_memory(w, on("h200-nvl"));
  EXPECT_EQ(printed(to_GB(m.free), 0), 6);
  // The spec lists 6.4 (the article seems to subtract from 150.8 rounded); 143771 MiB gives 6.34.
  EXPECT_NEAR(to_GB(m.free), 6.4, 0.1);
  EXPECT_NE(m.verdict, Verdict::kFits) << "too little to plan with (seed)";
  // Two cards of either type hold it (FSDP: each keeps half).
  EXPECT_EQ(estimate_memory(w, on("h200-nvl", 2, Sharding::kFsdp)).verdict, Verdict::kFits);
  EXPECT_EQ(estimate_memory(w, on("rtx-pro-6000", 2, Sharding::kFsdp)).verdict, Verdict::kFits);
}

TEST(SeedMemory, M9_70B_Qlora_Leaves_60_And_108_GB) {
  const Workload w = workload("llama-3.3-70b", Method::kQlora);
  EXPECT_EQ(printed(free_GB(w, on("rtx-pro-6000")), 0), 60);
  EXPECT_EQ(printed(free_GB(w, on("h200-nvl")), 0), 108);
}

TEST(SeedMemory, M10_8B_Full_Adam32_128_GB_States_22_GB_Free_On_H200Nvl) {
  const Workload w = workload("llama-3.1-8b", Method::kFull);
  EXPECT_EQ(printed(states_GB(w, on("h200-nvl")), 0), 128);
  EXPECT_EQ(printed(free_GB(w, on("h200-nvl")), 0), 22);
  EXPECT_EQ(estimate_memory(w, on("h200-nvl")).verdict, Verdict::kFits);
}

TEST(SeedMemory, M11_8B_Full_Adam32_NeedsTwoRtxPro6000WithFsdp_64_2_GB_Each) {
  const Workload w = workload("llama-3.1-8b", Method::kFull);
  EXPECT_EQ(estimate_memory(w, on("rtx-pro-6000")).verdict, Verdict::kDoesNotFit);
  const MemoryEstimate two = estimate_memory(w, on("rtx-pro-6000", 2, Sharding::kFsdp));
  EXPECT_EQ(printed(to_GB(two.states.total()), 1), 64.2);
  EXPECT_EQ(two.verdict, Verdict::kFits);
}

TEST(SeedMemory, M12_8B_Full_Adam8bit_About_80_GB_Fits_One_RtxPro6000) {
  const Workload w = workload("llama-3.1-8b", Method::kFull, Optimizer::kAdamW8bit);
  EXPECT_NEAR(states_GB(w, on("rtx-pro-6000")), 80, 0.5);  // "etwa 80 GB"
  EXPECT_EQ(estimate_memory(w, on("rtx-pro-6000")).verdict, Verdict::kFits);
}

TEST(SeedMemory, M13_LoraUpTo32B_QloraUpTo70B_FitBothCards) {
  for (const char* gpu : {"h200-nvl", "rtx-pro-6000"}) {
    EXPECT_EQ(estimate_memory(workload("llama-3.1-8b", Method::kLora), on(gpu)).verdict,
              Verdict::kFits)
        << gpu;
    EXPECT_EQ(estimate_memory(workload("qwen3-32b", Method::kLora), on(gpu)).verdict,
              Verdict::kFits)
        << gpu;
    EXPECT_EQ(estimate_memory(workload("llama-3.3-70b", Method::kQlora), on(gpu)).verdict,
              Verdict::kFits)
        << gpu;
  }
}

TEST(SeedMemory, M14_8B_Qlora_ModelStates_6_4_GB) {
  EXPECT_EQ(printed(states_GB(workload("llama-3.1-8b", Method::kQlora), on("rtx-pro-6000")), 1),
            6.4);
}

TEST(SeedMemory, G4_8B_Lora_In_MigInstances_7_3_And_Minus_0_2_GB) {
  const Workload w = workload("llama-3.1-8b", Method::kLora);
  EXPECT_EQ(printed(free_GB(w, on_mig("rtx-pro-6000", "1g.24gb")), 1), 7.3);
  EXPECT_EQ(printed(free_GB(w, on_mig("h200-nvl", "1g.18gb")), 1), -0.2);
  EXPECT_EQ(estimate_memory(w, on_mig("h200-nvl", "1g.18gb")).verdict, Verdict::kDoesNotFit);
}

TEST(SeedMemory, QloraBitsPerParameterIs4_127) {
  EXPECT_EQ(printed(quantized_bits_per_param(QuantConfig{}), 3), 4.127);
}

TEST(SeedMemory, CapacitiesAre150_8And102_6GB) {
  EXPECT_EQ(printed(to_GB(test::catalog().gpu("h200-nvl").capacity()), 1), 150.8);
  EXPECT_EQ(printed(to_GB(test::catalog().gpu("rtx-pro-6000").capacity()), 1), 102.6);
}

}  // namespace
}  // namespace ftplan
