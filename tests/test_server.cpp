// The HTTP API: every endpoint with good and bad input, in-process (server::handle) and over a
// real socket (a loopback client against the server on a free port).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <future>
#include <iterator>
#include <regex>
#include <thread>

#include "http_client.hpp"
#include "server/api.hpp"
#include "server/server.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;
using server::Request;
using server::Response;

// The command line's commands, as `ftplan serve` hands them to the server.
const server::Commands& commands() {
  static const server::Commands c = cli::server_commands();
  return c;
}

Response call(const std::string& method, const std::string& path, const std::string& body = "") {
  Request r;
  r.method = method;
  r.path = path;
  r.body = body;
  if (method == "POST") r.content_type = "application/json";
  return server::handle(r, commands());
}

void expect_error(const Response& r, int status, const std::string& code,
                  const std::string& field = "") {
  EXPECT_EQ(r.status, status) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["error"]["code"], code) << r.body;
  EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
  if (!field.empty()) EXPECT_EQ(j["error"]["field"], field) << r.body;
}

TEST(ServerApi, HealthAndCatalogs) {
  EXPECT_EQ(call("GET", "/healthz").status, 200);
  const Response gpus = call("GET", "/api/gpus");
  ASSERT_EQ(gpus.status, 200);
  EXPECT_GE(json::parse(gpus.body)["gpus"].size(), 16u);
  const Response models = call("GET", "/api/models");
  ASSERT_EQ(models.status, 200);
  EXPECT_GE(json::parse(models.body)["models"].size(), 8u);
}

TEST(ServerApi, FitGivesTheCliJson) {
  const std::string body =
      R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "rtx-pro-6000", "micro_batch": 1})";
  const Response r = call("POST", "/api/fit", body);
  ASSERT_EQ(r.status, 200) << r.body;
  const auto cli = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                  "rtx-pro-6000", "--micro-batch", "1", "--json"});
  EXPECT_EQ(json::parse(r.body), json::parse(cli.out));
  EXPECT_NEAR(json::parse(r.body)["memory_GB"]["free"].get<double>(), 85.91, 0.01);
}

// Every long name of an option is a key: seq_max is seq (--seq, --seq-max).
TEST(ServerApi, EveryNameOfAnOptionIsAKey) {
  const Response r =
      call("POST", "/api/fit",
           R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl", "seq_max": 4096})");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto cli = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                  "h200-nvl", "--seq", "4096", "--json"});
  EXPECT_EQ(json::parse(r.body), json::parse(cli.out));
  EXPECT_EQ(json::parse(r.body)["seq"], 4096);
}

