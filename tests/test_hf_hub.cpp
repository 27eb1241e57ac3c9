// Models by Hugging Face id: the Hugging Face cache layout, ftplan's own cache, snapshot folders,
// and downloads of config.json and safetensors headers from a hub-like server on loopback
// (127.0.0.1, a random port). No test reaches the internet.
#include <gtest/gtest.h>
#include <httplib.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/cli.hpp"
#include "cli/hf_hub.hpp"
#include "safetensors_builder.hpp"

namespace ftplan {
namespace {

namespace fs = std::filesystem;
using test::SafetensorsBuilder;

// The tiny Llama of test_safetensors.cpp: hidden 8, 2 layers, 2 heads (head_dim 4), 1 key/value
// head, intermediate 16, vocabulary 10; 1352 parameters (80 + 2 × 592 + 8 + 80).
constexpr const char* kTinyConfig = R"({"model_type": "llama", "hidden_size": 8,
  "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
  "intermediate_size": 16, "vocab_size": 10})";

// Its tensors in BF16: layer `from` .. `to` (exclusive), plus the embedding when `first` and the
// final norm and lm_head when `last`. One layer is 592 elements = 1184 bytes.
SafetensorsBuilder tiny_tensors(bool first, int from, int to, bool last) {
  SafetensorsBuilder b;
  if (first) b.add("model.embed_tokens.weight", "BF16", "[10, 8]", 160);
  for (int layer = from; layer < to; ++layer) {
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    b.add(p + "self_attn.q_proj.weight", "BF16", "[8, 8]", 128)
        .add(p + "self_attn.k_proj.weight", "BF16", "[4, 8]", 64)
        .add(p + "self_attn.v_proj.weight", "BF16", "[4, 8]", 64)
        .add(p + "self_attn.o_proj.weight", "BF16", "[8, 8]", 128)
        .add(p + "mlp.gate_proj.weight", "BF16", "[16, 8]", 256)
        .add(p + "mlp.up_proj.weight", "BF16", "[16, 8]", 256)
        .add(p + "mlp.down_proj.weight", "BF16", "[8, 16]", 256)
        .add(p + "input_layernorm.weight", "BF16", "[8]", 16)
        .add(p + "post_attention_layernorm.weight", "BF16", "[8]", 16);
  }
  if (last)
    b.add("model.norm.weight", "BF16", "[8]", 16).add("lm_head.weight", "BF16", "[10, 8]", 160);
  return b;
}

