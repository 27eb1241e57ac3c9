// A model: its architecture and its exact parameter inventory, computed once and shared.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/architecture.hpp"
#include "model/params.hpp"

namespace ftplan {

struct Model {
  ModelArch arch;
  ParamInventory params;
  // Catalog facts (empty for a config.json given on the command line).
  std::string hf_repo;
  std::string publisher_params;
  std::string note;
  std::vector<std::string> sources;
  // The inventory was read from safetensors headers (a model_type ftplan does not know), not
  // built from the architecture.
  bool inventory_from_checkpoint = false;
};
using ModelPtr = std::shared_ptr<const Model>;

ModelPtr make_model(ModelArch arch);

// The same model with a one-output score head in place of its language-model head (a reward
// model, ModelArch::score_head), its catalog facts kept. A model whose inventory came from
// checkpoint headers is a UserError on `field`.
ModelPtr with_score_head(const ModelPtr& model, std::string_view field = "method");

}  // namespace ftplan
