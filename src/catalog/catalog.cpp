#include "catalog/catalog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "catalog/figure_reader.hpp"
#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"
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

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
std::string file_stem(std::string_view path) {
  auto slash = path.find_last_of('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  auto dot = name.find_last_of('.');
  return std::string(dot == std::string_view::npos ? name : name.substr(0, dot));
}

// The path below the data folder ("gpus/h200-nvl.yaml").
std::string relative_to_data_folder(const DataFile& f) {
  if (!f.relative.empty()) return f.relative;
  if (starts_with(f.path, "data/")) return f.path.substr(5);
  return f.path;
}

bool is_sources_file(const DataFile& f) {
  const std::string rel = relative_to_data_folder(f);
  return rel.find('/') == std::string::npos && starts_with(rel, "sources") &&
         ends_with(rel, ".yaml");
}

// Reads the keys every figure may have besides its value.
template <class T>
void read_figure_common(StrictMap& m, Figure<T>& f, const SourceTable& sources, bool tensor_rate) {
  f.sources = read_source_ids(m, sources);
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

Figure<double> read_number_figure(StrictMap& parent, std::string_view key, double min, double max,
                                  const SourceTable& sources, bool required, bool tensor_rate) {
  Figure<double> f;
  if (!parent.has(key)) {
    if (required) parent.required_map(key);  // throws, naming a misspelt key if there is one
    parent.raw(key);
    f.unknown_reason = "not listed in the data file";
    return f;
  }
  StrictMap m = parent.required_map(key);
  f.value = m.optional_number("value", min, max);
  if (!m.has("value"))
    m.fail("value", "required key is missing (use null with a 'reason' when unknown)");
  read_figure_common(m, f, sources, tensor_rate);
  return f;
}

double required_known(StrictMap& parent, std::string_view key, double min, double max,
                      const SourceTable& sources) {
  Figure<double> f = read_number_figure(parent, key, min, max, sources, true);
  if (!f.value) parent.fail(key, "this figure must be known (a number, not null)");
  return *f.value;
}

namespace {

Figure<std::string> text_figure(StrictMap& parent, std::string_view key, const SourceTable& sources,
                                const std::vector<std::string>& allowed = {}) {
  Figure<std::string> f;
  StrictMap m = parent.required_map(key);
  if (!m.has("value")) m.fail("value", "required key is missing");
  if (m.is_null("value")) {
    m.raw("value");
  } else {
    f.value = allowed.empty() ? m.required_string("value") : m.required_choice("value", allowed);
  }
  read_figure_common(m, f, sources, false);
  return f;
}

void parse_sources_file(const DataFile& file, SourceTable& sources) {
  StrictMap root(parse_yaml_document(file.text, file.path), file.path, "");
  for (auto& s : root.map_list("sources", true)) {
    SourceInfo info;
    info.id = s.required_string("id");
    info.title = s.required_string("title");
    info.url = s.optional_string("url").value_or("");
    info.note = s.optional_string("note").value_or("");
    s.finish();
    if (sources.count(info.id))
      s.fail("id", fmt::format("source id '{}' is defined twice", info.id));
    sources.emplace(info.id, std::move(info));
  }
  root.finish();
}

MigSpec parse_mig(StrictMap& card, const SourceTable& sources) {
  MigSpec mig;
  StrictMap m = card.required_map("mig");
  mig.supported = m.required_bool("supported");
  mig.sources = read_source_ids(m, sources);
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
    prof.memory_GB = read_number_figure(p, "memory_GB", 0.1, 1e4, sources, true);
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

std::vector<std::string> read_source_ids(StrictMap& m, const SourceTable& sources) {
  auto ids = m.string_list("source", true);
  for (const auto& id : ids) {
    if (!sources.count(id)) {
      std::vector<std::string> known;
      for (const auto& [k, v] : sources)
        known.push_back(k);
      auto near = closest_names(id, known, 2);
      m.fail("source",
             fmt::format("source id '{}' is not defined in any data/sources*.yaml{}", id,
                         near.empty() ? "" : fmt::format("; did you mean '{}'?", near.front())));
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

GpuSpec parse_gpu_file(const DataFile& file, const SourceTable& sources) {
  StrictMap root(parse_yaml_document(file.text, file.path), file.path, "");
  GpuSpec g;
  g.source_file = file.path;
  g.id = root.required_string("id");
  g.name = root.required_string("name");
  g.vendor = root.required_choice("vendor", {"nvidia", "amd"});
  // Optional; by default the name without the vendor ("NVIDIA H200 NVL" -> "H200 NVL").
  g.short_name = root.optional_string("short_name").value_or("");
  if (g.short_name.empty()) {
    const std::string vendor = g.vendor == "nvidia" ? "NVIDIA " : "AMD ";
    g.short_name = g.name.starts_with(vendor) ? g.name.substr(vendor.size()) : g.name;
  }
  g.architecture =
      root.required_choice("architecture", {"ampere", "ada", "hopper", "blackwell", "cdna3"});
  g.compute_capability = text_figure(root, "compute_capability", sources);
  if (g.compute_capability.value) {
    const std::string& cc = *g.compute_capability.value;
    int major = 0, minor = 0;
    if (!parse_compute_capability(cc, major, minor))
      root.fail("compute_capability",
                fmt::format("expected a compute capability like \"9.0\", got '{}'", cc));
    g.cc_major = major;
    g.cc_minor = minor;
  }
  g.form_factor = text_figure(root, "form_factor", sources,
                              {"pcie-dual-slot", "pcie-single-slot", "sxm", "oam"});
  g.cooling = text_figure(root, "cooling", sources, {"passive", "active", "liquid", "system"});
  g.tdp_W = read_number_figure(root, "tdp_W", 10, 5000, sources, true);
  g.boost_clock_MHz = read_number_figure(root, "boost_clock_MHz", 100, 10000, sources, false);
  {
    StrictMap mem = root.required_map("memory");
    g.visible_MiB = read_number_figure(mem, "visible_MiB", 1024, 1e8, sources, true);
    g.datasheet_GB = read_number_figure(mem, "datasheet_GB", 1, 1e5, sources, true);
    g.memory_type = text_figure(mem, "type", sources);
    g.bandwidth_GBps = read_number_figure(mem, "bandwidth_GBps", 10, 1e6, sources, true);
    mem.finish();
    if (!g.visible_MiB.value) mem.fail("visible_MiB", "the driver-visible memory must be known");
    if (!g.bandwidth_GBps.value) mem.fail("bandwidth_GBps", "the memory bandwidth must be known");
  }
  g.fp32_TFLOPS = read_number_figure(root, "fp32_TFLOPS", 0.01, 1e5, sources, true);
  {
    StrictMap rates = root.required_map("tensor_dense_TFLOPS");
    for (auto p : kAllTensorPrecisions) {
      if (p == TensorPrecision::kINT8) continue;
      g.tensor_dense[static_cast<std::size_t>(p)] =
          read_number_figure(rates, tensor_precision_name(p), 0.01, 1e6, sources, true, true);
    }
    rates.finish();
    StrictMap tops = root.required_map("tensor_dense_TOPS");
    g.tensor_dense[static_cast<std::size_t>(TensorPrecision::kINT8)] =
        read_number_figure(tops, "int8", 0.01, 1e6, sources, true, true);
    tops.finish();
  }
  {
    StrictMap pcie = root.required_map("pcie");
    g.pcie.generation = static_cast<int>(pcie.required_integer("generation", 1, 9));
    g.pcie.lanes = static_cast<int>(pcie.required_integer("lanes", 1, 32));
    g.pcie.GBps_both_directions = pcie.required_number("GBps_both_directions", 0.1, 1e4);
    g.pcie.sources = read_source_ids(pcie, sources);
    g.pcie.p2p = pcie.optional_bool("p2p").value_or(true);
    g.pcie.p2p_note = pcie.optional_string("p2p_note").value_or("");
    pcie.finish();
  }
  {
    StrictMap nv = root.required_map("nvlink");
    const std::string kind = nv.required_choice("kind", {"none", "bridge", "switch"});
    g.nvlink.sources = read_source_ids(nv, sources);
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
        g.nvlink.bridge_max_cards =
            static_cast<int>(nv.required_integer("bridge_max_cards", 2, 16));
    }
    nv.finish();
  }
  g.mig = parse_mig(root, sources);
  g.price_USD = read_number_figure(root, "price_USD", 1, 1e7, sources, false);
  root.finish();
  const std::string stem = file_stem(file.path);
  if (starts_with(relative_to_data_folder(file), "gpus/") && stem != g.id)
    root.fail("id", fmt::format("id '{}' does not match the file name '{}'", g.id, stem));
  return g;
}

Catalog Catalog::load(const std::vector<DataFile>& files) {
  Catalog c;
  // Sources first: every other file refers to them.
  for (const auto& f : files)
    if (file_stem(f.path).rfind("sources", 0) == 0 && ends_with(f.path, ".yaml"))
      parse_sources_file(f, c.sources_);

  std::map<std::string, std::string_view, std::less<>> model_configs;  // "models/x.json" -> text
  const DataFile* model_index = nullptr;
  for (const auto& f : files) {
    const std::string p = relative_to_data_folder(f);
    if (starts_with(p, "gpus/") && ends_with(p, ".yaml")) {
      GpuSpec g = parse_gpu_file(f, c.sources_);
      if (c.find_gpu(g.id))
        throw UserError(ErrorCode::kBadFile,
                        fmt::format("{}: GPU id '{}' is defined twice", p, g.id), p);
      c.gpus_.push_back(std::move(g));
    } else if (starts_with(p, "models/") && ends_with(p, ".json")) {
      model_configs.emplace(p.substr(7), f.text);
    } else if (p == "models/catalog.yaml") {
      model_index = &f;
    } else if (!is_sources_file(f) && (ends_with(p, ".yaml") || ends_with(p, ".json"))) {
      c.other_files_.insert_or_assign(p, f);
    }
  }
  if (model_index) {
    StrictMap root(parse_yaml_document(model_index->text, model_index->path), model_index->path,
                   "");
    for (auto& e : root.map_list("models", true)) {
      const std::string id = e.required_string("id");
      const std::string config = e.required_string("config");
      auto it = model_configs.find(config);
      if (it == model_configs.end())
        e.fail("config", fmt::format("no file models/{} was found", config));
      ModelArch arch = read_hf_config(it->second, "data/models/" + config, id);
      arch.name = e.required_string("name");
      auto model = std::make_shared<Model>();
      model->params = build_param_inventory(arch);
      model->arch = std::move(arch);
      model->hf_repo = e.required_string("hf_repo");
      model->publisher_params = e.required_string("publisher_params");
      model->note = e.optional_string("note").value_or("");
      model->sources = read_source_ids(e, c.sources_);
      e.finish();
      if (c.find_model(id)) e.fail("id", fmt::format("model id '{}' is listed twice", id));
      c.models_.push_back(std::move(model));
    }
    root.finish();
  }
  return c;
}

const GpuSpec& Catalog::add_gpu_file(const DataFile& file) {
  GpuSpec g = parse_gpu_file(file, sources_);
  if (const GpuSpec* existing = find_gpu(g.id)) {
    if (existing->source_file != file.path)
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("{}: GPU id '{}' is already defined by {}", file.path, g.id,
                                  existing->source_file),
                      "gpu");
    return *existing;
  }
  gpus_.push_back(std::move(g));
  return gpus_.back();
}

const GpuSpec* Catalog::find_gpu(std::string_view id) const {
  for (const auto& g : gpus_)
    if (g.id == id) return &g;
  return nullptr;
}

const GpuSpec& Catalog::gpu(std::string_view id) const {
  if (const GpuSpec* g = find_gpu(id)) return *g;
  throw_unknown_name("GPU", "gpu", id, gpu_ids());
}

std::vector<std::string> Catalog::gpu_ids() const {
  std::vector<std::string> out;
  for (const auto& g : gpus_)
    out.push_back(g.id);
  return out;
}

ModelPtr Catalog::find_model(std::string_view id) const {
  for (const auto& m : models_)
    if (m->arch.id == id) return m;
  return nullptr;
}

ModelPtr Catalog::model(std::string_view id) const {
  if (auto m = find_model(id)) return m;
  throw_unknown_name("model", "model", id, model_ids());
}

std::vector<std::string> Catalog::model_ids() const {
  std::vector<std::string> out;
  for (const auto& m : models_)
    out.push_back(m->arch.id);
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
