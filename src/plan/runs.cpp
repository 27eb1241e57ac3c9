#include "plan/runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <utility>

#include "catalog/strict_yaml.hpp"
#include "comm/topology.hpp"
#include "core/error.hpp"
#include "parallel/layout.hpp"
#include "workload/loss.hpp"
#include "workload/objective.hpp"
#include "workload/roles.hpp"
#include "workload/trainer_file.hpp"

namespace ftplan {

std::string beside_runs_file(const std::string& runs_file, const std::string& path) {
  const std::filesystem::path folder = std::filesystem::path(runs_file).parent_path();
  const std::filesystem::path p(path);
  if (path.empty() || path == "-" || p.is_absolute() || folder.empty()) return path;
  return (folder / p).lexically_normal().generic_string();
}

Workload PlannedRun::with_recompute(Workload w, Recompute rc) const {
  w.recompute = rc;
  if (!offload_activations_given && w.stack)
    w.options.offload_activations = stack_offloads_checkpoints(*w.stack, rc);
  return w;
}

double PlannedRun::steps() const {
  const double tokens_per_step = static_cast<double>(global_batch) * workload.tokens_per_example();
  return std::ceil(tokens / tokens_per_step);
}

namespace {

// Keys a run (or the file's `defaults`) may carry: the CLI's option names with '_' for '-'.
const std::vector<std::string>& run_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"name",
                                  "model",
                                  "method",
                                  "adapter",
                                  "precompute_ref",
                                  "rank",
                                  "targets",
                                  "optimizer",
                                  "precision",
                                  "seq",
                                  "seq_max",
                                  "seq_mean",
                                  "lengths",
                                  "packing",
                                  "padding_free",
                                  "micro_batch",
                                  "recompute",
                                  "recompute_layers",
                                  "tp",
                                  "pp",
                                  "vpp",
                                  "cp",
                                  "ep",
                                  "attention",
                                  "stack",
                                  "compile",
                                  "global_batch",
                                  "tokens",
                                  "epochs",
                                  "dataset_tokens",
                                  "deadline_hours",
                                  "count",
                                  "gpus",
                                  "base_quant",
                                  "quant_group",
                                  "quant_block",
                                  "quant_second_block",
                                  "double_quant",
                                  "optimizer_in_backward",
                                  "offload_optimizer",
                                  "offload_params",
                                  "offload_activations",
                                  "pure_bf16",
                                  "quant_keeps_input",
                                  "sync_each_batch",
                                  "non_reentrant",
                                  "chunked_loss",
                                  "loss",
                                  "optimizer_impl",
                                  "experts_impl",
                                  "lora_dropout",
                                  "train_modules",
                                  "peak"};
    k.insert(k.end(), rollout_keys().begin(), rollout_keys().end());
    k.push_back("from");  // a trainer file whose settings the run takes
    return k;
  }();
  return keys;
}

// A card a runs file names: its id, a name nvidia-smi prints or the start of several ids, as
// --gpu takes it (Catalog::gpu); an unknown or ambiguous name fails at `key` of `m`.
const GpuSpec& named_gpu(StrictMap& m, std::string_view key, const std::string& name,
                         const Catalog& catalog) {
  try {
    return catalog.gpu(name);
  } catch (const UserError& e) {
    m.fail(key, e.what());
  }
}

