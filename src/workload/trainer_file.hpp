// The training files fine-tuners already have, read as ftplan run settings: a PEFT
// adapter_config.json, an axolotl YAML, a torchtune recipe YAML, a LLaMA-Factory YAML, Hugging
// Face TrainingArguments / TRL SFTConfig (JSON or YAML), a DeepSpeed ds_config.json and an
// accelerate config. Each key the file sets either becomes a run setting (its name as in runs
// files: micro_batch, recompute, ...) or is listed as ignored with the reason, so a user sees what
// the estimate does not model.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ftplan {

enum class TrainerFormat {
  kPeftAdapter,
  kHfTrainer,
  kAxolotl,
  kTorchtune,
  kLlamaFactory,
  kDeepSpeed,
  kAccelerate,
};
std::string_view trainer_format_name(TrainerFormat f);

// One key of the file that became a run setting.
struct TrainerSetting {
  std::string key;    // the file's key path ("per_device_train_batch_size", "model.lora_rank")
  std::string value;  // its value as written
  std::string as;     // the run setting it sets ("micro_batch"); see kTrainerSettingKeys
  std::string to;     // the setting's value in ftplan's words ("4", "paged-adamw-8bit")
};

// A key the estimate does not use, and why.
struct IgnoredKey {
  std::string key;
  std::string why;
};

struct TrainerFile {
  std::string file;
  TrainerFormat format = TrainerFormat::kHfTrainer;
  std::vector<TrainerSetting> used;
  std::vector<IgnoredKey> ignored;
  // The value of run setting `as` (the last key that set it), or empty.
  std::string setting(std::string_view as) const;
};

// The run settings a trainer file may set: the runs file's keys, plus grad_accum, shard,
// gpu_count and pure_bf16, which only some commands take.
const std::vector<std::string>& trainer_setting_keys();

// Reads `text` (JSON or YAML) and tells its format from its keys. `file` names it in messages;
// `model_ids` are the catalog's model ids, which torchtune's builder names
// ("qlora_llama3_1_8b") are matched to. A malformed file, or a value that names something ftplan
// does not know (an optimizer, a PEFT type), is a UserError naming the file, key and value.
TrainerFile read_trainer_file(std::string_view text, const std::string& file,
                              const std::vector<std::string>& model_ids);

}  // namespace ftplan