// A lengths file has no path on the server: the request hands in its text (one count per line, a
// JSONL dataset) or its histogram as JSON, and gets the CLI's figures for the same file.
TEST(ServerApi, LengthsComeAsTheFilesText) {
  const std::string path = ::testing::TempDir() + "api_lengths.txt";
  std::ofstream(path) << "100\n300\n100\n100\n";
  const auto cli = test::run_cli({"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                  "h200-nvl", "--lengths", path, "--json"});
  ASSERT_EQ(cli.code, 0) << cli.err;
  const std::string run = R"("model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl", )";
  const Response text =
      call("POST", "/api/step", "{" + run + R"("lengths": "100\n300\n100\n100\n"})");
  ASSERT_EQ(text.status, 200) << text.body;
  EXPECT_EQ(json::parse(text.body), json::parse(cli.out));
  EXPECT_EQ(json::parse(text.body)["seq"], 300);
  const Response histogram =
      call("POST", "/api/step",
           "{" + run + R"("lengths": [{"tokens": 100, "count": 3}, {"tokens": 300, "count": 1}]})");
  ASSERT_EQ(histogram.status, 200) << histogram.body;
  EXPECT_EQ(json::parse(histogram.body), json::parse(cli.out));
  const Response bad = call("POST", "/api/fit", "{" + run + R"("lengths": "100\n-5\n"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("the request's lengths: line 2"), std::string::npos) << bad.body;
}

// The page's requests: step per card, the scaling sweep over two cards, MIG per card; each gives
// the CLI's JSON for the same options.
TEST(ServerApi, StepScaleAndMigGiveTheCliJson) {
  const std::string run = R"("model": "llama-3.1-8b", "method": "lora", "rank": "16")";
  const std::vector<std::string> cli_run = {"--model", "llama-3.1-8b", "--method",
                                            "lora",    "--rank",       "16"};
  auto cli = [&](std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), cli_run.begin(), cli_run.end());
    args.insert(args.end(), more.begin(), more.end());
    args.push_back("--json");
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return json::parse(r.out);
  };
  const Response step = call("POST", "/api/step", "{" + run + R"(, "gpu": "rtx-pro-6000"})");
  ASSERT_EQ(step.status, 200) << step.body;
  EXPECT_EQ(json::parse(step.body), cli({"step"}, {"--gpu", "rtx-pro-6000"}));

  const Response scale = call(
      "POST", "/api/scale", "{" + run + R"(, "gpu": ["h200-nvl", "rtx-pro-6000"], "sweep": true})");
  ASSERT_EQ(scale.status, 200) << scale.body;
  const json sweep = json::parse(scale.body);
  EXPECT_EQ(sweep, cli({"scale"}, {"--gpu", "h200-nvl", "--gpu", "rtx-pro-6000", "--sweep"}));
  EXPECT_EQ(sweep["sweep"].size(), 8u);  // N = 1, 2, 4, 8 for each card
  EXPECT_EQ(sweep["sweep"][1]["link"], "NVLink 4 bridge");
  EXPECT_EQ(sweep["sweep"][5]["link"], "PCIe Gen5 x16");
  // Nodes and their network are keys like the CLI's options.
  const Response nodes =
      call("POST", "/api/scale",
           "{" + run +
               R"(, "gpu": "h200-sxm", "nodes": 2, "network": "ib-ndr-400", "nics_per_node": 4})");
  ASSERT_EQ(nodes.status, 200) << nodes.body;
  EXPECT_EQ(json::parse(nodes.body),
            cli({"scale"}, {"--gpu", "h200-sxm", "--nodes", "2", "--network", "ib-ndr-400",
                            "--nics-per-node", "4"}));
  EXPECT_EQ(json::parse(nodes.body)["network"]["GBps_per_node"], 200);
  expect_error(call("POST", "/api/scale", "{" + run + R"(, "gpu": "h200-sxm", "network": "ndr"})"),
               400, "unknown_name", "network");

  const Response mig = call("POST", "/api/mig", "{" + run + R"(, "gpu": "rtx-pro-6000"})");
  ASSERT_EQ(mig.status, 200) << mig.body;
  EXPECT_EQ(json::parse(mig.body), cli({"mig"}, {"--gpu", "rtx-pro-6000"}));
  // G4: an 8B LoRA on a BF16 base leaves about 7 GB (7.3 GB) of a 24 GB instance after the model
  // states; the step's activations and overheads then leave too little to plan with (tight).
  const json first = json::parse(mig.body)["instances"][0];
  EXPECT_EQ(first["profile"], "1g.24gb");
  EXPECT_NEAR(first["free_GB"].get<double>(), 7.3, 0.05);
  EXPECT_EQ(first["verdict"], "tight");

  expect_error(call("POST", "/api/mig", "{" + run + R"(, "gpu": "rtx-4090"})"), 400, "unsupported",
               "gpu");
  expect_error(call("POST", "/api/step", "{" + run + R"(, "gpu": "h200-nvl", "seq": "abc"})"), 400,
               "invalid_value", "seq");
}

// plan: a runs document in the body (JSON here), the CLI's plan JSON back.
TEST(ServerApi, PlanTakesARunsDocumentAndGivesThePlan) {
  const Response r = call("POST", "/api/plan", R"({"candidates": {"gpus": ["h200-nvl"]},
    "runs": [{"name": "8B LoRA", "model": "llama-3.1-8b", "method": "lora", "tokens": 1e8}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  ASSERT_EQ(j["runs"].size(), 1u);
  const json& run = j["runs"][0];
  EXPECT_EQ(run["run"], "8B LoRA");
  // 1e8 tokens in steps of the default global batch 64 × 2048 tokens: ceil(762.9) = 763.
  EXPECT_EQ(run["steps"], 763);
  const json& best = run["recommendation"];
  EXPECT_EQ(best["gpu"], "h200-nvl");
  EXPECT_EQ(best["count"], 1);  // an 8B LoRA fits one card (seed W2)
  // Seed G4: 16.7 GB of model states for an 8B LoRA on a BF16 base.
  EXPECT_NEAR(best["memory_GB"]["model_states"].get<double>(), 16.73, 0.01);
  // The time to train is the steps at the step time, to the figures' rounding (4 digits).
  EXPECT_NEAR(best["time_to_train_hours"].get<double>(),
              763 * best["step_seconds"].get<double>() / 3600, 0.001);
  // A bad run names its key; an empty body is no runs document.
  expect_error(call("POST", "/api/plan", R"({"runs": [{"name": "a", "model": "llama-3.1-8b",
    "method": "lorra", "tokens": 1e8}]})"),
               400, "invalid_value", "runs[0].method");
  expect_error(call("POST", "/api/plan", R"({"runs": [{"name": "a", "model": "llama-3.1-8b",
    "method": "full", "rank": 8, "tokens": 1e8}]})"),
               400, "invalid_value", "runs[0].rank");
}

