// One HTTP(S) GET: the command line's only network access (the Hugging Face Hub, cli/hf_hub.cpp).
// The transport lives in the network half of the program (src/net/http_get.cpp, in ftplan-net and
// the tests), so that the TLS and HTTP libraries are not loaded by every CLI call; the ftplan
// binary asks ftplan-net for the reply (src/launch/launch_net.cpp).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ftplan::cli {

struct HttpGetRequest {
  std::string origin;  // "https://huggingface.co"
  std::string path;    // "/org/model/resolve/main/config.json"
  std::vector<std::pair<std::string, std::string>> headers;
  std::size_t max_bytes = 0;  // the body is cut off there (reading stops)
};

struct HttpGetReply {
  int status = 0;
  std::string location;  // the Location header, for redirects
  std::string body;      // at most max_bytes
};

// No reply came: the transport's own words (no route, refused, TLS, time-out).
struct NetworkError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Redirects are not followed (the caller decides where a token may go). Throws NetworkError.
HttpGetReply http_get(const HttpGetRequest& request);

}  // namespace ftplan::cli
