// What one CLI call costs: loading the built-in catalog (every data file parsed and validated, as
// a fresh process does once), and whole commands run in-process through ftplan::cli::run once the
// catalog is loaded.
#include <benchmark/benchmark.h>

#include <sstream>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "cli/cli.hpp"

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

}  // namespace