// params: the exact parameter inventory, the CLI's JSON.
TEST(ServerApi, ParamsGivesTheCliJson) {
  const Response r = call("POST", "/api/params", R"({"model": "llama-3.1-8b"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  const auto cli = test::run_cli({"params", "--model", "llama-3.1-8b", "--json"});
  ASSERT_EQ(cli.code, 0) << cli.err;
  EXPECT_EQ(j, json::parse(cli.out));
  // Llama 3.1 8B: 8,030,261,248 parameters (the checkpoint's safetensors index; HF shows 8.03B).
  EXPECT_EQ(j["params_total"], 8030261248LL);
  EXPECT_EQ(j["layers"], 32);
  expect_error(call("POST", "/api/params", R"({"model": "llama-3.1-8"})"), 400, "unknown_name",
               "model");
}

// max: the largest micro-batch or sequence, the CLI's JSON.
TEST(ServerApi, MaxGivesTheCliJson) {
  const Response r = call("POST", "/api/max", R"({"model": "llama-3.1-8b", "method": "lora",
    "gpu": "rtx-pro-6000", "solve": "micro-batch"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  const auto cli = test::run_cli({"max", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                  "rtx-pro-6000", "--solve", "micro-batch", "--json"});
  ASSERT_EQ(cli.code, 0) << cli.err;
  EXPECT_EQ(j, json::parse(cli.out));
  EXPECT_EQ(j["solve"], "micro-batch");
  // The largest micro-batch fits: its peak is within the card, the next one's is not.
  EXPECT_GE(j["largest"].get<int>(), 1);
  EXPECT_LE(j["peak_GB_at_largest"].get<double>(), j["capacity_GB"].get<double>());
  EXPECT_GT(j["peak_GB_beyond"].get<double>(), j["peak_GB_at_largest"].get<double>());
  expect_error(call("POST", "/api/max", R"({"model": "llama-3.1-8b", "method": "lora",
    "gpu": "rtx-pro-6000", "solve": "batch"})"),
               400, "unknown_name", "solve");
  // An option the method does not read, over the API as on the command line.
  expect_error(call("POST", "/api/max", R"({"model": "llama-3.1-8b", "method": "full",
    "rank": 8, "gpu": "rtx-pro-6000", "solve": "seq"})"),
               400, "invalid_value", "rank");
}

