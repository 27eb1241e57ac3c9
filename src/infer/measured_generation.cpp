#include "infer/measured_generation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "catalog/strict_yaml.hpp"
#include "comm/topology.hpp"
#include "core/error.hpp"
#include "core/numeric.hpp"
#include "perf/device.hpp"
#include "perf/efficiency.hpp"
#include "plan/evaluate.hpp"

namespace ftplan {

namespace {

constexpr const char* kRootKey = "inference";

Bytes in_bytes(double value, const std::string& unit) {
  return Bytes(value * bytes_per_memory_unit(unit));
}

MeasuredKvCache read_kv_cache(StrictMap& m) {
  MeasuredKvCache k;
  k.tokens = m.required_integer("tokens", 1, std::int64_t{1} << 40);
  k.memory = m.optional_number("memory", 1e-6, 1e6);
  k.weights = m.optional_number("weights", 1e-6, 1e6);
  k.card = m.optional_number("card", 1e-6, 1e6);
  k.unit =
      m.optional_choice("unit", {kMemoryUnitNames.begin(), kMemoryUnitNames.end()}).value_or("");
  m.finish();
  if ((k.memory || k.weights || k.card) && k.unit.empty())
    m.fail("unit", "a memory figure needs its unit: GB, GiB, MB or MiB");
  return k;
}

MeasuredDecode read_decode(StrictMap& m) {
  MeasuredDecode d;
  if (m.has("context")) {
    d.fixed_context = m.required_integer("context", 1, 1 << 24);
    for (const char* key : {"input_tokens", "output_tokens"})
      if (m.has(key))
        m.fail(key, fmt::format("{} and context exclude each other: a step timed at one context "
                                "gives context, a benchmark's decode its input and output tokens",
                                key));
  } else {
    d.input_tokens = m.required_integer("input_tokens", 1, 1 << 24);
    d.output_tokens = m.required_integer("output_tokens", 1, 1 << 24);
  }
  d.concurrency = m.required_integer("concurrency", 1, 1 << 20);
  d.tpot_ms = m.required_number("tpot_ms", 1e-6, 1e7);
  m.finish();
  return d;
}

GenerationErrorSummary summarize(const std::vector<std::pair<double, std::string>>& errors) {
  GenerationErrorSummary s;
  std::vector<double> abs;
  for (const auto& [e, id] : errors) {
    abs.push_back(std::abs(e));
    if (std::abs(e) >= s.worst_abs_error) {
      s.worst_abs_error = std::abs(e);
      s.worst_id = id;
    }
  }
  s.rows = static_cast<int>(abs.size());
  s.median_abs_error = median_of(abs);
  s.p90_abs_error = quantile_of(abs, 0.9);
  return s;
}

// Whole blocks of `block_size` tokens that `bytes` hold, in tokens (0 when none).
std::int64_t tokens_in(Bytes bytes, const GenerationModel& g, std::int64_t block_size) {
  const double block_bytes = kv_bytes_per_token(g).value * static_cast<double>(block_size);
  if (bytes.value <= 0 || block_bytes <= 0) return 0;
  return static_cast<std::int64_t>(std::floor(bytes.value / block_bytes)) * block_size;
}

// One decode row's predicted step: the roofline with the tensor-parallel all-reduces, and the
// engine's fixed time per layer (from the card's efficiency table) apart.
struct DecodePrediction {
  Seconds roofline;  // roofline + link
  Seconds fixed;
  std::int64_t layers = 0;
};
DecodePrediction predict_decode(const MeasuredGeneration& m, const GenerationModel& g,
                                const PlanningData& data) {
  const MeasuredDecode& d = *m.decode;
  const EfficiencyTable& table = data.efficiency(*m.gpu_spec);
  Topology topology;
  TensorParallelLink link;
  if (m.tp > 1) {
    topology = build_topology(*m.gpu_spec, m.tp, "", data.comm);
    link = {&topology, &data.comm};
  }
  const GenerationEfficiency e =
      generation_efficiency(table, g, m.gpu_spec->architecture, static_cast<double>(d.concurrency));
  const PassTime step =
      decode_time(g, make_device(*m.gpu_spec), d.concurrency, d.context(), e, "weights", link);
  return {step.roofline() + step.link, step.fixed, g.layers};
}

// The median absolute error of `rows` (raw prediction, layers, measured) at `layer_s` per layer.
struct DecodeSample {
  double raw_s = 0;
  double layers = 0;
  double measured_s = 0;
  std::string source;
};
double decode_error(const DecodeSample& x, double layer_s) {
  return relative_error(x.raw_s + x.layers * layer_s, x.measured_s);
}
// The whole microseconds per layer (0 to 2,000) with the least median absolute error; the
// smallest of equals.
double fit_layer_seconds(const std::vector<const DecodeSample*>& xs) {
  double best_us = 0, best = std::numeric_limits<double>::infinity();
  std::vector<double> abs(xs.size());
  for (int us = 0; us <= 2000; ++us) {
    for (std::size_t i = 0; i < xs.size(); ++i)
      abs[i] = std::abs(decode_error(*xs[i], us * 1e-6));
    const double m = median_of(abs);
    if (m < best - 1e-12) {
      best = m;
      best_us = us;
    }
  }
  return best_us * 1e-6;
}

}  // namespace

DecodeLayerFit fit_decode_layer_time(const std::vector<MeasuredGeneration>& rows,
                                     const PlanningData& data) {
  std::vector<DecodeSample> samples;
  for (const auto& m : rows) {
    if (!m.skip.empty() || !m.decode) continue;
    const GenerationModel g = make_generation_model(m.model_ptr, m.weights, m.kv_dtype, m.tp);
    if (std::any_of(g.kv_groups.begin(), g.kv_groups.end(),
                    [](const KvLayerGroup& k) { return k.span > 0; }))
      continue;
    const DecodePrediction p = predict_decode(m, g, data);
    samples.push_back(
        {p.roofline.value, static_cast<double>(p.layers), m.decode->tpot_ms * 1e-3, m.source});
  }
  DecodeLayerFit fit;
  if (samples.empty()) return fit;
  std::vector<const DecodeSample*> all;
  std::set<std::string> sources;
  for (const auto& x : samples) {
    all.push_back(&x);
    sources.insert(x.source);
  }
  fit.rows = static_cast<int>(samples.size());
  fit.sources = static_cast<int>(sources.size());
  fit.seconds_per_layer = fit_layer_seconds(all);
  std::vector<double> in_sample, loso_abs, loso;
  for (const auto& x : samples)
    in_sample.push_back(std::abs(decode_error(x, fit.seconds_per_layer)));
  fit.median_abs_error = median_of(in_sample);
  // Each source predicted by the time fitted to the others.
  for (const auto& source : sources) {
    std::vector<const DecodeSample*> others;
    for (const auto& x : samples)
      if (x.source != source) others.push_back(&x);
    if (others.empty()) continue;
    const double layer_s = fit_layer_seconds(others);
    for (const auto& x : samples)
      if (x.source == source) {
        loso.push_back(decode_error(x, layer_s));
        loso_abs.push_back(std::abs(loso.back()));
      }
  }
  if (!loso.empty()) {
    fit.loso_median_abs_error = median_of(loso_abs);
    fit.error_low = quantile_of(loso, 0.1);
    fit.error_high = quantile_of(loso, 0.9);
  }
  return fit;
}

const std::vector<std::string>& inference_engine_names() {
  static const std::vector<std::string> names = {"vllm", "sglang", "tensorrt-llm", "pytorch"};
  return names;
}

bool is_measured_generation_file(const DataFile& file) {
  const DocValue root = parse_document(file.text, file.path);
  return root.is_map() && StrictMap(root, file.path, "").has(kRootKey);
}

std::vector<MeasuredGeneration> parse_measured_generation(const DataFile& file,
                                                          const Catalog& catalog) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  std::vector<MeasuredGeneration> rows;
  std::set<std::string> ids;
  for (auto& r : root.map_list(kRootKey, true)) {
    MeasuredGeneration g;
    g.line = r.line();
    g.id = r.required_string("id");
    if (!ids.insert(g.id).second) r.fail("id", fmt::format("row id '{}' is listed twice", g.id));
    const auto sources = read_source_ids(r, catalog.sources());
    if (sources.empty()) r.fail("source", "a row needs the id of its source");
    g.source = sources.front();
    g.note = r.optional_string("note").value_or("");
    g.skip = r.optional_string("skip").value_or("");
    g.engine = r.required_choice("engine", inference_engine_names());
    g.engine_version = r.optional_string("engine_version").value_or("");
    g.model = r.required_string("model");
    g.gpu = r.required_string("gpu");
    g.tp = static_cast<int>(r.optional_integer("tp", 1, 1024).value_or(1));
    const std::string weights = r.required_string("weights");
    const std::string kv_dtype = r.required_string("kv_dtype");
    // The engine's memory split: needed by a kv_cache figure only.
    g.utilization = r.optional_number("gpu_memory_utilization", 1e-3, 1).value_or(g.utilization);
    g.max_model_len = r.optional_integer("max_model_len", 1, std::int64_t{1} << 30).value_or(0);
    const bool split_given = r.has("gpu_memory_utilization") && r.has("max_model_len");
    g.block_size = r.optional_integer("block_size", 1, 1 << 20).value_or(kDefaultBlockSize);
    if (auto k = r.optional_map("kv_cache")) g.kv_cache = read_kv_cache(*k);
    if (auto d = r.optional_map("decode")) g.decode = read_decode(*d);
    r.finish();
    if (!g.kv_cache && !g.decode)
      r.fail("id", fmt::format("row '{}' gives neither a kv_cache nor a decode figure", g.id));
    if (g.kv_cache && !split_given)
      r.fail(r.has("max_model_len") ? "gpu_memory_utilization" : "max_model_len",
             fmt::format("row '{}': a kv_cache figure needs the engine's gpu_memory_utilization "
                         "and max_model_len",
                         g.id));
    if (g.kv_cache && g.engine == "pytorch")
      r.fail("engine", fmt::format("row '{}': engine pytorch (a bare loop) has no engine memory "
                                   "split: its rows give decode figures only",
                                   g.id));
    if (!g.skip.empty()) {  // settings outside the model: names are not resolved
      rows.push_back(std::move(g));
      continue;
    }
    g.model_ptr = catalog.find_model(g.model);
    if (!g.model_ptr)
      r.fail("model", fmt::format("unknown model '{}' (a row whose model is not in the catalog "
                                  "needs a 'skip' reason)",
                                  g.model));
    g.gpu_spec = catalog.find_gpu(g.gpu);
    if (!g.gpu_spec) r.fail("gpu", fmt::format("unknown GPU '{}'", g.gpu));
    g.weights = r.at_key("weights", [&] { return parse_weight_format(weights, "weights"); });
    g.kv_dtype = r.at_key("kv_dtype", [&] { return parse_kv_dtype(kv_dtype, "kv_dtype"); });
    r.at_key("tp", [&] {
      make_generation_model(g.model_ptr, g.weights, g.kv_dtype, g.tp, "tp");
      return 0;
    });
    rows.push_back(std::move(g));
  }
  root.finish();
  if (rows.empty()) root.fail(kRootKey, "the file lists no rows");
  return rows;
}

