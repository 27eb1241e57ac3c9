// Fuzzes the HTTP API's request handler (server::handle, the commands behind it included): the
// first line is the method and target ("POST /api/fit?lang=de"), the second the Content-Type, the
// rest the body. Every request must be answered with a 2xx or 4xx whose JSON is valid UTF-8;
// nothing may crash, throw or answer 500.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cli/cli.hpp"
#include "core/utf8.hpp"
#include "server/api.hpp"

namespace {

std::string_view next_line(std::string_view& text) {
  const auto end = text.find('\n');
  const std::string_view line = text.substr(0, end);
  text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ftplan::server::Commands commands = ftplan::cli::server_commands();
  static const ftplan::server::ApiLimits limits = [] {
    ftplan::server::ApiLimits l;
    l.work.max_evaluations = 200;  // each input stays quick
    l.work.max_seconds = 2;
    l.max_reply_bytes = 1 << 20;
    l.hosts = {"localhost", "127.0.0.1"};
    return l;
  }();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string_view request_line = next_line(text);
  ftplan::server::Request r;
  const auto space = request_line.find(' ');
  r.method = std::string(request_line.substr(0, space));
  std::string_view target =
      space == std::string_view::npos ? std::string_view("/") : request_line.substr(space + 1);
  const auto question = target.find('?');
  r.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) {
    std::string_view query = target.substr(question + 1);
    while (!query.empty()) {
      const auto amp = query.find('&');
      const std::string_view pair = query.substr(0, amp);
      const auto eq = pair.find('=');
      r.query[std::string(pair.substr(0, eq))] =
          eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1));
      query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    }
  }
  r.content_type = std::string(next_line(text));
  r.body = std::string(text);
  r.host = "127.0.0.1:8080";
  const ftplan::server::Response out = ftplan::server::handle(r, commands, limits);
  if (out.status >= 500 || out.status < 200) __builtin_trap();
  if (out.content_type == "application/json") {
    if (!ftplan::valid_utf8(out.body)) __builtin_trap();
    if (!nlohmann::json::accept(out.body)) __builtin_trap();
  }
  return 0;
}
