// Text renderings of what the catalogs hold: `ftplan gpus` (one row per card), `ftplan models`
// (one row per model) and `ftplan params` (a model's parameter inventory, tensor by tensor).
#pragma once

#include <ostream>

#include "catalog/catalog.hpp"
#include "model/model.hpp"

namespace ftplan {

void print_gpus(std::ostream& out, const Catalog& catalog);
void print_models(std::ostream& out, const Catalog& catalog);
void print_params(std::ostream& out, const Model& model);

}  // namespace ftplan
