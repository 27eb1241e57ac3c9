#include "model/safetensors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/json_check.hpp"
#include "core/utf8.hpp"

namespace ftplan {

namespace {

using json = nlohmann::json;

struct DtypeBits {
  const char* name;
  int bits;
};

// The safetensors Dtype enum (safetensors/src/tensor.rs): element sizes in bits. F4 and F6 pack
// several elements per byte; a tensor of them must fill whole bytes.
constexpr DtypeBits kDtypes[] = {
    {"BOOL", 8},    {"U8", 8},   {"I8", 8},   {"F8_E4M3", 8}, {"F8_E5M2", 8},
    {"F8_E8M0", 8}, {"I16", 16}, {"U16", 16}, {"F16", 16},    {"BF16", 16},
    {"I32", 32},    {"U32", 32}, {"F32", 32}, {"F64", 64},    {"I64", 64},
    {"U64", 64},    {"C64", 64}, {"F4", 4},   {"F6_E2M3", 6}, {"F6_E3M2", 6},
};

// Most dimensions per tensor and most elements per tensor ftplan accepts (far above real ones;
// keeps every product exact in int64).
constexpr std::size_t kMaxRank = 16;
constexpr std::int64_t kMaxElements = std::int64_t{1} << 50;

[[noreturn]] void fail(ErrorCode code, const std::string& file, const std::string& key,
                       const std::string& what) {
  throw UserError(code, fmt::format("{}: {}", file, what), key.empty() ? file : key);
}

json parse_json_object(std::string_view text, const std::string& file, const char* what) {
  check_json_text(text, file, file);
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(ErrorCode::kBadFile, file, file,
         fmt::format("{} is not valid JSON (byte {}): {}", what, e.byte,
                     cut_utf8(printable_utf8(e.what()), 200)));
  } catch (const json::exception& e) {
    fail(ErrorCode::kBadFile, file, file,
         fmt::format("{} is not valid JSON: {}", what, cut_utf8(printable_utf8(e.what()), 200)));
  }
  if (!root.is_object())
    fail(ErrorCode::kBadFile, file, file,
         fmt::format("{} must be a JSON object, got {}", what, describe_json_value(root)));
  return root;
}

std::uint64_t non_negative(const json& v, const std::string& file, const std::string& key,
                           const std::string& what) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    fail(ErrorCode::kInvalidValue, file, key,
         fmt::format("{} must be a whole number >= 0, got {}", what, describe_json_value(v)));
  return v.get<std::uint64_t>();
}

