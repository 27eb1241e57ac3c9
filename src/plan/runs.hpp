// A runs file: the training runs a team plans, the cards it may buy or rent, prices and limits.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "comm/topology.hpp"
#include "workload/workload.hpp"

namespace ftplan {

struct PlannedRun {
  std::string name;
  Workload workload;                        // seq, method, options; micro-batch and recompute below
  std::optional<std::int64_t> micro_batch;  // fixed by the file; else searched
  std::optional<Recompute> recompute;       // fixed by the file; else searched
  bool offload_activations_given = false;   // the file sets offload_activations (else the stack's)
  std::optional<Layout> layout;    // tp/pp/vpp/cp/ep fixed by the file; else searched where needed
  std::int64_t global_batch = 64;  // sequences per optimizer step
  double tokens = 0;               // tokens to train (tokens, or epochs × dataset_tokens)
  std::optional<double> deadline_hours;
  int count = 1;                     // how many runs like this one (experiments, seeds)
  std::vector<const GpuSpec*> gpus;  // this run's candidates (empty: the file's)
  int line = 0;                      // where it is defined, for messages

  double steps() const;  // tokens / (global_batch × seq), rounded up
  // The workload with recompute mode `rc`; where the file leaves offload_activations open, the
  // stack's default for that mode follows it (Unsloth offloads only what it checkpoints).
  Workload with_recompute(Workload w, Recompute rc) const;
};

// How much a run trains, from a runs file's keys: `tokens`, or `epochs` × `dataset_tokens`;
// neither: 0 (whether that is allowed is the caller's question). A UserError naming the key when
// they do not go together.
double tokens_to_train(std::optional<double> tokens, std::optional<double> epochs,
                       std::optional<double> dataset_tokens);

struct Prices {
  std::map<std::string, double, std::less<>> per_card_hour_USD;  // rental price per card and hour
  std::optional<double> per_kWh_USD;
};
// The largest prices taken (USD), past any real card rental or electricity tariff.
inline constexpr double kMaxCardHourUSD = 1e6;
inline constexpr double kMaxKWhUSD = 100;

// What is wrong with a price as given ("a price must be above 0 ..."); empty when it is above 0
// and at most `max_USD`. Zero is refused too: a card that costs nothing would win every cost
// ranking, and leaving the price out already says "no price" (the runs file's prices, explain's
// --price-per-card-hour and --price-per-kWh).
std::string price_problem(double price_USD, double max_USD);

struct RunsFile {
  std::string file;
  std::vector<PlannedRun> runs;
  std::vector<const GpuSpec*> gpus;  // candidate card types
  std::vector<int> counts = {1, 2, 4, 8};
  std::string topology;  // empty: the best each card supports
  P2p p2p = P2p::kAuto;  // PCIe peer-to-peer: as each card's data says, or forced
  bool allow_mig = true;
  Prices prices;
  std::optional<double>
      power_limit_W;  // most power the cards of one run may draw together (TDP sum)
  // Each card capped at this many watts (nvidia-smi -pl; 0: none): a lower sustained clock.
  double card_power_limit_W = 0;
};

// Resolves a model name of the file (catalog id or config.json path) — supplied by the front end,
// which may read files; the core does not.
using ModelResolver = std::function<ModelPtr(const std::string& id_or_path)>;
// Reads a file the runs file names (a run's `lengths` or `from`, given beside_runs_file), as the
// front end reads its own paths.
using FileReader = std::function<std::string(const std::string& path, const std::string& field)>;

// Strict: unknown key, wrong type, out-of-range value, unknown model or GPU → UserError naming the
// file, the line and the key.
// A run's `stack` (default hf) is one of `stacks`; it decides what the run leaves open
// (attention kernel, compilation). A run's `from: FILE` (or the defaults', or `extra_from`, the
// command's --from) is a trainer file (workload/trainer_file.hpp) whose settings the run takes
// where it does not set the key itself.
RunsFile parse_runs_file(std::string_view text, const std::string& file, const Catalog& catalog,
                         const Stacks& stacks, const ModelResolver& resolve_model,
                         const FileReader& read_file = {},
                         const std::vector<std::string>& extra_from = {});

// `path` as the runs file `runs_file` names it (a run's lengths or from: file, a model's
// config.json): a relative path is relative to the runs file's folder. Absolute paths, `-`
// (standard input) and the paths of a file without a folder stay as they are. Path arithmetic
// only: nothing is read.
std::string beside_runs_file(const std::string& runs_file, const std::string& path);

// The built-in default: examples/seed-runs.yaml, the seed article's runs.
inline constexpr std::string_view kSeedRunsPath = "examples/seed-runs.yaml";

}  // namespace ftplan