std::string index_for(const std::vector<std::pair<std::string, SafetensorsBuilder>>& shards) {
  nlohmann::json map = nlohmann::json::object();
  for (const auto& [file, b] : shards) {
    const auto header = nlohmann::json::parse(b.header());
    for (const auto& [name, unused] : header.items())
      if (name != "__metadata__") map[name] = file;
  }
  return nlohmann::json{{"metadata", {{"total_size", 2704}}}, {"weight_map", map}}.dump();
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

struct Request {
  std::string path;
  std::string range;
  std::string authorization;
};

// A hub-like server: /<org>/<name>/resolve/<revision>/<file> answers 200 (206 for a Range),
// 404, 401 for the gated repo without its token; shards of org/sharded redirect (302) to /cdn/.
class FakeHub {
 public:
  FakeHub() {
    server_.Get(R"(/([^/]+/[^/]+)/resolve/([^/]+)/(.+))", [this](const httplib::Request& req,
                                                                 httplib::Response& res) {
      log(req);
      const std::string repo = req.matches[1], file = req.matches[3];
      if (repo == "org/gated" && req.get_header_value("Authorization") != "Bearer secret") {
        res.status = 401;
        return;
      }
      if (repo == "org/sharded" && file.ends_with(".safetensors")) {
        res.status = 302;
        res.set_header("Location", "/cdn/" + file);
        return;
      }
      serve(repo + "/" + file, res);
    });
    server_.Get(R"(/cdn/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
      log(req);
      serve("org/sharded/" + std::string(req.matches[1]), res);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the loop runs would leave it running for ever: wait until it listens.
    while (!server_.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeHub() {
    server_.stop();
    thread_.join();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::map<std::string, std::string> files;  // "org/name/file" -> bytes
  std::vector<Request> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void log(const httplib::Request& req) {
    std::lock_guard lock(mutex_);
    requests_.push_back(
        {req.path, req.get_header_value("Range"), req.get_header_value("Authorization")});
  }
  void serve(const std::string& key, httplib::Response& res) {
    auto it = files.find(key);
    if (it == files.end()) {
      res.status = 404;
      return;
    }
    res.set_content(it->second, "application/octet-stream");  // the server cuts Range requests
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<Request> requests_;
};

class HubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/ftplan-hub-XXXXXX";
    root_ = ::mkdtemp(dir_template);
    for (const char* name :
         {"HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HF_ENDPOINT", "HF_TOKEN", "HF_HUB_OFFLINE"})
      if (const char* v = std::getenv(name)) saved_[name] = v;
    ::setenv("HF_HUB_CACHE", (root_ / "hf").c_str(), 1);
    ::setenv("XDG_CACHE_HOME", (root_ / "xdg").c_str(), 1);
    ::setenv("HF_ENDPOINT", hub_.endpoint().c_str(), 1);
    ::unsetenv("HF_HOME");
    ::unsetenv("HF_TOKEN");
    ::unsetenv("HF_HUB_OFFLINE");
    // org/tiny: one model.safetensors with its 2704 data bytes (never to be fetched).
    hub_.files["org/tiny/config.json"] = kTinyConfig;
    hub_.files["org/tiny/model.safetensors"] = tiny_tensors(true, 0, 2, true).file();
    hub_.files["org/gated/config.json"] = kTinyConfig;
    hub_.files["org/gated/model.safetensors"] = tiny_tensors(true, 0, 2, true).file();
    // org/sharded: two shards and their index.
    const std::vector<std::pair<std::string, SafetensorsBuilder>> shards = {
        {"model-00001-of-00002.safetensors", tiny_tensors(true, 0, 1, false)},
        {"model-00002-of-00002.safetensors", tiny_tensors(false, 1, 2, true)}};
    hub_.files["org/sharded/config.json"] = kTinyConfig;
    hub_.files["org/sharded/model.safetensors.index.json"] = index_for(shards);
    for (const auto& [file, b] : shards)
      hub_.files["org/sharded/" + file] = b.file();
  }
  void TearDown() override {
    for (const char* name : {"HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HF_ENDPOINT", "HF_TOKEN",
                             "HF_HUB_OFFLINE"}) {
      auto it = saved_.find(name);
      if (it == saved_.end())
        ::unsetenv(name);
      else
        ::setenv(name, it->second.c_str(), 1);
    }
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // Runs ftplan in-process: exit code, stdout, stderr.
  std::tuple<int, std::string, std::string> ftplan(const std::vector<std::string>& args) {
    std::ostringstream out, err;
    const int code = cli::run(args, out, err);
    return {code, out.str(), err.str()};
  }

  fs::path root_;
  FakeHub hub_;
  std::map<std::string, std::string> saved_;
};

TEST_F(HubTest, DownloadsConfigAndHeaderOnlyThenWorksOffline) {
  auto [code, out, err] = ftplan({"params", "--model", "org/tiny", "--json"});
  ASSERT_EQ(code, 0) << err;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["total"], 1352);
  // All tensors: 1352 BF16 elements × 2 bytes = 2704 bytes, 21 tensors.
  EXPECT_EQ(j["checkpoint"]["stored_bytes"], 2704);
  EXPECT_EQ(j["checkpoint"]["stored_tensors"], 21);
  EXPECT_EQ(j["checkpoint"]["cross_check"]["matches"], true);
  // The header: the first 8 bytes, then bytes 0 .. 8 + N − 1; never the 2704 data bytes.
  const std::string file = hub_.files["org/tiny/model.safetensors"];
  const std::uint64_t n = file.size() - 8 - 2704;
  std::vector<std::string> ranges;
  for (const auto& r : hub_.requests())
    if (r.path.ends_with("/model.safetensors")) ranges.push_back(r.range);
  EXPECT_EQ(ranges,
            (std::vector<std::string>{"bytes=0-7", "bytes=0-" + std::to_string(8 + n - 1)}));
  const fs::path cached = root_ / "xdg/ftplan/hf/models--org--tiny/main";
  EXPECT_TRUE(fs::is_regular_file(cached / "config.json"));
  EXPECT_TRUE(fs::is_regular_file(cached / "complete"));
  EXPECT_EQ(fs::file_size(cached / "model.safetensors.header"), 8 + n);

  // Offline: from ftplan's cache, with no request at all.
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  const auto before = hub_.requests().size();
  auto [code2, out2, err2] = ftplan({"params", "--model", "org/tiny"});
  ASSERT_EQ(code2, 0) << err2;
  EXPECT_NE(out2.find("Cross-check with config.json: matches (21 tensors, 1,352 parameters)"),
            std::string::npos)
      << out2;
  EXPECT_NE(out2.find("stored: 2,704 B"), std::string::npos);
  EXPECT_EQ(hub_.requests().size(), before);
  // Every command takes the id: fit plans it.
  auto [code3, out3, err3] =
      ftplan({"fit", "--model", "org/tiny", "--method", "lora", "--gpu", "rtx-4090"});
  EXPECT_EQ(code3, 0) << err3;
}

TEST_F(HubTest, RunsFilesTakeHubIds) {
  const fs::path runs = root_ / "runs.yaml";
  write(runs,
        "candidates:\n  gpus: [rtx-4090]\n  counts: [1]\nruns:\n  - name: tiny\n"
        "    model: org/tiny\n    method: lora\n    tokens: 1e6\n");
  auto [code, out, err] = ftplan({"plan", runs.string()});
  EXPECT_EQ(code, 0) << err;
  EXPECT_NE(out.find("tiny"), std::string::npos);
  bool fetched = false;
  for (const auto& r : hub_.requests())
    fetched |= r.path == "/org/tiny/resolve/main/config.json";
  EXPECT_TRUE(fetched);
}

TEST_F(HubTest, ShardedFollowsRedirectsAndReadsEveryShardHeader) {
  auto [code, out, err] = ftplan({"params", "--model", "org/sharded", "--json"});
  ASSERT_EQ(code, 0) << err;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["checkpoint"]["files"].size(), 2u);
  EXPECT_EQ(j["checkpoint"]["stored_bytes"], 2704);
  EXPECT_EQ(j["checkpoint"]["cross_check"]["matches"], true);
  int cdn = 0;
  for (const auto& r : hub_.requests())
    if (r.path.starts_with("/cdn/")) {
      ++cdn;
      EXPECT_FALSE(r.range.empty());
    }
  EXPECT_EQ(cdn, 4);  // two shards, two range requests each
}

TEST_F(HubTest, GatedNeedsTheToken) {
  auto [code, out, err] = ftplan({"params", "--model", "org/gated"});
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("org/gated: the hub refused config.json (HTTP 401): the model is gated"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("Set HF_TOKEN"), std::string::npos);
  ::setenv("HF_TOKEN", "secret", 1);
  auto [code2, out2, err2] = ftplan({"params", "--model", "org/gated"});
  EXPECT_EQ(code2, 0) << err2;
  EXPECT_EQ(hub_.requests().back().authorization, "Bearer secret");
}

// The ftplan binary has no HTTP client of its own: it hands each GET to ftplan-net
// (src/launch/launch_net.cpp). Through the real binaries: the token, the ranges, the redirects
// and the statuses must come through that hand-over as they do in-process.
std::tuple<int, std::string, std::string> ftplan_binary(const std::string& args,
                                                        const fs::path& scratch) {
  const std::string err_file = (scratch / "stderr.txt").string();
  const std::string command = std::string(FTPLAN_BINARY) + " " + args + " 2>" + err_file;
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  char buffer[4096];
  while (pipe && std::fgets(buffer, sizeof buffer, pipe))
    out += buffer;
  const int status = pipe ? ::pclose(pipe) : -1;
  std::ifstream in(err_file);
  std::stringstream err;
  err << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, err.str()};
}

TEST_F(HubTest, TheBinaryFetchesThroughFtplanNet) {
  auto [code, out, err] = ftplan_binary("params --model org/sharded --json", root_);
  ASSERT_EQ(code, 0) << err;
  EXPECT_EQ(nlohmann::json::parse(out)["total"], 1352);
  bool redirected = false, ranged = false;
  for (const auto& r : hub_.requests()) {
    redirected = redirected || r.path.starts_with("/cdn/");
    ranged = ranged || r.range == "bytes=0-7";
  }
  EXPECT_TRUE(redirected);
  EXPECT_TRUE(ranged);

  auto [code2, out2, err2] = ftplan_binary("params --model org/gated", root_);
  EXPECT_EQ(code2, 2);
  EXPECT_NE(err2.find("(HTTP 401): the model is gated"), std::string::npos) << err2;
  ::setenv("HF_TOKEN", "secret", 1);
  auto [code3, out3, err3] = ftplan_binary("params --model org/gated", root_);
  EXPECT_EQ(code3, 0) << err3;
  EXPECT_EQ(hub_.requests().back().authorization, "Bearer secret");

  ::setenv("HF_ENDPOINT", "http://127.0.0.1:1", 1);
  auto [code4, out4, err4] = ftplan_binary("params --model org/other", root_);
  EXPECT_EQ(code4, 2);
  EXPECT_NE(err4.find("network error"), std::string::npos) << err4;
}

TEST_F(HubTest, NotFoundSuggestsCatalogRepos) {
  auto [code, out, err] = ftplan({"params", "--model", "meta-llama/Llama-3.1-8C"});
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("meta-llama/Llama-3.1-8C: not found on " + hub_.endpoint() +
                     " (HTTP 404 for config.json at revision 'main'); did you mean "
                     "meta-llama/Llama-3.1-8B"),
            std::string::npos)
      << err;
}

TEST_F(HubTest, OfflineAndNotCachedIsAClearError) {
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  auto [code, out, err] = ftplan({"params", "--model", "org/tiny"});
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("org/tiny: not in the Hugging Face cache"), std::string::npos) << err;
  EXPECT_NE(err.find("HF_HUB_OFFLINE is set"), std::string::npos);
  EXPECT_TRUE(hub_.requests().empty());
}

