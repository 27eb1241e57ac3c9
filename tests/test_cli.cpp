// The CLI's documented interfaces: subcommands, flags and JSON keys.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;

json run_json(const std::vector<std::string>& args) {
  auto r = test::run_cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return json::parse(r.out);
}

TEST(Cli, FitJsonHasTheDocumentedKeys) {
  json j = run_json(
      {"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "rtx-pro-6000", "--json"});
  EXPECT_EQ(j["params"]["total"].get<long long>(), 8'030'261'248);
  EXPECT_EQ(j["params"]["trainable"].get<long long>(), 41'943'040);
  EXPECT_NEAR(j["memory_GB"]["capacity"].get<double>(), 102.64, 0.01);
  EXPECT_NEAR(j["memory_GB"]["model_states"].get<double>(), 16.73, 0.01);
  EXPECT_NEAR(j["memory_GB"]["free"].get<double>(), 85.91, 0.01);
  EXPECT_EQ(j["verdict"], "fits");
}

// A reserved peak comes with its range in the text, the same range as the JSON's peak_range (GB,
// one decimal); an allocated peak has the model's error spread alone.
TEST(Cli, FitTextShowsTheReservedPeaksRange) {
  const std::vector<std::string> args = {"fit",   "--model",  "llama-3.1-8b", "--method", "lora",
                                         "--gpu", "h200-nvl", "--peak",       "reserved"};
  const auto text = test::run_cli(args);
  ASSERT_EQ(text.code, 0) << text.err;
  std::vector<std::string> with_json = args;
  with_json.push_back("--json");
  const json range = run_json(with_json)["memory_GB"]["peak_range"];
  ASSERT_LT(range[0].get<double>(), range[1].get<double>());
  const std::string shown =
      fmt::format("{:.1f}–{:.1f}", range[0].get<double>(), range[1].get<double>());
  const auto row = text.out.find("range (10th-90th pct. of measured runs)");
  ASSERT_NE(row, std::string::npos) << text.out;
  EXPECT_NE(text.out.find(shown, row), std::string::npos) << shown << "\n" << text.out;
  // An allocated peak has the model's error spread alone: a range, narrower than the reserved
  // peak's, around its own peak.
  std::vector<std::string> allocated = with_json;
  allocated[allocated.size() - 2] = "allocated";
  const json a = run_json(allocated)["memory_GB"];
  const json a_range = a["peak_range"];
  EXPECT_LT(a_range[0].get<double>(), a["peak"].get<double>());
  EXPECT_GT(a_range[1].get<double>(), a["peak"].get<double>());
  EXPECT_LT(a_range[1].get<double>() - a_range[0].get<double>(),
            range[1].get<double>() - range[0].get<double>());
}

TEST(Cli, FitJsonHasActivationsOverheadAndPeak) {
  json j = run_json(
      {"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "rtx-pro-6000", "--json"});
  const json& m = j["memory_GB"];
  EXPECT_GT(m["activations"].get<double>(), 0.5);
  EXPECT_GT(m["overhead"].get<double>(), 0.1);
  EXPECT_NEAR(m["peak"].get<double>(),
              m["states_on_card"].get<double>() + m["activations"].get<double>() +
                  m["overhead"].get<double>(),
              0.002);
  EXPECT_NEAR(m["headroom"].get<double>(), m["capacity"].get<double>() - m["peak"].get<double>(),
              0.002);
  // The breakdown: the loss phase at the defaults (unchunked logits of a 128k vocabulary).
  EXPECT_EQ(m["step"]["peak_phase"], "loss");
  EXPECT_GT(m["step"]["logits_and_loss"].get<double>(),
            m["step"]["saved_activations"].get<double>());
  EXPECT_GT(m["overheads"]["cuda_context"].get<double>(), 0);
  EXPECT_EQ(j["peak"], "reserved");
  EXPECT_EQ(j["recompute"], "full");
  EXPECT_EQ(j["attention"], "sdpa");  // the default stack (hf) runs PyTorch SDPA
  // The options of the activation model are read: a longer sequence costs more.
  json longer = run_json({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                          "rtx-pro-6000", "--seq", "8192", "--micro-batch", "2", "--json"});
  EXPECT_NEAR(longer["memory_GB"]["step"]["logits_and_loss"].get<double>(),
              8 * m["step"]["logits_and_loss"].get<double>(), 0.01);
  json allocated = run_json({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                             "rtx-pro-6000", "--peak", "allocated", "--json"});
  EXPECT_LT(allocated["memory_GB"]["peak"].get<double>(), m["peak"].get<double>());
}

// The exact byte counts beside the rounded GB figures: each rounds to its GB figure, and a card's
// visible bytes are the MiB nvidia-smi prints (the page converts GiB and MiB from these).
TEST(Cli, ByteCountsAreTheFiguresBehindTheRoundedGB) {
  const auto rounds_to = [](const json& bytes, const json& gb) {
    return std::abs(bytes.get<double>() / 1e9 - gb.get<double>()) <= 0.0005 + 1e-12;
  };
  json fit = run_json(
      {"fit", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu", "h200-nvl", "--json"});
  const json& gb = fit["memory_GB"];
  const json& bytes = fit["memory_bytes"];
  for (const char* key : {"capacity", "model_states", "states_on_card", "free", "activations",
                          "overhead", "peak", "headroom"}) {
    ASSERT_TRUE(bytes[key].is_number_integer()) << key;
    EXPECT_TRUE(rounds_to(bytes[key], gb[key])) << key << ": " << bytes[key] << " " << gb[key];
  }
  for (const auto& [key, value] : gb["breakdown"].items())
    EXPECT_TRUE(rounds_to(bytes["breakdown"][key], value)) << key;
  json mig = run_json(
      {"mig", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu", "h200-nvl", "--json"});
  for (const json& i : mig["instances"]) {
    EXPECT_TRUE(rounds_to(i["free_bytes"], i["free_GB"])) << i["profile"];
    EXPECT_TRUE(rounds_to(i["headroom_bytes"], i["headroom_GB"])) << i["profile"];
  }
  json explained = run_json({"explain", "memory.peak", "--model", "llama-3.1-8b", "--method",
                             "qlora", "--gpu", "h200-nvl", "--json"});
  EXPECT_EQ(explained["figures"][0]["bytes"], bytes["peak"]);
  json gpus = run_json({"gpus", "--json"});
  for (const json& g : gpus["gpus"]) {
    const json& mib = g["memory"]["visible_MiB"]["value"];
    if (mib.is_number())
      EXPECT_EQ(g["memory"]["visible_bytes"].get<double>(), mib.get<double>() * 1048576.0)
          << g["id"];
  }
}

TEST(Cli, FitHumanOutputShowsActivationsAndOverhead) {
  auto r = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "full", "--gpu", "h200-nvl",
                          "--compile", "--chunked-loss", "--optimizer-in-backward", "--pure-bf16",
                          "--offload-activations"});
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* text : {"activations (", "runtime overhead", "peak (reserved)", "CUDA context",
                           "model states on the card", "no FP32 master", "compiled",
                           "optimizer in backward", "verdict: fits"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
}

TEST(Cli, MaxSolvesSequenceAndMicroBatch) {
  json seq = run_json({"max", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                       "rtx-pro-6000", "--solve", "seq", "--json"});
  EXPECT_GE(seq["largest"].get<long long>(), 16384);
  EXPECT_EQ(seq["largest"].get<long long>() % 128, 0);
  EXPECT_EQ(seq["solve_step"], 128);
  EXPECT_NE(seq["binding"].get<std::string>().find("logits"), std::string::npos);
  EXPECT_LE(seq["peak_GB_at_largest"].get<double>(), 0.9 * seq["capacity_GB"].get<double>());
  json mb = run_json({"max", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu", "h200-nvl",
                      "--mig", "1g.18gb", "--solve", "micro-batch", "--seq", "1024", "--json"});
  EXPECT_GE(mb["largest"].get<long long>(), 1);
  EXPECT_EQ(mb["mig"], "1g.18gb");
  auto text = test::run_cli({"max", "--model", "llama-3.3-70b", "--method", "lora", "--gpu",
                             "h200-nvl", "--solve", "seq"});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("longest sequence that fits: none"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("binding: model states on the card"), std::string::npos) << text.out;
}

TEST(Cli, ValidatePrintsEveryRunAndTheSummary) {
  auto r = test::run_cli({"validate"});
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* id : {"A1 ", "A8 ", "B2 ", "B10 ", "E1 ", "E3 ", "T1 ", "T4 ", "T8 ", "T11 "})
    EXPECT_NE(r.out.find(id), std::string::npos) << id;
  for (const char* text : {"skipped (19)", "B1 ", "C4 ", "P2 ", "A2 ", "MS8 ", "LG15 ",
                           "summary: absolute error", "measured-peft-metamathqa", "all "})
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  // Runs with only a throughput figure are not part of the memory comparison.
  const std::string memory_part = r.out.substr(0, r.out.find("Step model vs published"));
  for (const char* id : {"U1 ", "X1 "})
    EXPECT_EQ(memory_part.find(std::string("\n") + id), std::string::npos) << id;
  // The step model against the measured speeds: every comparable run, and the honest error.
  const std::string speed_part = r.out.substr(memory_part.size());
  for (const char* text : {"\nA1 ", "\nB3 ", "\nE1 ", "\nU1 ", "\nT8 ", "\nT11 ", "\nLS3 ",
                           "\nLS5 ", "  LS1 ", "  LS10 ", "leave-one-source-out"})
    EXPECT_NE(speed_part.find(text), std::string::npos) << text;
  json j = run_json({"validate", "--json"});
  // with LS10-LS12 of large_scale.yaml (skipped), the 38 H200 steps of ftplan-bench-h200.yaml,
  // the preference runs of preference.yaml (PREF3-PREF6 skipped), ms-swift's runs of msswift.yaml
  // (MS8 skipped), online.yaml's runs with uneven pipeline stages (RL4, RL5: skipped; the
  // others have no memory figure), Unsloth's context-length rows of unsloth.yaml and
  // fms-acceleration's A100 rows of fms_acceleration.yaml (each run's allocated and nvidia-smi
  // peaks: Mistral, Mixtral and Llama 2 70B, and PowerLM-3b in PL1-PL14 / PN1-PN14) and
  // Answer.AI's fsdp_qlora rows of
  // answerai.yaml (seven of them throughput only), and LitGPT's resource-table rows of
  // published.yaml (LR1-LR19); the worst are a third under
  EXPECT_EQ(j["runs"].size(), 243u);
  EXPECT_EQ(j["skipped"], 19);
  EXPECT_LE(j["overall"]["median_abs_error"].get<double>(), 0.15);
  EXPECT_LE(j["overall"]["worst_abs_error"].get<double>(), 0.35);
  // A user's file of the same schema.
  const std::string src = FTPLAN_SOURCE_DIR;
  json mine = run_json({"validate", src + "/tests/cases/measured/my-runs.yaml", "--json"});
  EXPECT_EQ(mine["runs"].size(), 2u);
  EXPECT_EQ(mine["overall"]["rows"], 1);
  EXPECT_EQ(mine["runs"][1]["reason"], "a model of our own, not in the catalog");
  // A model outside the catalog by its config.json (beside the file), the card by its
  // nvidia-smi name, the source defined in the file: predicted as fit predicts the same run.
  json own = run_json({"validate", src + "/tests/cases/measured/own-model.yaml", "--json"});
  ASSERT_EQ(own["runs"].size(), 1u);
  EXPECT_EQ(own["overall"]["rows"], 1);
  const json fit = run_json({"fit", "--model", src + "/data/models/qwen3-4b.json", "--method",
                             "lora", "--rank", "16", "--recompute", "full", "--attention", "sdpa",
                             "--seq", "1024", "--micro-batch", "2", "--gpu", "l40s", "--json"});
  EXPECT_NEAR(own["runs"][0]["predicted"].get<double>(),
              fit["memory_GB"]["peaks"]["reserved"].get<double>(), 0.01)
      << own["runs"][0].dump();
}

TEST(Cli, HelpStatesTheDefaults) {
  auto r = test::run_cli({"fit", "--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* text : {"default full", "hf: sdpa", "default hf", "default reserved",
                           "default 2048", "default 1", "--chunked-loss", "--compile",
                           "--pure-bf16", "--offload-activations", "--optimizer-in-backward"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text;
  r = test::run_cli({"max", "--help"});
  EXPECT_NE(r.out.find("--solve"), std::string::npos);
  EXPECT_NE(r.out.find("default 128"), std::string::npos);
}

TEST(Cli, FitJsonPerCardUnderFsdp) {
  json j = run_json({"fit", "--model", "llama-3.1-8b", "--method", "full", "--gpu", "rtx-pro-6000",
                     "--gpus", "2", "--shard", "fsdp", "--json"});
  EXPECT_NEAR(j["memory_GB"]["model_states"].get<double>(), 64.24, 0.01);
  EXPECT_EQ(j["gpus"], 2);
  EXPECT_EQ(j["shard"], "fsdp");
}

TEST(Cli, FitAcceptsAConfigJsonPathAndACardFile) {
  const std::string src = FTPLAN_SOURCE_DIR;
  json j = run_json({"fit", "--model", src + "/tests/cases/configs/tiny_llama.json", "--method",
                     "full", "--gpu", src + "/tests/cases/gpus/my-lab-card.yaml", "--json"});
  // tiny llama: embed 1000·256 (tied) + 4 layers × (q 256² + k,v 2·256·64 + o 256² + 3·256·688) +
  // norms 9·256
  const long long expected =
      1000 * 256 + 4 * (2 * 256 * 256 + 2 * 256 * 64 + 3 * 256 * 688) + 9 * 256;
  EXPECT_EQ(j["params"]["total"].get<long long>(), expected);
  EXPECT_NEAR(j["memory_GB"]["capacity"].get<double>(), 49140 * 1048576.0 / 1e9, 0.001);
}

TEST(Cli, GpusAndModelsListTheCatalog) {
  json g = run_json({"gpus", "--json"});
  std::vector<std::string> ids;
  for (const auto& card : g["gpus"])
    ids.push_back(card["id"]);
  for (const char* id :
       {"h200-nvl", "h200-sxm", "h100-sxm", "h100-pcie", "h100-nvl", "a100-80gb-sxm",
        "a100-80gb-pcie", "l40s", "rtx-pro-6000", "rtx-pro-6000-server", "rtx-pro-6000-maxq",
        "rtx-6000-ada", "rtx-5090", "rtx-4090", "b200", "b300"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
  json m = run_json({"models", "--json"});
  EXPECT_GE(m["models"].size(), 8u);
  auto text = test::run_cli({"gpus"});
  EXPECT_NE(text.out.find("h200-nvl"), std::string::npos);
}

TEST(Cli, UnknownDenseRateIsShownAsUnknownWithItsReason) {
  json g = run_json({"gpus", "--json"});
  for (const auto& card : g["gpus"])
    if (card["id"] == "rtx-pro-6000-server") {
      EXPECT_TRUE(card["tensor_dense_TFLOPS"]["bf16"]["value"].is_null());
      EXPECT_FALSE(card["tensor_dense_TFLOPS"]["bf16"]["reason"].get<std::string>().empty());
    }
}

TEST(Cli, ParamsListsEveryTensor) {
  json j = run_json({"params", "--model", "qwen3-30b-a3b", "--json"});
  long long sum = 0;
  bool saw_router = false, saw_expert = false;
  for (const auto& t : j["tensors"]) {
    sum += t["params"].get<long long>();
    saw_router |= t["kind"] == "router";
    saw_expert |= t["kind"] == "expert";
  }
  EXPECT_EQ(sum, 30'532'122'624);
  EXPECT_TRUE(saw_router);
  EXPECT_TRUE(saw_expert);
}

TEST(Cli, HelpExitsZero) {
  auto r = test::run_cli({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("fit"), std::string::npos);
  r = test::run_cli({"fit", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--rank"), std::string::npos);
}

}  // namespace
}  // namespace ftplan

namespace ftplan {
namespace {

TEST(Cli, DataFolderAddsCards) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "ftplan-test-data";
  fs::remove_all(dir);
  fs::create_directories(dir / "gpus");
  fs::copy_file(fs::path(FTPLAN_SOURCE_DIR) / "tests/cases/gpus/my-lab-card.yaml",
                dir / "gpus/my-lab-card.yaml");
  auto r = test::run_cli({"--data", dir.string(), "fit", "--model", "llama-3.1-8b", "--method",
                          "qlora", "--gpu", "my-lab-card", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"gpu\": \"my-lab-card\""), std::string::npos) << r.out;
  // A card file whose id disagrees with its name inside a data folder is refused.
  fs::rename(dir / "gpus/my-lab-card.yaml", dir / "gpus/other-name.yaml");
  r = test::run_cli({"--data", dir.string(), "gpus"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("does not match the file name"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ftplan
