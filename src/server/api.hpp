// The HTTP API's request handling, apart from the socket layer: a request (method, path, query,
// headers that matter, body) in, a response (status, content type, body) out. Every /api/
// endpoint runs the same command as the CLI (through `Commands`), so responses are the CLI's
// --json output.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/work_budget.hpp"
#include "server/commands.hpp"

namespace ftplan::server {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // "/api/fit" (percent-decoded)
  std::map<std::string, std::string> query;
  std::string body;
  std::string content_type;
  // Headers the checks read; empty when absent.
  std::string host;                           // Host
  std::string origin;                         // Origin
  std::string content_encoding;               // Content-Encoding
  std::optional<std::size_t> content_length;  // Content-Length, when given
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

struct ApiLimits {
  std::size_t max_body_bytes = 1 << 20;  // 1 MiB: a pasted config.json or runs file fits easily
  // The work one /api/ request may cause (planner evaluations, wall time) and its reply's size.
  WorkBudget work{20000, 10.0};
  std::size_t max_reply_bytes = 8 << 20;
  // The host names this server answers to (Host header, and the host of an Origin header), without
  // port: the name or address it listens on and loopback names. Empty: any (in-process calls).
  std::vector<std::string> hosts;
  // Origins ("http://name:port") allowed besides those of `hosts`.
  std::vector<std::string> origins;
};

// An /api/ endpoint and the command it runs.
struct Endpoint {
  const char* path;     // "/api/fit"
  const char* command;  // "fit"
  const char* method;   // "POST", or "GET" (options in the query string)
};

// Every /api/ endpoint (the Python module offers one function for each).
std::span<const Endpoint> endpoints();

// The checks that need only the request line and headers: UTF-8 path and query, Host and Origin,
// Content-Encoding, Content-Type of a POST and Content-Length against the body limit. The server
// runs them before it reads a body; handle() runs them too. nullopt: the request may go on.
std::optional<Response> check_head(const Request& request, const ApiLimits& limits);

// `commands`: what the /api/ endpoints run.
Response handle(const Request& request, const Commands& commands, const ApiLimits& limits = {});

// {"error": {"code", "message", "field", "suggestions"}}, as the command line prints errors with
// --json; text that is not UTF-8 is replaced, never thrown on.
std::string error_body(const std::string& code, const std::string& message,
                       const std::string& field = "",
                       const std::vector<std::string>& suggestions = {});
Response error_response(int status, const std::string& code, const std::string& message,
                        const std::string& field = "",
                        const std::vector<std::string>& suggestions = {});

// The host part of a Host header or of an origin's authority, lower case, without port or the
// brackets of an IPv6 address ("[::1]:8080" -> "::1", "Localhost:80" -> "localhost").
std::string host_name(std::string_view authority);

}  // namespace ftplan::server
