#include "server/api.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <ostream>
#include <sstream>
#include <streambuf>

#include "core/error.hpp"
#include "core/json_check.hpp"
#include "core/text.hpp"
#include "core/utf8.hpp"
#include "embedded_files.hpp"

namespace ftplan::server {

using nlohmann::json;

std::string error_body(const std::string& code, const std::string& message,
                       const std::string& field, const std::vector<std::string>& suggestions) {
  return json{
      {"error",
       {{"code", code}, {"message", message}, {"field", field}, {"suggestions", suggestions}}}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

Response error_response(int status, const std::string& code, const std::string& message,
                        const std::string& field, const std::vector<std::string>& suggestions) {
  return {status, "application/json", error_body(code, message, field, suggestions)};
}

std::string host_name(std::string_view authority) {
  std::string host;
  if (authority.starts_with("[")) {
    const auto end = authority.find(']');
    host = std::string(authority.substr(1, end == std::string_view::npos ? end : end - 1));
  } else {
    host = std::string(authority.substr(0, authority.rfind(':')));
  }
  return ascii_lower(host);
}

namespace {

Response error(int status, const std::string& code, const std::string& message,
               const std::string& field = "", const std::vector<std::string>& suggestions = {}) {
  return error_response(status, code, message, field, suggestions);
}

Response error(const UserError& e) {
  return error(400, std::string(error_code_name(e.code())), e.what(), e.field(), e.suggestions());
}

// "application/json; charset=utf-8" -> "application/json"
std::string media_type(const std::string& content_type) {
  std::string t = ascii_lower(content_type.substr(0, content_type.find(';')));
  const auto first = t.find_first_not_of(" \t");
  const auto last = t.find_last_not_of(" \t");
  return first == std::string::npos ? "" : t.substr(first, last - first + 1);
}

// Names of the texts a request hands in (CommandCall::inline_files), as the command's arguments
// give them.
constexpr const char* kInlineModel = "inline:config.json";
// The runs document of /api/plan and POST /api/report: its name in messages and in the report's
// lead ("the runs of the request body"), where the command line names its file.
constexpr const char* kInlineRuns = "the request body";
constexpr const char* kInlineFrom = "inline:trainer-file";
// A lengths file handed in as its text (a JSONL dataset, a histogram, one count per line).
constexpr const char* kInlineLengths = "the request's lengths";

// The endpoints and the command each runs (endpoints(): the Python module offers each one).
constexpr Endpoint kEndpoints[] = {
    {"/api/gpus", "gpus", "GET"},      {"/api/models", "models", "GET"},
    {"/api/fit", "fit", "POST"},       {"/api/step", "step", "POST"},
    {"/api/scale", "scale", "POST"},   {"/api/mig", "mig", "POST"},
    {"/api/max", "max", "POST"},       {"/api/params", "params", "POST"},
    {"/api/plan", "plan", "POST"},     {"/api/report", "report", "GET"},
    {"/api/report", "report", "POST"}, {"/api/explain", "explain", "POST"},
    {"/api/words", "words", "GET"},    {"/api/infer", "infer", "POST"},
    {"/api/matrix", "matrix", "POST"},
};

std::string to_option(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return "--" + key;
}

std::string to_field(std::string option) {
  std::replace(option.begin(), option.end(), '-', '_');
  return option;
}

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) {
    std::ostringstream s;
    s << v.get<double>();
    return s.str();
  }
  throw UserError(ErrorCode::kInvalidValue,
                  "expected text or a number, got " + describe_json_value(v), "");
}

// {"model": "llama-3.1-8b", "micro_batch": 2, "gpu": ["a", "b"], "chunked_loss": true} ->
// --model llama-3.1-8b --micro-batch 2 --gpu a --gpu b --chunked-loss. Keys are checked against
// the command's options (`options`; none given: every key is passed on): an unknown key names
// the closest ones, a value of the wrong shape says what the key takes.
void append_options(const json& body, CommandCall& call, const std::vector<OptionInfo>& options,
                    const std::string& endpoint) {
  if (!body.is_object())
    throw UserError(ErrorCode::kInvalidValue,
                    "the request body must be a JSON object of the CLI's options", "");
  // A lengths file is pasted only where the command reads one.
  const bool takes_lengths =
      options.empty() || std::any_of(options.begin(), options.end(),
                                     [](const OptionInfo& o) { return o.key == "lengths"; });
  for (const auto& [key, value] : body.items()) {
    if (key == "json" || value.is_null()) continue;
    // Documents pasted whole (an object, or the file's text): a trainer file, a config.json, and
    // a lengths file where the command reads one (its text, or its histogram as JSON).
    bool pasted = false;
    for (const auto& [name, inline_name, option] :
         {std::tuple{"from", kInlineFrom, "--from"}, std::tuple{"config", kInlineModel, "--model"},
          std::tuple{"lengths", kInlineLengths, "--lengths"}})
      if (key == name && (key != "lengths" || takes_lengths)) {
        call.inline_files[inline_name] =
            value.is_string() ? value.get<std::string>()
                              : value.dump(-1, ' ', false, json::error_handler_t::replace);
        call.args.push_back(option);
        call.args.push_back(inline_name);
        pasted = true;
      }
    if (pasted) continue;
    OptionInfo info{key, to_option(key), value.is_boolean(), value.is_array()};
    if (!options.empty()) {
      const std::string& wanted = key;  // clang 14 cannot capture a structured binding
      const auto it = std::find_if(options.begin(), options.end(),
                                   [&](const OptionInfo& o) { return o.key == wanted; });
      if (it == options.end() && key == "gpu" && endpoint == "/api/matrix")
        throw UserError(ErrorCode::kUnknownName,
                        "the matrix evaluates every card of the catalog: leave out 'gpu' (the "
                        "body of /api/fit without the card), and keep fewer cards with nvlink, "
                        "rentable, max_price, min_memory or vendor",
                        key, {"nvlink", "rentable", "max_price", "min_memory", "vendor"});
      if (it == options.end()) {
        std::vector<std::string> keys;
        for (const auto& o : options)
          keys.push_back(o.key);
        for (const char* pasted_key : {"from", "config"})
          keys.emplace_back(pasted_key);
        auto near = closest_names(key, keys, 3);
        const std::string message = fmt::format(
            "unknown key '{}' for {}{}", shown_text(key, 80), endpoint,
            near.empty() ? "" : fmt::format("; did you mean {}?", fmt::join(near, ", ")));
        throw UserError(ErrorCode::kUnknownName, message, key, std::move(near));
      }
      info = *it;
    }
    try {
      if (info.flag) {
        // A flag: true or false (a query string's "true", "false", "1", "0").
        const std::string text = value.is_string() ? ascii_lower(value.get<std::string>()) : "";
        const bool on = value.is_boolean() ? value.get<bool>() : text == "true" || text == "1";
        if (!value.is_boolean() && !(on || text == "false" || text == "0"))
          throw UserError(ErrorCode::kInvalidValue,
                          "expected true or false, got " + describe_json_value(value), key);
        if (on) call.args.push_back(info.option);
        continue;
      }
      if (value.is_boolean())
        throw UserError(ErrorCode::kInvalidValue,
                        "expected a value (text or a number), got " + describe_json_value(value),
                        key);
      if (value.is_array() && value.size() > 1 && !info.list)
        throw UserError(ErrorCode::kInvalidValue,
                        "takes one value, got a list of " + std::to_string(value.size()), key);
      for (const auto& item : value.is_array() ? value : json::array({value})) {
        if (!info.option.empty()) call.args.push_back(info.option);
        call.args.push_back(scalar_text(item));
      }
    } catch (const UserError& e) {
      throw UserError(ErrorCode::kInvalidValue, "key '" + shown_text(key, 80) + "': " + e.what(),
                      key);
    }
  }
}

// The reply's text, up to a bound: writing past it throws OverBudget (the stream rethrows it).
class BoundedText : public std::streambuf {
 public:
  explicit BoundedText(std::size_t max_bytes) : max_(max_bytes) {}
  std::string text;

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const auto size = static_cast<std::size_t>(n);
    if (text.size() + size > max_)
      throw OverBudget("reply", "the reply would be larger than " + std::to_string(max_) +
                                    " bytes (its size budget)");
    text.append(s, size);
    return n;
  }

 private:
  std::size_t max_;
};

// How to ask for less, for each budget.
std::string narrowing_hint(const std::string& which) {
  const std::string ask =
      "; ask for less in one request: fewer runs, fewer candidate cards (gpu) or card counts, "
      "one card per request";
  if (which == "reply")
    return ask + ", or a shorter format; the server's bound is set with ftplan serve --max-reply";
  if (which == "time") return ask + "; the server's bound is set with ftplan serve --max-time";
  return ask + "; the server's bound is set with ftplan serve --max-work";
}

Response run_command(const Commands& commands, CommandCall call, const std::string& content_type,
                     const ApiLimits& limits) {
  call.budget = limits.work;
  BoundedText buffer(limits.max_reply_bytes);
  std::ostream out(&buffer);
  out.exceptions(std::ios::badbit);
  try {
    commands.run(call, out);
  } catch (const UserError& e) {
    // A runs document that cannot be read names its file as the field: here the request's body.
    const std::string field = e.field() == kInlineRuns ? "body" : to_field(e.field());
    return error(400, std::string(error_code_name(e.code())), e.what(), field, e.suggestions());
  } catch (const OverBudget& e) {
    return error(422, "over_budget", e.what() + narrowing_hint(e.which()), e.which());
  }
  return {200, content_type, std::move(buffer.text)};
}

// The embedded file a page path names: "/" is the page, "/examples/NAME" an embedded example (the
// page's default runs come from examples/seed-runs.yaml), every other path a file under web/.
std::string asset_name(const std::string& path) {
  if (path == "/") return "web/index.html";
  if (path.starts_with("/examples/")) return path.substr(1);
  return "web" + path;
}

Response serve_asset(const std::string& path) {
  // Only embedded files under web/ and examples/ are served: a lookup by exact name, never the
  // file system.
  const std::string name = asset_name(path);
  for (const auto& f : embedded::files()) {
    if (f.path != name) continue;
    std::string type = "text/plain; charset=utf-8";
    if (name.ends_with(".html"))
      type = "text/html; charset=utf-8";
    else if (name.ends_with(".js"))
      type = "text/javascript; charset=utf-8";
    else if (name.ends_with(".css"))
      type = "text/css; charset=utf-8";
    else if (name.ends_with(".svg"))
      type = "image/svg+xml";
    else if (name.ends_with(".yaml"))
      type = "application/yaml; charset=utf-8";
    return {200, type, std::string(f.text)};
  }
  return error(404, "not_found", "no such page or endpoint: " + shown_text(path, 80));
}

json parse_body(const Request& r) {
  if (r.body.empty()) return json::object();
  check_json_text(r.body, "the request body", "body");
  json body;
  try {
    body = json::parse(r.body);
  } catch (const json::exception& e) {
    throw UserError(ErrorCode::kInvalidValue,
                    "the request body is not valid JSON: " + shown_text(e.what(), 80), "body");
  }
  if (!body.is_object())
    throw UserError(
        ErrorCode::kInvalidValue,
        std::string("the request body must be a JSON object of the CLI's options, not ") +
            body.type_name(),
        "body");
  return body;
}

// The endpoint of a path and method; nullptr when the path has none for that method.
const Endpoint* find_endpoint(const std::string& path, const std::string& method) {
  for (const auto& e : kEndpoints)
    if (path == e.path && method == e.method) return &e;
  return nullptr;
}

// The methods a path takes ("GET or POST"); empty for a path that is no endpoint.
std::string methods_of(const std::string& path) {
  std::string methods;
  for (const auto& e : kEndpoints)
    if (path == e.path) methods += (methods.empty() ? "" : " or ") + std::string(e.method);
  return methods;
}

// A runs document in the body (plan; report by POST): JSON or YAML.
bool takes_runs(const Endpoint& e) {
  return std::string(e.command) == "plan" ||
         (std::string(e.command) == "report" && std::string(e.method) == "POST");
}

// The query parameters of plan and report (the body is the runs document, so the command's
// options come in the query string): each with its option. `gpu` is a comma-separated list, as a
// runs file's candidates (`?gpu=h200-nvl,l40s`).
struct QueryOption {
  const char* key;
  const char* option;
  bool list;
};
constexpr QueryOption kPlanQuery[] = {{"lang", "--lang", false}, {"gpu", "--gpu", true}};
constexpr QueryOption kReportQuery[] = {
    {"lang", "--lang", false}, {"gpu", "--gpu", true}, {"format", "--format", false}};

void append_query(const Request& r, const Endpoint& e, CommandCall& call) {
  const bool report = std::string(e.command) == "report";
  const std::span<const QueryOption> known = report ? std::span<const QueryOption>(kReportQuery)
                                                    : std::span<const QueryOption>(kPlanQuery);
  for (const auto& [key, value] : r.query) {
    const std::string& wanted = key;  // clang 14 cannot capture a structured binding
    const auto it = std::find_if(known.begin(), known.end(),
                                 [&](const QueryOption& q) { return wanted == q.key; });
    if (it == known.end()) {
      std::vector<std::string> keys;
      for (const auto& q : known)
        keys.emplace_back(q.key);
      auto near = closest_names(key, keys, 3);
      throw UserError(
          ErrorCode::kUnknownName,
          fmt::format("unknown query parameter '{}' for {} {} (it takes {}){}", shown_text(key, 80),
                      e.method, e.path, fmt::join(keys, ", "),
                      near.empty() ? "" : fmt::format("; did you mean {}?", fmt::join(near, ", "))),
          key, std::move(near));
    }
    if (!it->list) {
      call.args.insert(call.args.end(), {it->option, value});
      continue;
    }
    std::size_t begin = 0;
    bool any = false;
    while (begin <= value.size()) {
      const auto end = std::min(value.find(',', begin), value.size());
      std::string item = value.substr(begin, end - begin);
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      if (!item.empty()) {
        call.args.insert(call.args.end(), {it->option, item});
        any = true;
      }
      begin = end + 1;
    }
    if (!any)
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("query parameter '{}' is empty: give card ids separated by "
                                  "commas (?{}=h200-nvl,l40s), or leave it out",
                                  it->key, it->key),
                      it->key);
  }
}