StoredTensor read_tensor(const std::string& name, const json& v, const std::string& file) {
  const std::string key = shown_text(name);
  const std::string where = fmt::format("tensor '{}'", key);
  if (!v.is_object())
    fail(ErrorCode::kInvalidValue, file, key,
         fmt::format("{} must be an object with dtype, shape and data_offsets, got {}", where,
                     describe_json_value(v)));
  for (const auto& [k, unused] : v.items())
    if (k != "dtype" && k != "shape" && k != "data_offsets")
      fail(ErrorCode::kUnknownName, file, key,
           fmt::format("{} has an unknown key '{}' (expected dtype, shape, data_offsets)", where,
                       shown_text(k)));
  for (const char* k : {"dtype", "shape", "data_offsets"})
    if (!v.contains(k))
      fail(ErrorCode::kMissingKey, file, key, fmt::format("{} lacks the key '{}'", where, k));
  StoredTensor t;
  t.name = name;
  const json& dtype = v.at("dtype");
  if (!dtype.is_string() || safetensors_dtype_bits(dtype.get<std::string>()) == 0)
    fail(ErrorCode::kInvalidValue, file, key,
         fmt::format("{}: dtype {} is not a safetensors dtype (expected one of {})", where,
                     describe_json_value(dtype), fmt::join(safetensors_dtypes(), ", ")));
  t.dtype = dtype.get<std::string>();
  const json& shape = v.at("shape");
  if (!shape.is_array() || shape.size() > kMaxRank)
    fail(ErrorCode::kInvalidValue, file, key,
         fmt::format("{}: shape must be a list of at most {} whole numbers, got {}", where,
                     kMaxRank, describe_json_value(shape)));
  std::int64_t numel = 1;
  for (const auto& d : shape) {
    const std::uint64_t dim = non_negative(d, file, key, where + ": every shape entry");
    if (dim > static_cast<std::uint64_t>(kMaxElements) ||
        (dim > 0 && numel > kMaxElements / static_cast<std::int64_t>(dim)))
      fail(ErrorCode::kInvalidValue, file, key,
           fmt::format("{}: shape {} has more than 2^50 elements", where, shape.dump()));
    numel *= static_cast<std::int64_t>(dim);
    t.shape.push_back(static_cast<std::int64_t>(dim));
  }
  const json& offsets = v.at("data_offsets");
  if (!offsets.is_array() || offsets.size() != 2)
    fail(ErrorCode::kInvalidValue, file, key,
         fmt::format("{}: data_offsets must be a list [begin, end], got {}", where,
                     describe_json_value(offsets)));
  t.begin = non_negative(offsets[0], file, key, where + ": data_offsets begin");
  t.end = non_negative(offsets[1], file, key, where + ": data_offsets end");
  if (t.end < t.begin)
    fail(ErrorCode::kInvalidValue, file, key,
         fmt::format("{}: data_offsets [{}, {}] end before they begin", where, t.begin, t.end));
  // bytes = elements × bits / 8, whole bytes only (F4 and F6 pack elements into bytes).
  const int bits = safetensors_dtype_bits(t.dtype);
  const auto total_bits = static_cast<std::uint64_t>(numel) * static_cast<std::uint64_t>(bits);
  if (total_bits % 8 != 0)
    fail(ErrorCode::kInvalidValue, file, key,
         fmt::format("{}: {} elements of {} ({} bits each) do not fill whole bytes", where, numel,
                     t.dtype, bits));
  if (t.end - t.begin != total_bits / 8)
    fail(
        ErrorCode::kInvalidValue, file, key,
        fmt::format("{}: data_offsets [{}, {}] hold {} bytes; shape {} of {} needs {} bytes", where,
                    t.begin, t.end, t.end - t.begin, shape.dump(), t.dtype, total_bits / 8));
  return t;
}

bool plain_shard_name(const std::string& s) {
  if (s.empty() || s.size() > 255 || s.front() == '.' || !s.ends_with(".safetensors")) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

}  // namespace

int safetensors_dtype_bits(std::string_view dtype) {
  for (const auto& d : kDtypes)
    if (dtype == d.name) return d.bits;
  return 0;
}

const std::vector<std::string>& safetensors_dtypes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& d : kDtypes)
      out.emplace_back(d.name);
    return out;
  }();
  return names;
}

std::int64_t StoredTensor::numel() const {
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  return n;
}

std::uint64_t safetensors_header_length(std::string_view first_bytes, const std::string& file) {
  if (first_bytes.size() < 8)
    fail(ErrorCode::kBadFile, file, file,
         fmt::format("{} bytes: too short for a safetensors file (it starts with an 8-byte header "
                     "length)",
                     first_bytes.size()));
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(first_bytes[static_cast<std::size_t>(i)]);
  if (n < 2 || n > kMaxSafetensorsHeaderBytes)
    fail(ErrorCode::kBadFile, file, file,
         fmt::format("header length {} bytes (first 8 bytes, little-endian) is not from 2 to {}; "
                     "not a safetensors file?",
                     n, kMaxSafetensorsHeaderBytes));
  return n;
}

