// MIG layouts against NVIDIA's documented facts, the profile rule, the exact packing (known optima
// derived in the comments, a brute-force cross-check), the pack-file parser and the CLI shapes.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "mig/fit.hpp"
#include "mig/layout.hpp"
#include "mig/pack.hpp"
#include "mig/pack_file.hpp"
#include "mig/rules.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;
using test::workload;

const MigRules& rules() {
  static const MigRules r = load_mig_rules(test::catalog());
  return r;
}

MigCard card(const std::string& gpu) {
  return make_mig_card(test::catalog().gpu(gpu));
}

// The profile with this many compute and memory slices (names differ between cards).
int shape(const MigCard& c, int compute, int memory) {
  const auto& ps = c.spec().profiles;
  for (std::size_t i = 0; i < ps.size(); ++i)
    if (ps[i].compute_slices == compute && ps[i].memory_slices == memory)
      return static_cast<int>(i);
  ADD_FAILURE() << c.gpu->id << " has no " << compute << "c/" << memory << "m profile";
  return 0;
}

// Counts per profile from {profile index, count} pairs.
std::vector<int> counts(const MigCard& c, std::initializer_list<std::pair<int, int>> items) {
  std::vector<int> v(c.spec().profiles.size(), 0);
  for (auto [p, n] : items)
    v[static_cast<std::size_t>(p)] += n;
  return v;
}

bool valid(const MigCard& c, std::initializer_list<std::pair<int, int>> items) {
  return c.find(counts(c, items)) != nullptr;
}

std::vector<const GpuSpec*> seven_slice_cards() {
  std::vector<const GpuSpec*> out;
  for (const auto& g : test::catalog().gpus())
    if (g.mig.supported && g.mig.compute_slices == 7) out.push_back(&g);
  return out;
}

// ---- layouts ----------------------------------------------------------------------------------

// NVIDIA's facts for the 7-compute-slice parts (A100, H100, H200, B200, B300; 8 memory slices):
// mig-parted's all-<profile> configurations (7 × 1g, 4 × 1g double memory, 3 × 2g, 2 × 3g,
// 1 × 4g, 1 × 7g) and its all-balanced configuration (2 × 1g + 2g + 3g), the guide's 4g + 3g.
TEST(MigLayout, SevenSliceParts_DocumentedLayoutsAreValid) {
  const auto cards = seven_slice_cards();
  ASSERT_GE(cards.size(), 8u);
  for (const GpuSpec* g : cards) {
    const MigCard c = make_mig_card(*g);
    const int g1 = shape(c, 1, 1), g1x2 = shape(c, 1, 2), g2 = shape(c, 2, 2), g3 = shape(c, 3, 4),
              g4 = shape(c, 4, 4), g7 = shape(c, 7, 8);
    EXPECT_TRUE(valid(c, {{g1, 7}})) << g->id;
    EXPECT_TRUE(valid(c, {{g1x2, 4}})) << g->id;
    EXPECT_TRUE(valid(c, {{g2, 3}})) << g->id;
    EXPECT_TRUE(valid(c, {{g3, 2}})) << g->id;
    EXPECT_TRUE(valid(c, {{g4, 1}})) << g->id;
    EXPECT_TRUE(valid(c, {{g7, 1}})) << g->id;
    EXPECT_TRUE(valid(c, {{g3, 1}, {g2, 1}, {g1, 2}})) << g->id;  // all-balanced
    EXPECT_TRUE(valid(c, {{g4, 1}, {g3, 1}})) << g->id;
    // Not valid: an eighth 1g (1g may start at slices 0-6 only); a 1g beside two 3g (compute
    // would allow it, 6 + 1 = 7, but the two 3g hold all 8 memory slices); 4g + 3g + 1g
    // (8 compute slices of 7); two 4g (one placement); anything beside the 7g.
    EXPECT_FALSE(valid(c, {{g1, 8}})) << g->id;
    EXPECT_FALSE(valid(c, {{g3, 2}, {g1, 1}})) << g->id;
    EXPECT_FALSE(valid(c, {{g4, 1}, {g3, 1}, {g1, 1}})) << g->id;
    EXPECT_FALSE(valid(c, {{g4, 2}})) << g->id;
    EXPECT_FALSE(valid(c, {{g7, 1}, {g1, 1}})) << g->id;
  }
}

