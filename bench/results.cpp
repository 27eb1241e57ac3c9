#include "results.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace ftplan::bench {

namespace {

// A JSON number: integers below 2^53 exactly, others with 9 significant digits; NaN and
// infinities (which JSON cannot carry) as null.
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char text[64];
  if (std::fabs(v) < 9007199254740992.0 && v == std::floor(v))
    std::snprintf(text, sizeof text, "%.0f", v);
  else
    std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

std::string json_number(std::optional<double> v) {
  return v ? json_number(*v) : "null";
}

std::string json_string(const std::optional<std::string>& s) {
  return s ? json_quote(*s) : "null";
}

// Writes one object member per call, with commas and indentation.
class ObjectWriter {
 public:
  ObjectWriter(std::ostringstream& out, int indent) : out_(out), indent_(indent) { out_ << "{"; }
  void raw(std::string_view key, const std::string& json) {
    out_ << (first_ ? "\n" : ",\n") << std::string(static_cast<std::size_t>(indent_ + 2), ' ')
         << json_quote(key) << ": " << json;
    first_ = false;
  }
  void str(std::string_view key, std::string_view value) { raw(key, json_quote(value)); }
  void num(std::string_view key, double value) { raw(key, json_number(value)); }
  void boolean(std::string_view key, bool value) { raw(key, value ? "true" : "false"); }
  void close() { out_ << "\n" << std::string(static_cast<std::size_t>(indent_), ' ') << "}"; }

 private:
  std::ostringstream& out_;
  int indent_;
  bool first_ = true;
};

std::string shape_json(const std::vector<Dimension>& shape) {
  std::string out = "{";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += json_quote(shape[i].name) + ": " + json_number(static_cast<double>(shape[i].value));
  }
  return out + "}";
}

std::string optional_text(const std::string& s) {
  return s.empty() ? "null" : json_quote(s);
}

void write_benchmark(std::ostringstream& out, const BenchResult& b) {
  ObjectWriter o(out, 4);
  o.str("id", b.id);
  o.str("class", b.bench_class);
  o.str("op", b.op);
  o.raw("model", optional_text(b.model));
  o.raw("projection", optional_text(b.projection));
  o.raw("shape", shape_json(b.shape));
  o.raw("layout", optional_text(b.layout));
  o.str("dtype", b.dtype);
  o.str("output_dtype", b.output_dtype);
  o.raw("accumulate", optional_text(b.accumulate));
  o.num("flops", b.flops);
  o.num("bytes", b.bytes);
  o.str("bytes_counted", b.bytes_counted);
  o.str("status", status_name(b.status));
  o.raw("reason", optional_text(b.reason));
  const bool timed = b.status == Status::kOk;
  o.raw("median_s", timed ? json_number(b.timing.median_s) : "null");
  o.raw("min_s", timed ? json_number(b.timing.min_s) : "null");
  o.raw("max_s", timed ? json_number(b.timing.max_s) : "null");
  o.raw("achieved_TFLOPS", timed ? json_number(b.achieved_TFLOPS()) : "null");
  o.raw("achieved_GBps", timed ? json_number(b.achieved_GBps()) : "null");
  o.num("repeats", b.timing.repeats);
  o.num("launches_per_repeat", b.timing.launches_per_repeat);
  o.num("warmup_launches", b.timing.warmup_launches);
  o.num("input_sets", b.timing.input_sets);
  o.boolean("cuda_graph", b.timing.cuda_graph);
  std::ostringstream check;
  {
    ObjectWriter c(check, 6);
    c.boolean("passed", b.check.passed);
    c.str("metric", b.check.metric);
    c.num("max_error", b.check.max_error);
    c.num("bound", b.check.bound);
    c.num("samples", static_cast<double>(b.check.samples));
    c.close();
  }
  o.raw("check", check.str());
  o.close();
}

}  // namespace

