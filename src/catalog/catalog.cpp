#include "catalog/catalog.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include "catalog/figure_reader.hpp"
#include "catalog/preparsed_yaml.hpp"
#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "model/config_reader.hpp"

namespace ftplan {

std::string_view tensor_precision_name(TensorPrecision p) {
  static constexpr std::string_view names[] = {"fp64", "tf32", "bf16", "fp16",
                                               "fp8",  "fp6",  "fp4",  "int8"};
  return names[static_cast<std::size_t>(p)];
}

std::optional<TensorPrecision> tensor_precision_from_name(std::string_view name) {
  for (auto p : kAllTensorPrecisions)
    if (tensor_precision_name(p) == name) return p;
  return std::nullopt;
}

std::string_view link_kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::kNone:
      return "none";
    case LinkKind::kBridge:
      return "bridge";
    case LinkKind::kSwitch:
      return "switch";
  }
  return "none";
}

const MigProfile* MigSpec::find(std::string_view name) const {
  for (const auto& p : profiles)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> MigSpec::profile_names() const {
  std::vector<std::string> out;
  for (const auto& p : profiles)
    out.push_back(p.name);
  return out;
}

std::optional<FlopsPerSecond> GpuSpec::dense_rate(TensorPrecision p) const {
  const auto& f = tensor_figure(p);
  if (!f.value || *f.value <= 0) return std::nullopt;
  return flops_per_second_from_TFLOPS(*f.value);
}

namespace {

std::string file_stem(std::string_view path) {
  auto slash = path.find_last_of('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  auto dot = name.find_last_of('.');
  return std::string(dot == std::string_view::npos ? name : name.substr(0, dot));
}

// The path below the data folder ("gpus/h200-nvl.yaml").
std::string relative_to_data_folder(const DataFile& f) {
  if (!f.relative.empty()) return f.relative;
  if (f.path.starts_with("data/")) return f.path.substr(5);
  return f.path;
}

bool is_sources_file(const DataFile& f) {
  const std::string rel = relative_to_data_folder(f);
  return rel.find('/') == std::string::npos && rel.starts_with("sources") && rel.ends_with(".yaml");
}

// Where a figure's `source` is optional: in a user's own card file (outside the data folders).
enum class SourcePolicy { kRequired, kOptional };

std::vector<std::string> figure_sources(StrictMap& m, const SourceTable& sources,
                                        SourcePolicy policy) {
  if (policy == SourcePolicy::kOptional && !m.has("source")) return {};
  return read_source_ids(m, sources);
}

// Reads the keys every figure may have besides its value.
template <class T>
void read_figure_common(StrictMap& m, Figure<T>& f, const SourceTable& sources, bool tensor_rate,
                        SourcePolicy policy = SourcePolicy::kRequired) {
  f.sources = figure_sources(m, sources, policy);
  f.note = m.optional_string("note").value_or("");
  f.dispute = m.optional_string("dispute").value_or("");
  if (tensor_rate) {
    f.sparse_halved = m.optional_bool("sparse_halved").value_or(false);
    f.accumulate = m.optional_choice("accumulate", {"fp32", "fp16"}).value_or("");
  }
  if (!f.value) {
    auto reason = m.optional_string("reason");
    if (!reason)
      m.fail("reason", "a figure whose value is null needs a 'reason' saying why it is unknown");
    f.unknown_reason = *reason;
  } else if (m.has("reason")) {
    m.fail("reason", "'reason' is only for figures whose value is null (unknown)");
  }
  m.finish();
}

}  // namespace

namespace {

// A numeric figure; in a user's card (kOptional) also a plain number (`bandwidth_GBps: 960`).
Figure<double> number_figure(StrictMap& parent, std::string_view key, double min, double max,
                             const SourceTable& sources, bool required, bool tensor_rate,
                             SourcePolicy policy) {
  Figure<double> f;
  if (!parent.has(key)) {
    if (required) parent.required_map(key);  // throws, naming a misspelt key if there is one
    parent.known(key);
    f.unknown_reason = policy == SourcePolicy::kOptional ? "not given in the card file"
                                                         : "not listed in the data file";
    return f;
  }
  if (policy == SourcePolicy::kOptional && parent.is_scalar(key)) {
    f.value = parent.nullable_number(key, min, max);
    if (!f.value) f.unknown_reason = "not given in the card file";
    return f;
  }
  StrictMap m = parent.required_map(key);
  f.value = m.optional_number("value", min, max);
  if (!m.has("value"))
    m.fail("value", "required key is missing (use null with a 'reason' when unknown)");
  read_figure_common(m, f, sources, tensor_rate, policy);
  return f;
}

}  // namespace

Figure<double> read_number_figure(StrictMap& parent, std::string_view key, double min, double max,
                                  const SourceTable& sources, bool required, bool tensor_rate) {
  return number_figure(parent, key, min, max, sources, required, tensor_rate,
                       SourcePolicy::kRequired);
}

double required_known(StrictMap& parent, std::string_view key, double min, double max,
                      const SourceTable& sources) {
  Figure<double> f = read_number_figure(parent, key, min, max, sources, true);
  if (!f.value) parent.fail(key, "this figure must be known (a number, not null)");
  return *f.value;
}

namespace {

Figure<std::string> text_figure(StrictMap& parent, std::string_view key, const SourceTable& sources,
                                const std::vector<std::string>& allowed = {},
                                SourcePolicy policy = SourcePolicy::kRequired) {
  Figure<std::string> f;
  if (policy == SourcePolicy::kOptional) {
    if (!parent.has(key)) {
      parent.known(key);  // known, for the hint on a misspelt key
      f.unknown_reason = "not given in the card file";
      return f;
    }
    if (parent.is_scalar(key)) {
      f.value =
          allowed.empty() ? parent.required_string(key) : parent.required_choice(key, allowed);
      return f;
    }
  }
  StrictMap m = parent.required_map(key);
  if (!m.has("value")) m.fail("value", "required key is missing");
  if (m.is_null("value")) {
    m.known("value");
  } else {
    f.value = allowed.empty() ? m.required_string("value") : m.required_choice("value", allowed);
  }
  read_figure_common(m, f, sources, false, policy);
  return f;
}

void parse_sources_file(const DataFile& file, SourceTable& sources) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  read_sources_list(root, sources);
  root.finish();
}

MigSpec parse_mig(StrictMap& card, const SourceTable& sources, SourcePolicy policy) {
  MigSpec mig;
  if (policy == SourcePolicy::kOptional && !card.has("mig")) {
    card.known("mig");  // known, for the hint on a misspelt key
    mig.unsupported_reason = "not given in the card file";
    return mig;
  }
  StrictMap m = card.required_map("mig");
  mig.supported = m.required_bool("supported");
  mig.sources = figure_sources(m, sources, policy);
  mig.note = m.optional_string("note").value_or("");
  if (!mig.supported) {
    mig.unsupported_reason = m.required_string("reason");
    m.finish();
    return mig;
  }
  mig.max_instances = static_cast<int>(m.required_integer("max_instances", 1, 64));
  mig.compute_slices = static_cast<int>(m.required_integer("compute_slices", 1, 64));
  mig.memory_slices = static_cast<int>(m.required_integer("memory_slices", 1, 64));
  mig.requires_compute_display_mode = m.required_bool("requires_compute_display_mode");
  for (auto& p : m.map_list("profiles", true)) {
    MigProfile prof;
    prof.name = p.required_string("name");
    prof.memory_GB = number_figure(p, "memory_GB", 0.1, 1e4, sources, true, false, policy);
    if (!prof.memory_GB.value) p.fail("memory_GB", "a MIG profile needs a known memory size");
    prof.compute_slices =
        static_cast<int>(p.required_integer("compute_slices", 1, mig.compute_slices));
    prof.memory_slices =
        static_cast<int>(p.required_integer("memory_slices", 1, mig.memory_slices));
    prof.max_count = static_cast<int>(p.required_integer("max_count", 1, mig.max_instances));
    for (auto start : p.integer_list("placements", 0, mig.memory_slices - prof.memory_slices))
      prof.placements.push_back(static_cast<int>(start));
    if (prof.placements.empty()) p.fail("placements", "needs at least one start slice");
    p.finish();
    if (mig.find(prof.name)) p.fail("name", fmt::format("profile '{}' is listed twice", prof.name));
    mig.profiles.push_back(std::move(prof));
  }
  if (mig.profiles.empty()) m.fail("profiles", "a card with MIG needs at least one profile");
  m.finish();
  return mig;
}

}  // namespace

void read_sources_list(StrictMap& root, SourceTable& sources) {
  for (auto& s : root.map_list("sources", true)) {
    SourceInfo info;
    info.id = s.required_string("id");
    info.title = s.required_string("title");
    info.url = s.optional_string("url").value_or("");
    info.note = s.optional_string("note").value_or("");
    s.finish();
    if (sources.count(info.id))
      s.fail("id", fmt::format("source id '{}' is defined twice (here and in a data/sources*.yaml "
                               "or earlier in this list): give it another id",
                               info.id));
    sources.emplace(info.id, std::move(info));
  }
}

std::vector<std::string> read_source_ids(StrictMap& m, const SourceTable& sources,
                                         std::string_view hint) {
  auto ids = m.string_list("source", true);
  for (const auto& id : ids) {
    if (!sources.count(id)) {
      std::vector<std::string> known;
      for (const auto& [k, v] : sources)
        known.push_back(k);
      auto near = closest_names(id, known, 2);
      m.fail(
          "source",
          fmt::format("source id '{}' is not defined in any data/sources*.yaml{}{}", id,
                      near.empty() ? "" : fmt::format("; did you mean '{}'?", near.front()), hint));
    }
  }
  return ids;
}

bool parse_compute_capability(std::string_view cc, int& major, int& minor) {
  auto dot = cc.find('.');
  bool ok = dot != std::string_view::npos &&
            std::from_chars(cc.data(), cc.data() + dot, major).ptr == cc.data() + dot &&
            std::from_chars(cc.data() + dot + 1, cc.data() + cc.size(), minor).ptr ==
                cc.data() + cc.size();
  return ok && major >= 1 && major <= 99 && minor >= 0 && minor <= 9;
}

namespace {

void read_smi_names(StrictMap& root, GpuSpec& g, const SourceTable& sources, SourcePolicy policy) {
  auto m = root.optional_map("smi_names");
  if (!m) return;
  g.smi_names = m->string_list("names", true);
  for (const auto& n : g.smi_names)
    if (n.empty() || n.find(',') != std::string::npos)
      m->fail("names",
              fmt::format("'{}' is not a name nvidia-smi prints (empty or with a comma)", n));
  g.smi_names_sources = figure_sources(*m, sources, policy);
  m->optional_string("note");
  m->finish();
}

void read_memory(StrictMap& root, GpuSpec& g, const SourceTable& sources, SourcePolicy policy) {
  const bool user = policy == SourcePolicy::kOptional;
  StrictMap mem = root.required_map("memory");
  g.visible_MiB = number_figure(mem, "visible_MiB", 1024, 1e8, sources, !user, false, policy);
  g.datasheet_GB = number_figure(mem, "datasheet_GB", 1, 1e5, sources, !user, false, policy);
  g.memory_type = text_figure(mem, "type", sources, {}, policy);
  g.bandwidth_GBps = number_figure(mem, "bandwidth_GBps", 10, 1e6, sources, !user, false, policy);
  mem.finish();
  if (user && !g.visible_MiB.value && g.datasheet_GB.value) {
    // GB (1e9 B) in MiB (2^20 B): the whole printed capacity, as the driver would show it.
    g.visible_MiB.value = std::floor(*g.datasheet_GB.value * 1e9 / kBytesPerMiB);
    g.visible_MiB.note = "derived from datasheet_GB";
    g.assumptions.push_back(fmt::format(
        "{}: memory.visible_MiB not given; taken as datasheet_GB {} GB = {} MiB (the driver "
        "reserves some of it: nvidia-smi's memory.total is more accurate)",
        g.source_file, *g.datasheet_GB.value, *g.visible_MiB.value));
  }
  if (!g.visible_MiB.value)
    mem.fail("visible_MiB",
             user ? "the card's memory must be given: visible_MiB (what nvidia-smi prints as "
                    "memory.total, e.g. `visible_MiB: 49140`) or datasheet_GB (e.g. "
                    "`datasheet_GB: 48`)"
                  : "the driver-visible memory must be known");
  if (!g.bandwidth_GBps.value)
    mem.fail("bandwidth_GBps",
             user ? "the memory bandwidth must be given, in GB/s (1e9 bytes per second), e.g. "
                    "`bandwidth_GBps: 960`"
                  : "the memory bandwidth must be known");
}

void read_rates(StrictMap& root, GpuSpec& g, const SourceTable& sources, SourcePolicy policy) {
  const bool user = policy == SourcePolicy::kOptional;
  StrictMap rates = root.required_map("tensor_dense_TFLOPS");
  for (auto p : kAllTensorPrecisions) {
    if (p == TensorPrecision::kINT8) continue;
    g.tensor_dense[static_cast<std::size_t>(p)] =
        number_figure(rates, tensor_precision_name(p), 0.01, 1e6, sources, !user, true, policy);
  }
  if (user && !g.tensor_figure(TensorPrecision::kBF16).value &&
      !g.tensor_figure(TensorPrecision::kFP16).value)
    rates.fail("bf16",
               "a card file needs at least the dense BF16 (or FP16) tensor rate in TFLOPS, e.g. "
               "`bf16: 181` (half the vendor's 'with sparsity' figure)");
  rates.finish();
  auto& int8 = g.tensor_dense[static_cast<std::size_t>(TensorPrecision::kINT8)];
  if (user && !root.has("tensor_dense_TOPS")) {
    root.known("tensor_dense_TOPS");
    int8.unknown_reason = "not given in the card file";
    return;
  }
  StrictMap tops = root.required_map("tensor_dense_TOPS");
  int8 = number_figure(tops, "int8", 0.01, 1e6, sources, !user, true, policy);
  tops.finish();
}

void read_pcie(StrictMap& root, GpuSpec& g, const SourceTable& sources, SourcePolicy policy) {
  if (policy == SourcePolicy::kOptional && !root.has("pcie")) {
    root.known("pcie");
    g.pcie.generation = 4;
    g.pcie.lanes = 16;
    g.pcie.GBps_both_directions = 64;
    g.assumptions.push_back(fmt::format(
        "{}: pcie not given; assumed PCIe Gen4 x16 (64 GB/s both directions)", g.source_file));
    return;
  }
  StrictMap pcie = root.required_map("pcie");
  g.pcie.generation = static_cast<int>(pcie.required_integer("generation", 1, 9));
  g.pcie.lanes = static_cast<int>(pcie.required_integer("lanes", 1, 32));
  g.pcie.GBps_both_directions = pcie.required_number("GBps_both_directions", 0.1, 1e4);
  g.pcie.sources = figure_sources(pcie, sources, policy);
  g.pcie.p2p = pcie.optional_bool("p2p").value_or(true);
  g.pcie.p2p_note = pcie.optional_string("p2p_note").value_or("");
  pcie.finish();
}

void read_links(StrictMap& root, GpuSpec& g, const SourceTable& sources, SourcePolicy policy) {
  if (policy == SourcePolicy::kOptional && !root.has("nvlink")) {
    root.known("nvlink");
    g.nvlink.note = "not given in the card file: cards exchange data over PCIe";
    return;
  }
  StrictMap nv = root.required_map("nvlink");
  const std::string kind = nv.required_choice("kind", {"none", "bridge", "switch"});
  g.nvlink.fabric = nv.optional_choice("fabric", {"nvlink", "infinity-fabric"}).value_or("nvlink");
  g.nvlink.sources = figure_sources(nv, sources, policy);
  g.nvlink.note = nv.optional_string("note").value_or("");
  if (kind == "none") {
    g.nvlink.kind = LinkKind::kNone;
    if (g.nvlink.note.empty())
      nv.fail("note", "kind 'none' needs a note saying how the cards exchange data");
  } else {
    g.nvlink.kind = kind == "bridge" ? LinkKind::kBridge : LinkKind::kSwitch;
    g.nvlink.generation = static_cast<int>(nv.required_integer("generation", 1, 9));
    g.nvlink.GBps_per_gpu_both_directions =
        nv.required_number("GBps_per_gpu_both_directions", 1, 1e5);
    if (kind == "bridge")
      g.nvlink.bridge_max_cards = static_cast<int>(nv.required_integer("bridge_max_cards", 2, 16));
  }
  nv.finish();
}

}  // namespace

const std::vector<std::string>& known_architectures() {
  static const std::vector<std::string> names = {"volta",  "turing",    "ampere", "ada",
                                                 "hopper", "blackwell", "cdna3",  "cdna4"};
  return names;
}

GpuSpec parse_gpu_file(const DataFile& file, const SourceTable& sources, bool user_file) {
  const SourcePolicy policy = user_file ? SourcePolicy::kOptional : SourcePolicy::kRequired;
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  GpuSpec g;
  g.source_file = file.path;
  g.user_supplied = user_file;
  const std::string stem = file_stem(file.path);
  g.id = user_file ? root.optional_string("id").value_or(stem) : root.required_string("id");
  g.name = root.required_string("name");
  g.vendor = user_file ? root.optional_choice("vendor", {"nvidia", "amd"}).value_or("nvidia")
                       : root.required_choice("vendor", {"nvidia", "amd"});
  // Optional; by default the name without the vendor ("NVIDIA H200 NVL" -> "H200 NVL").
  g.short_name = root.optional_string("short_name").value_or("");
  if (g.short_name.empty()) {
    const std::string vendor = g.vendor == "nvidia" ? "NVIDIA " : "AMD ";
    g.short_name = g.name.starts_with(vendor) ? g.name.substr(vendor.size()) : g.name;
  }
  if (user_file && !root.has("architecture")) {
    root.known("architecture");
    g.architecture = "unspecified";
    g.assumptions.push_back(fmt::format(
        "{}: architecture not given; the default efficiencies apply (no per-architecture "
        "multiplier)",
        file.path));
  } else {
    g.architecture = root.required_choice("architecture", known_architectures());
  }
  if (user_file && !root.has("compute_capability")) {
    root.known("compute_capability");
    g.compute_capability.value = "8.0";
    g.compute_capability.note = "assumed";
    g.assumptions.push_back(fmt::format(
        "{}: compute_capability not given; assumed 8.0 (BF16 and FP16 training, no FP8): set it "
        "(e.g. `compute_capability: \"8.9\"`) for the formats the card has",
        file.path));
  } else {
    g.compute_capability = text_figure(root, "compute_capability", sources, {}, policy);
  }
  if (g.compute_capability.value) {
    const std::string& cc = *g.compute_capability.value;
    int major = 0, minor = 0;
    if (!parse_compute_capability(cc, major, minor))
      root.fail("compute_capability",
                fmt::format("expected a compute capability like \"9.0\", got '{}'", cc));
    g.cc_major = major;
    g.cc_minor = minor;
  }
  read_smi_names(root, g, sources, policy);
  g.form_factor = text_figure(root, "form_factor", sources,
                              {"pcie-dual-slot", "pcie-single-slot", "sxm", "oam"}, policy);
  g.cooling =
      text_figure(root, "cooling", sources, {"passive", "active", "liquid", "system"}, policy);
  g.tdp_W = number_figure(root, "tdp_W", 10, 5000, sources, !user_file, false, policy);
  g.boost_clock_MHz =
      number_figure(root, "boost_clock_MHz", 100, 10000, sources, false, false, policy);
  read_memory(root, g, sources, policy);
  g.fp32_TFLOPS = number_figure(root, "fp32_TFLOPS", 0.01, 1e5, sources, !user_file, false, policy);
  read_rates(root, g, sources, policy);
  if (user_file && !g.fp32_TFLOPS.value) {
    // CUDA-core work (norms, element-wise ops, the optimizer) needs a plain FP32 rate; those ops
    // are mostly memory-bound, so a low estimate costs little: the dense 16-bit tensor rate / 16
    // (the A100's ratio, 312 / 19.5; H100 SXM 989.5 / 67 = 14.8, RTX 4090 165.2 / 82.6 = 2).
    const auto& half = g.tensor_figure(TensorPrecision::kBF16).value
                           ? g.tensor_figure(TensorPrecision::kBF16)
                           : g.tensor_figure(TensorPrecision::kFP16);
    g.fp32_TFLOPS.value = *half.value / 16;
    g.fp32_TFLOPS.note = "assumed";
    g.assumptions.push_back(fmt::format(
        "{}: fp32_TFLOPS not given; assumed {:.4g} (the dense 16-bit tensor rate / 16, as on the "
        "A100): set it for CUDA-core-heavy work",
        file.path, *g.fp32_TFLOPS.value));
  }
  read_pcie(root, g, sources, policy);
  read_links(root, g, sources, policy);
  g.mig = parse_mig(root, sources, policy);
  g.price_USD = number_figure(root, "price_USD", 1, 1e7, sources, false, false, policy);
  root.finish();
  if (relative_to_data_folder(file).starts_with("gpus/") && stem != g.id)
    root.fail("id", fmt::format("id '{}' does not match the file name '{}'", g.id, stem));
  return g;
}

Catalog::Catalog(const Catalog& other)
    : sources_(other.sources_), other_files_(other.other_files_) {
  std::lock_guard lock(*other.mutex_);
  model_entries_ = other.model_entries_;
  models_ = other.models_;
  pending_ = other.pending_;
  order_.assign(other.order_.size(), nullptr);
  for (std::size_t i = 0; i < other.order_.size(); ++i)
    if (other.order_[i]) {
      gpus_.push_back(*other.order_[i]);
      order_[i] = &gpus_.back();
    }
}

Catalog Catalog::load(const std::vector<DataFile>& files) {
  Catalog c;
  // Sources first: every other file refers to them.
  for (const auto& f : files)
    if (file_stem(f.path).starts_with("sources") && f.path.ends_with(".yaml"))
      parse_sources_file(f, c.sources_);

  // Model configs by path ("data/models/x.json"); every folder's models/catalog.yaml adds its
  // models, each config read from the same folder as the catalog file that names it.
  std::map<std::string, std::string_view, std::less<>> model_configs;
  std::vector<const DataFile*> model_indexes;
  std::set<std::string, std::less<>> card_ids;  // to refuse an id defined twice
  for (const auto& f : files) {
    const std::string p = relative_to_data_folder(f);
    if (p.starts_with("gpus/") && p.ends_with(".yaml")) {
      const auto defined_twice = [&](const std::string& id) {
        return UserError(ErrorCode::kBadFile,
                         fmt::format("{}: GPU id '{}' is defined twice", p, id), p);
      };
      if (!preparsed_form(f.text).empty()) {
        // Built in: checked when the build parsed it and by the tests; parsed when asked for.
        std::string id = file_stem(f.path);
        if (!card_ids.insert(id).second) throw defined_twice(id);
        c.order_.push_back(nullptr);
        c.pending_.push_back({id, f});
        continue;
      }
      GpuSpec g = parse_gpu_file(f, c.sources_);
      if (!card_ids.insert(g.id).second) throw defined_twice(g.id);
      c.gpus_.push_back(std::move(g));
      c.order_.push_back(&c.gpus_.back());
      c.pending_.push_back({});
    } else if (p.starts_with("models/") && p.ends_with(".json")) {
      model_configs.emplace(f.path, f.text);
    } else if (p == "models/catalog.yaml") {
      model_indexes.push_back(&f);
    } else if (!is_sources_file(f) && (p.ends_with(".yaml") || p.ends_with(".json"))) {
      c.other_files_.insert_or_assign(p, f);
    }
  }
  std::set<std::string, std::less<>> model_ids;
  for (const DataFile* model_index : model_indexes) {
    // The data folder holding this catalog file: its path less "models/catalog.yaml".
    const std::string& path = model_index->path;
    const std::string_view below = "models/catalog.yaml";
    const std::string folder =
        path.ends_with(below) ? path.substr(0, path.size() - below.size()) : std::string();
    // Built in: the config files were read by the tests; each is read when its model is asked for.
    const bool lazy = !preparsed_form(model_index->text).empty();
    StrictMap root(parse_document(model_index->text, path), path, "");
    for (auto& e : root.map_list("models", true)) {
      ModelEntry entry;
      entry.id = e.required_string("id");
      const std::string config = e.required_string("config");
      entry.config_path = folder + "models/" + config;
      auto it = model_configs.find(entry.config_path);
      if (it == model_configs.end())
        e.fail("config", fmt::format("no file {} was found: put the model's config.json there "
                                     "(configs sit in the models/ folder beside catalog.yaml)",
                                     entry.config_path));
      entry.config_text = it->second;
      entry.name = e.required_string("name");
      entry.hf_repo = e.required_string("hf_repo");
      entry.publisher_params = e.required_string("publisher_params");
      entry.note = e.optional_string("note").value_or("");
      entry.sources = read_source_ids(e, c.sources_);
      e.finish();
      if (!model_ids.insert(entry.id).second)
        e.fail("id", fmt::format("model id '{}' is defined twice (an id names one model across "
                                 "every data folder): give this model another id",
                                 entry.id));
      if (!lazy) entry.model = read_model(entry);
      c.model_entries_.push_back(std::move(entry));
    }
    root.finish();
  }
  return c;
}

const GpuSpec& Catalog::add_gpu_file(const DataFile& file) {
  GpuSpec g = parse_gpu_file(file, sources_, true);
  if (const GpuSpec* existing = find_gpu(g.id)) {
    if (existing->source_file != file.path)
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("{}: GPU id '{}' is already defined by {}", file.path, g.id,
                                  existing->source_file),
                      "gpu");
    return *existing;
  }
  std::lock_guard lock(*mutex_);
  gpus_.push_back(std::move(g));
  order_.push_back(&gpus_.back());
  pending_.push_back({});
  return gpus_.back();
}

