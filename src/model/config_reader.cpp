#include "model/config_reader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/json_check.hpp"
#include "core/utf8.hpp"

namespace ftplan {

std::string_view mlp_activation_name(MlpActivation a) {
  switch (a) {
    case MlpActivation::kSwiGLU:
      return "swiglu";
    case MlpActivation::kGeGLU:
      return "geglu";
    case MlpActivation::kGelu:
      return "gelu";
  }
  return "swiglu";
}

const std::vector<std::string>& supported_model_types() {
  static const std::vector<std::string> types = {
      "llama",        "mistral",    "mixtral",          "qwen2",       "qwen2_moe",   "qwen3",
      "qwen3_moe",    "gemma",      "gemma2",           "gemma3",      "gemma3_text", "olmo2",
      "granite",      "granitemoe", "granitemoeshared", "glm4",        "glm4_moe",    "phi3",
      "phimoe",       "gpt_oss",    "deepseek_v2",      "deepseek_v3", "qwen2_5_vl",  "qwen3_vl",
      "qwen3_vl_moe", "llama4",     "llama4_text",      "phi",         "starcoder2"};
  return types;
}

namespace {

using json = nlohmann::json;

// Reads typed keys of one JSON object, naming the file and key in every error.
class ConfigKeys {
 public:
  ConfigKeys(const json& obj, std::string file, std::string prefix)
      : obj_(obj), file_(std::move(file)), prefix_(std::move(prefix)) {}

  bool has(const char* key) const { return obj_.contains(key) && !obj_.at(key).is_null(); }
  bool has_key(const char* key) const { return obj_.contains(key); }  // null included

  std::int64_t dim(const char* key) const {
    if (!obj_.contains(key))
      throw UserError(
          ErrorCode::kMissingKey,
          fmt::format("{}: required key '{}' is missing (a positive whole number is expected)",
                      file_, name(key)),
          name(key));
    return checked_dim(key);
  }

  // A dimension with the model class's default when the key is absent; the default is recorded.
  std::int64_t dim_or(const char* key, std::int64_t fallback, std::vector<std::string>& notes,
                      const std::string& why) const {
    if (!has(key)) {
      notes.push_back(fmt::format("{} = {} ({})", key, fallback, why));
      return fallback;
    }
    return checked_dim(key);
  }

  bool flag_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& v = obj_.at(key);
    if (!v.is_boolean())
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("{}: key '{}' must be true or false, got {}", file_, name(key),
                                  describe_json_value(v)),
                      name(key));
    return v.get<bool>();
  }

  // Optional non-negative integer (0 when absent or null).
  std::int64_t optional_count(const char* key) const {
    if (!has(key)) return 0;
    const json& v = obj_.at(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("{}: key '{}' must be a whole number >= 0, got {}", file_,
                                  name(key), describe_json_value(v)),
                      name(key));
    return v.get<std::int64_t>();
  }

  std::vector<std::int64_t> int_list(const char* key) const {
    std::vector<std::int64_t> out;
    if (!has(key)) return out;
    const json& v = obj_.at(key);
    if (!v.is_array())
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("{}: key '{}' must be a list of whole numbers, got {}", file_,
                                  name(key), describe_json_value(v)),
                      name(key));
    for (const auto& item : v) {
      if (!item.is_number_integer())
        throw UserError(ErrorCode::kInvalidValue,
                        fmt::format("{}: key '{}' must be a list of whole numbers, found {}", file_,
                                    name(key), describe_json_value(item)),
                        name(key));
      out.push_back(item.get<std::int64_t>());
    }
    return out;
  }

  std::vector<std::string> string_list(const char* key) const {
    std::vector<std::string> out;
    if (!has(key)) return out;
    const json& v = obj_.at(key);
    if (!v.is_array())
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("{}: key '{}' must be a list of text values", file_, name(key)),
                      name(key));
    for (const auto& item : v) {
      if (!item.is_string())
        throw UserError(ErrorCode::kInvalidValue,
                        fmt::format("{}: key '{}' must be a list of text values, found {}", file_,
                                    name(key), describe_json_value(item)),
                        name(key));
      out.push_back(item.get<std::string>());
    }
    return out;
  }

  std::string name(const char* key) const { return prefix_.empty() ? key : prefix_ + "." + key; }
  const std::string& file() const { return file_; }

 private:
  std::int64_t checked_dim(const char* key) const {
    const json& v = obj_.at(key);
    // 2^24 is far above any real dimension and keeps products of dimensions exact in int64.
    constexpr std::int64_t kMaxDim = 1 << 24;
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > kMaxDim)
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("{}: key '{}' must be a whole number from 1 to {}, got {}", file_,
                                  name(key), kMaxDim, describe_json_value(v)),
                      name(key));
    return v.get<std::int64_t>();
  }

  const json& obj_;
  std::string file_;
  std::string prefix_;
};

void require(bool ok, const std::string& file, const std::string& key, const std::string& what) {
  if (!ok) throw UserError(ErrorCode::kInvalidValue, fmt::format("{}: {}", file, what), key);
}

