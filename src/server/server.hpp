// ftplan serve: the HTTP server around server::handle(), event-driven (libmicrohttpd): a few
// threads each wait on many connections at once, so idle, slow or keep-alive connections hold no
// worker; every head and body is bounded in size and time.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/api.hpp"

namespace ftplan::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  int threads = 4;                // threads that each serve a share of the connections
  int read_timeout_seconds = 10;  // a request's head, and then its body, must arrive within this
  int idle_timeout_seconds = 5;   // a connection silent this long (also between requests) is closed
  int max_connections = 4096;     // at most this many open at once (fewer if the process may not)
  std::size_t max_header_bytes = 32 << 10;  // request line and headers together
  int max_headers = 100;
  std::vector<std::string> allow_origins;  // --allow-origin: origins (or host names) also served
  ApiLimits limits;
};

// A server running on its own threads until it is destroyed.
class RunningServer {
 public:
  // Binds and starts serving; an address that cannot be bound (in use, not of this machine, not
  // permitted) is a UserError that says why.
  static std::unique_ptr<RunningServer> start(const ServerOptions& options,
                                              const Commands& commands);
  virtual ~RunningServer() = default;
  virtual int port() const = 0;
};

// Serves `commands` until the process is stopped. `on_listening` runs once the socket is bound
// (with the port). Throws a UserError when the address cannot be bound.
void serve(const ServerOptions& options, const Commands& commands,
           const std::function<void(int port)>& on_listening = {});

}  // namespace ftplan::server