// RTX PRO 6000 (all editions; 4 compute and 4 memory slices): datasheet "4 × 24 GB / 2 × 48 GB /
// 1 × 96 GB", mig-parted's all-balanced 2 × 1g.24gb + 1 × 2g.48gb.
TEST(MigLayout, RtxPro6000_DocumentedLayoutsAreValid) {
  for (const char* gpu : {"rtx-pro-6000", "rtx-pro-6000-maxq", "rtx-pro-6000-server"}) {
    const MigCard c = card(gpu);
    const int q = shape(c, 1, 1), h = shape(c, 2, 2), w = shape(c, 4, 4);
    EXPECT_TRUE(valid(c, {{q, 4}})) << gpu;
    EXPECT_TRUE(valid(c, {{h, 2}})) << gpu;
    EXPECT_TRUE(valid(c, {{w, 1}})) << gpu;
    EXPECT_TRUE(valid(c, {{q, 2}, {h, 1}})) << gpu;
    EXPECT_FALSE(valid(c, {{q, 5}})) << gpu;
    EXPECT_FALSE(valid(c, {{h, 2}, {q, 1}})) << gpu;
    EXPECT_FALSE(valid(c, {{h, 1}, {q, 3}})) << gpu;
    EXPECT_FALSE(valid(c, {{w, 1}, {q, 1}})) << gpu;
    // Maximal layouts: 4 × 1g, 2 × 1g + 2g, 2 × 2g, 4g (the buddy split of four slices).
    EXPECT_EQ(c.maximal.size(), 4u) << gpu;
  }
}

TEST(MigLayout, PlacementRuleOnExplicitPlacements) {
  const MigCard c = card("h200-nvl");
  const int g1 = shape(c, 1, 1), g2 = shape(c, 2, 2), g3 = shape(c, 3, 4);
  // 3g at slices 4-7, 2g at 0-1, 1g at 2 and 3: 7 compute slices, 8 memory slices.
  EXPECT_TRUE(is_valid_placement(c.spec(), {{g3, 4}, {g2, 0}, {g1, 2}, {g1, 3}}));
  // The same counts with the 3g at slice 0 and the small ones after it: the second 1g would need
  // slice 7, which is no 1g placement.
  EXPECT_FALSE(is_valid_placement(c.spec(), {{g3, 0}, {g2, 4}, {g1, 6}, {g1, 7}}));
  EXPECT_FALSE(is_valid_placement(c.spec(), {{g2, 0}, {g1, 1}}));  // overlap at slice 1
  EXPECT_FALSE(is_valid_placement(c.spec(), {{g2, 6}}));           // 2g starts at 0, 2 or 4 only
  EXPECT_FALSE(is_valid_placement(c.spec(), {{g3, 1}}));           // 3g starts at 0 or 4 only
}

// Properties on every MIG card of the catalog: each layout's witness obeys the rule; the layout
// set is closed under removing an instance; the geometry alone (placements, slices) allows
// exactly the instance count the data states per profile (mig-parted, MIG guide).
TEST(MigLayout, EveryCatalogCard_WitnessesValid_DownwardClosed_GeometryMatchesMaxCount) {
  for (const auto& g : test::catalog().gpus()) {
    if (!g.mig.supported) continue;
    const MigCard c = make_mig_card(g);
    ASSERT_FALSE(c.layouts.empty()) << g.id;
    for (const auto& l : c.layouts) {
      EXPECT_TRUE(is_valid_placement(g.mig, l.instances)) << g.id;
      for (std::size_t p = 0; p < l.counts.size(); ++p) {
        if (l.counts[p] == 0) continue;
        std::vector<int> fewer = l.counts;
        --fewer[p];
        const bool empty = std::all_of(fewer.begin(), fewer.end(), [](int n) { return n == 0; });
        if (!empty) EXPECT_NE(c.find(fewer), nullptr) << g.id;
      }
    }
    GpuSpec unlimited = g;
    for (auto& p : unlimited.mig.profiles)
      p.max_count = unlimited.mig.max_instances;
    const MigCard geometry = make_mig_card(unlimited);
    for (std::size_t p = 0; p < g.mig.profiles.size(); ++p)
      EXPECT_EQ(geometry.most_instances[p], g.mig.profiles[p].max_count)
          << g.id << " " << g.mig.profiles[p].name;
  }
}

