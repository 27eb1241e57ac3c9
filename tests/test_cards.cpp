// The cards people rent or own: every catalog card loads with its sourced key figures, cards are
// found by the names nvidia-smi prints, the local machine is read from nvidia-smi's CSV, and a
// user's own card file needs only a few figures.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "catalog/smi_csv.hpp"
#include "core/error.hpp"
#include "perf/device.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

std::string cases(const std::string& rel) {
  return std::string(FTPLAN_SOURCE_DIR) + "/tests/cases/" + rel;
}

double rate(const std::string& id, TensorPrecision p) {
  return test::catalog().gpu(id).tensor_figure(p).value.value_or(-1);
}

// Key figures as the sources in data/sources-gpus-rented.yaml give them (dense tensor rates:
// half the vendor's "with sparsity" figure where it prints only that).
struct KeyFigures {
  const char* id;
  double visible_MiB;
  double bandwidth_GBps;
  double bf16;  // -1: unknown (null in the file)
  double fp8;
  const char* source;
};

const KeyFigures kCards[] = {
    {"l4", 23034, 300, 121, 242, "L4 datasheet: 24 GB, 300 GB/s, BF16 242 / FP8 485 sparse"},
    {"t4", 15360, 320, -1, -1, "T4 datasheet: 320 GB/s, FP16 65 TFLOPS, no BF16 (Turing)"},
    {"a10", 23028, 600, 125, -1, "A10: BF16 125 dense / 250 sparse, 600 GB/s"},
    {"a10g", 23028, 600, -1, -1, "A10G: AWS variant, tensor rates unpublished"},
    {"a100-40gb-sxm", 40960, 1555, 312, -1, "A100 datasheet: 40 GB HBM2 at 1555 GB/s, 312"},
    {"a100-40gb-pcie", 40960, 1555, 312, -1, "A100 40GB PCIe: 1555 GB/s, 250 W"},
    {"rtx-3090", 24576, 936, 71, -1, "GA102 whitepaper: 936 GB/s, BF16 FP32-acc 71"},
    {"rtx-a6000", 49140, 768, 154.8, -1, "RTX A6000: 768 GB/s, 309.7 sparse"},
    {"l40", 46068, 864, 181.05, 362, "L40 datasheet: BF16 181.05 / FP8 362 dense"},
    {"v100-sxm2-32gb", 32768, 900, -1, -1, "V100 SXM2: 900 GB/s, FP16 tensor 125"},
    {"h20", 97871, 4000, 148, 296, "H20: 96 GB HBM3 at 4.0 TB/s, FP16 148"},
    {"gh200", 97871, 4000, 989.5, 1979, "GH200 480GB: 96 GB HBM3 at 4 TB/s, H100 rates"},
    {"gb200", 189471, 8000, 2500, 5000, "Blackwell datasheet: GB200 5 PF BF16 sparse"},
    {"gb300", 256703, 8000, 2450, 4900, "exemplar-performance: GB300 2450/4900 dense"},
    {"rtx-pro-4500", 32623, 896, -1, -1, "RTX PRO 4500 Blackwell: 32 GB at 896 GB/s"},
    {"rtx-pro-5000", 48935, 1344, -1, -1, "RTX PRO 5000 Blackwell: 48 GB at 1344 GB/s"},
    {"mi300x", 196608, 5300, 1307.4, 2614.9, "ROCm MI300X peak table (dense)"},
    {"mi325x", 262144, 6000, 1307.4, 2614.9, "MI325X: 256 GB HBM3E at 6 TB/s"},
    {"mi355x", 274658, 8000, 2516.6, 5033.2, "MI355X: 288 GB at 8 TB/s, 5 PF FP8"},
    // The cards of data/sources-gpus.yaml's A40 / L20 / A800 / H800 section.
    {"a40", 46068, 696, 149.7, -1, "A40 datasheet: 696 GB/s, BF16 149.7 dense / 299.4 sparse"},
    {"l20", 46068, 864, 119.5, 239, "L20: 864 GB/s, dense BF16 119.5, INT8 239"},
    {"a800-80gb-sxm", 81920, 2039, 312, -1, "A800: the A100 80GB SXM's rates and memory"},
    {"h800-sxm", 81559, 3350, 989.5, 1979, "H800: the H100 SXM's rates, 1979 BF16 sparse"},
};