// An address written as numbers: no name a page's owner could point at this server (DNS
// rebinding needs a name), so any is served.
bool ip_literal(const std::string& host) {
  if (host.find(':') != std::string::npos) return true;  // IPv6
  return !host.empty() && host.find_first_not_of("0123456789.") == std::string::npos;
}

bool allowed_host(const std::string& host, const ApiLimits& limits) {
  if (ip_literal(host)) return true;
  if (std::find(limits.hosts.begin(), limits.hosts.end(), host) != limits.hosts.end()) return true;
  for (const auto& origin : limits.origins) {
    const auto scheme = origin.find("://");
    if (host_name(scheme == std::string::npos ? origin : origin.substr(scheme + 3)) == host)
      return true;
  }
  return false;
}

std::string served_names(const ApiLimits& limits) {
  std::string names;
  for (const auto& h : limits.hosts)
    names += (names.empty() ? "" : ", ") + h;
  for (const auto& o : limits.origins)
    names += (names.empty() ? "" : ", ") + o;
  return names;
}

}  // namespace

std::span<const Endpoint> endpoints() {
  return kEndpoints;
}

std::optional<Response> check_head(const Request& r, const ApiLimits& limits) {
  if (const auto bad = first_invalid_utf8(r.path); bad != std::string::npos)
    return error(400, "invalid_value",
                 "the path is not UTF-8 text (byte " + std::to_string(bad) + " of '" +
                     shown_text(r.path, 80) + "')",
                 "path");
  for (const auto& [key, value] : r.query)
    if (!valid_utf8(key) || !valid_utf8(value))
      return error(400, "invalid_value",
                   "query parameter '" + shown_text(key, 80) + "' is not UTF-8 text",
                   shown_text(key, 80));
  if (!limits.hosts.empty()) {
    if (!r.host.empty() && !allowed_host(host_name(r.host), limits))
      return error(403, "forbidden_host",
                   "this server does not answer to the host name '" + shown_text(r.host, 80) +
                       "' (it answers to " + served_names(limits) +
                       "); to reach it under another name, start it with --allow-origin "
                       "http://NAME:PORT",
                   "host");
    // A browser names the page's origin: it must be this server's own (the Host it asked for),
    // or one allowed with --allow-origin.
    if (!r.origin.empty()) {
      const std::string origin = ascii_lower(r.origin);
      const bool same =
          origin == "http://" + ascii_lower(r.host) || origin == "https://" + ascii_lower(r.host);
      bool listed = false;
      for (const auto& o : limits.origins)
        listed |= ascii_lower(o) == origin || ascii_lower(o) + "/" == origin ||
                  ascii_lower(o) == origin + "/";
      if (!same && !listed)
        return error(403, "forbidden_origin",
                     "requests from pages of '" + shown_text(r.origin, 80) +
                         "' are not served (only this server's own page); to allow that page, "
                         "start the server with --allow-origin " +
                         shown_text(r.origin, 80),
                     "origin");
    }
  }
  if (!r.content_encoding.empty() && ascii_lower(r.content_encoding) != "identity")
    return error(415, "unsupported_encoding",
                 "Content-Encoding '" + shown_text(r.content_encoding, 80) +
                     "' is not accepted; send the body uncompressed",
                 "content_encoding");
  if (r.content_length && *r.content_length > limits.max_body_bytes)
    return error(413, "payload_too_large",
                 "the request body (" + std::to_string(*r.content_length) + " bytes) exceeds " +
                     std::to_string(limits.max_body_bytes) + " bytes",
                 "body");
  const Endpoint* endpoint = find_endpoint(r.path, r.method);
  if (endpoint && r.method == "POST") {
    const std::string type = media_type(r.content_type);
    const bool plan = takes_runs(*endpoint);
    const bool yaml =
        type == "application/yaml" || type == "application/x-yaml" || type == "text/yaml";
    if (type != "application/json" && !(plan && yaml))
      return error(415, "unsupported_media_type",
                   "POST " + r.path + " takes a body of Content-Type application/json" +
                       (plan ? " or application/yaml" : "") + ", got '" +
                       shown_text(r.content_type.empty() ? "none" : r.content_type, 80) + "'",
                   "content_type");
  }
  return std::nullopt;
}

