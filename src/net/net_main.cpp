// ftplan-net: the whole ftplan command line plus the network: `serve` (the HTTP server) and the
// HTTP(S) GETs the ftplan binary hands over (src/launch/launch_net.cpp).
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "cli/http_get.hpp"

namespace {

// __http-get ORIGIN PATH MAX_BYTES, headers ("Name: value" lines) on standard input.
int http_get_main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: ftplan-net __http-get ORIGIN PATH MAX_BYTES\n";
    return 2;
  }
  ftplan::cli::HttpGetRequest request{argv[2], argv[3], {}, 0};
  try {
    request.max_bytes = std::stoull(argv[4]);
  } catch (const std::exception&) {
    std::cerr << "MAX_BYTES must be a number\n";
    return 2;
  }
  for (std::string line; std::getline(std::cin, line);) {
    const auto colon = line.find(": ");
    if (colon != std::string::npos)
      request.headers.emplace_back(line.substr(0, colon), line.substr(colon + 2));
  }
  try {
    const auto reply = ftplan::cli::http_get(request);
    std::cout << reply.status << '\n' << reply.location << '\n' << reply.body;
    std::cout.flush();
    return std::cout ? 0 : 1;
  } catch (const ftplan::cli::NetworkError& e) {
    std::cerr << e.what();
    return 3;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "__http-get") return http_get_main(argc, argv);
  std::vector<std::string> args(argv + 1, argv + argc);
  return ftplan::cli::run(args, std::cout, std::cerr);
}
