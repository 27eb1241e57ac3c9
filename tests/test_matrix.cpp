// Every card at once (plan/matrix): a row agrees with `ftplan fit` on that card and with the
// planner on that card alone; filters keep what they say; sorting orders by its column; the API
// answers with the CLI's document; bad input is a clear error.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <set>

#include "core/error.hpp"
#include "plan/matrix.hpp"
#include "server/api.hpp"
#include "support.hpp"

namespace ftplan {
namespace {

using nlohmann::json;

json cli_json(const std::vector<std::string>& args) {
  std::vector<std::string> with = args;
  with.emplace_back("--json");
  const auto r = test::run_cli(with);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? json::parse(r.out) : json::object();
}

// 70B LoRA: one card holds it on the largest cards, several on others, none on the smallest.
const std::vector<std::string> kRun = {"matrix", "--model", "llama-3.1-70b", "--method", "lora"};

const json& matrix_70b() {
  static const json j = cli_json(kRun);
  return j;
}

const json* row_of(const json& matrix, const std::string& gpu) {
  for (const auto& r : matrix["rows"])
    if (r["gpu"] == gpu) return &r;
  return nullptr;
}

TEST(Matrix, EveryCardOfTheCatalogHasARow) {
  const json& m = matrix_70b();
  EXPECT_EQ(m["schema"], "matrix");
  EXPECT_EQ(m["rows"].size(), test::catalog().gpus().size());
  EXPECT_EQ(m["catalog_cards"], test::catalog().gpus().size());
  std::set<std::string> verdicts;
  for (const auto& r : m["rows"])
    verdicts.insert(r["verdict"].get<std::string>());
  // The run is chosen so that every kind of answer occurs.
  EXPECT_EQ(verdicts, (std::set<std::string>{"one-card", "more-cards", "no-count"}));
}

TEST(Matrix, OneCardColumnIsFitOnThatCard) {
  const json& m = matrix_70b();
  std::size_t compared = 0;
  for (const auto& r : m["rows"]) {
    const std::string gpu = r["gpu"];
    const auto fit = test::run_cli(
        {"fit", "--model", "llama-3.1-70b", "--method", "lora", "--gpu", gpu, "--json"});
    if (fit.code != 0) continue;  // a format the card lacks: fit refuses, the matrix says why
    const json f = json::parse(fit.out);
    EXPECT_EQ(r["one_card"]["verdict"], f["verdict"]) << gpu;
    EXPECT_NEAR(r["one_card"]["memory_GB"]["headroom"].get<double>(),
                f["memory_GB"]["headroom"].get<double>(), 1e-9)
        << gpu;
    EXPECT_NEAR(r["one_card"]["memory_GB"]["peak"].get<double>(),
                f["memory_GB"]["peak"].get<double>(), 1e-9)
        << gpu;
    EXPECT_EQ(r["one_card"]["reason"], f["reason"]) << gpu;
    ++compared;
  }
  EXPECT_GE(compared, 30u);
}

// The fewest cards are what `ftplan plan` picks for the same run on that card alone.
TEST(Matrix, FewestCardsIsWhatPlanPicksForThatCardAlone) {
  const json m = cli_json({"matrix", "--model", "llama-3.1-70b", "--method", "lora", "--tokens",
                           "1e8", "--price-per-card-hour", "h100-sxm=3"});
  for (const std::string gpu : {"h200-nvl", "h100-sxm", "l40s", "a100-40gb-sxm", "rtx-4090"}) {
    const std::string runs = fmt::format(
        "candidates: {{gpus: [{}]}}\nprices: {{per_card_hour_USD: {{h100-sxm: 3}}}}\n"
        "runs:\n  - {{name: r, model: llama-3.1-70b, method: lora, tokens: 1e8}}\n",
        gpu);
    const auto plan = test::run_cli({"plan", "-", "--json"}, runs);
    ASSERT_EQ(plan.code, 0) << plan.err;
    const json p = json::parse(plan.out)["runs"][0]["per_gpu"][0];
    const json* row = row_of(m, gpu);
    ASSERT_NE(row, nullptr) << gpu;
    if (p["minimum"].is_null()) {
      EXPECT_TRUE((*row)["cards_needed"].is_null()) << gpu;
      EXPECT_EQ((*row)["verdict"], "no-count") << gpu;
      EXPECT_EQ((*row)["why_not"], p["why_not"]) << gpu;
      continue;
    }
    const json& minimum = p["minimum"];
    EXPECT_EQ((*row)["cards_needed"], minimum["count"]) << gpu;
    EXPECT_EQ((*row)["verdict"], minimum["count"] == 1 ? "one-card" : "more-cards") << gpu;
    const json& fewest = (*row)["fewest"];
    for (const char* key : {"shard", "micro_batch", "recompute", "step_seconds",
                            "step_seconds_range", "time_to_train_hours", "cost_USD"})
      EXPECT_EQ(fewest[key], minimum[key]) << gpu << " " << key;
  }
}

TEST(Matrix, TimeAndCostFollowTheStepAndThePrice) {
  const json m = cli_json({"matrix", "--model", "llama-3.1-8b", "--method", "lora", "--epochs", "2",
                           "--dataset-tokens", "5e7", "--price-per-card-hour", "h200-nvl=4.5",
                           "--price-per-card-hour", "l40s=1"});
  EXPECT_DOUBLE_EQ(m["tokens"].get<double>(), 1e8);
  const double steps = m["steps"];
  EXPECT_DOUBLE_EQ(steps, std::ceil(1e8 / (64.0 * 2048)));
  for (const std::string gpu : {"h200-nvl", "l40s", "h100-sxm"}) {
    const json& f = (*row_of(m, gpu))["fewest"];
    ASSERT_TRUE(f.is_object()) << gpu;
    const double hours = f["time_to_train_hours"];
    EXPECT_NEAR(hours, steps * f["step_seconds"].get<double>() / 3600, hours * 1e-3) << gpu;
    EXPECT_NEAR(f["time_to_train_hours_range"][0].get<double>() / hours,
                f["step_seconds_range"][0].get<double>() / f["step_seconds"].get<double>(), 1e-3);
    const json* row = row_of(m, gpu);
    if (gpu == "h100-sxm") {
      EXPECT_TRUE(f["cost_USD"].is_null());  // no rental price given
      EXPECT_TRUE((*row)["rental_USD_per_card_hour"].is_null());
    } else {
      const double price = (*row)["rental_USD_per_card_hour"];
      EXPECT_NEAR(f["cost_USD"].get<double>(), hours * f["count"].get<double>() * price, 0.02)
          << gpu;
    }
  }
  // Without tokens, no time or cost to train.
  const json& r = *row_of(matrix_70b(), "h200-nvl");
  EXPECT_TRUE(matrix_70b()["tokens"].is_null());
  EXPECT_FALSE(r["fewest"].contains("time_to_train_hours"));
  EXPECT_TRUE(r["fewest"].contains("step_seconds_range"));
}

TEST(Matrix, FiltersKeepWhatTheySay) {
  const auto all = test::catalog().gpus();
  std::size_t linked = 0, priced_under = 0;
  for (const auto& g : all) {
    linked += g.nvlink.kind != LinkKind::kNone;
    priced_under += g.price_USD.value && *g.price_USD.value <= 20000;
  }
  const json nvlink =
      cli_json({"matrix", "--model", "llama-3.1-8b", "--method", "qlora", "--nvlink"});
  EXPECT_EQ(nvlink["rows"].size(), linked);
  EXPECT_LT(linked, all.size());
  for (const auto& r : nvlink["rows"])
    EXPECT_NE(r["link"], "none") << r["gpu"];
  EXPECT_EQ(row_of(nvlink, "l40s"), nullptr);  // PCIe only
  EXPECT_NE(row_of(nvlink, "h200-nvl"), nullptr);

  const json cheap =
      cli_json({"matrix", "--model", "llama-3.1-8b", "--method", "qlora", "--max-price", "20000"});
  EXPECT_EQ(cheap["rows"].size(), priced_under);
  EXPECT_GE(priced_under, 1u);
  for (const auto& r : cheap["rows"])
    EXPECT_LE(r["price_USD"].get<double>(), 20000) << r["gpu"];
  EXPECT_EQ(row_of(cheap, "h200-nvl"), nullptr);  // list price 32,000 USD

  const json rented =
      cli_json({"matrix", "--model", "llama-3.1-8b", "--method", "qlora", "--rentable",
                "--price-per-card-hour", "l4=0.8", "--price-per-card-hour", "h100-sxm=2.5"});
  std::set<std::string> ids;
  for (const auto& r : rented["rows"])
    ids.insert(r["gpu"].get<std::string>());
  EXPECT_EQ(ids, (std::set<std::string>{"l4", "h100-sxm"}));

  const json big = cli_json({"matrix", "--model", "llama-3.1-8b", "--method", "qlora",
                             "--min-memory", "100", "--vendor", "nvidia"});
  for (const auto& r : big["rows"]) {
    EXPECT_GE(r["memory_GB"].get<double>(), 100) << r["gpu"];
    EXPECT_EQ(r["vendor"], "nvidia");
  }
  EXPECT_GE(big["rows"].size(), 5u);
}

TEST(Matrix, SortingOrdersByTheColumn) {
  const auto values = [](const json& m, const std::function<json(const json&)>& get) {
    std::vector<json> out;
    for (const auto& r : m["rows"])
      out.push_back(get(r));
    return out;
  };
  // Default: the fewest cards first, cards that hold nothing last.
  const auto cards = values(matrix_70b(), [](const json& r) { return r["cards_needed"]; });
  bool seen_null = false;
  int last = 0;
  for (const auto& c : cards) {
    if (c.is_null()) {
      seen_null = true;
      continue;
    }
    EXPECT_FALSE(seen_null) << "a card that holds the run after one that does not";
    EXPECT_GE(c.get<int>(), last);
    last = c.get<int>();
  }
  const json by_headroom =
      cli_json({kRun[0], kRun[1], kRun[2], kRun[3], kRun[4], "--sort", "headroom"});
  const auto room =
      values(by_headroom, [](const json& r) { return r["one_card"]["memory_GB"]["headroom"]; });
  for (std::size_t i = 1; i < room.size(); ++i)
    EXPECT_GE(room[i - 1].get<double>(), room[i].get<double>()) << i;
  const json by_name = cli_json({kRun[0], kRun[1], kRun[2], kRun[3], kRun[4], "--sort", "name"});
  const auto names = values(by_name, [](const json& r) { return r["gpu"]; });
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

struct Bad {
  std::vector<std::string> args;
  std::string field;
  std::string message;  // part of it
};

TEST(Matrix, BadInputIsAClearError) {
  const std::vector<std::string> run = {"matrix", "--model", "llama-3.1-8b", "--method", "lora"};
  const std::vector<Bad> cases = {
      {{"--sort", "headrom"}, "sort", "did you mean headroom"},
      {{"--sort", "time"}, "sort", "sorting by time needs how much the run trains"},
      {{"--sort", "cost", "--tokens", "1e8"}, "sort", "sorting by cost needs rental prices"},
      {{"--micro-batch", "3"},
       "global_batch",
       "global_batch 64 is not a multiple of micro_batch 3"},
      {{"--max-cards", "0"}, "max_cards", "max_cards must be 1 to 4096 cards, got 0"},
      {{"--tokens", "1e8", "--epochs", "2"}, "tokens", "give either 'tokens' or 'epochs'"},
      {{"--epochs", "2"}, "dataset_tokens", "'epochs' and 'dataset_tokens' go together"},
      {{"--rentable"}, "rentable", "give price_per_card_hour CARD=USD"},
      {{"--price-per-card-hour", "h100sxm=2"}, "price_per_card_hour", "did you mean h100-sxm"},
      {{"--price-per-card-hour", "h100-sxm"}, "price_per_card_hour", "takes CARD=USD"},
      {{"--price-per-card-hour", "h100-sxm=cheap"}, "price_per_card_hour", "is not a number"},
      {{"--price-per-card-hour", "h100-sxm=0"}, "price_per_card_hour", "above 0"},
      {{"--vendor", "nvdia"}, "vendor", "did you mean nvidia"},
      {{"--max-price", "0"}, "max_price", "above 0"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = run;
    args.insert(args.end(), c.args.begin(), c.args.end());
    args.emplace_back("--json");
    const auto r = test::run_cli(args);
    const std::string shown = fmt::format("{}", fmt::join(c.args, " "));
    ASSERT_EQ(r.code, 2) << shown << ": " << r.out << r.err;
    const json e = json::parse(r.err);
    EXPECT_EQ(e["error"]["field"], c.field) << shown << ": " << r.err;
    EXPECT_NE(e["error"]["message"].get<std::string>().find(c.message), std::string::npos)
        << shown << ": " << r.err;
  }
  // An online objective: planned with a runs file.
  const auto online =
      test::run_cli({"matrix", "--model", "llama-3.1-8b", "--method", "grpo", "--json"});
  EXPECT_EQ(online.code, 2);
  EXPECT_EQ(json::parse(online.err)["error"]["field"], "method");
  // A card: the matrix takes none, and says what to give instead.
  const auto card =
      test::run_cli({"matrix", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "l4"});
  EXPECT_EQ(card.code, 2);
  EXPECT_NE(card.err.find("leave out --gpu, and keep fewer cards with --nvlink"), std::string::npos)
      << card.err;
}

// The engine alone: a filter that keeps nothing is an empty matrix, not an error.
TEST(Matrix, AFilterThatKeepsNothingGivesNoRows) {
  MatrixRequest q;
  q.workload = test::workload("llama-3.1-8b", Method::kLora);
  q.filter.max_price_USD = 1;  // no card lists at 1 USD
  const Matrix m = evaluate_matrix(q, PlanningData::load(test::catalog()));
  EXPECT_TRUE(m.rows.empty());
  EXPECT_EQ(m.catalog_cards, test::catalog().gpus().size());
  EXPECT_EQ(matrix_counts(8), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(matrix_counts(12), (std::vector<int>{1, 2, 4, 8, 12}));
  EXPECT_EQ(matrix_counts(1), (std::vector<int>{1}));
}

server::Response post_matrix(const std::string& body) {
  static const server::Commands commands = cli::server_commands();
  server::Request r;
  r.method = "POST";
  r.path = "/api/matrix";
  r.body = body;
  r.content_type = "application/json";
  return server::handle(r, commands);
}

TEST(Matrix, TheApiAnswersWithTheCliDocument) {
  const auto reply = post_matrix(
      R"({"model": "llama-3.1-70b", "method": "qlora", "seq": 4096, "tokens": 2e8,
          "price_per_card_hour": ["h100-sxm=2.5", "l40s=1.1"], "nvlink": true, "sort": "time"})");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json api = json::parse(reply.body);
  const json cli = cli_json({"matrix", "--model", "llama-3.1-70b", "--method", "qlora", "--seq",
                             "4096", "--tokens", "2e8", "--price-per-card-hour", "h100-sxm=2.5",
                             "--price-per-card-hour", "l40s=1.1", "--nvlink", "--sort", "time"});
  EXPECT_EQ(api, cli);
  EXPECT_GT(api["rows"].size(), 3u);
  // German reasons, as --lang de.
  const auto de = post_matrix(R"({"model": "llama-3.1-70b", "method": "full", "lang": "de"})");
  ASSERT_EQ(de.status, 200) << de.body;
  const auto cli_de = test::run_cli(
      {"--lang", "de", "matrix", "--model", "llama-3.1-70b", "--method", "full", "--json"});
  ASSERT_EQ(cli_de.code, 0) << cli_de.err;
  EXPECT_EQ(json::parse(de.body), json::parse(cli_de.out));
}

TEST(Matrix, TheApiRefusesACardAndUnknownKeys) {
  const auto card = post_matrix(R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "l4"})");
  EXPECT_EQ(card.status, 400);
  const json c = json::parse(card.body);
  EXPECT_EQ(c["error"]["field"], "gpu");
  EXPECT_NE(c["error"]["message"].get<std::string>().find("leave out 'gpu'"), std::string::npos)
      << card.body;
  const auto unknown =
      post_matrix(R"({"model": "llama-3.1-8b", "method": "lora", "max_prize": 20000})");
  EXPECT_EQ(unknown.status, 400);
  const json u = json::parse(unknown.body);
  EXPECT_EQ(u["error"]["field"], "max_prize");
  EXPECT_EQ(u["error"]["suggestions"][0], "max_price");
  const auto sort = post_matrix(R"({"model": "llama-3.1-8b", "method": "lora", "sort": "fast"})");
  EXPECT_EQ(sort.status, 400);
  EXPECT_EQ(json::parse(sort.body)["error"]["field"], "sort");
}

}  // namespace
}  // namespace ftplan
