#include "plan/measured_step.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
#include "core/numeric.hpp"
#include "perf/device.hpp"
#include "perf/ops.hpp"

namespace ftplan {

namespace {

// Keys a row has once its model was built, and once it was measured (measure_step.py).
const std::vector<const char*> kBuildKeys = {"build_s",          "lora_impl",     "total_params",
                                             "trainable_params", "adapter_dtype", "nf4_weights",
                                             "nf4_bytes"};
const std::vector<const char*> kMeasureKeys = {"median_s",
                                               "min_s",
                                               "max_s",
                                               "step_times_s",
                                               "tokens_per_s",
                                               "loss",
                                               "allocated_before_step_bytes",
                                               "peak_allocated_bytes",
                                               "peak_reserved_bytes",
                                               "device_used_after_bytes"};

void read_schema(StrictMap& root) {
  const std::string schema = root.required_string("schema");
  if (schema != kStepResultsSchema)
    root.fail("schema", fmt::format("schema '{}' is not supported: this ftplan reads '{}' "
                                    "(bench/step/measure_step.py)",
                                    schema, kStepResultsSchema));
}

// A scalar or null, whatever its type (software versions: text, numbers, null).
void scalar_or_null(StrictMap& m, std::string_view key) {
  const DocValue n = m.value(key);
  if (!n.defined()) m.required_string(key);  // throws: missing
  if (!n.is_null() && !n.is_scalar())
    m.fail(key, fmt::format("expected a version text or null, got {}", describe_node(n)));
}

void read_software(StrictMap m) {
  for (const char* key : {"python", "torch", "transformers", "peft", "torch_cuda", "cudnn"})
    scalar_or_null(m, key);
  m.finish();
}

void read_settings(StrictMap m, StepResults& r) {
  m.required_bool("quick");
  m.required_integer("seq", 1, 1 << 24);
  m.required_integer("lora_rank", 1, 65536);
  m.required_number("lora_alpha", 0, 1e9);
  r.lora_targets = m.string_list("lora_targets", true);
  r.lora_impl = m.required_choice("lora_impl", {"peft", "builtin"});
  m.required_number("lora_dropout", 0, 1);
  for (const char* key : {"optimizer", "autocast", "base_weights", "loss", "peak_memory"})
    m.required_string(key);
  r.attention = m.required_string("attention");
  m.required_integer("warmup_steps", 1, 1 << 20);
  m.required_integer("steps", 1, 1 << 20);
  m.nullable_number("time_budget_s", 0, 1e9);
  m.finish();
}

void read_device(StrictMap m, StepResults& r) {
  r.device.name = m.required_string("name");
  r.device.compute_capability = m.nullable_string("compute_capability").value_or("");
  if (auto bytes = m.nullable_number("memory_total_bytes", kBytesPerGiB, 1e15))
    r.device.memory = Bytes(*bytes);
  r.ftplan_gpu_id = m.nullable_string("ftplan_gpu_id").value_or("");
  r.ftplan_gpu_id_basis = m.required_string("ftplan_gpu_id_basis");
  m.finish();
}

void read_commands(StrictMap m) {
  for (const char* key : {"fit", "fit_allocated", "step"})
    m.required_string(key);
  StrictMap compare = m.required_map("compare");
  for (const char* key : {"peak_reserved_bytes", "peak_allocated_bytes", "median_s"})
    compare.required_string(key);
  compare.finish();
  m.finish();
}

// A group of keys is all there or all absent.
bool key_group(StrictMap& m, const std::vector<const char*>& keys) {
  const bool any = std::any_of(keys.begin(), keys.end(), [&](const char* k) { return m.has(k); });
  if (any)
    for (const char* k : keys)
      if (!m.has(k)) m.required_string(k);  // throws: missing
  return any;
}

void read_build(StrictMap& m, StepRow& row) {
  m.required_number("build_s", 0, 1e9);
  const std::string impl = m.required_choice("lora_impl", {"peft", "builtin", "none"});
  if ((impl == "none") != (row.method == "full"))
    m.fail("lora_impl", "'none' exactly for a full fine-tune (no adapter layers)");
  m.required_integer("total_params", 1, 1LL << 50);
  m.required_integer("trainable_params", 0, 1LL << 50);
  row.adapter_dtype = m.required_string("adapter_dtype");
  m.required_integer("nf4_weights", 0, 1LL << 50);
  m.required_integer("nf4_bytes", 0, 1LL << 50);
}

std::optional<Bytes> nullable_bytes(StrictMap& m, std::string_view key) {
  auto v = m.nullable_number(key, 0, 1e15);
  return v ? std::optional<Bytes>(Bytes(*v)) : std::nullopt;
}

void read_measurement(StrictMap& m, StepRow& row) {
  const double median = m.required_number("median_s", 1e-9, 1e6);
  const double min = m.required_number("min_s", 1e-9, 1e6);
  const double max = m.required_number("max_s", 1e-9, 1e6);
  if (!(min <= median && median <= max))
    m.fail("median_s", fmt::format("expected min_s <= median_s <= max_s, got {} <= {} <= {}", min,
                                   median, max));
  row.median = Seconds(median);
  const DocValue times = m.value("step_times_s");
  if (!times.is_sequence() || times.items().empty())
    m.fail("step_times_s", "expected a list of seconds per step");
  const double tokens_per_s = m.required_number("tokens_per_s", 0, 1e12);
  const double expected = static_cast<double>(row.micro_batch * row.seq) / median;
  if (!agrees(tokens_per_s, expected))
    m.fail("tokens_per_s", fmt::format("{} is not micro_batch × seq / median_s = {:.9g}: times "
                                       "are in seconds",
                                       tokens_per_s, expected));
  m.nullable_number("loss", -1e9, 1e9);
  nullable_bytes(m, "allocated_before_step_bytes");
  row.peak_allocated = nullable_bytes(m, "peak_allocated_bytes");
  row.peak_reserved = nullable_bytes(m, "peak_reserved_bytes");
  nullable_bytes(m, "device_used_after_bytes");
  if (row.peak_allocated && *row.peak_allocated < bytes_from_MiB(1))
    m.fail("peak_allocated_bytes", "less than 1 MiB: the key is in bytes (was GB written?)");
}

StepRow read_row(StrictMap& m) {
  StepRow row;
  row.id = m.required_string("id");
  row.where = fmt::format("{}: row '{}' (key '{}')", m.file(), row.id, m.path());
  row.model = m.required_string("model");
  row.method = m.required_choice("method", {"lora", "qlora", "full"});
  row.seq = m.required_integer("seq", 1, 1 << 24);
  row.micro_batch = m.required_integer("micro_batch", 1, 1 << 20);
  row.grad_accum = m.required_integer("grad_accum", 1, 1 << 20);
  const bool ckpt = m.required_bool("activation_checkpointing");
  row.recompute = m.required_choice("recompute", {"full", "none"});
  if (ckpt != (row.recompute == "full"))
    m.fail("recompute", "contradicts activation_checkpointing (on: full, off: none)");
  // A full fine-tune has no adapters: its rank is null; an adapter row's is a positive count.
  if (row.method == "full") {
    if (m.nullable_number("lora_rank", 0, 65536))
      m.fail("lora_rank", "expected null for a full fine-tune (it has no adapters)");
  } else {
    row.lora_rank = static_cast<int>(m.required_integer("lora_rank", 1, 65536));
  }
  row.status = m.required_choice("status", {"ok", "oom", "failed", "skipped"});
  row.reason = m.nullable_string("reason").value_or("");
  m.required_integer("warmup_steps", 1, 1 << 20);
  m.required_integer("steps", 1, 1 << 20);
  read_commands(m.required_map("ftplan"));
  const bool built = key_group(m, kBuildKeys);
  const bool measured = key_group(m, kMeasureKeys);
  if (row.ok() && !(built && measured))
    m.fail("status", "a row with status 'ok' needs its build and measurement keys");
  if (row.status == "oom" && (!built || measured))
    m.fail("status", "an 'oom' row has its build keys and no measurement");
  if (built) read_build(m, row);
  if (measured) read_measurement(m, row);
  m.finish();
  return row;
}

}  // namespace

StepResults parse_step_results(const DataFile& file) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  read_schema(root);
  StepResults r;
  r.file = file.path;
  r.note = root.optional_string("note").value_or("");
  root.required_string("tool");
  r.timestamp_utc = root.required_string("timestamp_utc");
  read_device(root.required_map("device"), r);
  read_software(root.required_map("software"));
  read_settings(root.required_map("settings"), r);
  root.nullable_number("elapsed_s", 0, 1e9);
  for (auto& m : root.map_list("rows", true))
    r.rows.push_back(read_row(m));
  if (r.rows.empty()) root.fail("rows", "the file holds no row");
  root.finish();
  return r;
}