const GpuSpec& Catalog::parse_pending(std::size_t index) const {
  gpus_.push_back(parse_gpu_file(pending_[index].file, sources_));
  order_[index] = &gpus_.back();
  pending_[index] = {};
  return gpus_.back();
}

void Catalog::parse_all() const {
  std::lock_guard lock(*mutex_);
  for (std::size_t i = 0; i < order_.size(); ++i)
    if (!order_[i]) parse_pending(i);
}

std::size_t Catalog::cards_parsed() const {
  std::lock_guard lock(*mutex_);
  return gpus_.size();
}

GpuList Catalog::gpus() const {
  parse_all();
  return GpuList(order_);
}

const GpuSpec* Catalog::find_gpu(std::string_view id) const {
  std::lock_guard lock(*mutex_);
  for (std::size_t i = 0; i < order_.size(); ++i) {
    if (order_[i]) {
      if (order_[i]->id == id) return order_[i];
    } else if (pending_[i].id == id) {
      return &parse_pending(i);
    }
  }
  return nullptr;
}

std::vector<const GpuSpec*> Catalog::gpus_named(std::string_view text) const {
  if (const GpuSpec* g = find_gpu(text)) return {g};
  std::vector<const GpuSpec*> out;
  auto collect = [&](auto&& matches) {
    for (const GpuSpec& g : gpus())
      if (matches(g)) out.push_back(&g);
    return !out.empty();
  };
  // In order: the id in any case; a name nvidia-smi prints; the catalog name; the start of ids
  // ("h100" -> h100-nvl, h100-pcie, h100-sxm), which is unique or ambiguous.
  if (collect([&](const GpuSpec& g) { return equal_ignoring_case(g.id, text); })) return out;
  if (collect([&](const GpuSpec& g) {
        return std::any_of(g.smi_names.begin(), g.smi_names.end(),
                           [&](const std::string& n) { return equal_ignoring_case(n, text); });
      }))
    return out;
  if (collect([&](const GpuSpec& g) {
        return equal_ignoring_case(g.name, text) || equal_ignoring_case(g.short_name, text);
      }))
    return out;
  const std::string prefix = ascii_lower(text) + "-";
  if (text.size() >= 2)
    collect([&](const GpuSpec& g) { return ascii_lower(g.id).starts_with(prefix); });
  return out;
}

