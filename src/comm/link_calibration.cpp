#include "comm/link_calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "catalog/figure_reader.hpp"
#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/numeric.hpp"

namespace ftplan {

namespace {

Collective collective_of(const std::string& name) {
  return name == "all_reduce" ? Collective::kAllReduce : Collective::kAllGather;
}

void read_schema(StrictMap& root) {
  const std::string schema = root.required_string("schema");
  if (schema != kNcclResultsSchema)
    root.fail("schema", fmt::format("schema '{}' is not supported: this ftplan reads '{}' "
                                    "(bench/nccl/allreduce.py)",
                                    schema, kNcclResultsSchema));
}

// A timed row's rates must follow from its bytes, time and nccl-tests' bus factor.
void check_row(StrictMap& m, const NcclRow& row, int world, double element_bytes,
               long long elements_per_rank) {
  const double factor = bus_factor(row.collective, world);
  if (!agrees(row.bus_factor, factor))
    m.fail("bus_factor",
           fmt::format("{} is not nccl-tests' factor {} for {} over {} ranks", row.bus_factor,
                       factor, collective_name(row.collective), world));
  const double total = static_cast<double>(elements_per_rank) * world * element_bytes;
  if (!agrees(row.bytes.value, total))
    m.fail("bytes", fmt::format("{} is not elements_per_rank × world_size × element size = {}",
                                row.bytes.value, total));
  if (row.status != "ok") return;
  const double algbw = row.bytes.value / row.median.value / 1e9;
  if (!agrees(to_GBps(row.algbw), algbw))
    m.fail("algbw_GBps", fmt::format("{} is not bytes / median_s / 10^9 = {:.9g}: rates are in "
                                     "GB/s (10^9 B/s) and times in seconds",
                                     to_GBps(row.algbw), algbw));
  if (!agrees(to_GBps(row.busbw), to_GBps(row.algbw) * row.bus_factor))
    m.fail("busbw_GBps", "is not algbw_GBps × bus_factor");
}

NcclRow read_row(StrictMap& m, int world, double element_bytes, const std::string& dtype) {
  NcclRow row;
  row.collective = collective_of(m.required_choice("collective", {"all_reduce", "all_gather"}));
  row.bytes = Bytes(m.required_number("bytes", 1, 1e15));
  const long long elements = m.required_integer("elements_per_rank", 1, 1LL << 50);
  if (m.required_string("dtype") != dtype) m.fail("dtype", "differs from the file's dtype");
  row.status = m.required_choice("status", {"ok", "oom", "failed"});
  const auto median = m.nullable_number("median_s", 1e-9, 1e4);
  m.nullable_number("min_s", 1e-9, 1e4);
  m.nullable_number("max_s", 1e-9, 1e4);
  row.bus_factor = m.required_number("bus_factor", 0, 2);
  const auto algbw = m.nullable_number("algbw_GBps", 0, 1e6);
  const auto busbw = m.nullable_number("busbw_GBps", 0, 1e6);
  m.required_integer("iters", 0, 1LL << 40);
  const bool check = m.required_bool("check_passed");
  m.finish();
  if (row.status == "failed" || (row.status == "ok" && !check))
    m.fail("status", fmt::format("the {} of {} did not return the expected values: its timing "
                                 "cannot calibrate anything; rerun the measurement",
                                 collective_name(row.collective), format_GB(row.bytes, 3)));
  if (row.status == "ok") {
    if (!median || !algbw || !busbw)
      m.fail("median_s", "a row with status 'ok' needs median_s, algbw_GBps and busbw_GBps");
    row.median = Seconds(*median);
    row.algbw = bytes_per_second_from_GBps(*algbw);
    row.busbw = bytes_per_second_from_GBps(*busbw);
  }
  check_row(m, row, world, element_bytes, elements);
  return row;
}

void read_bus_factors(StrictMap m) {
  m.required_string("all_reduce");
  m.required_string("all_gather");
  m.finish();
}

}  // namespace

NcclResults parse_nccl_results(const DataFile& file) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  read_schema(root);
  NcclResults r;
  r.file = file.path;
  r.note = root.optional_string("note").value_or("");
  r.status = root.required_choice("status", {"ok", "skipped"});
  r.torch = root.required_string("torch");
  if (r.status == "skipped") {
    r.reason = root.required_string("reason");
    root.required_integer("gpus", 0, 1 << 20);
    root.map_list("rows", true);
    root.finish();
    return r;
  }
  r.timestamp_utc = root.required_string("timestamp_utc");
  if (r.timestamp_utc.size() < 10 || r.timestamp_utc[4] != '-' || r.timestamp_utc[7] != '-')
    root.fail("timestamp_utc", "expected an ISO 8601 time like 2026-01-31T12:00:00Z");
  r.world_size = static_cast<int>(root.required_integer("world_size", 2, 1 << 20));
  r.devices = root.string_list("devices", true);
  if (r.devices.size() != static_cast<std::size_t>(r.world_size))
    root.fail("devices", fmt::format("{} names for world_size {}", r.devices.size(), r.world_size));
  r.nccl = root.required_string("nccl");
  r.dtype = root.required_choice("dtype", {"bf16", "fp32"});
  root.required_integer("warmup", 0, 1 << 20);
  root.required_integer("iters", 1, 1 << 20);
  root.required_string("bytes_counted");
  read_bus_factors(root.required_map("bus_factors"));
  const double element = r.dtype == "bf16" ? 2.0 : 4.0;
  for (auto& m : root.map_list("rows", true))
    r.rows.push_back(read_row(m, r.world_size, element, r.dtype));
  root.finish();
  return r;
}