Workload measured_workload(const StepResults& r, const StepRow& row, const Catalog& catalog,
                           const RuntimeOverheads& o, const StackProfile& stack, PeakKind peak) {
  Workload w;
  w.stack = &stack;
  w.model = catalog.model(row.model);
  w.method = parse_method(row.method);
  if (row.method != "full") w.lora.rank = row.lora_rank;
  w.lora.targets = parse_targets(fmt::format("{}", fmt::join(r.lora_targets, ",")), "lora_targets");
  w.optimizer = Optimizer::kAdamW;
  w.precision = ComputeFormat::kBF16;
  w.seq = row.seq;
  w.micro_batch = row.micro_batch;
  w.grad_accum = row.grad_accum;
  w.recompute = parse_recompute(row.recompute);
  w.attention = Attention::kFlash;
  w.quant = QuantConfig{};  // NF4, blocks of 64, double quantization in blocks of 256
  w.peak = peak;
  w.overheads = &o;
  validate(w);
  return w;
}

namespace {

std::optional<double> error_of(double predicted, const std::optional<Bytes>& measured) {
  if (!measured || measured->value <= 0) return std::nullopt;
  return relative_error(predicted, measured->value);
}

StepCheck check_row(const StepResults& r, const StepRow& row, const Catalog& catalog,
                    const RuntimeOverheads& o, const StackProfile& stack, const Placement& p,
                    const EfficiencyTable& e) {
  StepCheck c;
  c.row = &row;
  const Workload allocated = measured_workload(r, row, catalog, o, stack, PeakKind::kAllocated);
  const Workload reserved = measured_workload(r, row, catalog, o, stack, PeakKind::kReserved);
  c.allocated = estimate_memory(allocated, p);
  c.reserved = estimate_memory(reserved, p);
  const StepEstimate s = estimate_step(build_step_ops(reserved), make_device(p), e);
  if (!s.feasible) {
    c.reason = s.reason;
    return c;
  }
  c.predicted = true;
  c.step = s.step;
  if (!row.ok()) return c;
  c.error_step = relative_error(c.step.value, row.median.value);
  c.error_allocated = error_of(c.allocated.peak.value, row.peak_allocated);
  c.error_reserved = error_of(c.reserved.peak.value, row.peak_reserved);
  return c;
}

}  // namespace

std::vector<StepCheck> check_measured_steps(const StepResults& r, const Catalog& catalog,
                                            const RuntimeOverheads& o, const StackProfile& stack,
                                            const GpuSpec& gpu, const EfficiencyTable& e) {
  Placement p;
  p.gpu = &gpu;
  std::vector<StepCheck> out;
  for (const auto& row : r.rows)
    out.push_back(check_row(r, row, catalog, o, stack, p, e));
  return out;
}

std::vector<StepErrorSummary> summarize_step_errors(const std::vector<StepCheck>& checks) {
  std::vector<StepErrorSummary> out;
  auto add = [&](const char* figure, std::optional<double> StepCheck::*member) {
    std::vector<double> abs;
    for (const auto& c : checks)
      if (c.*member) abs.push_back(std::fabs(*(c.*member)));
    if (abs.empty()) return;
    out.push_back({figure, abs.size(), median_of(abs), *std::max_element(abs.begin(), abs.end())});
  };
  add("step time", &StepCheck::error_step);
  add("peak allocated", &StepCheck::error_allocated);
  add("peak reserved", &StepCheck::error_reserved);
  return out;
}

}  // namespace ftplan
