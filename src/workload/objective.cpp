#include "workload/objective.hpp"

#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "workload/roles.hpp"
#include "workload/workload.hpp"

namespace ftplan {

namespace {

// Pairs run as one forward pass of the chosen and the rejected sequences concatenated along the
// batch (TRL concatenated_forward), so a micro-batch of b examples is 2·b sequences. TRL runs the
// reference forward under no_grad after the policy's forward, before its backward.
constexpr std::array<ObjectiveTraits, 6> kObjectives{{
    {Objective::kSft, "supervised fine-tuning", 1, false, 0, 0, "next-token cross-entropy"},
    {Objective::kDpo, "DPO", 2, true, 1, 0,
     "Rafailov et al. 2023; TRL DPOTrainer (chosen and rejected in one forward, reference "
     "log-probabilities under no_grad)"},
    {Objective::kIpo, "IPO", 2, true, 1, 0,
     "Azar et al. 2023; TRL DPOTrainer loss_type=ipo (DPO's passes, another loss)"},
    {Objective::kOrpo, "ORPO", 2, false, 0, 0,
     "Hong et al. 2024; TRL ORPOTrainer (no reference model)"},
    {Objective::kSimpo, "SimPO", 2, false, 0, 0,
     "Meng et al. 2024; TRL CPOTrainer loss_type=simpo (no reference model)"},
    {Objective::kKto, "KTO", 1, true, 2, 1,
     "Ethayarajh et al. 2024; TRL KTOTrainer (one labelled sequence per example; the KL term's "
     "mismatched batch through the policy without gradient and, with the examples, through the "
     "reference)"},
}};

}  // namespace

const ObjectiveTraits& objective_traits(Objective o) {
  for (const auto& t : kObjectives)
    if (t.objective == o) return t;
  return kObjectives[0];
}

int sequences_per_example(Objective o) {
  return objective_traits(o).sequences_per_example;
}

const std::vector<std::string>& run_method_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = method_names();
    for (const auto& n : objective_names())
      if (n != objective_name(Objective::kSft)) v.push_back(n);
    return v;
  }();
  return names;
}

RunMethod parse_run_method(std::string_view name, std::string_view field) {
  for (const auto& n : method_names())
    if (n == name) return {Objective::kSft, parse_method(name, field)};
  for (const auto& n : objective_names())
    if (n == name && n != objective_name(Objective::kSft))
      return {parse_objective(name, field), std::nullopt};
  throw_unknown_name("method", field, name, run_method_names());
}

ObjectiveAndMethod resolve_run_method(std::string_view name, std::string_view adapter,
                                      bool precompute_reference, std::string_view method_field,
                                      std::string_view adapter_field,
                                      std::string_view precompute_field) {
  const RunMethod run = parse_run_method(name, method_field);
  if (run.method && !adapter.empty())
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("adapter {} applies to the preference objectives ({}); method {} is "
                    "supervised fine-tuning with its own adapter: give method {} alone, or "
                    "method dpo with adapter {}",
                    adapter,
                    fmt::join(objective_names().begin() + 1, objective_names().end(), ", "), name,
                    adapter, adapter),
        std::string(adapter_field));
  const Method method = run.method        ? *run.method
                        : adapter.empty() ? Method::kFull
                                          : parse_method(adapter, adapter_field);
  if (precompute_reference && !objective_traits(run.objective).reference) {
    std::vector<std::string> with;
    for (const auto& t : kObjectives)
      if (t.reference) with.emplace_back(objective_name(t.objective));
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{} applies to objectives scored against a reference model ({}); "
                                "method {} has none",
                                precompute_field, fmt::join(with, ", "), name),
                    std::string(precompute_field));
  }
  return {run.objective, method};
}

std::string run_method_name(const Workload& w) {
  return std::string(w.objective == Objective::kSft ? method_name(w.method)
                                                    : objective_name(w.objective));
}

std::string run_method_short(const Workload& w) {
  if (w.objective == Objective::kSft) return std::string(method_name(w.method));
  return fmt::format("{} ({})", objective_name(w.objective), method_name(w.method));
}

std::string run_method_label(const Workload& w) {
  const std::string adapter(method_label(w.method));
  if (w.objective == Objective::kSft) return adapter;
  const std::string objective(objective_traits(w.objective).label);
  return method_traits(w.method).trains_base ? objective + ", " + adapter
                                             : objective + " with " + adapter;
}

bool holds_reference_copy(const Workload& w) {
  return objective_traits(w.objective).reference && !w.options.precompute_reference &&
         method_traits(w.method).trains_base;
}

int reference_forward_passes(const Workload& w) {
  return w.options.precompute_reference ? 0 : objective_traits(w.objective).reference_passes;
}
int policy_no_grad_passes(const Workload& w) {
  return objective_traits(w.objective).policy_no_grad_passes;
}
int no_grad_forward_passes(const Workload& w) {
  return reference_forward_passes(w) + policy_no_grad_passes(w);
}

}  // namespace ftplan
