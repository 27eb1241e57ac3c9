// The training files fine-tuners already have, read as ftplan run settings: a PEFT
// adapter_config.json, an axolotl YAML, a torchtune recipe YAML, a LLaMA-Factory YAML, Hugging
// Face TrainingArguments / TRL SFTConfig (JSON or YAML), a DeepSpeed ds_config.json, an
// accelerate config and a LitGPT config. Each key the file sets either becomes a run setting (its
// name as in runs files: micro_batch, recompute, ...) or is listed as ignored with the reason, so a
// user sees what the estimate does not model.
#pragma once

#include <functional>
#include <optional>
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
  kLitgpt,
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
  // The run setting the key names in a form ftplan could not take ("model": a torchtune builder
  // no catalog model matches; "method": a TRL preference config, whose trainer is not named), so
  // that a command missing that setting can say why; empty otherwise.
  std::string setting = {};
};

// Another file a trainer file names by path (`deepspeed: ds_config.json`), to be read in its turn.
struct FileReference {
  std::string key;   // the naming key ("deepspeed", "deepspeed_config.deepspeed_config_file")
  std::string path;  // as written
  TrainerFormat format = TrainerFormat::kDeepSpeed;
};

struct TrainerFile {
  std::string file;
  TrainerFormat format = TrainerFormat::kHfTrainer;
  std::vector<TrainerSetting> used;
  std::vector<IgnoredKey> ignored;
  // Files this one names by path. Each is also an ignored key (with why) until a front end that
  // reads files follows it (follow_references).
  std::vector<FileReference> references;
  // The value of run setting `as` (the last key that set it), or empty.
  std::string setting(std::string_view as) const;
};

// The run settings a trainer file may set: the runs file's keys, plus grad_accum, shard,
// gpu_count and pure_bf16, which only some commands take, and model_dtype, which the command
// resolves into pure_bf16 (fp32_copies_of_bf16_weights).
const std::vector<std::string>& trainer_setting_keys();

// A model the file loads in BF16 (setting `model_dtype`, TRL's ModelConfig dtype or
// model_init_kwargs) trains its BF16 weights with BF16 AdamW states: pure BF16, no FP32 master
// copy, unless the run makes FP32 copies of the trained weights. DeepSpeed's mixed-precision
// optimizer keeps FP32 partitions, and Accelerate casts the trained FSDP flat parameters to FP32
// when it prepares FSDP in mixed precision (the Trainer's --bf16 or --fp16). Returns why the
// run keeps FP32 copies (the default count applies), or empty when it trains in pure BF16.
// `stack` and `shard` are the run's (empty: the defaults, hf and no sharding or DDP); ZeRO
// stages are DeepSpeed's whatever the stack.
std::string fp32_copies_of_bf16_weights(std::string_view stack, std::string_view shard,
                                        bool mixed_precision);

// Whether `s` turns the trainer's mixed precision on: the Trainer's bf16 / fp16, accelerate's
// mixed_precision or DeepSpeed's bf16.enabled / fp16.enabled (each read as setting precision).
bool sets_mixed_precision(const TrainerSetting& s);

// Reads `text` (JSON or YAML) and tells its format from its keys. `file` names it in messages;
// `model_ids` are the catalog's model ids, which torchtune's builder names
// ("qlora_llama3_1_8b") are matched to. A malformed file, or a value that names something ftplan
// does not know (an optimizer, a PEFT type), is a UserError naming the file, key and value.
TrainerFile read_trainer_file(std::string_view text, const std::string& file,
                              const std::vector<std::string>& model_ids);

// Reads `text` as a file of `format`, whatever its keys (a file a reference names).
TrainerFile read_trainer_file_as(std::string_view text, const std::string& file,
                                 TrainerFormat format, const std::vector<std::string>& model_ids);

// The path `path` names, relative to the folder of `naming_file` unless absolute.
std::string resolve_reference(const std::string& naming_file, const std::string& path);
// Where a referenced file is looked for, in order: beside the naming file, then (a relative path)
// from the working directory, where the trainers open it.
std::vector<std::string> reference_candidates(const std::string& naming_file,
                                              const std::string& path);

// Reads the files `f` names (its references), each through `read_text` given the resolved path,
// and drops their keys from f.ignored. `read_text` returns nullopt where no file may be read
// (the API): the key then stays ignored. A file that cannot be read is a UserError naming f's
// file, the key and the path. The core reads nothing itself: `read_text` does.
std::vector<TrainerFile> follow_references(
    TrainerFile& f, const std::function<std::optional<std::string>(const std::string&)>& read_text,
    const std::vector<std::string>& model_ids);

}  // namespace ftplan
