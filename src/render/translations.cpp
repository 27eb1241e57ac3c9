#include "render/translations.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"

namespace ftplan {

namespace {

// The language files' name of each Txt, in the enum's order.
constexpr std::array<std::string_view, kTxtCount> kTxtKeys = {"title",
                                                              "lead",
                                                              "or",
                                                              "and",
                                                              "billion",
                                                              "million",
                                                              "unknown",
                                                              "yes",
                                                              "no",
                                                              "verdict_fits",
                                                              "verdict_tight",
                                                              "verdict_does_not_fit",
                                                              "recompute_full",
                                                              "recompute_selective",
                                                              "recompute_none",
                                                              "method_full",
                                                              "method_adapter",
                                                              "sharding_none",
                                                              "sharded_card",
                                                              "strategy_single",
                                                              "strategy_data_parallel",
                                                              "strategy_fsdp",
                                                              "strategy_lora_data_parallel",
                                                              "strategy_sharded_base",
                                                              "strategy_hsdp",
                                                              "strategy_sharded_base_hybrid",
                                                              "class_gemm",
                                                              "class_attention",
                                                              "class_adapter",
                                                              "class_dequant",
                                                              "class_norm",
                                                              "class_elementwise",
                                                              "class_embedding",
                                                              "class_loss",
                                                              "class_optimizer",
                                                              "link_nvlink_switch",
                                                              "link_nvlink_bridge",
                                                              "link_network",
                                                              "pcie_only",
                                                              "held_to_pcie",
                                                              "nvlink_up_to",
                                                              "cards_title",
                                                              "cards_lead",
                                                              "cards_also",
                                                              "col_card",
                                                              "col_memory_visible",
                                                              "col_datasheet",
                                                              "col_memory_type",
                                                              "col_bandwidth",
                                                              "col_power",
                                                              "col_cooling",
                                                              "col_form_factor",
                                                              "col_link",
                                                              "cooling_passive",
                                                              "cooling_active",
                                                              "cooling_liquid",
                                                              "cooling_system",
                                                              "form_pcie_dual",
                                                              "form_pcie_single",
                                                              "card_link_bridge",
                                                              "card_link_switch",
                                                              "card_link_none",
                                                              "mig_up_to",
                                                              "memory_title",
                                                              "memory_lead",
                                                              "runs_caption",
                                                              "col_run",
                                                              "col_model",
                                                              "col_method",
                                                              "col_params",
                                                              "col_trained",
                                                              "col_seq_micro_batch",
                                                              "col_recompute",
                                                              "col_tokens",
                                                              "col_global_batch",
                                                              "memory_caption",
                                                              "col_placement",
                                                              "col_model_states",
                                                              "col_free",
                                                              "col_activations",
                                                              "col_overhead",
                                                              "col_peak",
                                                              "col_verdict",
                                                              "chart_memory_title",
                                                              "chart_memory_desc",
                                                              "axis_g_b",
                                                              "legend_states_on_card",
                                                              "legend_activations",
                                                              "legend_overhead",
                                                              "legend_capacity",
                                                              "peak_of",
                                                              "fit_all",
                                                              "fit_all_one",
                                                              "fits_on",
                                                              "tight_on",
                                                              "does_not_fit_on",
                                                              "fit_sharded",
                                                              "roofline_title",
                                                              "roofline_definition",
                                                              "roofline_nvidia_example",
                                                              "ops_per_byte_caption",
                                                              "col_dense_bf16",
                                                              "intensity_caption",
                                                              "col_operation",
                                                              "col_precision",
                                                              "col_intensity",
                                                              "col_on_card",
                                                              "compute_bound",
                                                              "memory_bound",
                                                              "reference_linear",
                                                              "op_gemm_label",
                                                              "op_adapter_label",
                                                              "gemms_compute_bound",
                                                              "memory_bound_ops",
                                                              "ratio_sentence",
                                                              "step_caption",
                                                              "col_op_class",
                                                              "col_ms_on",
                                                              "col_compute_bound_on",
                                                              "step_row",
                                                              "step_throughput",
                                                              "untimed",
                                                              "chart_roofline_title",
                                                              "chart_roofline_desc",
                                                              "axis_intensity",
                                                              "axis_tflops",
                                                              "roofline_points",
                                                              "roof_label",
                                                              "marker_gemm",
                                                              "marker_adapter",
                                                              "rates_title",
                                                              "rates_intro",
                                                              "rates_caption",
                                                              "rate_unknown",
                                                              "accumulate_note",
                                                              "rates_ratio",
                                                              "rates_no_ratio",
                                                              "formats_intro",
                                                              "formats_caption",
                                                              "col_format",
                                                              "multi_title",
                                                              "multi_intro",
                                                              "multi_no_counts",
                                                              "multi_full",
                                                              "multi_sharded",
                                                              "at_cards",
                                                              "multi_links",
                                                              "link_bound",
                                                              "traffic_caption",
                                                              "col_strategy",
                                                              "col_n_cards",
                                                              "scaling_heading",
                                                              "scaling_caption",
                                                              "col_cards",
                                                              "col_topology",
                                                              "col_slowest_link",
                                                              "col_received",
                                                              "col_link_bound",
                                                              "col_exposed",
                                                              "col_efficiency",
                                                              "col_tokens_per_second",
                                                              "cannot_be_timed",
                                                              "chart_scaling_title",
                                                              "chart_scaling_desc",
                                                              "axis_cards",
                                                              "axis_tokens",
                                                              "topology_heading",
                                                              "topo_bridge",
                                                              "topo_switch",
                                                              "topo_p2p",
                                                              "topo_domains",
                                                              "topo_nodes",
                                                              "mig_title",
                                                              "mig_intro",
                                                              "mig_none",
                                                              "mig_profiles_caption",
                                                              "col_profile",
                                                              "col_instance_memory",
                                                              "col_instances_per_card",
                                                              "col_compute_slices",
                                                              "mig_fit_caption",
                                                              "col_smallest_fit",
                                                              "col_jobs_per_card",
                                                              "mig_rule_single",
                                                              "mig_rule_display",
                                                              "mig_dispute",
                                                              "rec_title",
                                                              "rec_intro",
                                                              "rec_intro_mig",
                                                              "rank_card_hours",
                                                              "rank_time",
                                                              "rank_cost",
                                                              "rank_energy",
                                                              "which_caption",
                                                              "which_one",
                                                              "which_many",
                                                              "rec_caption",
                                                              "col_choice",
                                                              "col_micro_batch",
                                                              "col_step",
                                                              "col_time_to_train",
                                                              "col_card_hours",
                                                              "rec_head",
                                                              "rec_one_card",
                                                              "rec_online",
                                                              "rec_online_part_rollout",
                                                              "rec_online_part_weight_sync",
                                                              "rec_online_part_scoring",
                                                              "rec_online_part_training",
                                                              "rec_many_cards",
                                                              "rec_none",
                                                              "rec_sharded",
                                                              "rec_one_job",
                                                              "fleet_intro",
                                                              "fleet_caption",
                                                              "col_fleet_cards",
                                                              "col_without_mig",
                                                              "col_multi_card_runs",
                                                              "col_cannot_hold",
                                                              "method_title",
                                                              "method_memory",
                                                              "method_roofline",
                                                              "method_step",
                                                              "method_comm",
                                                              "method_planner",
                                                              "method_explain",
                                                              "sources_heading",
                                                              "sources_note",
                                                              "not_measured_heading",
                                                              "not_measured_steps",
                                                              "not_measured_memory",
                                                              "not_measured_comm",
                                                              "not_measured_energy",
                                                              "nodes_title",
                                                              "nodes_intro",
                                                              "nodes_caption",
                                                              "col_nodes",
                                                              "col_layout",
                                                              "col_received_step",
                                                              "nodes_recommended"};

// A reason's template names only its code's arguments, each as {name}.
void check_reason_template(StrictMap& map, const ReasonCodeInfo& info, std::string_view text) {
  for (std::size_t open = text.find('{'); open != std::string_view::npos;
       open = text.find('{', open + 1)) {
    const std::size_t close = text.find('}', open);
    if (close == std::string_view::npos)
      map.fail(info.key, fmt::format("'{{' at {} has no closing '}}'", open));
    const std::string_view name = text.substr(open + 1, close - open - 1);
    if (std::find(info.arguments.begin(), info.arguments.end(), name) == info.arguments.end()) {
      std::string known;
      for (auto a : info.arguments)
        known += (known.empty() ? "" : ", ") + std::string(a);
      map.fail(info.key, fmt::format("unknown argument {{{}}}; this reason has: {}", name,
                                     known.empty() ? "none" : known));
    }
  }
}

}  // namespace

std::string_view txt_key(Txt key) {
  return kTxtKeys[static_cast<std::size_t>(key)];
}

Translations parse_translations(const DataFile& file) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  Translations t;
  t.language = root.required_string("language");
  t.name = root.required_string("name");
  t.locale = root.required_string("locale");
  StrictMap number = root.required_map("number");
  t.number.decimal_mark = number.required_string("decimal_mark");
  t.number.group_mark = number.required_string("group_mark");
  if (t.number.decimal_mark == t.number.group_mark)
    number.fail("group_mark", "the group mark must differ from the decimal mark");
  number.finish();
  StrictMap report = root.required_map("report");
  t.report.reserve(kTxtCount);
  for (std::size_t i = 0; i < kTxtCount; ++i)
    t.report.push_back(report.any_string(kTxtKeys[i]));
  report.finish();
  StrictMap reasons = root.required_map("reasons");
  t.reasons.resize(kReasonCodeCount);
  for (const ReasonCodeInfo& info : reason_codes()) {
    std::string text = reasons.any_string(info.key);
    check_reason_template(reasons, info, text);
    t.reasons[static_cast<std::size_t>(info.code)] = std::move(text);
  }
  reasons.finish();
  StrictMap page = root.required_map("page");
  for (const std::string& key : page.keys())
    t.page.emplace_back(key, page.any_string(key));
  page.finish();
  root.finish();
  return t;
}

Translations load_translations(const Catalog& catalog, ReportLang lang) {
  const std::string relative = fmt::format("i18n/{}.yaml", report_lang_name(lang));
  const DataFile* file = catalog.file(relative);
  if (!file)
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("the data holds no {} (the words of language '{}')", relative,
                                report_lang_name(lang)),
                    "lang");
  return parse_translations(*file);
}

}  // namespace ftplan

namespace ftplan {

nlohmann::json page_words_json(const Translations& t) {
  nlohmann::json words = nlohmann::json::object();
  for (const auto& [key, text] : t.page)
    words[key] = text;
  return {
      {"language", t.language},
      {"name", t.name},
      {"locale", t.locale},
      {"number", {{"decimal_mark", t.number.decimal_mark}, {"group_mark", t.number.group_mark}}},
      {"words", words}};
}

}  // namespace ftplan