// A dropout probability: true when the key is present and above 0.
bool dropout_on(const ConfigKeys& k, const json& obj, const char* key) {
  if (!k.has(key)) return false;
  const json& v = obj.at(key);
  require(v.is_number() && v.get<double>() >= 0 && v.get<double>() < 1, k.file(), k.name(key),
          fmt::format("key '{}' must be a probability from 0 up to 1, got {}", k.name(key),
                      describe_json_value(v)));
  return v.get<double>() > 0;
}

// Keys common to every supported family: sizes of attention, MLP and vocabulary.
// `class_head_dim` > 0: the model class's head_dim where config.json omits it (GemmaConfig: 256),
// in place of hidden_size / num_attention_heads.
void read_common(ModelArch& m, const ConfigKeys& k, bool class_defaults,
                 std::int64_t class_head_dim = 0) {
  auto& notes = m.defaults_applied;
  if (class_defaults) {
    // Gemma3TextConfig defaults (transformers configuration_gemma3.py): the published 4B/12B/27B
    // files list only the keys that differ from these.
    m.hidden = k.dim_or("hidden_size", 2304, notes, "Gemma3TextConfig default");
    m.intermediate = k.dim_or("intermediate_size", 9216, notes, "Gemma3TextConfig default");
    m.layers = k.dim_or("num_hidden_layers", 26, notes, "Gemma3TextConfig default");
    m.heads = k.dim_or("num_attention_heads", 8, notes, "Gemma3TextConfig default");
    m.kv_heads = k.dim_or("num_key_value_heads", 4, notes, "Gemma3TextConfig default");
    m.head_dim = k.dim_or("head_dim", 256, notes, "Gemma3TextConfig default");
    m.vocab = k.dim_or("vocab_size", 262208, notes, "Gemma3TextConfig default");
    m.max_position = k.dim_or("max_position_embeddings", 131072, notes, "Gemma3TextConfig default");
  } else {
    m.hidden = k.dim("hidden_size");
    m.layers = k.dim("num_hidden_layers");
    m.heads = k.dim("num_attention_heads");
    m.vocab = k.dim("vocab_size");
    m.kv_heads = k.dim_or("num_key_value_heads", m.heads, notes,
                          "absent: as many key/value heads as attention heads");
    if (!k.has("head_dim") && class_head_dim > 0) {
      m.head_dim = k.dim_or("head_dim", class_head_dim, notes, "absent: the model class's default");
    } else {
      if (!k.has("head_dim"))
        require(m.hidden % m.heads == 0, k.file(), k.name("head_dim"),
                fmt::format("key 'head_dim' is absent and hidden_size {} is not divisible by "
                            "num_attention_heads {}; add head_dim",
                            m.hidden, m.heads));
      m.head_dim = k.dim_or("head_dim", m.hidden / m.heads, notes,
                            "absent: hidden_size / num_attention_heads");
    }
    m.max_position = k.has("max_position_embeddings") ? k.dim("max_position_embeddings") : 0;
  }
  require(m.heads % m.kv_heads == 0, k.file(), k.name("num_key_value_heads"),
          fmt::format("num_attention_heads {} is not a multiple of num_key_value_heads {}", m.heads,
                      m.kv_heads));
  // Keep every parameter product exactly representable and far from int64 overflow.
  require(
      m.layers <= 100000, k.file(), k.name("num_hidden_layers"),
      fmt::format(
          "key 'num_hidden_layers' = {} is beyond any model ftplan can plan for (at most 100000)",
          m.layers));
}

// Sliding-window attention: which layers attend to a window instead of the whole sequence.
void read_sliding_window(ModelArch& m, const ConfigKeys& k, std::int64_t every_nth_global) {
  if (!k.has("sliding_window")) return;
  const std::int64_t window = k.optional_count("sliding_window");
  if (window == 0) return;
  const auto types = k.string_list("layer_types");
  if (!types.empty()) {
    require(static_cast<std::int64_t>(types.size()) == m.layers, k.file(), k.name("layer_types"),
            fmt::format("key 'layer_types' lists {} layers, num_hidden_layers is {}", types.size(),
                        m.layers));
    m.sliding_window = window;
    m.sliding_layers = std::count(types.begin(), types.end(), "sliding_attention");
    return;
  }
  m.sliding_window = window;
  m.sliding_layers = every_nth_global > 0 ? m.layers - m.layers / every_nth_global : m.layers;
}