// The profile rule puts a job in the smallest profile where it fits. That loses nothing when a
// smaller profile nests in every larger one: every placement of the larger holds a placement of
// the smaller, with no more compute slices. True on every catalog card.
TEST(MigLayout, SmallerProfilesNestInLargerOnes) {
  for (const auto& g : test::catalog().gpus()) {
    if (!g.mig.supported) continue;
    const MigCard c = make_mig_card(g);
    for (std::size_t i = 0; i + 1 < c.size_order.size(); ++i) {
      const MigProfile& small = g.mig.profiles[static_cast<std::size_t>(c.size_order[i])];
      const MigProfile& big = g.mig.profiles[static_cast<std::size_t>(c.size_order[i + 1])];
      EXPECT_LE(small.compute_slices, big.compute_slices) << g.id;
      EXPECT_LE(small.memory(), big.memory()) << g.id;
      for (int start : big.placements) {
        const bool nests =
            std::any_of(small.placements.begin(), small.placements.end(), [&](int s) {
              return s >= start && s + small.memory_slices <= start + big.memory_slices;
            });
        EXPECT_TRUE(nests) << g.id << ": " << small.name << " in " << big.name << " at " << start;
      }
    }
  }
}

// ---- exact packing ----------------------------------------------------------------------------

// Cards per card type, by a first-fit-decreasing packer: jobs largest profile first, each onto
// the first card whose counts stay a valid layout. The natural greedy, for comparison.
int first_fit_decreasing(const MigCard& c, const std::vector<int>& demand) {
  std::vector<std::vector<int>> cards;
  for (auto it = c.size_order.rbegin(); it != c.size_order.rend(); ++it) {
    const auto p = static_cast<std::size_t>(*it);
    for (int j = 0; j < demand[p]; ++j) {
      bool placed = false;
      for (auto& counts : cards) {
        ++counts[p];
        if (c.find(counts)) {
          placed = true;
          break;
        }
        --counts[p];
      }
      if (!placed) {
        cards.emplace_back(demand.size(), 0);
        cards.back()[p] = 1;
      }
    }
  }
  return static_cast<int>(cards.size());
}

// Every job in exactly one instance of one card; each MIG card a valid placement.
void expect_well_formed(const PackResult& r, const std::vector<PackJob>& jobs) {
  std::map<std::pair<int, int>, int> seen;
  for (const auto& c : r.cards) {
    std::vector<MigInstance> placed;
    for (const auto& j : c.jobs) {
      ++seen[{j.experiment, j.job}];
      if (c.mig) placed.push_back({j.profile, j.start});
    }
    if (c.mig) EXPECT_TRUE(is_valid_placement(r.gpu->mig, placed));
    if (!c.mig) EXPECT_EQ(c.jobs.size(), 1u);
  }
  for (std::size_t e = 0; e < jobs.size(); ++e) {
    if (r.experiments[e].home == PackHome::kUnplaced) continue;
    for (int j = 1; j <= jobs[e].count; ++j)
      EXPECT_EQ((seen[{static_cast<int>(e), j}]), 1) << jobs[e].name << " #" << j;
  }
  EXPECT_EQ(static_cast<int>(r.cards.size()), r.total_cards());
}

std::vector<int> sorted_instance_counts(const PackResult& r) {
  std::vector<int> n;
  for (const auto& c : r.cards)
    n.push_back(static_cast<int>(c.jobs.size()));
  std::sort(n.rbegin(), n.rend());
  return n;
}

// Nine 8B QLoRA jobs (6.4 GB each, G3). Smallest profile where each fits: RTX PRO 6000 1g.24gb,
// four per card (4 memory slices, one each): ceil(9 / 4) = 3 cards as 4 + 4 + 1. H200 NVL 1g.18gb,
// seven per card: ceil(9 / 7) = 2 cards as 7 + 2. One job per whole card: 9 cards.
TEST(MigPack, NineQlora8BJobs_ThreeRtxPro6000_Or_TwoH200Nvl) {
  const std::vector<PackJob> jobs = {{"sweep", workload("llama-3.1-8b", Method::kQlora), 9}};
  const MigCard rtx = card("rtx-pro-6000");
  const PackResult on_rtx = pack(jobs, rtx, rules());
  EXPECT_EQ(on_rtx.total_cards(), 3);
  EXPECT_EQ(sorted_instance_counts(on_rtx), (std::vector<int>{4, 4, 1}));
  EXPECT_EQ(rtx.spec().profiles[static_cast<std::size_t>(on_rtx.experiments[0].profile)].name,
            "1g.24gb");
  EXPECT_EQ(on_rtx.cards_one_job_per_card, 9);
  expect_well_formed(on_rtx, jobs);

  const MigCard h200 = card("h200-nvl");
  const PackResult on_h200 = pack(jobs, h200, rules());
  EXPECT_EQ(on_h200.total_cards(), 2);
  EXPECT_EQ(sorted_instance_counts(on_h200), (std::vector<int>{7, 2}));
  EXPECT_EQ(h200.spec().profiles[static_cast<std::size_t>(on_h200.experiments[0].profile)].name,
            "1g.18gb");
  expect_well_formed(on_h200, jobs);
}

