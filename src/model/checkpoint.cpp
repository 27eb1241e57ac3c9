#include "model/checkpoint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/json_check.hpp"
#include "core/utf8.hpp"
#include "model/config_reader.hpp"

namespace ftplan {

namespace {

using json = nlohmann::json;

std::string shape_text(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// Folds quantized storage into logical weights. Tensor naming (facts from the quantizers' code):
//  - GPTQ (AutoGPTQ / GPTQModel QuantLinear): P.qweight I32 [in·bits/32, out], P.qzeros I32
//    [groups, out·bits/32], P.scales F16 [groups, out], P.g_idx I32 [in].
//  - AWQ (AutoAWQ WQLinear_GEMM): P.qweight I32 [in, out·bits/32], P.qzeros I32
//    [in/group, out·bits/32], P.scales F16 [in/group, out].
//  - bitsandbytes 4-bit (Params4bit): P.weight U8 holding two 4-bit codes per byte, with
//    P.weight.absmax, P.weight.quant_map, P.weight.quant_state.bitsandbytes__nf4 (or __fp4) and,
//    nested, P.weight.nested_absmax / nested_quant_map.
//  - bitsandbytes 8-bit (Int8Params): P.weight I8 [out, in] with P.SCB and P.weight_format.
//  - FP8 (compressed-tensors, FBGEMM, DeepSeek-V3 blocks): P.weight F8_E4M3 or F8_E5M2 [out, in]
//    with P.weight_scale or P.weight_scale_inv, and perhaps P.input_scale.
class QuantFolder {
 public:
  explicit QuantFolder(const std::vector<StoredTensor>& stored) {
    for (const auto& t : stored)
      by_name_[t.name] = &t;
  }

  std::vector<LogicalTensor> fold(std::vector<std::string>& notes) {
    std::vector<LogicalTensor> out;
    for (const auto& [name, t] : by_name_)
      if (name.ends_with(".qweight")) fold_packed(*t, out, notes);
    for (const auto& [name, t] : by_name_) {
      if (used_.count(name) || !name.ends_with(".weight")) continue;
      fold_weight(*t, out);
    }
    for (const auto& [name, t] : by_name_) {
      if (used_.count(name)) continue;
      out.push_back(part_of(*t, "", 0));
      out.back().shape = t->shape;
      out.back().numel = t->numel();
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return out;
  }

 private:
  const StoredTensor* find(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }

  LogicalTensor part_of(const StoredTensor& main, std::string scheme, int bits) {
    used_.insert(main.name);
    LogicalTensor l;
    l.name = main.name;
    l.dtype = main.dtype;
    l.stored_bytes = main.bytes();
    l.quantization = std::move(scheme);
    l.bits = bits;
    return l;
  }

  void absorb(LogicalTensor& l, const StoredTensor* part) {
    if (!part || used_.count(part->name)) return;
    used_.insert(part->name);
    l.stored_bytes += part->bytes();
  }

  // GPTQ or AWQ: the logical [out, in] weight and the bits from the packed shapes.
  void fold_packed(const StoredTensor& q, std::vector<LogicalTensor>& out,
                   std::vector<std::string>& notes) {
    const std::string p = q.name.substr(0, q.name.size() - std::string_view(".qweight").size());
    const StoredTensor* scales = find(p + ".scales");
    const StoredTensor* zeros = find(p + ".qzeros");
    const StoredTensor* g_idx = find(p + ".g_idx");
    const auto unrecognised = [&](const std::string& why) {
      notes.push_back(
          fmt::format("'{}': packed weight not recognised as GPTQ or AWQ ({}); counted "
                      "as stored",
                      shown_text(q.name), why));
    };
    if (q.dtype != "I32" || q.shape.size() != 2 || !scales || scales->shape.size() != 2)
      return unrecognised("expected qweight I32 2-D with a 2-D scales beside it");
    const std::int64_t out_features = scales->shape[1];
    std::int64_t in_features = 0, bits = 0;
    std::string scheme;
    if (out_features > 0 && q.shape[1] == out_features) {
      scheme = "gptq";  // rows pack the input dimension
      if (g_idx && g_idx->shape.size() == 1 && g_idx->shape[0] > 0 &&
          (32 * q.shape[0]) % g_idx->shape[0] == 0) {
        in_features = g_idx->shape[0];
        bits = 32 * q.shape[0] / in_features;
      } else if (zeros && zeros->shape.size() == 2 && (32 * zeros->shape[1]) % out_features == 0) {
        bits = 32 * zeros->shape[1] / out_features;
        if (bits > 0 && (32 * q.shape[0]) % bits == 0) in_features = 32 * q.shape[0] / bits;
      }
    } else if (q.shape[1] > 0 && (32 * q.shape[1]) % out_features == 0) {
      scheme = "awq";  // columns pack the output dimension
      in_features = q.shape[0];
      bits = 32 * q.shape[1] / out_features;
    }
    if (bits != 2 && bits != 3 && bits != 4 && bits != 8)
      return unrecognised(fmt::format("qweight {} and scales {} give no 2, 3, 4 or 8 bits",
                                      shape_text(q.shape), shape_text(scales->shape)));
    if (in_features <= 0) return unrecognised("the input dimension cannot be derived");
    LogicalTensor l = part_of(q, scheme, static_cast<int>(bits));
    l.name = p + ".weight";
    l.shape = {out_features, in_features};
    l.numel = out_features * in_features;
    absorb(l, scales);
    absorb(l, zeros);
    absorb(l, g_idx);
    out.push_back(std::move(l));
  }

  void fold_weight(const StoredTensor& w, std::vector<LogicalTensor>& out) {
    const std::string p = w.name.substr(0, w.name.size() - std::string_view(".weight").size());
    const std::string parts = w.name + ".";
    if (w.dtype == "U8" && (find(parts + "absmax") || has_prefix(parts + "quant_state."))) {
      const bool fp4 = find(parts + "quant_state.bitsandbytes__fp4") != nullptr;
      LogicalTensor l = part_of(w, fp4 ? "bnb-fp4" : "bnb-nf4", 4);
      l.numel = 2 * w.numel();  // two 4-bit codes per byte; the logical shape is in the data
      for (auto it = by_name_.lower_bound(parts);
           it != by_name_.end() && it->first.starts_with(parts); ++it)
        absorb(l, it->second);
      out.push_back(std::move(l));
    } else if (w.dtype == "I8" && find(p + ".SCB")) {
      LogicalTensor l = part_of(w, "bnb-int8", 8);
      l.shape = w.shape;
      l.numel = w.numel();
      absorb(l, find(p + ".SCB"));
      absorb(l, find(p + ".weight_format"));
      out.push_back(std::move(l));
    } else if (w.dtype == "F8_E4M3" || w.dtype == "F8_E5M2") {
      LogicalTensor l = part_of(w, "fp8", 8);
      l.shape = w.shape;
      l.numel = w.numel();
      absorb(l, find(p + ".weight_scale"));
      absorb(l, find(p + ".weight_scale_inv"));
      absorb(l, find(p + ".input_scale"));
      out.push_back(std::move(l));
    }
  }

  bool has_prefix(const std::string& prefix) const {
    auto it = by_name_.lower_bound(prefix);
    return it != by_name_.end() && it->first.starts_with(prefix);
  }

  std::map<std::string, const StoredTensor*> by_name_;
  std::set<std::string> used_;
};

struct PatternGroup {
  std::int64_t count = 0;
  std::set<std::vector<std::int64_t>> shapes;  // known shapes
  std::int64_t numel = 0;                      // all copies together
};

std::string group_text(const std::vector<std::int64_t>& shape, std::int64_t count) {
  return fmt::format("{} × {}", shape_text(shape), count);
}

}  // namespace

CheckpointInventory build_checkpoint_inventory(const std::vector<ShardHeader>& shards,
                                               const SafetensorsIndex* index,
                                               const std::string& index_file) {
  CheckpointInventory inv;
  std::map<std::string, std::string> home;  // tensor -> shard
  for (const auto& s : shards) {
    inv.files.push_back(s.file);
    for (const auto& t : s.header.tensors) {
      if (auto [it, fresh] = home.emplace(t.name, s.file); !fresh)
        throw UserError(ErrorCode::kInvalidValue,
                        fmt::format("{}: tensor '{}' is stored again (already in {})", s.file,
                                    shown_text(t.name), it->second),
                        shown_text(t.name));
      if (index) {
        auto listed = index->weight_map.find(t.name);
        if (listed == index->weight_map.end() || listed->second != s.file)
          throw UserError(
              ErrorCode::kInvalidValue,
              fmt::format("{}: tensor '{}' is in {} but the index puts it in {}", index_file,
                          shown_text(t.name), s.file,
                          listed == index->weight_map.end() ? "no shard" : listed->second),
              "weight_map." + shown_text(t.name));
      }
      inv.stored.push_back(t);
      inv.stored_bytes += t.bytes();
      auto& d = inv.dtypes[t.dtype];
      ++d.tensors;
      d.bytes += t.bytes();
    }
    if (inv.metadata.empty()) inv.metadata = s.header.metadata;
  }
  if (index)
    for (const auto& [name, file] : index->weight_map)
      if (!home.count(name))
        throw UserError(ErrorCode::kInvalidValue,
                        fmt::format("{}: 'weight_map' lists tensor '{}' in {}, whose header has no "
                                    "such tensor",
                                    index_file, shown_text(name), file),
                        "weight_map." + shown_text(name));
  if (index && index->total_size && *index->total_size != inv.stored_bytes)
    inv.notes.push_back(fmt::format("{}: metadata.total_size is {} bytes, the headers add up to {}",
                                    index_file, *index->total_size, inv.stored_bytes));
  std::sort(inv.stored.begin(), inv.stored.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  inv.logical = QuantFolder(inv.stored).fold(inv.notes);
  std::map<std::pair<std::string, int>, QuantizationFound> found;
  for (const auto& l : inv.logical) {
    inv.params += l.numel;
    if (l.quantization.empty()) continue;
    auto& q = found[{l.quantization, l.bits}];
    q.scheme = l.quantization;
    q.bits = l.bits;
    ++q.weights;
    q.params += l.numel;
    q.stored_bytes += l.stored_bytes;
  }
  for (auto& [key, q] : found)
    inv.quantization.push_back(q);
  return inv;
}

std::string tensor_pattern(std::string_view name) {
  std::string out;
  bool layer_seen = false;
  std::string_view previous;
  while (!name.empty()) {
    const auto dot = name.find('.');
    const std::string_view part = name.substr(0, dot);
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(),
                                                     [](char c) { return c >= '0' && c <= '9'; });
    if (!out.empty()) out += '.';
    if (digits && previous == "experts") {
      out += "{E}";
    } else if (digits && !layer_seen) {
      out += "{L}";
      layer_seen = true;
    } else {
      out += part;
    }
    previous = part;
    name = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
  }
  return out;
}

CheckpointCheck cross_check(const CheckpointInventory& checkpoint, const ParamInventory& config) {
  CheckpointCheck c;
  std::map<std::string, PatternGroup> on_disk;
  for (const auto& l : checkpoint.logical) {
    auto& g = on_disk[tensor_pattern(l.name)];
    ++g.count;
    g.numel += l.numel;
    if (!l.shape.empty()) g.shapes.insert(l.shape);
  }
  c.checkpoint_tensors = static_cast<std::int64_t>(checkpoint.logical.size());
  c.checkpoint_params = checkpoint.params;
  c.config_params = config.total;
  std::set<std::string> expected;
  for (const auto& t : config.tensors) {
    expected.insert(t.name);
    c.config_tensors += t.copies();
    auto it = on_disk.find(t.name);
    if (it == on_disk.end()) {
      c.only_in_config.push_back(t.name);
      continue;
    }
    const PatternGroup& g = it->second;
    const bool same_shape =
        g.shapes.empty() || (g.shapes.size() == 1 && *g.shapes.begin() == t.shape);
    if (g.count != t.copies() || !same_shape || g.numel != t.total()) {
      std::vector<std::string> shapes;
      for (const auto& s : g.shapes)
        shapes.push_back(shape_text(s));
      const std::string seen = g.shapes.empty()
                                   ? fmt::format("{} elements in {}", g.numel, g.count)
                                   : fmt::format("{} × {}", fmt::join(shapes, " or "), g.count);
      c.shape_differences.push_back({t.name, group_text(t.shape, t.copies()), seen});
    }
  }
  for (const auto& [pattern, g] : on_disk)
    if (!expected.count(pattern)) c.only_in_checkpoint.push_back(pattern);
  return c;
}

namespace {

TensorKind guess_kind(const std::string& pattern, std::size_t rank) {
  if (pattern.ends_with(".bias")) return TensorKind::kBias;
  if (pattern.find("lm_head") != std::string::npos) return TensorKind::kOutput;
  if (pattern.find("embed") != std::string::npos) return TensorKind::kEmbedding;
  if (rank == 1 && pattern.find("norm") != std::string::npos) return TensorKind::kNorm;
  if (rank >= 2 && pattern.find("{E}") != std::string::npos) return TensorKind::kExpert;
  if (rank == 2 && pattern.find("{L}") != std::string::npos) return TensorKind::kLinear;
  return TensorKind::kOther;
}

ProjectionSet guess_projections(const std::string& pattern) {
  static constexpr std::pair<const char*, ProjectionSet> kNames[] = {
      {".qkv_proj.", kProjQ | kProjK | kProjV},
      {".gate_up_proj.", kProjGate | kProjUp},
      {".q_proj.", kProjQ},
      {".k_proj.", kProjK},
      {".v_proj.", kProjV},
      {".o_proj.", kProjO},
      {".gate_proj.", kProjGate},
      {".up_proj.", kProjUp},
      {".down_proj.", kProjDown}};
  for (const auto& [part, set] : kNames)
    if (pattern.find(part) != std::string::npos) return set;
  return 0;
}

std::int64_t generic_dim(const json& root, const char* key, const std::string& file,
                         const std::string& type, std::optional<std::int64_t> fallback = {}) {
  if (!root.contains(key) || root.at(key).is_null()) {
    if (fallback) return *fallback;
    throw UserError(ErrorCode::kMissingKey,
                    fmt::format("{}: model_type '{}' is not one ftplan knows, so its shape is read "
                                "from generic keys; required key '{}' is missing (a positive whole "
                                "number is expected)",
                                file, shown_text(type), key),
                    key);
  }
  const json& v = root.at(key);
  constexpr std::int64_t kMaxDim = 1 << 24;
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > kMaxDim)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: key '{}' must be a whole number from 1 to {}, got {}", file,
                                key, kMaxDim, describe_json_value(v)),
                    key);
  return v.get<std::int64_t>();
}

}  // namespace

