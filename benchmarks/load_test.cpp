// A bounded load test of the HTTP API on loopback: starts `serve` in-process on a free port,
// sends a fixed number of POST /api/fit requests from a few keep-alive clients, and reports
// requests per second, p50/p99 latency and errors. It stops by itself.
//   ftplan-loadtest [--requests N] [--clients C] [--server-threads T]
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.hpp"
#include "server/server.hpp"

int main(int argc, char** argv) {
  int requests = 20000, clients = 4, server_threads = 4;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--requests")
      requests = value;
    else if (flag == "--clients")
      clients = value;
    else if (flag == "--server-threads")
      server_threads = value;
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (requests < 1 || clients < 1 || server_threads < 1) {
    std::fprintf(stderr, "--requests, --clients and --server-threads must be >= 1\n");
    return 2;
  }
  ftplan::server::ServerOptions o;
  o.port = 0;
  o.threads = server_threads;
  std::promise<int> bound;
  const ftplan::server::Commands commands = ftplan::cli::server_commands();
  std::thread([&] {
    ftplan::server::serve(o, commands, [&](int port) { bound.set_value(port); });
  }).detach();
  const int port = bound.get_future().get();

  const std::string body =
      R"({"model": "llama-3.1-8b", "method": "lora", "gpu": "rtx-pro-6000", "micro_batch": 1})";
  std::atomic<int> next{0}, errors{0};
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(clients));
  auto worker = [&](std::size_t id) {
    httplib::Client c("127.0.0.1", port);
    c.set_keep_alive(true);
    c.set_tcp_nodelay(true);
    while (next.fetch_add(1) < requests) {
      const auto t0 = std::chrono::steady_clock::now();
      auto res = c.Post("/api/fit", body, "application/json");
      const auto t1 = std::chrono::steady_clock::now();
      if (!res || res->status != 200) ++errors;
      latencies[id].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
  };
  // Warm-up (not counted): connections, first allocations.
  {
    httplib::Client c("127.0.0.1", port);
    for (int i = 0; i < 50; ++i)
      c.Post("/api/fit", body, "application/json");
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i)
    threads.emplace_back(worker, static_cast<std::size_t>(i));
  for (auto& t : threads)
    t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  for (const auto& l : latencies)
    all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    return all[static_cast<std::size_t>(p * static_cast<double>(all.size() - 1))];
  };
  std::printf(
      "POST /api/fit on loopback: %d requests, %d clients (keep-alive), %d server threads, %u "
      "cores\n",
      requests, clients, server_threads, std::thread::hardware_concurrency());
  std::printf("requests/s %.0f   p50 %.2f ms   p99 %.2f ms   max %.2f ms   errors %d\n",
              static_cast<double>(all.size()) / seconds, pct(0.50), pct(0.99), all.back(),
              errors.load());
  return errors.load() == 0 ? 0 : 1;
}
