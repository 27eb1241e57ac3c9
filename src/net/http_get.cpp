// The HTTP(S) transport of cli/http_get.hpp: Debian's cpp-httplib with OpenSSL, the system's CA
// certificates, bounded time and size.
#include "cli/http_get.hpp"

#include <httplib.h>

#include <algorithm>

namespace ftplan::cli {

HttpGetReply http_get(const HttpGetRequest& request) {
  httplib::Client client(request.origin);
  client.set_connection_timeout(10);
  client.set_read_timeout(60);
  client.set_follow_location(false);
  client.enable_server_certificate_verification(true);  // the system's CA certificates
  httplib::Headers headers;
  for (const auto& [name, value] : request.headers)
    headers.emplace(name, value);
  HttpGetReply reply;
  bool enough = false;
  auto result = client.Get(
      request.path, headers,
      [&](const httplib::Response& r) {
        reply.status = r.status;
        reply.location = r.get_header_value("Location");
        return true;
      },
      [&](const char* data, std::size_t n) {
        reply.body.append(data, std::min(n, request.max_bytes - reply.body.size()));
        enough = reply.body.size() >= request.max_bytes;
        return !enough;  // stop reading: never more than asked for
      });
  if (!result && !(enough && result.error() == httplib::Error::Canceled))
    throw NetworkError(httplib::to_string(result.error()));
  return reply;
}

}  // namespace ftplan::cli