// Two 70B QLoRA jobs (42.8 GB: too much for 1g.35gb, so 3g.71gb, 3 compute / 4 memory slices) and
// eight 8B QLoRA jobs (1g.18gb, 1/1) on H200 NVL. Optimum: 2 cards, each 3g.71gb at slices 4-7
// + four 1g.18gb at slices 0-3 (3 + 4 = 7 compute slices, 8 memory slices); no card holds more
// than 7 compute slices and the jobs need 2·3 + 8 = 14, so 2 is also the lower bound. First fit
// decreasing puts both 3g.71gb on card 1 (valid: 6 compute slices, all 8 memory slices), then
// seven 1g.18gb on card 2 and the eighth on card 3: one card more.
TEST(MigPack, MixedQueue_ExactSearchBeatsFirstFitDecreasingByOneCard) {
  const std::vector<PackJob> jobs = {{"qlora-70b", workload("llama-3.3-70b", Method::kQlora), 2},
                                     {"qlora-8b", workload("llama-3.1-8b", Method::kQlora), 8}};
  const MigCard h200 = card("h200-nvl");
  const PackResult r = pack(jobs, h200, rules());
  EXPECT_EQ(h200.spec().profiles[static_cast<std::size_t>(r.experiments[0].profile)].name,
            "3g.71gb");
  EXPECT_EQ(h200.spec().profiles[static_cast<std::size_t>(r.experiments[1].profile)].name,
            "1g.18gb");
  EXPECT_EQ(r.total_cards(), 2);
  EXPECT_EQ(r.lower_bound, 2);
  for (const auto& c : r.cards)
    EXPECT_EQ(c.counts, counts(h200, {{shape(h200, 3, 4), 1}, {shape(h200, 1, 1), 4}}));
  expect_well_formed(r, jobs);
  const std::vector<int> demand = counts(h200, {{shape(h200, 3, 4), 2}, {shape(h200, 1, 1), 8}});
  EXPECT_EQ(first_fit_decreasing(h200, demand), 3);
  EXPECT_EQ(r.cards_one_job_per_card, 10);
}

// A demand where the lower bound is not the answer, so the search must prove it: three 2g.35gb
// and two 4g.71gb on H200 NVL. Bound: 2 (one 4g per card). But a 4g sits at slices 0-3 and a 2g
// may start at 0, 2 or 4 only, so a 4g card holds one 2g (at 4-5) besides: 2 cards hold both 4g
// and two 2g, the third 2g needs a third card.
TEST(MigPack, SearchProvesOptimumAboveTheLowerBound) {
  const MigCard h200 = card("h200-nvl");
  const CardCover cover =
      fewest_cards(h200, counts(h200, {{shape(h200, 2, 2), 3}, {shape(h200, 4, 4), 2}}));
  EXPECT_EQ(cover.lower_bound, 2);
  EXPECT_EQ(cover.cards, 3);
  for (const auto& c : cover.per_card)
    EXPECT_NE(h200.find(c), nullptr);
}