std::optional<LinkLevel> implied_link(const GpuSpec& gpu) {
  if (gpu.nvlink.kind == LinkKind::kNone) return LinkLevel::kPcie;
  return std::nullopt;
}

BytesPerSecond nominal_per_direction(const GpuSpec& gpu, LinkLevel level) {
  return level == LinkLevel::kNvlink ? gpu.nvlink.per_direction() : gpu.pcie.per_direction();
}

namespace {

void check_level(const NcclResults& r, const GpuSpec& gpu, LinkLevel level) {
  auto fail = [&](const std::string& what) {
    throw UserError(ErrorCode::kInvalidValue, fmt::format("{}: {}", r.file, what), "link");
  };
  if (level == LinkLevel::kNetwork)
    fail(
        "an NCCL run on one machine (torchrun --standalone) crosses no network; give --link "
        "nvlink or pcie");
  if (level == LinkLevel::kNvlink && gpu.nvlink.kind == LinkKind::kNone)
    fail(fmt::format("{} has no NVLink ({}); the run crossed PCIe: --link pcie", gpu.id,
                     gpu.nvlink.note));
  if (level == LinkLevel::kNvlink && gpu.nvlink.kind == LinkKind::kBridge &&
      r.world_size > gpu.nvlink.bridge_max_cards)
    fail(
        fmt::format("{} ranks on {}: an NVLink bridge joins at most {} cards, so the ring "
                    "crossed PCIe too; measure within one bridged group",
                    r.world_size, gpu.id, gpu.nvlink.bridge_max_cards));
  if (nominal_per_direction(gpu, level).value <= 0)
    fail(fmt::format("{} has no nominal {} rate in its card data", gpu.id, link_level_name(level)));
}

std::vector<const NcclRow*> large_all_reduces(const NcclResults& r, Bytes from) {
  std::vector<const NcclRow*> out;
  for (const auto& row : r.rows)
    if (row.collective == Collective::kAllReduce && row.status == "ok" && row.bytes >= from)
      out.push_back(&row);
  return out;
}

}  // namespace

