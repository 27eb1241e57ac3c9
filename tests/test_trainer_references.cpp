// Where a trainer file's reference to a DeepSpeed config is looked for: beside the file, then from
// the working directory, where the trainers open it; and what a user is told when it is in neither.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "support.hpp"
#include "workload/trainer_file.hpp"

namespace ftplan {
namespace {

// axolotl's example: the DeepSpeed config named from the repository's root.
const char* kAxolotl =
    "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_r: 8\nmicro_batch_size: 1\n"
    "deepspeed: deepspeed_configs/zero1.json\n";

TEST(TrainerReferences, ARelativePathIsLookedForBesideTheFileThenFromTheWorkingDirectory) {
  EXPECT_EQ(reference_candidates("examples/llama-3/lora.yml", "deepspeed_configs/zero1.json"),
            (std::vector<std::string>{"examples/llama-3/deepspeed_configs/zero1.json",
                                      "deepspeed_configs/zero1.json"}));
  // A file in the working directory has one place to look; an absolute path is itself.
  EXPECT_EQ(reference_candidates("lora.yml", "zero1.json"), std::vector<std::string>{"zero1.json"});
  EXPECT_EQ(reference_candidates("a/lora.yml", "/etc/zero1.json"),
            std::vector<std::string>{"/etc/zero1.json"});
}

TEST(TrainerReferences, TheWorkingDirectorysCopyIsReadWhenNoneLiesBesideTheFile) {
  TrainerFile f =
      read_trainer_file(kAxolotl, "examples/llama-3/lora.yml", test::catalog().model_ids());
  std::vector<std::string> asked;
  const auto read_text = [&](const std::string& p) -> std::optional<std::string> {
    asked.push_back(p);
    if (p == "deepspeed_configs/zero1.json") return R"({"zero_optimization": {"stage": 1}})";
    throw UserError(ErrorCode::kBadFile, p + ": no such file", "from");
  };
  const std::vector<TrainerFile> named =
      follow_references(f, read_text, test::catalog().model_ids());
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].file, "deepspeed_configs/zero1.json");
  EXPECT_EQ(named[0].setting("shard"), "zero1");
  EXPECT_EQ(asked, (std::vector<std::string>{"examples/llama-3/deepspeed_configs/zero1.json",
                                             "deepspeed_configs/zero1.json"}));
}

TEST(TrainerReferences, AConfigFoundNowhereNamesBothPlacesAndWhatToDo) {
  TrainerFile f =
      read_trainer_file(kAxolotl, "examples/llama-3/lora.yml", test::catalog().model_ids());
  const auto missing = [](const std::string& p) -> std::optional<std::string> {
    throw UserError(ErrorCode::kBadFile, p + ": no such file (given for from)", "from");
  };
  try {
    follow_references(f, missing, test::catalog().model_ids());
    ADD_FAILURE() << "expected an error";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.field(), "deepspeed");
    for (const char* part :
         {"examples/llama-3/lora.yml: key 'deepspeed'", "'deepspeed_configs/zero1.json'",
          "beside it (examples/llama-3/deepspeed_configs/zero1.json)",
          "from the working directory (deepspeed_configs/zero1.json)", "--shard"})
      EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
    EXPECT_EQ(m.find("given for"), std::string::npos) << m;
  }
  // Another failure than a missing file says what it was.
  const auto directory = [](const std::string& p) -> std::optional<std::string> {
    throw UserError(ErrorCode::kBadFile, p + ": is a directory, not a file", "from");
  };
  try {
    follow_references(f, directory, test::catalog().model_ids());
    ADD_FAILURE() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ftplan