// explain: a figure's derivation, the CLI's JSON; an unknown figure names the closest and the
// field.
TEST(ServerApi, ExplainGivesTheCliJson) {
  const Response r = call("POST", "/api/explain",
                          R"({"figure": "memory.peak", "model": "llama-3.1-8b", "method": "lora",
                              "gpu": "rtx-pro-6000", "depth": 2})");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto cli = test::run_cli({"explain", "memory.peak", "--model", "llama-3.1-8b", "--method",
                                  "lora", "--gpu", "rtx-pro-6000", "--depth", "2", "--json"});
  ASSERT_EQ(cli.code, 0) << cli.err;
  EXPECT_EQ(json::parse(r.body), json::parse(cli.out));
  EXPECT_EQ(json::parse(r.body)["figures"][0]["from"][0]["id"], "memory.states_on_card");

  const Response list = call("POST", "/api/explain",
                             R"({"list": true, "model": "llama-3.1-8b", "method": "lora",
                                 "gpu": "h200-nvl", "gpus": 2, "tokens": 1e8})");
  ASSERT_EQ(list.status, 200) << list.body;
  bool time_to_train = false;
  const json figures = json::parse(list.body)["figures"];
  for (const auto& f : figures)
    time_to_train |= f["id"] == "plan.time_to_train_hours";
  EXPECT_TRUE(time_to_train);

  const Response bad = call("POST", "/api/explain",
                            R"({"figure": "memory.peek", "model": "llama-3.1-8b",
                                "method": "lora", "gpu": "h200-nvl"})");
  expect_error(bad, 400, "unknown_name", "figure");
  EXPECT_NE(bad.body.find("did you mean memory.peak"), std::string::npos) << bad.body;
}

TEST(ServerApi, PastedConfigJson) {
  const std::string config =
      R"({"model_type": "llama", "hidden_size": 256, "intermediate_size": 688,
    "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 1000,
    "tie_word_embeddings": true})";
  const Response r = call("POST", "/api/fit",
                          R"({"config": )" + config + R"(, "method": "full", "gpu": "rtx-4090"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["params"]["total"].get<long long>(),
            1000 * 256 + 4 * (2 * 256 * 256 + 2 * 256 * 64 + 3 * 256 * 688) + 9 * 256);
}

TEST(ServerApi, PastedTrainerFile) {
  // A PEFT adapter config pasted as an object: its rank and method apply, the JSON says so.
  const Response r = call("POST", "/api/fit",
                          R"({"from": {"peft_type": "LORA", "r": 64, "lora_alpha": 16,
                              "target_modules": ["q_proj", "v_proj"]},
                              "model": "llama-3.1-8b", "gpu": "h200-nvl"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["rank"], 64);
  EXPECT_EQ(j["method"], "lora");
  EXPECT_EQ(j["from"]["format"], "peft-adapter");
  EXPECT_EQ(j["from"]["ignored"][0]["key"], "lora_alpha");
  expect_error(call("POST", "/api/fit",
                    R"({"from": "optim: adamw_turbo\nper_device_train_batch_size: 1",
                        "model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl"})"),
               400, "invalid_value", "optim");
}

TEST(ServerApi, ADeepSpeedPathInAPastedTrainerFileStaysIgnored) {
  // The API reads no files: the DeepSpeed config the arguments name is listed with a why.
  const Response r = call("POST", "/api/fit",
                          R"({"from": {"per_device_train_batch_size": 2,
                              "deepspeed": "ds_config_zero3.json"},
                              "model": "llama-3.1-8b", "method": "full", "gpu": "h200-nvl"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  EXPECT_EQ(j["from"]["files"].size(), 1u);
  bool seen = false;
  for (const auto& k : j["from"]["ignored"])
    if (k["key"] == "deepspeed") {
      seen = true;
      EXPECT_NE(k["why"].get<std::string>().find("API"), std::string::npos);
    }
  EXPECT_TRUE(seen);
}

