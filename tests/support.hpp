// Shared helpers for the tests: the built-in catalog and short ways to describe runs.
#pragma once

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "cli/cli.hpp"
#include "core/error.hpp"
#include "infer/measured_generation.hpp"
#include "memory/fit.hpp"
#include "memory/measured_runs.hpp"
#include "memory/overheads.hpp"
#include "perf/efficiency.hpp"
#include "render/translations.hpp"
#include "workload/workload.hpp"

namespace ftplan::test {

inline const Catalog& catalog() {
  static const Catalog c = Catalog::load(cli::builtin_data_files());
  return c;
}

inline const RuntimeOverheads& overheads() {
  static const RuntimeOverheads t = load_runtime_overheads(catalog());
  return t;
}

// The default table as the roofline alone sees it: no host costs, no engine time per layer, no
// fitted architecture multipliers (for properties of the GPU's own work: ratios between cards,
// sums per class).
inline const EfficiencyTable& roofline_efficiency() {
  static const EfficiencyTable e = [] {
    EfficiencyTable t = default_efficiency(catalog());
    t.host = {};
    t.generation = {};
    t.architectures.clear();
    return t;
  }();
  return e;
}

// The words of a language from the built-in data, read once.
inline const Translations& translations(ReportLang lang) {
  static const Translations en = load_translations(catalog(), ReportLang::kEn);
  static const Translations de = load_translations(catalog(), ReportLang::kDe);
  return lang == ReportLang::kDe ? de : en;
}

inline const Stacks& stacks() {
  static const Stacks s = load_stacks(catalog());
  return s;
}

// Every training run of data/measured/, as `ftplan validate` reads them (files of serving
// measurements aside).
inline const std::vector<MeasuredRun>& measured_training_runs() {
  static const std::vector<MeasuredRun> runs = [] {
    std::vector<MeasuredRun> out;
    for (const DataFile* f : catalog().files_under("measured")) {
      if (!f->path.ends_with(".yaml") || is_measured_generation_file(*f)) continue;
      for (auto& r : parse_measured_runs(*f, catalog(), overheads(), stacks()))
        out.push_back(std::move(r));
    }
    return out;
  }();
  return runs;
}

// A workload with the defaults of the CLI (seq 2048, micro-batch 1, full recomputation,
// FlashAttention, peak reserved) and the runtime overheads of the built-in data.
inline Workload workload(const std::string& model, Method method,
                         Optimizer opt = Optimizer::kAdamW) {
  Workload w;
  w.overheads = &overheads();
  w.model = catalog().model(model);
  w.method = method;
  w.optimizer = opt;
  return w;
}

inline Placement on(const std::string& gpu, int count = 1, Sharding s = Sharding::kNone) {
  Placement p;
  p.gpu = &catalog().gpu(gpu);
  p.count = count;
  p.sharding = s;
  return p;
}

inline Placement on_mig(const std::string& gpu, const std::string& profile) {
  Placement p = on(gpu);
  p.mig = p.gpu->mig.find(profile);
  return p;
}

// Rounds as the article prints: to `decimals` places.
inline double printed(double v, int decimals) {
  const double k = std::pow(10.0, decimals);
  return std::round(v * k) / k;
}

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

inline CliResult run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = cli::run(args, out, err);
  return {code, out.str(), err.str()};
}

// The command line with `input` as its standard input (what a file option given `-` reads).
inline CliResult run_cli(const std::vector<std::string>& args, const std::string& input) {
  std::istringstream in(input);
  std::ostringstream out, err;
  int code = cli::run(args, out, err, in);
  return {code, out.str(), err.str()};
}

// The message of the UserError `f` throws; empty when it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace ftplan::test
