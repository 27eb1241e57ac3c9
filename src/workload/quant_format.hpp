// Quantized formats of a frozen base (data/quant_formats.yaml, --base-quant): how each stores a
// linear weight W [out × in], and the one formula that counts its bytes and its dequantization.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"

namespace ftplan {

// Which weights share one scale (and zero).
enum class QuantGrouping {
  kFlat,       // blocks of `group` consecutive weights of the flattened tensor (bitsandbytes, HQQ)
  kRowGroups,  // groups of `group` input features of one output row (GPTQ, AWQ); 0: whole row
  kRow,        // one scale per output row (LLM.int8)
  kBlocks2d,   // group × group blocks (FP8 checkpoints); 0: one scale for the tensor
};
// How the codes are packed into words.
enum class QuantPack {
  kFlat,  // the flattened tensor, `container_bits` words
  kIn,    // along the input dimension: [ceil(in·bits/container), out] words (GPTQ qweight)
  kOut,   // along the output dimension: [in, ceil(out·bits/container)] words (AWQ qweight)
};

// The stored layout of a frozen quantized weight. The defaults are NF4 with double quantization
// as QLoRA counts it (4 + 8/64 + 32/(64·256) = 4.127 bits), the seed's accounting; the data row
// `nf4` holds the same figures (a test keeps the two equal).
struct QuantConfig {
  std::string format = "nf4";
  int bits = 4;
  int block = 64;  // weights per group (`--quant-group`, `--quant-block`); 0: whole row / tensor
  bool double_quant = true;
  int second_block = 256;  // absmax values per second-level block
  QuantGrouping grouping = QuantGrouping::kFlat;
  QuantPack pack = QuantPack::kFlat;
  int container_bits = 8;
  double scale_bytes = 4;               // per group (NF4: FP32 absmax without double quantization)
  double double_quant_scale_bytes = 1;  // per group with double quantization (8-bit absmax)
  double double_quant_constant_bytes = 4;  // per second-level block (FP32)
  int zero_bits = 0;                       // per group; packed like the codes along `out`
  double index_bytes_per_input = 0;        // GPTQ g_idx
  double dequant_flops_per_weight = 1;
  double dequant_output_bytes = 2;  // the dequantized weight's dtype (BF16 / FP16)
};

// One format as the data file gives it: its layout and where the figures come from.
struct QuantFormat {
  std::string id;    // "gptq-int4"
  std::string name;  // "GPTQ int4 (AutoGPTQ / GPTQModel)"
  QuantConfig config;
  int group_min = 1;      // smallest valid --quant-group (0: whole row / tensor allowed)
  int group_max = 65536;  // largest (int8: 0, row-wise only)
  std::string basis;
  std::vector<std::string> sources;
};

struct QuantFormats {
  std::vector<QuantFormat> formats;
  // The format `id` (UserError naming `field` and the closest id otherwise).
  const QuantFormat& find(std::string_view id, std::string_view field = "base_quant") const;
  std::vector<std::string> ids() const;
  static constexpr std::string_view kDataFile = "quant_formats.yaml";
};
QuantFormats parse_quant_formats(const DataFile& file,
                                 const std::map<std::string, SourceInfo, std::less<>>& sources);
QuantFormats load_quant_formats(const Catalog& catalog);

// `format`'s layout with group size `group` (nullopt-like -1: the format's default): the config a
// workload carries. A group outside the format's range is a UserError naming `field`.
QuantConfig quant_config(const QuantFormat& format, int group = -1,
                         std::string_view field = "quant_group");

// The base format of a run as its options give it (CLI, runs files, pack files, measured runs):
// `format` (empty: nf4), `group` and the older `block` (-1: not given; both given must agree),
// `double_quant` and `second_block` (-1: the format's) where the format double-quantizes.
// `method_quantizes`: the method keeps a quantized base (qlora, qdora); a format given to any
// other method is a UserError naming `base_quant`.
struct BaseQuantOptions {
  std::string format;
  int group = -1;
  int block = -1;
  int second_block = -1;
  bool double_quant = true;
};
QuantConfig base_quant_config(const QuantFormats& formats, const BaseQuantOptions& o,
                              bool method_quantizes, std::string_view method);

// Bytes of one quantized weight matrix [out × in] as stored, exactly (partial groups and packing
// words rounded up as the libraries allocate them).
struct QuantLayoutBytes {
  double codes = 0;      // packed weight codes
  double constants = 0;  // scales, zeros, second-level constants, indices
  double total() const { return codes + constants; }
};
QuantLayoutBytes quantized_matrix_bytes(std::int64_t out, std::int64_t in, const QuantConfig& q);

// What dequantizing one [out × in] weight to its compute dtype costs, once per use (forward,
// and again in the backward pass): the stored bytes read, the 16-bit weight written, the FLOPs.
struct DequantCost {
  double bytes_read = 0;
  double bytes_written = 0;
  double flops = 0;
};
DequantCost dequant_cost(std::int64_t out, std::int64_t in, const QuantConfig& q);

}  // namespace ftplan
