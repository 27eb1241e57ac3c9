#include "workload/trainer_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
#include "core/json_check.hpp"
#include "core/text.hpp"
#include "workload/objective.hpp"

namespace ftplan {

std::string_view trainer_format_name(TrainerFormat f) {
  switch (f) {
    case TrainerFormat::kPeftAdapter:
      return "peft-adapter";
    case TrainerFormat::kHfTrainer:
      return "transformers-trainer";
    case TrainerFormat::kAxolotl:
      return "axolotl";
    case TrainerFormat::kTorchtune:
      return "torchtune";
    case TrainerFormat::kLlamaFactory:
      return "llama-factory";
    case TrainerFormat::kDeepSpeed:
      return "deepspeed";
    case TrainerFormat::kAccelerate:
      return "accelerate";
    case TrainerFormat::kLitgpt:
      return "litgpt";
  }
  return "unknown";
}

const std::vector<std::string>& trainer_setting_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"model",
                                  "method",
                                  "adapter",
                                  "precompute_ref",
                                  "rank",
                                  "targets",
                                  "lora_dropout",
                                  "train_modules",
                                  "optimizer",
                                  "precision",
                                  "seq",
                                  "packing",
                                  "padding_free",
                                  "micro_batch",
                                  "grad_accum",
                                  "recompute",
                                  "attention",
                                  "stack",
                                  "compile",
                                  "base_quant",
                                  "double_quant",
                                  "loss",
                                  "optimizer_impl",
                                  "experts_impl",
                                  "optimizer_in_backward",
                                  "pure_bf16",
                                  "model_dtype",
                                  "quant_keeps_input",
                                  "sync_each_batch",
                                  "non_reentrant",
                                  "offload_optimizer",
                                  "offload_params",
                                  "offload_activations",
                                  "shard",
                                  "gpu_count"};
    k.insert(k.end(), rollout_keys().begin(), rollout_keys().end());
    return k;
  }();
  return keys;
}

std::string fp32_copies_of_bf16_weights(std::string_view stack, std::string_view shard,
                                        bool mixed_precision) {
  if (stack == "deepspeed" || shard == "zero1" || shard == "zero2" || shard == "zero3")
    return "DeepSpeed's mixed-precision optimizer keeps FP32 partitions of the trained weights: "
           "FP32 master weights and states, as counted by default";
  if ((shard == "fsdp" || shard == "hsdp") && mixed_precision)
    return "Accelerate casts the trained FSDP parameters to FP32 when it prepares FSDP in mixed "
           "precision: FP32 master weights and states, as counted by default";
  return "";
}

bool sets_mixed_precision(const TrainerSetting& s) {
  if (s.as != "precision") return false;
  for (std::string_view key : {"bf16", "fp16", "mixed_precision", "bf16.enabled", "fp16.enabled"})
    if (s.key == key || (s.key.size() > key.size() + 1 && s.key.ends_with(key) &&
                         s.key[s.key.size() - key.size() - 1] == '.'))
      return true;
  return false;
}

std::string TrainerFile::setting(std::string_view as) const {
  for (auto it = used.rbegin(); it != used.rend(); ++it)
    if (it->as == as) return it->to;
  return "";
}

namespace {

// An assumption, not a finding: the keys ftplan reads are those that change memory or time in
// the trainers it models; a key it does not read is taken to leave both as they are.
constexpr std::string_view kNotModelled =
    "not read: taken to leave memory and step time as they are";

// The document as leaves: every scalar and list under its dotted key path ("fsdp_config.x");
// maps are walked into.
struct Leaf {
  std::string path;
  YAML::Node node;
  bool consumed = false;
};

void flatten(const YAML::Node& node, const std::string& path, std::vector<Leaf>& out) {
  if (node.IsMap() && node.size() > 0) {
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
      flatten(kv.second, path.empty() ? key : path + "." + key, out);
    }
    return;
  }
  out.push_back({path, node});
}

std::string alnum_lower(std::string_view s) {
  std::string out;
  for (const char c : s)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Which adapter, base quantization and DoRA the file asks for: the method is decided once all
// keys are read.
struct MethodBits {
  std::optional<bool> adapter;  // true: LoRA-style adapters; false: full fine-tune
  int quant_bits = 0;           // 4 or 8: a quantized frozen base
  std::string quant_format;     // ftplan's base_quant name, when the file says
  bool dora = false;
  std::string key, value;  // the key that decided `adapter`
  // A preference objective ("dpo", "kto", ...): the run's method, and the adapter its `adapter`.
  std::string objective;
  std::string objective_key, objective_value;
};

class Reader {
 public:
  Reader(TrainerFile& out, std::vector<Leaf> leaves) : out_(out), leaves_(std::move(leaves)) {}

  bool has(std::string_view path) const { return find(path) != nullptr; }
  // Whether any key starts with `prefix` ("deepspeed.").
  bool has_prefix(std::string_view prefix) const {
    for (const auto& l : leaves_)
      if (l.path.starts_with(prefix)) return true;
    return false;
  }

  // The scalar (or list, joined with commas) at `path`; marks it read. Null is absent.
  std::optional<std::string> text(std::string_view path) {
    Leaf* l = find(path);
    if (!l) return std::nullopt;
    l->consumed = true;
    if (l->node.IsNull()) return std::nullopt;
    if (l->node.IsScalar()) return l->node.Scalar();
    if (l->node.IsSequence()) {
      std::vector<std::string> items;
      for (const auto& item : l->node) {
        if (!item.IsScalar()) fail(path, "expected a list of names", describe_node(l->node));
        items.push_back(item.Scalar());
      }
      return fmt::format("{}", fmt::join(items, ","));
    }
    fail(path, "expected a value or a list of names", describe_node(l->node));
  }

  std::optional<bool> boolean(std::string_view path) {
    auto v = text(path);
    if (!v) return std::nullopt;
    const std::string s = ascii_lower(*v);
    if (s == "true" || s == "yes" || s == "on" || s == "1") return true;
    if (s == "false" || s == "no" || s == "off" || s == "0") return false;
    fail(path, "expected true or false", *v);
  }

  std::optional<long long> integer(std::string_view path, long long min, long long max) {
    auto v = text(path);
    if (!v) return std::nullopt;
    if (ascii_lower(*v) == "auto") {
      ignore(path, "'auto': the trainer fills it in from its own arguments");
      return std::nullopt;
    }
    long long n = 0;
    std::size_t used = 0;
    try {
      n = std::stoll(*v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != v->size() || n < min || n > max)
      fail(path, fmt::format("expected a whole number from {} to {}", min, max), *v);
    return n;
  }

  std::optional<double> number(std::string_view path, double min, double max) {
    auto v = text(path);
    if (!v) return std::nullopt;
    double x = 0;
    std::size_t used = 0;
    try {
      x = std::stod(*v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != v->size() || !(x >= min && x <= max))
      fail(path, fmt::format("expected a number from {} to {}", min, max), *v);
    return x;
  }

  void use(std::string_view path, std::string value, std::string_view as, std::string to) {
    // A later key for the same setting replaces the earlier one (setting() reads the last).
    out_.used.push_back({std::string(path), std::move(value), std::string(as), std::move(to)});
  }
  // Reads `path` and records it as setting `as` with the value `to(value)`.
  template <typename F>
  void map_text(std::string_view path, std::string_view as, F to) {
    if (auto v = text(path)) {
      const std::string mapped = to(*v);
      if (!mapped.empty()) use(path, *v, as, mapped);
    }
  }
  void copy_integer(std::string_view path, std::string_view as, long long min, long long max) {
    Leaf* l = find(path);
    if (auto n = integer(path, min, max)) use(path, l->node.Scalar(), as, std::to_string(*n));
  }
  void copy_dropout(std::string_view path) {
    if (auto d = number(path, 0, 0.999))
      use(path, fmt::format("{}", *d), "lora_dropout", fmt::format("{}", *d));
  }
  // An offload device (DeepSpeed, accelerate): cpu or nvme → on (NVMe is timed as host memory).
  void copy_offload(const std::string& path, std::string_view as) {
    map_text(path, as, [&](const std::string& v) -> std::string {
      const std::string s = ascii_lower(v);
      if (s == "cpu" || s == "nvme") return "true";
      if (s == "none") return "false";
      fail(path, "cpu, nvme or none", v);
    });
  }
  void copy_bool(std::string_view path, std::string_view as) {
    if (auto b = boolean(path)) use(path, *b ? "true" : "false", as, *b ? "true" : "false");
  }

  // A key naming another trainer file by path: recorded as a reference, and as ignored until a
  // front end that reads files follows it.
  void reference(std::string_view path, TrainerFormat format) {
    Leaf* l = find(path);
    if (!l || !l->node.IsScalar()) return;
    const std::string value = l->node.Scalar();
    if (value.empty()) {
      ignore(path, "empty: no DeepSpeed config");
      return;
    }
    out_.references.push_back({std::string(path), value, format});
    ignore(path,
           "names a DeepSpeed config by path; the command line reads it (beside this file, else "
           "from the working directory), "
           "the API reads no files: give its content as another trainer document");
  }

  void ignore(std::string_view path, std::string why, std::string setting = {}) {
    if (Leaf* l = find(path)) l->consumed = true;
    out_.ignored.push_back({std::string(path), std::move(why), std::move(setting)});
  }

  // The trainer's own default for setting `as` where the file leaves `path` out.
  void default_unless(std::string_view path, const std::string& as, const std::string& value) {
    if (!has(path)) use("(defaults)", value, as, value);
  }

  [[noreturn]] void fail(std::string_view path, std::string_view expected,
                         std::string_view value) const {
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{} ({} file): key '{}': {}, got '{}'", out_.file,
                                trainer_format_name(out_.format), path, expected, value),
                    std::string(path));
  }

  // Keys nobody read are listed as not modelled: a whole top-level section at once when none of
  // its keys was read (datasets, checkpointer, ...).
  void finish() {
    std::map<std::string, std::pair<int, int>> sections;  // top key → (leaves, consumed)
    // A key left empty (null) sets nothing: not worth a line.
    std::erase_if(leaves_, [](const Leaf& l) { return !l.consumed && l.node.IsNull(); });
    for (const auto& l : leaves_) {
      auto& s = sections[top(l.path)];
      ++s.first;
      s.second += l.consumed ? 1 : 0;
    }
    std::set<std::string> listed;
    for (const auto& l : leaves_) {
      if (l.consumed) continue;
      const std::string t = top(l.path);
      if (sections[t].second == 0) {
        if (listed.insert(t).second) out_.ignored.push_back({t, std::string(kNotModelled)});
      } else {
        out_.ignored.push_back({l.path, std::string(kNotModelled)});
      }
    }
  }

  TrainerFile& out() { return out_; }

 private:
  static std::string top(const std::string& path) { return path.substr(0, path.find('.')); }
  Leaf* find(std::string_view path) {
    for (auto& l : leaves_)
      if (l.path == path) return &l;
    return nullptr;
  }
  const Leaf* find(std::string_view path) const {
    for (const auto& l : leaves_)
      if (l.path == path) return &l;
    return nullptr;
  }

  TrainerFile& out_;
  std::vector<Leaf> leaves_;
};

// --- Names shared by several trainers --------------------------------------------------------

// Transformers' `optim` names (also axolotl's `optimizer`, LLaMA-Factory's `optim`).
std::string hf_optimizer(Reader& r, std::string_view path, const std::string& name) {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"adamw_torch", "adamw"},
      {"adamw_torch_fused", "adamw"},
      {"adamw_hf", "adamw"},
      {"adamw_apex_fused", "adamw"},
      {"adamw_anyprecision", "adamw"},
      {"adamw_torch_xla", "adamw"},
      {"adamw_torch_npu_fused", "adamw"},
      {"adamw_bnb_8bit", "adamw-8bit"},
      {"adamw_8bit", "adamw-8bit"},
      // torchao's AdamW8bit (src/transformers/trainer.py, get_optimizer_cls_and_kwargs): m and v
      // as blockwise 8-bit codes, as bitsandbytes keeps them.
      {"adamw_torch_8bit", "adamw-8bit"},
      {"ademamix_8bit", "adamw-8bit"},
      {"paged_adamw_32bit", "paged-adamw"},
      {"paged_adamw", "paged-adamw"},
      {"paged_adamw_8bit", "paged-adamw-8bit"},
      {"adafactor", "adafactor"},
      {"sgd", "sgd"},
      {"lion_32bit", "lion"},
      {"paged_lion_32bit", "lion"},
  };
  const std::string n = ascii_lower(name);
  // torch's AdamW as the Trainer builds it: fused=True for adamw_torch_fused, the foreach kernels
  // (torch's default on CUDA) for adamw_torch.
  if (n == "adamw_torch") r.use(path, name, "optimizer_impl", "foreach");
  if (n == "adamw_torch_fused") r.use(path, name, "optimizer_impl", "fused");
  for (const auto& [from, to] : table)
    if (n == from) return to;
  // adamw_torch_4bit (torchao AdamW4bit): ftplan has no 4-bit AdamW.
  if (n == "lion_8bit" || n == "paged_lion_8bit" || n == "adamw_torch_4bit" ||
      n.starts_with("galore") || n.starts_with("apollo") || n == "lomo" || n == "adalomo" ||
      n == "grokadamw" || n == "schedule_free_adamw") {
    r.ignore(path, fmt::format("optimizer '{}' is not in ftplan's optimizer table (ftplan fit "
                               "--help lists them under --optimizer): give --optimizer",
                               name));
    return "";
  }
  std::vector<std::string> known;
  for (const auto& [from, to] : table)
    known.push_back(from);
  r.fail(path, fmt::format("a Transformers optimizer name ({})", fmt::join(known, ", ")), name);
}