GenerationValidationReport validate_generation(const std::vector<MeasuredGeneration>& rows,
                                               const PlanningData& data) {
  GenerationValidationReport report;
  std::vector<std::pair<double, std::string>> tokens, logged_tokens, kv_memory, weights, tpot;
  for (const auto& m : rows) {
    GenerationValidationRow row;
    row.row = &m;
    if (!m.skip.empty()) {
      row.skipped = true;
      row.reason = m.skip;
      ++report.skipped;
      report.rows.push_back(std::move(row));
      continue;
    }
    const GenerationModel g = make_generation_model(m.model_ptr, m.weights, m.kv_dtype, m.tp);
    if (std::any_of(g.kv_groups.begin(), g.kv_groups.end(),
                    [](const KvLayerGroup& k) { return k.span > 0; })) {
      row.skipped = true;
      row.reason =
          "layers with a bounded attention span: the engine's cache for them is not a count of "
          "tokens of one size";
      ++report.skipped;
      report.rows.push_back(std::move(row));
      continue;
    }
    if (m.kv_cache) {
      const MeasuredKvCache& k = *m.kv_cache;
      row.memory = generation_memory(g, m.gpu_spec->capacity(), m.utilization,
                                     data.overheads.cuda_context, m.max_model_len, m.block_size);
      row.predicted_tokens = tokens_in(row.memory.kv_budget, g, m.block_size);
      row.tokens_error =
          relative_error(static_cast<double>(row.predicted_tokens), static_cast<double>(k.tokens));
      tokens.emplace_back(row.tokens_error, m.id);
      if (k.memory) {
        const Bytes logged = in_bytes(*k.memory, k.unit);
        row.logged_memory_tokens = tokens_in(logged, g, m.block_size);
        row.logged_memory_tokens_error = relative_error(
            static_cast<double>(*row.logged_memory_tokens), static_cast<double>(k.tokens));
        logged_tokens.emplace_back(*row.logged_memory_tokens_error, m.id);
        row.kv_memory_error = relative_error(row.memory.kv_budget.value, logged.value);
        kv_memory.emplace_back(*row.kv_memory_error, m.id);
      }
      if (k.weights) {
        row.weights_error =
            relative_error(row.memory.weights.value, in_bytes(*k.weights, k.unit).value);
        weights.emplace_back(*row.weights_error, m.id);
      }
      if (k.card)
        row.card_error =
            relative_error(m.gpu_spec->capacity().value, in_bytes(*k.card, k.unit).value);
    }
    if (m.decode) {
      const DecodePrediction p = predict_decode(m, g, data);
      row.predicted_tpot_ms = (p.roofline + p.fixed).value * 1e3;
      row.tpot_error = relative_error(row.predicted_tpot_ms, m.decode->tpot_ms);
      tpot.emplace_back(row.tpot_error, m.id);
    }
    report.rows.push_back(std::move(row));
  }
  report.kv_tokens = summarize(tokens);
  report.kv_tokens_from_logged_memory = summarize(logged_tokens);
  report.kv_memory = summarize(kv_memory);
  report.weights = summarize(weights);
  report.decode_tpot = summarize(tpot);
  report.decode_fit = fit_decode_layer_time(rows, data);
  return report;
}

}  // namespace ftplan