// DeepSeek-V2/V3 multi-head latent attention (configuration_deepseek_v3.py). Every MLA key is
// required: q_lora_rank may be null (a plain q_proj, as in DeepSeek-V2-Lite) but not absent.
void read_latent_attention(ModelArch& m, const ConfigKeys& k) {
  m.mla = true;
  if (!k.has_key("q_lora_rank"))
    throw UserError(ErrorCode::kMissingKey,
                    fmt::format("{}: required key '{}' is missing (a positive whole number, or "
                                "null for a plain q_proj)",
                                k.file(), k.name("q_lora_rank")),
                    k.name("q_lora_rank"));
  m.q_lora_rank = k.has("q_lora_rank") ? k.dim("q_lora_rank") : 0;
  m.kv_lora_rank = k.dim("kv_lora_rank");
  m.qk_nope_head_dim = k.dim("qk_nope_head_dim");
  m.qk_rope_head_dim = k.dim("qk_rope_head_dim");
  m.v_head_dim = k.dim("v_head_dim");
  require(!k.flag_or("attention_bias", false), k.file(), k.name("attention_bias"),
          "key 'attention_bias' = true is not supported with multi-head latent attention");
  // Keys and queries are qk_nope + qk_rope wide per head, one key/value head per query head.
  std::erase_if(m.defaults_applied, [](const std::string& note) {
    return note.starts_with("head_dim") || note.starts_with("num_key_value_heads");
  });
  m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  m.kv_heads = m.heads;
}

// Routed + shared experts after `first_k_dense_replace` dense layers (DeepSeek-V2/V3, GLM-4.5):
// layer i is a mixture of experts when i >= first_k_dense_replace and i % moe_layer_freq == 0
// (modeling_deepseek.py DeepseekV2DecoderLayer).
void read_shared_expert_moe(ModelArch& m, const ConfigKeys& k) {
  m.intermediate = k.dim("intermediate_size");
  m.num_experts = k.dim("n_routed_experts");
  m.experts_per_token = k.dim("num_experts_per_tok");
  m.moe_intermediate = k.dim("moe_intermediate_size");
  m.shared_expert_intermediate = k.optional_count("n_shared_experts") * m.moe_intermediate;
  const std::int64_t first_dense = k.optional_count("first_k_dense_replace");
  const std::int64_t freq = k.has("moe_layer_freq") ? k.dim("moe_layer_freq") : 1;
  for (std::int64_t i = first_dense; i < m.layers; ++i)
    if (i % freq == 0) ++m.moe_layers;
  m.expert_naming = "gate_proj";
  m.mtp_layers = k.optional_count("num_nextn_predict_layers");
}

// Gemma 3's SigLIP vision tower (vision_config, SiglipVisionConfig). Gemma3Config builds a
// SiglipVisionConfig from the keys present; the absent ones take SiglipVisionConfig's defaults.
void read_siglip_vision(ModelArch& m, const json& obj, const std::string& file) {
  ConfigKeys v(obj, file, "vision_config");
  auto& notes = m.defaults_applied;
  const std::string why = "SiglipVisionConfig default";
  VisionTower& t = m.vision;
  t.kind = "siglip";
  t.projector = "gemma3";
  t.hidden = v.dim_or("hidden_size", 768, notes, why);
  t.intermediate = v.dim_or("intermediate_size", 3072, notes, why);
  t.layers = v.dim_or("num_hidden_layers", 12, notes, why);
  t.heads = v.dim_or("num_attention_heads", 12, notes, why);
  t.channels = v.dim_or("num_channels", 3, notes, why);
  t.image_size = v.dim_or("image_size", 224, notes, why);
  t.patch_size = v.dim_or("patch_size", 16, notes, why);
  require(t.image_size % t.patch_size == 0, file, v.name("patch_size"),
          fmt::format("vision_config image_size {} is not a multiple of patch_size {}",
                      t.image_size, t.patch_size));
  require(!v.flag_or("vision_use_head", false), file, v.name("vision_use_head"),
          "vision_config.vision_use_head = true (an attention-pooling head) is not supported; "
          "Gemma 3 checkpoints set it to false");
  // Keep the notes apart from the text decoder's: they name the vision_config keys.
  for (auto& note : notes)
    if (note.find(why) != std::string::npos && !note.starts_with("vision_config."))
      note = "vision_config." + note;
}

// Qwen2.5-VL's vision transformer and patch merger (vision_config, Qwen2_5_VLVisionConfig; the
// published files name the channel count in_chans).
void read_qwen2_5_vision(ModelArch& m, const json& obj, const std::string& file) {
  ConfigKeys v(obj, file, "vision_config");
  auto& notes = m.defaults_applied;
  const std::string why = "Qwen2_5_VLVisionConfig default";
  VisionTower& t = m.vision;
  t.kind = "qwen2_5_vl";
  t.projector = "qwen2_5_vl";
  t.layers = v.dim_or("depth", 32, notes, why);
  t.hidden = v.dim_or("hidden_size", 3584, notes, why);
  t.intermediate = v.dim_or("intermediate_size", 3420, notes, why);
  t.heads = v.dim_or("num_heads", 16, notes, why);
  t.channels = v.has("in_chans") ? v.dim("in_chans") : v.dim_or("in_channels", 3, notes, why);
  t.patch_size = v.dim_or("patch_size", 14, notes, why);
  t.temporal_patch_size = v.dim_or("temporal_patch_size", 2, notes, why);
  t.spatial_merge_size = v.dim_or("spatial_merge_size", 2, notes, why);
  t.out_hidden = v.dim_or("out_hidden_size", 3584, notes, why);
  for (auto& note : notes)
    if (note.find(why) != std::string::npos && !note.starts_with("vision_config."))
      note = "vision_config." + note;
}

