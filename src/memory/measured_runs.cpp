#include "memory/measured_runs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
#include "core/numeric.hpp"
#include "parallel/layout.hpp"
#include "perf/device.hpp"
#include "workload/loss.hpp"
#include "workload/objective.hpp"
#include "workload/quant_format.hpp"
#include "workload/roles.hpp"

namespace ftplan {

namespace {

const std::vector<std::string>& peak_names() {
  static const std::vector<std::string> names = {"active", "allocated", "reserved", "nvidia-smi"};
  return names;
}

MeasuredPeak peak_from_name(const std::string& s) {
  if (s == "active") return MeasuredPeak::kActive;
  if (s == "allocated") return MeasuredPeak::kAllocated;
  if (s == "reserved") return MeasuredPeak::kReserved;
  return MeasuredPeak::kNvidiaSmi;
}

// Reads a run's `throughput` map strictly.
MeasuredThroughput read_throughput(StrictMap& t) {
  MeasuredThroughput out;
  const double value = t.required_number("value", -1e12, 1e12);
  const std::string unit = t.required_choice("unit", throughput_unit_names());
  out.stated_per_gpu = t.optional_bool("stated_per_gpu").value_or(true);
  out.note = t.optional_string("note").value_or("");
  out.skip = t.optional_string("skip").value_or("");
  t.finish();
  const auto& names = throughput_unit_names();
  out.unit =
      static_cast<ThroughputUnit>(std::find(names.begin(), names.end(), unit) - names.begin());
  if (value <= 0) t.fail("value", fmt::format("a throughput must be above 0, got {}", value));
  if (out.unit == ThroughputUnit::kMfu && value > 1)
    t.fail("value",
           fmt::format("an MFU is a fraction from 0 to 1, got {} (write 51.4 % as 0.514)", value));
  out.value = value;
  return out;
}

std::string unknown_id_message(std::string_view what, const std::string& wanted,
                               const std::vector<std::string>& valid) {
  const auto near = closest_names(wanted, valid);
  return fmt::format("unknown {} '{}'{}", what, wanted,
                     near.empty() ? "" : fmt::format("; did you mean {}?", fmt::join(near, ", ")));
}

ErrorSummary summarize(const std::vector<const ValidationRow*>& rows, std::string source) {
  ErrorSummary s;
  s.source = std::move(source);
  std::vector<double> errors;
  for (const auto* r : rows) {
    const double e = std::abs(r->error);
    errors.push_back(e);
    if (e >= s.worst_abs_error) {
      s.worst_abs_error = e;
      s.worst_id = r->run->id;
    }
  }
  s.rows = static_cast<int>(errors.size());
  s.median_abs_error = median_of(errors);
  return s;
}

// Reserved and nvidia-smi peaks count the allocator's reserve; active and allocated do not.
bool counts_reserve(MeasuredPeak k) {
  return k == MeasuredPeak::kReserved || k == MeasuredPeak::kNvidiaSmi;
}

// The model's error spread over the rows of the sources none of its figures was taken from, and
// how many of those rows fall inside a range drawn from the other sources' rows only.
ErrorSpreadReport error_spread(const std::vector<ValidationRow>& rows) {
  std::vector<const ValidationRow*> unfitted;
  for (const auto& row : rows) {
    if (row.skipped) continue;
    const RuntimeOverheads* t = row.run->workload.overheads;
    auto among = [&](const std::vector<std::string>& ids) {
      return std::find(ids.begin(), ids.end(), row.run->source) != ids.end();
    };
    if (t && among(t->allocator_reserve_sources)) continue;
    // The FSDP1 share was drawn from its source's reserve-counting rows where it applies.
    if (t && among(t->reserve_fsdp1.sources) && counts_reserve(row.run->peak) &&
        row.estimate.runtime.overheads.reserve_fsdp1)
      continue;
    unfitted.push_back(&row);
  }
  ErrorSpreadReport out;
  if (unfitted.empty()) return out;
  std::vector<double> signed_errors, abs_errors;
  std::set<std::string, std::less<>> sources;
  for (const auto* r : unfitted) {
    signed_errors.push_back(r->error);
    abs_errors.push_back(std::abs(r->error));
    sources.insert(r->run->source);
  }
  out.rows = static_cast<int>(unfitted.size());
  out.sources = static_cast<int>(sources.size());
  out.median_abs_error = median_of(abs_errors);
  out.low = quantile_of(signed_errors, 0.1);
  out.high = quantile_of(signed_errors, 0.9);
  for (const auto& source : sources) {
    std::vector<double> others;
    for (const auto* r : unfitted)
      if (r->run->source != source) others.push_back(r->error);
    if (others.empty()) continue;
    const double low = quantile_of(others, 0.1), high = quantile_of(others, 0.9);
    for (const auto* r : unfitted) {
      if (r->run->source != source) continue;
      OverheadBreakdown o = r->estimate.runtime.overheads;
      o.error_low = low;
      o.error_high = high;
      const bool with_reserve = counts_reserve(r->run->peak);
      if (r->measured >= o.range_low(r->predicted, with_reserve) &&
          r->measured <= o.range_high(r->predicted, with_reserve))
        ++out.loso_inside;
    }
  }
  return out;
}

}  // namespace

std::string_view measured_peak_name(MeasuredPeak k) {
  return peak_names()[static_cast<std::size_t>(k)];
}

const std::vector<std::string>& throughput_unit_names() {
  static const std::vector<std::string> names = {"tokens_per_second_per_gpu", "tokens_per_second",
                                                 "step_seconds", "mfu"};
  return names;
}

std::string_view throughput_unit_name(ThroughputUnit u) {
  return throughput_unit_names()[static_cast<std::size_t>(u)];
}

Bytes MeasuredRun::measured_bytes() const {
  if (!measured) return Bytes(0);
  return Bytes(*measured * bytes_per_memory_unit(unit));
}

std::vector<MeasuredRun> parse_measured_runs(
    const DataFile& file, const Catalog& catalog, const RuntimeOverheads& overheads,
    const Stacks& stacks, const std::function<ModelPtr(const std::string&)>& resolve_model) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  const QuantFormats quant_formats = load_quant_formats(catalog);
  std::vector<MeasuredRun> runs;
  std::set<std::string> ids;
  std::optional<TrainingFormats> formats;  // read at the first run that states a precision
  // A file of one's own measurements may define its sources beside the runs: they add to those
  // of data/sources*.yaml.
  SourceTable own_sources;
  const SourceTable* sources = &catalog.sources();
  if (root.has("sources")) {
    own_sources = catalog.sources();
    read_sources_list(root, own_sources);
    sources = &own_sources;
  }
  for (auto& r : root.map_list("runs", true)) {
    MeasuredRun run;
    run.line = r.line();
    run.id = r.required_string("id");
    if (!ids.insert(run.id).second)
      r.fail("id", fmt::format("run id '{}' is listed twice", run.id));
    const auto ids_of_run = read_source_ids(
        r, *sources,
        "; or define it in this file's top-level 'sources:' list (id, title, url, note)");
    if (ids_of_run.empty()) r.fail("source", "a run needs the id of its source");
    run.source = ids_of_run.front();
    run.note = r.optional_string("note").value_or("");
    const auto explicit_skip = r.optional_string("skip");
    run.model = r.required_string("model");
    const std::string method = r.required_string("method");
    // A preference objective (method dpo, orpo, ...) trains the whole model or, with `adapter`,
    // an adapter; precompute_ref: its reference log-probabilities computed before training.
    const std::string adapter = r.optional_string("adapter").value_or("");
    run.gpu = r.required_string("gpu");
    const auto rank = r.optional_integer("rank", 1, 65536);
    const auto targets = r.optional_string("targets");
    const auto optimizer = r.optional_string("optimizer");
    TrainingOptions o;
    o.pure_bf16 = r.optional_bool("pure_bf16").value_or(false);
    o.quant_keeps_input = r.optional_bool("quant_keeps_input").value_or(false);
    o.sync_each_batch = r.optional_bool("sync_each_batch").value_or(false);
    o.non_reentrant = r.optional_bool("non_reentrant").value_or(false);
    o.optimizer_in_backward = r.optional_bool("optimizer_in_backward").value_or(false);
    o.offload_optimizer = r.optional_bool("offload_optimizer").value_or(false);
    o.offload_parameters = r.optional_bool("offload_params").value_or(false);
    o.offload_activations = r.optional_bool("offload_activations").value_or(false);
    o.chunked_loss = r.optional_bool("chunked_loss").value_or(false);
    o.loss_chunks = static_cast<int>(r.optional_integer("loss_chunks", 1, 4096).value_or(8));
    o.compile = r.optional_bool("compile").value_or(false);
    o.precompute_reference = r.optional_bool("precompute_ref").value_or(false);
    const auto loss = r.optional_string("loss");
    const auto optimizer_impl = r.optional_string("optimizer_impl");
    const auto experts = r.optional_string("experts_impl");
    const auto lora_dropout = r.optional_number("lora_dropout", 0, 0.999);
    const auto train_modules = r.optional_string("train_modules");
    BaseQuantOptions quant;
    quant.format = r.optional_string("base_quant").value_or("");
    quant.group = static_cast<int>(r.optional_integer("quant_group", 0, 65536).value_or(-1));
    quant.double_quant = r.optional_bool("double_quant").value_or(true);
    const auto recompute = r.optional_string("recompute");
    const auto recompute_layers = r.optional_integer("recompute_layers", 0, 1 << 20);
    const auto attention = r.optional_string("attention");
    const auto precision = r.optional_string("precision");
    // `seq_max` is another name for `seq`, as in a runs file.
    const auto seq = r.optional_integer(r.key_or_alias("seq", "seq_max"), 1, 1 << 24);
    const auto micro_batch = r.optional_integer("micro_batch", 1, 65536);
    const auto grad_accum = r.optional_integer("grad_accum", 1, 1000000);
    const auto gpus = r.optional_integer("gpus", 1, 65536);
    const auto shard = r.optional_string("shard");
    const auto shard_group = r.optional_integer("shard_group", 1, 65536);
    const double power_limit_W = r.optional_number("power_limit_W", 1, 1e5).value_or(0);
    // Model parallelism as the source states it (1: none).
    Layout layout;
    const std::pair<int*, const char*> degrees[] = {{&layout.tp, "tp"},
                                                    {&layout.pp, "pp"},
                                                    {&layout.vpp, "vpp"},
                                                    {&layout.cp, "cp"},
                                                    {&layout.ep, "ep"}};
    for (const auto& [degree, key] : degrees)
      *degree = static_cast<int>(r.optional_integer(key, 1, 65536).value_or(1));
    const auto peak = r.optional_choice("peak", peak_names());
    run.peak_stated = r.optional_bool("peak_stated").value_or(true);
    run.measured = r.optional_number("measured", 1e-6, 1e6);
    run.unit =
        r.optional_choice("unit", {kMemoryUnitNames.begin(), kMemoryUnitNames.end()}).value_or("");
    if (const auto stack = r.optional_choice("stack", stacks.names()))
      run.stack = &stacks.find(*stack);
    if (auto t = r.optional_map("throughput")) run.throughput = read_throughput(*t);
    run.seq_mean = r.optional_number("seq_mean", 1e-3, 1 << 24);
    run.nodes.network = r.optional_string("network").value_or("");
    run.nodes.nics_per_node =
        static_cast<int>(r.optional_integer("nics_per_node", 1, 1024).value_or(0));
    const bool packing = r.optional_bool("packing").value_or(false);
    const bool padding_free = r.optional_bool("padding_free").value_or(false);
    // An online objective's rollout (its objective resolved again below, where a bad method is
    // reported): the step it measured is rollout, weight sync, scoring and training.
    Workload online;
    try {
      online.objective = parse_run_method(method).objective;
    } catch (const UserError&) {
    }
    const bool is_online_run = read_rollout_settings(r, online);
    run.online = is_online_run;
    const auto rollout_gpu = is_online_run ? r.optional_string("rollout_gpu") : std::nullopt;
    if (is_online_run)
      online.rollout.gpus =
          static_cast<int>(r.optional_integer("rollout_gpus", 1, 65536).value_or(1));
    r.finish();

    if (run.seq_mean && seq && *run.seq_mean > static_cast<double>(*seq))
      r.fail("seq_mean", fmt::format("the mean tokens per sample ({}) exceed the sequence "
                                     "length ({})",
                                     *run.seq_mean, *seq));
    if (run.throughput && !run.stack)
      r.fail("stack", "a run with a throughput needs the software stack it ran on");
    // A throughput the step model is to reproduce needs every setting, like a predicted memory
    // figure.
    const bool throughput_compared = run.throughput && run.throughput->skip.empty();
    run.throughput_only = run.throughput && !run.measured && !explicit_skip;

    if (run.measured && run.unit.empty())
      r.fail("unit", "a run with a measured figure needs its unit: GB, GiB, MB or MiB");
    if (peak) run.peak = peak_from_name(*peak);

    if (explicit_skip) {
      run.skip = *explicit_skip;
    } else if (run.throughput_only) {
      run.skip = "no memory figure (a throughput measurement)";
    } else if (!run.measured) {
      run.skip = "the source gives no memory figure for this run";
    } else if (!seq) {
      run.skip = "the source does not state the sequence length (unpacked data, padded per batch)";
    }
    if (explicit_skip) {  // settings outside the model: names are not resolved
      if (throughput_compared)
        r.fail("skip",
               "a run whose names are not resolved cannot have its throughput compared (give "
               "the throughput a 'skip' reason too)");
      runs.push_back(std::move(run));
      continue;
    }

    // Resolve every name, strictly, whether the run is predicted or not.
    Workload& w = run.workload;
    w.model = catalog.find_model(run.model);
    if (!w.model && resolve_model) {
      try {
        w.model = resolve_model(run.model);
      } catch (const UserError& e) {
        r.fail("model", e.what());
      }
    }
    if (!w.model)
      r.fail("model", unknown_id_message("model", run.model, catalog.model_ids()) +
                          " (a run whose model is not in the catalog needs a 'skip' reason)");
    try {
      const ObjectiveAndMethod m = resolve_run_method(method, adapter, o.precompute_reference,
                                                      "method", "adapter", "precompute_ref");
      w.objective = m.objective;
      w.method = m.method;
      use_objective_model(w);
    } catch (const UserError& e) {
      r.fail(e.field() == "adapter" || e.field() == "precompute_ref" ? e.field() : "method",
             e.what());
    }
    if (is_online_run) {
      w.rollout = online.rollout;
      if (rollout_gpu) {
        w.rollout.gpu = r.at_key("rollout_gpu", [&] { return &catalog.gpu(*rollout_gpu); });
      }
    }
    // A card by id or by the name nvidia-smi prints, as --gpu takes it.
    const GpuSpec* gpu = r.at_key("gpu", [&] { return &catalog.gpu(run.gpu); });
    run.gpu = gpu->id;
    if (optimizer) w.optimizer = r.at_key("optimizer", [&] { return parse_optimizer(*optimizer); });
    if (targets)
      r.at_key("targets", [&] {
        parse_lora_targets(*targets, w.lora);
        return 0;
      });
    if (train_modules)
      r.at_key("train_modules", [&] {
        parse_train_modules(*train_modules, w.lora);
        return 0;
      });
    w.lora.dropout = lora_dropout.value_or(0);
    w.quant = r.at_key(quant.group >= 0 ? "quant_group" : "base_quant", [&] {
      return base_quant_config(quant_formats, quant, method_traits(w.method).quantized_base,
                               method);
    });
    if (rank) w.lora.rank = static_cast<int>(*rank);
    if (recompute) w.recompute = r.at_key("recompute", [&] { return parse_recompute(*recompute); });
    if (recompute_layers) w.recompute_layers = *recompute_layers;
    if (attention) w.attention = r.at_key("attention", [&] { return parse_attention(*attention); });
    if (precision) {
      // The matrix products' format (FP8 recipes: Transformer Engine, torchao Float8), where the
      // card runs it.
      w.precision = r.at_key("precision", [&] { return parse_compute_format(*precision); });
      if (!formats) formats = load_training_formats(catalog);
      r.at_key("precision", [&] { formats->require(*gpu, w.precision); });
    }
    Placement& p = run.placement;
    p.gpu = gpu;
    p.count = static_cast<int>(gpus.value_or(1));
    p.sharding = shard ? r.at_key("shard", [&] { return parse_sharding(*shard); })
                       : (p.count > 1 ? Sharding::kDdp : Sharding::kNone);
    p.power_limit_W = power_limit_W;
    p.layout = layout;
    // Hybrid sharding: the source's group size, as no node size is stated beside it.
    if (shard_group) {
      if (p.sharding != Sharding::kHsdp)
        r.fail("shard_group", "applies to shard: hsdp (hybrid sharding) only");
      p.shard_group = static_cast<int>(*shard_group);
    } else if (p.sharding == Sharding::kHsdp) {
      r.fail("shard", "hybrid sharding (hsdp) needs shard_group: the cards each group shards over");
    }
    // A run whose memory is predicted, or whose throughput is compared, states every setting the
    // models read.
    const bool memory_predicted = run.skip.empty();
    if (memory_predicted && !peak)
      r.fail("peak",
             "a predicted run needs the kind of peak its source reports: active, "
             "allocated, reserved or nvidia-smi (or give a 'skip' reason)");
    const std::initializer_list<std::pair<const char*, bool>> settings = {
        {"optimizer", optimizer.has_value()},     {"recompute", recompute.has_value()},
        {"attention", attention.has_value()},     {"seq", seq.has_value() || is_online_run},
        {"micro_batch", micro_batch.has_value()}, {"gpus", gpus.has_value()}};
    for (const auto& [key, present] : settings) {
      if (present) continue;
      if (memory_predicted)
        r.fail(key, "required for a run that is predicted (or give a 'skip' reason)");
      if (throughput_compared)
        r.fail(key,
               "required for a run whose throughput is compared (or give the throughput a "
               "'skip' reason)");
    }
    const bool complete =
        std::all_of(settings.begin(), settings.end(), [](const auto& s) { return s.second; });
    if ((memory_predicted || throughput_compared) && !method_traits(w.method).trains_base) {
      if (!rank) r.fail("rank", "a LoRA/QLoRA run needs its rank");
      if (!targets) r.fail("targets", "a LoRA/QLoRA run needs its target modules");
    }
    if (!complete || !(memory_predicted || run.throughput)) {
      runs.push_back(std::move(run));
      continue;
    }
    w.lengths.packing = packing;
    w.lengths.padding_free = padding_free;
    if (is_online_run)
      set_online_sequence(w);
    else
      w.seq = *seq;
    w.micro_batch = *micro_batch;
    w.grad_accum = grad_accum.value_or(1);
    w.options = o;
    w.options.loss = r.at_key("loss", [&] {
      return resolve_loss(loss.value_or(""), o.chunked_loss,
                          run.stack ? *run.stack : stacks.fallback());
    });
    if (optimizer_impl)
      w.options.optimizer_impl = r.at_key("optimizer_impl", [&] {
        return parse_optimizer_impl(*optimizer_impl, "optimizer_impl");
      });
    if (experts)
      w.options.experts_impl =
          r.at_key("experts_impl", [&] { return parse_experts_impl(*experts, "experts_impl"); });
    w.overheads = &overheads;
    w.stack = run.stack;
    switch (run.peak) {
      case MeasuredPeak::kActive:
        w.peak = PeakKind::kActive;
        break;
      case MeasuredPeak::kAllocated:
        w.peak = PeakKind::kAllocated;
        break;
      case MeasuredPeak::kReserved:
        w.peak = PeakKind::kReserved;
        break;
      case MeasuredPeak::kNvidiaSmi:
        w.peak = PeakKind::kNvidiaSmi;
        break;
    }
    r.at_key("id", [&] {
      validate(w);
      validate(p);
      return 0;
    });
    // An online run's batch: its prompts × group over the data-parallel replicas.
    if (is_online_run)
      r.at_key("prompts_per_step", [&] {
        resolve_rollout_batch(w, p.layout.dp(p.count), grad_accum.has_value());
        return 0;
      });
    r.at_key("shard_group", [&] {
      check_shard_group(p);
      return 0;
    });
    // A layout that does not divide the model or the cards names the run and the layout's key.
    try {
      check_layout(w, p);
    } catch (const UserError& e) {
      const std::string& field = e.field();
      static const std::set<std::string> keys = {
          "tp", "pp", "vpp", "cp", "ep", "gpus", "grad_accum", "seq", "attention", "micro_batch"};
      r.fail(keys.count(field) ? field : std::string("id"),
             fmt::format("run '{}': the layout tp {} × pp {} (vpp {}) × cp {}, ep {} on {} cards "
                         "does not fit: {}",
                         run.id, layout.tp, layout.pp, layout.vpp, layout.cp, layout.ep, p.count,
                         e.what()));
    }
    run.settings_complete = true;
    runs.push_back(std::move(run));
  }
  root.finish();
  if (runs.empty()) root.fail("runs", "the file lists no runs");
  return runs;
}