// Attention implementations as Transformers, TRL and LLaMA-Factory name them.
std::string attention_name(Reader& r, std::string_view path, const std::string& v) {
  const std::string s = ascii_lower(v);
  if (s == "flash_attention_2" || s == "flash_attention_3" || s == "fa2" || s == "fa3" ||
      s == "flash" || s == "kernels-community/flash-attn" ||
      s == "kernels-community/vllm-flash-attn3")
    return "flash";
  if (s == "sdpa") return "sdpa";
  // "off": LLaMA-Factory's name for eager before "disabled" (model_utils/attention.py).
  if (s == "eager" || s == "disabled" || s == "off") return "eager";
  if (s == "auto") {
    r.ignore(path, "'auto': the library picks the kernel; the stack's default applies");
    return "";
  }
  r.fail(path, "an attention implementation (flash_attention_2, sdpa, eager)", v);
}

// FSDP's hybrid strategies, lower-cased: shard within a node, replicate across nodes
// (_HYBRID_SHARD_ZERO2 keeps the gathered weights between forward and backward: counted as
// HYBRID_SHARD).
bool hybrid_fsdp_strategy(const std::string& s) {
  return s == "hybrid_shard" || s == "4" || s == "_hybrid_shard_zero2" || s == "5";
}

// FSDP's sharding strategies by name or number (Transformers, accelerate, axolotl).
std::string fsdp_strategy(Reader& r, std::string_view path, const std::string& v) {
  const std::string s = ascii_lower(v);
  if (s == "full_shard" || s == "1") return "fsdp";
  if (hybrid_fsdp_strategy(s)) return "hsdp";
  if (s == "shard_grad_op" || s == "2") return "zero2";
  if (s == "no_shard" || s == "3") return "ddp";
  r.fail(path, "an FSDP sharding strategy (FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD)", v);
}

// Transformers' `fsdp` option: "full_shard auto_wrap offload" (or a list of those words).
void hf_fsdp(Reader& r, std::string_view path) {
  auto v = r.text(path);
  if (!v || v->empty() || ascii_lower(*v) == "false") return;
  std::string words = *v;
  std::replace(words.begin(), words.end(), ',', ' ');
  std::size_t pos = 0;
  while (pos < words.size()) {
    const auto end = words.find(' ', pos);
    const std::string w = ascii_lower(words.substr(pos, end - pos));
    pos = end == std::string::npos ? words.size() : end + 1;
    if (w.empty() || w == "auto_wrap") continue;
    if (w == "offload") {
      r.use(path, *v, "offload_params", "true");
      r.use(path, *v, "offload_optimizer", "true");
    } else if (w == "true") {
      r.use(path, *v, "shard", "fsdp");
    } else {
      r.use(path, *v, "shard", fsdp_strategy(r, path, w));
    }
  }
}

// ZeRO stages as ftplan's sharding: stage 3 shards parameters too, as FSDP's full sharding does.
std::string zero_stage(Reader& r, std::string_view path, const std::string& v) {
  if (v == "0") return "ddp";
  if (v == "1") return "zero1";
  if (v == "2") return "zero2";
  if (v == "3") return "fsdp";
  r.fail(path, "a ZeRO stage 0, 1, 2 or 3", v);
}

