// ftplan-bench: measures, on the card it runs on, GEMM rates for the projection shapes of
// training steps (cuBLASLt, BF16 and FP8), memory bandwidth, and the memory-bound parts of a
// step (LoRA adapter pair, NF4 dequantization, RMSNorm, fused AdamW). Every kernel is checked
// against a CPU reference before it is timed. Results: JSON, schema in bench/README.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "benchmarks.hpp"
#include "device_info.hpp"

namespace ftplan::bench {

namespace {

constexpr int kExitFailed = 1;  // a check failed or a benchmark could not run
constexpr int kExitUsage = 2;   // bad command line
constexpr int kExitNoGpu = 3;   // no CUDA device

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;  // cuBLASLt: 32 MiB for Hopper

const char* const kUsage =
    R"(ftplan-bench: GEMM rates, memory bandwidth and the memory-bound parts of a training step,
measured on this machine's GPU and checked against CPU references.

Usage: ftplan-bench [options]
  --quick          fewer warm-up launches, repeats and check samples; shorter repeats
  --out FILE       write the results JSON to FILE (default: standard output)
  --filter REGEX   run only benchmarks whose id matches REGEX (ECMAScript, partial match)
  --repeats N      timed repeats per benchmark (default 30, --quick 10)
  --warmup N       untimed launches before timing (default 10, --quick 3)
  --device N       CUDA device index (default 0)
  --time-budget-s S
                   start no benchmark after S seconds (the rest are reported as skipped)
  --list           print the benchmark ids and exit (needs no GPU)
  --version        print the version and exit
  --help           this text

Progress goes to standard error; with --out the file is rewritten after every benchmark, so a
run cut short still leaves what it measured. Exit codes: 0 all ran or were skipped, 1 a check
failed or a benchmark could not run, 2 bad command line, 3 no CUDA device.
)";

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  bool quick = false;
  bool list = false;
  bool help = false;
  bool version = false;
  std::string out;
  std::string filter;
  std::optional<int> repeats;
  std::optional<int> warmup;
  std::optional<int> time_budget_s;
  int device = 0;
  std::string command_line;
};

int parse_count(const std::string& option, const std::string& text, int minimum) {
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || value < minimum)
    throw UsageError(option + ": expected an integer of at least " + std::to_string(minimum) +
                     ", got '" + text + "'");
  return value;
}

Options parse(int argc, char** argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  o.command_line = "ftplan-bench";
  for (const std::string& a : args)
    o.command_line += " " + (a.find(' ') == std::string::npos ? a : "'" + a + "'");
  const std::vector<std::string> known = {"--quick",   "--out",     "--filter",
                                          "--repeats", "--warmup",  "--device",
                                          "--list",    "--version", "--help"};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw UsageError(a + ": expected a value after it");
      return args[++i];
    };
    if (a == "--quick") {
      o.quick = true;
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--version") {
      o.version = true;
    } else if (a == "--out") {
      o.out = value();
    } else if (a == "--filter") {
      o.filter = value();
    } else if (a == "--repeats") {
      o.repeats = parse_count(a, value(), 1);
    } else if (a == "--warmup") {
      o.warmup = parse_count(a, value(), 0);
    } else if (a == "--device") {
      o.device = parse_count(a, value(), 0);
    } else if (a == "--time-budget-s") {
      o.time_budget_s = parse_count(a, value(), 1);
    } else {
      std::string closest;
      for (const std::string& k : known)
        if (!a.empty() && k.find(a.substr(0, std::min<std::size_t>(a.size(), 4))) == 0) closest = k;
      throw UsageError("unknown option '" + a + "'" +
                       (closest.empty() ? "" : " (did you mean " + closest + "?)"));
    }
  }
  return o;
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string progress_line(std::size_t at, std::size_t total, const BenchResult& r) {
  std::ostringstream line;
  line << "[" << at << "/" << total << "] " << r.id << "  ";
  if (r.status == Status::kOk) {
    line << format("%.4g ms", r.timing.median_s * 1e3);
    if (r.flops > 0) line << format("  %.1f TFLOPS", r.achieved_TFLOPS());
    line << format("  %.0f GB/s", r.achieved_GBps());
    line << "  check " << format("%.2g", r.check.max_error)
         << " <= " << format("%.2g", r.check.bound);
  } else {
    line << status_name(r.status) << ": " << r.reason;
  }
  return line.str();
}

// Writes `text` to `path` through a temporary file, so the file is always complete.
bool write_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary);
    file << text;
    if (!file) {
      std::cerr << "ftplan-bench: cannot write " << temporary << "\n";
      return false;
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::cerr << "ftplan-bench: cannot rename " << temporary << " to " << path << "\n";
    return false;
  }
  return true;
}