ModelPtr model_from_checkpoint(std::string_view config_json, const std::string& file,
                               const std::string& id, const CheckpointInventory& checkpoint) {
  const json root = parse_config_object(config_json, file);
  const std::string type = root.contains("model_type") && root["model_type"].is_string()
                               ? root["model_type"].get<std::string>()
                               : "";
  if (checkpoint.logical.empty())
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: the safetensors headers hold no tensors to count", file),
                    file);
  auto m = std::make_shared<Model>();
  m->inventory_from_checkpoint = true;
  ModelArch& a = m->arch;
  a.id = id;
  a.name = id;
  a.model_type = type;
  a.source_file = file;
  a.hidden = generic_dim(root, "hidden_size", file, type);
  a.layers = generic_dim(root, "num_hidden_layers", file, type);
  a.heads = generic_dim(root, "num_attention_heads", file, type);
  a.kv_heads = generic_dim(root, "num_key_value_heads", file, type, a.heads);
  a.intermediate = generic_dim(root, "intermediate_size", file, type);
  a.vocab = generic_dim(root, "vocab_size", file, type);
  a.head_dim = generic_dim(root, "head_dim", file, type, a.hidden / a.heads);
  a.max_position = generic_dim(root, "max_position_embeddings", file, type, 0);
  if (a.heads % a.kv_heads != 0 || a.head_dim < 1 || a.layers > 100000)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: num_attention_heads {} with num_key_value_heads {}, head_dim "
                                "{} and num_hidden_layers {} do not describe a transformer",
                                file, a.heads, a.kv_heads, a.head_dim, a.layers),
                    "num_key_value_heads");
  a.tied_embeddings = root.contains("tie_word_embeddings") &&
                      root["tie_word_embeddings"].is_boolean() &&
                      root["tie_word_embeddings"].get<bool>();

  // One TensorSpec per (pattern, shape): layers counts the copies.
  std::map<std::pair<std::string, std::vector<std::int64_t>>, std::int64_t> groups;
  for (const auto& l : checkpoint.logical)
    ++groups[{tensor_pattern(l.name),
              l.shape.empty() ? std::vector<std::int64_t>{l.numel} : l.shape}];
  ParamInventory& inv = m->params;
  for (const auto& [key, copies] : groups) {
    TensorSpec t;
    t.name = key.first;
    t.shape = key.second;
    t.kind = guess_kind(t.name, t.shape.size());
    t.layers = copies;
    t.in_blocks = t.name.find("{L}") != std::string::npos;
    if (t.shape.size() == 2 && t.kind != TensorKind::kEmbedding) {
      t.out_features = t.shape[0];
      t.in_features = t.shape[1];
    }
    if (t.kind == TensorKind::kLinear || t.kind == TensorKind::kExpert)
      t.projections = guess_projections(t.name);
    const ParamCount n = t.total();
    inv.total += n;
    if (t.is_block_linear()) inv.block_linear += n;
    if (t.kind == TensorKind::kEmbedding || t.kind == TensorKind::kOutput)
      inv.embedding_and_output += n;
    if (t.kind == TensorKind::kNorm) inv.norms += n;
    if (t.kind == TensorKind::kBias) inv.biases += n;
    if (t.kind == TensorKind::kOther) inv.other += n;
    // Dense: a token passes every weight but the embedding lookup.
    if (t.kind != TensorKind::kEmbedding) inv.active_per_token += n;
    inv.tensors.push_back(std::move(t));
  }
  if (a.tied_embeddings) inv.active_per_token += a.vocab * a.hidden;
  m->note = fmt::format(
      "model_type '{}' is not one ftplan knows: parameters counted from the safetensors headers "
      "({} tensors), layer sizes from config.json's generic keys; treated as a dense decoder",
      shown_text(type), checkpoint.logical.size());
  return m;
}

}  // namespace ftplan