TEST(ServerApi, BadInputGetsAJsonErrorWithTheField) {
  expect_error(call("POST", "/api/fit", "{bad"), 400, "invalid_value", "body");
  expect_error(
      call("POST", "/api/fit", R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "h200nvl"})"),
      400, "unknown_name", "gpu");
  expect_error(call("POST", "/api/fit",
                    R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl", "rank": 0})"),
               400, "invalid_value", "rank");
  expect_error(
      call("POST", "/api/fit",
           R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl", "rank": "x"})"),
      400, "invalid_value", "rank");
  expect_error(
      call("POST", "/api/fit",
           R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl", "colour": 1})"),
      400, "unknown_name", "colour");
  expect_error(call("POST", "/api/fit", R"([1, 2])"), 400, "invalid_value");
  expect_error(call("POST", "/api/fit", R"({"method": "lora", "gpu": "h200-nvl"})"), 400,
               "invalid_value", "model");
}

TEST(ServerApi, NoFileIsEverRead) {
  expect_error(call("POST", "/api/fit",
                    R"({"model": "/etc/passwd.json", "method": "lora", "gpu": "h200-nvl"})"),
               400, "unsupported", "model");
  expect_error(call("POST", "/api/fit",
                    R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "../../etc/x.yaml"})"),
               400, "unsupported", "gpu");
  expect_error(call("GET", "/../../etc/passwd"), 404, "not_found");
  expect_error(call("GET", "/web/../data/gpus/h200-nvl.yaml"), 404, "not_found");
}

