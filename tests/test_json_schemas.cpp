// Every JSON output has a schema (schemas/*.schema.json) and keeps to it: each command's --json
// output on several runs, each endpoint of the HTTP API, and errors on stderr and over HTTP.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/json_schema.hpp"
#include "embedded_files.hpp"
#include "server/api.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;

const std::map<std::string, json>& schemas() {
  static const std::map<std::string, json> s = [] {
    std::map<std::string, json> out;
    for (const auto& f : embedded::files())
      if (f.path.starts_with("schemas/") && f.path.ends_with(".schema.json")) {
        const std::string name(f.path.substr(8, f.path.size() - 8 - 12));
        out[name] = json::parse(f.text);
      }
    return out;
  }();
  return s;
}

std::string violations(const json& doc, const std::string& schema) {
  std::string text;
  for (const auto& v : validate_json(doc, schemas().at(schema)))
    text += "  " + v.path + ": " + v.message + "\n";
  return text;
}

std::string source(const std::string& path) {
  return std::string(FTPLAN_SOURCE_DIR) + "/" + path;
}

struct Case {
  std::string schema;
  std::vector<std::string> args;  // without --json
};

// At least one run of every JSON output, and more where the output's shape depends on the run
// (method, card, placement, trainer files, lengths).
std::vector<Case> cases() {
  const std::vector<std::string> m8 = {"--model", "llama-3.1-8b"};
  auto with = [&](std::vector<std::string> head, std::vector<std::string> tail) {
    head.insert(head.begin() + 1, m8.begin(), m8.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  return {
      {"gpus", {"gpus"}},
      {"gpus-detect", {"gpus", "--detect", source("tests/cases/smi/mixed.csv")}},
      {"models", {"models"}},
      {"params", {"params", "--model", "llama-3.1-8b"}},
      {"params", {"params", "--model", "deepseek-v2-lite"}},
      {"params", {"params", "--model", "qwen2.5-vl-7b"}},
      {"fit", with({"fit"}, {"--method", "lora", "--gpu", "h200-nvl"})},
      {"fit",
       with({"fit"}, {"--method", "full", "--gpu", "h100-sxm", "--gpus", "8", "--shard", "fsdp"})},
      {"fit", with({"fit"}, {"--method", "qlora", "--gpu", "h200-nvl", "--mig", "1g.18gb"})},
      {"fit", with({"fit"}, {"--method", "dora", "--gpu", "l40s", "--seq-mean", "600", "--stack",
                             "axolotl"})},
      {"fit",
       {"fit", "--from", source("tests/data/trainers/llamafactory-lora.yaml"), "--gpu",
        "rtx-pro-6000"}},
      // Runs that do not fit: with suggestions (how to make it fit).
      {"fit", {"fit", "--model", "llama-3.1-70b", "--method", "lora", "--gpu", "h100-sxm"}},
      {"fit", with({"fit"}, {"--method", "full", "--gpu", "l40s", "--gpus", "2", "--micro-batch",
                             "8", "--recompute", "none"})},
      // Preference objectives: the workload's objective keys and the reference's memory.
      {"fit",
       with({"fit"}, {"--method", "dpo", "--gpu", "h200-nvl", "--gpus", "4", "--shard", "fsdp"})},
      {"fit", with({"fit"}, {"--method", "kto", "--adapter", "qlora", "--gpu", "l40s"})},
      {"step", with({"step"}, {"--method", "dpo", "--adapter", "lora", "--gpu", "h200-nvl"})},
      {"scale", with({"scale"}, {"--method", "dpo", "--gpu", "h200-nvl", "--gpus", "8"})},
      // Online objectives: the rollout settings, the engine's share and the step's parts.
      {"fit", with({"fit"}, {"--method", "grpo", "--adapter", "lora", "--gpu", "h200-nvl"})},
      {"scale", with({"scale"}, {"--method", "ppo", "--adapter", "lora", "--gpu", "h200-nvl",
                                 "--gpus", "2", "--micro-batch", "2", "--sleep"})},
      {"scale", with({"scale"}, {"--method", "grpo", "--gpu", "h100-sxm", "--gpus", "2",
                                 "--rollout", "separate", "--rollout-gpus", "2"})},
      {"scale-sweep", with({"scale"}, {"--method", "rloo", "--adapter", "lora", "--gpu", "h200-nvl",
                                       "--sweep", "--prompts-per-step", "8"})},
      {"max", with({"max"}, {"--method", "lora", "--gpu", "h200-nvl", "--solve", "micro-batch"})},
      {"max", with({"max"}, {"--method", "full", "--gpu", "a100-80gb-sxm", "--solve", "seq"})},
      {"mig", with({"mig"}, {"--method", "qlora", "--gpu", "rtx-pro-6000"})},
      {"mig", with({"mig"}, {"--method", "full", "--gpu", "a100-80gb-sxm"})},
      {"roofline", {"roofline", "--gpu", "h200-nvl", "--gemm", "4096,4096,4096"}},
      {"infer", with({"infer"}, {"--gpu", "h200-nvl", "--context", "8192", "--batch", "32"})},
      {"infer",
       {"infer", "--model", "gpt-oss-20b", "--gpu", "h100-sxm", "--kv-dtype", "fp8", "--weights",
        "fp8", "--batch", "4096"}},
      {"infer", {"infer", "--model", "llama-3.1-8b", "--gpu", "h200-nvl", "--mig", "1g.18gb"}},
      {"infer", {"infer", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus", "4"}},
      {"pack", {"pack", source("examples/mig-queue.yaml")}},
      {"step", with({"step"}, {"--method", "lora", "--gpu", "h200-nvl"})},
      {"step", with({"step"}, {"--method", "full", "--gpu", "rtx-pro-6000", "--precision", "fp8"})},
      {"step", {"step", "--model", "qwen3-30b-a3b", "--method", "qlora", "--gpu", "h100-sxm"}},
      {"compare", {"compare", "--gpu", "h200-nvl", "--gpu", "rtx-pro-6000"}},
      {"compare", with({"compare"}, {"--method", "lora", "--gpu", "a100-80gb-sxm", "--gpu", "l4"})},
      {"stacks", {"stacks"}},
      {"scale", with({"scale"}, {"--method", "full", "--gpu", "h200-nvl", "--gpus", "4"})},
      {"scale", with({"scale"}, {"--method", "lora", "--gpu", "h100-sxm", "--gpus", "16"})},
      {"scale-sweep", with({"scale"}, {"--method", "full", "--gpu", "h200-nvl", "--gpu",
                                       "rtx-pro-6000", "--sweep"})},
      {"validate", {"validate"}},
      {"plan", {"plan"}},
      {"plan", {"plan", source("examples/team-runs.yaml")}},
      {"sweep", {"sweep"}},
      {"matrix", with({"matrix"}, {"--method", "lora", "--tokens", "1e8", "--price-per-card-hour",
                                   "h100-sxm=2.5", "--sort", "cost"})},
      {"matrix", {"matrix", "--model", "llama-3.1-70b", "--method", "full", "--nvlink"}},
      {"explain", with({"explain"}, {"--method", "lora", "--gpu", "h200-nvl", "memory.peak"})},
      {"explain",
       with({"explain"}, {"--method", "full", "--gpu", "h200-nvl", "--gpus", "4", "--tokens", "1e8",
                          "--price-per-card-hour", "2", "plan", "--depth", "2"})},
      {"explain-list", with({"explain"}, {"--method", "lora", "--gpu", "a10g", "--list"})},
      {"words", {"words", "--lang", "de"}},
      {"calibrate-bench",
       {"calibrate", "show", source("bench/results/sample/ftplan-bench-sample.json")}},
      {"calibrate-step",
       {"calibrate", "step", source("bench/results/sample/ftplan-step-sample.json")}},
  };
}

TEST(JsonSchemas, EverySchemaUsesOnlyWhatTheValidatorChecks) {
  ASSERT_GE(schemas().size(), 20u);
  for (const auto& [name, s] : schemas()) {
    EXPECT_NO_THROW(check_schema(s, name)) << name;
    if (name == "error") continue;
    // Every output names its schema and version, and its top level admits no unknown key.
    EXPECT_EQ(s["properties"]["schema"]["const"], name);
    EXPECT_EQ(s["properties"]["schema_version"]["const"], cli::kJsonSchemaVersion);
    EXPECT_EQ(s["additionalProperties"], false) << name;
  }
}

TEST(JsonSchemas, TheValidatorFindsWhatBreaksASchema) {
  const json s = schemas().at("error");
  EXPECT_TRUE(validate_json(json::parse(R"({"error": {"code": "x", "message": "m", "field": "",
                                              "suggestions": []}})"),
                            s)
                  .empty());
  const auto missing = validate_json(json::parse(R"({"error": {"code": "x", "message": "m"}})"), s);
  ASSERT_EQ(missing.size(), 2u);
  EXPECT_EQ(missing[0].path, "/error");
  EXPECT_NE(missing[0].message.find("'field'"), std::string::npos);
  const auto typed = validate_json(
      json::parse(R"({"error": {"code": 2, "message": "m", "field": "", "suggestions": [1]},
                     "extra": true})"),
      s);
  ASSERT_EQ(typed.size(), 3u);
  EXPECT_EQ(typed[0].path, "/error/code");
  EXPECT_EQ(typed[0].message, "expected string, got integer");
  EXPECT_EQ(typed[1].path, "/error/suggestions/0");
  EXPECT_EQ(typed[2].message, "key 'extra' is not in the schema");
  EXPECT_THROW(check_schema(json::parse(R"({"type": "object", "patternProperties": {}})"), "x"),
               UserError);
  EXPECT_THROW(check_schema(json::parse(R"({"$ref": "#/$defs/missing"})"), "x"), UserError);
  // A pair: exactly two items.
  const json pair = json::parse(R"({"type": "array", "items": {"type": "number"},
                                    "minItems": 2, "maxItems": 2})");
  EXPECT_TRUE(validate_json(json::parse("[1, 2]"), pair).empty());
  const auto one = validate_json(json::parse("[1]"), pair);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].message, "1 items, fewer than 2");
  EXPECT_EQ(validate_json(json::parse("[1, 2, 3]"), pair)[0].message, "3 items, more than 2");
  EXPECT_THROW(check_schema(json::parse(R"({"type": "array", "minItems": -1})"), "x"), UserError);
}

TEST(JsonSchemas, EveryCommandOutputKeepsToItsSchema) {
  std::set<std::string> covered_schemas, covered_commands;
  for (const auto& c : cases()) {
    std::vector<std::string> args = c.args;
    args.push_back("--json");
    const auto r = test::run_cli(args);
    ASSERT_EQ(r.code, 0) << c.args[0] << ": " << r.err;
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc["schema"], c.schema);
    EXPECT_EQ(doc["schema_version"], cli::kJsonSchemaVersion);
    EXPECT_EQ(violations(doc, c.schema), "") << "ftplan " << c.args[0] << " (" << c.schema << ")";
    covered_schemas.insert(c.schema);
    covered_commands.insert(c.args[0]);
  }
  // Every schema has a run here, and so has every command that takes --json.
  for (const auto& [name, s] : schemas())
    if (name != "error") EXPECT_TRUE(covered_schemas.count(name)) << name;
  for (const auto& name : cli::command_names()) {
    const auto options = cli::command_options(name);
    const bool takes_json =
        std::any_of(options.begin(), options.end(), [](const auto& o) { return o.key == "json"; });
    if (takes_json || name == "calibrate") EXPECT_TRUE(covered_commands.count(name)) << name;
  }
}

