#include "server/server.hpp"

#include <fmt/format.h>
#include <microhttpd.h>
#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "core/error.hpp"

namespace ftplan::server {

namespace {

using Clock = std::chrono::steady_clock;

// One request as it arrives: its head, then its body in pieces.
struct Exchange {
  Clock::time_point started = Clock::now();  // the request line arrived
  Clock::time_point body_started;
  bool head_done = false;
  bool answered = false;  // a response is queued; what still arrives is dropped
  // A body over the limit, seen while it arrives (chunked): the rest is read and dropped, up to a
  // bound, and this answered once it is complete (a response cannot be queued mid-body).
  std::optional<Response> refusal;
  std::size_t dropped = 0;
  Request request;
};

// One open connection, for the head deadline: MHD closes a connection that is silent for the
// idle timeout, but not one that sends a byte now and then; the watcher below shuts the socket of
// a connection whose head has not arrived within the read timeout.
struct Connection {
  int fd = -1;
  Clock::time_point waiting_since = Clock::now();  // for a head (the first, or the next one)
  bool in_request = false;                         // its head arrived; the body bounds itself
};

struct Context {
  const Commands* commands = nullptr;
  ServerOptions options;
  std::mutex mutex;  // guards `open`
  std::set<Connection*> open;
};

void on_connection(void* cls, MHD_Connection* connection, void** socket_context,
                   MHD_ConnectionNotificationCode code) {
  auto& ctx = *static_cast<Context*>(cls);
  const std::lock_guard lock(ctx.mutex);
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    auto* c = new Connection;
    const MHD_ConnectionInfo* info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    c->fd = info ? info->connect_fd : -1;
    ctx.open.insert(c);
    *socket_context = c;
  } else {  // closed: MHD closes the socket after this returns
    auto* c = static_cast<Connection*>(*socket_context);
    ctx.open.erase(c);
    delete c;
    *socket_context = nullptr;
  }
}

Connection* connection_of(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info ? static_cast<Connection*>(info->socket_context) : nullptr;
}

void set_in_request(Context& ctx, MHD_Connection* connection, bool in_request) {
  const std::lock_guard lock(ctx.mutex);
  if (Connection* c = connection_of(connection)) {
    c->in_request = in_request;
    c->waiting_since = Clock::now();
  }
}

void* on_request_line(void*, const char*, MHD_Connection*) {
  return new Exchange;
}

void on_completed(void*, MHD_Connection*, void** state, MHD_RequestTerminationCode) {
  delete static_cast<Exchange*>(*state);
  *state = nullptr;
}

MHD_Result queue(MHD_Connection* connection, const Response& r) {
  MHD_Response* response = MHD_create_response_from_buffer(
      r.body.size(), const_cast<char*>(r.body.data()), MHD_RESPMEM_MUST_COPY);
  if (!response) return MHD_NO;
  MHD_add_response_header(response, "Content-Type", r.content_type.c_str());
  MHD_add_response_header(response, "Cache-Control", "no-store");
  MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
  const MHD_Result ok =
      MHD_queue_response(connection, static_cast<unsigned int>(r.status), response);
  MHD_destroy_response(response);
  return ok;
}

std::string header(MHD_Connection* connection, const char* name) {
  const char* v = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
  return v ? v : "";
}

MHD_Result add_query(void* cls, MHD_ValueKind, const char* key, const char* value) {
  (*static_cast<std::map<std::string, std::string>*>(cls))[key ? key : ""] = value ? value : "";
  return MHD_YES;
}

// The head arrived: the request without its body, checked before any of the body is read.
std::optional<Response> read_head(MHD_Connection* connection, Exchange& x, const char* url,
                                  const char* method, const Context& ctx) {
  const ServerOptions& o = ctx.options;
  if (Clock::now() - x.started > std::chrono::seconds(o.read_timeout_seconds))
    return error_response(408, "request_timeout",
                          fmt::format("the request's headers took longer than {} s to arrive",
                                      o.read_timeout_seconds));
  const int headers = MHD_get_connection_values(connection, MHD_HEADER_KIND, nullptr, nullptr);
  if (headers > o.max_headers)
    return error_response(431, "too_many_headers",
                          fmt::format("the request has {} header lines; at most {} are read",
                                      headers, o.max_headers));
  Request& r = x.request;
  r.method = method;
  r.path = url;
  MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, add_query, &r.query);
  r.content_type = header(connection, MHD_HTTP_HEADER_CONTENT_TYPE);
  r.host = header(connection, MHD_HTTP_HEADER_HOST);
  r.origin = header(connection, "Origin");
  r.content_encoding = header(connection, MHD_HTTP_HEADER_CONTENT_ENCODING);
  const std::string length = header(connection, MHD_HTTP_HEADER_CONTENT_LENGTH);
  std::size_t n = 0;
  if (!length.empty() &&
      std::from_chars(length.data(), length.data() + length.size(), n).ec == std::errc())
    r.content_length = n;
  return check_head(r, o.limits);
}