TEST(ServerApi, ServesThePageAndTheSeedRunsFromEmbeddedFiles) {
  const Response page = call("GET", "/");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  // Every file the page names is an embedded asset of this server: no other origin.
  const std::regex reference(R"re((?:src|href)="([^"]*)")re");
  int references = 0;
  for (std::sregex_iterator it(page.body.begin(), page.body.end(), reference), end; it != end;
       ++it) {
    const std::string target = (*it)[1];
    if (target.starts_with("data:") || target.starts_with("#")) continue;
    ++references;
    // A path on this origin: relative to the page at "/" (as the static site's copy, which may
    // be hosted in a folder, needs) or absolute; never a scheme or another host.
    ASSERT_TRUE(target.find(':') == std::string::npos && !target.starts_with("//")) << target;
    const std::string path =
        (target.starts_with("/") ? "" : "/") + target.substr(0, target.find('?'));
    EXPECT_EQ(call("GET", path).status, 200) << path;
  }
  EXPECT_GE(references, 2);  // style.css, app.js
  EXPECT_EQ(call("GET", "/app.js").content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(call("GET", "/style.css").content_type, "text/css; charset=utf-8");
  // The page's default runs: the embedded examples/seed-runs.yaml, byte for byte.
  const Response seed = call("GET", "/examples/seed-runs.yaml");
  ASSERT_EQ(seed.status, 200);
  std::ifstream file(std::string(FTPLAN_SOURCE_DIR) + "/examples/seed-runs.yaml");
  const std::string expected((std::istreambuf_iterator<char>(file)), {});
  EXPECT_EQ(seed.body, expected);
  expect_error(call("GET", "/examples/../data/gpus/h200-nvl.yaml"), 404, "not_found");
  expect_error(call("GET", "/examples/nothing.yaml"), 404, "not_found");
  expect_error(call("GET", "/examples/"), 404, "not_found");
}

TEST(ServerApi, StatusCodes) {
  expect_error(call("GET", "/api/nothing"), 404, "not_found");
  expect_error(call("DELETE", "/api/fit"), 405, "method_not_allowed");
  expect_error(call("GET", "/api/fit"), 405, "method_not_allowed");
  expect_error(call("POST", "/healthz"), 405, "method_not_allowed");
  server::ApiLimits small;
  small.max_body_bytes = 100;
  Request big;
  big.method = "POST";
  big.path = "/api/fit";
  big.body = std::string(101, ' ');
  big.content_type = "application/json";
  expect_error(server::handle(big, commands(), small), 413, "payload_too_large");
}

Response get(const std::string& path, const std::map<std::string, std::string>& query) {
  Request r;
  r.method = "GET";
  r.path = path;
  r.query = query;
  return server::handle(r, commands());
}

TEST(ServerApi, AGetWithABodyThatIsNotAnObjectIs400) {
  // Query parameters are merged into the body: a number, string or list body must be refused
  // before that, not crash the handler.
  for (const std::string body : {"0", "\"x\"", "[1]", "true"}) {
    Request r;
    r.method = "GET";
    r.path = "/api/words";
    r.query = {{"lang", "de"}};
    r.body = body;
    const Response out = server::handle(r, commands());
    expect_error(out, 400, "invalid_value", "body");
    EXPECT_NE(json::parse(out.body)["error"]["message"].get<std::string>().find("JSON object"),
              std::string::npos)
        << out.body;
  }
}

TEST(ServerApi, ARunWithoutAMethodInAYamlPlanIs400) {
  // Found by fuzz_api: the run's method was looked up on a map without one, and yaml-cpp threw.
  Request r;
  r.method = "POST";
  r.path = "/api/plan";
  r.content_type = "application/yaml";
  r.body = "runs:\n  - s:\n0&&o_batchn";
  const Response out = server::handle(r, commands());
  EXPECT_EQ(out.status, 400) << out.body;
  EXPECT_TRUE(json::accept(out.body)) << out.body;
}

TEST(ServerApi, HelpIsNotAnApiOption) {
  // A query key `help` became --help, whose text was answered as if it were JSON.
  expect_error(get("/api/words", {{"help", ""}}), 400, "unknown_name", "help");
  expect_error(call("POST", "/api/fit", R"({"help": true})"), 400, "unknown_name", "help");
  expect_error(call("POST", "/api/fit", R"({"version": true})"), 400, "unknown_name", "version");
}

TEST(ServerApi, AnRlRunAnswersAsTheCommandLineDoes) {
  const Response r = call("POST", "/api/scale",
                          R"({"model": "qwen2.5-7b", "method": "grpo", "adapter": "lora",
                              "gpu": "h200-nvl", "gpus": 2, "micro_batch": 4,
                              "prompts_per_step": 8, "completion_len": 512})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = json::parse(r.body);
  const auto cli = test::run_cli({"scale", "--model", "qwen2.5-7b", "--method", "grpo", "--adapter",
                                  "lora", "--gpu", "h200-nvl", "--gpus", "2", "--micro-batch", "4",
                                  "--prompts-per-step", "8", "--completion-len", "512", "--json"});
  ASSERT_EQ(cli.code, 0) << cli.err;
  EXPECT_EQ(j["rl"], json::parse(cli.out)["rl"]);
  EXPECT_EQ(j["rl"]["sequences"], 64);
  expect_error(call("POST", "/api/fit",
                    R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl",
                        "group_size": 4})"),
               400, "invalid_value", "group_size");
}

TEST(ServerApi, ReportIsTheCliReportInEitherFormatAndLanguage) {
  // The page's link: /api/report?format=html&lang=de.
  const Response html = get("/api/report", {{"format", "html"}, {"lang", "de"}});
  ASSERT_EQ(html.status, 200) << html.body;
  EXPECT_EQ(html.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(html.body, test::run_cli({"report", "--format", "html", "--lang", "de"}).out);
  EXPECT_TRUE(html.body.starts_with("<!DOCTYPE html>\n<html lang=\"de\">"));
  const Response md = get("/api/report", {{"format", "md"}, {"lang", "en"}});
  ASSERT_EQ(md.status, 200) << md.body;
  EXPECT_EQ(md.content_type, "text/markdown; charset=utf-8");
  EXPECT_EQ(md.body, test::run_cli({"report"}).out);
  // Without parameters: HTML in English.
  const Response plain = get("/api/report", {});
  ASSERT_EQ(plain.status, 200);
  EXPECT_NE(plain.body.find("<html lang=\"en\">"), std::string::npos);
}

TEST(ServerApi, ReportWithABadFormatOrLanguageIs400NamingTheParameter) {
  const Response format = get("/api/report", {{"format", "pdf"}, {"lang", "en"}});
  expect_error(format, 400, "unknown_name", "format");
  EXPECT_NE(json::parse(format.body)["error"]["message"].get<std::string>().find("'pdf'"),
            std::string::npos);
  const Response lang = get("/api/report", {{"format", "html"}, {"lang", "fr"}});
  expect_error(lang, 400, "unknown_name", "lang");
  EXPECT_EQ(lang.content_type, "application/json");
  // POST takes a runs document; without one it says so and names the body.
  expect_error(call("POST", "/api/report"), 400, "invalid_value", "body");
  const Response put = call("PUT", "/api/report");
  expect_error(put, 405, "method_not_allowed");
  EXPECT_NE(put.body.find("use GET or POST for /api/report"), std::string::npos) << put.body;
}

Response post_runs(const std::string& path, const std::string& body,
                   const std::map<std::string, std::string>& query,
                   const std::string& content_type = "application/yaml") {
  Request r;
  r.method = "POST";
  r.path = path;
  r.body = body;
  r.query = query;
  r.content_type = content_type;
  return server::handle(r, commands());
}

// Runs of the page's own: a model and a name the seed's runs do not have.
constexpr const char* kTeamRuns = R"(candidates:
  gpus: [h200-nvl, rtx-pro-6000]
  counts: [1, 2]
runs:
  - name: support-bot qwen3-14b qlora
    model: qwen3-14b
    method: qlora
    rank: 8
    seq: 4096
    micro_batch: 2
    recompute: full
    tokens: 20e6
)";

// POST /api/report: the user's runs (YAML or JSON), the report `ftplan report FILE` writes.
TEST(ServerApi, ReportOfPostedRunsIsTheCliReportOfThatFile) {
  const Response html = post_runs("/api/report", kTeamRuns,
                                  {{"format", "html"}, {"lang", "de"}, {"gpu", "h200-nvl, l40s"}});
  ASSERT_EQ(html.status, 200) << html.body;
  EXPECT_EQ(html.content_type, "text/html; charset=utf-8");
  const auto cli = test::run_cli(
      {"report", "-", "--format", "html", "--lang", "de", "--gpu", "h200-nvl", "--gpu", "l40s"},
      kTeamRuns);
  ASSERT_EQ(cli.code, 0) << cli.err;
  // The same report; where the command line names its file (here standard input), the API names
  // the request body.
  std::string expected = cli.out;
  const std::string file = "<code>standard input</code>";
  ASSERT_NE(expected.find(file), std::string::npos);
  expected.replace(expected.find(file), file.size(), "<code>the request body</code>");
  EXPECT_EQ(html.body, expected);
  EXPECT_NE(html.body.find("support-bot qwen3-14b qlora"), std::string::npos);
  EXPECT_NE(html.body.find("L40S"), std::string::npos);  // the query's cards replace the file's
  EXPECT_EQ(html.body.find("8B full fine-tune"), std::string::npos);  // no seed run

  // JSON, Markdown by default for format=md, the file's own cards.
  const json runs = {
      {"candidates", {{"gpus", {"h200-nvl"}}, {"counts", {1}}}},
      {"runs",
       {{{"name", "tiny gemma"}, {"model", "gemma-3-4b"}, {"method", "lora"}, {"tokens", 1e7}}}}};
  const Response md = post_runs("/api/report", runs.dump(), {{"format", "md"}}, "application/json");
  ASSERT_EQ(md.status, 200) << md.body;
  EXPECT_EQ(md.content_type, "text/markdown; charset=utf-8");
  std::string expected_md = test::run_cli({"report", "-", "--format", "md"}, runs.dump()).out;
  ASSERT_NE(expected_md.find("`standard input`"), std::string::npos);
  expected_md.replace(expected_md.find("`standard input`"), 16, "`the request body`");
  EXPECT_EQ(md.body, expected_md);
  EXPECT_NE(md.body.find("tiny gemma"), std::string::npos);
}

TEST(ServerApi, ReportOfPostedRunsGivesA400NamingTheField) {
  // A bad run names its key, as for /api/plan.
  expect_error(post_runs("/api/report", R"({"runs": [{"name": "a", "model": "llama-3.1-8b",
    "method": "lorra", "tokens": 1e8}]})",
                         {}, "application/json"),
               400, "invalid_value", "runs[0].method");
  // Not JSON although it says so; no body at all.
  expect_error(post_runs("/api/report", "{\"runs\": [", {}, "application/json"), 400, "bad_file",
               "body");
  expect_error(post_runs("/api/report", "  \n", {}), 400, "invalid_value", "body");
  // Query parameters: an unknown card, an empty list, a typo with the closest name, a bad format.
  expect_error(post_runs("/api/report", kTeamRuns, {{"gpu", "h200-nvk"}}), 400, "unknown_name",
               "gpu");
  expect_error(post_runs("/api/report", kTeamRuns, {{"gpu", " , "}}), 400, "invalid_value", "gpu");
  const Response typo = post_runs("/api/report", kTeamRuns, {{"formt", "md"}});
  expect_error(typo, 400, "unknown_name", "formt");
  EXPECT_EQ(json::parse(typo.body)["error"]["suggestions"], json::array({"format"})) << typo.body;
  expect_error(post_runs("/api/report", kTeamRuns, {{"format", "pdf"}}), 400, "unknown_name",
               "format");
  // A body a cross-site form could send is refused before it is read.
  expect_error(post_runs("/api/report", kTeamRuns, {}, "text/plain"), 415, "unsupported_media_type",
               "content_type");
}

