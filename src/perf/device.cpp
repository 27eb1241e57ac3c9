#include "perf/device.hpp"

#include <fmt/format.h>

#include <cassert>
#include <cctype>
#include <cmath>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
#include "perf/ops.hpp"

namespace ftplan {

namespace {

std::string vendor_label(const GpuSpec& g) {
  if (g.vendor == "nvidia") return "NVIDIA";
  if (g.vendor == "amd") return "AMD";
  return g.vendor;
}

// "NVIDIA RTX PRO 6000 ..." -> "RTX PRO 6000 ..." (the vendor is named separately).
std::string name_without_vendor(const GpuSpec& g) {
  const std::string prefix = vendor_label(g) + " ";
  return g.name.rfind(prefix, 0) == 0 ? g.name.substr(prefix.size()) : g.name;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<double> Device::ops_per_byte(TensorPrecision p) const {
  auto r = rate(p);
  if (!r || bandwidth.value <= 0) return std::nullopt;
  return ftplan::ops_per_byte(*r, bandwidth);
}

std::string Device::name() const {
  if (!gpu) return "?";
  std::string n = mig ? fmt::format("{} instance of {}", mig->name, gpu->name) : gpu->name;
  if (power_limit_W > 0)
    n += fmt::format(" capped at {} W (clock × {:.3f})", power_limit_W, clock_scale);
  return n;
}

Reason Device::missing_rate(TensorPrecision p) const {
  const auto& f = gpu->tensor_figure(p);
  Reason r(f.unknown_reason.empty() ? ReasonCode::kNoDenseRate : ReasonCode::kNoDenseRateBecause);
  r.name("vendor", vendor_label(*gpu))
      .name("format", upper(tensor_precision_name(p)))
      .name("card", name_without_vendor(*gpu));
  if (!f.unknown_reason.empty()) r.quote("why", f.unknown_reason);
  return r;
}

Reason Device::missing_vector_rate() const {
  const auto& f = gpu->fp32_TFLOPS;
  Reason r(f.unknown_reason.empty() ? ReasonCode::kNoVectorRate : ReasonCode::kNoVectorRateBecause);
  r.name("vendor", vendor_label(*gpu)).name("card", name_without_vendor(*gpu));
  if (!f.unknown_reason.empty()) r.quote("why", f.unknown_reason);
  return r;
}

Device make_device(const GpuSpec& g) {
  Device d;
  d.gpu = &g;
  for (auto p : kAllTensorPrecisions)
    d.tensor_rate[static_cast<std::size_t>(p)] = g.dense_rate(p);
  if (g.fp32_TFLOPS.value && *g.fp32_TFLOPS.value > 0)
    d.vector_rate = flops_per_second_from_TFLOPS(*g.fp32_TFLOPS.value);
  d.bandwidth = g.bandwidth();
  return d;
}

Device make_device(const GpuSpec& g, const MigProfile& m) {
  Device d = make_device(g);
  d.mig = &m;
  d.compute_share = static_cast<double>(m.compute_slices) / g.mig.compute_slices;
  d.memory_share = static_cast<double>(m.memory_slices) / g.mig.memory_slices;
  for (auto& r : d.tensor_rate)
    if (r) *r *= d.compute_share;
  if (d.vector_rate) *d.vector_rate *= d.compute_share;
  d.bandwidth *= d.memory_share;
  d.assumption = fmt::format(
      "{}: rates × {}/{} compute slices, bandwidth × {}/{} memory slices (assumes an instance gets "
      "that share of the SMs and memory controllers)",
      m.name, m.compute_slices, g.mig.compute_slices, m.memory_slices, g.mig.memory_slices);
  return d;
}

Device make_device(const Placement& p) {
  assert(p.gpu);
  return p.mig ? make_device(*p.gpu, *p.mig) : make_device(*p.gpu);
}

// ---- training formats
// ----------------------------------------------------------------------------

namespace {

using SourceTable = std::map<std::string, SourceInfo, std::less<>>;

int parse_cc(StrictMap& m, std::string_view key) {
  const std::string s = m.required_string(key);
  int major = 0, minor = 0;
  if (!parse_compute_capability(s, major, minor))
    m.fail(key, fmt::format("expected a compute capability like \"8.9\", got '{}'", s));
  return major * 10 + minor;
}

}  // namespace

TrainingFormats TrainingFormats::parse(const DataFile& file, const SourceTable& sources) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  TrainingFormats t;
  t.file_ = file.path;
  std::array<bool, 5> seen{};
  for (auto& m : root.map_list("formats", true)) {
    TrainingFormat f;
    const std::string id = m.required_choice("id", compute_format_names());
    f.format = parse_compute_format(id);
    f.name = m.required_string("name");
    f.description = m.required_string("description");
    for (auto& r : m.map_list("rules", true)) {
      FormatRule rule;
      if (r.has("min_cc")) rule.min_cc = parse_cc(r, "min_cc");
      rule.vendor = r.optional_choice("vendor", {"nvidia", "amd"}).value_or("");
      rule.supported = r.required_bool("supported");
      rule.reason = r.optional_string("reason").value_or("");
      rule.caveat = r.optional_string("caveat").value_or("");
      if (!rule.supported && rule.reason.empty())
        r.fail("reason", "an unsupported rule needs a 'reason' saying why");
      rule.sources = read_source_ids(r, sources);
      r.finish();
      f.rules.push_back(std::move(rule));
    }
    if (f.rules.empty()) m.fail("rules", "a format needs at least one rule");
    if (f.rules.back().min_cc || !f.rules.back().vendor.empty())
      m.fail("rules",
             "the last rule must have no min_cc and no vendor, so that every card is covered");
    m.finish();
    const auto i = static_cast<std::size_t>(f.format);
    if (seen[i]) m.fail("id", fmt::format("format '{}' is listed twice", id));
    seen[i] = true;
    t.formats_[i] = std::move(f);
  }
  for (std::size_t i = 0; i < seen.size(); ++i)
    if (!seen[i])
      root.fail("formats", fmt::format("format '{}' is missing",
                                       compute_format_name(static_cast<ComputeFormat>(i))));
  root.finish();
  return t;
}

FormatSupport TrainingFormats::check(const GpuSpec& g, ComputeFormat f) const {
  const TrainingFormat& tf = format(f);
  const bool cc_known = g.compute_capability.known();
  const int cc = g.cc_major * 10 + g.cc_minor;
  FormatSupport s;
  s.format = f;
  for (const auto& rule : tf.rules) {
    if (!rule.vendor.empty() && rule.vendor != g.vendor) continue;
    if (rule.min_cc && (!cc_known || cc < *rule.min_cc)) continue;
    s.supported = rule.supported;
    s.reason = rule.reason;
    s.caveat = rule.caveat;
    s.sources = rule.sources;
    if (!s.supported && !cc_known) s.reason += " (the card's compute capability is unknown)";
    return s;
  }
  return s;  // unreachable: the last rule has no min_cc (checked when parsing)
}

void TrainingFormats::require(const GpuSpec& g, ComputeFormat f) const {
  const FormatSupport s = check(g, f);
  if (s.supported) return;
  throw UserError(
      ErrorCode::kUnsupported,
      fmt::format("{} training is not supported on {} (compute capability {}): {}; "
                  "choose another precision or card",
                  format(f).name, g.name, g.compute_capability.value.value_or("unknown"), s.reason),
      "precision");
}

TrainingFormats load_training_formats(const Catalog& catalog) {
  const DataFile* f = catalog.file("training_formats.yaml");
  if (!f)
    throw UserError(ErrorCode::kBadFile,
                    "data/training_formats.yaml is missing from the data files", "data");
  return TrainingFormats::parse(*f, catalog.sources());
}

PowerScaling load_power_scaling(const Catalog& catalog) {
  const DataFile* f = catalog.file("runtime/power.yaml");
  if (!f)
    throw UserError(ErrorCode::kBadFile, "data/runtime/power.yaml is missing from the data files",
                    "data");
  StrictMap root(parse_document(f->text, f->path), f->path, "");
  PowerScaling s;
  {
    StrictMap m = root.required_map("clock_exponent");
    s.clock_exponent = m.required_number("value", 0, 1);
    read_source_ids(m, catalog.sources());
    s.basis = m.required_string("basis");
    m.finish();
  }
  {
    StrictMap m = root.required_map("min_share_of_tdp");
    s.min_share_of_tdp = m.required_number("value", 0.01, 1);
    read_source_ids(m, catalog.sources());
    m.required_string("basis");
    m.finish();
  }
  root.finish();
  return s;
}

Device apply_power_limit(Device d, double limit_W, const PowerScaling& s, std::string_view field) {
  if (limit_W <= 0 || !d.gpu) return d;
  const double tdp = d.gpu->tdp_W.value.value_or(0);
  if (tdp <= 0)
    throw UserError(
        ErrorCode::kUnsupported,
        fmt::format("{} has no TDP in its data: a power limit cannot be applied", d.gpu->name),
        std::string(field));
  if (limit_W < s.min_share_of_tdp * tdp)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("a power limit of {} W is below {:.0f} % of the {}'s {} W TDP; "
                                "give at least {:.0f} W",
                                limit_W, 100 * s.min_share_of_tdp, d.gpu->name, tdp,
                                std::ceil(s.min_share_of_tdp * tdp)),
                    std::string(field));
  if (limit_W >= tdp) return d;
  d.power_limit_W = limit_W;
  d.clock_scale = std::pow(limit_W / tdp, s.clock_exponent);
  for (auto& r : d.tensor_rate)
    if (r) *r *= d.clock_scale;
  if (d.vector_rate) *d.vector_rate *= d.clock_scale;
  return d;
}

}  // namespace ftplan