MHD_Result on_request(void* cls, MHD_Connection* connection, const char* url, const char* method,
                      const char*, const char* upload, std::size_t* upload_size, void** state) {
  auto& ctx = *static_cast<Context*>(cls);
  auto* x = static_cast<Exchange*>(*state);
  if (!x) return MHD_NO;  // not from on_request_line: cannot happen; close
  if (x->answered) {      // the rest of a refused body: dropped
    *upload_size = 0;
    return MHD_YES;
  }
  if (!x->head_done) {
    x->head_done = true;
    x->body_started = Clock::now();
    set_in_request(ctx, connection, true);
    if (auto refused = read_head(connection, *x, url, method, ctx)) {
      x->answered = true;
      return queue(connection, *refused);
    }
    return MHD_YES;  // the body (if any) follows
  }
  if (*upload_size > 0) {
    const ServerOptions& o = ctx.options;
    Request& r = x->request;
    if (Clock::now() - x->body_started > std::chrono::seconds(o.read_timeout_seconds))
      return MHD_NO;  // a body slower than the bound: the connection is closed
    if (x->refusal) {
      x->dropped += *upload_size;
      *upload_size = 0;
      // At most the limit again, or 16 MiB, is read only to be dropped; then the connection ends.
      return x->dropped > std::max<std::size_t>(o.limits.max_body_bytes, 16 << 20) ? MHD_NO
                                                                                   : MHD_YES;
    }
    if (r.body.size() + *upload_size > o.limits.max_body_bytes) {
      x->refusal = error_response(
          413, "payload_too_large",
          fmt::format("the request body exceeds {} bytes", o.limits.max_body_bytes), "body");
      r.body.clear();
      r.body.shrink_to_fit();
      x->dropped = *upload_size;
      *upload_size = 0;
      return MHD_YES;
    }
    r.body.append(upload, *upload_size);
    *upload_size = 0;
    return MHD_YES;
  }
  if (x->refusal) {
    x->answered = true;
    return queue(connection, *x->refusal);
  }
  x->answered = true;
  Response out;
  try {
    out = handle(x->request, *ctx.commands, ctx.options.limits);
  } catch (const std::exception&) {
    // A fault of the server, not of the request: nothing of its internals goes out.
    out = error_response(500, "internal", "internal error: the request was not served");
  }
  return queue(connection, out);
}

// A listening socket on host:port, or a UserError saying why there is none.
int listen_on(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc =
          getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      rc != 0)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("--host '{}': not an address or name this machine can listen on "
                                "({})",
                                host, gai_strerror(rc)),
                    "host");
  int error = 0;
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      error = errno;
      continue;
    }
    // SO_REUSEADDR lets a restarted server take its port out of TIME_WAIT; no SO_REUSEPORT, so a
    // port another process listens on is refused rather than shared.
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 1024) != 0) {
      error = errno;
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd >= 0) return fd;
  const std::string where = fmt::format("{}:{}", host, port);
  if (error == EADDRINUSE)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("cannot listen on {}: the port is in use (another server, or "
                                "another ftplan serve); pick another with --port, or --port 0 "
                                "for a free one",
                                where),
                    "port");
  if (error == EADDRNOTAVAIL)
    throw UserError(
        ErrorCode::kInvalidValue,
        fmt::format("cannot listen on {}: {} is not an address of this machine", where, host),
        "host");
  if (error == EACCES)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("cannot listen on {}: not permitted (ports below 1024 need "
                                "privileges); pick a port from 1024 with --port",
                                where),
                    "port");
  throw UserError(ErrorCode::kInvalidValue,
                  fmt::format("cannot listen on {}: {}", where, std::strerror(error)), "port");
}

int bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

// The host names served: loopback, the address listened on (unless it is every address), this
// machine's name; IP literals are accepted by the check itself.
std::vector<std::string> served_hosts(const ServerOptions& o) {
  std::vector<std::string> hosts = {"localhost", "127.0.0.1", "::1"};
  const std::string host = host_name(
      o.host.find(':') != std::string::npos && o.host[0] != '[' ? "[" + o.host + "]" : o.host);
  if (!host.empty() && host != "0.0.0.0" && host != "::") hosts.push_back(host);
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0 && name[0]) hosts.push_back(host_name(name));
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  return hosts;
}

