#include "model/model.hpp"

#include "core/error.hpp"

namespace ftplan {

ModelPtr make_model(ModelArch arch) {
  auto m = std::make_shared<Model>();
  m->params = build_param_inventory(arch);
  m->arch = std::move(arch);
  return m;
}

ModelPtr with_score_head(const ModelPtr& model, std::string_view field) {
  if (model->arch.score_head) return model;
  if (model->inventory_from_checkpoint)
    throw UserError(ErrorCode::kUnsupported,
                    "a reward model needs an architecture ftplan knows (its parameters were "
                    "counted from the checkpoint's headers, so the output layer cannot be "
                    "replaced by a score head); train it as dpo, or give a config.json of a "
                    "known model_type",
                    std::string(field));
  ModelArch arch = model->arch;
  arch.score_head = true;
  auto m = std::make_shared<Model>(*model);
  m->params = build_param_inventory(arch);
  m->arch = std::move(arch);
  return m;
}

}  // namespace ftplan
