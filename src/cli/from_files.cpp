#include "cli/from_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/choices.hpp"
#include "core/error.hpp"
#include "workload/objective.hpp"
#include "workload/roles.hpp"
#include "workload/workload.hpp"

namespace ftplan::cli {

namespace {

// The command-line option a trainer setting becomes, and the value it is given ("" for a flag
// that is set).
struct OptionValue {
  std::string option;
  std::string value;
  bool flag = false;
  bool set = true;  // a flag: whether the setting's value turns it on
};

OptionValue option_for(const std::string& key, const std::string& value) {
  if (key == "gpu_count") return {"--gpus", value};
  // double_quant: false is the flag --no-double-quant; true is the default.
  if (key == "double_quant") return {"--no-double-quant", "", true, value == "false"};
  if (key == "compile") return {value == "true" ? "--compile" : "--no-compile", "", true};
  static const std::vector<std::string> flags = {
      "packing",           "padding_free",   "optimizer_in_backward", "pure_bf16",
      "quant_keeps_input", "offload_params", "offload_optimizer",     "offload_activations",
      "precompute_ref",    "sleep",          "async_rollout",         "sync_each_batch",
      "non_reentrant"};
  std::string name = "--" + key;
  std::replace(name.begin(), name.end(), '_', '-');
  const bool flag = std::find(flags.begin(), flags.end(), key) != flags.end();
  return {name, flag ? "" : value, flag, !flag || value != "false"};
}

// A file's model dtype (setting model_dtype, BF16): pure BF16 when the run trains its weights
// without FP32 copies of them. Sets --pure-bf16 and returns "" (taken), or why it is not.
std::string resolve_model_dtype(CLI::App& app, const std::vector<Context::FromFile>& files,
                                bool method_known, Method method, bool pure_typed) {
  if (pure_typed) return "--pure-bf16 given on the command line";
  if (method_known && !method_traits(method).trains_base)
    return fmt::format("method {} trains adapters beside a frozen base counted in 16 bits already",
                       method_name(method));
  const auto value = [&](const char* name) {
    const CLI::Option* o = app.get_option_no_throw(name);
    return o && o->count() > 0 ? o->as<std::string>() : std::string();
  };
  bool mixed = false;
  for (const auto& f : files)
    for (std::size_t i = 0; i < f.file.used.size(); ++i)
      if (sets_mixed_precision(f.file.used[i]) && i < f.not_applied.size() &&
          f.not_applied[i].empty())
        mixed = true;
  std::string why = fp32_copies_of_bf16_weights(value("--stack"), value("--shard"), mixed);
  if (!why.empty()) return why;
  CLI::Option* pure = app.get_option_no_throw("--pure-bf16");
  if (!pure) return fmt::format("ftplan {} has no --pure-bf16 option", app.get_name());
  pure->clear();
  pure->add_result("true");
  pure->run_callback();
  return "";
}

}  // namespace

void add_from_option(CLI::App& app, std::vector<std::string>& files) {
  app.add_option("--from", files,
                 "Trainer file to read the run from (repeatable): a PEFT adapter_config.json, "
                 "axolotl YAML, torchtune recipe, LLaMA-Factory YAML, LitGPT config, "
                 "Transformers/TRL training arguments (JSON or YAML), DeepSpeed ds_config.json or "
                 "accelerate config. "
                 "Options given beside it win; of several files the later wins; - reads standard "
                 "input. --json shows what was used and what was ignored");
}

std::vector<Context::FromFile> read_from_file(Context& ctx, const std::string& path) {
  TrainerFile file =
      read_trainer_file(ctx.read_file(path, "from"), path, ctx.catalog().model_ids());
  // A DeepSpeed config the file names by path is read right after it (so its settings win, as
  // an inline config's do); through the API no file is read and the key stays ignored.
  const auto readable = [&](const std::string& resolved) {
    return ctx.allow_files || ctx.inline_files.count(resolved) > 0;
  };
  const std::vector<TrainerFile> named = follow_references(
      file,
      [&](const std::string& p) -> std::optional<std::string> {
        if (!readable(p)) return std::nullopt;
        return ctx.read_file(p, "from");
      },
      ctx.catalog().model_ids());
  std::vector<std::string> keys;  // the keys of the references followed, in order
  for (const FileReference& ref : file.references) {
    const std::vector<std::string> places = reference_candidates(file.file, ref.path);
    if (std::any_of(places.begin(), places.end(), readable)) keys.push_back(ref.key);
  }
  std::vector<Context::FromFile> out;
  const std::string naming = file.file;
  out.push_back({std::move(file), {}, "", ""});
  for (std::size_t i = 0; i < named.size(); ++i)
    out.push_back({named[i], {}, naming, keys[i]});
  return out;
}

void apply_from_files(CLI::App& app, Context& ctx) {
  CLI::Option* from = app.get_option_no_throw("--from");
  // Commands that describe one run (--method); plan hands its files to the runs file instead.
  if (!from || from->count() == 0 || !app.get_option_no_throw("--method")) return;
  // The options the user typed, before any file fills others in.
  std::vector<std::string> typed;
  for (const CLI::Option* o : app.get_options())
    if (o->count() > 0) typed.push_back(o->get_name());
  const auto was_typed = [&](const std::string& name) {
    return std::find(typed.begin(), typed.end(), name) != typed.end();
  };
  std::vector<Context::FromFile> files;
  for (const std::string& path : from->as<std::vector<std::string>>())
    for (auto& f : read_from_file(ctx, path))
      files.push_back(std::move(f));
  // The method the run will have: typed, else the last file's. A setting of the files that this
  // method does not read (a LoRA rank beside a full fine-tune, a quantized base's group size
  // beside plain LoRA) is listed as not applied, with why, instead of failing the run: trainer
  // files carry such keys as leftovers of templates (an axolotl config with lora_r and no
  // adapter), which the trainer itself ignores too. Typed options get the error (options.cpp).
  // A flag beside a plain value, not std::optional: GCC 12 at -O2 warns (falsely) that the
  // optional's value may be read uninitialized.
  // A preference objective trains its adapter (typed, else the files' last; a full fine-tune).
  Method method{};
  bool method_known = false;
  bool supervised = false;  // the method names its own adapter: a file's `adapter` does not apply
  std::string method_text, adapter_text;
  if (was_typed("--method")) method_text = app.get_option("--method")->as<std::string>();
  if (was_typed("--adapter")) adapter_text = app.get_option("--adapter")->as<std::string>();
  const TrainerSetting* file_method = nullptr;  // the files' last method
  for (const auto& f : files)
    for (const TrainerSetting& s : f.file.used) {
      if (s.as == "method") file_method = &s;
      if (s.as == "method" && !was_typed("--method")) method_text = s.to;
      if (s.as == "adapter" && !was_typed("--adapter")) adapter_text = s.to;
    }
  // A preference or RL objective typed beside a file that trains an adapter (TRL's DPOConfig
  // with use_peft and load_in_4bit reads as QLoRA, the trainer not being named in it): the
  // objective trains the file's adapter, not every weight.
  const TrainerSetting* method_as_adapter = nullptr;
  if (was_typed("--method") && adapter_text.empty() && file_method) {
    try {
      const bool objective = !parse_run_method(method_text).method.has_value();
      if (objective && !method_traits(parse_method(file_method->to, "method")).trains_base) {
        method_as_adapter = file_method;
        adapter_text = file_method->to;
      }
    } catch (const UserError&) {
    }
  }
  try {
    const RunMethod run = parse_run_method(method_text);
    supervised = run.method.has_value();
    method = run.method             ? *run.method
             : adapter_text.empty() ? Method::kFull
                                    : parse_method(adapter_text, "adapter");
    method_known = true;
  } catch (const UserError&) {
    method_known = false;  // an unknown name is reported when the run is built
  }
  // The dtype a file loads the model in is resolved once every other setting is applied: it
  // depends on the run's stack and sharding (fp32_copies_of_bf16_weights).
  std::pair<std::size_t, std::size_t> model_dtype{files.size(), 0};  // (file, setting)
  for (std::size_t fi = 0; fi < files.size(); ++fi) {
    Context::FromFile& f = files[fi];
    const std::string& path = f.file.file;
    for (const TrainerSetting& s : f.file.used) {
      if (s.as == "model_dtype") {
        if (model_dtype.first < files.size())  // an earlier file's dtype: the later one wins
          files[model_dtype.first].not_applied[model_dtype.second] =
              "a later key sets model_dtype again";
        model_dtype = {fi, f.not_applied.size()};
        f.not_applied.push_back("");
        continue;
      }
      if (&s == method_as_adapter) {
        CLI::Option* a = app.get_option_no_throw("--adapter");
        if (a) {
          a->clear();
          a->add_result(s.to);
          a->run_callback();
          f.not_applied.push_back("");
          continue;
        }
      }
      const OptionValue ov = option_for(s.as, s.to);
      const std::string not_read =
          method_known
              ? setting_not_read(method, s.as, fmt::format("method {}", method_name(method)))
              : std::string();
      // "--compile" and "--no-compile" answer the same question.
      const bool typed_other =
          s.as == "compile" && (was_typed("--compile") || was_typed("--no-compile"));
      CLI::Option* opt = app.get_option_no_throw(ov.option);
      if (!not_read.empty()) {
        f.not_applied.push_back(not_read);
      } else if (s.as == "adapter" && supervised) {
        f.not_applied.push_back(
            fmt::format("method {} is supervised fine-tuning with its own adapter", method_text));
      } else if (!opt) {
        f.not_applied.push_back(
            fmt::format("ftplan {} has no {} option", app.get_name(), ov.option));
      } else if (was_typed(ov.option) || typed_other) {
        f.not_applied.push_back(fmt::format("{} given on the command line", ov.option));
      } else if (ov.flag && !ov.set && s.as != "compile") {
        f.not_applied.push_back("");  // a flag left off is the default
      } else {
        if (s.as == "compile") {  // the file's choice replaces the other file's
          for (const char* other : {"--compile", "--no-compile"})
            if (CLI::Option* o = app.get_option_no_throw(other)) o->clear();
        }
        opt->clear();
        opt->add_result(ov.flag ? std::string("true") : ov.value);
        try {
          opt->run_callback();
        } catch (const CLI::ParseError& e) {
          throw UserError(ErrorCode::kInvalidValue,
                          fmt::format("{}: key '{}' = '{}' as {}: {}", path, s.key, s.value,
                                      ov.option, e.what()),
                          s.key);
        }
        f.not_applied.push_back("");
      }
    }
  }
  if (model_dtype.first < files.size())
    files[model_dtype.first].not_applied[model_dtype.second] =
        resolve_model_dtype(app, files, method_known, method, was_typed("--pure-bf16"));
  for (Context::FromFile& f : files)
    ctx.from_files.push_back(std::move(f));
  // A setting a later key (of this file or a later one) sets again was replaced by it.
  std::vector<std::string> later;
  for (auto f = ctx.from_files.rbegin(); f != ctx.from_files.rend(); ++f)
    for (std::size_t i = f->file.used.size(); i-- > 0;) {
      const std::string& as = f->file.used[i].as;
      const bool again = std::find(later.begin(), later.end(), as) != later.end();
      if (again && f->not_applied[i].empty())
        f->not_applied[i] = "a later key sets " + as + " again";
      later.push_back(as);
    }
  for (const auto& f : ctx.from_files) {
    const auto taken = std::count(f.not_applied.begin(), f.not_applied.end(), std::string());
    const std::string via = f.named_by_file.empty() ? ""
                                                    : fmt::format(", named by {} key '{}'",
                                                                  f.named_by_file, f.named_by_key);
    ctx.err << fmt::format(
        "note: {} ({}{}): {} setting(s) taken, {} key(s) not modelled (--json lists both)\n",
        f.file.file, trainer_format_name(f.file.format), via, taken, f.file.ignored.size());
  }
}

nlohmann::json from_json(const Context& ctx) {
  if (ctx.from_files.empty()) return nullptr;
  nlohmann::json j;
  j["file"] = ctx.from_files.front().file.file;
  j["format"] = std::string(trainer_format_name(ctx.from_files.front().file.format));
  j["files"] = nlohmann::json::array();
  j["used"] = nlohmann::json::array();
  j["ignored"] = nlohmann::json::array();
  for (const auto& f : ctx.from_files) {
    nlohmann::json entry = {{"file", f.file.file},
                            {"format", std::string(trainer_format_name(f.file.format))}};
    if (!f.named_by_file.empty())
      entry["named_by"] = {{"file", f.named_by_file}, {"key", f.named_by_key}};
    j["files"].push_back(entry);
    for (std::size_t i = 0; i < f.file.used.size(); ++i) {
      const TrainerSetting& s = f.file.used[i];
      nlohmann::json u = {{"file", f.file.file}, {"key", s.key}, {"value", s.value},
                          {"as", s.as},          {"to", s.to},   {"applied", true}};
      if (i < f.not_applied.size() && !f.not_applied[i].empty()) {
        u["applied"] = false;
        u["why"] = f.not_applied[i];
      }
      j["used"].push_back(u);
    }
    for (const IgnoredKey& k : f.file.ignored)
      j["ignored"].push_back({{"file", f.file.file}, {"key", k.key}, {"why", k.why}});
  }
  return j;
}

nlohmann::json& with_from(const Context& ctx, nlohmann::json& j) {
  if (!ctx.from_files.empty() && j.is_object()) j["from"] = from_json(ctx);
  return j;
}

}  // namespace ftplan::cli