// A DeepSpeed config (ds_config.json, or inline under `prefix`, as Transformers takes it).
void read_deepspeed(Reader& r, const std::string& prefix) {
  const auto p = [&](std::string_view key) { return prefix + std::string(key); };
  const std::string stage_key = p("zero_optimization.stage");
  r.map_text(stage_key, "shard", [&](const std::string& v) { return zero_stage(r, stage_key, v); });
  // The deprecated booleans (deepspeed/runtime/zero/config.py): cpu_offload true is
  // offload_optimizer {device: cpu}, cpu_offload_param true is offload_param {device: cpu};
  // DeepSpeed refuses either beside its replacement, so the order here does not matter.
  r.copy_bool(p("zero_optimization.cpu_offload"), "offload_optimizer");
  r.copy_bool(p("zero_optimization.cpu_offload_param"), "offload_params");
  r.copy_offload(p("zero_optimization.offload_optimizer.device"), "offload_optimizer");
  r.copy_offload(p("zero_optimization.offload_param.device"), "offload_params");
  r.copy_integer(p("train_micro_batch_size_per_gpu"), "micro_batch", 1, 1 << 20);
  r.copy_integer(p("gradient_accumulation_steps"), "grad_accum", 1, 1 << 20);
  for (const auto& entry : {std::pair{"bf16.enabled", "bf16"}, std::pair{"fp16.enabled", "fp16"}}) {
    const std::string key = p(entry.first);
    if (auto v = r.text(key)) {
      if (ascii_lower(*v) == "auto")
        r.ignore(key, "'auto': the trainer fills it in from its own arguments");
      else if (ascii_lower(*v) == "true")
        r.use(key, *v, "precision", entry.second);
    }
  }
  r.copy_bool(p("activation_checkpointing.cpu_checkpointing"), "offload_activations");
  if (r.boolean(p("activation_checkpointing.partition_activations")).value_or(false))
    r.ignore(p("activation_checkpointing.partition_activations"),
             "Megatron-DeepSpeed's checkpointed inputs split over the tensor-parallel ranks: "
             "not modelled (each card is counted with the whole input)");
  if (const auto global = r.text(p("train_batch_size"))) {
    if (ascii_lower(*global) == "auto")
      r.ignore(p("train_batch_size"), "'auto': the Trainer fills it from its own batch settings");
    else if (!r.has(p("train_micro_batch_size_per_gpu")))
      r.ignore(p("train_batch_size"),
               "the global batch: the micro-batch is train_batch_size / (gradient accumulation "
               "steps x cards), which the file does not fix without the card count: give "
               "--micro-batch");
    else
      r.ignore(p("train_batch_size"),
               "the global batch: train_micro_batch_size_per_gpu gives the micro-batch");
  }
  for (const char* key :
       {"zero_optimization.reduce_bucket_size", "zero_optimization.allgather_bucket_size",
        "zero_optimization.stage3_prefetch_bucket_size",
        "zero_optimization.stage3_param_persistence_threshold",
        "zero_optimization.stage3_max_live_parameters",
        "zero_optimization.stage3_max_reuse_distance"})
    if (r.has(p(key)))
      r.ignore(p(key),
               "bucket and prefetch sizes are not modelled: collectives are timed whole, with "
               "the stack's overlap, and their buffers come from the stack's data");
  if (prefix.empty())
    r.use("(file)", "", "stack", "deepspeed");
  else if (r.has_prefix(prefix))
    r.use(prefix.substr(0, prefix.size() - 1), "(inline)", "stack", "deepspeed");
}

void set_method(Reader& r, MethodBits m) {
  if (!m.adapter && !m.objective.empty()) {  // an objective's default: the whole model trained
    m.adapter = false;
    m.key = m.objective_key;
    m.value = m.objective_value;
  }
  if (!m.adapter) return;
  std::string method;
  if (!*m.adapter) {
    method = "full";
  } else if (m.quant_bits > 0) {
    method = m.dora ? "qdora" : "qlora";
  } else {
    method = m.dora ? "dora" : "lora";
  }
  if (m.objective.empty()) {
    r.use(m.key, m.value, "method", method);
  } else {
    r.use(m.objective_key, m.objective_value, "method", m.objective);
    r.use(m.key, m.value, "adapter", method);
  }
  if (m.quant_bits > 0 && *m.adapter) {
    const std::string format = !m.quant_format.empty() ? m.quant_format
                               : m.quant_bits == 8     ? "int8"
                                                       : "nf4";
    r.use(m.key, m.value, "base_quant", format);
  }
}

// Target module lists as PEFT writes them; "all-linear" and lists pass to ftplan's own parser.
std::string lora_targets(Reader& r, std::string_view path, const std::string& v) {
  if (v.find_first_of("*.()[]|\\^$?+") != std::string::npos) {
    r.ignore(path, "a regular expression over module names: give --targets");
    return "";
  }
  return v;
}

// --- The formats ------------------------------------------------------------------------------

void read_peft(Reader& r) {
  const std::string type = r.text("peft_type").value_or("");
  if (ascii_lower(type) != "lora")
    r.fail("peft_type", "LORA (ftplan models LoRA and, with use_dora, DoRA adapters)", type);
  MethodBits m;
  m.adapter = true;
  m.key = "peft_type";
  m.value = type;
  m.dora = r.boolean("use_dora").value_or(false);
  set_method(r, m);
  r.map_text("base_model_name_or_path", "model", [](const std::string& v) { return v; });
  r.copy_integer("r", "rank", 1, 65536);
  r.map_text("target_modules", "targets",
             [&](const std::string& v) { return lora_targets(r, "target_modules", v); });
  r.copy_dropout("lora_dropout");
  r.map_text("modules_to_save", "train_modules", [](const std::string& v) { return v; });
  if (r.has("layers_to_transform"))
    r.ignore("layers_to_transform",
             "adapters on some layers only are not modelled: every layer is counted adapted, which "
             "overstates the adapter's parameters, states and saved inputs");
}

// TRL's online trainers (GRPOConfig, and RLOOConfig, which shares its keys) under `prefix` (""
// for a TRL config, "trl." in axolotl): the group, the lengths, the KL coefficient, the passes
// over each batch and where vLLM generates. `separate_by_default`: the generation runs on a
// server of its own unless the file says colocate (axolotl's `axolotl vllm-serve`; TRL's default
// vllm_mode is server too).
void read_trl_online(Reader& r, const std::string& prefix) {
  const auto p = [&](std::string_view key) { return prefix + std::string(key); };
  r.copy_integer(p("num_generations"), "group_size", 1, 4096);
  r.copy_integer(p("max_prompt_length"), "prompt_len", 1, 1 << 22);
  r.copy_integer(p("max_completion_length"), "completion_len", 1, 1 << 22);
  if (auto beta = r.number(p("beta"), 0, 100))
    r.use(p("beta"), fmt::format("{}", *beta), "kl", fmt::format("{}", *beta));
  r.copy_integer(p("num_iterations"), "rl_epochs", 1, 1000);
  const auto use_vllm = r.boolean(p("use_vllm"));
  const std::string mode = ascii_lower(r.text(p("vllm_mode")).value_or("server"));
  if (mode != "server" && mode != "colocate") r.fail(p("vllm_mode"), "server or colocate", mode);
  if (use_vllm && !*use_vllm) {
    r.ignore(p("use_vllm"),
             "false: completions from transformers' generate, estimated as a "
             "vLLM engine on the training cards (colocated)");
    r.use(p("use_vllm"), "false", "rollout", "colocated");
  } else if (use_vllm) {
    r.use(p("vllm_mode"), mode, "rollout", mode == "colocate" ? "colocated" : "separate");
  }
  if (mode == "colocate") {
    if (auto u = r.number(p("vllm_gpu_memory_utilization"), 0.01, 0.99))
      r.use(p("vllm_gpu_memory_utilization"), fmt::format("{}", *u), "engine_memory",
            fmt::format("{}", *u));
    r.copy_bool(p("vllm_enable_sleep_mode"), "sleep");
  } else if (r.has(p("vllm_gpu_memory_utilization"))) {
    r.ignore(p("vllm_gpu_memory_utilization"),
             "the vLLM server's own cards are sized by ftplan (the engine's default split)");
  }
  // TRL 0.18 on generates steps_per_generation micro-batches' completions at once (default: the
  // accumulation steps, one generation per optimizer step).
  if (const auto per_generation = r.integer(p("steps_per_generation"), 1, 1 << 20)) {
    const auto accum = r.integer("gradient_accumulation_steps", 1, 1 << 20).value_or(1);
    if (accum % *per_generation == 0)
      r.use(p("steps_per_generation"), std::to_string(*per_generation), "generation_rounds",
            std::to_string(accum / *per_generation));
    else
      r.ignore(p("steps_per_generation"),
               "not a divisor of gradient_accumulation_steps: estimated as one generation per "
               "optimizer step");
  }
  if (auto tp = r.integer(p("vllm_tensor_parallel_size"), 1, 64))
    r.use(p("vllm_tensor_parallel_size"), std::to_string(*tp), "rollout_tp", std::to_string(*tp));
  for (const char* key :
       {"generation_batch_size", "temperature", "top_p", "top_k", "reward_funcs", "reward_weights",
        "loss_type", "scale_rewards", "epsilon", "epsilon_high", "mask_truncated_completions"})
    if (r.has(p(key)))
      r.ignore(p(key), "sampling, rewards and the loss's form do not change memory or time here");
}

// FSDP's own activation checkpointing (Transformers' and accelerate's fsdp_config, axolotl): every
// block recomputed, through FSDP's checkpoint wrapper, which runs non-reentrant inside each unit.
void fsdp_activation_checkpointing(Reader& r, std::string_view key) {
  if (auto a = r.boolean(key); a && *a) {
    r.use(key, "true", "recompute", "full");
    r.use(key, "true", "non_reentrant", "true");
  }
}

// gradient_checkpointing_kwargs: {use_reentrant: false} (Transformers, TRL, axolotl).
void checkpointing_kwargs(Reader& r) {
  if (auto re = r.boolean("gradient_checkpointing_kwargs.use_reentrant"); re && !*re)
    r.use("gradient_checkpointing_kwargs.use_reentrant", "false", "non_reentrant", "true");
}

