#include "memory/overheads.hpp"

#include <fmt/format.h>

#include <charconv>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"

namespace ftplan {

namespace {

using SourceTable = std::map<std::string, SourceInfo, std::less<>>;

constexpr const char* kOverheadsFile = "runtime/overheads.yaml";

// "9.0" -> {9, 0}; the error names the key.
std::pair<int, int> compute_capability(StrictMap& m, std::string_view key) {
  const std::string text = m.required_string(key);
  const auto dot = text.find('.');
  int major = 0, minor = 0;
  const bool ok = dot != std::string::npos &&
                  std::from_chars(text.data(), text.data() + dot, major).ptr == text.data() + dot &&
                  std::from_chars(text.data() + dot + 1, text.data() + text.size(), minor).ptr ==
                      text.data() + text.size() &&
                  major >= 1 && major <= 99 && minor >= 0 && minor <= 9;
  if (!ok) m.fail(key, fmt::format("expected a compute capability like \"9.0\", got '{}'", text));
  return {major, minor};
}

std::vector<WorkspaceRule> workspace_rules(StrictMap& root, std::string_view key,
                                           const SourceTable& sources) {
  std::vector<WorkspaceRule> rules;
  for (auto& r : root.map_list(key, true)) {
    WorkspaceRule rule;
    std::tie(rule.min_cc_major, rule.min_cc_minor) =
        compute_capability(r, "min_compute_capability");
    rule.min_memory_GiB = r.optional_number("min_memory_GiB", 0, 1e6).value_or(0);
    rule.size = bytes_from_MiB(r.required_number("MiB", 0, 65536));
    read_source_ids(r, sources);
    rule.basis = r.required_string("basis");
    r.finish();
    rules.push_back(std::move(rule));
  }
  if (rules.empty()) root.fail(key, "needs at least one rule");
  const WorkspaceRule& last = rules.back();
  if (last.min_cc_major > 1 || last.min_cc_minor > 0 || last.min_memory_GiB > 0)
    root.fail(key,
              "the last rule must apply to every card (min_compute_capability \"1.0\", no "
              "min_memory_GiB)");
  return rules;
}

Bytes workspace_for(const std::vector<WorkspaceRule>& rules, const GpuSpec& gpu) {
  for (const auto& r : rules) {
    const bool cc_ok = gpu.cc_major > r.min_cc_major ||
                       (gpu.cc_major == r.min_cc_major && gpu.cc_minor >= r.min_cc_minor);
    if (cc_ok && to_GiB(gpu.capacity()) >= r.min_memory_GiB) return r.size;
  }
  return rules.empty() ? Bytes(0) : rules.back().size;
}

}  // namespace

RuntimeOverheads parse_runtime_overheads(const DataFile& file, const SourceTable& sources) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  RuntimeOverheads t;
  t.file = file.path;
  {
    StrictMap m = root.required_map("cuda_context");
    t.cuda_context = bytes_from_MiB(m.required_number("MiB", 0, 65536));
    read_source_ids(m, sources);
    t.cuda_context_basis = m.required_string("basis");
    m.finish();
  }
  t.cublas = workspace_rules(root, "cublas_workspace", sources);
  t.cublaslt = workspace_rules(root, "cublaslt_workspace", sources);
  {
    StrictMap m = root.required_map("cudnn_workspace");
    if (!m.has("MiB") || !m.is_null("MiB"))
      m.fail("MiB", "cuDNN's workspace is not counted: give 'MiB: null' with a 'reason'");
    m.known("MiB");
    t.cudnn_reason = m.required_string("reason");
    read_source_ids(m, sources);
    m.finish();
  }
  {
    StrictMap m = root.required_map("nccl");
    t.nccl_buffer = bytes_from_MiB(m.required_number("buffer_MiB", 0, 65536));
    t.nccl_buffers_per_channel = static_cast<int>(m.required_integer("buffers_per_channel", 0, 64));
    t.nccl_channels = static_cast<int>(m.required_integer("channels", 0, 64));
    read_source_ids(m, sources);
    t.nccl_basis = m.required_string("basis");
    m.finish();
  }
  {
    StrictMap m = root.required_map("allocator_reserve");
    // The median share and its spread: low <= median <= high, each at most `max` (a share of the
    // step's memory; FSDP1's cache reaches beyond the step's own allocations).
    auto share = [](StrictMap& map, std::string_view key, std::string_view low_key,
                    std::string_view high_key, double max = 1) {
      RuntimeOverheads::ReserveShare r;
      r.median = map.required_number(key, 0, max);
      r.low = map.required_number(low_key, 0, max);
      r.high = map.required_number(high_key, 0, max);
      if (r.low > r.median)
        map.fail(low_key, fmt::format("{} is above the share it bounds ({}): expected a 10th "
                                      "percentile at most the median",
                                      r.low, r.median));
      if (r.high < r.median)
        map.fail(high_key, fmt::format("{} is below the share it bounds ({}): expected a 90th "
                                       "percentile at least the median",
                                       r.high, r.median));
      return r;
    };
    t.reserve_with_recompute =
        share(m, "fraction_with_recompute", "low_with_recompute", "high_with_recompute");
    t.reserve_without_recompute =
        share(m, "fraction_without_recompute", "low_without_recompute", "high_without_recompute");
    if (auto f = m.optional_map("fsdp1")) {
      RuntimeOverheads::Fsdp1Share& s = t.reserve_fsdp1;
      s.share = share(*f, "fraction", "low", "high", 8);
      for (StrictMap& run : f->map_list("runs", true)) {
        RuntimeOverheads::Fsdp1Run r;
        r.run = run.required_string("run");
        r.allocated_run = run.required_string("allocated_run");
        r.resident = Bytes(run.required_number("resident_bytes", 0, 1e15));
        run.finish();
        s.runs.push_back(std::move(r));
      }
      if (s.runs.empty())
        f->fail("runs",
                "lists no runs: name the runs the share was drawn from (run, "
                "allocated_run, resident_bytes)");
      s.sources = read_source_ids(*f, sources);
      s.basis = f->required_string("basis");
      f->finish();
    }
    t.allocator_reserve_sources = read_source_ids(m, sources);
    t.allocator_reserve_basis = m.required_string("basis");
    m.finish();
  }
  if (root.has("model_error")) {
    StrictMap m = root.required_map("model_error");
    RuntimeOverheads::ErrorSpread& e = t.model_error;
    e.rows = static_cast<int>(m.required_integer("rows", 1, 1000000));
    e.sources = static_cast<int>(m.required_integer("sources", 1, 1000000));
    if (e.sources > e.rows)
      m.fail("sources", fmt::format("{} sources for {} rows: expected at most one source per row",
                                    e.sources, e.rows));
    e.median_abs_error = m.required_number("median_abs_error", 0, 10);
    e.low = m.required_number("error_low", -0.9, 10);
    e.high = m.required_number("error_high", -0.9, 10);
    if (e.low > e.high)
      m.fail("error_low",
             fmt::format("error_low {} exceeds error_high {}: expected the 10th percentile at "
                         "most the 90th",
                         e.low, e.high));
    e.basis = m.required_string("basis");
    m.finish();
  }
  root.finish();
  return t;
}

