// MIG figures G1–G6 of shared/spec/SEED-FIGURES.md, computed through the public API (mig/) from
// the catalog data and asserted to the precision the article prints.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"
#include "mig/fit.hpp"
#include "mig/layout.hpp"
#include "mig/pack.hpp"
#include "mig/rules.hpp"
#include "render/reason_words.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using test::printed;
using test::workload;

const MigRules& rules() {
  static const MigRules r = load_mig_rules(test::catalog());
  return r;
}

MigCard card(const std::string& gpu) {
  return make_mig_card(test::catalog().gpu(gpu));
}

int profile_index(const MigCard& c, const std::string& name) {
  const MigProfile* p = c.spec().find(name);
  EXPECT_NE(p, nullptr) << name;
  return static_cast<int>(p - c.spec().profiles.data());
}

const MigProfileFit& in(const MigFitReport& r, const MigCard& c, const std::string& name) {
  return r.profiles[static_cast<std::size_t>(profile_index(c, name))];
}

bool has_note(const std::vector<MigNote>& notes, const std::string& id) {
  return std::any_of(notes.begin(), notes.end(), [&](const MigNote& n) { return n.id == id; });
}

TEST(SeedMig, G1_H200Nvl_Seven_1g18gb_At_16_5_GB_Or_Four_Of_About_35_GB) {
  const MigCard h200 = card("h200-nvl");
  const int small = profile_index(h200, "1g.18gb");
  const int quarter = profile_index(h200, "1g.35gb");
  // Seven instances of 16.5 GB each (the seed's figure; the data records the 18 GB dispute).
  EXPECT_EQ(h200.most_instances[static_cast<std::size_t>(small)], 7);
  EXPECT_EQ(h200.spec().profiles[static_cast<std::size_t>(small)].memory_GB.value, 16.5);
  EXPECT_NE(h200.spec().profiles[static_cast<std::size_t>(small)].memory_GB.dispute.find("18 GB"),
            std::string::npos);
  // Or four of about 35 GB.
  EXPECT_EQ(h200.most_instances[static_cast<std::size_t>(quarter)], 4);
  EXPECT_NEAR(*h200.spec().profiles[static_cast<std::size_t>(quarter)].memory_GB.value, 35, 0.5);
  // Both are valid layouts of one card, and one more instance of either is not.
  std::vector<int> seven(h200.spec().profiles.size(), 0), four = seven;
  seven[static_cast<std::size_t>(small)] = 7;
  four[static_cast<std::size_t>(quarter)] = 4;
  EXPECT_NE(h200.find(seven), nullptr);
  EXPECT_NE(h200.find(four), nullptr);
  seven[static_cast<std::size_t>(small)] = 8;
  four[static_cast<std::size_t>(quarter)] = 5;
  EXPECT_EQ(h200.find(seven), nullptr);
  EXPECT_EQ(h200.find(four), nullptr);
  // `ftplan mig` states the dispute as a note.
  const MigFitReport r = fit_mig(workload("llama-3.1-8b", Method::kQlora), h200, rules());
  EXPECT_TRUE(has_note(r.notes, "dispute.1g.18gb"));
}

TEST(SeedMig, G2_RtxPro6000_Four_Of_24_GB_Or_Two_Of_48_GB) {
  for (const char* gpu : {"rtx-pro-6000", "rtx-pro-6000-maxq", "rtx-pro-6000-server"}) {
    const MigCard c = card(gpu);
    const int quarter = profile_index(c, "1g.24gb");
    const int half = profile_index(c, "2g.48gb");
    EXPECT_EQ(c.most_instances[static_cast<std::size_t>(quarter)], 4) << gpu;
    EXPECT_EQ(c.spec().profiles[static_cast<std::size_t>(quarter)].memory_GB.value, 24) << gpu;
    EXPECT_EQ(c.most_instances[static_cast<std::size_t>(half)], 2) << gpu;
    EXPECT_EQ(c.spec().profiles[static_cast<std::size_t>(half)].memory_GB.value, 48) << gpu;
  }
}