// The exact search against a plain dynamic programme over every valid layout (no bounds, no
// symmetry breaking) on every small demand: the same card count.
TEST(MigPack, ExactSearchMatchesBruteForceOnSmallDemands) {
  for (const char* gpu : {"h200-nvl", "rtx-pro-6000"}) {
    const MigCard c = card(gpu);
    const std::size_t n = c.spec().profiles.size();
    const int top = n > 3 ? 2 : 4;
    std::map<std::vector<int>, int> memo;
    std::function<int(const std::vector<int>&)> best = [&](const std::vector<int>& d) {
      if (std::all_of(d.begin(), d.end(), [](int v) { return v == 0; })) return 0;
      if (auto it = memo.find(d); it != memo.end()) return it->second;
      int b = 1 << 20;
      for (const auto& l : c.layouts) {
        std::vector<int> rest(n);
        for (std::size_t p = 0; p < n; ++p)
          rest[p] = std::max(0, d[p] - l.counts[p]);
        if (rest != d) b = std::min(b, 1 + best(rest));
      }
      return memo[d] = b;
    };
    std::vector<int> d(n, 0);
    int checked = 0;
    while (true) {
      EXPECT_EQ(fewest_cards(c, d).cards, best(d)) << gpu;
      ++checked;
      std::size_t i = 0;
      while (i < n && d[i] == top)
        d[i++] = 0;
      if (i == n) break;
      ++d[i];
    }
    EXPECT_GT(checked, 100) << gpu;
  }
}

TEST(MigPack, WholeCardAndUnplacedJobs) {
  const MigCard h200 = card("h200-nvl");
  // 8B full fine-tune with 8-bit Adam: about 80 GB (M12) fits no profile below the whole card
  // (71 GB) and fits the card with MIG off; 70B LoRA on a BF16 base (M8) does not fit one card.
  const std::vector<PackJob> jobs = {
      {"full-8b", workload("llama-3.1-8b", Method::kFull, Optimizer::kAdamW8bit), 2},
      {"lora-70b", workload("llama-3.3-70b", Method::kLora), 1},
      {"qlora-8b", workload("llama-3.1-8b", Method::kQlora), 3}};
  const PackResult r = pack(jobs, h200, rules());
  EXPECT_EQ(r.experiments[0].home, PackHome::kWholeCard);
  EXPECT_EQ(r.experiments[1].home, PackHome::kUnplaced);
  EXPECT_EQ(r.experiments[2].home, PackHome::kInstance);
  EXPECT_EQ(r.whole_cards, 2);
  EXPECT_EQ(r.mig_cards, 1);
  EXPECT_EQ(r.total_cards(), 3);
  EXPECT_EQ(r.jobs_unplaced, 1);
  EXPECT_EQ(r.cards_one_job_per_card, 5);
  expect_well_formed(r, jobs);
  // Nothing that fits one card: no card, and the output says so.
  const PackResult none = pack({jobs[1]}, h200, rules());
  EXPECT_EQ(none.total_cards(), 0);
  EXPECT_EQ(pack_optimality_statement(none, h200), "no job fits one card: nothing to pack");
}

// ---- the pack file ----------------------------------------------------------------------------

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(FTPLAN_SOURCE_DIR) + "/" + relative);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

TEST(MigPackFile, ExampleParsesWithTheDefaultsOfFit) {
  const PackFile pf =
      parse_pack_file(read_source("examples/mig-queue.yaml"), "examples/mig-queue.yaml");
  EXPECT_EQ(pf.gpu, "h200-nvl");
  ASSERT_EQ(pf.experiments.size(), 4u);
  EXPECT_EQ(pf.experiments[0].name, "sweep-8b-qlora");
  EXPECT_EQ(pf.experiments[0].count, 8);
  EXPECT_EQ(pf.experiments[0].workload.method, Method::kQlora);
  EXPECT_EQ(pf.experiments[3].workload.optimizer, Optimizer::kAdamW8bit);
  // Keys left out take the defaults of `ftplan fit` (cli/options.hpp).
  const Workload defaults;
  EXPECT_EQ(pf.experiments[1].workload.lora.rank, defaults.lora.rank);
  EXPECT_EQ(pf.experiments[1].workload.seq, defaults.seq);
  EXPECT_EQ(pf.experiments[1].workload.recompute, defaults.recompute);
  EXPECT_EQ(pf.total_jobs(), 14);
}