RuntimeOverheads load_runtime_overheads(const Catalog& catalog) {
  const DataFile* f = catalog.file(kOverheadsFile);
  if (!f)
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("data/{} is missing: the runtime overheads table", kOverheadsFile),
                    "data");
  return parse_runtime_overheads(*f, catalog.sources());
}

OverheadBreakdown overheads_for(const RuntimeOverheads& t, const Placement& p, Bytes step_memory,
                                bool recomputes, bool fsdp1) {
  OverheadBreakdown o;
  o.cuda_context = t.cuda_context;
  o.cublas_workspace = workspace_for(t.cublas, *p.gpu);
  o.cublaslt_workspace = workspace_for(t.cublaslt, *p.gpu);
  // NCCL joins the cards of one run, model-parallel ones too; a MIG instance runs alone (NCCL
  // does not support MIG).
  if ((p.run_cards > 0 ? p.run_cards : p.count) > 1 && !p.mig)
    o.nccl_buffers = t.nccl_buffer * static_cast<double>(t.nccl_buffers_per_channel) *
                     static_cast<double>(t.nccl_channels);
  const bool sharded = (p.sharding == Sharding::kZero2 || p.sharding == Sharding::kFsdp ||
                        p.sharding == Sharding::kHsdp) &&
                       p.count > 1 && !p.mig;
  o.reserve_fsdp1 = fsdp1 && sharded && recomputes && t.reserve_fsdp1.present();
  const RuntimeOverheads::ReserveShare& r =
      o.reserve_fsdp1 ? t.reserve_fsdp1.share
                      : (recomputes ? t.reserve_with_recompute : t.reserve_without_recompute);
  o.allocator_reserve = step_memory * r.median;
  o.allocator_reserve_low = step_memory * r.low;
  o.allocator_reserve_high = step_memory * r.high;
  o.error_low = t.model_error.low;
  o.error_high = t.model_error.high;
  return o;
}

}  // namespace ftplan
