// Fuzzes the safetensors header parser, the index reader and what is built from what they accept:
// the checkpoint inventory (quantized storage folded into weights), its cross-check against a
// config-derived inventory, and a model counted from the headers.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "model/checkpoint.hpp"
#include "model/config_reader.hpp"
#include "model/safetensors.hpp"

namespace {

constexpr const char* kConfig = R"({"model_type": "llama", "hidden_size": 8,
  "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
  "intermediate_size": 16, "vocab_size": 10})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    if (!bytes.empty() && bytes.front() == '{') {
      // An index: every shard it names must be a plain file name.
      const auto index = ftplan::parse_safetensors_index(bytes, "fuzz.index.json");
      for (const auto& shard : index.shards)
        if (shard.find('/') != std::string::npos) __builtin_trap();
      return 0;
    }
    // A safetensors file: the last bit of the size decides whether the data must follow.
    const auto header = ftplan::parse_safetensors_prefix(bytes, "fuzz.safetensors", size % 2 == 1);
    std::uint64_t covered = 0;
    for (const auto& t : header.tensors)
      covered += t.bytes();
    if (covered != header.data_bytes) __builtin_trap();  // the tensors tile the data
    const auto inv =
        ftplan::build_checkpoint_inventory({{"fuzz.safetensors", header}}, nullptr, "");
    if (inv.stored_bytes != header.data_bytes) __builtin_trap();
    const auto arch = ftplan::read_hf_config(kConfig, "config.json", "tiny");
    ftplan::cross_check(inv, ftplan::build_param_inventory(arch));
    ftplan::model_from_checkpoint(kConfig, "config.json", "fuzz", inv);
  } catch (const ftplan::UserError&) {
    // Rejected input is the expected outcome for most of the corpus.
  }
  return 0;
}