TEST_F(HubTest, NetworkErrorIsAUserError) {
  // Port 1 on loopback: nothing listens there.
  ::setenv("HF_ENDPOINT", "http://127.0.0.1:1", 1);
  auto [code, out, err] = ftplan({"params", "--model", "org/tiny"});
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("org/tiny: cannot fetch config.json from http://127.0.0.1:1 (network error"),
            std::string::npos)
      << err;
}

TEST_F(HubTest, CatalogHfRepoNeedsNoNetwork) {
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  auto [code, out, err] = ftplan({"params", "--model", "META-LLAMA/llama-3.1-8b", "--json"});
  ASSERT_EQ(code, 0) << err;
  EXPECT_EQ(nlohmann::json::parse(out)["origin"], "catalog");
  EXPECT_FALSE(nlohmann::json::parse(out).contains("checkpoint"));
  EXPECT_TRUE(hub_.requests().empty());
  // Its snapshot in the Hugging Face cache: the headers are read and cross-checked (the tiny
  // tensors against Llama 3.1 8B: 1352 elements on disk).
  const fs::path repo = root_ / "hf/models--meta-llama--Llama-3.1-8B";
  const std::string commit(40, 'c');
  write(repo / "refs/main", commit);
  write(repo / "snapshots" / commit / "config.json", kTinyConfig);
  write(repo / "snapshots" / commit / "model.safetensors", tiny_tensors(true, 0, 2, true).file());
  auto [code2, out2, err2] = ftplan({"params", "--model", "llama-3.1-8b", "--json"});
  ASSERT_EQ(code2, 0) << err2;
  const auto j = nlohmann::json::parse(out2);
  EXPECT_EQ(j["total"], 8030261248);  // the catalog's model, not the snapshot's config.json
  EXPECT_EQ(j["checkpoint"]["cross_check"]["checkpoint_params"], 1352);
  EXPECT_TRUE(hub_.requests().empty());
}

