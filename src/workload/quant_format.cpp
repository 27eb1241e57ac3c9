#include "workload/quant_format.hpp"

#include <fmt/format.h>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
#include "core/name_table.hpp"

namespace ftplan {

namespace {

constexpr NameTable<QuantGrouping, 4> kGroupings{{{
    {QuantGrouping::kFlat, "flat"},
    {QuantGrouping::kRowGroups, "row-groups"},
    {QuantGrouping::kRow, "row"},
    {QuantGrouping::kBlocks2d, "blocks-2d"},
}}};
constexpr NameTable<QuantPack, 3> kPacks{{{
    {QuantPack::kFlat, "flat"},
    {QuantPack::kIn, "in"},
    {QuantPack::kOut, "out"},
}}};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// Bytes of `count` values of `bits` each, packed into `container`-bit words.
double packed_bytes(std::int64_t count, int bits, int container) {
  return static_cast<double>(ceil_div(count * bits, container) * container / 8);
}

QuantFormat parse_format(StrictMap& m, const std::map<std::string, SourceInfo, std::less<>>& src) {
  QuantFormat f;
  f.id = m.required_string("id");
  f.name = m.required_string("name");
  QuantConfig& q = f.config;
  q.format = f.id;
  q.bits = static_cast<int>(m.required_integer("bits", 1, 16));
  q.grouping = kGroupings.parse(m.required_choice("grouping", kGroupings.names()), "grouping",
                                m.where("grouping"));
  q.block = static_cast<int>(m.required_integer("group", 0, 65536));
  f.group_min = static_cast<int>(m.required_integer("group_min", 0, 65536));
  f.group_max = static_cast<int>(m.optional_integer("group_max", 0, 65536).value_or(65536));
  if (q.block < f.group_min || q.block > f.group_max)
    m.fail("group", fmt::format("the default group {} is outside group_min {} .. group_max {}",
                                q.block, f.group_min, f.group_max));
  if (f.group_min == 0 && q.grouping == QuantGrouping::kFlat)
    m.fail("group_min", "flat blocks need at least one weight per block (group_min >= 1)");
  q.pack = kPacks.parse(m.required_choice("pack", kPacks.names()), "pack", m.where("pack"));
  q.container_bits = static_cast<int>(m.required_integer("container_bits", 8, 64));
  if (q.container_bits % 8 != 0 || q.container_bits % q.bits != 0)
    m.fail("container_bits",
           fmt::format("{} is not a whole number of bytes holding whole {}-bit codes",
                       q.container_bits, q.bits));
  q.scale_bytes = m.required_number("scale_bytes", 0, 8);
  q.zero_bits = static_cast<int>(m.required_integer("zero_bits", 0, 32));
  q.double_quant = false;
  if (auto dq = m.optional_map("double_quant")) {
    q.double_quant = dq->required_bool("enabled");
    q.double_quant_scale_bytes = dq->required_number("scale_bytes", 0, 8);
    q.second_block = static_cast<int>(dq->required_integer("block", 1, 65536));
    q.double_quant_constant_bytes = dq->required_number("constant_bytes", 0, 8);
    dq->finish();
  }
  q.index_bytes_per_input = m.required_number("index_bytes_per_input", 0, 8);
  q.dequant_flops_per_weight = m.required_number("dequant_flops_per_weight", 0, 100);
  q.dequant_output_bytes = m.required_number("dequant_output_bytes", 1, 4);
  f.basis = m.required_string("basis");
  f.sources = read_source_ids(m, src);
  m.finish();
  return f;
}

}  // namespace

const QuantFormat& QuantFormats::find(std::string_view id, std::string_view field) const {
  for (const auto& f : formats)
    if (f.id == id) return f;
  throw_unknown_name("quantized base format", field, id, ids());
}

std::vector<std::string> QuantFormats::ids() const {
  std::vector<std::string> out;
  for (const auto& f : formats)
    out.push_back(f.id);
  return out;
}

QuantFormats parse_quant_formats(const DataFile& file,
                                 const std::map<std::string, SourceInfo, std::less<>>& sources) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  QuantFormats out;
  for (auto& m : root.map_list("formats", true)) {
    QuantFormat f = parse_format(m, sources);
    for (const auto& g : out.formats)
      if (g.id == f.id) m.fail("id", fmt::format("format '{}' is defined twice", f.id));
    out.formats.push_back(std::move(f));
  }
  root.finish();
  if (out.formats.empty() || out.formats.front().id != "nf4")
    root.fail("formats", "the first format must be nf4, the default of --method qlora");
  return out;
}