// The input sets to use within `capacity` bytes of arena: as many as input_sets_for wants,
// fewer if they do not fit, 0 if not even one does.
int sets_within(const Benchmark& b, std::int64_t l2_bytes, std::int64_t capacity) {
  int sets = input_sets_for(b.set_bytes(), l2_bytes);
  while (sets > 0 && sets * b.set_bytes() + b.shared_bytes() > capacity)
    --sets;
  return sets;
}

std::string summary(const std::vector<BenchResult>& results) {
  struct ClassSummary {
    int ok = 0, failed = 0, skipped = 0;
    double best_TFLOPS = 0.0, best_GBps = 0.0;
  };
  std::map<std::string, ClassSummary> by_class;
  for (const BenchResult& r : results) {
    ClassSummary& c = by_class[r.bench_class + (r.bench_class == "gemm" ? " " + r.dtype : "")];
    if (r.status == Status::kOk) {
      ++c.ok;
      c.best_TFLOPS = std::max(c.best_TFLOPS, r.achieved_TFLOPS());
      c.best_GBps = std::max(c.best_GBps, r.achieved_GBps());
    } else if (r.status == Status::kFailed) {
      ++c.failed;
    } else {
      ++c.skipped;
    }
  }
  std::ostringstream out;
  out << "summary (best rate per class; every figure is in the JSON):\n";
  for (const auto& [name, c] : by_class) {
    out << "  " << name << ": " << c.ok << " ok, " << c.failed << " failed, " << c.skipped
        << " skipped";
    if (c.ok > 0) {
      if (name.rfind("gemm", 0) == 0 || name == "adapter")
        out << format("; best %.1f TFLOPS", c.best_TFLOPS);
      out << format("; best %.0f GB/s", c.best_GBps);
    }
    out << "\n";
  }
  return out.str();
}

int run(const Options& o, BenchmarkList& selected) {
  int devices = 0;
  const cudaError_t found = cudaGetDeviceCount(&devices);
  if (found != cudaSuccess || devices == 0) {
    std::cerr << "ftplan-bench: no CUDA device available ("
              << (found != cudaSuccess ? cudaGetErrorString(found) : "none found")
              << "); ftplan-bench --list shows what would run\n";
    return kExitNoGpu;
  }
  if (o.device >= devices)
    throw UsageError("--device: " + std::to_string(o.device) +
                     " is out of range: " + std::to_string(devices) + " device(s), indices 0-" +
                     std::to_string(devices - 1));
  FTPLAN_CUDA_CHECK(cudaSetDevice(o.device));
  const auto started = std::chrono::steady_clock::now();

  RunReport report;
  report.tool_version = FTPLAN_BENCH_VERSION;
  report.timestamp_utc = utc_timestamp();
  report.device = query_device(o.device);
  TimingPlan plan = o.quick ? TimingPlan{3, 10, 5e-4} : TimingPlan{10, 30, 1e-3};
  if (o.repeats) plan.repeats = *o.repeats;
  if (o.warmup) plan.warmup = *o.warmup;
  report.settings = {o.quick,           plan.warmup, plan.repeats,
                     plan.min_repeat_s, o.filter,    o.command_line};

  Context ctx;
  cudaDeviceProp prop{};
  FTPLAN_CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device));
  ctx.cc_major = prop.major;
  ctx.cc_minor = prop.minor;
  ctx.l2_bytes = prop.l2CacheSize;
  ctx.check_samples = o.quick ? 8 : 24;
  FTPLAN_CUDA_CHECK(cudaStreamCreate(&ctx.stream));
  FTPLAN_CUBLAS_CHECK(cublasLtCreate(&ctx.lt));
  FTPLAN_CUDA_CHECK(cudaMalloc(&ctx.workspace, kWorkspaceBytes));
  ctx.workspace_bytes = kWorkspaceBytes;

  // One arena for the largest benchmark, within 80 % of the free memory.
  std::int64_t need = 0;
  for (const auto& b : selected)
    need = std::max(
        need, input_sets_for(b->set_bytes(), ctx.l2_bytes) * b->set_bytes() + b->shared_bytes());
  std::size_t free_bytes = 0, total_bytes = 0;
  FTPLAN_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const auto capacity = std::min<std::int64_t>(
      need, static_cast<std::int64_t>(static_cast<double>(free_bytes) * 0.8));
  DeviceArena arena(static_cast<std::size_t>(capacity));
  ctx.arena = &arena;

  const DeviceReport& d = report.device;
  std::cerr << "ftplan-bench " << report.tool_version << " on " << d.name << " (compute capability "
            << d.compute_capability << ", " << d.sm_count << " SMs, "
            << format("%.1f GB", static_cast<double>(d.memory_total_bytes) / 1e9) << ", L2 "
            << format("%.0f MiB", static_cast<double>(d.l2_cache_bytes) / 1048576.0) << "), driver "
            << d.driver_version.value_or("(NVML unavailable)") << ", CUDA "
            << d.cuda_runtime_version << "; " << selected.size() << " benchmarks, " << plan.repeats
            << " repeats each\n";

  auto elapsed_s = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  bool context_lost = false;
  std::string lost_after;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    Benchmark& b = *selected[i];
    BenchResult r = b.info();
    r.timing.repeats = 0;
    const int sets = sets_within(b, ctx.l2_bytes, capacity);
    const std::string unsupported = b.unsupported(ctx);
    if (context_lost) {
      r.status = Status::kFailed;
      r.reason = "not run: the CUDA context was lost in " + lost_after;
    } else if (o.time_budget_s && elapsed_s() > *o.time_budget_s) {
      r.status = Status::kSkipped;
      r.reason = "not run: the time budget of " + std::to_string(*o.time_budget_s) + " s was spent";
    } else if (!unsupported.empty()) {
      r.status = Status::kSkipped;
      r.reason = unsupported;
    } else if (sets == 0) {
      r.status = Status::kSkipped;
      r.reason = "needs " +
                 format("%.2f GB", static_cast<double>(b.set_bytes() + b.shared_bytes()) / 1e9) +
                 " of device memory; " + format("%.2f GB", static_cast<double>(capacity) / 1e9) +
                 " available";
    } else {
      try {
        arena.reset();
        b.setup(ctx, sets);
        r.check = b.check(ctx);
        if (!r.check.passed) {
          r.status = Status::kFailed;
          r.reason = "check failed: max error " + format("%.3g", r.check.max_error) +
                     " exceeds the bound " + format("%.3g", r.check.bound);
        } else {
          r.timing = time_benchmark(ctx, b, sets, plan);
          r.status = Status::kOk;
        }
      } catch (const CudaError& e) {
        r.status = Status::kFailed;
        r.reason = e.what();
        if (e.sticky()) {
          context_lost = true;
          lost_after = r.id;
        }
      }
      b.release();
    }
    std::cerr << progress_line(i + 1, selected.size(), r) << "\n";
    report.benchmarks.push_back(std::move(r));
    report.elapsed_s = elapsed_s();
    if (!o.out.empty() && !write_file(o.out, to_json(report))) return kExitFailed;
  }

  if (!context_lost) record_end_state(report.device);
  report.elapsed_s = elapsed_s();
  if (o.out.empty()) {
    std::cout << to_json(report);
  } else {
    if (!write_file(o.out, to_json(report))) return kExitFailed;
    std::cerr << "results: " << o.out << "\n";
  }
  std::cerr << summary(report.benchmarks);
  const bool any_failed =
      std::any_of(report.benchmarks.begin(), report.benchmarks.end(),
                  [](const BenchResult& r) { return r.status == Status::kFailed; });
  return any_failed ? kExitFailed : 0;
}

