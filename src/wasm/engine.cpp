// The engine of the page that needs no server (the `site` target): the HTTP API's handler compiled
// to WebAssembly. The page's requests are handed to server::handle() in-process, as the server
// hands them over a socket, so the static page and the served one give the same answers.
//
//   ftplan_request('{"method":"POST","path":"/api/fit","query":{},"body":"{...}",
//                    "content_type":"application/json"}')
//   -> '{"status":200,"content_type":"application/json","body":"{...}"}'
//
// The bounds are the server's defaults (request and reply size, work per request), so a request
// the server refuses as too costly is refused here in the same words.
#include <emscripten/emscripten.h>

#include <nlohmann/json.hpp>

#include <exception>
#include <string>

#include "cli/cli.hpp"
#include "server/api.hpp"

namespace {

std::string reply_text(const ftplan::server::Response& r) {
  return nlohmann::json{{"status", r.status}, {"content_type", r.content_type}, {"body", r.body}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

// The request as JSON (method, path, query: an object of decoded texts, body, content_type); the
// reply as JSON (status, content_type, body). The text returned stays valid until the next call.
extern "C" EMSCRIPTEN_KEEPALIVE const char* ftplan_request(const char* request_json) {
  static std::string reply;
  using ftplan::server::Request;
  using ftplan::server::Response;
  try {
    const auto in = nlohmann::json::parse(request_json);
    Request r;
    r.method = in.value("method", "GET");
    r.path = in.value("path", "/");
    const auto query = in.value("query", nlohmann::json::object());
    for (const auto& [key, value] : query.items())
      r.query[key] = value.is_string() ? value.get<std::string>() : value.dump();
    r.body = in.value("body", "");
    r.content_type = in.value("content_type", "");
    r.content_length = r.body.size();
    const ftplan::server::ApiLimits limits;  // the server's defaults
    if (auto refused = ftplan::server::check_head(r, limits))
      reply = reply_text(*refused);
    else
      reply = reply_text(ftplan::server::handle(r, ftplan::cli::loaded_server_commands(), limits));
  } catch (const std::exception& e) {
    reply = reply_text(ftplan::server::error_response(500, "internal", e.what()));
  }
  return reply.c_str();
}