// An online objective's settings (RolloutSettings): its trained sequence is prompt + completion,
// and a step's batch is prompts × group size sequences (global_batch, or prompts_per_step).
// Settings given to another objective fail at their key.
void read_rollout(StrictMap& r, PlannedRun& run, const Catalog& catalog) {
  Workload& w = run.workload;
  RolloutSettings& s = w.rollout;
  if (!read_rollout_settings(r, w)) return;
  const auto rollout_gpu = r.optional_string("rollout_gpu");
  s.choose_gpu = rollout_gpu == "auto";
  if (rollout_gpu && !s.choose_gpu) s.gpu = &named_gpu(r, "rollout_gpu", *rollout_gpu, catalog);
  // With `auto`, rollout_gpus is the most rollout cards the planner tries (default 8).
  s.gpus =
      static_cast<int>(r.optional_integer("rollout_gpus", 1, 65536).value_or(s.choose_gpu ? 8 : 1));
  if (s.choose_gpu && s.mode != RolloutMode::kSeparate)
    r.fail("rollout_gpu",
           "rollout_gpu auto lets the planner choose the cards that generate, apart from the "
           "training cards: it needs rollout separate (a colocated engine runs on the training "
           "cards)");
  const std::int64_t g = group_size(w);
  if (s.prompts_per_step > 0) {
    if (r.has("global_batch") && run.global_batch != s.prompts_per_step * g)
      r.fail("global_batch",
             fmt::format("global_batch {} is not prompts_per_step {} × group size {}: give one "
                         "of the two",
                         run.global_batch, s.prompts_per_step, g));
    run.global_batch = s.prompts_per_step * g;
  } else {
    if (run.global_batch % g != 0)
      r.fail("global_batch",
             fmt::format("global_batch {} is not a multiple of the group size {}: each prompt's "
                         "completions train in the same step",
                         run.global_batch, g));
    s.prompts_per_step = run.global_batch / g;
  }
}

std::vector<const GpuSpec*> read_gpus(StrictMap& m, const Catalog& catalog) {
  std::vector<const GpuSpec*> out;
  for (const auto& id : m.string_list("gpus", false)) {
    if (id == "all") {
      for (const auto& g : catalog.gpus())
        out.push_back(&g);
      continue;
    }
    out.push_back(&named_gpu(m, "gpus", id, catalog));
  }
  return out;
}

// The settings of a trainer file (`from: FILE`) that a run takes, by run key; the planner searches
// the card count, sharding and accumulation itself, so those are left out.
// `runs_file`: the file whose folder a relative path is relative to ("" for the command's
// --from, relative to the working folder).
std::vector<std::pair<std::string, std::string>> from_settings(const YAML::Node& node,
                                                               const std::string& where,
                                                               const Catalog& catalog,
                                                               const FileReader& read_file,
                                                               const std::string& runs_file) {
  if (!node.IsScalar())
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: key 'from': expected the path of a trainer file, got {}",
                                where, describe_node(node)),
                    "from");
  if (!read_file)
    throw UserError(ErrorCode::kUnsupported,
                    fmt::format("{}: key 'from': trainer files are not read here", where), "from");
  const std::string path = beside_runs_file(runs_file, node.Scalar());
  TrainerFile f = read_trainer_file(read_file(path, "from"), path, catalog.model_ids());
  // A DeepSpeed config the file names by path, read after it (where files may be read).
  const std::vector<TrainerFile> named = follow_references(
      f,
      [&](const std::string& p) -> std::optional<std::string> {
        try {
          return read_file(p, "from");
        } catch (const UserError& e) {
          if (e.code() == ErrorCode::kUnsupported) return std::nullopt;  // the API
          throw;
        }
      },
      catalog.model_ids());
  std::vector<TrainerSetting> settings = f.used;
  for (const auto& g : named)
    settings.insert(settings.end(), g.used.begin(), g.used.end());
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : settings) {
    if (std::find(run_keys().begin(), run_keys().end(), s.as) == run_keys().end()) continue;
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto& kv) { return kv.first == s.as; });
    if (it != out.end())
      it->second = s.to;  // a later key of the file wins
    else
      out.emplace_back(s.as, s.to);
  }
  return out;
}