class MhdServer final : public RunningServer {
 public:
  MhdServer(const ServerOptions& options, const Commands& commands) {
    ctx_.commands = &commands;
    ctx_.options = options;
    ctx_.options.limits.hosts = served_hosts(options);
    for (const auto& o : options.allow_origins)
      ctx_.options.limits.origins.push_back(o);
    fd_ = listen_on(options.host, options.port);
    port_ = bound_port(fd_);
    // Never more connections than the process may open files, less a margin for its own.
    rlimit files{};
    unsigned connections = static_cast<unsigned>(std::max(1, options.max_connections));
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY)
      connections = static_cast<unsigned>(std::min<rlim_t>(
          connections, files.rlim_cur > 64 ? files.rlim_cur - 64 : files.rlim_cur / 2 + 1));
    // poll(), not epoll: under epoll, libmicrohttpd 0.9.75 left some keep-alive connections
    // unanswered when their next request arrived right after the previous reply (the load test's
    // second round of 1,000 clients: 972 and 973 answered in 2 runs of 9; with poll, 19 of 19
    // runs answered every client).
    daemon_ = MHD_start_daemon(
        MHD_USE_POLL_INTERNAL_THREAD, 0, nullptr, nullptr, on_request, &ctx_,
        MHD_OPTION_LISTEN_SOCKET, fd_, MHD_OPTION_THREAD_POOL_SIZE,
        static_cast<unsigned>(options.threads), MHD_OPTION_CONNECTION_TIMEOUT,
        static_cast<unsigned>(options.idle_timeout_seconds), MHD_OPTION_CONNECTION_LIMIT,
        connections, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        static_cast<std::size_t>(options.max_header_bytes + (16 << 10)),
        MHD_OPTION_STRICT_FOR_CLIENT, 1, MHD_OPTION_URI_LOG_CALLBACK, on_request_line, nullptr,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, &ctx_, MHD_OPTION_NOTIFY_CONNECTION,
        on_connection, &ctx_, MHD_OPTION_END);
    if (!daemon_) {
      ::close(fd_);
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("cannot start serving on {}:{}", options.host, port_), "port");
    }
    watcher_ = std::thread([this] { watch(); });
  }
  ~MhdServer() override {
    {
      const std::lock_guard lock(stop_mutex_);
      stopping_ = true;
    }
    stop_.notify_all();
    watcher_.join();
    // End the open connections the ordinary way, in MHD's own threads, before it stops:
    // libmicrohttpd 0.9.75 has crashed stopping with a connection mid-request (a pipelined rest
    // of a refused body). At most two seconds; whatever is left, MHD_stop_daemon closes.
    // (Not quiesced first: its quiesce under epoll has aborted the process, failing to remove
    // the listening socket from a worker's epoll set.)
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    for (;;) {
      {
        const std::lock_guard lock(ctx_.mutex);
        if (ctx_.open.empty()) break;
        for (Connection* c : ctx_.open)
          if (c->fd >= 0) {
            ::shutdown(c->fd, SHUT_RDWR);
            c->fd = -1;
          }
      }
      if (Clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    MHD_stop_daemon(daemon_);
    ::close(fd_);
  }
  int port() const override { return port_; }

 private:
  // Four times a second: a connection waiting longer than the read timeout for a head is shut
  // (MHD then sees it closed and cleans it up).
  void watch() {
    const auto bound = std::chrono::seconds(ctx_.options.read_timeout_seconds);
    std::unique_lock stop_lock(stop_mutex_);
    while (!stop_.wait_for(stop_lock, std::chrono::milliseconds(250), [&] { return stopping_; })) {
      const std::lock_guard lock(ctx_.mutex);
      const auto now = Clock::now();
      for (Connection* c : ctx_.open)
        if (!c->in_request && c->fd >= 0 && now - c->waiting_since > bound) {
          ::shutdown(c->fd, SHUT_RDWR);
          c->fd = -1;  // once
        }
    }
  }

  Context ctx_;
  std::mutex stop_mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread watcher_;  // started once the daemon runs
  int fd_ = -1;
  int port_ = 0;
  MHD_Daemon* daemon_ = nullptr;
};

}  // namespace

std::unique_ptr<RunningServer> RunningServer::start(const ServerOptions& options,
                                                    const Commands& commands) {
  if (commands.prepare) commands.prepare();
  return std::make_unique<MhdServer>(options, commands);
}

void serve(const ServerOptions& options, const Commands& commands,
           const std::function<void(int)>& on_listening) {
  const auto server = RunningServer::start(options, commands);
  if (on_listening) on_listening(server->port());
  for (;;)
    std::this_thread::sleep_for(std::chrono::hours(24));
}

}  // namespace ftplan::server
