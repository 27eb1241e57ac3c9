#include "perf/efficiency.hpp"

#include <fmt/format.h>

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
  YAML::Node n = parent.raw(key);
  if (!n.IsDefined()) parent.required_map(key);  // throws: missing key
  if (n.IsMap()) {
    StrictMap m = parent.required_map(key);
    c.ranges.push_back(parse_range(m, bound_key, true, sources));
    return c;
  }
  if (!n.IsSequence() || n.size() == 0)
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

}  // namespace

EfficiencyTable parse_efficiency(const DataFile& file, const SourceTable& sources) {
  StrictMap root(parse_yaml_document(file.text, file.path), file.path, "");
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
  root.finish();
  return t;
}

EfficiencyTable default_efficiency(const Catalog& catalog) {
  const DataFile* f = catalog.file("efficiency/default.yaml");
  if (!f)
    throw UserError(ErrorCode::kBadFile,
                    "data/efficiency/default.yaml is missing from the data files", "data");
  return parse_efficiency(*f, catalog.sources());
}

}  // namespace ftplan