TEST(Cards, EveryNewCardLoadsWithItsSourcedFigures) {
  for (const auto& k : kCards) {
    SCOPED_TRACE(std::string(k.id) + " (" + k.source + ")");
    const GpuSpec* g = test::catalog().find_gpu(k.id);
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->visible_MiB.value.value_or(0), k.visible_MiB);
    EXPECT_EQ(g->bandwidth_GBps.value.value_or(0), k.bandwidth_GBps);
    EXPECT_DOUBLE_EQ(rate(k.id, TensorPrecision::kBF16), k.bf16);
    EXPECT_DOUBLE_EQ(rate(k.id, TensorPrecision::kFP8), k.fp8);
    EXPECT_FALSE(g->smi_names.empty()) << "every card lists the names nvidia-smi prints";
  }
}

TEST(Cards, FiguresSpecificToTheirArchitecture) {
  const Catalog& c = test::catalog();
  // FP16-only tensor cores (Volta, Turing): training runs in FP16.
  EXPECT_DOUBLE_EQ(rate("t4", TensorPrecision::kFP16), 65);
  EXPECT_DOUBLE_EQ(rate("v100-sxm2-32gb", TensorPrecision::kFP16), 125);
  EXPECT_EQ(c.gpu("t4").architecture, "turing");
  EXPECT_EQ(c.gpu("v100-sxm2-32gb").architecture, "volta");
  // AMD: Infinity Fabric as the card-to-card link, no MIG, MX formats on CDNA 4 only.
  for (const char* id : {"mi300x", "mi325x", "mi355x"}) {
    const GpuSpec& g = c.gpu(id);
    EXPECT_EQ(g.vendor, "amd");
    EXPECT_EQ(g.nvlink.fabric, "infinity-fabric");
    EXPECT_FALSE(g.mig.supported);
    EXPECT_FALSE(g.compute_capability.known()) << "AMD cards have no CUDA compute capability";
  }
  EXPECT_EQ(c.gpu("mi355x").architecture, "cdna4");
  EXPECT_DOUBLE_EQ(rate("mi355x", TensorPrecision::kFP4), 10066);  // 20.1 PF with sparsity
  EXPECT_FALSE(c.gpu("mi300x").tensor_figure(TensorPrecision::kFP4).known());
  // MIG on the A100 40GB: seven 1g.5gb instances.
  const MigProfile* small = c.gpu("a100-40gb-sxm").mig.find("1g.5gb");
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->max_count, 7);
  // NVL72: the rack-scale topologies accept the GB200 and GB300 cards.
  EXPECT_EQ(c.gpu("gb200").nvlink.GBps_per_gpu_both_directions, 1800);
}