// The online objective a TRL config is for: GRPO where it names a group (num_generations), as
// RLOOConfig does too (given as --method rloo).
bool trl_online(const Reader& r, const std::string& prefix) {
  return r.has(prefix + "num_generations") || r.has(prefix + "max_completion_length");
}

// The dtype the model is loaded in (TRL's ModelConfig torch_dtype, renamed dtype; SFTConfig's
// model_init_kwargs). BF16 becomes setting model_dtype, which the command resolves with the
// run's sharding (fp32_copies_of_bf16_weights).
void model_dtype(Reader& r, const char* key) {
  const auto v = r.text(key);
  if (!v) return;
  std::string s = ascii_lower(*v);
  if (s.starts_with("torch.")) s = s.substr(6);
  if (s == "bfloat16" || s == "bf16") {
    r.use(key, *v, "model_dtype", "bf16");
  } else if (s == "float32" || s == "fp32" || s == "float") {
    r.ignore(key,
             "FP32 weights under mixed precision: FP32 master weights and states, the "
             "default count");
  } else if (s == "auto") {
    r.ignore(key,
             "'auto' loads the checkpoint in its own dtype, which the file does not state; for a "
             "full fine-tune of a BF16 checkpoint without DeepSpeed, and without FSDP in mixed "
             "precision, give --pure-bf16");
  } else if (s == "float16" || s == "fp16" || s == "half") {
    r.ignore(key,
             "FP16 weights: the Trainer refuses to unscale FP16 gradients under --fp16, "
             "and FP16 training without a master copy is not modelled");
  } else {
    r.fail(key, "bfloat16, float16, float32 or auto", *v);
  }
}

void read_hf_trainer(Reader& r) {
  const bool online = trl_online(r, "");
  r.copy_integer("per_device_train_batch_size", "micro_batch", 1, 1 << 20);
  r.copy_integer("gradient_accumulation_steps", "grad_accum", 1, 1 << 20);
  if (auto g = r.boolean("gradient_checkpointing"))
    r.use("gradient_checkpointing", *g ? "true" : "false", "recompute", *g ? "full" : "none");
  if (r.boolean("bf16").value_or(false)) r.use("bf16", "true", "precision", "bf16");
  if (r.boolean("fp16").value_or(false)) r.use("fp16", "true", "precision", "fp16");
  r.map_text("optim", "optimizer",
             [&](const std::string& v) { return hf_optimizer(r, "optim", v); });
  if (!online) {
    r.copy_integer("max_seq_length", "seq", 1, 1 << 24);  // TRL before 0.20
    r.copy_integer("max_length", "seq", 1, 1 << 24);      // TRL 0.20 and later
  }
  r.copy_bool("packing", "packing");
  r.copy_bool("padding_free", "padding_free");
  r.copy_bool("precompute_ref_log_probs", "precompute_ref");  // TRL DPOConfig, KTOConfig
  hf_fsdp(r, "fsdp");
  fsdp_activation_checkpointing(r, "fsdp_config.activation_checkpointing");
  checkpointing_kwargs(r);
  r.copy_bool("accelerator_config.gradient_accumulation_kwargs.sync_each_batch", "sync_each_batch");
  r.use("(file)", "", "stack", "hf");
  r.reference("deepspeed", TrainerFormat::kDeepSpeed);
  read_deepspeed(r, "deepspeed.");  // a config given inline
  r.copy_bool("torch_compile", "compile");
  if (r.boolean("use_liger_kernel").value_or(false))
    r.use("use_liger_kernel", "true", "loss", "fused");
  for (const char* key :
       {"torch_dtype", "dtype", "model_init_kwargs.torch_dtype", "model_init_kwargs.dtype"})
    model_dtype(r, key);
  for (const char* key : {"model_init_kwargs.attn_implementation", "attn_implementation"})
    r.map_text(key, "attention", [&](const std::string& v) { return attention_name(r, key, v); });
  // TRL's ModelConfig keys, when its script arguments are one YAML file.
  r.map_text("model_name_or_path", "model", [](const std::string& v) { return v; });
  MethodBits m;
  if (online) {
    m.objective = "grpo";
    m.objective_key = r.has("num_generations") ? "num_generations" : "max_completion_length";
    m.objective_value = r.text(m.objective_key).value_or("");
    read_trl_online(r, "");
  } else if (r.has("beta") && (r.has("max_prompt_length") || r.has("loss_type") ||
                               r.has("rpo_alpha") || r.has("desirable_weight") ||
                               r.has("reference_free") || r.has("precompute_ref_log_probs"))) {
    // A preference trainer's config (TRL DPOConfig, KTOConfig, ORPOConfig, CPOConfig share
    // beta and max_prompt_length) names no trainer: which objective, so which pairs and which
    // reference, the file cannot say.
    r.ignore("beta",
             "a preference objective's coefficient (TRL DPOConfig, KTOConfig, ORPOConfig, "
             "CPOConfig), whose trainer the file does not name: give --method dpo, ipo, kto, orpo "
             "or simpo to plan its pairs and reference (the file's adapter is kept); without it "
             "the run is planned as supervised fine-tuning",
             "method");
  }
  if (auto peft = r.boolean("use_peft")) {
    m.adapter = *peft;
    m.key = "use_peft";
    m.value = *peft ? "true" : "false";
  }
  if (r.boolean("load_in_4bit").value_or(false)) m.quant_bits = 4;
  if (r.boolean("load_in_8bit").value_or(false)) m.quant_bits = 8;
  m.dora = r.boolean("use_dora").value_or(false);
  if (m.adapter && *m.adapter) {
    r.copy_integer("lora_r", "rank", 1, 65536);
    r.map_text("lora_target_modules", "targets",
               [&](const std::string& v) { return lora_targets(r, "lora_target_modules", v); });
    r.copy_dropout("lora_dropout");
  }
  set_method(r, m);
}

