// The built-in card files are parsed when a card is first asked for (catalog.hpp): a call naming
// one card parses one file, listing or searching by name parses all, in file order, and the
// server's threads may ask at once. The built-in models' config files likewise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "catalog/catalog.hpp"
#include "catalog/strict_yaml.hpp"
#include "cli/cli.hpp"
#include "core/error.hpp"
#include "perf/efficiency.hpp"

namespace ftplan {
namespace {

Catalog fresh() {
  return Catalog::load(cli::builtin_data_files());
}

TEST(LazyCards, NamingOneCardParsesOneFile) {
  const Catalog c = fresh();
  EXPECT_EQ(c.cards_parsed(), 0u);
  const auto ids = c.gpu_ids();
  EXPECT_GT(ids.size(), 30u);
  EXPECT_EQ(c.cards_parsed(), 0u);  // the ids are the files' names
  EXPECT_EQ(c.gpu("h200-nvl").id, "h200-nvl");
  EXPECT_EQ(c.cards_parsed(), 1u);
  EXPECT_EQ(&c.gpu("h200-nvl"), c.find_gpu("h200-nvl"));  // parsed once, the same card after
  EXPECT_EQ(c.cards_parsed(), 1u);
  EXPECT_EQ(c.find_gpu("no-such-card"), nullptr);
}

TEST(LazyCards, ListingKeepsFileOrderWhateverWasParsedFirst) {
  const Catalog eager = fresh();
  std::vector<std::string> in_order;
  for (const GpuSpec& g : eager.gpus())
    in_order.push_back(g.id);
  EXPECT_EQ(in_order, eager.gpu_ids());

  const Catalog lazy = fresh();
  const GpuSpec& last = lazy.gpu(in_order.back());
  const GpuSpec& first = lazy.gpu(in_order.front());
  std::vector<std::string> listed;
  for (const GpuSpec& g : lazy.gpus())
    listed.push_back(g.id);
  EXPECT_EQ(listed, in_order);
  EXPECT_EQ(lazy.cards_parsed(), in_order.size());
  EXPECT_EQ(&last, lazy.find_gpu(in_order.back()));  // still the same object
  EXPECT_EQ(&first, lazy.find_gpu(in_order.front()));
}

TEST(LazyCards, ANameThatIsNotAnIdSearchesEveryCard) {
  const Catalog c = fresh();
  EXPECT_EQ(c.gpu("H200-NVL").id, "h200-nvl");
  EXPECT_EQ(c.cards_parsed(), c.gpu_ids().size());
  EXPECT_THROW(c.gpu("h100"), UserError);  // ambiguous: several H100 cards
}

TEST(LazyCards, ThreadsAskingAtOnceGetOneCardEach) {
  const Catalog c = fresh();
  const auto ids = c.gpu_ids();
  std::vector<std::thread> threads;
  std::vector<std::vector<const GpuSpec*>> seen(8);
  for (std::size_t t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t k = 0; k < ids.size(); ++k)
        seen[t].push_back(c.find_gpu(ids[(k + t * 5) % ids.size()]));
      if (t % 2 == 0) (void)c.gpus().size();
    });
  for (auto& th : threads)
    th.join();
  EXPECT_EQ(c.cards_parsed(), ids.size());
  for (std::size_t t = 0; t < 8; ++t)
    for (std::size_t k = 0; k < ids.size(); ++k)
      EXPECT_EQ(seen[t][k], c.find_gpu(ids[(k + t * 5) % ids.size()]));
}

TEST(LazyCards, EveryArchitectureTheEfficiencyTableListsHasACard) {
  const Catalog& c = cli::builtin_catalog();
  const DataFile* file = c.file("efficiency/default.yaml");
  ASSERT_NE(file, nullptr);
  const EfficiencyTable table = parse_efficiency(*file, c.sources());
  std::set<std::string> architectures;
  for (const GpuSpec& g : c.gpus())
    architectures.insert(g.architecture);
  EXPECT_FALSE(table.architectures.empty());
  for (const auto& a : table.architectures)
    EXPECT_TRUE(architectures.count(a.architecture)) << a.architecture << " has no card";
  for (const auto& a : table.attention_kernels)
    EXPECT_TRUE(architectures.count(a.architecture)) << a.architecture << " has no card";
}