TEST(SeedMig, G3_8B_Qlora_6_4_GB_Fits_Every_Instance_On_Both_Cards) {
  const Workload w = workload("llama-3.1-8b", Method::kQlora);
  for (const char* gpu : {"h200-nvl", "rtx-pro-6000"}) {
    const MigCard c = card(gpu);
    const MigFitReport r = fit_mig(w, c, rules());
    ASSERT_EQ(r.profiles.size(), c.spec().profiles.size());
    for (const auto& f : r.profiles) {
      EXPECT_EQ(printed(to_GB(f.memory.states.total()), 1), 6.4);
      EXPECT_TRUE(f.fits) << gpu << " "
                          << c.spec().profiles[static_cast<std::size_t>(f.profile)].name << ": "
                          << word_reason(f.memory.reason);
    }
    // So as many jobs run at once as the smallest profile has instances: 7 and 4.
    ASSERT_NE(r.smallest_fit(c), nullptr);
    EXPECT_EQ(r.smallest_fit(c)->most_per_card, std::string(gpu) == "h200-nvl" ? 7 : 4);
  }
}

TEST(SeedMig, G4_8B_Lora_Leaves_7_3_GB_In_1g24gb_And_Minus_0_2_GB_In_1g18gb) {
  const Workload w = workload("llama-3.1-8b", Method::kLora);
  const MigCard rtx = card("rtx-pro-6000");
  const MigCard h200 = card("h200-nvl");
  const MigFitReport on_rtx = fit_mig(w, rtx, rules());
  const MigFitReport on_h200 = fit_mig(w, h200, rules());
  EXPECT_EQ(printed(to_GB(in(on_rtx, rtx, "1g.24gb").memory.free), 1), 7.3);
  EXPECT_EQ(printed(to_GB(in(on_h200, h200, "1g.18gb").memory.free), 1), -0.2);
  // "about 7 GB left" is room to work in; −0.2 GB is none.
  EXPECT_FALSE(in(on_h200, h200, "1g.18gb").fits);
  EXPECT_EQ(in(on_h200, h200, "1g.18gb").memory.verdict, Verdict::kDoesNotFit);
  EXPECT_NE(in(on_rtx, rtx, "1g.24gb").memory.verdict, Verdict::kDoesNotFit);
}

TEST(SeedMig, G5_Nccl_Not_Supported_With_Mig_Single_Gpu_Jobs_Only) {
  // The note on every MIG card.
  for (const auto& g : test::catalog().gpus()) {
    if (!g.mig.supported) continue;
    const MigFitReport r =
        fit_mig(workload("llama-3.1-8b", Method::kQlora), make_mig_card(g), rules());
    EXPECT_TRUE(has_note(r.notes, "single_gpu_jobs")) << g.id;
  }
  EXPECT_NE(rules().single_gpu_jobs.text.find("NCCL is not supported with MIG"), std::string::npos);
  // A run on instances of several cards is refused with that reason.
  Placement p = test::on_mig("h200-nvl", "1g.18gb");
  p.count = 2;
  try {
    validate(p);
    ADD_FAILURE() << "a two-card MIG run was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("NCCL does not support MIG"), std::string::npos)
        << e.what();
  }
  // pack never proposes one: every job sits in exactly one instance of one card, and a run that
  // needs two cards (70B LoRA on a BF16 base, M8) is left unplaced with the NCCL reason.
  const MigCard h200 = card("h200-nvl");
  const PackResult r = pack({{"qlora-8b", workload("llama-3.1-8b", Method::kQlora), 5},
                             {"lora-70b", workload("llama-3.3-70b", Method::kLora), 1}},
                            h200, rules());
  int jobs = 0;
  for (const auto& c : r.cards)
    jobs += static_cast<int>(c.jobs.size());
  EXPECT_EQ(jobs, 5);
  EXPECT_EQ(r.experiments[1].home, PackHome::kUnplaced);
  EXPECT_NE(word_reason(r.experiments[1].reason).find("NCCL is not supported with MIG"),
            std::string::npos);
}

TEST(SeedMig, G6_DisplayModeRule_On_Workstation_And_MaxQ_Not_Server) {
  const Workload w = workload("llama-3.1-8b", Method::kQlora);
  for (const char* gpu : {"rtx-pro-6000", "rtx-pro-6000-maxq"}) {
    const MigFitReport r = fit_mig(w, card(gpu), rules());
    EXPECT_TRUE(has_note(r.notes, "compute_display_mode")) << gpu;
  }
  for (const char* gpu : {"rtx-pro-6000-server", "h200-nvl"}) {
    const MigFitReport r = fit_mig(w, card(gpu), rules());
    EXPECT_FALSE(has_note(r.notes, "compute_display_mode")) << gpu;
  }
  EXPECT_NE(rules().compute_display_mode.text.find("display outputs off"), std::string::npos);
}

}  // namespace
}  // namespace ftplan