void read_axolotl(Reader& r) {
  r.map_text("base_model", "model", [](const std::string& v) { return v; });
  MethodBits m;
  m.adapter = false;
  m.key = "adapter";
  m.value = "(none: full fine-tune)";
  if (auto a = r.text("adapter"); a && !a->empty()) {
    const std::string s = ascii_lower(*a);
    if (s != "lora" && s != "qlora") r.fail("adapter", "lora or qlora", *a);
    m.adapter = true;
    m.value = *a;
    if (s == "qlora") m.quant_bits = 4;
  }
  if (r.boolean("load_in_4bit").value_or(false)) m.quant_bits = 4;
  if (r.boolean("load_in_8bit").value_or(false) && *m.adapter) m.quant_bits = 8;
  m.dora = r.boolean("peft_use_dora").value_or(false);
  // A reward model (axolotl `reward_model: true`, its RewardTrainer on pairs).
  if (r.boolean("reward_model").value_or(false)) {
    m.objective = "reward";
    m.objective_key = "reward_model";
    m.objective_value = "true";
  }
  // Preference training (axolotl `rl`): the objectives ftplan models.
  if (auto rl = r.text("rl"); rl && !rl->empty()) {
    const std::string s = ascii_lower(*rl);
    if (s == "dpo" || s == "ipo" || s == "orpo" || s == "kto" || s == "simpo" || s == "grpo") {
      m.objective = s;
      m.objective_key = "rl";
      m.objective_value = *rl;
    } else {
      r.ignore("rl", fmt::format("rl '{}' is estimated as supervised fine-tuning (ftplan models "
                                 "dpo, ipo, orpo, simpo, kto and grpo)",
                                 *rl));
    }
  }
  const bool online = m.objective == "grpo";
  if (online) {
    read_trl_online(r, "trl.");
    // `axolotl vllm-serve` starts the engine from the same file: its cards are the rollout's.
    const auto tp = r.integer("vllm.tensor_parallel_size", 1, 1024);
    const auto dp = r.integer("vllm.data_parallel_size", 1, 1024);
    if (tp || dp)
      r.use(tp ? "vllm.tensor_parallel_size" : "vllm.data_parallel_size",
            std::to_string(tp.value_or(1) * dp.value_or(1)), "rollout_gpus",
            std::to_string(tp.value_or(1) * dp.value_or(1)));
    if (tp)
      r.use("vllm.tensor_parallel_size", std::to_string(*tp), "rollout_tp", std::to_string(*tp));
    if (r.has("sequence_len"))
      r.ignore("sequence_len",
               "an online run's sequence is its prompt and completion: "
               "trl.max_prompt_length (else 512) and trl.max_completion_length");
  }
  set_method(r, m);
  r.copy_integer("lora_r", "rank", 1, 65536);
  r.copy_dropout("lora_dropout");
  r.map_text("lora_target_modules", "targets",
             [&](const std::string& v) { return lora_targets(r, "lora_target_modules", v); });
  if (r.boolean("lora_target_linear").value_or(false))
    r.use("lora_target_linear", "true", "targets", "all");
  r.map_text("lora_modules_to_save", "train_modules", [](const std::string& v) { return v; });
  if (!online) r.copy_integer("sequence_len", "seq", 1, 1 << 24);
  r.copy_bool("sample_packing", "packing");
  r.copy_integer("micro_batch_size", "micro_batch", 1, 1 << 20);
  r.copy_integer("gradient_accumulation_steps", "grad_accum", 1, 1 << 20);
  r.map_text("optimizer", "optimizer",
             [&](const std::string& v) { return hf_optimizer(r, "optimizer", v); });
  if (auto b = r.text("bf16"); b && (ascii_lower(*b) == "true" || ascii_lower(*b) == "auto"))
    r.use("bf16", *b, "precision", "bf16");
  if (r.boolean("fp16").value_or(false)) r.use("fp16", "true", "precision", "fp16");
  if (auto g = r.text("gradient_checkpointing")) {
    const std::string s = ascii_lower(*g);
    // offload_disk: the checkpointed inputs on disk, counted as host memory (as NVMe is).
    if (s == "offload" || s == "offload_disk") {
      r.use("gradient_checkpointing", *g, "recompute", "full");
      r.use("gradient_checkpointing", *g, "offload_activations", "true");
    } else if (s == "true" || s == "unsloth") {
      r.use("gradient_checkpointing", *g, "recompute", "full");
    } else if (s == "false") {
      r.use("gradient_checkpointing", *g, "recompute", "none");
    } else {
      r.fail("gradient_checkpointing", "true, false, unsloth, offload or offload_disk", *g);
    }
  }
  checkpointing_kwargs(r);
  // activation_offloading: true | false | legacy | disk (utils/schemas/config.py). true wraps
  // every decoder layer in activation checkpointing itself (loaders/model.py
  // _apply_activation_checkpointing, ac_wrap_hf_model) and turns the Trainer's
  // gradient_checkpointing off; every value offloads the saved activations to host memory (TRL's
  // OffloadActivations, core/trainers/mixins/activation_checkpointing.py).
  if (auto o = r.text("activation_offloading")) {
    const std::string s = ascii_lower(*o);
    if (s == "true") {
      r.use("activation_offloading", *o, "recompute", "full");
      r.use("activation_offloading", *o, "offload_activations", "true");
    } else if (s == "legacy" || s == "disk" || s == "hidden_states") {
      r.use("activation_offloading", *o, "offload_activations", "true");
    } else if (s != "false") {
      r.fail("activation_offloading", "true, false, legacy or disk", *o);
    }
  }
  if (r.boolean("flash_attention").value_or(false))
    r.use("flash_attention", "true", "attention", "flash");
  if (r.boolean("sdp_attention").value_or(false))
    r.use("sdp_attention", "true", "attention", "sdpa");
  if (r.boolean("xformers_attention").value_or(false))
    r.use("xformers_attention", "true", "attention", "flash");  // no s x s scores kept either
  if (r.boolean("eager_attention").value_or(false))
    r.use("eager_attention", "true", "attention", "eager");
  // attn_implementation wins over the boolean flags (loaders/model.py _set_attention_config);
  // newer axolotl takes only it and maps the flags to it (flash_attention: flash_attention_2).
  r.map_text("attn_implementation", "attention", [&](const std::string& v) -> std::string {
    const std::string s = ascii_lower(v);
    if (s == "xformers" || s == "s2") return "flash";  // as xformers_attention: no s x s kept
    if (s == "flex_attention" || s == "flex" || s == "sage" || s == "fp8" ||
        (s.find('/') != std::string::npos && s.find("flash") == std::string::npos)) {
      r.ignore("attn_implementation",
               fmt::format("'{}' is not modelled (ftplan models flash, sdpa and eager "
                           "attention): the stack's default applies",
                           v));
      return "";
    }
    if (s.find('/') != std::string::npos) return "flash";  // a hub FlashAttention kernel
    return attention_name(r, "attn_implementation", v);
  });
  r.reference("deepspeed", TrainerFormat::kDeepSpeed);
  hf_fsdp(r, "fsdp");
  for (const char* key : {"fsdp_config.fsdp_offload_params", "fsdp_config.offload_params"})
    if (auto o = r.boolean(key); o && *o) {
      r.use(key, "true", "offload_params", "true");
      r.use(key, "true", "offload_optimizer", "true");
    }
  for (const char* key : {"fsdp_config.fsdp_sharding_strategy"})
    r.map_text(key, "shard", [&](const std::string& v) { return fsdp_strategy(r, key, v); });
  for (const char* key :
       {"fsdp_config.fsdp_activation_checkpointing", "fsdp_config.activation_checkpointing"})
    fsdp_activation_checkpointing(r, key);
  r.copy_bool("torch_compile", "compile");
  for (const char* key : {"liger_fused_linear_cross_entropy", "cut_cross_entropy"})
    if (r.boolean(key).value_or(false)) r.use(key, "true", "loss", "fused");
  for (const char* key : {"liger_rms_norm", "liger_glu_activation", "liger_swiglu"})
    if (r.boolean(key).value_or(false))
      r.ignore(key,
               "Liger's fused kernel keeps only its 16-bit input, as --compile counts norms and "
               "activations; not applied alone (the run is estimated eager): give --compile for "
               "that memory");
  r.use("(file)", "", "stack", "axolotl");
}

// The catalog id one of `names` spells, letters and digits compared without case: the one id
// equal to a name, else the one id a name begins (a longer id), else the one id that begins a
// name ("Llama-3.1-8B-Instruct" → llama-3.1-8b).
std::optional<std::string> match_catalog_name(const std::vector<std::string>& names,
                                              const std::vector<std::string>& ids) {
  for (const auto& n : names) {
    const std::string want = alnum_lower(n);
    std::vector<std::string> exact, longer, shorter;
    for (const auto& id : ids) {
      const std::string have = alnum_lower(id);
      if (have == want) exact.push_back(id);
      if (have.starts_with(want)) longer.push_back(id);
      if (want.starts_with(have)) shorter.push_back(id);
    }
    if (exact.size() == 1) return exact[0];
    if (longer.size() == 1) return longer[0];
    if (shorter.size() == 1) return shorter[0];
  }
  return std::nullopt;
}

// torchtune builder names ("qlora_llama3_1_8b") to catalog ids ("llama-3.1-8b").
std::optional<std::string> match_builder(std::string builder, const std::vector<std::string>& ids) {
  for (const char* prefix : {"qlora_", "lora_"})
    if (builder.starts_with(prefix)) builder = builder.substr(std::string_view(prefix).size());
  std::vector<std::string> names = {builder};
  for (const char* suffix : {"_instruct", "_base"})
    if (builder.ends_with(suffix))
      names.push_back(builder.substr(0, builder.size() - std::string_view(suffix).size()));
  return match_catalog_name(names, ids);
}

std::string torchtune_optimizer(Reader& r, std::string_view path, const std::string& component) {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"torch.optim.AdamW", "adamw"},
      {"torch.optim.Adam", "adamw"},
      {"torch.optim.SGD", "sgd"},
      {"bitsandbytes.optim.AdamW8bit", "adamw-8bit"},
      {"bitsandbytes.optim.PagedAdamW8bit", "paged-adamw-8bit"},
      {"bitsandbytes.optim.PagedAdamW", "paged-adamw"},
      {"bitsandbytes.optim.PagedAdamW32bit", "paged-adamw"},
      {"torchao.optim.AdamW8bit", "adamw-8bit"},
      {"torchao.prototype.low_bit_optim.AdamW8bit", "adamw-8bit"},
      {"torch.optim.Adafactor", "adafactor"},
  };
  for (const auto& [from, to] : table)
    if (component == from) return to;
  std::vector<std::string> known;
  for (const auto& [from, to] : table)
    known.push_back(from);
  r.fail(path, fmt::format("an optimizer component ({})", fmt::join(known, ", ")), component);
}

