// Fuzzes the trainer-file reader (--from: PEFT, axolotl, torchtune, LLaMA-Factory, Transformers,
// DeepSpeed, accelerate): any text is read or refused with a UserError; every setting it returns
// is one of the run settings ftplan knows, and every used or ignored entry names its key.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "workload/trainer_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::string> ids = {"llama-3.1-8b", "llama-3.1-70b", "qwen3-8b",
                                               "mistral-7b-v0.3", "phi-4"};
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ftplan::TrainerFile f = ftplan::read_trainer_file(text, "fuzz.yaml", ids);
    const auto& keys = ftplan::trainer_setting_keys();
    for (const auto& s : f.used) {
      if (std::find(keys.begin(), keys.end(), s.as) == keys.end()) __builtin_trap();
      if (s.key.empty()) __builtin_trap();
    }
    for (const auto& k : f.ignored)
      if (k.why.empty()) __builtin_trap();
  } catch (const ftplan::UserError&) {
  }
  return 0;
}