int main_checked(int argc, char** argv) {
  Options o;
  std::regex filter;
  try {
    o = parse(argc, argv);
    try {
      filter = std::regex(o.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw UsageError("--filter: '" + o.filter + "' is not a valid regular expression (" +
                       e.what() + ")");
    }
  } catch (const UsageError& e) {
    std::cerr << "ftplan-bench: " << e.what() << "\n(ftplan-bench --help lists the options)\n";
    return kExitUsage;
  }
  if (o.help) {
    std::cout << kUsage;
    return 0;
  }
  if (o.version) {
    std::cout << "ftplan-bench " << FTPLAN_BENCH_VERSION << "\n";
    return 0;
  }

  // The few memory-bound benchmarks first: a run cut short by --time-budget-s keeps them.
  BenchmarkList all = make_memory_benchmarks();
  for (auto& b : make_gemm_benchmarks())
    all.push_back(std::move(b));
  const std::size_t total = all.size();
  BenchmarkList selected;
  for (auto& b : all)
    if (std::regex_search(b->info().id, filter)) selected.push_back(std::move(b));
  if (selected.empty()) {
    std::cerr << "ftplan-bench: --filter: '" << o.filter << "' matches none of the " << total
              << " benchmark ids (ftplan-bench --list shows them)\n";
    return kExitUsage;
  }
  if (o.list) {
    for (const auto& b : selected) {
      const BenchResult& r = b->info();
      std::cout << r.id << "  " << r.bench_class;
      for (const Dimension& dim : r.shape)
        std::cout << " " << dim.name << "=" << dim.value;
      std::cout << "\n";
    }
    return 0;
  }
  try {
    return run(o, selected);
  } catch (const UsageError& e) {
    std::cerr << "ftplan-bench: " << e.what() << "\n";
    return kExitUsage;
  } catch (const CudaError& e) {
    std::cerr << "ftplan-bench: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace

}  // namespace ftplan::bench

int main(int argc, char** argv) {
  return ftplan::bench::main_checked(argc, argv);
}