TEST(MigPackFile, OptionsAndErrorsNameFileLineAndKey) {
  const PackFile pf = parse_pack_file(
      "experiments:\n"
      "  - {name: a, model: qwen3-8b, method: qlora, rank: 64, targets: 'q,v', seq: 4096,\n"
      "     micro_batch: 2, recompute: selective, double_quant: false, count: 3}\n",
      "q.yaml");
  const Workload& w = pf.experiments[0].workload;
  EXPECT_EQ(w.lora.rank, 64);
  EXPECT_EQ(w.seq, 4096);
  EXPECT_EQ(w.micro_batch, 2);
  EXPECT_EQ(w.recompute, Recompute::kSelective);
  EXPECT_FALSE(w.quant.double_quant);
  EXPECT_EQ(pf.experiments[0].model_where, "q.yaml: key 'experiments[0].model' (line 2)");
  // Layer-wise checkpointing, as in a runs file: the count sets full recomputation.
  const PackFile layered = parse_pack_file(
      "experiments:\n  - {name: a, model: qwen3-8b, method: lora, recompute_layers: 12, "
      "count: 1}\n",
      "q.yaml");
  EXPECT_EQ(layered.experiments[0].workload.recompute_layers, 12);
  EXPECT_EQ(layered.experiments[0].workload.recompute, Recompute::kFull);
  // `seq_max` is another name for `seq`, as in a runs file.
  const PackFile longest = parse_pack_file(
      "experiments:\n  - {name: a, model: qwen3-8b, method: lora, seq_max: 6144, count: 1}\n",
      "q.yaml");
  EXPECT_EQ(longest.experiments[0].workload.seq, 6144);

  auto error = [](const std::string& text) -> std::string {
    try {
      parse_pack_file(text, "q.yaml");
    } catch (const UserError& e) {
      return e.what();
    }
    return "accepted";
  };
  // A key the method does not read: double quantization belongs to a quantized base.
  EXPECT_EQ(error("experiments:\n  - {name: a, model: m, method: lora, count: 2, "
                  "double_quant: false}\n"),
            "q.yaml: key 'experiments[0].double_quant' (line 2): double_quant applies to methods "
            "with a quantized frozen base (qlora, qdora); method lora keeps the frozen base in 16 "
            "bits");
  EXPECT_EQ(error("experiments:\n  - {name: a, model: m, method: lora, count: 2, rank: 0}\n"),
            "q.yaml: key 'experiments[0].rank' (line 2): expected a whole number from 1 to 65536, "
            "got 0");
  EXPECT_EQ(error("experiments:\n  - {name: a, model: m, method: lora, count: 2, seq: 512, "
                  "seq_max: 1024}\n"),
            "q.yaml: key 'experiments[0].seq_max' (line 2): seq_max is another name for seq: give "
            "one of them");
  EXPECT_EQ(error("experiments:\n  - {name: a, model: m, method: lora, count: 2, seq: long}\n"),
            "q.yaml: key 'experiments[0].seq' (line 2): expected a whole number, got 'long'");
  EXPECT_NE(error("experiments:\n  - {name: a, model: m, method: lora, count: 2, "
                  "recompute: half}\n")
                .find("q.yaml: key 'experiments[0].recompute' (line 2): unknown recompute mode "
                      "'half'"),
            std::string::npos);
  EXPECT_EQ(error("experiments:\n  - {name: a, model: m, method: lora, count: 2, "
                  "recompute_layers: -3}\n"),
            "q.yaml: key 'experiments[0].recompute_layers' (line 2): expected a whole number "
            "from 0 to 1048576, got -3");
  EXPECT_NE(error("- a\n- b\n").find("expected a map of keys"), std::string::npos);
  EXPECT_NE(error("experiments: {a: 1}\n").find("expected a list"), std::string::npos);
  EXPECT_NE(error("experiments:\n  - {name: a, model: m, method: lora, count: 1001}\n")
                .find("expected a whole number from 1 to 1000, got 1001"),
            std::string::npos);
  std::string many = "experiments:\n";
  for (int i = 0; i < 3; ++i)
    many += fmt::format("  - {{name: e{}, model: m, method: lora, count: 1000}}\n", i);
  EXPECT_NE(error(many).find("3000 jobs in all; a pack file holds at most 2000"),
            std::string::npos);
}

// ---- the CLI ----------------------------------------------------------------------------------

