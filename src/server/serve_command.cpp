#include "server/serve_command.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace ftplan::server {

void add_serve_options(CLI::App& app, ServerOptions& o) {
  app.add_option("--host", o.host, "Address to listen on (default 127.0.0.1)");
  app.add_option("--port", o.port, "Port (default 8080; 0 picks a free one)");
  app.add_option("--threads", o.threads, "Worker threads (default 4)");
  app.add_option("--max-body", o.limits.max_body_bytes,
                 "Largest request body in bytes (default 1 MiB)");
}

void run_serve(const ServerOptions& o, const Commands& commands, std::ostream& out) {
  if (o.port < 0 || o.port > 65535)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("--port must be 0 to 65535, got {}", o.port), "port");
  if (o.threads < 1 || o.threads > 256)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("--threads must be 1 to 256, got {}", o.threads), "threads");
  const bool ok = serve(o, commands, [&](int port) {
    out << fmt::format("ftplan serving on http://{}:{}/ (Ctrl-C stops)", o.host, port) << std::endl;
  });
  if (!ok)
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("cannot listen on {}:{} (in use, or not an address of this machine)", o.host,
                    o.port),
        "port");
}

}  // namespace ftplan::server