const GpuSpec& Catalog::gpu(std::string_view id) const {
  const auto named = gpus_named(id);
  if (named.size() == 1) return *named.front();
  if (named.size() > 1) {
    std::vector<std::string> ids;
    for (const GpuSpec* g : named)
      ids.push_back(fmt::format("{} ({})", g->id, g->name));
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("GPU '{}' is ambiguous: it names {} cards: {}; give one id", id,
                                named.size(), fmt::format("{}", fmt::join(ids, ", "))),
                    "gpu");
  }
  throw_unknown_name("GPU", "gpu", id, gpu_ids());
}

std::vector<std::string> Catalog::gpu_ids() const {
  std::lock_guard lock(*mutex_);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < order_.size(); ++i)
    out.push_back(order_[i] ? order_[i]->id : pending_[i].id);
  return out;
}

ModelPtr Catalog::read_model(const ModelEntry& e) {
  ModelArch arch = read_hf_config(e.config_text, e.config_path, e.id);
  arch.name = e.name;
  auto model = std::make_shared<Model>();
  model->params = build_param_inventory(arch);
  model->arch = std::move(arch);
  model->hf_repo = e.hf_repo;
  model->publisher_params = e.publisher_params;
  model->note = e.note;
  model->sources = e.sources;
  return model;
}