json run_json(const std::vector<std::string>& args) {
  auto r = test::run_cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

TEST(MigCli, MigJsonHasTheDocumentedKeys) {
  json j = run_json(
      {"mig", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "rtx-pro-6000", "--json"});
  ASSERT_EQ(j["instances"].size(), 3u);
  const json& q = j["instances"][0];
  EXPECT_EQ(q["profile"], "1g.24gb");
  EXPECT_EQ(q["capacity_GB"], 24);
  EXPECT_EQ(q["max_count"], 4);
  EXPECT_EQ(q["most_per_card"], 4);
  EXPECT_NEAR(q["free_GB"].get<double>(), 7.27, 0.01);  // 24 − 16.732 (G4: 7.3)
  // headroom = capacity − peak, each figure rounded to 0.001 GB (the instance's 24 GB exact), so
  // the two sides differ by at most 0.002 GB. The peak holds the step's activations (4.3 GB) and
  // overheads besides the states, so the headroom is well below the free memory: a headroom that
  // forgot the activations would miss by more than 4 GB.
  const double activations = q["activations_GB"].get<double>();
  EXPECT_GT(activations, 1.0);
  EXPECT_NEAR(q["headroom_GB"].get<double>(),
              q["capacity_GB"].get<double>() - q["peak_GB"].get<double>(), 0.002);
  EXPECT_LT(q["headroom_GB"].get<double>(), q["free_GB"].get<double>() - activations);
  EXPECT_TRUE(q["fits"].is_boolean());
  EXPECT_TRUE(q["verdict"].is_string());
  EXPECT_TRUE(q["step_seconds"].is_null());
  std::vector<std::string> note_ids;
  for (const auto& n : j["notes"])
    note_ids.push_back(n["id"]);
  EXPECT_NE(std::find(note_ids.begin(), note_ids.end(), "single_gpu_jobs"), note_ids.end());
  EXPECT_NE(std::find(note_ids.begin(), note_ids.end(), "compute_display_mode"), note_ids.end());
  EXPECT_EQ(j["mig"]["maximal_layouts"].size(), 4u);

  json one = run_json({"mig", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl",
                       "--profile", "1g.18gb", "--json"});
  ASSERT_EQ(one["instances"].size(), 1u);
  EXPECT_EQ(one["instances"][0]["fits"], false);
  // 16.5 GB − 16.732 GB of model states (M4); the seed prints −0.2.
  EXPECT_NEAR(one["instances"][0]["free_GB"].get<double>(), -0.232, 0.001);
  EXPECT_NE(one["instances"][0]["memory_dispute"].get<std::string>().find("18 GB"),
            std::string::npos);
}

TEST(MigCli, MigTextShowsTheTableAndTheNotes) {
  // --wide: the notes in whole lines, as they are searched here.
  auto r = test::run_cli(
      {"--wide", "mig", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1g.18gb"), std::string::npos);
  EXPECT_NE(r.out.find("smallest profile where it fits: 1g.35gb — 4 such jobs"), std::string::npos);
  EXPECT_NE(r.out.find("NCCL is not supported with MIG"), std::string::npos);
  EXPECT_NE(r.out.find("disputed: 18 GB"), std::string::npos);
}

TEST(MigCli, PackExampleOnTwoCardTypes) {
  const std::string file = std::string(FTPLAN_SOURCE_DIR) + "/examples/mig-queue.yaml";
  json j = run_json({"pack", file, "--gpu", "h200-nvl", "--gpu", "rtx-pro-6000", "--json"});
  EXPECT_EQ(j["jobs"], 14);
  ASSERT_EQ(j["packings"].size(), 2u);
  for (const auto& p : j["packings"]) {
    EXPECT_EQ(p["optimal"], true);
    EXPECT_EQ(p["one_job_per_card_cards"], 14);
    EXPECT_EQ(p["cards"].get<int>(), static_cast<int>(p["layout"].size()));
    EXPECT_LT(p["cards"].get<int>(), 14);
    EXPECT_FALSE(p["rule"].get<std::string>().empty());
  }
  // Text: the card count, the optimality claim, the comparison.
  auto text = test::run_cli({"pack", file});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("optimal: an exact search"), std::string::npos);
  EXPECT_NE(text.out.find("one job per whole card instead: 14 cards"), std::string::npos);
}

// A pack file's layer-wise checkpointing reaches the job's workload check: more blocks than the
// model has is a user error (exit 2) naming the experiment's key.
TEST(MigCli, PackChecksRecomputeLayersAgainstTheModel) {
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("ftplan-pack-layers-" + std::to_string(::getpid()) + ".yaml"))
                               .string();
  {
    std::ofstream out(file);
    out << "experiments:\n"
           "  - {name: a, model: llama-3.1-8b, method: lora, recompute_layers: 40, count: 1}\n";
  }
  const auto r = test::run_cli({"pack", file, "--gpu", "h200-nvl"});
  std::filesystem::remove(file);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("recompute_layers must be 1 to the model's 32 blocks (0: every block), "
                       "got 40"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace ftplan