// `own_keys`: the keys the run sets itself (not from defaults or a trainer file).
PlannedRun read_run(StrictMap& r, const std::set<std::string>& own_keys, const Catalog& catalog,
                    const Stacks& stacks, const ModelResolver& resolve, const FileReader& read_file,
                    const std::string& runs_file) {
  PlannedRun run;
  run.line = r.line();
  run.name = r.required_string("name");
  Workload& w = run.workload;
  const std::string model = r.required_string("model");
  try {
    w.model = resolve(model);
  } catch (const UserError& e) {
    r.fail("model", e.what());
  }
  // Names are checked by the same parsers as the CLI's options, with the file's position added.
  auto guarded = [&](std::string_view key, auto parse) {
    try {
      return parse();
    } catch (const UserError& e) {
      r.fail(key, e.what());
    }
  };
  const std::string method = r.required_string("method");
  const std::string adapter = r.optional_string("adapter").value_or("");
  w.options.precompute_reference = r.optional_bool("precompute_ref").value_or(false);
  try {
    const ObjectiveAndMethod run_method =
        resolve_run_method(method, adapter, w.options.precompute_reference);
    w.objective = run_method.objective;
    w.method = run_method.method;
    use_objective_model(w);
  } catch (const UserError& e) {
    r.fail(e.field().empty() ? std::string("method") : e.field(), e.what());
  }
  const std::string method_shown =
      "method " + method + (adapter.empty() ? "" : ", adapter " + adapter);
  for (const std::string& key : own_keys)
    guarded(key, [&] {
      check_setting_applies(w.method, key, key, method_shown);
      return 0;
    });
  if (auto v = r.optional_integer("rank", 1, 65536)) w.lora.rank = static_cast<int>(*v);
  if (auto v = r.optional_string("targets"))
    guarded("targets", [&] {
      parse_lora_targets(*v, w.lora);
      return 0;
    });
  if (auto v = r.optional_string("train_modules"))
    guarded("train_modules", [&] {
      parse_train_modules(*v, w.lora);
      return 0;
    });
  w.lora.dropout = r.optional_number("lora_dropout", 0, 0.999).value_or(0);
  if (auto v = r.optional_string("optimizer"))
    w.optimizer = guarded("optimizer", [&] { return parse_optimizer(*v); });
  if (auto v = r.optional_string("precision"))
    w.precision = guarded("precision", [&] { return parse_compute_format(*v); });
  const std::string stack = r.optional_string("stack").value_or(std::string(Stacks::kDefaultStack));
  w.stack = guarded("stack", [&] { return &stacks.find(stack, "stack"); });
  w.attention = w.stack->attention;
  w.options.compile = r.optional_bool("compile").value_or(w.stack->compile);
  if (auto v = r.optional_string("attention"))
    w.attention = guarded("attention", [&] { return parse_attention(*v); });
  if (auto v = r.optional_string("recompute")) {
    run.recompute = guarded("recompute", [&] { return parse_recompute(*v); });
    w.recompute = *run.recompute;
  }
  if (auto v = r.optional_integer("recompute_layers", 0, 1 << 20)) {
    // Layer-wise checkpointing is full recomputation of some blocks: the run fixes it.
    w.recompute_layers = *v;
    if (!run.recompute && *v > 0) run.recompute = w.recompute = Recompute::kFull;
  }
  // `seq_max` is another name for `seq` (the longest sample), as --seq-max is for --seq.
  const auto seq = r.optional_integer(r.key_or_alias("seq", "seq_max"), 1, 1 << 24);
  w.seq = seq.value_or(2048);
  w.lengths.mean = r.optional_number("seq_mean", 1, 1 << 24);
  if (auto given = r.optional_string("lengths")) {
    if (!read_file) r.fail("lengths", "lengths files are not read here");
    const std::string path = beside_runs_file(runs_file, *given);
    w.lengths.histogram =
        guarded("lengths", [&] { return parse_lengths(read_file(path, "lengths"), path); });
    if (!seq) w.seq = static_cast<std::int64_t>(w.lengths.histogram.back().tokens);
  }
  w.lengths.packing = r.optional_bool("packing").value_or(false);
  w.lengths.padding_free = r.optional_bool("padding_free").value_or(false);
  if (auto v = r.optional_integer("micro_batch", 1, 65536)) {
    run.micro_batch = *v;
    w.micro_batch = *v;
  }
  // A fixed model-parallel layout: only it is tried (each card count must divide into its
  // replicas; the model's divisibility is checked here).
  {
    Layout l;
    bool given = false;
    const std::pair<int*, const char*> degrees[] = {
        {&l.tp, "tp"}, {&l.pp, "pp"}, {&l.vpp, "vpp"}, {&l.cp, "cp"}, {&l.ep, "ep"}};
    for (const auto& [field, key] : degrees)
      if (auto v = r.optional_integer(key, 1, 65536)) {
        *field = static_cast<int>(*v);
        given = true;
      }
    if (given) {
      run.layout = l;
      Placement one;
      one.count = l.model_parallel();
      one.layout = l;
      Workload each = w;
      each.grad_accum = l.pp;  // the interleaved schedule's grouping is checked per option
      // The error under the key whose degree fails (check_layout names it as its field).
      try {
        check_layout(each, one);
      } catch (const UserError& e) {
        const std::string& f = e.field();
        const bool degree = f == "tp" || f == "pp" || f == "vpp" || f == "cp" || f == "ep";
        r.fail(degree ? f : std::string("tp"), e.what());
      }
    }
  }
  run.global_batch = r.optional_integer("global_batch", 1, 1 << 24).value_or(64);
  if (run.micro_batch && run.global_batch % *run.micro_batch != 0)
    r.fail("global_batch", fmt::format("global_batch {} is not a multiple of micro_batch {}",
                                       run.global_batch, *run.micro_batch));
  const auto tokens = r.optional_number("tokens", 1, 1e16);
  const auto epochs = r.optional_number("epochs", 1e-3, 1e6);
  const auto dataset = r.optional_number("dataset_tokens", 1, 1e16);
  try {
    run.tokens = tokens_to_train(tokens, epochs, dataset);
  } catch (const UserError& e) {
    r.fail(e.field(), e.what());
  }
  if (!tokens && !epochs)
    r.fail("tokens",
           "how much to train is missing: give 'tokens', or 'epochs' with 'dataset_tokens'");
  run.deadline_hours = r.optional_number("deadline_hours", 1e-3, 1e6);
  run.count = static_cast<int>(r.optional_integer("count", 1, 100000).value_or(1));
  run.gpus = read_gpus(r, catalog);
  BaseQuantOptions quant;
  quant.format = r.optional_string("base_quant").value_or("");
  quant.group = static_cast<int>(r.optional_integer("quant_group", 0, 65536).value_or(-1));
  quant.block = static_cast<int>(r.optional_integer("quant_block", 0, 65536).value_or(-1));
  quant.second_block =
      static_cast<int>(r.optional_integer("quant_second_block", 1, 65536).value_or(-1));
  quant.double_quant = r.optional_bool("double_quant").value_or(true);
  w.quant = guarded(quant.group >= 0 ? "quant_group" : "base_quant", [&] {
    return base_quant_config(load_quant_formats(catalog), quant,
                             method_traits(w.method).quantized_base, method_label(w.method));
  });
  w.options.optimizer_in_backward = r.optional_bool("optimizer_in_backward").value_or(false);
  w.options.offload_optimizer = r.optional_bool("offload_optimizer").value_or(false);
  w.options.offload_parameters = r.optional_bool("offload_params").value_or(false);
  const auto offload = r.optional_bool("offload_activations");
  run.offload_activations_given = offload.has_value();
  w.options.offload_activations =
      offload.value_or(stack_offloads_checkpoints(*w.stack, w.recompute));
  w.options.pure_bf16 = r.optional_bool("pure_bf16").value_or(false);
  w.options.quant_keeps_input = r.optional_bool("quant_keeps_input").value_or(false);
  w.options.sync_each_batch = r.optional_bool("sync_each_batch").value_or(false);
  w.options.non_reentrant = r.optional_bool("non_reentrant").value_or(false);
  w.options.chunked_loss = r.optional_bool("chunked_loss").value_or(false);
  if (auto v = r.optional_string("peak"))
    w.peak = guarded("peak", [&] { return parse_peak_kind(*v); });
  const std::string loss = r.optional_string("loss").value_or("");
  w.options.loss =
      guarded("loss", [&] { return resolve_loss(loss, w.options.chunked_loss, *w.stack); });
  if (auto v = r.optional_string("optimizer_impl"))
    w.options.optimizer_impl =
        guarded("optimizer_impl", [&] { return parse_optimizer_impl(*v, "optimizer_impl"); });
  if (auto v = r.optional_string("experts_impl"))
    w.options.experts_impl =
        guarded("experts_impl", [&] { return parse_experts_impl(*v, "experts_impl"); });
  read_rollout(r, run, catalog);
  r.optional_string("from");  // its settings were merged in with the run's keys
  r.finish();
  try {
    validate(w);
  } catch (const UserError& e) {
    r.fail(e.field().empty() ? "name" : e.field(), e.what());
  }
  return run;
}

}  // namespace

