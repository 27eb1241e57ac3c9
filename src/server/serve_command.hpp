// ftplan serve: the web calculator and the JSON API on a socket — the command's options, their
// checks and the run, for the command line to register.
#pragma once

#include <CLI/CLI.hpp>

#include <ostream>

#include "server/commands.hpp"
#include "server/server.hpp"

namespace ftplan::server {

// --host, --port, --threads, --max-body, --max-work, --max-time, --max-reply and
// --allow-origin, into `options`.
void add_serve_options(CLI::App& app, ServerOptions& options);

// Serves `commands` until the process is stopped and says where on `out` once listening. A port
// outside 0 to 65535, a thread count outside 1 to 256, a budget out of range, an origin that is
// not one or an address that cannot be bound (a port in use) is a UserError.
void run_serve(const ServerOptions& options, const Commands& commands, std::ostream& out);

}  // namespace ftplan::server
