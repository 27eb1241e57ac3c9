#include "model/model.hpp"

namespace ftplan {

ModelPtr make_model(ModelArch arch) {
  auto m = std::make_shared<Model>();
  m->params = build_param_inventory(arch);
  m->arch = std::move(arch);
  return m;
}

}  // namespace ftplan