Response handle(const Request& r, const Commands& commands, const ApiLimits& limits) {
  if (auto refused = check_head(r, limits)) return *refused;
  if (r.body.size() > limits.max_body_bytes)
    return error(413, "payload_too_large",
                 "the request body exceeds " + std::to_string(limits.max_body_bytes) + " bytes",
                 "body");
  if (const auto bad = first_invalid_utf8(r.body); bad != std::string::npos)
    return error(400, "invalid_value",
                 "the request body is not UTF-8 text: byte " + std::to_string(bad) + " (" +
                     line_and_column(r.body, bad) + ") does not start or continue a character",
                 "body");
  if (r.path == "/healthz") {
    if (r.method != "GET" && r.method != "HEAD")
      return error(405, "method_not_allowed", "use GET for /healthz");
    return {200, "application/json", json{{"status", "ok"}}.dump()};
  }
  if (!r.path.starts_with("/api/")) {
    if (r.method != "GET" && r.method != "HEAD")
      return error(405, "method_not_allowed", "pages are read with GET");
    return serve_asset(r.path);
  }
  const std::string methods = methods_of(r.path);
  if (methods.empty())
    return error(404, "not_found", "no such endpoint: " + shown_text(r.path, 80));
  const Endpoint* endpoint = find_endpoint(r.path, r.method);
  if (!endpoint)
    return error(405, "method_not_allowed", "use " + methods + " for " + shown_text(r.path, 80));

  CommandCall call;
  call.args = {endpoint->command};
  std::string content_type = "application/json";
  try {
    const bool report = std::string(endpoint->command) == "report";
    if (takes_runs(*endpoint)) {
      // The body is a runs document, as JSON or YAML (YAML parses JSON too).
      if (report && r.body.find_first_not_of(" \t\r\n") == std::string::npos)
        throw UserError(ErrorCode::kInvalidValue,
                        "POST /api/report takes a runs document (YAML or JSON, as ftplan report "
                        "FILE reads) as its body; GET /api/report reports the seed's runs",
                        "body");
      if (media_type(r.content_type) == "application/json")
        check_json_text(r.body, "the request body", "body");
      call.inline_files[kInlineRuns] = r.body;
      call.args.push_back(kInlineRuns);
    }
    if (takes_runs(*endpoint) || report) {
      append_query(r, *endpoint, call);
      if (report) {
        const auto format = r.query.count("format") ? r.query.at("format") : "html";
        if (!r.query.count("format")) call.args.insert(call.args.end(), {"--format", format});
        content_type = format == "md" ? "text/markdown; charset=utf-8" : "text/html; charset=utf-8";
      } else {
        call.args.push_back("--json");
      }
    } else {
      json body = parse_body(r);
      // GET endpoints take their options from the query string; POST ones from the JSON body only
      // (a form-encoded body would otherwise appear as query parameters).
      if (r.method == "GET")
        for (const auto& [k, v] : r.query)
          body[k] = v;
      // The language of the reasons: `lang` in the body, or in the query string of any request.
      if (r.query.count("lang") && body.is_object() && !body.contains("lang"))
        body["lang"] = r.query.at("lang");
      append_options(
          body, call,
          commands.options ? commands.options(endpoint->command) : std::vector<OptionInfo>{},
          endpoint->path);
      call.args.push_back("--json");
    }
  } catch (const UserError& e) {
    return error(e);
  }
  return run_command(commands, call, content_type, limits);
}

}  // namespace ftplan::server
