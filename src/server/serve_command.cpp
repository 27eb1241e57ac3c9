#include "server/serve_command.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace ftplan::server {

void add_serve_options(CLI::App& app, ServerOptions& o) {
  app.add_option("--host", o.host, "Address to listen on (default 127.0.0.1)");
  app.add_option("--port", o.port, "Port (default 8080; 0 picks a free one)");
  app.add_option("--threads", o.threads,
                 "Threads, each serving a share of the connections (default 4)");
  app.add_option("--max-body", o.limits.max_body_bytes,
                 "Largest request body in bytes (default 1 MiB)");
  app.add_option("--max-work", o.limits.work.max_evaluations,
                 "Most planner evaluations one request may cause (default 20000)");
  app.add_option("--max-time", o.limits.work.max_seconds,
                 "Most seconds one request may compute (default 10)");
  app.add_option("--max-reply", o.limits.max_reply_bytes, "Largest reply in bytes (default 8 MiB)");
  app.add_option("--allow-origin", o.allow_origins,
                 "Also serve pages of this origin (http://NAME:PORT) and requests to NAME "
                 "(repeatable); by default only this server's own page, on loopback names, its "
                 "address and this machine's name");
}

namespace {

void check_origin(const std::string& origin) {
  const bool scheme = origin.starts_with("http://") || origin.starts_with("https://");
  const std::string rest =
      origin.substr(origin.find("://") == std::string::npos ? 0 : origin.find("://") + 3);
  if (!scheme || rest.empty() || rest.find('/') != std::string::npos || !valid_utf8(origin))
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("--allow-origin '{}': expected an origin such as "
                    "http://planner.example:8080 (scheme, name, optional port; no path)",
                    cut_utf8(printable_utf8(origin), 80)),
        "allow_origin");
}

}  // namespace

void run_serve(const ServerOptions& o, const Commands& commands, std::ostream& out) {
  if (o.port < 0 || o.port > 65535)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("--port must be 0 to 65535, got {}", o.port), "port");
  if (o.threads < 1 || o.threads > 256)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("--threads must be 1 to 256, got {}", o.threads), "threads");
  if (o.limits.work.max_evaluations < 1)
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("--max-work must be at least 1, got {}", o.limits.work.max_evaluations),
        "max_work");
  if (!(o.limits.work.max_seconds > 0) || o.limits.work.max_seconds > 3600)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("--max-time must be above 0 and at most 3600 seconds, got {}",
                                o.limits.work.max_seconds),
                    "max_time");
  if (o.limits.max_reply_bytes < 1024)
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("--max-reply must be at least 1024 bytes, got {}", o.limits.max_reply_bytes),
        "max_reply");
  for (const auto& origin : o.allow_origins)
    check_origin(origin);
  serve(o, commands, [&](int port) {
    out << fmt::format("ftplan serving on http://{}:{}/ (Ctrl-C stops)", o.host, port) << std::endl;
  });
}

}  // namespace ftplan::server