TEST_F(HubTest, HuggingFaceCacheLayoutAndRevisions) {
  // models--org--cached/refs/main -> commit aaaa…, refs/v1 -> bbbb…; each snapshot its files.
  const fs::path repo = root_ / "hf/models--org--cached";
  const std::string main_commit(40, 'a'), v1_commit(40, 'b');
  write(repo / "refs/main", main_commit + "\n");
  write(repo / "refs/v1", v1_commit);
  write(repo / "snapshots" / main_commit / "config.json", kTinyConfig);
  write(repo / "snapshots" / main_commit / "model.safetensors",
        tiny_tensors(true, 0, 2, true).file());
  // v1 lacks lm_head: tied in its config.json, 1352 − 80 = 1272 parameters.
  std::string tied = kTinyConfig;
  tied.insert(1, "\"tie_word_embeddings\": true, ");
  write(repo / "snapshots" / v1_commit / "config.json", tied);
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  auto [code, out, err] = ftplan({"params", "--model", "org/cached", "--json"});
  ASSERT_EQ(code, 0) << err;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["total"], 1352);
  EXPECT_NE(j["checkpoint"]["origin"].get<std::string>().find("Hugging Face cache"),
            std::string::npos);
  auto [code2, out2, err2] = ftplan({"params", "--model", "org/cached@v1", "--json"});
  ASSERT_EQ(code2, 0) << err2;
  j = nlohmann::json::parse(out2);
  EXPECT_EQ(j["total"], 1272);
  EXPECT_FALSE(j.contains("checkpoint"));  // that snapshot holds no safetensors
  // A revision given as the commit itself.
  auto [code3, out3, err3] = ftplan({"params", "--model", "org/cached@" + v1_commit, "--json"});
  EXPECT_EQ(code3, 0) << err3;
  // HF_HOME/hub when HF_HUB_CACHE is unset.
  ::unsetenv("HF_HUB_CACHE");
  ::setenv("HF_HOME", root_.c_str(), 1);
  fs::rename(root_ / "hf", root_ / "hub");
  auto [code4, out4, err4] = ftplan({"params", "--model", "org/cached"});
  EXPECT_EQ(code4, 0) << err4;
}