void read_torchtune(Reader& r, const std::vector<std::string>& model_ids) {
  const std::string component = r.text("model._component_").value_or("");
  const std::string builder = component.substr(component.rfind('.') + 1);
  MethodBits m;
  m.key = "model._component_";
  m.value = component;
  m.adapter = builder.starts_with("lora_") || builder.starts_with("qlora_");
  if (builder.starts_with("qlora_") || r.boolean("model.quantize_base").value_or(false))
    m.quant_bits = 4;
  m.dora = r.boolean("model.use_dora").value_or(false);
  if (!component.empty()) {
    set_method(r, m);
    if (auto id = match_builder(builder, model_ids))
      r.use("model._component_", component, "model", *id);
    else
      r.ignore("model._component_",
               fmt::format("builder '{}' matches no catalog model: give --model", builder),
               "model");
  }
  r.copy_integer("model.lora_rank", "rank", 1, 65536);
  r.copy_dropout("model.lora_dropout");
  if (auto attn = r.text("model.lora_attn_modules")) {
    std::string targets = *attn;
    const bool mlp = r.boolean("model.apply_lora_to_mlp").value_or(false);
    const bool output = r.boolean("model.apply_lora_to_output").value_or(false);
    if (mlp) targets += std::string(targets.empty() ? "" : ",") + "gate,up,down";
    if (output) targets += std::string(targets.empty() ? "" : ",") + "lm_head";
    r.use("model.lora_attn_modules", *attn, "targets", targets);
  }
  r.copy_integer("batch_size", "micro_batch", 1, 1 << 20);
  r.copy_integer("gradient_accumulation_steps", "grad_accum", 1, 1 << 20);
  if (auto a = r.boolean("enable_activation_checkpointing"))
    r.use("enable_activation_checkpointing", *a ? "true" : "false", "recompute",
          *a ? "full" : "none");
  r.copy_bool("enable_activation_offloading", "offload_activations");
  r.copy_bool("compile", "compile");
  if (auto d = r.text("dtype")) {
    const std::string s = ascii_lower(*d);
    if (s == "bf16") {
      r.use("dtype", *d, "precision", "bf16");
      r.use("dtype", *d, "pure_bf16", "true");  // torchtune keeps no FP32 master copy
    } else if (s == "fp32") {
      r.ignore("dtype", "FP32 training is not modelled: estimated as BF16 mixed precision");
    } else {
      r.fail("dtype", "bf16 or fp32", *d);
    }
  }
  r.map_text("optimizer._component_", "optimizer", [&](const std::string& v) {
    return torchtune_optimizer(r, "optimizer._component_", v);
  });
  r.copy_bool("optimizer_in_bwd", "optimizer_in_backward");
  // torch.optim's own switches: fused=True runs the fused kernel, foreach=False one tensor at a
  // time; a torch optimizer given neither runs the foreach kernels on CUDA.
  const auto fused = r.boolean("optimizer.fused");
  const auto foreach = r.boolean("optimizer.foreach");
  if (fused && *fused)
    r.use("optimizer.fused", "true", "optimizer_impl", "fused");
  else if (foreach)
    r.use("optimizer.foreach", *foreach ? "true" : "false", "optimizer_impl",
          *foreach ? "foreach" : "for-loop");
  else if (fused)
    r.use("optimizer.fused", "false", "optimizer_impl", "foreach");
  if (auto loss = r.text("loss._component_")) {
    if (loss->ends_with("CEWithChunkedOutputLoss") || loss->ends_with("LinearCrossEntropyLoss"))
      r.use("loss._component_", *loss, "loss", "chunked");
    else
      r.ignore("loss._component_", "this loss is estimated as the stack's default");
  }
  r.copy_integer("tokenizer.max_seq_len", "seq", 1, 1 << 24);
  r.copy_bool("dataset.packed", "packing");
  if (auto o = r.boolean("fsdp_cpu_offload"); o && *o) {
    r.use("fsdp_cpu_offload", "true", "offload_params", "true");
    r.use("fsdp_cpu_offload", "true", "offload_optimizer", "true");
  }
  r.use("(file)", "", "stack", "torchtune");
}

// LitGPT (`litgpt finetune_lora|finetune_full --config FILE`): the command's arguments as one
// YAML (config_hub/finetune/*/*.yaml; litgpt/finetune/lora.py and full.py setup()).
void read_litgpt(Reader& r, const std::vector<std::string>& model_ids) {
  // checkpoint_dir: checkpoints/<org>/<name>, the Hugging Face repository `litgpt download`
  // fetched: the catalog model of that name, else the Hugging Face id itself.
  if (auto dir = r.text("checkpoint_dir")) {
    std::vector<std::string> parts;
    for (std::size_t start = 0; start <= dir->size();) {
      const std::size_t end = std::min(dir->find('/', start), dir->size());
      if (end > start) parts.push_back(dir->substr(start, end - start));
      start = end + 1;
    }
    std::vector<std::string> names;
    if (!parts.empty()) {
      names.push_back(parts.back());
      // Meta's repositories prefix the family ("Meta-Llama-3.1-8B"); the catalog does not.
      if (ascii_lower(parts.back()).starts_with("meta-")) names.push_back(parts.back().substr(5));
    }
    if (auto id = match_catalog_name(names, model_ids))
      r.use("checkpoint_dir", *dir, "model", *id);
    else if (parts.size() >= 2)
      r.use("checkpoint_dir", *dir, "model", parts[parts.size() - 2] + "/" + parts.back());
    else
      r.ignore("checkpoint_dir", "names no <org>/<name> repository: give --model");
  }
  // finetune_lora reads the lora_* arguments; a file without them is finetune_full's.
  const bool lora = r.has_prefix("lora_");
  MethodBits m;
  m.adapter = lora;
  m.key = lora ? "lora_r" : "(file)";
  m.value = lora ? r.text("lora_r").value_or("8") : "(no lora_* keys: finetune_full)";
  // quantize: bitsandbytes through Lightning's BitsandbytesPrecision, LoRA on one card only.
  // NF4 and FP4 share one layout (4-bit codes, an absmax per 64 weights); "-dq" quantizes the
  // absmax values again. "int8-training" keeps the frozen weights in LLM.int8().
  bool quantized = false;
  if (auto q = r.text("quantize")) {
    const std::string s = ascii_lower(*q);
    if (!lora) {
      r.ignore("quantize", "LitGPT quantizes the frozen base of finetune_lora only");
    } else if (s == "bnb.nf4" || s == "bnb.fp4" || s == "bnb.nf4-dq" || s == "bnb.fp4-dq") {
      m.quant_bits = 4;
      m.quant_format = "nf4";
      m.key = "quantize";
      m.value = *q;
      r.use("quantize", *q, "double_quant", s.ends_with("-dq") ? "true" : "false");
      quantized = true;
    } else if (s == "bnb.int8-training") {
      m.quant_bits = 8;
      m.quant_format = "int8";
      m.key = "quantize";
      m.value = *q;
      quantized = true;
    } else {
      r.fail("quantize", "bnb.nf4, bnb.nf4-dq, bnb.fp4, bnb.fp4-dq or bnb.int8-training", *q);
    }
  }
  set_method(r, m);
  if (lora) {
    // finetune_lora's defaults where the file is silent: rank 8, dropout 0.05.
    r.copy_integer("lora_r", "rank", 1, 65536);
    r.default_unless("lora_r", "rank", "8");
    r.copy_dropout("lora_dropout");
    r.default_unless("lora_dropout", "lora_dropout", "0.05");
    // lora_query, lora_key, lora_value: parts of the fused qkv module; lora_projection: the
    // attention output; lora_mlp: every MLP projection; lora_head: the output layer. LitGPT's
    // defaults: query and value.
    std::string targets;
    bool any = false;
    const auto add = [&](const char* key, bool fallback, const char* names) {
      any = any || r.has(key);
      if (r.boolean(key).value_or(fallback))
        targets += std::string(targets.empty() ? "" : ",") + names;
    };
    add("lora_query", true, "q");
    add("lora_key", false, "k");
    add("lora_value", true, "v");
    add("lora_projection", false, "o");
    add("lora_mlp", false, "gate,up,down");
    add("lora_head", false, "lm_head");
    if (targets.empty()) r.fail("lora_query", "at least one lora_* module set to true", "none");
    r.use(any ? "lora_*" : "(defaults)", targets, "targets", targets);
  }
  // precision: "-true" keeps the weights (and the optimizer states) in that dtype, "-mixed" an
  // FP32 copy under autocast.
  if (auto p = r.text("precision")) {
    const std::string s = ascii_lower(*p);
    if (s == "bf16-true" || s == "bf16-mixed") {
      r.use("precision", *p, "precision", "bf16");
      if (s == "bf16-true") r.use("precision", *p, "pure_bf16", "true");
    } else if (s == "16-mixed") {
      r.use("precision", *p, "precision", "fp16");
    } else if (s == "32-true" || s == "16-true") {
      r.ignore("precision",
               "training in FP32 or pure FP16 is not modelled: estimated as BF16 "
               "mixed precision");
    } else {
      r.fail("precision", "bf16-true, bf16-mixed, 16-true, 16-mixed or 32-true", *p);
    }
  }
  // devices × num_nodes cards. Over one card LitGPT wraps the model in FSDP (full sharding) and
  // checkpoints every Block (FSDPStrategy activation_checkpointing_policy={Block}); on one card
  // it keeps every activation.
  const auto devices = r.integer("devices", 1, 65536);
  const auto nodes = r.integer("num_nodes", 1, 65536);
  const long long cards = devices.value_or(1) * nodes.value_or(1);
  if (devices || nodes) {
    const std::string key = devices ? "devices" : "num_nodes";
    r.use(key, std::to_string(cards), "gpu_count", std::to_string(cards));
    if (cards > 1) r.use(key, std::to_string(cards), "shard", "fsdp");
  }
  r.use(devices ? "devices" : "(file)", std::to_string(cards), "recompute",
        cards > 1 ? "full" : "none");
  // train: micro_batch_size per card; global_batch_size over all cards, so the accumulation is
  // global / cards / micro (TrainArgs.gradient_accumulation_iters).
  const auto micro = r.integer("train.micro_batch_size", 1, 1 << 20);
  if (micro)
    r.use("train.micro_batch_size", std::to_string(*micro), "micro_batch", std::to_string(*micro));
  if (!micro && r.has("train.global_batch_size")) {
    r.ignore("train.global_batch_size",
             "without train.micro_batch_size the accumulation rests on LitGPT's default, which "
             "differs between versions: give --micro-batch and --grad-accum");
  } else if (auto global = r.integer("train.global_batch_size", 1, 1LL << 30)) {
    const long long accum = *global / cards / *micro;
    if (accum < 1)
      r.fail("train.global_batch_size",
             fmt::format("at least micro_batch_size x cards ({})", *micro * cards),
             std::to_string(*global));
    r.use("train.global_batch_size", std::to_string(*global), "grad_accum", std::to_string(accum));
  }
  r.copy_integer("train.max_seq_length", "seq", 1, 1 << 24);
  // optimizer: a torch.optim class by name or class_path (default AdamW); under bitsandbytes
  // quantization LitGPT builds bitsandbytes' PagedAdamW instead (instantiate_bnb_optimizer).
  const std::string optimizer_key =
      r.has("optimizer.class_path") ? "optimizer.class_path" : "optimizer";
  if (auto o = r.text(optimizer_key)) {
    const std::string component = o->find('.') == std::string::npos ? "torch.optim." + *o : *o;
    if (quantized && m.quant_bits == 4 && component.find("AdamW") == std::string::npos)
      r.fail(optimizer_key, "AdamW (LitGPT's bitsandbytes quantization takes no other)", *o);
    r.use(optimizer_key, *o, "optimizer",
          quantized ? "paged-adamw" : torchtune_optimizer(r, optimizer_key, component));
  } else if (quantized) {
    r.use("quantize", r.text("quantize").value_or(""), "optimizer", "paged-adamw");
  }
  r.use("(file)", "", "stack", "litgpt");
}

