// The page's engine has no network: the server and the Hub's downloads, which the command line
// reaches through ftplan-net (src/launch/launch_net.cpp), answer here that the page cannot do
// them. A model is then given by catalog id or a pasted config.json.
#include "cli/http_get.hpp"
#include "core/error.hpp"
#include "server/server.hpp"

namespace ftplan {

namespace cli {

HttpGetReply http_get(const HttpGetRequest& request) {
  throw NetworkError("the page that needs no server has no network access (" + request.origin +
                     "): give the model by catalog id or paste its config.json");
}

}  // namespace cli

namespace server {

std::unique_ptr<RunningServer> RunningServer::start(const ServerOptions&, const Commands&) {
  throw UserError(ErrorCode::kUnsupported, "the page's engine cannot serve", "serve");
}

void serve(const ServerOptions&, const Commands&, const std::function<void(int port)>&) {
  throw UserError(ErrorCode::kUnsupported, "the page's engine cannot serve", "serve");
}

}  // namespace server

}  // namespace ftplan
