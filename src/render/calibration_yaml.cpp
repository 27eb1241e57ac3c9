#include "render/calibration_yaml.hpp"

#include <algorithm>

#include <yaml-cpp/yaml.h>

#include <cmath>

namespace ftplan {

namespace {

// Nine significant digits: a fraction read back differs from the fitted one by < 1e-8.
constexpr std::size_t kDigits = 9;

std::string commented(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines)
    out += "# " + line + "\n";
  return out;
}

void emit_sources(YAML::Emitter& e, const std::vector<std::string>& sources) {
  e << YAML::Key << "source" << YAML::Value;
  if (sources.size() == 1) {
    e << sources.front();
    return;
  }
  e << YAML::Flow << YAML::BeginSeq;
  for (const auto& s : sources)
    e << s;
  e << YAML::EndSeq;
}

void emit_header(YAML::Emitter& e, const CalibrationHeader& h) {
  e << YAML::Key << "calibration" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "card" << YAML::Value << h.card;
  e << YAML::Key << "measurement" << YAML::Value << h.measurement;
  e << YAML::Key << "date" << YAML::Value << YAML::DoubleQuoted << h.date;
  for (const auto& [key, value] : {std::pair{"device", &h.device}, std::pair{"driver", &h.driver},
                                   std::pair{"results", &h.results}, std::pair{"note", &h.note}})
    if (!value->empty()) e << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << *value;
  e << YAML::EndMap;
}

void emit_curve(YAML::Emitter& e, const char* key, const EfficiencyCurve& c, const char* bound) {
  e << YAML::Key << key << YAML::Value << YAML::BeginSeq;
  for (const auto& r : c.ranges) {
    e << YAML::BeginMap;
    if (!std::isinf(r.below)) e << YAML::Key << bound << YAML::Value << r.below;
    e << YAML::Key << "fraction" << YAML::Value << r.fraction;
    e << YAML::Key << "basis" << YAML::Value << YAML::DoubleQuoted << r.basis;
    emit_sources(e, r.sources);
    e << YAML::EndMap;
  }
  e << YAML::EndSeq;
}

}  // namespace

std::string efficiency_yaml(const EfficiencyTable& t, const std::vector<std::string>& comment) {
  YAML::Emitter e;
  e.SetDoublePrecision(kDigits);
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << t.name;
  e << YAML::Key << "description" << YAML::Value << YAML::DoubleQuoted << t.description;
  if (t.is_calibration()) emit_header(e, t.calibration);
  e << YAML::Key << "classes" << YAML::Value << YAML::BeginMap;
  for (auto c : kAllOpClasses) {
    e << YAML::Key << std::string(op_class_name(c)) << YAML::Value << YAML::BeginMap;
    emit_curve(e, "compute", t.of(c).compute, "below_GFLOP");
    emit_curve(e, "memory", t.of(c).memory, "below_MB");
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
  // The sections a table may carry besides its classes, as parse_efficiency reads them.
  if (t.host.present()) {
    e << YAML::Key << "host" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "launch_us" << YAML::Value << t.host.seconds_per_launch * 1e6;
    e << YAML::Key << "micro_batch_ms" << YAML::Value << t.host.seconds_per_micro_batch * 1e3;
    e << YAML::Key << "launches" << YAML::Value << YAML::BeginMap;
    for (auto c : kAllOpClasses) {
      const auto i = static_cast<std::size_t>(c);
      e << YAML::Key << std::string(op_class_name(c)) << YAML::Value << YAML::Flow << YAML::BeginMap
        << YAML::Key << "eager" << YAML::Value << t.host.launches_eager[i] << YAML::Key
        << "compiled" << YAML::Value << t.host.launches_compiled[i] << YAML::EndMap;
    }
    e << YAML::EndMap;
    e << YAML::Key << "basis" << YAML::Value << YAML::DoubleQuoted << t.host.basis;
    e << YAML::EndMap;
  }
  if (!t.architectures.empty()) {
    e << YAML::Key << "architectures" << YAML::Value << YAML::BeginMap;
    for (const auto& a : t.architectures) {
      e << YAML::Key << a.architecture << YAML::Value << YAML::BeginMap;
      for (auto c : kAllOpClasses) {
        const double v = a.compute[static_cast<std::size_t>(c)];
        if (v != 1.0) e << YAML::Key << std::string(op_class_name(c)) << YAML::Value << v;
      }
      e << YAML::Key << "basis" << YAML::Value << YAML::DoubleQuoted << a.basis;
      e << YAML::EndMap;
    }
    e << YAML::EndMap;
  }
  if (!t.attention_kernels.empty()) {
    e << YAML::Key << "attention_kernels" << YAML::Value << YAML::BeginMap;
    std::vector<std::string> done;
    for (const auto& a : t.attention_kernels) {
      if (std::find(done.begin(), done.end(), a.architecture) != done.end()) continue;
      done.push_back(a.architecture);
      e << YAML::Key << a.architecture << YAML::Value << YAML::BeginMap;
      for (const auto& k : t.attention_kernels) {
        if (k.architecture != a.architecture) continue;
        e << YAML::Key << std::string(attention_kernel_name(k.kernel)) << YAML::Value
          << YAML::BeginMap;
        e << YAML::Key << "forward" << YAML::Value << k.forward;
        e << YAML::Key << "backward" << YAML::Value << k.backward;
        e << YAML::Key << "basis" << YAML::Value << YAML::DoubleQuoted << k.basis;
        emit_sources(e, k.sources);
        e << YAML::EndMap;
      }
      e << YAML::EndMap;
    }
    e << YAML::EndMap;
  }
  if (t.fit.present()) {
    e << YAML::Key << "fit" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "runs" << YAML::Value << t.fit.runs;
    e << YAML::Key << "sources" << YAML::Value << t.fit.sources;
    e << YAML::Key << "median_abs_error" << YAML::Value << t.fit.median_abs_error;
    e << YAML::Key << "loso_median_abs_error" << YAML::Value << t.fit.loso_median_abs_error;
    e << YAML::Key << "error_low" << YAML::Value << t.fit.error_low;
    e << YAML::Key << "error_high" << YAML::Value << t.fit.error_high;
    e << YAML::Key << "basis" << YAML::Value << YAML::DoubleQuoted << t.fit.basis;
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
  return commented(comment) + e.c_str() + "\n";
}

std::string link_calibration_yaml(const LinkFit& fit, const std::vector<std::string>& comment) {
  const LinkCalibration& c = fit.calibration;
  YAML::Emitter e;
  e.SetDoublePrecision(kDigits);
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value
    << c.card + "-" + std::string(link_level_name(c.level)) + "-calibration";
  e << YAML::Key << "description" << YAML::Value << YAML::DoubleQuoted
    << "achieved fraction of " + c.card + "'s nominal " + std::string(link_level_name(c.level)) +
           " rate measured with NCCL (bench/nccl/allreduce.py)";
  emit_header(e, fit.header);
  e << YAML::Key << "links" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << std::string(link_level_name(c.level)) << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "achieved_fraction" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "value" << YAML::Value << c.achieved_fraction;
  e << YAML::Key << "source" << YAML::Value << std::string(kNcclMeasurementSource);
  e << YAML::Key << "note" << YAML::Value << YAML::DoubleQuoted << c.basis;
  e << YAML::EndMap << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  return commented(comment) + e.c_str() + "\n";
}

}  // namespace ftplan