double tokens_to_train(std::optional<double> tokens, std::optional<double> epochs,
                       std::optional<double> dataset_tokens) {
  if (tokens && (epochs || dataset_tokens))
    throw UserError(ErrorCode::kInvalidValue,
                    "give either 'tokens' or 'epochs' with 'dataset_tokens', not both", "tokens");
  if (epochs.has_value() != dataset_tokens.has_value())
    throw UserError(ErrorCode::kInvalidValue, "'epochs' and 'dataset_tokens' go together",
                    epochs ? "dataset_tokens" : "epochs");
  if (tokens) return *tokens;
  return epochs ? *epochs * *dataset_tokens : 0;
}

std::string price_problem(double price_USD, double max_USD) {
  if (price_USD > 0 && price_USD <= max_USD) return {};  // NaN fails both
  return fmt::format(
      "a price must be above 0 and at most {} USD, got {} (leave it out for no "
      "price)",
      max_USD, price_USD);
}

RunsFile parse_runs_file(std::string_view text, const std::string& file, const Catalog& catalog,
                         const Stacks& stacks, const ModelResolver& resolve,
                         const FileReader& read_file, const std::vector<std::string>& extra_from) {
  RunsFile out;
  out.file = file;
  StrictMap root(parse_document(text, file), file, "");
  if (auto c = root.optional_map("candidates")) {
    out.gpus = read_gpus(*c, catalog);
    if (c->has("counts")) {
      out.counts.clear();
      for (auto n : c->integer_list("counts", 1, 65536))
        out.counts.push_back(static_cast<int>(n));
      if (out.counts.empty()) c->fail("counts", "needs at least one card count");
    }
    out.topology = c->optional_string("topology").value_or("");
    if (out.topology == "auto") out.topology.clear();
    if (!out.topology.empty()) {
      // A preset name from data/comm (whether a card can be joined that way is the planner's
      // question, per card and count).
      std::vector<std::string> valid = load_comm_constants(catalog).preset_names();
      if (std::find(valid.begin(), valid.end(), out.topology) == valid.end()) {
        valid.insert(valid.begin(), "auto");
        try {
          throw_unknown_name("topology", "topology", out.topology, valid);
        } catch (const UserError& e) {
          c->fail("topology", e.what());
        }
      }
    }
    if (auto p2p = c->optional_string("p2p")) {
      try {
        out.p2p = parse_p2p(*p2p, "p2p");
      } catch (const UserError& e) {
        c->fail("p2p", e.what());
      }
    }
    out.allow_mig = c->optional_bool("mig").value_or(true);
    c->finish();
  }
  if (out.gpus.empty())
    for (const auto& g : catalog.gpus())
      out.gpus.push_back(&g);
  if (auto p = root.optional_map("prices")) {
    if (auto per_hour = p->optional_map("per_card_hour_USD")) {
      for (const std::string& id : per_hour->keys()) {
        const GpuSpec& g = named_gpu(*per_hour, id, id, catalog);
        const double price = per_hour->required_number(id, 0, kMaxCardHourUSD);
        if (const std::string problem = price_problem(price, kMaxCardHourUSD); !problem.empty())
          per_hour->fail(id, problem);
        out.prices.per_card_hour_USD[g.id] = price;
      }
      per_hour->finish();
    }
    out.prices.per_kWh_USD = p->optional_number("per_kWh_USD", 0, kMaxKWhUSD);
    if (out.prices.per_kWh_USD)
      if (const std::string problem = price_problem(*out.prices.per_kWh_USD, kMaxKWhUSD);
          !problem.empty())
        p->fail("per_kWh_USD", problem);
    p->finish();
  }
  out.power_limit_W = root.optional_number("power_limit_W", 1, 1e9);
  out.card_power_limit_W = root.optional_number("card_power_limit_W", 0, 1e5).value_or(0);

  // `defaults` apply to every run that does not set the key itself.
  YAML::Node defaults = root.raw("defaults");
  if (defaults.IsDefined() && !defaults.IsNull()) {
    StrictMap d(defaults, file, "defaults");
    for (const auto& kv : defaults) {
      const std::string key = kv.first.as<std::string>("");
      bool known = false;
      for (const auto& k : run_keys())
        known |= k == key && k != "name" && k != "model";
      if (!known) {
        try {
          throw_unknown_name("key", "defaults", key, run_keys());
        } catch (const UserError& e) {
          d.fail(key, e.what());
        }
      }
    }
  }
  YAML::Node runs = root.raw("runs");
  if (!runs.IsDefined() || !runs.IsSequence() || runs.size() == 0)
    root.fail("runs",
              "expected a list of runs (each with name, model, method, and tokens or epochs)");
  std::size_t i = 0;
  for (const auto& item : runs) {
    const std::string path = fmt::format("runs[{}]", i++);
    if (!item.IsMap())
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("{}: key '{}' (line {}): expected a map of keys (name, model, "
                                  "method, tokens, ...), got {}",
                                  file, path, item.Mark().line + 1, describe_node(item)),
                      path);
    // The defaults join the run's own node (no copy: YAML::Clone drops the line marks), so an
    // error names the line of the run's key, or of the default it took.
    // Priority: the run's own keys, its trainer file (`from`), the defaults, the defaults'
    // trainer file, then files given to the command (--from).
    YAML::Node merged = item;
    std::set<std::string> own_keys;  // the run's own, before the others join
    for (const auto& mine : item)
      if (mine.first.IsScalar()) own_keys.insert(mine.first.Scalar());
    // A key joins under either of its names only where the run has neither (a default `seq`
    // does not join a run that gives `seq_max`).
    const auto canonical = [](const std::string& key) {
      return key == "seq_max" ? std::string("seq") : key;
    };
    std::set<std::string> present;
    for (const std::string& key : own_keys)
      present.insert(canonical(key));
    const auto add = [&](const std::string& key, const YAML::Node& value) {
      if (present.insert(canonical(key)).second) merged[key] = value;
    };
    const auto add_from = [&](const YAML::Node& from_node, const std::string& where) {
      for (const auto& [key, value] : from_settings(from_node, where, catalog, read_file, file))
        add(key, YAML::Node(value));
    };
    if (item["from"]) add_from(item["from"], fmt::format("{}: {}", file, path));
    if (defaults.IsMap()) {
      for (const auto& kv : defaults) {
        const std::string key = kv.first.as<std::string>("");
        if (key != "from") add(key, kv.second);
      }
      if (defaults["from"]) add_from(defaults["from"], fmt::format("{}: defaults", file));
    }
    for (const auto& extra : extra_from)
      for (const auto& [key, value] :
           from_settings(YAML::Node(extra), "--from", catalog, read_file, ""))
        add(key, YAML::Node(value));
    // A setting the run's method does not read (a rank beside method full) is an error where
    // the run sets it (read_run), and dropped where it came from the defaults or a trainer file:
    // those describe several runs, or a template, and apply where they can.
    // (A key that is absent gives yaml-cpp's invalid node: IsDefined first, IsScalar throws.)
    if (const YAML::Node method_node = std::as_const(merged)["method"];
        method_node.IsDefined() && method_node.IsScalar()) {
      try {
        const YAML::Node adapter_node = std::as_const(merged)["adapter"];
        const Method method =
            parse_run_method(method_node.Scalar(), "method")
                .method.value_or(adapter_node.IsDefined() && adapter_node.IsScalar()
                                     ? parse_method(adapter_node.Scalar(), "adapter")
                                     : Method::kFull);
        std::vector<std::string> joined;
        for (const auto& kv : merged)
          if (kv.first.IsScalar() && !own_keys.count(kv.first.Scalar()))
            joined.push_back(kv.first.Scalar());
        for (const std::string& key : joined)
          if (!setting_not_read(method, key, "").empty()) merged.remove(key);
      } catch (const UserError&) {
        // an unknown method is reported by read_run, with its line
      }
    }
    StrictMap r(merged, file, path);
    out.runs.push_back(read_run(r, own_keys, catalog, stacks, resolve, read_file, file));
  }
  root.finish();
  return out;
}

}  // namespace ftplan