void read_llama_factory(Reader& r) {
  r.map_text("model_name_or_path", "model", [](const std::string& v) { return v; });
  MethodBits m;
  if (auto stage = r.text("stage")) {
    const std::string s = ascii_lower(*stage);
    if (s == "dpo") {
      // LLaMA-Factory's pref_loss picks the objective (default sigmoid: DPO).
      const std::string loss = ascii_lower(r.text("pref_loss").value_or("sigmoid"));
      m.objective = loss == "ipo" || loss == "orpo" || loss == "simpo" ? loss : "dpo";
      const bool named = m.objective != "dpo";
      m.objective_key = named ? "pref_loss" : "stage";
      m.objective_value = named ? loss : *stage;
      if (!named && r.has("pref_loss") && loss != "sigmoid")
        r.ignore("pref_loss",
                 fmt::format("pref_loss '{}' is estimated as DPO (same passes)", loss));
    } else if (s == "kto" || s == "rm") {
      // stage rm: a reward model trained on pairs.
      m.objective = s == "rm" ? "reward" : "kto";
      m.objective_key = "stage";
      m.objective_value = *stage;
    } else if (s != "sft" && s != "pt") {
      r.ignore("stage", fmt::format("stage '{}' is estimated as supervised fine-tuning of one "
                                    "model (ftplan reads sft, pt, dpo, kto and rm; no rollouts "
                                    "from LLaMA-Factory files yet)",
                                    *stage));
    }
  }
  m.key = "finetuning_type";
  const std::string type = r.text("finetuning_type").value_or("lora");  // LLaMA-Factory's default
  m.value = r.has("finetuning_type") ? type : "lora (LLaMA-Factory's default)";
  if (ascii_lower(type) == "lora") {
    m.adapter = true;
  } else if (ascii_lower(type) == "full") {
    m.adapter = false;
  } else if (ascii_lower(type) == "freeze") {
    r.ignore("finetuning_type",
             "freeze (only some layers trained) is not modelled: give --method full or lora");
  } else {
    r.fail("finetuning_type", "lora, full or freeze", type);
  }
  if (auto bits = r.integer("quantization_bit", 2, 8)) {
    if (*bits != 4 && *bits != 8) r.fail("quantization_bit", "4 or 8", std::to_string(*bits));
    m.quant_bits = static_cast<int>(*bits);
    const std::string method = ascii_lower(r.text("quantization_method").value_or("bnb"));
    if (method == "hqq" && *bits == 4)
      m.quant_format = "hqq-4";
    else if (method == "eetq" || *bits == 8)
      m.quant_format = "int8";
    else if (method == "bnb" || method == "bitsandbytes")
      m.quant_format = "nf4";
    else
      r.fail("quantization_method", "bnb, hqq or eetq", method);
    // bitsandbytes 4-bit: double_quantization (default true) quantizes the absmax values again;
    // quantization_type fp4 stores as nf4 does (4-bit codes, an absmax per 64 weights).
    if (m.quant_format == "nf4")
      if (auto dq = r.boolean("double_quantization"))
        r.use("double_quantization", *dq ? "true" : "false", "double_quant",
              *dq ? "true" : "false");
  }
  m.dora = r.boolean("use_dora").value_or(false);
  set_method(r, m);
  r.copy_integer("lora_rank", "rank", 1, 65536);
  r.copy_dropout("lora_dropout");
  r.map_text("lora_target", "targets",
             [&](const std::string& v) { return lora_targets(r, "lora_target", v); });
  // LoraArguments' defaults where a LoRA file is silent (src/llamafactory/hparams/
  // finetuning_args.py): lora_rank 8, lora_target "all" (every linear layer), lora_dropout 0.
  if (m.adapter && *m.adapter) {
    r.default_unless("lora_rank", "rank", "8");
    r.default_unless("lora_target", "targets", "all");
    r.default_unless("lora_dropout", "lora_dropout", "0");
  }
  r.map_text("additional_target", "train_modules", [](const std::string& v) { return v; });
  r.copy_integer("cutoff_len", "seq", 1, 1 << 24);
  r.copy_bool("packing", "packing");
  if (r.boolean("neat_packing").value_or(false)) {
    r.use("neat_packing", "true", "packing", "true");
    r.use("neat_packing", "true", "padding_free", "true");
  }
  r.copy_integer("per_device_train_batch_size", "micro_batch", 1, 1 << 20);
  r.copy_integer("gradient_accumulation_steps", "grad_accum", 1, 1 << 20);
  if (r.boolean("bf16").value_or(false)) r.use("bf16", "true", "precision", "bf16");
  if (r.boolean("fp16").value_or(false)) r.use("fp16", "true", "precision", "fp16");
  r.copy_bool("pure_bf16", "pure_bf16");
  r.map_text("flash_attn", "attention",
             [&](const std::string& v) { return attention_name(r, "flash_attn", v); });
  if (r.boolean("enable_liger_kernel").value_or(false))
    r.use("enable_liger_kernel", "true", "loss", "fused");
  r.map_text("optim", "optimizer",
             [&](const std::string& v) { return hf_optimizer(r, "optim", v); });
  // LLaMA-Factory checkpoints every layer unless disable_gradient_checkpointing is true
  // (src/llamafactory/model/model_utils/checkpointing.py, prepare_model_for_training). The
  // Trainer's own gradient_checkpointing, passed through, turns it on again when true
  // (src/transformers/trainer.py, _inner_training_loop), so true wins over the disable key; false
  // leaves LLaMA-Factory's default.
  if (auto re = r.boolean("use_reentrant_gc"); re && !*re)
    r.use("use_reentrant_gc", "false", "non_reentrant", "true");
  const bool disabled = r.boolean("disable_gradient_checkpointing").value_or(false);
  if (disabled) r.use("disable_gradient_checkpointing", "true", "recompute", "none");
  if (auto g = r.boolean("gradient_checkpointing")) {
    if (*g)
      r.use("gradient_checkpointing", "true", "recompute", "full");
    else if (!disabled)
      r.ignore("gradient_checkpointing",
               "false: LLaMA-Factory checkpoints anyway unless disable_gradient_checkpointing is "
               "true");
  }
  r.copy_bool("torch_compile", "compile");
  r.reference("deepspeed", TrainerFormat::kDeepSpeed);
  const bool unsloth = r.boolean("use_unsloth").value_or(false);
  r.use(unsloth ? "use_unsloth" : "(file)", unsloth ? "true" : "", "stack",
        unsloth ? "unsloth" : "llama-factory");
}

