#include "perf/efficiency.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <cassert>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"

namespace ftplan {

std::size_t EfficiencyCurve::index_for(double size) const {
  assert(!ranges.empty());
  for (std::size_t i = 0; i + 1 < ranges.size(); ++i)
    if (size < ranges[i].below) return i;
  return ranges.size() - 1;
}

namespace {

using SourceTable = std::map<std::string, SourceInfo, std::less<>>;

EfficiencyRange parse_range(StrictMap& m, std::string_view bound_key, bool last,
                            const SourceTable& sources) {
  EfficiencyRange r;
  if (last) {
    if (m.has(bound_key))
      m.fail(bound_key,
             fmt::format("the last range of a curve has no upper bound: remove '{}'", bound_key));
  } else {
    r.below = m.required_number(bound_key, 1e-9, 1e12);
  }
  r.fraction = m.required_number("fraction", 1e-4, 1.0);
  r.basis = m.required_string("basis");
  r.sources = read_source_ids(m, sources);
  m.finish();
  return r;
}

// A curve: one map (a flat fraction) or a list of ranges with ascending bounds.
EfficiencyCurve parse_curve(StrictMap& parent, std::string_view key, std::string_view bound_key,
                            const SourceTable& sources) {
  EfficiencyCurve c;
  const DocValue n = parent.value(key);
  if (!n.defined()) parent.required_map(key);  // throws: missing key
  if (n.is_map()) {
    StrictMap m = parent.required_map(key);
    c.ranges.push_back(parse_range(m, bound_key, true, sources));
    return c;
  }
  if (!n.is_sequence() || n.items().empty())
    parent.fail(key, fmt::format("expected a map {{fraction, basis, source}} or a list of ranges "
                                 "with '{}', got {}",
                                 bound_key, describe_node(n)));
  std::vector<StrictMap> items = parent.map_list(key, true);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const bool last = i + 1 == items.size();
    EfficiencyRange r = parse_range(items[i], bound_key, last, sources);
    if (!c.ranges.empty() && !last && r.below <= c.ranges.back().below)
      items[i].fail(bound_key, fmt::format("ranges must ascend: {} follows {}", r.below,
                                           c.ranges.back().below));
    c.ranges.push_back(std::move(r));
  }
  return c;
}

ArchitectureScale parse_architecture(StrictMap& m, const std::string& name) {
  ArchitectureScale a;
  a.architecture = name;
  for (auto c : kAllOpClasses)
    a.compute[static_cast<std::size_t>(c)] =
        m.optional_number(op_class_name(c), 0.05, 5.0).value_or(1.0);
  a.basis = m.required_string("basis");
  m.finish();
  return a;
}

// attention_kernels.<architecture>.<kernel>: {forward, backward, basis, source}.
void parse_attention_kernels(StrictMap& arch, const std::string& architecture,
                             const SourceTable& sources,
                             std::vector<AttentionKernelFractions>& out) {
  for (const std::string& name : arch.keys()) {
    AttentionKernelFractions f;
    f.architecture = architecture;
    bool known = false;
    for (std::size_t i = 0; i < kAttentionKernelCount; ++i) {
      const auto k = static_cast<AttentionKernel>(i);
      if (attention_kernel_name(k) == name) {
        f.kernel = k;
        known = true;
      }
    }
    if (!known) arch.fail(name, fmt::format("unknown attention kernel '{}'; known: flash2", name));
    StrictMap m = arch.required_map(name);
    f.forward = m.required_number("forward", 1e-4, 1.0);
    f.backward = m.required_number("backward", 1e-4, 1.0);
    f.basis = m.required_string("basis");
    f.sources = read_source_ids(m, sources);
    m.finish();
    out.push_back(std::move(f));
  }
  arch.finish();
}

HostCosts parse_host(StrictMap& m) {
  HostCosts h;
  h.seconds_per_launch = m.required_number("launch_us", 0, 1000) * 1e-6;
  h.seconds_per_micro_batch = m.required_number("micro_batch_ms", 0, 100000) * 1e-3;
  StrictMap launches = m.required_map("launches");
  for (auto c : kAllOpClasses) {
    const auto i = static_cast<std::size_t>(c);
    StrictMap l = launches.required_map(op_class_name(c));
    h.launches_eager[i] = l.required_number("eager", 0, 1000);
    h.launches_compiled[i] = l.required_number("compiled", 0, 1000);
    l.finish();
  }
  launches.finish();
  h.basis = m.required_string("basis");
  m.finish();
  return h;
}

FitRecord parse_fit(StrictMap& m) {
  FitRecord f;
  f.runs = static_cast<int>(m.required_integer("runs", 1, 1000000));
  f.sources = static_cast<int>(m.required_integer("sources", 1, 1000000));
  f.median_abs_error = m.required_number("median_abs_error", 0, 100);
  f.loso_median_abs_error = m.required_number("loso_median_abs_error", 0, 100);
  f.error_low = m.required_number("error_low", -0.99, 100);
  f.error_high = m.required_number("error_high", -0.99, 100);
  if (f.error_low > f.error_high)
    m.fail("error_low",
           fmt::format("error_low {} exceeds error_high {}", f.error_low, f.error_high));
  f.basis = m.required_string("basis");
  m.finish();
  return f;
}

}  // namespace