// POST /api/plan?gpu=...: the page's cards replace the runs document's candidates, as --gpu does.
TEST(ServerApi, PlanTakesTheCandidateCardsInTheQuery) {
  const Response r = post_runs("/api/plan", kTeamRuns, {{"gpu", "l40s,h100-sxm"}});
  ASSERT_EQ(r.status, 200) << r.body;
  const auto cli =
      test::run_cli({"plan", "-", "--gpu", "l40s", "--gpu", "h100-sxm", "--json"}, kTeamRuns);
  ASSERT_EQ(cli.code, 0) << cli.err;
  const json plan = json::parse(r.body);
  json expected = json::parse(cli.out);
  expected["file"] = "the request body";  // where the command line names its file
  EXPECT_EQ(plan, expected);
  std::vector<std::string> cards;
  for (const auto& g : plan["runs"][0]["per_gpu"])
    cards.push_back(g["gpu"]);
  EXPECT_FALSE(plan["runs"][0]["recommendation"].is_null()) << r.body;
  EXPECT_EQ(cards, (std::vector<std::string>{"l40s", "h100-sxm"}));
  expect_error(post_runs("/api/plan", kTeamRuns, {{"gpus", "l40s"}}), 400, "unknown_name", "gpus");
}

TEST(ServerSocket, ServesOverLoopbackAndKeepsServingAfterBadRequests) {
  server::ServerOptions o;
  o.port = 0;
  o.threads = 2;
  o.limits.max_body_bytes = 4096;
  const auto running = server::RunningServer::start(o, commands());
  const int port = running->port();
  auto oversized =
      test::exchange(port, test::request_text("POST", "/api/fit", std::string(8192, 'x')));
  ASSERT_TRUE(oversized);
  EXPECT_EQ(oversized->status, 413);
  auto traversal = test::exchange(port, test::request_text("GET", "/../../etc/passwd"));
  ASSERT_TRUE(traversal);
  EXPECT_EQ(traversal->status, 404);
  auto malformed = test::exchange(port, test::request_text("POST", "/api/fit", "{"));
  ASSERT_TRUE(malformed);
  EXPECT_EQ(malformed->status, 400);
  auto ok = test::exchange(
      port,
      test::request_text("POST", "/api/fit",
                         R"({"model": "llama-3.1-8b", "method": "qlora", "gpu": "h200-nvl"})"));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(json::parse(ok->body)["verdict"], "fits");
  EXPECT_EQ(ok->headers["cache-control"], "no-store");
  EXPECT_EQ(ok->headers["x-content-type-options"], "nosniff");
  auto health = test::exchange(port, test::request_text("GET", "/healthz"));
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

}  // namespace
}  // namespace ftplan
