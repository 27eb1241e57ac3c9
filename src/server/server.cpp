#include "server/server.hpp"

#include <httplib.h>

namespace ftplan::server {

namespace {

void respond(const httplib::Request& req, httplib::Response& res, const Commands& commands,
             const ApiLimits& limits) {
  Request r;
  r.method = req.method;
  r.path = req.path;
  for (const auto& [k, v] : req.params)
    r.query[k] = v;
  r.body = req.body;
  r.content_type = req.get_header_value("Content-Type");
  const Response out = handle(r, commands, limits);
  res.status = out.status;
  res.set_content(out.body, out.content_type.c_str());
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Content-Type-Options", "nosniff");
}

}  // namespace

bool serve(const ServerOptions& o, const Commands& commands,
           const std::function<void(int)>& on_listening) {
  if (commands.prepare) commands.prepare();
  httplib::Server svr;
  const int threads = o.threads;
  svr.new_task_queue = [threads] {
    return new httplib::ThreadPool(static_cast<std::size_t>(threads));
  };
  svr.set_payload_max_length(o.limits.max_body_bytes);
  svr.set_read_timeout(o.read_timeout_seconds, 0);
  svr.set_write_timeout(o.write_timeout_seconds, 0);
  svr.set_keep_alive_timeout(5);
  svr.set_tcp_nodelay(true);  // small JSON replies: no Nagle delay
  const ApiLimits limits = o.limits;
  auto handler = [limits, &commands](const httplib::Request& req, httplib::Response& res) {
    respond(req, res, commands, limits);
  };
  // One handler for every method and path: routing, 404 and 405 live in handle().
  svr.Get(".*", handler);
  svr.Post(".*", handler);
  svr.Put(".*", handler);
  svr.Delete(".*", handler);
  svr.Patch(".*", handler);
  svr.Options(".*", handler);
  // What httplib itself rejects (oversized body, malformed request) also gets a JSON error.
  svr.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    const std::string code = res.status == 413   ? "payload_too_large"
                             : res.status == 404 ? "not_found"
                                                 : "bad_request";
    res.set_content(error_body(code, "HTTP " + std::to_string(res.status)), "application/json");
  });
  svr.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = std::string("internal error: ") + e.what();
        } catch (...) {
        }
        res.status = 500;
        res.set_content(error_body("internal", what), "application/json");
      });
  int port = o.port;
  if (port == 0) {
    port = svr.bind_to_any_port(o.host.c_str());
    if (port < 0) return false;
  } else if (!svr.bind_to_port(o.host.c_str(), port)) {
    return false;
  }
  if (on_listening) on_listening(port);
  return svr.listen_after_bind();
}

}  // namespace ftplan::server