SafetensorsHeader parse_safetensors_header(std::string_view header, const std::string& file,
                                           std::optional<std::uint64_t> data_bytes_in_file) {
  if (header.empty() || header.front() != '{')
    fail(ErrorCode::kBadFile, file, file,
         "the header must be a JSON object starting with '{' right after the 8-byte length");
  // The writer may pad the header with spaces to align the data (format README).
  while (!header.empty() && header.back() == ' ')
    header.remove_suffix(1);
  if (!valid_utf8(header)) fail(ErrorCode::kBadFile, file, file, "the header is not valid UTF-8");
  const json root = parse_json_object(header, file, "the header");
  SafetensorsHeader out;
  for (const auto& [name, value] : root.items()) {
    if (name == "__metadata__") {
      if (!value.is_object())
        fail(ErrorCode::kInvalidValue, file, "__metadata__",
             fmt::format("'__metadata__' must map text to text, got {}",
                         describe_json_value(value)));
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string())
          fail(ErrorCode::kInvalidValue, file, "__metadata__." + shown_text(k),
               fmt::format("'__metadata__' key '{}' must be text, got {}", shown_text(k),
                           describe_json_value(v)));
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (name.empty()) fail(ErrorCode::kInvalidValue, file, file, "a tensor has an empty name");
    out.tensors.push_back(read_tensor(name, value, file));
  }
  // The tensors must tile the data buffer: no gap, no overlap (format README: "the byte buffer
  // needs to be entirely indexed, and cannot contain holes").
  std::vector<const StoredTensor*> by_offset;
  for (const auto& t : out.tensors)
    by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const auto* a, const auto* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::uint64_t at = 0;
  for (const auto* t : by_offset) {
    if (t->begin != at)
      fail(ErrorCode::kInvalidValue, file, shown_text(t->name),
           fmt::format("tensor '{}': data_offsets begin at {}, expected {} ({} the previous "
                       "tensor's end; tensors must tile the data without gaps or overlaps)",
                       shown_text(t->name), t->begin, at,
                       t->begin > at ? "a gap after" : "overlapping"));
    at = t->end;
  }
  out.data_bytes = at;
  // 2^50 bytes (1.1 PB) is far above any checkpoint and keeps every sum of elements exact.
  constexpr std::uint64_t kMaxDataBytes = std::uint64_t{1} << 50;
  if (at > kMaxDataBytes)
    fail(ErrorCode::kInvalidValue, file, file,
         fmt::format("the tensors cover {} bytes, more than the 2^50 bytes ftplan accepts", at));
  if (data_bytes_in_file && *data_bytes_in_file != at)
    fail(ErrorCode::kBadFile, file, file,
         fmt::format("the tensors cover {} data bytes but the file holds {} after the header", at,
                     *data_bytes_in_file));
  return out;
}

SafetensorsHeader parse_safetensors_prefix(std::string_view bytes, const std::string& file,
                                           bool whole_file) {
  const std::uint64_t n = safetensors_header_length(bytes, file);
  if (bytes.size() - 8 < n)
    fail(ErrorCode::kBadFile, file, file,
         fmt::format("the header length says {} bytes but only {} follow", n, bytes.size() - 8));
  std::optional<std::uint64_t> data;
  if (whole_file) data = bytes.size() - 8 - n;
  return parse_safetensors_header(bytes.substr(8, static_cast<std::size_t>(n)), file, data);
}

SafetensorsIndex parse_safetensors_index(std::string_view text, const std::string& file) {
  const json root = parse_json_object(text, file, "the index");
  SafetensorsIndex out;
  for (const auto& [k, unused] : root.items())
    if (k != "metadata" && k != "weight_map")
      fail(ErrorCode::kUnknownName, file, shown_text(k),
           fmt::format("unknown key '{}' (expected metadata, weight_map)", shown_text(k)));
  if (root.contains("metadata")) {
    const json& meta = root.at("metadata");
    if (!meta.is_object())
      fail(ErrorCode::kInvalidValue, file, "metadata",
           fmt::format("'metadata' must be an object, got {}", describe_json_value(meta)));
    if (meta.contains("total_size"))
      out.total_size =
          non_negative(meta.at("total_size"), file, "metadata.total_size", "'metadata.total_size'");
  }
  if (!root.contains("weight_map"))
    fail(ErrorCode::kMissingKey, file, "weight_map",
         "required key 'weight_map' (tensor name -> shard file) is missing");
  const json& map = root.at("weight_map");
  if (!map.is_object() || map.empty())
    fail(ErrorCode::kInvalidValue, file, "weight_map",
         fmt::format("'weight_map' must map tensor names to shard files, got {}",
                     describe_json_value(map)));
  std::set<std::string> shards;
  for (const auto& [name, v] : map.items()) {
    const std::string key = "weight_map." + shown_text(name);
    if (!v.is_string() || !plain_shard_name(v.get<std::string>()))
      fail(ErrorCode::kInvalidValue, file, key,
           fmt::format("'weight_map' entry '{}' must name a shard file (a plain name ending in "
                       ".safetensors, letters, digits, '-', '_', '.'), got {}",
                       shown_text(name), describe_json_value(v)));
    shards.insert(v.get<std::string>());
    if (shards.size() > kMaxSafetensorsShards)
      fail(ErrorCode::kInvalidValue, file, "weight_map",
           fmt::format("'weight_map' names more than {} shard files", kMaxSafetensorsShards));
    out.weight_map[name] = v.get<std::string>();
  }
  out.shards.assign(shards.begin(), shards.end());
  return out;
}

}  // namespace ftplan