ModelPtr Catalog::entry_model(const ModelEntry& e) const {
  std::lock_guard lock(*mutex_);
  if (!e.model) e.model = read_model(e);
  return e.model;
}

const std::vector<ModelPtr>& Catalog::models() const {
  std::lock_guard lock(*mutex_);
  if (models_.size() != model_entries_.size()) {
    models_.clear();
    for (const ModelEntry& e : model_entries_) {
      if (!e.model) e.model = read_model(e);
      models_.push_back(e.model);
    }
  }
  return models_;
}

ModelPtr Catalog::find_model(std::string_view id) const {
  for (const ModelEntry& e : model_entries_)
    if (e.id == id) return entry_model(e);
  return nullptr;
}

ModelPtr Catalog::model(std::string_view id) const {
  if (auto m = find_model(id)) return m;
  throw_unknown_name("model", "model", id, model_ids());
}

std::vector<std::string> Catalog::model_ids() const {
  std::vector<std::string> out;
  for (const ModelEntry& e : model_entries_)
    out.push_back(e.id);
  return out;
}

ModelPtr Catalog::find_model_by_hf_repo(std::string_view repo) const {
  for (const ModelEntry& e : model_entries_)
    if (!e.hf_repo.empty() && equal_ignoring_case(e.hf_repo, repo)) return entry_model(e);
  return nullptr;
}