TEST(Cards, ExportVariantsKeepTheirSiblingsRatesButNotTheirNvlink) {
  const Catalog& c = test::catalog();
  // A800 and H800: the A100 / H100 SXM with NVLink cut to 400 GB/s per GPU, MIG as the 80 GB parts.
  for (const auto& [variant, sibling] :
       {std::pair{"a800-80gb-sxm", "a100-80gb-sxm"}, std::pair{"h800-sxm", "h100-sxm"}}) {
    SCOPED_TRACE(variant);
    const GpuSpec& v = c.gpu(variant);
    const GpuSpec& s = c.gpu(sibling);
    EXPECT_DOUBLE_EQ(rate(variant, TensorPrecision::kBF16), rate(sibling, TensorPrecision::kBF16));
    EXPECT_EQ(v.visible_MiB.value, s.visible_MiB.value);
    EXPECT_EQ(v.nvlink.kind, s.nvlink.kind);
    EXPECT_EQ(v.nvlink.GBps_per_gpu_both_directions, 400);
    EXPECT_LT(v.nvlink.GBps_per_gpu_both_directions, s.nvlink.GBps_per_gpu_both_directions);
    ASSERT_TRUE(v.mig.supported);
    const MigProfile* small = v.mig.find("1g.10gb");
    ASSERT_NE(small, nullptr);
    EXPECT_EQ(small->max_count, 7);
  }
  EXPECT_FALSE(c.gpu("h800-sxm").tensor_figure(TensorPrecision::kFP64).known());
  // A40: a 2-way NVLink bridge as the RTX A6000; L20: PCIe only. Neither has MIG.
  EXPECT_EQ(c.gpu("a40").nvlink.GBps_per_gpu_both_directions, 112.5);
  EXPECT_EQ(c.gpu("a40").nvlink.bridge_max_cards, 2);
  EXPECT_FALSE(c.gpu("a40").tensor_figure(TensorPrecision::kFP8).known()) << "Ampere has no FP8";
  EXPECT_FALSE(c.gpu("a40").mig.supported);
  EXPECT_FALSE(c.gpu("l20").mig.supported);
}

TEST(Cards, AmdCardsTrainInBf16AndFp8ButNotInNvidiaFormats) {
  const TrainingFormats formats = load_training_formats(test::catalog());
  const GpuSpec& mi300x = test::catalog().gpu("mi300x");
  EXPECT_TRUE(formats.check(mi300x, ComputeFormat::kBF16).supported);
  EXPECT_TRUE(formats.check(mi300x, ComputeFormat::kFP8).supported);
  EXPECT_FALSE(formats.check(mi300x, ComputeFormat::kNVFP4).supported);
  // NVIDIA cards keep their compute-capability rules: the T4 (7.5) has no BF16.
  EXPECT_FALSE(formats.check(test::catalog().gpu("t4"), ComputeFormat::kBF16).supported);
  EXPECT_TRUE(formats.check(test::catalog().gpu("t4"), ComputeFormat::kFP16).supported);
}

// Real names as nvidia-smi --query-gpu=name prints them, and the card each one is.
TEST(Cards, NamesNvidiaSmiPrintsFindTheirCard) {
  const std::pair<const char*, const char*> table[] = {
      {"NVIDIA H100 80GB HBM3", "h100-sxm"},
      {"NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"},
      {"NVIDIA A100-SXM4-40GB", "a100-40gb-sxm"},
      {"NVIDIA A100-PCIE-40GB", "a100-40gb-pcie"},
      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA L40S", "l40s"},
      {"NVIDIA L40", "l40"},
      {"NVIDIA L4", "l4"},
      {"Tesla T4", "t4"},
      {"Tesla V100-SXM2-32GB", "v100-sxm2-32gb"},
      {"NVIDIA A10G", "a10g"},
      {"NVIDIA GeForce RTX 4090", "rtx-4090"},
      {"NVIDIA GeForce RTX 3090", "rtx-3090"},
      {"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"},
      {"NVIDIA RTX A6000", "rtx-a6000"},
      {"NVIDIA H200 NVL", "h200-nvl"},
      {"NVIDIA H20", "h20"},
      {"NVIDIA H800", "h800-sxm"},
      {"NVIDIA A800-SXM4-80GB", "a800-80gb-sxm"},
      {"NVIDIA A40", "a40"},
      {"NVIDIA L20", "l20"},
      {"NVIDIA GH200 480GB", "gh200"},
      {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-server"},
      {"NVIDIA RTX PRO 5000 Blackwell", "rtx-pro-5000"},
      {"nvidia h100 80gb hbm3", "h100-sxm"},  // any case
      {"L40S", "l40s"},                       // ids in any case
      {"A100-40GB-SXM", "a100-40gb-sxm"},
  };
  for (const auto& [name, id] : table)
    EXPECT_EQ(test::catalog().gpu(name).id, id) << name;
}

TEST(Cards, AnAmbiguousIdListsTheCandidates) {
  try {
    test::catalog().gpu("h100");
    FAIL() << "'h100' accepted";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("GPU 'h100' is ambiguous: it names 4 cards"), std::string::npos) << m;
    for (const char* id : {"h100-nvl", "h100-pcie", "h100-sxm", "h100-sxm-96gb"})
      EXPECT_NE(m.find(id), std::string::npos) << m;
  }
  const auto r =
      test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "a100"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("a100-40gb-sxm"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a100-80gb-pcie"), std::string::npos) << r.err;
  // Unknown ids keep suggesting the closest ids.
  const auto unknown =
      test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "l4O"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("did you mean"), std::string::npos) << unknown.err;
}

