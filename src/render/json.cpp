#include "render/json.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "memory/model_states.hpp"
#include "render/reason_words.hpp"
#include "workload/objective.hpp"

namespace ftplan {

using nlohmann::json;

double round_to(double v, int decimals) {
  const double k = std::pow(10.0, decimals);
  return std::round(v * k) / k;
}

namespace {

template <class T>
json figure_json(const Figure<T>& f) {
  json j;
  j["value"] = f.value ? json(*f.value) : json(nullptr);
  if (!f.value) j["reason"] = f.unknown_reason;
  // A figure of a user's card file may come without a source.
  j["source"] = f.sources.empty() && f.value ? json("user-supplied") : json(f.sources);
  if (!f.note.empty()) j["note"] = f.note;
  if (!f.dispute.empty()) j["dispute"] = f.dispute;
  if (f.sparse_halved) j["sparse_halved"] = true;
  if (!f.accumulate.empty()) j["accumulate"] = f.accumulate;
  return j;
}

double gb(Bytes b) {
  return round_to(to_GB(b), 3);
}

}  // namespace

json gpu_json(const GpuSpec& g) {
  json j;
  j["id"] = g.id;
  j["name"] = g.name;
  j["vendor"] = g.vendor;
  j["architecture"] = g.architecture;
  if (!g.smi_names.empty())
    j["smi_names"] = {{"names", g.smi_names}, {"source", g.smi_names_sources}};
  if (g.user_supplied) {
    j["user_supplied"] = true;
    j["file"] = g.source_file;
    j["assumptions"] = g.assumptions;
  }
  j["compute_capability"] = figure_json(g.compute_capability);
  j["form_factor"] = figure_json(g.form_factor);
  j["cooling"] = figure_json(g.cooling);
  j["tdp_W"] = figure_json(g.tdp_W);
  if (g.boost_clock_MHz.value || !g.boost_clock_MHz.sources.empty())
    j["boost_clock_MHz"] = figure_json(g.boost_clock_MHz);
  j["memory"] = {{"visible_MiB", figure_json(g.visible_MiB)},
                 {"visible_GB", round_to(to_GB(g.capacity()), 2)},
                 {"visible_bytes", whole_bytes(g.capacity())},
                 {"visible_GiB", round_to(to_GiB(g.capacity()), 2)},
                 {"datasheet_GB", figure_json(g.datasheet_GB)},
                 {"type", figure_json(g.memory_type)},
                 {"bandwidth_GBps", figure_json(g.bandwidth_GBps)}};
  j["fp32_TFLOPS"] = figure_json(g.fp32_TFLOPS);
  json rates;
  for (auto p : kAllTensorPrecisions)
    if (p != TensorPrecision::kINT8)
      rates[std::string(tensor_precision_name(p))] = figure_json(g.tensor_figure(p));
  j["tensor_dense_TFLOPS"] = rates;
  j["tensor_dense_TOPS"] = {{"int8", figure_json(g.tensor_figure(TensorPrecision::kINT8))}};
  j["pcie"] = {{"generation", g.pcie.generation},
               {"lanes", g.pcie.lanes},
               {"GBps_both_directions", g.pcie.GBps_both_directions},
               {"source", g.pcie.sources}};
  json nv = {{"kind", link_kind_name(g.nvlink.kind)}, {"source", g.nvlink.sources}};
  if (g.nvlink.fabric != "nvlink") nv["fabric"] = g.nvlink.fabric;
  if (g.nvlink.kind != LinkKind::kNone) {
    nv["generation"] = g.nvlink.generation;
    nv["GBps_per_gpu_both_directions"] = g.nvlink.GBps_per_gpu_both_directions;
  }
  if (g.nvlink.kind == LinkKind::kBridge) nv["bridge_max_cards"] = g.nvlink.bridge_max_cards;
  if (!g.nvlink.note.empty()) nv["note"] = g.nvlink.note;
  j["nvlink"] = nv;
  json mig = {{"supported", g.mig.supported}, {"source", g.mig.sources}};
  if (!g.mig.supported) {
    mig["reason"] = g.mig.unsupported_reason;
  } else {
    mig["max_instances"] = g.mig.max_instances;
    mig["compute_slices"] = g.mig.compute_slices;
    mig["memory_slices"] = g.mig.memory_slices;
    mig["requires_compute_display_mode"] = g.mig.requires_compute_display_mode;
    json profiles = json::array();
    for (const auto& p : g.mig.profiles)
      profiles.push_back({{"name", p.name},
                          {"memory_GB", figure_json(p.memory_GB)},
                          {"compute_slices", p.compute_slices},
                          {"memory_slices", p.memory_slices},
                          {"max_count", p.max_count},
                          {"placements", p.placements}});
    mig["profiles"] = profiles;
  }
  if (!g.mig.note.empty()) mig["note"] = g.mig.note;
  j["mig"] = mig;
  if (g.price_USD.value || !g.price_USD.sources.empty()) j["price_USD"] = figure_json(g.price_USD);
  j["source_file"] = g.source_file;
  return j;
}

json model_summary_json(const Model& m) {
  const ModelArch& a = m.arch;
  json j = {{"id", a.id},
            {"name", a.name},
            {"model_type", a.model_type},
            {"params_total", m.params.total},
            {"params_active_per_token", m.params.active_per_token},
            {"layers", a.layers},
            {"hidden_size", a.hidden},
            {"intermediate_size", a.intermediate},
            {"attention_heads", a.heads},
            {"kv_heads", a.kv_heads},
            {"head_dim", a.head_dim},
            {"vocab_size", a.vocab},
            {"tied_embeddings", a.tied_embeddings},
            {"activation", mlp_activation_name(a.activation)}};
  if (a.is_moe())
    j["moe"] = {{"experts", a.num_experts},
                {"experts_per_token", a.experts_per_token},
                {"expert_intermediate_size", a.moe_intermediate},
                {"moe_layers", a.moe_layers}};
  if (a.shared_expert_intermediate > 0)
    j["moe"]["shared_expert_intermediate_size"] = a.shared_expert_intermediate;
  if (a.mla)
    j["latent_attention"] = {{"q_lora_rank", a.q_lora_rank},
                             {"kv_lora_rank", a.kv_lora_rank},
                             {"qk_nope_head_dim", a.qk_nope_head_dim},
                             {"qk_rope_head_dim", a.qk_rope_head_dim},
                             {"v_head_dim", a.v_head_dim}};
  if (a.mtp_layers > 0) j["mtp_layers_not_counted"] = a.mtp_layers;
  if (a.sliding_window > 0)
    j["sliding_window"] = {{"window", a.sliding_window}, {"layers", a.sliding_layers}};
  if (!m.hf_repo.empty()) j["hf_repo"] = m.hf_repo;
  if (!m.publisher_params.empty()) j["publisher_params"] = m.publisher_params;
  if (!m.sources.empty()) j["source"] = m.sources;
  if (!a.defaults_applied.empty()) j["defaults_applied"] = a.defaults_applied;
  j["config_file"] = a.source_file;
  return j;
}

json params_json(const Model& m) {
  json j = model_summary_json(m);
  const ParamInventory& inv = m.params;
  j["total"] = inv.total;
  j["by_group"] = {{"block_linear", inv.block_linear},
                   {"embedding_and_output", inv.embedding_and_output},
                   {"norms", inv.norms},
                   {"biases", inv.biases},
                   {"other", inv.other}};
  j["by_part"] = {{"text", inv.text}, {"vision", inv.vision}, {"projector", inv.projector}};
  if (m.arch.has_vision())
    j["vision_tower"] = {{"kind", m.arch.vision.kind},
                         {"hidden_size", m.arch.vision.hidden},
                         {"layers", m.arch.vision.layers},
                         {"attention_heads", m.arch.vision.heads},
                         {"intermediate_size", m.arch.vision.intermediate},
                         {"image_size", m.arch.vision.image_size},
                         {"patch_size", m.arch.vision.patch_size},
                         {"projector", m.arch.vision.projector},
                         {"trained", false}};
  json tensors = json::array();
  for (const auto& t : inv.tensors) {
    json tj = {{"name", t.name},     {"shape", t.shape},     {"kind", tensor_kind_name(t.kind)},
               {"layers", t.layers}, {"copies", t.copies()}, {"params", t.total()}};
    tj["part"] = model_part_name(t.part);
    if (t.experts > 1) tj["experts"] = t.experts;
    if (t.projections) tj["projections"] = projection_set_name(t.projections);
    tensors.push_back(tj);
  }
  j["tensors"] = tensors;
  return j;
}

json workload_json(const Workload& w) {
  json j = {{"model", w.model->arch.id},
            {"method", run_method_name(w)},
            {"optimizer", optimizer_name(w.optimizer)},
            {"precision", compute_format_name(w.precision)},
            {"seq", w.seq},
            {"micro_batch", w.micro_batch},
            {"grad_accum", w.grad_accum},
            {"recompute", recompute_name(w.recompute)},
            {"recompute_layers", w.recompute_layers},
            {"attention", attention_name(w.attention)},
            {"peak", std::string(peak_kind_name(w.peak))}};
  if (w.objective != Objective::kSft) {
    const ObjectiveTraits& o = objective_traits(w.objective);
    j["adapter"] = method_name(w.method);
    j["sequences_per_example"] = o.sequences_per_example;
    j["reference"] = !o.reference                     ? "none"
                     : w.options.precompute_reference ? "precomputed"
                     : !uses_reference(w)             ? "none"
                     : holds_reference_copy(w)        ? "frozen copy"
                                                      : "adapters off";
    j["forward_passes_without_gradient"] = no_grad_forward_passes(w);
  }
  if (is_online(w)) {
    const RolloutSettings& r = w.rollout;
    j["rollout"] = {{"group_size", group_size(w)},
                    {"prompts_per_step", r.prompts_per_step},
                    {"prompt_len", r.prompt_len},
                    {"completion_len", r.completion_len},
                    {"completion_len_mean", round_to(mean_completion_len(w), 2)},
                    {"generation_rounds", r.generation_rounds},
                    {"rollout_tp", r.rollout_tp > 0 ? json(r.rollout_tp) : json(nullptr)},
                    {"placement", rollout_mode_name(r.mode)},
                    {"kl", kl_coefficient(w)},
                    {"rl_epochs", rl_epochs(w)},
                    {"value_model", holds_value_model(w)},
                    {"reward_model", objective_traits(w.objective).reward_model}};
    if (r.mode == RolloutMode::kColocated) {
      j["rollout"]["engine_memory"] = r.engine_memory;
      j["rollout"]["sleep"] = r.sleep;
    } else {
      j["rollout"]["rollout_gpu"] = r.gpu ? r.gpu->id : std::string();
      j["rollout"]["rollout_gpus"] = r.gpus;
      j["rollout"]["async_rollout"] = r.async_rollout;
    }
  }
  if (w.lengths.varies()) {
    // Variable lengths: the mean real tokens per sequence the step is timed on (seq: the longest).
    j["seq_mean"] = round_to(w.tokens_per_sequence(), 2);
    j["packing"] = w.lengths.packing;
    j["padding_free"] = w.lengths.padding_free;
  }
  const MethodTraits& method = method_traits(w.method);
  if (!method.trains_base) {
    j["rank"] = w.lora.rank;
    j["targets"] = projection_set_name(w.lora.targets);
  }
  if (method.quantized_base)
    j["quantization"] = {{"format", w.quant.format},
                         {"bits", w.quant.bits},
                         {"block", w.quant.block},
                         {"double_quant", w.quant.double_quant},
                         {"second_block", w.quant.second_block},
                         {"bits_per_param", round_to(quantized_bits_per_param(w.quant), 4)}};
  const auto& o = w.options;
  j["options"] = {{"optimizer_in_backward", o.optimizer_in_backward},
                  {"offload_optimizer", o.offload_optimizer},
                  {"offload_params", o.offload_parameters},
                  {"offload_activations", o.offload_activations},
                  {"chunked_loss", o.chunked_loss},
                  {"loss", std::string(loss_kind_name(o.effective_loss()))},
                  {"optimizer_impl", std::string(optimizer_impl_name(optimizer_impl(w)))},
                  {"experts_impl", std::string(experts_impl_name(experts_impl(w)))},
                  {"loss_chunks", o.loss_chunks},
                  {"compile", o.compile},
                  {"pure_bf16", o.pure_bf16},
                  {"quant_keeps_input", o.quant_keeps_input},
                  {"sync_each_batch", o.sync_each_batch},
                  {"non_reentrant", o.non_reentrant}};
  return j;
}

json layout_json(const Layout& l, int cards, Sharding sharding, int shard_group) {
  const int dp = std::max(1, l.dp(cards));
  int spans = dp;  // the data-parallel cards the sharding splits the states over
  if (sharding == Sharding::kNone || sharding == Sharding::kDdp) spans = 1;
  if (sharding == Sharding::kHsdp && shard_group > 0) spans = std::min(dp, shard_group);
  return {{"tp", l.tp},
          {"pp", l.pp},
          {"vpp", l.vpp},
          {"cp", l.cp},
          {"ep", l.ep},
          {"dp", dp},
          {"shard", sharding_name(sharding)},
          {"shard_group", spans}};
}

json placement_json(const Placement& p) {
  json j = {{"gpu", p.gpu->id}, {"gpus", p.count}, {"shard", sharding_name(p.sharding)}};
  j["layout"] = layout_json(p.layout, p.mig ? 1 : p.count, p.sharding, p.shard_group);
  if (p.mig) j["mig"] = p.mig->name;
  if (!p.topology.empty()) j["topology"] = p.topology;
  return j;
}

json suggestion_json(const Suggestion& s) {
  json change = json::object();
  for (const auto& c : s.change)
    change[c.key] = c.is_number() ? json(c.number) : json(c.text);
  return {{"kind", suggestion_kind_name(s.kind)},
          {"change", std::move(change)},
          {"reason", word_reason(s.reason)},
          {"memory_GB",
           {{"peak", gb(s.memory.peak)},
            {"headroom", gb(s.memory.headroom)},
            {"capacity", gb(s.memory.capacity)}}},
          {"memory_bytes",
           {{"peak", whole_bytes(s.memory.peak)},
            {"headroom", whole_bytes(s.memory.headroom)},
            {"capacity", whole_bytes(s.memory.capacity)}}},
          {"verdict", verdict_name(s.memory.verdict)},
          {"fits", s.fits()}};
}

json fit_json(const Workload& w, const Placement& p, const MemoryEstimate& m,
              const std::vector<Suggestion>& suggestions) {
  const TrainedSet set = trained_set(w);
  json j = workload_json(w);
  j.update(placement_json(p));
  j["params"] = {{"total", w.model->params.total},
                 {"trainable", set.trained_params},
                 {"frozen", set.frozen16_params + set.frozen_quantized_params}};
  j["memory_GB"] = memory_gb_json(m, w.peak);
  j["memory_bytes"] = memory_bytes_json(m);
  j["memory_GiB"] = {
      {"capacity", round_to(to_GiB(m.capacity), 3)},
      {"model_states", round_to(to_GiB(m.states.total()), 3)},
      {"peak", round_to(to_GiB(m.peak), 3)},
      {"peak_range", {round_to(to_GiB(m.peak_low), 3), round_to(to_GiB(m.peak_high), 3)}}};
  j["per_card"] = true;
  if (m.stage_count > 0) j["pipeline_stages"] = memory_stages_json(m);
  j["verdict"] = verdict_name(m.verdict);
  j["reason"] = word_reason(m.reason);
  j["suggestions"] = json::array();
  for (const auto& s : suggestions)
    j["suggestions"].push_back(suggestion_json(s));
  return j;
}

json memory_stages_json(const MemoryEstimate& m) {
  json stages = json::array();
  for (int i = 0; i < m.stage_count; ++i) {
    const auto& st = m.stages[static_cast<std::size_t>(i)];
    stages.push_back({{"stage", st.stage},
                      {"layers", st.layers},
                      {"states_on_card_GB", round_to(to_GB(st.states_on_card), 3)},
                      {"activations_GB", round_to(to_GB(st.activations), 3)},
                      {"peak_GB", round_to(to_GB(st.peak), 3)}});
  }
  return stages;
}

json memory_gb_json(const MemoryEstimate& m, PeakKind kind) {
  const ModelStates& s = m.states;
  json j = {{"capacity", gb(m.capacity)},
            {"model_states", gb(s.total())},
            {"states_on_card", gb(m.states_on_card)},
            {"free", gb(m.free)},
            {"activations", gb(m.activations)},
            {"overhead", gb(m.overhead)},
            {"peak", gb(m.peak)},
            {"peak_range", {gb(m.peak_low), gb(m.peak_high)}},
            {"headroom", gb(m.headroom)},
            {"breakdown",
             {{"frozen_weights", gb(s.frozen_weights)},
              {"trained_weights", gb(s.trained_weights)},
              {"gradients", gb(s.gradients)},
              {"master_weights", gb(s.master_weights)},
              {"optimizer_states", gb(s.optimizer_states)},
              {"quantization_constants", gb(s.quantization_constants)},
              {"reference_weights", gb(s.reference_weights)}}}};
  j.update(runtime_memory_json(m, kind));
  return j;
}

json memory_bytes_json(const MemoryEstimate& m) {
  const ModelStates& s = m.states;
  json j = {{"capacity", whole_bytes(m.capacity)},
            {"model_states", whole_bytes(s.total())},
            {"states_on_card", whole_bytes(m.states_on_card)},
            {"free", whole_bytes(m.free)},
            {"activations", whole_bytes(m.activations)},
            {"overhead", whole_bytes(m.overhead)},
            {"peak", whole_bytes(m.peak)},
            {"peak_range", {whole_bytes(m.peak_low), whole_bytes(m.peak_high)}},
            {"headroom", whole_bytes(m.headroom)},
            {"breakdown",
             {{"frozen_weights", whole_bytes(s.frozen_weights)},
              {"trained_weights", whole_bytes(s.trained_weights)},
              {"gradients", whole_bytes(s.gradients)},
              {"master_weights", whole_bytes(s.master_weights)},
              {"optimizer_states", whole_bytes(s.optimizer_states)},
              {"quantization_constants", whole_bytes(s.quantization_constants)},
              {"reference_weights", whole_bytes(s.reference_weights)}}}};
  if (m.rollout_engine > Bytes()) j["rollout_engine"] = whole_bytes(m.rollout_engine);
  return j;
}

std::int64_t whole_bytes(Bytes b) {
  return std::llround(b.value);
}

json runtime_memory_json(const MemoryEstimate& m, PeakKind kind) {
  const StepMemory& st = m.runtime.step;
  const OnCardStates& on = m.runtime.states;
  const OverheadBreakdown& o = m.runtime.overheads;
  json j;
  j["step"] = {{"peak_phase", std::string(step_phase_id(st.phase))},
               {"saved_activations", gb(st.saved_activations)},
               {"logits_and_loss", gb(st.logits_and_loss)},
               {"recompute", gb(st.recompute)},
               {"backward_transient", gb(st.backward_transient)},
               {"gradients", gb(st.gradients)},
               {"dequant_buffer", gb(st.dequant_buffer)},
               {"gathered_params", gb(st.gathered_params)},
               {"scoring_logits", gb(st.scoring_logits)},
               {"update_temporaries", gb(st.update_temporaries)},
               {"other_phase", gb(st.other_phase)}};
  j["states_moved"] = {{"host", gb(on.host)},
                       {"paged", gb(on.paged)},
                       {"gradients_persistent", on.gradients_persistent},
                       {"stack_buffers", gb(on.stack_buffers)},
                       // FSDP1 no_sync accumulation: unsharded gradients beyond the shard
                       {"unsharded_gradients", gb(on.unsharded_gradients)},
                       // FSDP2 with FP32 parameters (torchtitan): the trained 16-bit weights
                       // that are FP32 gradient shards instead
                       {"fp32_parameter_shift", gb(on.fp32_parameter_shift)}};
  j["overheads"] = {{"cuda_context", gb(o.cuda_context)},
                    {"cublas_workspace", gb(o.cublas_workspace)},
                    {"cublaslt_workspace", gb(o.cublaslt_workspace)},
                    {"nccl_buffers", gb(o.nccl_buffers)},
                    {"allocator_reserve", gb(o.allocator_reserve)},
                    {"reserve_counted", OverheadBreakdown::counts_reserve(kind)}};
  const LoadMemory& l = m.runtime.load;
  j["load"] = {{"weights", gb(l.weights)},
               {"transient", gb(l.transient)},
               {"outside_allocator", gb(l.outside)},
               {"total", gb(l.total())}};
  j["step_peak"] = gb(m.step_peak);
  j["load_peak"] = gb(m.load_peak);
  if (m.rollout_engine > Bytes()) {
    // A colocated rollout engine's share of the card, and the peak while it generates.
    j["rollout_engine"] = gb(m.rollout_engine);
    j["rollout_peak"] = gb(m.rollout_peak);
  }
  j["peak_phase"] = m.load_is_peak ? "load" : "step";
  // The step's peak in each kind as the tool that reports it would show it (PyTorch's active and
  // allocated bytes, max_memory_reserved, nvidia-smi), as `ftplan validate` compares them.
  j["peaks"] = {{"active", gb(predicted_peak(m, MeasuredPeak::kActive))},
                {"allocated", gb(predicted_peak(m, MeasuredPeak::kAllocated))},
                {"reserved", gb(predicted_peak(m, MeasuredPeak::kReserved))},
                {"nvidia-smi", gb(predicted_peak(m, MeasuredPeak::kNvidiaSmi))}};
  return j;
}

json validation_json(const ValidationReport& r) {
  json rows = json::array();
  for (const auto& row : r.rows) {
    const MeasuredRun& run = *row.run;
    json j = {{"id", run.id}, {"source", run.source}, {"model", run.model}, {"gpu", run.gpu}};
    if (run.measured) {
      j["measured"] = *run.measured;
      j["unit"] = run.unit;
      j["peak"] = measured_peak_name(run.peak);
      j["peak_stated"] = run.peak_stated;
    }
    if (!run.note.empty()) j["note"] = run.note;
    if (row.skipped) {
      j["skipped"] = true;
      j["reason"] = row.reason;
    } else {
      const double unit = bytes_per_memory_unit(run.unit);
      j["skipped"] = false;
      j["predicted"] = round_to(row.predicted.value / unit, 3);
      j["predicted_range"] = {round_to(row.predicted_low.value / unit, 3),
                              round_to(row.predicted_high.value / unit, 3)};
      j["error"] = round_to(row.error, 4);
      j["workload"] = workload_json(run.workload);
      j["workload"].update(placement_json(run.placement));
      j["peak_phase"] = std::string(step_phase_id(row.estimate.runtime.step.phase));
    }
    rows.push_back(j);
  }
  auto summary = [](const ErrorSummary& s) {
    json j = {{"rows", s.rows},
              {"median_abs_error", round_to(s.median_abs_error, 4)},
              {"worst_abs_error", round_to(s.worst_abs_error, 4)},
              {"worst_id", s.worst_id}};
    if (!s.source.empty()) j["source"] = s.source;
    return j;
  };
  json per_source = json::array();
  for (const auto& s : r.per_source)
    per_source.push_back(summary(s));
  json per_stack = json::array();
  for (const auto& s : r.per_stack) {
    json j = summary(s);
    j.erase("source");
    j["stack"] = s.source;
    per_stack.push_back(j);
  }
  return {{"runs", rows},
          {"per_source", per_source},
          {"per_stack", per_stack},
          {"overall", summary(r.overall)},
          {"skipped", r.skipped},
          {"range_coverage", {{"rows", r.ranged}, {"inside", r.inside_range}}},
          {"error_spread",
           {{"rows", r.spread.rows},
            {"sources", r.spread.sources},
            {"median_abs_error", round_to(r.spread.median_abs_error, 4)},
            {"error_low", round_to(r.spread.low, 4)},
            {"error_high", round_to(r.spread.high, 4)},
            {"loso_inside", r.spread.loso_inside}}},
          {"error", "(predicted - measured) / measured, in the source's kind of peak and unit"}};
}

json solve_json(const Workload& w, const Placement& p, const SolveResult& r) {
  json j = workload_json(w);
  j.update(placement_json(p));
  j["solve"] = solve_for_name(r.what);
  j["solve_step"] = r.step;
  j["largest"] = r.largest;
  j["largest_tight"] = r.largest_tight;
  j["at_limit"] = r.at_limit;
  j["binding"] = r.binding;
  j["reason"] = word_reason(r.reason);
  j["peak_GB_at_largest"] = gb(r.at_largest.peak);
  j["peak_GB_beyond"] = gb(r.beyond.peak);
  j["capacity_GB"] = gb(r.at_largest.capacity);
  j["peak_bytes_at_largest"] = whole_bytes(r.at_largest.peak);
  j["capacity_bytes"] = whole_bytes(r.at_largest.capacity);
  j["memory_GB_at_largest"] = memory_gb_json(r.at_largest, w.peak);
  return j;
}

namespace {

// An input of a derivation as a figure: "0.537 GB" -> {"value": 0.537, "unit": "GB"},
// "8,030,261,248" -> {"value": 8030261248, "unit": ""}; text that is not one number with at most
// one unit word stays text: "user-supplied (card.yaml)" -> {"text": "..."}.
json input_json(const std::string& text) {
  std::string digits;
  std::size_t i = 0;
  if (i < text.size() && text[i] == '-') digits += text[i++];
  const std::size_t start = i;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' || text[i] == ',' ||
          ((text[i] == 'e' || text[i] == 'E') && i > start && i + 1 < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '-' ||
            text[i + 1] == '+')) ||
          ((text[i] == '-' || text[i] == '+') && i > start &&
           (text[i - 1] == 'e' || text[i - 1] == 'E')))) {
    if (text[i] != ',') digits += text[i];
    ++i;
  }
  std::string unit = i < text.size() && text[i] == ' ' ? text.substr(i + 1) : text.substr(i);
  const bool one_word = unit.find_first_of(" ()") == std::string::npos;
  if (i > start && one_word && (i == text.size() || text[i] == ' ' || text[i] == '%')) {
    char* end = nullptr;
    const double v = std::strtod(digits.c_str(), &end);
    if (end && *end == '\0' && std::isfinite(v)) return {{"value", v}, {"unit", unit}};
  }
  return {{"text", text}};
}

}  // namespace

json derivation_json(const Derivation& d) {
  json inputs = json::object();
  for (const auto& [k, v] : d.inputs)
    inputs[k] = input_json(v);
  json j = {{"id", d.id},         {"label", d.label},          {"value", d.value},
            {"unit", d.unit},     {"formula", d.formula},      {"inputs", inputs},
            {"source", d.source}, {"depends_on", d.depends_on}};
  // A memory figure's value is unrounded GB: its bytes, for GiB and MiB.
  if (d.unit == "GB") j["bytes"] = whole_bytes(bytes_from_GB(d.value));
  return j;
}

json trace_json(const Trace& t) {
  json out = json::array();
  for (const auto& d : t.items())
    out.push_back(derivation_json(d));
  return out;
}

}  // namespace ftplan