void read_accelerate(Reader& r) {
  const std::string type = r.text("distributed_type").value_or("NO");
  const std::string t = ascii_lower(type);
  if (t == "fsdp") {
    r.use("distributed_type", type, "shard", "fsdp");
  } else if (t == "multi_gpu") {
    r.use("distributed_type", type, "shard", "ddp");
  } else if (t == "deepspeed") {
    r.map_text("deepspeed_config.zero_stage", "shard", [&](const std::string& v) {
      return zero_stage(r, "deepspeed_config.zero_stage", v);
    });
    r.use("distributed_type", type, "stack", "deepspeed");
  } else if (t != "no") {
    r.ignore("distributed_type", fmt::format("'{}' is not modelled", type));
  }
  r.copy_integer("num_processes", "gpu_count", 1, 65536);
  const std::string strategy =
      ascii_lower(r.text("fsdp_config.fsdp_sharding_strategy").value_or(""));
  const bool hybrid = t == "fsdp" && hybrid_fsdp_strategy(strategy);
  const auto processes = hybrid ? r.integer("num_processes", 1, 65536) : std::nullopt;
  if (auto machines = r.integer("num_machines", 1, 65536); machines && *machines > 1) {
    if (hybrid && processes && *processes % *machines == 0)
      // Hybrid sharding shards within a machine: its cards are the group.
      r.use("num_machines", std::to_string(*machines), "shard_group",
            std::to_string(*processes / *machines));
    else
      r.ignore("num_machines",
               "several machines: num_processes counts every card; give the node layout with "
               "ftplan scale");
  }
  if (auto mp = r.text("mixed_precision")) {
    const std::string s = ascii_lower(*mp);
    if (s == "bf16" || s == "fp16" || s == "fp8")
      r.use("mixed_precision", *mp, "precision", s);
    else if (s == "no")
      r.ignore("mixed_precision", "FP32 training is not modelled: estimated as BF16");
    else
      r.fail("mixed_precision", "no, fp16, bf16 or fp8", *mp);
  }
  r.map_text("fsdp_config.fsdp_sharding_strategy", "shard", [&](const std::string& v) {
    return fsdp_strategy(r, "fsdp_config.fsdp_sharding_strategy", v);
  });
  if (auto o = r.boolean("fsdp_config.fsdp_offload_params"); o && *o) {
    r.use("fsdp_config.fsdp_offload_params", "true", "offload_params", "true");
    r.use("fsdp_config.fsdp_offload_params", "true", "offload_optimizer", "true");
  }
  fsdp_activation_checkpointing(r, "fsdp_config.fsdp_activation_checkpointing");
  r.copy_offload("deepspeed_config.offload_optimizer_device", "offload_optimizer");
  r.copy_offload("deepspeed_config.offload_param_device", "offload_params");
  r.copy_integer("deepspeed_config.gradient_accumulation_steps", "grad_accum", 1, 1 << 20);
  r.reference("deepspeed_config.deepspeed_config_file", TrainerFormat::kDeepSpeed);
  if (auto d = r.text("dynamo_config.dynamo_backend"); d && ascii_lower(*d) != "no")
    r.use("dynamo_config.dynamo_backend", *d, "compile", "true");
}

bool has_key(const std::vector<Leaf>& leaves, std::string_view key) {
  for (const auto& l : leaves)
    if (l.path == key || l.path.starts_with(std::string(key) + ".")) return true;
  return false;
}

bool has_component(const std::vector<Leaf>& leaves) {
  for (const auto& l : leaves)
    if (l.path.ends_with("._component_")) return true;
  return false;
}

TrainerFormat detect(const std::vector<Leaf>& leaves, const std::string& file) {
  if (has_key(leaves, "peft_type")) return TrainerFormat::kPeftAdapter;
  if (has_key(leaves, "zero_optimization") || has_key(leaves, "train_micro_batch_size_per_gpu"))
    return TrainerFormat::kDeepSpeed;
  if (has_key(leaves, "distributed_type") || has_key(leaves, "compute_environment"))
    return TrainerFormat::kAccelerate;
  if (has_component(leaves)) return TrainerFormat::kTorchtune;
  // LitGPT: the checkpoint folder beside any argument of its finetune commands.
  if (has_key(leaves, "checkpoint_dir") &&
      std::any_of(leaves.begin(), leaves.end(), [](const Leaf& l) {
        return l.path.starts_with("train.") || l.path.starts_with("lora_") ||
               l.path == "precision" || l.path == "quantize" || l.path == "devices";
      }))
    return TrainerFormat::kLitgpt;
  if (has_key(leaves, "base_model")) return TrainerFormat::kAxolotl;
  if (has_key(leaves, "finetuning_type") || has_key(leaves, "cutoff_len") ||
      (has_key(leaves, "stage") && has_key(leaves, "template")))
    return TrainerFormat::kLlamaFactory;
  if (has_key(leaves, "per_device_train_batch_size") || has_key(leaves, "output_dir") ||
      has_key(leaves, "gradient_accumulation_steps") || has_key(leaves, "optim"))
    return TrainerFormat::kHfTrainer;
  throw UserError(
      ErrorCode::kInvalidValue,
      fmt::format("{}: cannot tell which trainer this file is for: expected keys such as "
                  "peft_type (PEFT adapter_config.json), base_model (axolotl), "
                  "model._component_ (torchtune), finetuning_type (LLaMA-Factory), "
                  "checkpoint_dir (LitGPT), "
                  "per_device_train_batch_size (Transformers/TRL), zero_optimization "
                  "(DeepSpeed) or distributed_type (accelerate)",
                  file),
      "from");
}

}  // namespace

namespace {

TrainerFile read_as(std::string_view text, const std::string& file,
                    std::optional<TrainerFormat> format,
                    const std::vector<std::string>& model_ids) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{')
    check_json_text(text, file, "from");  // duplicate keys, depth, UTF-8
  const YAML::Node root = parse_yaml_document(text, file);
  if (!root.IsMap())
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("{}: expected a map of trainer settings, got {}", file, describe_node(root)),
        "from");
  TrainerFile out;
  out.file = file;
  std::vector<Leaf> leaves;
  flatten(root, "", leaves);
  out.format = format ? *format : detect(leaves, file);
  Reader r(out, std::move(leaves));
  switch (out.format) {
    case TrainerFormat::kPeftAdapter:
      read_peft(r);
      break;
    case TrainerFormat::kHfTrainer:
      read_hf_trainer(r);
      break;
    case TrainerFormat::kAxolotl:
      read_axolotl(r);
      break;
    case TrainerFormat::kTorchtune:
      read_torchtune(r, model_ids);
      break;
    case TrainerFormat::kLlamaFactory:
      read_llama_factory(r);
      break;
    case TrainerFormat::kDeepSpeed:
      read_deepspeed(r, "");
      break;
    case TrainerFormat::kAccelerate:
      read_accelerate(r);
      break;
    case TrainerFormat::kLitgpt:
      read_litgpt(r, model_ids);
      break;
  }
  r.finish();
  return out;
}

}  // namespace

TrainerFile read_trainer_file(std::string_view text, const std::string& file,
                              const std::vector<std::string>& model_ids) {
  return read_as(text, file, std::nullopt, model_ids);
}

TrainerFile read_trainer_file_as(std::string_view text, const std::string& file,
                                 TrainerFormat format, const std::vector<std::string>& model_ids) {
  return read_as(text, file, format, model_ids);
}

std::string resolve_reference(const std::string& naming_file, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute()) return path;
  const std::filesystem::path dir = std::filesystem::path(naming_file).parent_path();
  return dir.empty() ? path : (dir / p).lexically_normal().string();
}

std::vector<std::string> reference_candidates(const std::string& naming_file,
                                              const std::string& path) {
  std::vector<std::string> out{resolve_reference(naming_file, path)};
  // The trainers open a relative path from their working directory (axolotl's and
  // LLaMA-Factory's examples name deepspeed_configs/zero1.json and examples/deepspeed/... from
  // the repository's root): tried when nothing lies beside the file.
  if (!std::filesystem::path(path).is_absolute() && out.front() != path) out.push_back(path);
  return out;
}

std::vector<TrainerFile> follow_references(
    TrainerFile& f, const std::function<std::optional<std::string>(const std::string&)>& read_text,
    const std::vector<std::string>& model_ids) {
  std::vector<TrainerFile> out;
  for (const FileReference& ref : f.references) {
    const std::vector<std::string> candidates = reference_candidates(f.file, ref.path);
    std::optional<std::string> text;
    std::string resolved, first_error;
    for (const std::string& c : candidates) {
      try {
        text = read_text(c);
      } catch (const UserError& e) {
        if (first_error.empty()) first_error = e.what();
      }
      if (text) {
        resolved = c;
        break;
      }
    }
    // No file may be read here (the API) and none was given inline: the key stays ignored.
    if (!text && first_error.empty()) continue;
    if (!text) {
      const std::string where =
          candidates.size() > 1
              ? fmt::format("is found neither beside it ({}) nor from the working directory ({})",
                            candidates[0], candidates[1])
              : fmt::format("is not found at {}", candidates[0]);
      // A missing file needs no more words than where it was looked for; another failure (a
      // directory, a file too large) says what it was.
      const bool missing = first_error.find("no such file") != std::string::npos;
      throw UserError(ErrorCode::kBadFile,
                      fmt::format("{}: key '{}' names the DeepSpeed config '{}', which {}{}: "
                                  "run from the folder the trainer runs in, put the config beside "
                                  "the file, or drop the key and give --shard",
                                  f.file, ref.key, ref.path, where,
                                  missing ? "" : fmt::format(" ({})", first_error)),
                      ref.key);
    }
    out.push_back(read_as(*text, resolved, ref.format, model_ids));
    std::erase_if(f.ignored, [&](const IgnoredKey& k) { return k.key == ref.key; });
  }
  return out;
}

}  // namespace ftplan
