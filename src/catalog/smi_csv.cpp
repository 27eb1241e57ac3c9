#include "catalog/smi_csv.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>

#include "catalog/device_match.hpp"
#include "core/chars.hpp"
#include "core/error.hpp"

namespace ftplan {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const auto comma = line.find(',', start);
    out.push_back(
        trim(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start)));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

[[noreturn]] void bad_line(std::string_view file, int line, const std::string& what) {
  throw UserError(
      ErrorCode::kBadFile,
      fmt::format("{}: line {}: {}; expected the output of `{}`", file, line, what, kSmiQuery),
      "detect");
}

// A number with an optional unit ("81559", "81559 MiB", "700.00 W"); none for "[N/A]" and the
// like. Anything else is an error naming the field.
std::optional<double> read_number(std::string_view field, std::string_view unit,
                                  std::string_view what, std::string_view file, int line) {
  if (field.empty() || field.front() == '[' || field == "N/A") return std::nullopt;
  std::string_view digits = field;
  if (digits.ends_with(unit)) digits = trim(digits.substr(0, digits.size() - unit.size()));
  double value = 0;
  const auto [ptr, ec] = chars_to_double(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || !(value >= 0) || value > 1e9)
    bad_line(file, line, fmt::format("{} '{}' is not a number (in {})", what, field, unit));
  return value;
}

}  // namespace

std::vector<SmiDevice> parse_smi_csv(std::string_view text, std::string_view file) {
  std::vector<SmiDevice> out;
  int line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trim(text.substr(start, end - start));
    start = end + 1;
    ++line_number;
    if (line.empty()) continue;
    const auto fields = split_fields(line);
    if (fields.front() == "name") continue;  // the header of --format=csv
    if (fields.size() > 4)
      bad_line(file, line_number,
               fmt::format("{} comma-separated fields where 4 were expected (name, "
                           "memory.total, power.limit, pci.bus_id)",
                           fields.size()));
    SmiDevice d;
    d.line = line_number;
    d.name = std::string(fields[0]);
    if (d.name.empty() || d.name.size() > 200)
      bad_line(file, line_number, "the device name is empty or too long");
    for (char c : d.name)
      if (static_cast<unsigned char>(c) < 0x20)
        bad_line(file, line_number, "the device name holds a control character");
    if (fields.size() > 1)
      d.memory_MiB = read_number(fields[1], "MiB", "memory.total", file, line_number);
    if (fields.size() > 2)
      d.power_limit_W = read_number(fields[2], "W", "power.limit", file, line_number);
    if (fields.size() > 3) d.bus_id = std::string(fields[3]);
    out.push_back(std::move(d));
  }
  if (out.empty())
    throw UserError(
        ErrorCode::kBadFile,
        fmt::format("{}: no GPU listed; expected one line per device from `{}`", file, kSmiQuery),
        "detect");
  return out;
}

int DetectedMachine::device_count() const {
  int n = 0;
  for (const auto& g : groups)
    n += g.count();
  return n;
}

const DetectedGroup& DetectedMachine::single_card() const {
  std::vector<std::string> kinds;
  for (const auto& g : groups)
    kinds.push_back(fmt::format("{}x {} ({})", g.count(), g.smi_name,
                                g.gpu ? g.gpu->id : "not in the catalog"));
  if (groups.size() > 1)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: the machine has different cards: {}; --gpu local needs one "
                                "kind: name the card with --gpu ID (and the count with --gpus)",
                                file, fmt::join(kinds, ", ")),
                    "gpu");
  const DetectedGroup& g = groups.front();
  if (!g.gpu)
    throw UserError(ErrorCode::kUnknownName,
                    fmt::format("{}: {}x {}: {}", file, g.count(), g.smi_name, g.problem), "gpu");
  return g;
}

DetectedMachine detect_cards(const Catalog& catalog, const std::vector<SmiDevice>& devices,
                             std::string_view file) {
  DetectedMachine m;
  m.file = std::string(file);
  for (const auto& d : devices) {
    DetectedGroup* group = nullptr;
    for (auto& g : m.groups)
      if (g.smi_name == d.name) group = &g;
    if (!group) {
      m.groups.push_back({});
      group = &m.groups.back();
      group->smi_name = d.name;
    }
    group->devices.push_back(d);
  }
  for (auto& g : m.groups) {
    DeviceIdentity id;
    id.name = g.smi_name;
    if (g.devices.front().memory_MiB) id.memory = bytes_from_MiB(*g.devices.front().memory_MiB);
    try {
      const CardMatch match = match_card(catalog, id, file);
      g.gpu = match.gpu;
      g.basis = match.basis;
    } catch (const UserError& e) {
      g.problem = e.what();
    }
  }
  return m;
}

}  // namespace ftplan