TEST(JsonSchemas, ErrorsWithJsonAreJsonOnStderr) {
  const auto r = test::run_cli(
      {"fit", "--model", "llama-3.1-8bb", "--method", "lora", "--gpu", "h200-nvl", "--json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  const json e = json::parse(r.err);
  EXPECT_EQ(violations(e, "error"), "");
  EXPECT_EQ(e["error"]["code"], "unknown_name");
  EXPECT_EQ(e["error"]["field"], "model");
  EXPECT_EQ(e["error"]["suggestions"][0], "llama-3.1-8b");
  // An option the command does not have: named, with the closest.
  const auto o = test::run_cli({"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu",
                                "h200-nvl", "--micro-btch", "2", "--json"});
  EXPECT_EQ(o.code, 2);
  const json oe = json::parse(o.err);
  EXPECT_EQ(violations(oe, "error"), "");
  EXPECT_EQ(oe["error"]["field"], "micro-btch");
  EXPECT_EQ(oe["error"]["suggestions"], json::array({"--micro-batch"}));
  // Without --json the same error is one line of text.
  const auto t = test::run_cli(
      {"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl", "--micro-btch"});
  EXPECT_EQ(t.err, "error: unknown option '--micro-btch' for fit; did you mean --micro-batch?\n");
}

// The HTTP API answers with the command line's documents: the same schemas.
TEST(JsonSchemas, EveryApiEndpointKeepsToItsSchema) {
  static const server::Commands commands = cli::server_commands();
  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> calls = {
      {"GET", "/api/gpus", "", "gpus"},
      {"GET", "/api/models", "", "models"},
      {"GET", "/api/words?lang=de", "", "words"},
      {"POST", "/api/params", R"({"model": "gemma-3-4b"})", "params"},
      {"POST", "/api/fit", R"({"model": "llama-3.1-8b", "method": "qlora", "gpu": "l4"})", "fit"},
      {"POST", "/api/fit", R"({"model": "llama-3.1-70b", "method": "lora", "gpu": "h100-sxm"})",
       "fit"},
      {"POST", "/api/step", R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "h100-sxm"})",
       "step"},
      {"POST", "/api/scale",
       R"({"model": "llama-3.1-8b", "method": "full", "gpu": "h200-nvl", "gpus": 2})", "scale"},
      {"POST", "/api/mig", R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl"})",
       "mig"},
      {"POST", "/api/max",
       R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl", "solve": "seq"})", "max"},
      {"POST", "/api/explain",
       R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl", "figure": "memory"})",
       "explain"},
      {"POST", "/api/infer",
       R"({"model": "deepseek-v2-lite", "gpu": "h200-nvl", "context": 4096, "batch": 8})", "infer"},
      {"POST", "/api/matrix", R"({"model": "llama-3.1-8b", "method": "qlora", "max_price": 20000})",
       "matrix"},
      {"POST", "/api/plan",
       "runs:\n  - {name: a, model: llama-3.1-8b, method: lora, tokens: 1e8}\n", "plan"},
  };
  for (const auto& [method, path, body, schema] : calls) {
    server::Request r;
    r.method = method;
    const auto q = path.find('?');
    r.path = path.substr(0, q);
    if (q != std::string::npos) r.query[path.substr(q + 1, 4)] = path.substr(q + 6);
    r.body = body;
    if (method == "POST")
      r.content_type = schema == "plan" ? "application/yaml" : "application/json";
    const server::Response out = server::handle(r, commands);
    ASSERT_EQ(out.status, 200) << path << ": " << out.body;
    const json doc = json::parse(out.body);
    EXPECT_EQ(doc["schema"], schema);
    EXPECT_EQ(violations(doc, schema), "") << path;
  }
}

