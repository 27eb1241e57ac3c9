#include "server/api.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "core/error.hpp"
#include "embedded_files.hpp"

namespace ftplan::server {

using nlohmann::json;

std::string error_body(const std::string& code, const std::string& message,
                       const std::string& field) {
  return json{{"error", {{"code", code}, {"message", message}, {"field", field}}}}.dump();
}

namespace {

Response error(int status, const std::string& code, const std::string& message,
               const std::string& field = "") {
  return {status, "application/json", error_body(code, message, field)};
}

// Names of the texts a request hands in (CommandCall::inline_files), as the command's arguments
// give them.
constexpr const char* kInlineModel = "inline:config.json";
constexpr const char* kInlineRuns = "inline:runs.yaml";

// The POST endpoints and the command each runs.
struct Endpoint {
  const char* path;
  const char* command;
  const char* method;
};
constexpr Endpoint kEndpoints[] = {
    {"/api/gpus", "gpus", "GET"},        {"/api/models", "models", "GET"},
    {"/api/fit", "fit", "POST"},         {"/api/step", "step", "POST"},
    {"/api/scale", "scale", "POST"},     {"/api/mig", "mig", "POST"},
    {"/api/max", "max", "POST"},         {"/api/params", "params", "POST"},
    {"/api/plan", "plan", "POST"},       {"/api/report", "report", "GET"},
    {"/api/explain", "explain", "POST"}, {"/api/words", "words", "GET"},
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
  throw UserError(ErrorCode::kInvalidValue, "expected text or a number, got " + v.dump(), "");
}

// {"model": "llama-3.1-8b", "micro_batch": 2, "gpu": ["a", "b"], "chunked_loss": true} ->
// --model llama-3.1-8b --micro-batch 2 --gpu a --gpu b --chunked-loss
void append_options(const json& body, CommandCall& call) {
  if (!body.is_object())
    throw UserError(ErrorCode::kInvalidValue,
                    "the request body must be a JSON object of the CLI's options", "");
  for (const auto& [key, value] : body.items()) {
    if (key == "json" || key == "data" || value.is_null()) continue;
    if (key == "config") {  // a pasted config.json (object or text)
      call.inline_files[kInlineModel] = value.is_string() ? value.get<std::string>() : value.dump();
      call.args.push_back("--model");
      call.args.push_back(kInlineModel);
      continue;
    }
    try {
      if (value.is_boolean()) {
        if (value.get<bool>()) call.args.push_back(to_option(key));
      } else if (value.is_array()) {
        for (const auto& item : value) {
          call.args.push_back(to_option(key));
          call.args.push_back(scalar_text(item));
        }
      } else {
        call.args.push_back(to_option(key));
        call.args.push_back(scalar_text(value));
      }
    } catch (const UserError& e) {
      throw UserError(ErrorCode::kInvalidValue, "key '" + key + "': " + e.what(), key);
    }
  }
}

Response run_command(const Commands& commands, const CommandCall& call,
                     const std::string& content_type) {
  std::ostringstream out;
  try {
    commands.run(call, out);
  } catch (const UserError& e) {
    return error(400, std::string(error_code_name(e.code())), e.what(), to_field(e.field()));
  }
  return {200, content_type, out.str()};
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
  return error(404, "not_found", "no such page or endpoint: " + path);
}

json parse_body(const Request& r) {
  if (r.body.empty()) return json::object();
  try {
    return json::parse(r.body);
  } catch (const json::exception& e) {
    throw UserError(ErrorCode::kInvalidValue,
                    std::string("the request body is not valid JSON: ") + e.what(), "body");
  }
}

}  // namespace

Response handle(const Request& r, const Commands& commands, const ApiLimits& limits) {
  if (r.body.size() > limits.max_body_bytes)
    return error(413, "payload_too_large",
                 "the request body exceeds " + std::to_string(limits.max_body_bytes) + " bytes");
  if (r.path == "/healthz") {
    if (r.method != "GET") return error(405, "method_not_allowed", "use GET for /healthz");
    return {200, "application/json", json{{"status", "ok"}}.dump()};
  }
  if (!r.path.starts_with("/api/")) {
    if (r.method != "GET" && r.method != "HEAD")
      return error(405, "method_not_allowed", "pages are read with GET");
    return serve_asset(r.path);
  }
  const Endpoint* endpoint = nullptr;
  for (const auto& e : kEndpoints)
    if (r.path == e.path) endpoint = &e;
  if (!endpoint) return error(404, "not_found", "no such endpoint: " + r.path);
  if (r.method != endpoint->method)
    return error(405, "method_not_allowed",
                 std::string("use ") + endpoint->method + " for " + endpoint->path);

  CommandCall call;
  call.args = {endpoint->command};
  std::string content_type = "application/json";
  try {
    if (std::string(endpoint->command) == "plan") {
      // The body is a runs document, as JSON or YAML (YAML parses JSON too).
      call.inline_files[kInlineRuns] = r.body;
      call.args.push_back(kInlineRuns);
      call.args.push_back("--json");
      if (r.query.count("lang")) call.args.insert(call.args.end(), {"--lang", r.query.at("lang")});
    } else if (std::string(endpoint->command) == "report") {
      const auto format = r.query.count("format") ? r.query.at("format") : "html";
      call.args.insert(call.args.end(), {"--format", format});
      if (r.query.count("lang")) call.args.insert(call.args.end(), {"--lang", r.query.at("lang")});
      content_type = format == "md" ? "text/markdown; charset=utf-8" : "text/html; charset=utf-8";
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
      append_options(body, call);
      call.args.push_back("--json");
    }
  } catch (const UserError& e) {
    return error(400, std::string(error_code_name(e.code())), e.what(), e.field());
  }
  return run_command(commands, call, content_type);
}

}  // namespace ftplan::server