LinkFit fit_link_calibration(const NcclResults& r, const GpuSpec& gpu, LinkLevel level,
                             std::string_view match_basis, const CommConstants& k, Trace* trace) {
  if (r.status != "ok")
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: the NCCL run measured nothing ({})", r.file, r.reason),
                    "results");
  check_level(r, gpu, level);
  LinkFit fit;
  fit.rows = large_all_reduces(r, k.calibration_large_message);
  if (fit.rows.empty())
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: no all-reduce of at least {} MiB completed; the "
                                "large-message bus bandwidth needs them (run without "
                                "--max-bytes below that)",
                                r.file, k.calibration_large_message.value / kBytesPerMiB),
                    "results");
  std::vector<double> busbw;
  for (const NcclRow* row : fit.rows)
    busbw.push_back(row->busbw.value);
  fit.busbw = BytesPerSecond(median_of(busbw));
  fit.nominal = nominal_per_direction(gpu, level);
  const double fraction = fit.busbw / fit.nominal;  // achieved / nominal per direction
  if (fraction > 1.0)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: bus bandwidth {} exceeds the nominal {} per direction of {} "
                                "on {}: the run crossed a faster link (--link)",
                                r.file, format_GBps(fit.busbw, 1), format_GBps(fit.nominal),
                                link_level_name(level), gpu.id),
                    "link");
  const std::string basis = fmt::format(
      "median all-reduce bus bandwidth {} of {} buffers from {} to {} over {} ranks ({}, NCCL "
      "{}), over the nominal {} per direction",
      format_GBps(fit.busbw, 1), fit.rows.size(), format_GB(fit.rows.front()->bytes, 3),
      format_GB(fit.rows.back()->bytes, 3), r.world_size, r.dtype, r.nccl,
      format_GBps(fit.nominal));
  fit.calibration = {gpu.id, level, fraction, r.file, basis};
  fit.header.card = gpu.id;
  fit.header.measurement = fmt::format(
      "bench/nccl/allreduce.py: all-reduce and all-gather over {} ranks, torch {}, "
      "NCCL {}",
      r.world_size, r.torch, r.nccl);
  fit.header.date = r.date();
  fit.header.device = r.devices.front();
  fit.header.results = r.file;
  fit.header.note =
      fmt::format("card {}: {}; link {}", gpu.id, match_basis, link_level_name(level));
  if (!r.note.empty()) fit.header.note += fmt::format(". The results file says: {}", r.note);
  if (trace)
    trace->add({fmt::format("calibration.link.{}", link_level_name(level)),
                fmt::format("{} achieved fraction on {}", link_level_name(level), gpu.id),
                fraction,
                "fraction",
                "median busbw of the large all-reduces / nominal per-direction rate",
                {{"busbw", format_GBps(fit.busbw, 1)}, {"nominal", format_GBps(fit.nominal)}},
                r.file});
  return fit;
}

bool is_link_calibration(const DataFile& file) {
  const DocValue root = parse_document(file.text, file.path);
  return root.is_map() && StrictMap(root, file.path, "").has("links");
}

LinkCalibrationFile parse_link_calibration(
    const DataFile& file, const std::map<std::string, SourceInfo, std::less<>>& sources) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  LinkCalibrationFile f;
  f.name = root.required_string("name");
  f.description = root.required_string("description");
  if (!root.has("calibration")) root.required_map("calibration");  // throws: missing
  f.header = read_calibration_header(root);
  StrictMap links = root.required_map("links");
  for (LinkLevel level : {LinkLevel::kNvlink, LinkLevel::kPcie, LinkLevel::kNetwork}) {
    auto m = links.optional_map(link_level_name(level));
    if (!m) continue;
    const Figure<double> fraction =
        read_number_figure(*m, "achieved_fraction", 0.01, 1.0, sources, true);
    if (!fraction.value) m->fail("achieved_fraction", "a measured fraction must be a number");
    m->finish();
    f.links.push_back({f.header.card, level, *fraction.value, file.path, fraction.note});
  }
  links.finish();
  if (f.links.empty())
    root.fail("links", "expected at least one of nvlink, pcie, network with an achieved_fraction");
  root.finish();
  return f;
}

}  // namespace ftplan
