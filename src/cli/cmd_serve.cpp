// ftplan serve: the planner as a web page and JSON API (server/serve_command), serving this
// command line's commands.
#include "cli/cli.hpp"
#include "server/serve_command.hpp"

namespace ftplan::cli {
namespace {

const bool registered_serve = register_command(
    {"serve", "Serve the web calculator and the JSON API (GET /api/gpus, POST /api/fit, ...)",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<server::ServerOptions>();
       server::add_serve_options(app, *o);
       return [&ctx, o] { server::run_serve(*o, server_commands(), ctx.out); };
     },
     90});

}  // namespace
}  // namespace ftplan::cli