double attention_kernel_fraction(const std::vector<AttentionKernelFractions>& table,
                                 std::string_view architecture, AttentionKernel kernel, Phase phase,
                                 double fallback) {
  if (kernel == AttentionKernel::kNone) return fallback;
  for (const auto& f : table)
    if (f.kernel == kernel && f.architecture == architecture)
      return phase == Phase::kBackward ? f.backward : f.forward;
  return fallback;
}

const ArchitectureScale* EfficiencyTable::scale_for(std::string_view architecture) const {
  for (const auto& a : architectures)
    if (a.architecture == architecture) return &a;
  return nullptr;
}

void inherit_host_and_fit(EfficiencyTable& table, const EfficiencyTable& defaults) {
  if (!table.host.present()) table.host = defaults.host;
  // A measured card's kernels are GEMMs and memory streams; its attention curve is the published
  // one, and so are the kernels' figures per architecture.
  if (table.attention_kernels.empty()) table.attention_kernels = defaults.attention_kernels;
  if (!table.fit.present()) table.fit = defaults.fit;
  if (!table.generation.present()) table.generation = defaults.generation;
}

EfficiencyTable parse_efficiency(const DataFile& file, const SourceTable& sources) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  EfficiencyTable t;
  t.file = file.path;
  t.name = root.required_string("name");
  t.description = root.required_string("description");
  t.calibration = read_calibration_header(root);
  StrictMap classes = root.required_map("classes");
  for (auto c : kAllOpClasses) {
    StrictMap m = classes.required_map(op_class_name(c));
    ClassEfficiency& e = t.classes[static_cast<std::size_t>(c)];
    e.compute = parse_curve(m, "compute", "below_GFLOP", sources);
    e.memory = parse_curve(m, "memory", "below_MB", sources);
    m.finish();
  }
  classes.finish();
  if (auto a = root.optional_map("architectures")) {
    for (const std::string& name : a->keys()) {
      StrictMap m = a->required_map(name);
      t.architectures.push_back(parse_architecture(m, name));
    }
    a->finish();
  }
  if (auto k = root.optional_map("attention_kernels")) {
    for (const std::string& name : k->keys()) {
      StrictMap m = k->required_map(name);
      parse_attention_kernels(m, name, sources, t.attention_kernels);
    }
    k->finish();
  }
  if (auto h = root.optional_map("host")) t.host = parse_host(*h);
  if (auto f = root.optional_map("fit")) t.fit = parse_fit(*f);
  if (auto g = root.optional_map("generation")) {
    t.generation.seconds_per_decode_layer = g->required_number("decode_layer_us", 0, 100000) * 1e-6;
    t.generation.basis = g->required_string("basis");
    if (auto f = g->optional_map("fit")) t.generation.fit = parse_fit(*f);
    g->finish();
  }
  root.finish();
  return t;
}

void check_architectures(const EfficiencyTable& table, const Catalog&) {
  // The names a card may give (not the cards' own: that would parse every card file for each
  // call; that each listed architecture has a card is a test of the built-in data).
  const std::vector<std::string>& known = known_architectures();
  std::vector<std::string> named;
  for (const auto& a : table.architectures)
    named.push_back(a.architecture);
  for (const auto& a : table.attention_kernels)
    named.push_back(a.architecture);
  for (const auto& name : named) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    const auto near = closest_names(name, known);
    throw UserError(
        ErrorCode::kUnknownName,
        fmt::format("{}: key 'architectures.{}': '{}' is not an architecture a card can have{}; "
                    "the architectures: {}",
                    table.file, name, name,
                    near.empty() ? "" : fmt::format(" (did you mean {}?)", fmt::join(near, ", ")),
                    fmt::join(known, ", ")),
        "architectures." + name);
  }
}

EfficiencyTable default_efficiency(const Catalog& catalog) {
  const DataFile* f = catalog.file("efficiency/default.yaml");
  if (!f)
    throw UserError(ErrorCode::kBadFile,
                    "data/efficiency/default.yaml is missing from the data files", "data");
  EfficiencyTable t = parse_efficiency(*f, catalog.sources());
  check_architectures(t, catalog);
  return t;
}

}  // namespace ftplan