// Llama 4's vision encoder and pixel-shuffle adapter (vision_config, Llama4VisionConfig).
void read_llama4_vision(ModelArch& m, const json& obj, const std::string& file) {
  ConfigKeys v(obj, file, "vision_config");
  auto& notes = m.defaults_applied;
  const std::string why = "Llama4VisionConfig default";
  VisionTower& t = m.vision;
  t.kind = "llama4";
  t.projector = "llama4";
  t.hidden = v.dim_or("hidden_size", 768, notes, why);
  t.layers = v.dim_or("num_hidden_layers", 34, notes, why);
  t.heads = v.dim_or("num_attention_heads", 16, notes, why);
  t.intermediate = v.dim_or("intermediate_size", 5632, notes, why);
  t.channels = v.dim_or("num_channels", 3, notes, why);
  t.image_size = v.dim_or("image_size", 448, notes, why);
  t.patch_size = v.dim_or("patch_size", 14, notes, why);
  t.adapter_input = v.dim_or("projector_input_dim", 4096, notes, why);
  t.adapter_output = v.dim_or("projector_output_dim", 4096, notes, why);
  t.output_dim = v.dim_or("vision_output_dim", 7680, notes, why);
  require(t.image_size % t.patch_size == 0, file, v.name("patch_size"),
          fmt::format("vision_config image_size {} is not a multiple of patch_size {}",
                      t.image_size, t.patch_size));
  require(!v.flag_or("multi_modal_projector_bias", false), file,
          v.name("multi_modal_projector_bias"),
          "vision_config.multi_modal_projector_bias = true is not supported; Llama 4 checkpoints "
          "set it to false");
  for (auto& note : notes)
    if (note.find(why) != std::string::npos && !note.starts_with("vision_config."))
      note = "vision_config." + note;
}

// Qwen3-VL's vision transformer, its merger and deepstack mergers (vision_config,
// Qwen3VLVisionConfig).
void read_qwen3_vl_vision(ModelArch& m, const json& obj, const std::string& file) {
  ConfigKeys v(obj, file, "vision_config");
  auto& notes = m.defaults_applied;
  const std::string why = "Qwen3VLVisionConfig default";
  VisionTower& t = m.vision;
  t.kind = "qwen3_vl";
  t.projector = "qwen3_vl";
  t.layers = v.dim_or("depth", 27, notes, why);
  t.hidden = v.dim_or("hidden_size", 1152, notes, why);
  t.intermediate = v.dim_or("intermediate_size", 4304, notes, why);
  t.heads = v.dim_or("num_heads", 16, notes, why);
  t.channels = v.dim_or("in_channels", 3, notes, why);
  t.patch_size = v.dim_or("patch_size", 16, notes, why);
  t.temporal_patch_size = v.dim_or("temporal_patch_size", 2, notes, why);
  t.spatial_merge_size = v.dim_or("spatial_merge_size", 2, notes, why);
  t.out_hidden = v.dim_or("out_hidden_size", 3584, notes, why);
  t.position_embeddings = v.dim_or("num_position_embeddings", 2304, notes, why);
  if (v.has_key("deepstack_visual_indexes")) {
    const auto taps = v.int_list("deepstack_visual_indexes");
    for (auto i : taps)
      require(i >= 0 && i < t.layers, file, v.name("deepstack_visual_indexes"),
              fmt::format("vision_config.deepstack_visual_indexes names layer {}, the vision "
                          "tower has {} (depth)",
                          i, t.layers));
    t.deepstack_mergers = static_cast<std::int64_t>(taps.size());
  } else {
    notes.push_back("deepstack_visual_indexes = [8, 16, 24] (" + why + ")");
    t.deepstack_mergers = 3;
  }
  for (auto& note : notes)
    if (note.find(why) != std::string::npos && !note.starts_with("vision_config."))
      note = "vision_config." + note;
}

// Which of a Llama 4 decoder's layers are mixtures of experts: `moe_layers` when given, else
// every interleave_moe_layer_step-th layer counting from step - 1 (Llama4TextConfig).
std::int64_t llama4_moe_layers(const ModelArch& m, const ConfigKeys& k) {
  if (k.has("moe_layers")) {
    const auto listed = k.int_list("moe_layers");
    std::set<std::int64_t> layers;
    for (auto i : listed) {
      require(i >= 0 && i < m.layers, k.file(), k.name("moe_layers"),
              fmt::format("key 'moe_layers' names layer {}, num_hidden_layers is {}", i, m.layers));
      layers.insert(i);
    }
    return static_cast<std::int64_t>(layers.size());
  }
  const std::int64_t step =
      k.has("interleave_moe_layer_step") ? k.dim("interleave_moe_layer_step") : 1;
  std::int64_t n = 0;
  for (std::int64_t i = step - 1; i < m.layers; i += step)
    ++n;
  return n;
}

