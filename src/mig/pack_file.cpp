#include "mig/pack_file.hpp"

#include <fmt/format.h>

#include <set>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"

namespace ftplan {

namespace {

// Runs a core parser (parse_method, parse_targets, ...) on a key's text; its UserError gets the
// file, key path and line in front.
template <class Parse>
auto parse_at(StrictMap& m, std::string_view key, const std::string& text, Parse parse) {
  try {
    return parse(text);
  } catch (const UserError& e) {
    const std::string field =
        m.path().empty() ? std::string(key) : m.path() + "." + std::string(key);
    throw UserError(e.code(), fmt::format("{}: {}", m.where(key), e.what()), field);
  }
}

template <class Parse, class T>
void optional_parsed(StrictMap& m, std::string_view key, T& out, Parse parse) {
  if (auto text = m.optional_string(key)) out = parse_at(m, key, *text, parse);
}

template <class T>
void optional_int(StrictMap& m, std::string_view key, T& out, long long min, long long max) {
  if (auto v = m.optional_integer(key, min, max)) out = static_cast<T>(*v);
}

void optional_flag(StrictMap& m, std::string_view key, bool& out) {
  if (auto v = m.optional_bool(key)) out = *v;
}

PackFileExperiment parse_experiment(StrictMap& e) {
  if (e.has("gpus") || e.has("shard"))
    e.fail(e.has("gpus") ? "gpus" : "shard",
           "pack places single-card jobs, one per MIG instance or card: NCCL is not supported "
           "with MIG, so a run over several cards never runs on instances; plan it with "
           "`ftplan fit --gpus N --shard ...`");
  PackFileExperiment x;
  x.name = e.required_string("name");
  x.model = e.required_string("model");
  x.model_where = e.where("model");
  x.count = static_cast<int>(e.required_integer("count", 1, kMaxPackJobsPerExperiment));
  Workload& w = x.workload;
  const std::string method = e.required_string("method");
  w.method = parse_at(e, "method", method, [](const std::string& s) { return parse_method(s); });
  // A key this method does not read (a rank beside method full) is an error, not a default.
  for (const std::string& key : e.keys())
    parse_at(e, key, method, [&](const std::string& m) {
      check_setting_applies(w.method, key, key, "method " + m);
      return 0;
    });
  optional_int(e, "rank", w.lora.rank, 1, 65536);
  optional_parsed(e, "targets", w.lora.targets,
                  [](const std::string& s) { return parse_targets(s); });
  optional_parsed(e, "optimizer", w.optimizer,
                  [](const std::string& s) { return parse_optimizer(s); });
  optional_parsed(e, "precision", w.precision,
                  [](const std::string& s) { return parse_compute_format(s); });
  // `seq_max` is another name for `seq`, as in a runs file.
  optional_int(e, e.key_or_alias("seq", "seq_max"), w.seq, 1, 1 << 24);
  optional_int(e, "micro_batch", w.micro_batch, 1, 65536);
  optional_int(e, "grad_accum", w.grad_accum, 1, 1000000);
  optional_parsed(e, "recompute", w.recompute,
                  [](const std::string& s) { return parse_recompute(s); });
  // Layer-wise checkpointing is full recomputation of some blocks, as in a runs file: without a
  // `recompute` key it sets full; with another mode, the workload check names the conflict.
  if (auto v = e.optional_integer("recompute_layers", 0, 1 << 20)) {
    w.recompute_layers = *v;
    if (!e.has("recompute") && *v > 0) w.recompute = Recompute::kFull;
  }
  optional_parsed(e, "attention", w.attention,
                  [](const std::string& s) { return parse_attention(s); });
  if (auto peak = e.optional_choice("peak", peak_kind_names())) w.peak = parse_peak_kind(*peak);
  optional_int(e, "quant_block", w.quant.block, 1, 65536);
  optional_int(e, "quant_second_block", w.quant.second_block, 1, 65536);
  optional_flag(e, "double_quant", w.quant.double_quant);
  optional_flag(e, "optimizer_in_backward", w.options.optimizer_in_backward);
  optional_flag(e, "offload_optimizer", w.options.offload_optimizer);
  optional_flag(e, "offload_params", w.options.offload_parameters);
  optional_flag(e, "offload_activations", w.options.offload_activations);
  optional_flag(e, "chunked_loss", w.options.chunked_loss);
  e.finish();
  return x;
}

}  // namespace

int PackFile::total_jobs() const {
  int n = 0;
  for (const auto& x : experiments)
    n += x.count;
  return n;
}

PackFile parse_pack_file(std::string_view text, const std::string& file) {
  StrictMap root(parse_document(text, file), file, "");
  PackFile pf;
  pf.file = file;
  if (auto gpu = root.optional_string("gpu")) {
    pf.gpu = *gpu;
    pf.gpu_where = root.where("gpu");
  }
  std::set<std::string, std::less<>> names;
  for (auto& e : root.map_list("experiments", true)) {
    PackFileExperiment x = parse_experiment(e);
    if (!names.insert(x.name).second)
      e.fail("name", fmt::format("experiment name '{}' is used twice", x.name));
    pf.experiments.push_back(std::move(x));
  }
  if (pf.experiments.empty())
    root.fail("experiments", "expected a list of at least one experiment");
  if (pf.total_jobs() > kMaxPackJobs)
    root.fail("experiments",
              fmt::format("{} jobs in all; a pack file holds at most {} (split the queue)",
                          pf.total_jobs(), kMaxPackJobs));
  root.finish();
  return pf;
}

}  // namespace ftplan