TEST(Cards, SmiCsvParsesDevicesUnitsAndHeader) {
  const auto devices = parse_smi_csv(
      "name, memory.total [MiB], power.limit [W], pci.bus_id\n"
      "NVIDIA L4, 23034 MiB, 72.00 W, 00000000:00:03.0\n"
      "\n"
      "Tesla T4, 15360, [N/A], 00000000:00:04.0\r\n",
      "smi.csv");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, "NVIDIA L4");
  EXPECT_EQ(devices[0].memory_MiB, 23034);
  EXPECT_EQ(devices[0].power_limit_W, 72);
  EXPECT_EQ(devices[0].bus_id, "00000000:00:03.0");
  EXPECT_FALSE(devices[1].power_limit_W.has_value());
  EXPECT_EQ(devices[1].line, 4);
  try {
    parse_smi_csv("NVIDIA L4, lots, 72, x\n", "smi.csv");
    FAIL() << "a non-numeric memory.total accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("smi.csv: line 1: memory.total 'lots'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_smi_csv("\n\n", "smi.csv"), UserError);
}

TEST(Cards, DetectTwoH100FromAFile) {
  const auto r = test::run_cli({"gpus", "--detect", cases("smi/h100x2.csv")});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("2 GPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("h100-sxm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gpu local plans for 2 x h100-sxm"), std::string::npos) << r.out;
}

TEST(Cards, DetectEightA100AsJsonAndPlanWithLocal) {
  const auto r = test::run_cli({"gpus", "--detect", cases("smi/a100-40gb-x8.csv"), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpu_count"], 8);
  EXPECT_EQ(j["local"]["gpu"], "a100-40gb-sxm");
  EXPECT_EQ(j["local"]["gpus"], 8);
  EXPECT_EQ(j["cards"][0]["devices"].size(), 8u);
  // --gpu local:FILE takes the card and, without --gpus, the detected count.
  const auto fit = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "full", "--gpu",
                                  "local:" + cases("smi/a100-40gb-x8.csv"), "--json"});
  ASSERT_EQ(fit.code, 0) << fit.err;
  const auto f = nlohmann::json::parse(fit.out);
  EXPECT_EQ(f["gpus"], 8);
  EXPECT_EQ(f["shard"], "ddp");
  EXPECT_NE(fit.out.find("a100-40gb-sxm"), std::string::npos);
}

TEST(Cards, MixedCardsAreListedButLocalNeedsOneKind) {
  const auto list = test::run_cli({"gpus", "--detect", cases("smi/mixed.csv")});
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("rtx-4090"), std::string::npos);
  EXPECT_NE(list.out.find("rtx-3090"), std::string::npos);
  EXPECT_NE(list.out.find("Different kinds of card"), std::string::npos) << list.out;
  const auto fit = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                  "local:" + cases("smi/mixed.csv")});
  EXPECT_EQ(fit.code, 2);
  EXPECT_NE(fit.err.find("the machine has different cards: 1x NVIDIA GeForce RTX 4090 "
                         "(rtx-4090), 1x NVIDIA GeForce RTX 3090 (rtx-3090)"),
            std::string::npos)
      << fit.err;
  const auto unknown = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                      "local:" + cases("smi/unknown.csv")});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("matches no catalog card"), std::string::npos) << unknown.err;
}

