// A model: its architecture and its exact parameter inventory, computed once and shared.
#pragma once

#include <memory>
#include <string>
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
};
using ModelPtr = std::shared_ptr<const Model>;

ModelPtr make_model(ModelArch arch);

}  // namespace ftplan