TEST(LazyModels, NamingOneModelReadsOneConfigFile) {
  const Catalog c = fresh();
  EXPECT_EQ(c.models_read(), 0u);
  const auto ids = c.model_ids();
  EXPECT_GT(ids.size(), 30u);
  EXPECT_FALSE(c.model_repos().empty());
  EXPECT_EQ(c.models_read(), 0u);  // ids and repos come from the index
  const ModelPtr m = c.model("llama-3.1-8b");
  EXPECT_EQ(m->arch.id, "llama-3.1-8b");
  EXPECT_EQ(c.models_read(), 1u);
  EXPECT_EQ(c.model("llama-3.1-8b"), m);  // read once, the same model after
  std::string upper = m->hf_repo;
  for (char& ch : upper)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  EXPECT_EQ(c.find_model_by_hf_repo(upper), m);  // case-insensitive
  EXPECT_EQ(c.models_read(), 1u);
  EXPECT_EQ(c.find_model("no-such-model"), nullptr);
  EXPECT_EQ(c.find_model_by_hf_repo("nobody/nothing"), nullptr);
}

TEST(LazyModels, ListingReadsEveryModelInIndexOrderAsAnEagerReadWould) {
  const Catalog lazy = fresh();
  const ModelPtr last = lazy.model(lazy.model_ids().back());
  const auto& all = lazy.models();
  ASSERT_EQ(all.size(), lazy.model_ids().size());
  EXPECT_EQ(lazy.models_read(), all.size());
  EXPECT_EQ(all.back(), last);  // the model read first is kept, in its place
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i]->arch.id, lazy.model_ids()[i]);
    EXPECT_EQ(all[i]->params.total, fresh().model(all[i]->arch.id)->params.total);
    EXPECT_FALSE(all[i]->arch.name.empty());
    EXPECT_FALSE(all[i]->sources.empty()) << all[i]->arch.id;
  }
}

TEST(LazyModels, ThreadsAskingAtOnceGetOneModelEach) {
  const Catalog c = fresh();
  const auto ids = c.model_ids();
  std::vector<std::thread> threads;
  std::vector<std::vector<ModelPtr>> seen(8);
  for (std::size_t t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (std::size_t k = 0; k < ids.size(); ++k)
        seen[t].push_back(c.find_model(ids[(k + t * 3) % ids.size()]));
      if (t % 2 == 0) (void)c.models().size();
    });
  for (auto& th : threads)
    th.join();
  EXPECT_EQ(c.models_read(), ids.size());
  for (std::size_t t = 0; t < 8; ++t)
    for (std::size_t k = 0; k < ids.size(); ++k)
      EXPECT_EQ(seen[t][k], c.find_model(ids[(k + t * 3) % ids.size()]));
}

// A data folder's models/catalog.yaml adds its models to the built-in ones (it replaced them
// before); each config is read from the folder of the catalog file that names it, and an id names
// one model across every folder.
TEST(LazyModels, AFoldersModelCatalogAddsToTheBuiltInOne) {
  std::vector<DataFile> files = cli::builtin_data_files();
  std::string_view llama_config;
  for (const auto& f : files)
    if (f.path == "data/models/llama-3.2-1b.json") llama_config = f.text;
  ASSERT_FALSE(llama_config.empty());
  const std::string index =
      "models:\n"
      "  - id: my-1b\n"
      "    name: My 1B\n"
      "    config: llama-3.2-1b.json\n"
      "    hf_repo: me/my-1b\n"
      "    publisher_params: \"1B\"\n"
      "    source: [model-llama-3-2-card]\n";
  // The folder's config has the built-in file's name but not its text: one layer fewer.
  std::string mine(llama_config);
  const std::string layers = "\"num_hidden_layers\": 16";
  ASSERT_NE(mine.find(layers), std::string::npos);
  mine.replace(mine.find(layers), layers.size(), "\"num_hidden_layers\": 15");
  files.push_back({"/mine/models/catalog.yaml", index, "models/catalog.yaml"});
  files.push_back({"/mine/models/llama-3.2-1b.json", mine, "models/llama-3.2-1b.json"});
  const Catalog c = Catalog::load(files);
  const auto ids = c.model_ids();
  EXPECT_NE(std::find(ids.begin(), ids.end(), "llama-3.1-8b"), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), "my-1b"), ids.end());
  EXPECT_EQ(ids.size(), fresh().model_ids().size() + 1);
  EXPECT_EQ(c.model("my-1b")->arch.layers + 1, c.model("llama-3.2-1b")->arch.layers);

  // The same id in two folders is an error naming the file and the id.
  std::vector<DataFile> twice = cli::builtin_data_files();
  std::string again = index;
  again.replace(again.find("my-1b"), 5, "llama-3.2-1b");
  twice.push_back({"/mine/models/catalog.yaml", again, "models/catalog.yaml"});
  twice.push_back({"/mine/models/llama-3.2-1b.json", mine, "models/llama-3.2-1b.json"});
  try {
    (void)Catalog::load(twice);
    FAIL() << "a model id defined twice was accepted";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/mine/models/catalog.yaml"), std::string::npos) << what;
    EXPECT_NE(what.find("model id 'llama-3.2-1b' is defined twice"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace ftplan
