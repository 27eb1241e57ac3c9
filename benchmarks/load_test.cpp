// A bounded load test of the HTTP API on loopback: starts the server in-process on a free port and
// measures, then stops by itself:
//   1. POST /api/fit from a few keep-alive clients: requests/s, p50 and p99 latency;
//   2. many keep-alive clients at once, each with a request in flight: the time until all are
//      answered, twice on the same connections;
//   3. a fresh client's latency while slowloris sockets hold half-sent heads open.
//   ftplan-loadtest [--requests N] [--clients C] [--server-threads T] [--idle-clients K]
//                   [--slowloris S]
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.hpp"
#include "http_client.hpp"
#include "server/server.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

const std::string kFit =
    R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "rtx-pro-6000", "micro_batch": 1})";

}  // namespace

int main(int argc, char** argv) {
  int requests = 20000, clients = 8, server_threads = 4, idle_clients = 1000, slowloris = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--requests")
      requests = value;
    else if (flag == "--clients")
      clients = value;
    else if (flag == "--server-threads")
      server_threads = value;
    else if (flag == "--idle-clients")
      idle_clients = value;
    else if (flag == "--slowloris")
      slowloris = value;
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (requests < 1 || clients < 1 || server_threads < 1 || idle_clients < 0 || slowloris < 0) {
    std::fprintf(stderr, "--requests, --clients and --server-threads must be >= 1\n");
    return 2;
  }
  // Both ends of every connection live in this process.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  ftplan::server::ServerOptions o;
  o.port = 0;
  o.threads = server_threads;
  o.idle_timeout_seconds = 30;
  o.read_timeout_seconds = 30;
  const ftplan::server::Commands commands = ftplan::cli::server_commands();
  const auto server = ftplan::server::RunningServer::start(o, commands);
  const int port = server->port();
  const std::string fit = ftplan::test::request_text("POST", "/api/fit", kFit);
  const std::string health = ftplan::test::request_text("GET", "/healthz");
  int errors = 0;

  // 1. keep-alive clients, as fast as they can.
  {
    std::atomic<int> next{0}, failed{0};
    std::vector<std::vector<double>> latencies(static_cast<std::size_t>(clients));
    auto worker = [&](std::size_t id) {
      int fd = ftplan::test::connect_loopback(port);
      std::string buffer;
      while (next.fetch_add(1) < requests) {
        const auto t0 = Clock::now();
        const bool sent = ftplan::test::send_all(fd, fit);
        const auto r = sent ? ftplan::test::read_reply(fd, buffer) : std::nullopt;
        latencies[id].push_back(ms_since(t0));
        if (!r || r->status != 200) ++failed;
      }
      ::close(fd);
    };
    for (int i = 0; i < 50; ++i)  // warm-up (not counted)
      ftplan::test::exchange(port, fit);
    const auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int i = 0; i < clients; ++i)
      threads.emplace_back(worker, static_cast<std::size_t>(i));
    for (auto& t : threads)
      t.join();
    const double seconds = ms_since(start) / 1000;
    std::vector<double> all;
    for (const auto& l : latencies)
      all.insert(all.end(), l.begin(), l.end());
    std::printf(
        "1. POST /api/fit: %d requests, %d keep-alive clients, %d server threads, %u cores\n",
        requests, clients, server_threads, std::thread::hardware_concurrency());
    std::printf("   requests/s %.0f   p50 %.2f ms   p99 %.2f ms   max %.2f ms   errors %d\n",
                static_cast<double>(all.size()) / seconds, percentile(all, 0.5),
                percentile(all, 0.99), percentile(all, 1.0), failed.load());
    errors += failed.load();
  }

  // 2. many keep-alive clients at once.
  if (idle_clients > 0) {
    std::vector<int> fds;
    for (int i = 0; i < idle_clients; ++i) {
      const int fd = ftplan::test::connect_loopback(port);
      if (fd < 0) break;
      fds.push_back(fd);
    }
    for (int round = 1; round <= 2; ++round) {
      const auto t0 = Clock::now();
      for (int fd : fds)
        ftplan::test::send_all(fd, fit);
      int answered = 0;
      std::string buffer;
      for (int fd : fds) {
        buffer.clear();
        const auto r = ftplan::test::read_reply(fd, buffer, 10000);
        answered += r && r->status == 200;
      }
      std::printf("2. %zu keep-alive clients (of %d), round %d: %d answered in %.0f ms\n",
                  fds.size(), idle_clients, round, answered, ms_since(t0));
      errors += idle_clients - answered;
    }
    for (int fd : fds)
      ::close(fd);
  }

  // 3. a fresh client beside slowloris sockets (half a head, one more byte each second).
  if (slowloris >= 0) {
    std::vector<int> slow;
    for (int i = 0; i < slowloris; ++i) {
      const int fd = ftplan::test::connect_loopback(port);
      if (fd < 0) break;
      ftplan::test::send_all(fd, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      slow.push_back(fd);
    }
    std::atomic<bool> done{false};
    std::thread drip([&] {
      while (!done) {
        for (int fd : slow)
          ftplan::test::send_all(fd, "a", 100);
        for (int i = 0; i < 10 && !done; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
    std::vector<double> healthz, fits;
    int failed = 0;
    for (int i = 0; i < 200; ++i) {
      auto t0 = Clock::now();
      const auto h = ftplan::test::exchange(port, health, 5000);
      healthz.push_back(ms_since(t0));
      t0 = Clock::now();
      const auto f = ftplan::test::exchange(port, fit, 5000);
      fits.push_back(ms_since(t0));
      failed += !h || h->status != 200;
      failed += !f || f->status != 200;
    }
    done = true;
    drip.join();
    std::printf("3. fresh clients (connect, request, reply) beside %zu slowloris sockets:\n",
                slow.size());
    std::printf("   GET /healthz p50 %.2f ms   p99 %.2f ms   max %.2f ms\n",
                percentile(healthz, 0.5), percentile(healthz, 0.99), percentile(healthz, 1.0));
    std::printf("   POST /api/fit p50 %.2f ms   p99 %.2f ms   max %.2f ms   errors %d\n",
                percentile(fits, 0.5), percentile(fits, 0.99), percentile(fits, 1.0), failed);
    errors += failed;
    for (int fd : slow)
      ::close(fd);
  }
  return errors == 0 ? 0 : 1;
}
