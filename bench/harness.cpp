#include "harness.hpp"

#include <algorithm>
#include <cmath>

namespace ftplan::bench {

namespace {

class Event {
 public:
  Event() { FTPLAN_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

double elapsed_s(const Event& start, const Event& stop) {
  float ms = 0.0f;
  FTPLAN_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) * 1e-3;
}

// A captured sequence of launches, replayed as one graph.
class Graph {
 public:
  ~Graph() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  // Captures launches of sets 0, 1, ... (count of them); false if the stream cannot be captured.
  bool capture(Context& ctx, Benchmark& b, int count, int sets) {
    if (cudaStreamBeginCapture(ctx.stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    try {
      for (int i = 0; i < count; ++i)
        b.launch(ctx, i % sets);
    } catch (const CudaError&) {
      cudaGraph_t partial = nullptr;
      cudaStreamEndCapture(ctx.stream, &partial);
      if (partial) cudaGraphDestroy(partial);
      cudaGetLastError();
      return false;
    }
    if (cudaStreamEndCapture(ctx.stream, &graph_) != cudaSuccess ||
        cudaGraphInstantiate(&exec_, graph_, 0) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return true;
  }
  void replay(cudaStream_t stream) const { FTPLAN_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

int input_sets_for(std::int64_t set_bytes, std::int64_t l2_bytes) {
  if (set_bytes <= 0) return 1;
  const std::int64_t others = 3 * l2_bytes;
  const std::int64_t sets = 1 + (others + set_bytes - 1) / set_bytes;
  if (set_bytes >= others) return 1;
  return static_cast<int>(std::min<std::int64_t>(sets, 64));
}

TimingStats time_benchmark(Context& ctx, Benchmark& b, int sets, const TimingPlan& plan) {
  int set = 0;
  for (int i = 0; i < plan.warmup; ++i) {
    b.launch(ctx, set);
    set = (set + 1) % sets;
  }

  // Size the repeats from a probe of back-to-back launches (host launch gaps included, so the
  // estimate errs long and a repeat may fall somewhat short of min_repeat_s: harmless).
  const int probe = std::max(3, sets);
  Event probe_start, probe_stop;
  FTPLAN_CUDA_CHECK(cudaEventRecord(probe_start.get(), ctx.stream));
  for (int i = 0; i < probe; ++i)
    b.launch(ctx, i % sets);
  FTPLAN_CUDA_CHECK(cudaEventRecord(probe_stop.get(), ctx.stream));
  FTPLAN_CUDA_CHECK(cudaEventSynchronize(probe_stop.get()));
  const double one_launch_s = std::max(elapsed_s(probe_start, probe_stop) / probe, 1e-7);
  const int wanted = static_cast<int>(std::ceil(plan.min_repeat_s / one_launch_s));
  const int rounds = std::clamp((wanted + sets - 1) / sets, 1, std::max(1, 2048 / sets));
  const int per_repeat = rounds * sets;

  Graph graph;
  const bool graphed = graph.capture(ctx, b, per_repeat, sets);
  auto run_repeat = [&] {
    if (graphed) {
      graph.replay(ctx.stream);
    } else {
      for (int i = 0; i < per_repeat; ++i)
        b.launch(ctx, i % sets);
    }
  };
  run_repeat();  // untimed: the first replay uploads the graph

  // Events between consecutive repeats, all enqueued before waiting: the stream never idles.
  std::vector<Event> events;
  events.reserve(static_cast<std::size_t>(plan.repeats) + 1);
  for (int r = 0; r <= plan.repeats; ++r)
    events.emplace_back();
  FTPLAN_CUDA_CHECK(cudaEventRecord(events[0].get(), ctx.stream));
  for (std::size_t r = 1; r < events.size(); ++r) {
    run_repeat();
    FTPLAN_CUDA_CHECK(cudaEventRecord(events[r].get(), ctx.stream));
  }
  FTPLAN_CUDA_CHECK(cudaEventSynchronize(events.back().get()));

  std::vector<double> per_launch;
  for (std::size_t r = 1; r < events.size(); ++r)
    per_launch.push_back(elapsed_s(events[r - 1], events[r]) / per_repeat);
  TimingStats stats = summarize(per_launch);
  stats.launches_per_repeat = per_repeat;
  stats.warmup_launches = plan.warmup + probe + per_repeat;
  stats.input_sets = sets;
  stats.cuda_graph = graphed;
  return stats;
}

std::uint64_t seed_for(std::string_view id, std::uint64_t salt) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, 64 bit
  for (char c : id) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h ^ (salt * 0x9e3779b97f4a7c15ull);
}

CheckResult to_check(const ErrorTally& tally) {
  CheckResult c;
  c.passed = tally.passed();
  c.metric = tally.metric;
  c.max_error = tally.max_error;
  c.bound = tally.bound;
  c.samples = tally.samples;
  return c;
}

}  // namespace ftplan::bench