TEST(JsonSchemas, TheApiNamesItsOwnKeysInErrors) {
  static const server::Commands commands = cli::server_commands();
  auto post = [&](const std::string& path, const std::string& body) {
    server::Request r;
    r.method = "POST";
    r.path = path;
    r.body = body;
    r.content_type = "application/json";
    return server::handle(r, commands);
  };
  // An unknown key: refused, with the closest keys.
  const auto unknown =
      post("/api/fit",
           R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl", "micro_btch": 2})");
  EXPECT_EQ(unknown.status, 400);
  const json u = json::parse(unknown.body);
  EXPECT_EQ(violations(u, "error"), "");
  EXPECT_EQ(u["error"]["field"], "micro_btch");
  EXPECT_EQ(u["error"]["suggestions"][0], "micro_batch");
  EXPECT_NE(u["error"]["message"].get<std::string>().find("did you mean micro_batch"),
            std::string::npos);
  // A flag's value where a value is expected: the key and what it takes, not the CLI's words.
  const auto flag = post("/api/fit", R"({"model": "llama-3.1-8b", "method": "lora", "gpu":
                                         "h200-nvl", "seq": true})");
  EXPECT_EQ(flag.status, 400);
  const json f = json::parse(flag.body);
  EXPECT_EQ(f["error"]["field"], "seq");
  EXPECT_EQ(f["error"]["message"].get<std::string>().find("--"), std::string::npos) << flag.body;
  // A list where one value is taken.
  const auto list = post("/api/fit", R"({"model": ["llama-3.1-8b", "qwen3-8b"], "method": "lora",
                                         "gpu": "h200-nvl"})");
  EXPECT_EQ(list.status, 400);
  EXPECT_EQ(json::parse(list.body)["error"]["field"], "model");
  // A required option missing: named by its key.
  const auto missing = post("/api/fit", R"({"model": "llama-3.1-8b", "gpu": "h200-nvl"})");
  EXPECT_EQ(missing.status, 400);
  const std::string m = json::parse(missing.body)["error"]["message"];
  EXPECT_EQ(m.find("--"), std::string::npos) << m;
  EXPECT_NE(m.find("method"), std::string::npos) << m;
  // A key of the command line that the API does not take.
  EXPECT_EQ(post("/api/fit", R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "h200-nvl",
                                 "data": "/etc"})")
                .status,
            400);
}

}  // namespace
}  // namespace ftplan
