// The HTTP API's request handling, apart from the socket layer: a request (method, path, query,
// body) in, a response (status, content type, body) out. Every /api/ endpoint runs the same
// command as the CLI (through `Commands`), so responses are the CLI's --json output.
#pragma once

#include <map>
#include <string>

#include "server/commands.hpp"

namespace ftplan::server {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string path;    // "/api/fit"
  std::map<std::string, std::string> query;
  std::string body;
  std::string content_type;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

struct ApiLimits {
  std::size_t max_body_bytes = 1 << 20;  // 1 MiB: a pasted config.json or runs file fits easily
};

// `commands`: what the /api/ endpoints run.
Response handle(const Request& request, const Commands& commands, const ApiLimits& limits = {});

// {"error": {"code", "message", "field"}}
std::string error_body(const std::string& code, const std::string& message,
                       const std::string& field = "");

}  // namespace ftplan::server
