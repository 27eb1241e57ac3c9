// The ftplan binary's side of the network: `serve` and the Hub's downloads run in ftplan-net, the
// same program linked with the HTTP server and the TLS client, installed beside it. A CLI call that
// needs neither never loads those libraries (their loading costs more than the call itself).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/http_get.hpp"
#include "core/error.hpp"
#include "server/server.hpp"

extern char** environ;

namespace ftplan {

namespace {

namespace fs = std::filesystem;

// ftplan-net beside this binary (the build folder), or in lib/ftplan/ of its prefix (installed);
// FTPLAN_NET names another.
std::string net_binary() {
  if (const char* given = std::getenv("FTPLAN_NET"); given && *given) return given;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> tried;
  if (!ec) {
    tried.push_back(self.parent_path() / "ftplan-net");
    tried.push_back(self.parent_path().parent_path() / "lib" / "ftplan" / "ftplan-net");
  }
  for (const auto& p : tried)
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  std::string where;
  for (const auto& p : tried)
    where += (where.empty() ? "" : " or ") + p.string();
  throw UserError(ErrorCode::kUnsupported,
                  fmt::format("the network half of ftplan (ftplan-net) was not found{}{}; it is "
                              "built and installed with ftplan, or set FTPLAN_NET to its path",
                              where.empty() ? "" : " at ", where),
                  "ftplan-net");
}

// This process's arguments, as the kernel holds them.
std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string arg;
  while (std::getline(in, arg, '\0'))
    args.push_back(arg);
  return args;
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the child went away: its exit status says why
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string read_all(int fd) {
  std::string out;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

namespace cli {

// ftplan-net __http-get ORIGIN PATH MAX_BYTES, the headers on its standard input (so that a token
// never shows in a process list); it answers "STATUS\nLOCATION\n" and the body.
HttpGetReply http_get(const HttpGetRequest& request) {
  const std::string binary = net_binary();
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(err_pipe, O_CLOEXEC) != 0)
    throw NetworkError(fmt::format("cannot start {}: {}", binary, std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  const std::string max_bytes = std::to_string(request.max_bytes);
  std::vector<std::string> args = {binary, "__http-get", request.origin, request.path, max_bytes};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (spawned != 0) {
    ::close(in_pipe[1]);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    throw NetworkError(fmt::format("cannot start {}: {}", binary, std::strerror(spawned)));
  }
  std::string headers;
  for (const auto& [name, value] : request.headers)
    headers += name + ": " + value + "\n";
  write_all(in_pipe[1], headers);
  ::close(in_pipe[1]);
  std::string out = read_all(out_pipe[0]);
  const std::string err = read_all(err_pipe[0]);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw NetworkError(err.empty() ? fmt::format("{} failed", binary) : err);
  HttpGetReply reply;
  const auto first = out.find('\n');
  const auto second = first == std::string::npos ? first : out.find('\n', first + 1);
  if (second == std::string::npos ||
      std::from_chars(out.data(), out.data() + first, reply.status).ec != std::errc())
    throw NetworkError(fmt::format("{} answered in an unknown form", binary));
  reply.location = out.substr(first + 1, second - first - 1);
  reply.body = out.substr(second + 1);
  return reply;
}

}  // namespace cli

namespace server {

// `ftplan serve ...` becomes `ftplan-net serve ...`: the same command, in the program that has the
// server. Its options were checked here already; ftplan-net reads them again.
void serve(const ServerOptions&, const Commands&, const std::function<void(int port)>&) {
  const std::string binary = net_binary();
  std::vector<std::string> args = own_arguments();
  if (args.empty())
    throw UserError(ErrorCode::kUnsupported, "cannot read this process's arguments", "serve");
  args[0] = binary;
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  ::execv(binary.c_str(), argv.data());
  throw UserError(ErrorCode::kUnsupported,
                  fmt::format("cannot start {}: {}", binary, std::strerror(errno)), "serve");
}

}  // namespace server

}  // namespace ftplan
