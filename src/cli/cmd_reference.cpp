// ftplan reference [--format markdown|man]: the reference of every command, option, exit code,
// API endpoint and JSON key, built from the registered commands, the API's endpoint table and the
// embedded JSON Schemas (docs/reference.md and the man page are its output).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <ctime>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "embedded_files.hpp"
#include "render/reference_text.hpp"
#include "server/api.hpp"

namespace ftplan::cli {
namespace {

using nlohmann::json;

// The options of `app`; a command's own help flag is left out (the global one is listed).
std::vector<ReferenceOption> options_of(const CLI::App& app, bool with_help) {
  std::vector<ReferenceOption> out;
  for (const CLI::Option* o : app.get_options()) {
    if (!with_help && o == app.get_help_ptr()) continue;
    ReferenceOption r;
    for (const auto& l : o->get_lnames())
      r.names.push_back("--" + l);
    for (const auto& s : o->get_snames())
      r.names.push_back("-" + s);
    if (r.names.empty()) r.positional = o->get_name();
    if (o->get_type_size() > 0) {
      r.value = o->get_type_name();
      if (o->get_expected_max() > 1) r.value += " ...";
    }
    r.description = o->get_description();
    r.default_value = o->get_default_str();
    r.required = o->get_required();
    out.push_back(std::move(r));
  }
  return out;
}

ReferenceCommand command_of(const CLI::App& app, const std::string& prefix) {
  ReferenceCommand c{prefix + app.get_name(), app.get_description(), options_of(app, false), {}};
  for (const CLI::App* sub : app.get_subcommands({}))
    c.subcommands.push_back(command_of(*sub, c.path + " "));
  return c;
}

std::string type_of(const json& schema) {
  if (auto e = schema.find("enum"); e != schema.end()) {
    std::vector<std::string> values;
    for (const auto& v : *e)
      values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    return fmt::format("one of: {}", fmt::join(values, ", "));
  }
  if (auto c = schema.find("const"); c != schema.end())
    return "always " + (c->is_string() ? c->get<std::string>() : c->dump());
  const auto t = schema.find("type");
  if (t == schema.end()) return "any";
  if (t->is_string()) return t->get<std::string>();
  std::vector<std::string> types;
  for (const auto& v : *t)
    types.push_back(v.get<std::string>());
  return fmt::format("{}", fmt::join(types, " | "));
}

void keys_of(const json& schema, const std::string& path, std::vector<ReferenceJsonKey>& out);

// The keys below `path`: an object's properties and map values, an array's items ("a[]"). An
// array's type names its items' ("array of object").
void children_of(const json& schema, const std::string& path, std::vector<ReferenceJsonKey>& out) {
  const std::string prefix = path.empty() ? "" : path + ".";
  if (auto p = schema.find("properties"); p != schema.end() && p->is_object())
    for (const auto& [key, sub] : p->items())
      keys_of(sub, prefix + key, out);
  if (auto a = schema.find("additionalProperties"); a != schema.end() && a->is_object())
    keys_of(*a, prefix + "*", out);
  if (auto i = schema.find("items"); i != schema.end() && i->is_object()) {
    if (!out.empty() && out.back().path == path)
      out.back().type += fmt::format(" of {}", type_of(*i));  // "array of number"
    children_of(*i, path + "[]", out);
  }
}

// `schema` as the key `path`, then the keys below it, depth first in the schema's order.
void keys_of(const json& schema, const std::string& path, std::vector<ReferenceJsonKey>& out) {
  if (!schema.is_object()) return;
  out.push_back({path, type_of(schema), schema.value("description", std::string())});
  children_of(schema, path, out);
}

std::vector<ReferenceJsonOutput> json_outputs() {
  constexpr std::string_view kPrefix = "schemas/", kSuffix = ".schema.json";
  std::vector<ReferenceJsonOutput> out;
  for (const auto& f : embedded::files()) {
    if (!f.path.starts_with(kPrefix) || !f.path.ends_with(kSuffix)) continue;
    const json schema = json::parse(f.text);
    ReferenceJsonOutput o;
    o.name =
        std::string(f.path.substr(kPrefix.size(), f.path.size() - kPrefix.size() - kSuffix.size()));
    o.title = schema.value("title", o.name);
    children_of(schema, "", o.keys);
    out.push_back(std::move(o));
  }
  return out;
}

ReferenceDoc reference_doc(Context& ctx) {
  CLI::App app;
  add_all_commands(app, ctx);
  ReferenceDoc doc;
  doc.version = version();
  doc.summary =
      "plan GPU fine-tuning and training runs: memory, step time, which cards and how many, "
      "layouts and MIG. Units: GB = 10^9 bytes, GiB = 2^30 bytes.";
  doc.global_options = options_of(app, true);
  for (const CLI::App* sub : app.get_subcommands({}))
    doc.commands.push_back(command_of(*sub, ""));
  doc.exit_codes = {
      {kExitOk, "The answer was written (a run that does not fit is an answer, not an error)."},
      {kExitUserError,
       "Bad input: an unknown name, a value out of range, a file that cannot be read or parsed. "
       "The message names the file, key and value and suggests the closest valid name; with "
       "--json it is {\"error\": {code, message, field, suggestions}} on standard error."},
      {kExitInternal, "An internal error (a bug): the message starts with 'internal error'."}};
  doc.endpoints.push_back({"GET", "/", "the web calculator (a page of its own, no other host)"});
  doc.endpoints.push_back({"GET", "/healthz", "ok: the server is up"});
  for (const auto& e : server::endpoints()) {
    const std::string command = e.command;
    std::string what = fmt::format("`ftplan {} --json` (`ftplan schema {}`)", e.command, e.command);
    // The runs document is the body; the report is HTML or Markdown, not JSON.
    if (command == "plan")
      what = "`ftplan plan FILE --json` for the runs document in the body (`ftplan schema plan`)";
    if (command == "report")
      what = std::string(e.method) == "POST"
                 ? "`ftplan report FILE`: the report (HTML or Markdown) of the runs document in "
                   "the body"
                 : "`ftplan report`: the seed's report (HTML or Markdown)";
    doc.endpoints.push_back({e.method, e.path, what});
  }
  doc.json_outputs = json_outputs();
  return doc;
}

const std::vector<std::string>& formats() {
  static const std::vector<std::string> names = {"markdown", "man"};
  return names;
}

const bool registered_reference = register_command(
    {"reference",
     "The reference of every command, option, exit code, API endpoint and JSON key, from the "
     "code: Markdown (docs/reference.md) or a man page",
     [](CLI::App& app, Context& ctx) {
       auto format = std::make_shared<std::string>("markdown");
       app.add_option("--format", *format, "markdown | man")->capture_default_str();
       return [&ctx, format] {
         if (std::find(formats().begin(), formats().end(), *format) == formats().end())
           throw_unknown_name("format", "format", *format, formats());
         const ReferenceDoc doc = reference_doc(ctx);
         if (*format == "markdown") {
           ctx.out << reference_markdown(doc);
           return;
         }
         // The page's date: SOURCE_DATE_EPOCH when set (reproducible builds), else today.
         std::time_t now = std::time(nullptr);
         if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch && *epoch) {
           char* end = nullptr;
           const long long seconds = std::strtoll(epoch, &end, 10);
           if (end && *end == '\0' && seconds >= 0) now = static_cast<std::time_t>(seconds);
         }
         std::tm tm{};
         gmtime_r(&now, &tm);
         char date[16];
         std::strftime(date, sizeof date, "%Y-%m-%d", &tm);
         ctx.out << reference_man(doc, date);
       };
     },
     97});

}  // namespace
}  // namespace ftplan::cli
