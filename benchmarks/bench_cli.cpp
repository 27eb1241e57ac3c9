// What one CLI call costs: loading the built-in catalog (every data file parsed and validated, as
// a fresh process does once), and whole commands run in-process through ftplan::cli::run once the
// catalog is loaded; and the real binary in fresh processes (BM_Process*), its CPU time per call.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <sstream>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "cli/cli.hpp"

extern char** environ;

namespace {

// The built-in data as a fresh process parses it (cli::builtin_catalog() keeps one per process).
void BM_CatalogLoad(benchmark::State& state) {
  const std::vector<ftplan::DataFile> files = ftplan::cli::builtin_data_files();
  for (auto _ : state) {
    ftplan::Catalog catalog = ftplan::Catalog::load(files);
    benchmark::DoNotOptimize(catalog.gpus().size());
  }
}
BENCHMARK(BM_CatalogLoad)->Unit(benchmark::kMillisecond);

// One command, its output written to a string; a failing command fails the benchmark.
void run_command(benchmark::State& state, const std::vector<std::string>& args) {
  for (auto _ : state) {
    std::ostringstream out, err;
    const int code = ftplan::cli::run(args, out, err);
    if (code != 0) {
      state.SkipWithError(("exit code " + std::to_string(code) + ": " + err.str()).c_str());
      return;
    }
    benchmark::DoNotOptimize(out.str().size());
  }
}

void BM_CliGpus(benchmark::State& state) {
  run_command(state, {"gpus"});
}
BENCHMARK(BM_CliGpus)->Unit(benchmark::kMillisecond);

void BM_CliModels(benchmark::State& state) {
  run_command(state, {"models"});
}
BENCHMARK(BM_CliModels)->Unit(benchmark::kMillisecond);

void BM_CliFit(benchmark::State& state) {
  run_command(state, {"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl"});
}
BENCHMARK(BM_CliFit)->Unit(benchmark::kMillisecond);

void BM_CliStep(benchmark::State& state) {
  run_command(state, {"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl"});
}
BENCHMARK(BM_CliStep)->Unit(benchmark::kMillisecond);

// A fresh process, as a shell runs it: the binary's CPU time (user + system, from wait4), loading,
// data and command together; output to /dev/null. The figure to hold against "< 10 ms a call".
void run_process(benchmark::State& state, std::vector<std::string> args) {
  args.insert(args.begin(), FTPLAN_BINARY);
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  for (auto _ : state) {
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
      state.SkipWithError("cannot start the ftplan binary");
      break;
    }
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("the ftplan binary failed");
      break;
    }
    const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
    state.SetIterationTime(seconds(usage.ru_utime) + seconds(usage.ru_stime));
  }
  posix_spawn_file_actions_destroy(&actions);
}

void BM_ProcessVersion(benchmark::State& state) {
  run_process(state, {"--version"});
}
BENCHMARK(BM_ProcessVersion)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_ProcessGpus(benchmark::State& state) {
  run_process(state, {"gpus"});
}
BENCHMARK(BM_ProcessGpus)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_ProcessFit(benchmark::State& state) {
  run_process(state, {"fit", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl"});
}
BENCHMARK(BM_ProcessFit)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_ProcessStep(benchmark::State& state) {
  run_process(state, {"step", "--model", "llama-3.1-8b", "--method", "lora", "--gpu", "h200-nvl"});
}
BENCHMARK(BM_ProcessStep)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
