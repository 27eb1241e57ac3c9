// The safetensors format, header only: an 8-byte little-endian header length N, then N bytes of
// JSON (a map of tensor name -> {dtype, shape, data_offsets}, plus an optional "__metadata__" map
// of text to text), then the tensors' bytes. Format: github.com/huggingface/safetensors
// (README, "Format"). Sharded checkpoints add model.safetensors.index.json, whose "weight_map"
// names the shard file of every tensor.
//
// Pure: the functions take the bytes, the front end reads files or downloads ranges. Strict and
// bounded: every error is a UserError naming the file, the tensor or key, and what was expected.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ftplan {

// The most header bytes ftplan reads (the reference implementation's limit is also 100 MB).
inline constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;
// The most shard files an index may name.
inline constexpr std::size_t kMaxSafetensorsShards = 10'000;

// Bits per element of a safetensors dtype, or 0 for a name the format does not define.
int safetensors_dtype_bits(std::string_view dtype);
// The dtypes the format defines, for messages.
const std::vector<std::string>& safetensors_dtypes();

struct StoredTensor {
  std::string name;
  std::string dtype;  // "BF16", "I32", ...
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  // data_offsets, relative to the end of the header
  std::uint64_t end = 0;
  std::int64_t numel() const;
  std::uint64_t bytes() const { return end - begin; }
};

struct SafetensorsHeader {
  std::vector<StoredTensor> tensors;  // sorted by name
  std::map<std::string, std::string> metadata;
  std::uint64_t data_bytes = 0;  // the tensors' bytes together (the last data offset)
};

// The header length from the file's first 8 bytes (little-endian u64). Fewer than 8 bytes, a
// length under 2 or above kMaxSafetensorsHeaderBytes is a UserError naming `file`.
std::uint64_t safetensors_header_length(std::string_view first_bytes, const std::string& file);

// Parses the JSON header (the N bytes after the length; trailing spaces are padding). When
// `data_bytes_in_file` is known (a whole file: its size minus 8 minus N), the tensors must cover
// exactly that many bytes.
SafetensorsHeader parse_safetensors_header(std::string_view header, const std::string& file,
                                           std::optional<std::uint64_t> data_bytes_in_file = {});

// A whole safetensors file's bytes, or a prefix holding at least the header: the length and the
// header parsed together. `whole_file`: the bytes are the complete file (data size checked).
SafetensorsHeader parse_safetensors_prefix(std::string_view bytes, const std::string& file,
                                           bool whole_file);

struct SafetensorsIndex {
  std::map<std::string, std::string> weight_map;  // tensor name -> shard file name
  std::vector<std::string> shards;                // distinct shard files, sorted
  std::optional<std::uint64_t> total_size;        // metadata.total_size (bytes), when given
};

// model.safetensors.index.json: {"metadata": {...}, "weight_map": {name: file}}. Shard names must
// be plain file names ending in .safetensors (no folder part).
SafetensorsIndex parse_safetensors_index(std::string_view text, const std::string& file);

}  // namespace ftplan
