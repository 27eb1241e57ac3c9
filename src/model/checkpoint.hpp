// A checkpoint's tensor inventory from its safetensors headers (never its weights): what is stored
// (names, dtypes, shapes, bytes), the logical weights behind quantized storage (GPTQ, AWQ,
// bitsandbytes, FP8), and a cross-check against the inventory ftplan derives from config.json.
// Pure: the front end hands in the parsed headers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "model/model.hpp"
#include "model/safetensors.hpp"

namespace ftplan {

struct ShardHeader {
  std::string file;  // the shard's file name ("model-00001-of-00004.safetensors")
  SafetensorsHeader header;
};

// A weight as the model uses it: a plain tensor, or a quantized one folded from its parts.
struct LogicalTensor {
  std::string name;                 // "model.layers.0.self_attn.q_proj.weight"
  std::vector<std::int64_t> shape;  // empty when the storage does not tell (bitsandbytes 4-bit)
  std::int64_t numel = 0;
  std::uint64_t stored_bytes = 0;  // every stored part together
  std::string dtype;               // the main part's dtype
  std::string quantization;        // "" (plain), "gptq", "awq", "bnb-nf4", "bnb-int8", "fp8"
  int bits = 0;                    // bits per weight element as stored (0 for plain)
};

struct QuantizationFound {
  std::string scheme;
  int bits = 0;
  std::int64_t weights = 0;  // quantized weight tensors
  ParamCount params = 0;     // their logical elements
  std::uint64_t stored_bytes = 0;
};

struct DtypeUse {
  std::int64_t tensors = 0;
  std::uint64_t bytes = 0;
};

struct CheckpointInventory {
  std::vector<std::string> files;      // shard files, in index order
  std::vector<StoredTensor> stored;    // every stored tensor, sorted by name
  std::vector<LogicalTensor> logical;  // sorted by name
  std::uint64_t stored_bytes = 0;      // the tensors' bytes (headers excluded)
  ParamCount params = 0;               // logical elements
  std::map<std::string, DtypeUse> dtypes;
  std::vector<QuantizationFound> quantization;
  std::map<std::string, std::string> metadata;  // the first shard's __metadata__
  std::vector<std::string> notes;
};

// Builds the inventory from the shards' headers. With an index, every tensor must sit in the shard
// the index names and every listed tensor must exist; without one, the shards stand alone. A
// tensor in two shards is an error. `index_file` names the index in messages.
CheckpointInventory build_checkpoint_inventory(const std::vector<ShardHeader>& shards,
                                               const SafetensorsIndex* index,
                                               const std::string& index_file);

// A tensor pattern of an inventory: layer indices as {L}, expert indices as {E}
// ("model.layers.{L}.mlp.experts.{E}.up_proj.weight").
std::string tensor_pattern(std::string_view name);

struct ShapeDifference {
  std::string pattern;
  std::string config;      // "[4096, 4096] × 32"
  std::string checkpoint;  // "[4096, 1024] × 32"
};

struct CheckpointCheck {
  std::vector<std::string> only_in_config;      // patterns config.json implies, absent on disk
  std::vector<std::string> only_in_checkpoint;  // patterns on disk config.json does not imply
  std::vector<ShapeDifference> shape_differences;
  std::int64_t config_tensors = 0;  // concrete tensors (patterns × copies)
  std::int64_t checkpoint_tensors = 0;
  ParamCount config_params = 0;
  ParamCount checkpoint_params = 0;
  bool matches() const {
    return only_in_config.empty() && only_in_checkpoint.empty() && shape_differences.empty() &&
           config_params == checkpoint_params;
  }
};

// Compares the logical tensors on disk with the config-derived inventory, pattern by pattern.
CheckpointCheck cross_check(const CheckpointInventory& checkpoint, const ParamInventory& config);

// A model whose model_type ftplan does not know: its parameters counted from the checkpoint, its
// shape for the planner from config.json's generic keys (hidden_size, num_hidden_layers,
// num_attention_heads, num_key_value_heads, intermediate_size, vocab_size; head_dim,
// tie_word_embeddings, max_position_embeddings when present). A missing key is a UserError naming
// `file`.
ModelPtr model_from_checkpoint(std::string_view config_json, const std::string& file,
                               const std::string& id, const CheckpointInventory& checkpoint);

}  // namespace ftplan