QuantFormats load_quant_formats(const Catalog& catalog) {
  const DataFile* f = catalog.file(QuantFormats::kDataFile);
  if (!f)
    throw UserError(
        ErrorCode::kBadFile,
        fmt::format("data/{} is missing: the quantized base formats", QuantFormats::kDataFile),
        "data");
  return parse_quant_formats(*f, catalog.sources());
}

QuantConfig quant_config(const QuantFormat& format, int group, std::string_view field) {
  QuantConfig q = format.config;
  if (group < 0) return q;
  if (group < format.group_min || group > format.group_max) {
    std::string expected =
        format.group_max == 0
            ? std::string("only 0: it keeps one scale per output row")
            : fmt::format("{} to {}{}", format.group_min, format.group_max,
                          format.group_min == 0
                              ? (format.config.grouping == QuantGrouping::kBlocks2d
                                     ? " (0: one scale for the whole tensor)"
                                     : " (0: one group over the whole input row)")
                              : "");
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{} group size {} is not valid for {}: expected {}", field, group,
                                format.id, expected),
                    std::string(field));
  }
  q.block = group;
  return q;
}

QuantConfig base_quant_config(const QuantFormats& formats, const BaseQuantOptions& o,
                              bool method_quantizes, std::string_view method) {
  if (!o.format.empty() && !method_quantizes)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("base_quant {} needs a method with a frozen quantized base (qlora "
                                "or qdora), got {}",
                                o.format, method),
                    "base_quant");
  const QuantFormat& f = formats.find(o.format.empty() ? "nf4" : o.format, "base_quant");
  if (o.group >= 0 && o.block >= 0 && o.group != o.block)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("quant_group {} and quant_block {} disagree: both set the weights "
                                "per quantization group; give one",
                                o.group, o.block),
                    "quant_group");
  QuantConfig q = quant_config(f, o.group >= 0 ? o.group : o.block,
                               o.group >= 0 ? "quant_group" : "quant_block");
  if (q.double_quant) {
    q.double_quant = o.double_quant;
    if (o.second_block >= 0) q.second_block = o.second_block;
  }
  return q;
}

QuantLayoutBytes quantized_matrix_bytes(std::int64_t out, std::int64_t in, const QuantConfig& q) {
  const std::int64_t n = out * in;
  QuantLayoutBytes b;
  switch (q.pack) {
    case QuantPack::kFlat:
      b.codes = packed_bytes(n, q.bits, q.container_bits);
      break;
    case QuantPack::kIn:
      b.codes = packed_bytes(in, q.bits, q.container_bits) * static_cast<double>(out);
      break;
    case QuantPack::kOut:
      b.codes = packed_bytes(out, q.bits, q.container_bits) * static_cast<double>(in);
      break;
  }
  std::int64_t groups = 1;
  double zeros = 0;
  switch (q.grouping) {
    case QuantGrouping::kFlat:
      groups = ceil_div(n, q.block);
      zeros = packed_bytes(groups, q.zero_bits, 8);
      break;
    case QuantGrouping::kRowGroups: {
      const std::int64_t per_row = q.block == 0 ? 1 : ceil_div(in, q.block);
      groups = per_row * out;
      // Zeros packed along the output dimension, one row of words per input group (qzeros).
      zeros = packed_bytes(out, q.zero_bits, q.container_bits) * static_cast<double>(per_row);
      break;
    }
    case QuantGrouping::kRow:
      groups = out;
      zeros = packed_bytes(groups, q.zero_bits, 8);
      break;
    case QuantGrouping::kBlocks2d:
      groups = q.block == 0 ? 1 : ceil_div(out, q.block) * ceil_div(in, q.block);
      zeros = packed_bytes(groups, q.zero_bits, 8);
      break;
  }
  const double g = static_cast<double>(groups);
  const double scales = q.double_quant ? g * q.double_quant_scale_bytes +
                                             static_cast<double>(ceil_div(groups, q.second_block)) *
                                                 q.double_quant_constant_bytes
                                       : g * q.scale_bytes;
  b.constants = scales + zeros + static_cast<double>(in) * q.index_bytes_per_input;
  return b;
}

DequantCost dequant_cost(std::int64_t out, std::int64_t in, const QuantConfig& q) {
  const QuantLayoutBytes stored = quantized_matrix_bytes(out, in, q);
  const double n = static_cast<double>(out) * static_cast<double>(in);
  DequantCost c;
  c.bytes_read = stored.total();
  c.bytes_written = n * q.dequant_output_bytes;
  c.flops = n * q.dequant_flops_per_weight;
  // Double quantization first restores each block's absmax: one multiply per block.
  if (q.double_quant && q.grouping == QuantGrouping::kFlat)
    c.flops += static_cast<double>(ceil_div(out * in, q.block));
  return c;
}

}  // namespace ftplan