// The text decoder and optional vision tower of a multimodal config whose language model sits
// under text_config (`type` names the family in messages).
const json& nested_text_config(const json& root, const std::string& file, const std::string& type) {
  if (!root.contains("text_config") || !root["text_config"].is_object())
    throw UserError(ErrorCode::kMissingKey,
                    fmt::format("{}: model_type '{}' needs a 'text_config' object", file, type),
                    "text_config");
  return root["text_config"];
}

const json* vision_config(const json& root, const std::string& file, const std::string& type,
                          bool required) {
  if (!root.contains("vision_config") || root["vision_config"].is_null()) {
    if (required)
      throw UserError(ErrorCode::kMissingKey,
                      fmt::format("{}: model_type '{}' needs a 'vision_config' object", file, type),
                      "vision_config");
    return nullptr;
  }
  if (!root["vision_config"].is_object())
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: key 'vision_config' must be an object", file),
                    "vision_config");
  return &root["vision_config"];
}

}  // namespace

nlohmann::json parse_config_object(std::string_view json_text, const std::string& file) {
  check_json_text(json_text, file, "");
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: not valid JSON (byte {}): {}", file, e.byte,
                                cut_utf8(printable_utf8(e.what()), 200)),
                    file);
  } catch (const json::exception& e) {  // e.g. a number too large for a double
    throw UserError(
        ErrorCode::kBadFile,
        fmt::format("{}: not valid JSON: {}", file, cut_utf8(printable_utf8(e.what()), 200)), file);
  }
  if (!root.is_object())
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: expected a JSON object (a config.json)", file), file);
  return root;
}