TEST_F(HubTest, FolderWithShardsAndAnUnknownModelType) {
  const fs::path dir = root_ / "mystery";
  std::string config = kTinyConfig;
  config.replace(config.find("llama"), 5, "mystery");
  write(dir / "config.json", config);
  const std::vector<std::pair<std::string, SafetensorsBuilder>> shards = {
      {"model-00001-of-00002.safetensors", tiny_tensors(true, 0, 1, false)},
      {"model-00002-of-00002.safetensors", tiny_tensors(false, 1, 2, true)}};
  write(dir / "model.safetensors.index.json", index_for(shards));
  for (const auto& [file, b] : shards)
    write(dir / file, b.file());
  auto [code, out, err] = ftplan({"params", "--model", dir.string()});
  ASSERT_EQ(code, 0) << err;
  EXPECT_NE(out.find("model_type 'mystery' is not one ftplan knows"), std::string::npos) << out;
  EXPECT_NE(out.find("1,352 parameters"), std::string::npos);
  auto [code2, out2, err2] =
      ftplan({"fit", "--model", dir.string(), "--method", "lora", "--gpu", "rtx-4090"});
  EXPECT_EQ(code2, 0) << err2;
  // Without safetensors the unknown type is refused, as before.
  fs::remove(dir / "model.safetensors.index.json");
  auto [code3, out3, err3] = ftplan({"params", "--model", (dir / "config.json").string()});
  EXPECT_EQ(code3, 2);
  EXPECT_NE(err3.find("model_type 'mystery' is not supported"), std::string::npos) << err3;
}

TEST_F(HubTest, SafetensorsOptionCrossChecksACatalogModel) {
  // The tiny checkpoint against Llama 3.1 8B: every shape differs, no tensor is missing.
  const fs::path file = root_ / "tiny.safetensors";
  write(file, tiny_tensors(true, 0, 2, true).file());
  auto [code, out, err] =
      ftplan({"params", "--model", "llama-3.1-8b", "--safetensors", file.string(), "--json"});
  ASSERT_EQ(code, 0) << err;
  const auto check = nlohmann::json::parse(out)["checkpoint"]["cross_check"];
  EXPECT_EQ(check["matches"], false);
  EXPECT_EQ(check["checkpoint_params"], 1352);
  EXPECT_TRUE(check["only_in_config"].empty());
  EXPECT_TRUE(check["only_in_checkpoint"].empty());
  // 2 layers on disk, 32 in the config: all 12 patterns differ in count or shape.
  EXPECT_EQ(check["shape_differences"].size(), 12u);
  auto [code2, out2, err2] =
      ftplan({"params", "--model", "llama-3.1-8b", "--safetensors", (root_ / "none").string()});
  EXPECT_EQ(code2, 2);
  EXPECT_NE(err2.find("no such file (given for --safetensors"), std::string::npos);
}

TEST(HubId, Parsing) {
  auto id = cli::parse_hub_id("org/name@refs/pr/1");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->repo, "org/name");
  EXPECT_EQ(id->revision, "refs/pr/1");
  EXPECT_EQ(cli::parse_hub_id("org/name")->revision, "main");
  EXPECT_FALSE(cli::parse_hub_id("llama-3.1-8b"));
  EXPECT_FALSE(cli::parse_hub_id("/abs/path"));
  EXPECT_FALSE(cli::parse_hub_id("a/b/c"));
  EXPECT_FALSE(cli::parse_hub_id("../x"));
  EXPECT_FALSE(cli::parse_hub_id("org/name@"));
  EXPECT_FALSE(cli::parse_hub_id("org/name@../../x"));
}

}  // namespace
}  // namespace ftplan