Bytes predicted_peak(const MemoryEstimate& m, MeasuredPeak kind) {
  const OverheadBreakdown& o = m.runtime.overheads;
  Bytes b = m.states_on_card + m.activations + o.inside_allocator();
  if (counts_reserve(kind)) b += o.allocator_reserve;
  if (kind == MeasuredPeak::kNvidiaSmi) b += o.outside_allocator();
  return b;
}

Bytes observable_peak(const MemoryEstimate& m, MeasuredPeak kind) {
  const Bytes demand = predicted_peak(m, kind);
  if (!counts_reserve(kind)) return demand;
  // The reserve is elastic: when the card has no room for a new segment, the caching allocator
  // releases its free cached blocks and retries, so no card shows more reserved memory than it
  // holds beside the CUDA context and NCCL (nvidia-smi: more than it has).
  const OverheadBreakdown& o = m.runtime.overheads;
  const Bytes card =
      kind == MeasuredPeak::kNvidiaSmi ? m.capacity : m.capacity - o.outside_allocator();
  const Bytes without_reserve = demand - o.allocator_reserve;
  return std::max(without_reserve, std::min(demand, card));
}

ValidationReport validate_runs(const std::vector<MeasuredRun>& runs) {
  ValidationReport report;
  report.rows.reserve(runs.size());
  for (const auto& run : runs) {
    if (run.throughput_only) continue;  // no memory figure to compare
    ValidationRow row;
    row.run = &run;
    if (!run.skip.empty()) {
      row.skipped = true;
      row.reason = run.skip;
      ++report.skipped;
      report.rows.push_back(std::move(row));
      continue;
    }
    row.estimate = estimate_memory(run.workload, run.placement);
    row.predicted = observable_peak(row.estimate, run.peak);
    row.measured = run.measured_bytes();
    row.error = (row.predicted - row.measured) / row.measured;
    const OverheadBreakdown& o = row.estimate.runtime.overheads;
    const bool with_reserve = counts_reserve(run.peak);
    row.predicted_low = o.range_low(row.predicted, with_reserve);
    row.predicted_high = o.range_high(row.predicted, with_reserve);
    ++report.ranged;
    if (row.measured >= row.predicted_low && row.measured <= row.predicted_high)
      ++report.inside_range;
    report.rows.push_back(std::move(row));
  }
  std::vector<std::string> order;
  for (const auto& row : report.rows)
    if (!row.skipped && std::find(order.begin(), order.end(), row.run->source) == order.end())
      order.push_back(row.run->source);
  std::vector<const ValidationRow*> all;
  for (const auto& source : order) {
    std::vector<const ValidationRow*> of_source;
    for (const auto& row : report.rows)
      if (!row.skipped && row.run->source == source) of_source.push_back(&row);
    report.per_source.push_back(summarize(of_source, source));
    all.insert(all.end(), of_source.begin(), of_source.end());
  }
  report.overall = summarize(all, "");
  std::vector<std::string> stacks;
  auto stack_of = [](const ValidationRow& row) {
    return row.run->stack ? row.run->stack->name : std::string("not stated");
  };
  for (const auto& row : report.rows)
    if (!row.skipped && std::find(stacks.begin(), stacks.end(), stack_of(row)) == stacks.end())
      stacks.push_back(stack_of(row));
  for (const auto& stack : stacks) {
    std::vector<const ValidationRow*> of_stack;
    for (const auto& row : report.rows)
      if (!row.skipped && stack_of(row) == stack) of_stack.push_back(&row);
    report.per_stack.push_back(summarize(of_stack, stack));
  }
  report.spread = error_spread(report.rows);
  return report;
}

}  // namespace ftplan