ModelArch read_hf_config(std::string_view json_text, const std::string& file,
                         const std::string& id) {
  const json root = parse_config_object(json_text, file);
  if (!root.contains("model_type") || !root["model_type"].is_string())
    throw UserError(
        ErrorCode::kMissingKey,
        fmt::format("{}: required key 'model_type' is missing or not text (expected one of: {})",
                    file, fmt::join(supported_model_types(), ", ")),
        "model_type");

  ModelArch m;
  m.id = id;
  m.name = id;
  m.source_file = file;
  std::string type = root["model_type"].get<std::string>();
  const json* text = &root;
  std::string prefix;
  if (type == "gemma3") {
    // Gemma3ForConditionalGeneration: the language model's keys sit under text_config.
    if (!root.contains("text_config") || !root["text_config"].is_object())
      throw UserError(ErrorCode::kMissingKey,
                      fmt::format("{}: model_type 'gemma3' needs a 'text_config' object", file),
                      "text_config");
    text = &root["text_config"];
    prefix = "text_config";
    type = "gemma3_text";
    if (root.contains("vision_config") && !root["vision_config"].is_null()) {
      if (!root["vision_config"].is_object())
        throw UserError(ErrorCode::kInvalidValue,
                        fmt::format("{}: key 'vision_config' must be an object", file),
                        "vision_config");
      read_siglip_vision(m, root["vision_config"], file);
    }
  }
  if (type == "qwen2_5_vl") {
    // Qwen2_5_VLForConditionalGeneration: a Qwen2 decoder (its keys at the top level, or under
    // text_config in files saved by newer transformers) and a vision tower (vision_config).
    if (root.contains("text_config") && root["text_config"].is_object()) {
      text = &root["text_config"];
      prefix = "text_config";
    }
    if (!root.contains("vision_config") || !root["vision_config"].is_object())
      throw UserError(
          ErrorCode::kMissingKey,
          fmt::format("{}: model_type 'qwen2_5_vl' needs a 'vision_config' object", file),
          "vision_config");
    read_qwen2_5_vision(m, root["vision_config"], file);
    type = "qwen2";
  }
  // Set where a multimodal file keeps tie_word_embeddings at the top level only.
  bool root_ties_default = false;
  std::string expert_naming_override;
  if (type == "qwen3_vl" || type == "qwen3_vl_moe") {
    // Qwen3VL(Moe)ForConditionalGeneration: a Qwen3 (or Qwen3-MoE) decoder under text_config
    // and a vision tower with deepstack mergers under vision_config.
    text = &nested_text_config(root, file, type);
    prefix = "text_config";
    read_qwen3_vl_vision(m, *vision_config(root, file, type, true), file);
    root_ties_default = true;
    if (type == "qwen3_vl_moe") expert_naming_override = "fused";
    type = type == "qwen3_vl" ? "qwen3" : "qwen3_moe";
  } else if (type == "llama4") {
    // Llama4ForConditionalGeneration: the decoder under text_config (llama4_text), the vision
    // encoder under vision_config.
    text = &nested_text_config(root, file, type);
    prefix = "text_config";
    if (const json* v = vision_config(root, file, type, false)) read_llama4_vision(m, *v, file);
    root_ties_default = true;
    type = "llama4_text";
  }
  const auto& types = supported_model_types();
  if (std::find(types.begin(), types.end(), type) == types.end())
    throw UserError(
        ErrorCode::kUnsupported,
        fmt::format("{}: model_type '{}' is not supported (supported: {}); decoder-only "
                    "transformers of these families can be planned",
                    file, type, fmt::join(types, ", ")),
        "model_type");
  m.model_type = type;
  ConfigKeys k(*text, file, prefix);

  const bool gemma = type == "gemma3_text";
  // GemmaConfig (configuration_gemma.py) sets head_dim 256 whatever the width.
  read_common(m, k, gemma, type == "gemma" ? 256 : 0);
  auto& notes = m.defaults_applied;

  if (type == "llama4_text") {
    // Llama4TextModel (modeling_llama4.py): Llama attention (its QK norm, Llama4TextL2Norm, has
    // no weight; NoPE layers and chunked attention change no parameter), MoE layers with a
    // router, 16 or 128 routed experts intermediate_size wide and one shared expert of that
    // width; the other layers a dense MLP intermediate_size_mlp wide.
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    m.qkv_bias = m.o_bias = k.flag_or("attention_bias", false);
    m.num_experts = k.dim("num_local_experts");
    m.experts_per_token = k.dim("num_experts_per_tok");
    m.moe_intermediate = k.dim("intermediate_size");
    m.shared_expert_intermediate = m.moe_intermediate;
    m.moe_layers = llama4_moe_layers(m, k);
    // The dense width is required only where a layer is dense.
    m.intermediate = m.moe_layers < m.layers || k.has("intermediate_size_mlp")
                         ? k.dim("intermediate_size_mlp")
                         : 0;
    m.expert_naming = "llama4";
    m.mlp_module = "feed_forward";
    // Llama4TextConfig (configuration_llama4.py): layers with RoPE attend within chunks of
    // attention_chunk_size tokens, the NoPE layers (no_rope_layers[i] == 0; by default every
    // no_rope_layer_interval-th layer, interval 4) to the whole context.
    m.attention_chunk = k.optional_count("attention_chunk_size");
    if (m.attention_chunk > 0) {
      if (k.has("no_rope_layers")) {
        const auto rope = k.int_list("no_rope_layers");
        require(static_cast<std::int64_t>(rope.size()) == m.layers, k.file(),
                k.name("no_rope_layers"),
                fmt::format("key 'no_rope_layers' lists {} layers, num_hidden_layers is {}",
                            rope.size(), m.layers));
        m.chunked_layers = std::count_if(rope.begin(), rope.end(), [](auto r) { return r != 0; });
      } else {
        const std::int64_t interval =
            k.has("no_rope_layer_interval") ? k.dim("no_rope_layer_interval") : 4;
        m.chunked_layers = m.layers - m.layers / interval;
      }
    }
  } else if (type == "llama") {
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    m.qkv_bias = m.o_bias = k.flag_or("attention_bias", false);
    m.mlp_bias = k.flag_or("mlp_bias", false);
  } else if (type == "mistral") {
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    read_sliding_window(m, k, 0);
  } else if (type == "qwen2" || type == "qwen2_moe" || type == "qwen3" || type == "qwen3_moe") {
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    if (type == "qwen2") {
      m.qkv_bias = true;  // Qwen2Attention: q, k, v with bias, o without (modeling_qwen2.py)
    } else if (type == "qwen2_moe") {
      // Qwen2MoeAttention (modeling_qwen2_moe.py): q, k, v with bias (config.qkv_bias in newer
      // transformers, true by default), o without; no q/k norm.
      m.qkv_bias = k.flag_or("qkv_bias", true);
    } else {
      m.qkv_bias = m.o_bias = k.flag_or("attention_bias", false);
      m.qk_norm = true;  // Qwen3Attention: q_norm, k_norm over head_dim
    }
    if (k.flag_or("use_sliding_window", false)) {
      const std::int64_t window = k.optional_count("sliding_window");
      const std::int64_t max_window_layers = k.optional_count("max_window_layers");
      if (window > 0) {
        m.sliding_window = window;
        // Layers from max_window_layers on use the window (Qwen2/3 attention masks).
        m.sliding_layers = std::max<std::int64_t>(0, m.layers - max_window_layers);
      }
    }
    if (type == "qwen3_moe" || type == "qwen2_moe") {
      // Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer: layer i is a mixture of experts unless it
      // is listed in mlp_only_layers or (i + 1) is not a multiple of decoder_sparse_step; the
      // other layers hold a dense MLP intermediate_size wide.
      m.num_experts = k.dim("num_experts");
      m.experts_per_token = k.dim("num_experts_per_tok");
      m.moe_intermediate = k.dim("moe_intermediate_size");
      const std::int64_t step = k.has("decoder_sparse_step") ? k.dim("decoder_sparse_step") : 1;
      const auto dense_only = k.int_list("mlp_only_layers");
      std::set<std::int64_t> dense(dense_only.begin(), dense_only.end());
      for (std::int64_t i = 0; i < m.layers; ++i)
        if (!dense.count(i) && (i + 1) % step == 0) ++m.moe_layers;
      m.expert_naming = "gate_proj";
      if (type == "qwen2_moe") {
        // Qwen2MoeSparseMoeBlock: beside the routed experts one shared expert,
        // shared_expert_intermediate_size wide, scaled by sigmoid(shared_expert_gate(x)).
        m.shared_expert_intermediate = k.dim("shared_expert_intermediate_size");
        m.shared_expert_gate = true;
        m.expert_naming = "qwen2_moe";
      }
    }
  } else if (type == "mixtral") {
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    m.num_experts = k.dim("num_local_experts");
    m.experts_per_token = k.dim("num_experts_per_tok");
    m.moe_intermediate = m.intermediate;  // Mixtral's intermediate_size is per expert
    m.moe_layers = m.layers;
    m.expert_naming = "w1";
    read_sliding_window(m, k, 0);
  } else if (type == "gemma3_text") {
    m.tied_embeddings = k.flag_or("tie_word_embeddings", true);
    m.qkv_bias = m.o_bias = k.flag_or("attention_bias", false);
    m.qk_norm = true;
    m.norms_per_layer = 4;  // input, post-attention, pre-feedforward, post-feedforward
    m.activation = MlpActivation::kGeGLU;
    const std::int64_t pattern =
        k.has("sliding_window_pattern") ? k.dim("sliding_window_pattern") : 6;
    if (!k.has("sliding_window"))
      notes.push_back("sliding_window = 4096 (Gemma3TextConfig default)");
    m.sliding_window = k.has("sliding_window") ? k.optional_count("sliding_window") : 4096;
    const auto layer_types = k.string_list("layer_types");
    m.sliding_layers = layer_types.empty() ? m.layers - m.layers / pattern
                                           : std::count(layer_types.begin(), layer_types.end(),
                                                        "sliding_attention");
  } else if (type == "gemma") {
    // GemmaForCausalLM (modeling_gemma.py; Gemma 1, 1.1, CodeGemma): Llama's layout with a GeGLU
    // MLP (hidden_activation, or the older hidden_act, a GELU), two RMSNorms per layer, tied
    // embeddings by default; no sliding window and no soft-capping.
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", true);
    m.qkv_bias = m.o_bias = k.flag_or("attention_bias", false);
    m.activation = MlpActivation::kGeGLU;
  } else if (type == "gemma2") {
    // Gemma2ForCausalLM (modeling_gemma2.py): Gemma 3's layout without q/k norms; sliding and
    // global attention alternate, the even layers (0, 2, ...) sliding.
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", true);
    m.qkv_bias = m.o_bias = k.flag_or("attention_bias", false);
    m.norms_per_layer = 4;
    m.activation = MlpActivation::kGeGLU;
    read_sliding_window(m, k, 2);
  } else if (type == "olmo2") {
    // Olmo2ForCausalLM (modeling_olmo2.py): norms after attention and after the MLP instead of
    // before; q_norm and k_norm over the whole projections.
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    m.qkv_bias = m.o_bias = k.flag_or("attention_bias", false);
    m.qk_norm = true;
    m.qk_norm_full_width = true;
    m.norm_names = {"post_attention_layernorm", "post_feedforward_layernorm"};
  } else if (type == "granite") {
    // GraniteForCausalLM: Llama's layout; embedding, attention, residual and logit multipliers
    // scale activations and hold no parameters.
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    m.qkv_bias = m.o_bias = k.flag_or("attention_bias", false);
    m.mlp_bias = k.flag_or("mlp_bias", false);
  } else if (type == "granitemoe" || type == "granitemoeshared") {
    m.intermediate = k.dim("intermediate_size");  // per expert
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    m.qkv_bias = m.o_bias = k.flag_or("attention_bias", false);
    m.num_experts = k.dim("num_local_experts");
    m.experts_per_token = k.dim("num_experts_per_tok");
    m.moe_intermediate = m.intermediate;
    m.moe_layers = m.layers;
    m.expert_naming = "granite";
    if (type == "granitemoeshared")
      m.shared_expert_intermediate = k.optional_count("shared_intermediate_size");
  } else if (type == "glm4") {
    // Glm4ForCausalLM (modeling_glm4.py): q, k, v with bias, o without; a fused gate_up_proj;
    // four norms per layer, two of them on the attention and MLP outputs.
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    m.qkv_bias = k.flag_or("attention_bias", true);
    m.fused_gate_up = true;
    m.norms_per_layer = 4;
    m.norm_names = {"input_layernorm", "post_self_attn_layernorm", "post_attention_layernorm",
                    "post_mlp_layernorm"};
  } else if (type == "glm4_moe") {
    // Glm4MoeForCausalLM (modeling_glm4_moe.py): q, k, v with bias, optional q/k norms over
    // head_dim, DeepSeek-V3's router and shared experts after first_k_dense_replace dense layers.
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    m.qkv_bias = k.flag_or("attention_bias", false);
    m.qk_norm = k.flag_or("use_qk_norm", false);
    read_shared_expert_moe(m, k);
    m.router_score_bias = true;  // Glm4MoeTopkRouter.e_score_correction_bias
  } else if (type == "phimoe") {
    // PhimoeForCausalLM (modeling_phimoe.py): biased attention projections, LayerNorms with a
    // bias, Mixtral's experts and an lm_head with a bias.
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    m.qkv_bias = m.o_bias = k.flag_or("attention_bias", false);
    m.norm_bias = true;
    m.lm_head_bias = k.flag_or("lm_head_bias", false);
    m.num_experts = k.dim("num_local_experts");
    m.experts_per_token = k.dim("num_experts_per_tok");
    m.moe_intermediate = m.intermediate;
    m.moe_layers = m.layers;
    m.expert_naming = "w1";
    read_sliding_window(m, k, 0);
  } else if (type == "deepseek_v2" || type == "deepseek_v3") {
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    read_latent_attention(m, k);
    read_shared_expert_moe(m, k);
    // DeepseekV3TopkRouter: sigmoid scores with a per-expert correction bias (noaux_tc).
    m.router_score_bias = type == "deepseek_v3";
  } else if (type == "phi3") {
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    m.fused_qkv = true;      // Phi3Attention: qkv_proj
    m.fused_gate_up = true;  // Phi3MLP: gate_up_proj
    read_sliding_window(m, k, 0);
  } else if (type == "phi") {
    // PhiForCausalLM (transformers modeling_phi.py): one LayerNorm per layer (input_layernorm,
    // weight and bias) whose output feeds attention and MLP in parallel; q_proj, k_proj, v_proj
    // and the output projection `dense`, all with a bias; PhiMLP fc1 [I, H] -> gelu_new -> fc2
    // [H, I], both with a bias; model.final_layernorm with a bias; lm_head with a bias. Partial
    // rotary embeddings hold no parameters.
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    require(!k.flag_or("qk_layernorm", false), k.file(), k.name("qk_layernorm"),
            "key 'qk_layernorm' = true (LayerNorms on q and k) is not supported for model_type "
            "'phi'; the published Phi-1.5 and Phi-2 files set it to false");
    m.qkv_bias = m.o_bias = m.mlp_bias = true;
    m.norm_bias = m.lm_head_bias = true;
    m.activation = MlpActivation::kGelu;
    m.parallel_block = true;
    m.norms_per_layer = 1;
    m.norm_names = {"input_layernorm"};
    m.o_proj_name = "dense";
    m.final_norm_name = "final_layernorm";
    m.attention_dropout = dropout_on(k, *text, "attention_dropout");
    m.residual_dropout = dropout_on(k, *text, "resid_pdrop");
    m.embedding_dropout = dropout_on(k, *text, "embd_pdrop");
  } else if (type == "starcoder2") {
    // Starcoder2ForCausalLM (transformers modeling_starcoder2.py): LayerNorms with a bias
    // (input_layernorm, post_attention_layernorm, model.norm), q/k/v/o with a bias when use_bias
    // (true by default), grouped-query attention, Starcoder2MLP c_fc [I, H] ->
    // gelu_pytorch_tanh -> c_proj [H, I] with biases under use_bias; tied embeddings by default
    // (Starcoder2Config tie_word_embeddings true).
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", true);
    m.qkv_bias = m.o_bias = m.mlp_bias = k.flag_or("use_bias", true);
    m.norm_bias = true;
    m.activation = MlpActivation::kGelu;
    m.mlp_in_name = "c_fc";
    m.mlp_out_name = "c_proj";
    m.attention_dropout = dropout_on(k, *text, "attention_dropout");
    m.residual_dropout = dropout_on(k, *text, "residual_dropout");
    m.embedding_dropout = dropout_on(k, *text, "embedding_dropout");
    read_sliding_window(m, k, 0);
  } else if (type == "gpt_oss") {
    m.intermediate = k.dim("intermediate_size");
    m.tied_embeddings = k.flag_or("tie_word_embeddings", false);
    m.qkv_bias = m.o_bias = k.flag_or("attention_bias", true);
    m.attention_sinks = true;
    m.num_experts = k.dim("num_local_experts");
    m.experts_per_token =
        k.has("num_experts_per_tok") ? k.dim("num_experts_per_tok") : k.dim("experts_per_token");
    m.moe_intermediate = m.intermediate;
    m.moe_layers = m.layers;
    m.router_bias = true;
    m.expert_bias = true;
    m.fused_gate_up = true;
    m.expert_naming = "fused";
    read_sliding_window(m, k, 2);
  }
  if (!expert_naming_override.empty()) m.expert_naming = expert_naming_override;
  if (root_ties_default && !k.has("tie_word_embeddings") && root.contains("tie_word_embeddings") &&
      root["tie_word_embeddings"].is_boolean())
    m.tied_embeddings = root["tie_word_embeddings"].get<bool>();
  if (m.is_moe())
    require(m.experts_per_token <= m.num_experts, file, k.name("num_experts_per_tok"),
            fmt::format("num_experts_per_tok {} exceeds the number of experts {}",
                        m.experts_per_token, m.num_experts));
  return m;
}

}  // namespace ftplan
