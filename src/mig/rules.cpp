#include "mig/rules.hpp"

#include <fmt/format.h>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace ftplan {

namespace {

constexpr std::string_view kRulesFile = "mig/rules.yaml";

MigRule parse_rule(StrictMap& root, std::string_view id, const Catalog& catalog) {
  StrictMap m = root.required_map(id);
  MigRule rule;
  rule.id = std::string(id);
  rule.text = m.required_string("text");
  rule.sources = m.string_list("source", true);
  if (rule.sources.empty()) m.fail("source", "needs at least one source id");
  for (const auto& s : rule.sources)
    if (!catalog.source(s))
      m.fail("source", fmt::format("source id '{}' is not defined in any sources*.yaml", s));
  m.finish();
  return rule;
}

}  // namespace

MigRules load_mig_rules(const Catalog& catalog) {
  const DataFile* file = catalog.file(kRulesFile);
  if (!file)
    throw UserError(
        ErrorCode::kBadFile,
        fmt::format("the data file {} is missing (it states the MIG rules)", kRulesFile),
        std::string(kRulesFile));
  StrictMap root(parse_document(file->text, file->path), file->path, "");
  MigRules rules;
  rules.single_gpu_jobs = parse_rule(root, "single_gpu_jobs", catalog);
  rules.compute_display_mode = parse_rule(root, "compute_display_mode", catalog);
  rules.instance_layout = parse_rule(root, "instance_layout", catalog);
  root.finish();
  return rules;
}

std::vector<MigNote> mig_notes(const GpuSpec& gpu, const MigRules& rules) {
  std::vector<MigNote> notes;
  notes.push_back(
      {rules.single_gpu_jobs.id, rules.single_gpu_jobs.text, rules.single_gpu_jobs.sources});
  if (gpu.mig.requires_compute_display_mode)
    notes.push_back({rules.compute_display_mode.id,
                     fmt::format("{}: {}", gpu.name, rules.compute_display_mode.text),
                     rules.compute_display_mode.sources});
  for (const auto& p : gpu.mig.profiles) {
    if (p.memory_GB.dispute.empty()) continue;
    notes.push_back({fmt::format("dispute.{}", p.name),
                     fmt::format("{}: {} GB used{}; disputed: {}", p.name,
                                 format_number(p.memory_GB.value.value_or(0)),
                                 p.memory_GB.note.empty() ? "" : " (" + p.memory_GB.note + ")",
                                 p.memory_GB.dispute),
                     p.memory_GB.sources});
  }
  return notes;
}

}  // namespace ftplan
