// A chat or instruction-tuned repository read as the catalog model it was tuned from.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "support.hpp"

namespace ftplan {
namespace {

TEST(ModelBase, ATunedRepositoryNamesItsBaseByItsSuffix) {
  const Catalog& c = test::catalog();
  const auto base = [&](const char* repo) -> std::string {
    const ModelPtr m = c.find_base_model_of(repo);
    return m ? m->arch.id : "";
  };
  EXPECT_EQ(base("Qwen/Qwen2.5-7B-Instruct"), "qwen2.5-7b");
  EXPECT_EQ(base("google/gemma-2-9b-it"), "gemma-2-9b");
  EXPECT_EQ(base("meta-llama/Llama-2-7b-chat-hf"), "llama-2-7b");
  // Meta's older names redirect to the newer ones; case does not matter.
  EXPECT_EQ(base("meta-llama/Meta-Llama-3.1-8B-Instruct"), "llama-3.1-8b");
  EXPECT_EQ(base("META-LLAMA/llama-3.1-8b-instruct"), "llama-3.1-8b");
  // A version after the suffix is another model (Mistral 7B Instruct v0.2 is not v0.1's shape),
  // a base repository is no tuned variant, and an unknown base matches nothing.
  EXPECT_EQ(base("mistralai/Mistral-7B-Instruct-v0.2"), "");
  EXPECT_EQ(base("Qwen/Qwen2.5-7B"), "");
  EXPECT_EQ(base("acme/Unknown-7B-Instruct"), "");
  EXPECT_EQ(base("no-slash-Instruct"), "");
}

TEST(ModelBase, FitReadsAnInstructIdAsItsBaseWithTheSameParameters) {
  const auto tuned = test::run_cli({"fit", "--model", "Qwen/Qwen2.5-7B-Instruct", "--method",
                                    "lora", "--gpu", "h100-sxm", "--json"});
  ASSERT_EQ(tuned.code, 0) << tuned.err;
  const auto base = test::run_cli(
      {"fit", "--model", "qwen2.5-7b", "--method", "lora", "--gpu", "h100-sxm", "--json"});
  ASSERT_EQ(base.code, 0) << base.err;
  const auto params = [](const std::string& out) {
    return nlohmann::json::parse(out)["params"]["total"].get<long long>();
  };
  EXPECT_EQ(params(tuned.out), params(base.out));
  EXPECT_EQ(params(tuned.out), 7615616512LL);
}

TEST(ModelBase, ARunsFileNamingTheIdTwiceIsToldOnce) {
  const std::string runs = testing::TempDir() + "ftplan-twice.yaml";
  {
    std::ofstream f(runs);
    f << "runs:\n"
         "  - name: a\n    model: Qwen/Qwen2.5-7B-Instruct\n    method: lora\n    tokens: 1e8\n"
         "  - name: b\n    model: Qwen/Qwen2.5-7B-Instruct\n    method: qlora\n    tokens: 1e8\n";
  }
  const auto r = test::run_cli({"plan", runs, "--gpu", "h100-sxm"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Once read from a cache the id needs no note; read as its base, one note for both runs.
  const std::string note = "Qwen/Qwen2.5-7B-Instruct is read as the catalog's qwen2.5-7b";
  const auto first = r.err.find(note);
  if (first != std::string::npos)
    EXPECT_EQ(r.err.find(note, first + 1), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ftplan
