// A small HTTP/1.1 client over loopback sockets for the server's tests and its load generator:
// raw requests (so that malformed, slow and hostile ones can be sent too), replies read with a
// timeout, never blocking for ever.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ftplan::test {

// A connected loopback socket (blocking, no Nagle delay), or -1.
inline int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  const int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  return fd;
}

// Sends all of `data`; false when the peer closed or `timeout_ms` passed.
inline bool send_all(int fd, std::string_view data, int timeout_ms = 10000) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!data.empty()) {
    pollfd p{fd, POLLOUT, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

// Reads one reply (Content-Length or chunked body, or up to the close); nullopt when the peer
// closed before a whole reply or `timeout_ms` passed. `buffer` keeps what follows the reply.
inline std::optional<HttpReply> read_reply(int fd, std::string& buffer, int timeout_ms = 10000,
                                           bool head_only = false) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool closed = false;
  auto fill = [&]() {
    pollfd p{fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char chunk[65536];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) {
      closed = true;
      return false;
    }
    buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
  };
  std::size_t head_end;
  while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos)
    if (!fill()) return std::nullopt;
  HttpReply r;
  const std::string head = buffer.substr(0, head_end);
  buffer.erase(0, head_end + 4);
  if (head.size() < 12 || !head.starts_with("HTTP/1.")) return std::nullopt;
  r.status = std::atoi(head.c_str() + 9);
  for (std::size_t at = head.find("\r\n"); at != std::string::npos;) {
    const std::size_t next = head.find("\r\n", at + 2);
    const std::string line = head.substr(at + 2, next == std::string::npos ? next : next - at - 2);
    at = next;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
  }
  if (head_only || r.status == 204 || r.status == 304 || r.status / 100 == 1) return r;
  if (auto it = r.headers.find("content-length"); it != r.headers.end()) {
    const auto length = static_cast<std::size_t>(std::stoull(it->second));
    while (buffer.size() < length)
      if (!fill()) return std::nullopt;
    r.body = buffer.substr(0, length);
    buffer.erase(0, length);
    return r;
  }
  if (auto it = r.headers.find("transfer-encoding"); it != r.headers.end()) {
    for (;;) {
      std::size_t eol;
      while ((eol = buffer.find("\r\n")) == std::string::npos)
        if (!fill()) return std::nullopt;
      const std::size_t size = std::stoul(buffer.substr(0, eol), nullptr, 16);
      while (buffer.size() < eol + 2 + size + 2)
        if (!fill()) return std::nullopt;
      r.body += buffer.substr(eol + 2, size);
      buffer.erase(0, eol + 2 + size + 2);
      if (size == 0) return r;
    }
  }
  while (fill()) {
  }
  if (!closed) return std::nullopt;
  r.body = std::move(buffer);
  buffer.clear();
  return r;
}

// A request's text: `headers` are extra lines ("Name: value\r\n" each).
inline std::string request_text(const std::string& method, const std::string& target,
                                const std::string& body = "",
                                const std::string& content_type = "application/json",
                                const std::string& headers = "") {
  std::string text = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers;
  if (!body.empty() || method == "POST")
    text += "Content-Type: " + content_type + "\r\nContent-Length: " + std::to_string(body.size()) +
            "\r\n";
  return text + "\r\n" + body;
}

// One request on a fresh connection, which is then closed.
inline std::optional<HttpReply> exchange(int port, const std::string& request,
                                         int timeout_ms = 10000) {
  const int fd = connect_loopback(port);
  if (fd < 0) return std::nullopt;
  std::optional<HttpReply> reply;
  std::string buffer;
  if (send_all(fd, request, timeout_ms)) reply = read_reply(fd, buffer, timeout_ms);
  ::close(fd);
  return reply;
}

}  // namespace ftplan::test
