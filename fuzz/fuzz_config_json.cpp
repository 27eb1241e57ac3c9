// Fuzzes the Hugging Face config.json reader and the parameter inventory built from what it
// accepts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "model/config_reader.hpp"
#include "model/params.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    ftplan::ModelArch arch = ftplan::read_hf_config(text, "fuzz.json", "fuzz");
    ftplan::ParamInventory inv = ftplan::build_param_inventory(arch);
    if (inv.total <= 0) __builtin_trap();  // an accepted config always has parameters
  } catch (const ftplan::UserError&) {
    // Rejected input is the expected outcome for most of the corpus.
  }
  return 0;
}
