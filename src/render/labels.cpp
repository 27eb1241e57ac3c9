#include "render/labels.hpp"

#include <fmt/format.h>

#include "workload/objective.hpp"
#include "workload/roles.hpp"

namespace ftplan {

std::string run_title(const Workload& w) {
  const MethodTraits& traits = method_traits(w.method);
  std::string method =
      traits.trains_base
          ? std::string(traits.label)
          : fmt::format("{}{} r{} ({})", traits.label, traits.quantized_base ? " NF4" : "",
                        w.lora.rank, projection_set_name(w.lora.targets));
  if (is_online(w)) {
    const ObjectiveTraits& o = objective_traits(w.objective);
    method = fmt::format("{} ({} completions per prompt of {} + {} tokens, {} rollout{}{}), {}",
                         o.label, group_size(w), w.rollout.prompt_len, w.rollout.completion_len,
                         rollout_mode_name(w.rollout.mode),
                         !uses_reference(w)        ? ", no reference model"
                         : holds_reference_copy(w) ? ", frozen reference copy"
                                                   : ", reference: adapters off",
                         o.value_model ? ", value and reward models" : "", method);
  } else if (w.objective != Objective::kSft) {
    const ObjectiveTraits& o = objective_traits(w.objective);
    method = fmt::format("{} ({}{}), {}", o.label,
                         o.sequences_per_example == 2 ? "pairs" : "single sequences",
                         !o.reference                     ? ", no reference model"
                         : w.options.precompute_reference ? ", reference precomputed"
                         : holds_reference_copy(w)        ? ", frozen reference copy"
                                                          : ", reference: adapters off",
                         method);
  }
  return fmt::format("{} · {} · {}", w.model->arch.name, method, optimizer_name(w.optimizer));
}

std::string efficiency_label(const EfficiencyTable& e) {
  if (e.is_calibration())
    return fmt::format("calibrated on {} ({}; {}, {})", e.card(), e.file, e.calibration.measurement,
                       e.calibration.date);
  return fmt::format("{} ({})", e.name, e.file);
}

}  // namespace ftplan