ModelPtr Catalog::find_base_model_of(std::string_view repo) const {
  const std::size_t slash = repo.find('/');
  if (slash == std::string_view::npos) return nullptr;
  const std::string org(repo.substr(0, slash + 1));
  std::string name(repo.substr(slash + 1));
  // Meta's older repository names ("Meta-Llama-3.1-8B") redirect to the newer ones.
  if (name.size() > 5 && ascii_lower(name.substr(0, 5)) == "meta-") name = name.substr(5);
  static const std::pair<std::string_view, std::string_view> kTuned[] = {
      {"-chat-hf", "-hf"}, {"-instruct", ""}, {"-chat", ""}, {"-it", ""}};
  const std::string lower = ascii_lower(name);
  for (const auto& [suffix, base] : kTuned) {
    if (!lower.ends_with(suffix)) continue;
    const std::string base_repo =
        org + name.substr(0, name.size() - suffix.size()) + std::string(base);
    if (ModelPtr m = find_model_by_hf_repo(base_repo)) return m;
  }
  return nullptr;
}

std::size_t Catalog::models_read() const {
  std::lock_guard lock(*mutex_);
  return static_cast<std::size_t>(std::count_if(model_entries_.begin(), model_entries_.end(),
                                                [](const ModelEntry& e) { return e.model; }));
}

std::vector<std::string> Catalog::model_repos() const {
  std::vector<std::string> out;
  for (const ModelEntry& e : model_entries_)
    if (!e.hf_repo.empty()) out.push_back(e.hf_repo);
  return out;
}

const DataFile* Catalog::file(std::string_view relative_path) const {
  auto it = other_files_.find(relative_path);
  return it == other_files_.end() ? nullptr : &it->second;
}

std::vector<const DataFile*> Catalog::files_under(std::string_view folder) const {
  std::vector<const DataFile*> out;
  std::string prefix(folder);
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  for (const auto& [rel, f] : other_files_)
    if (rel.rfind(prefix, 0) == 0) out.push_back(&f);
  return out;
}

const SourceInfo* Catalog::source(std::string_view id) const {
  auto it = sources_.find(id);
  return it == sources_.end() ? nullptr : &it->second;
}

}  // namespace ftplan