TimingStats summarize(std::vector<double> per_launch_s) {
  TimingStats t;
  if (per_launch_s.empty()) return t;
  std::sort(per_launch_s.begin(), per_launch_s.end());
  const std::size_t n = per_launch_s.size();
  t.median_s =
      n % 2 == 1 ? per_launch_s[n / 2] : 0.5 * (per_launch_s[n / 2 - 1] + per_launch_s[n / 2]);
  t.min_s = per_launch_s.front();
  t.max_s = per_launch_s.back();
  t.repeats = static_cast<int>(n);
  return t;
}

std::string_view status_name(Status s) {
  switch (s) {
    case Status::kOk:
      return "ok";
    case Status::kFailed:
      return "failed";
    case Status::kSkipped:
      return "skipped";
  }
  return "skipped";
}

double BenchResult::achieved_TFLOPS() const {
  return timing.median_s > 0.0 ? flops / timing.median_s / 1e12 : 0.0;
}

double BenchResult::achieved_GBps() const {
  return timing.median_s > 0.0 ? bytes / timing.median_s / 1e9 : 0.0;
}

std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string to_json(const RunReport& r) {
  std::ostringstream out;
  ObjectWriter top(out, 0);
  top.str("schema", kResultsSchema);
  if (r.note) top.str("note", *r.note);
  top.str("tool", "ftplan-bench");
  top.str("tool_version", r.tool_version);
  top.str("timestamp_utc", r.timestamp_utc);
  top.num("elapsed_s", r.elapsed_s);

  std::ostringstream settings;
  {
    ObjectWriter s(settings, 2);
    s.boolean("quick", r.settings.quick);
    s.num("warmup", r.settings.warmup);
    s.num("repeats", r.settings.repeats);
    s.num("min_repeat_s", r.settings.min_repeat_s);
    s.str("filter", r.settings.filter);
    s.str("command_line", r.settings.command_line);
    s.close();
  }
  top.raw("settings", settings.str());

  const DeviceReport& d = r.device;
  std::ostringstream device;
  {
    ObjectWriter s(device, 2);
    s.str("name", d.name);
    s.str("compute_capability", d.compute_capability);
    s.num("sm_count", d.sm_count);
    s.num("memory_total_bytes", static_cast<double>(d.memory_total_bytes));
    s.num("l2_cache_bytes", static_cast<double>(d.l2_cache_bytes));
    s.num("memory_bus_width_bits", d.memory_bus_width_bits);
    s.str("pci_bus_id", d.pci_bus_id);
    s.raw("driver_version", json_string(d.driver_version));
    s.str("cuda_driver_api_version", d.cuda_driver_api_version);
    s.str("cuda_runtime_version", d.cuda_runtime_version);
    s.str("cublaslt_version", d.cublaslt_version);
    std::ostringstream clocks;
    {
      ObjectWriter c(clocks, 4);
      c.str("source", d.clocks_source);
      c.raw("sm_max_MHz", json_number(d.sm_clock_max_MHz));
      c.raw("memory_max_MHz", json_number(d.memory_clock_max_MHz));
      c.raw("sm_at_start_MHz", json_number(d.sm_clock_start_MHz));
      c.raw("sm_at_end_MHz", json_number(d.sm_clock_end_MHz));
      c.close();
    }
    s.raw("clocks", clocks.str());
    s.raw("power_limit_W", json_number(d.power_limit_W));
    s.raw("temperature_at_end_C", json_number(d.temperature_end_C));
    s.close();
  }
  top.raw("device", device.str());

  std::ostringstream list;
  list << "[";
  for (std::size_t i = 0; i < r.benchmarks.size(); ++i) {
    list << (i == 0 ? "\n    " : ",\n    ");
    write_benchmark(list, r.benchmarks[i]);
  }
  list << (r.benchmarks.empty() ? "]" : "\n  ]");
  top.raw("benchmarks", list.str());
  top.close();
  out << "\n";
  return out.str();
}

}  // namespace ftplan::bench
