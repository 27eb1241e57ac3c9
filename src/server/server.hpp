// ftplan serve: the HTTP server (cpp-httplib) around server::handle().
#pragma once

#include <functional>
#include <string>

#include "server/api.hpp"

namespace ftplan::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  int threads = 4;                // bounded worker pool
  int read_timeout_seconds = 10;  // a request must arrive within this
  int write_timeout_seconds = 10;
  ApiLimits limits;
};

// Serves `commands` until the process is stopped. `on_listening` runs once the socket is bound
// (with the port). Returns false when the address cannot be bound.
bool serve(const ServerOptions& options, const Commands& commands,
           const std::function<void(int port)>& on_listening = {});

}  // namespace ftplan::server