TEST(Cards, AMinimalUserCardWorks) {
  const std::string file = cases("cards/minimal.yaml");
  const auto fit =
      test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", file});
  ASSERT_EQ(fit.code, 0) << fit.err;
  const auto step =
      test::run_cli({"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", file});
  ASSERT_EQ(step.code, 0) << step.err;
  EXPECT_NE(step.out.find("tokens per second"), std::string::npos);
  // Figures without a source are user-supplied; the defaults are stated as assumptions.
  Catalog c = test::catalog();
  const std::string text =
      "name: ACME Tensor X1\nmemory: {visible_MiB: 49140, bandwidth_GBps: "
      "960}\ntensor_dense_TFLOPS: {bf16: 180}\n";
  const GpuSpec& g = c.add_gpu_file({"./mycard.yaml", text, {}});
  EXPECT_EQ(g.id, "mycard");
  EXPECT_TRUE(g.user_supplied);
  EXPECT_TRUE(g.bandwidth_GBps.sources.empty());
  EXPECT_EQ(g.compute_capability.value, "8.0");
  EXPECT_FALSE(g.assumptions.empty());
  EXPECT_FALSE(g.mig.supported);
}

TEST(Cards, GpusListsACardFileWithItsUserSuppliedFigures) {
  const std::string file = cases("cards/minimal.yaml");
  const auto text = test::run_cli({"gpus", "--gpu", file});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("minimal (user-supplied)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("assumption: " + file + ": compute_capability not given"),
            std::string::npos)
      << text.out;
  const auto json = test::run_cli({"gpus", "--gpu", file, "--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto listed = nlohmann::json::parse(json.out);
  for (const auto& g : listed["gpus"])
    if (g["id"] == "minimal") {
      EXPECT_EQ(g["user_supplied"], true);
      EXPECT_EQ(g["memory"]["bandwidth_GBps"]["source"], "user-supplied");
      EXPECT_FALSE(g["assumptions"].empty());
      return;
    }
  FAIL() << "the card file is not listed";
}

TEST(Cards, AUserCardWithoutBandwidthNamesFileKeyAndForm) {
  const auto r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                cases("cards/no-bandwidth.yaml")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no-bandwidth.yaml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bandwidth_GBps"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("`bandwidth_GBps: 960`"), std::string::npos) << r.err;
  // A value of the wrong kind names the value.
  Catalog c = test::catalog();
  try {
    c.add_gpu_file({"card.yaml",
                    "name: X\nmemory: {visible_MiB: 1000000000, bandwidth_GBps: 960}\n"
                    "tensor_dense_TFLOPS: {bf16: 10}\n",
                    {}});
    FAIL() << "an out-of-range memory accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("visible_MiB"), std::string::npos) << e.what();
  }
}

TEST(Cards, CardsInsideTheDataKeepRequiringSources) {
  // The same minimal text as a built-in card file (gpus/ below a data folder) is refused.
  std::vector<DataFile> files = cli::builtin_data_files();
  const std::string text =
      "id: mycard\nname: ACME Tensor X1\nvendor: nvidia\narchitecture: ada\n"
      "memory: {visible_MiB: 49140, bandwidth_GBps: 960}\ntensor_dense_TFLOPS: {bf16: 180}\n";
  files.push_back({"data/gpus/mycard.yaml", text, "gpus/mycard.yaml"});
  EXPECT_THROW(Catalog::load(files), UserError);
  // And a figure without `source` in a built-in card is an error naming the key.
  try {
    parse_gpu_file({"data/gpus/x.yaml", "id: x\nname: X\ntdp_W: {value: 1}\n", {}},
                   test::catalog().sources());
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("data/gpus/x.yaml"), std::string::npos) << e.what();
  }
}

TEST(Cards, DetectWithoutNvidiaSmiSaysSo) {
  // Run with a PATH without nvidia-smi: a clear message and exit code 2.
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  setenv("PATH", "/nonexistent", 1);
  const auto r = test::run_cli({"gpus", "--detect"});
  setenv("PATH", saved.c_str(), 1);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nvidia-smi was not found"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ftplan
