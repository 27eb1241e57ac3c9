// The input of `ftplan pack`: a YAML list of experiments, each a single-card run with a count.
//
//   gpu: h200-nvl                   # optional: the card type when no --gpu is given
//   experiments:
//     - {name: sweep-a, model: llama-3.1-8b, method: qlora, rank: 16, count: 9}
//     - {name: big-b, model: llama-3.3-70b, method: qlora, count: 2, seq: 4096}
//
// Parsed strictly (StrictMap): an unknown key, a missing key or a value out of range is a
// UserError naming the file, the key path and the line. Text only: the caller resolves models.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "workload/workload.hpp"

namespace ftplan {

// Limits of a pack file; the exact packing search is sized for queues of this order.
inline constexpr int kMaxPackJobsPerExperiment = 1000;
inline constexpr int kMaxPackJobs = 2000;

struct PackFileExperiment {
  std::string name;
  std::string model;        // catalog id or path to a config.json, resolved by the caller
  std::string model_where;  // "file: key 'experiments[0].model' (line 3)" for its errors
  Workload workload;        // every option but the model (model is null)
  int count = 1;            // identical jobs of this run
};

struct PackFile {
  std::string file;
  std::string gpu;  // default card type; empty when the file names none
  std::string gpu_where;
  std::vector<PackFileExperiment> experiments;
  int total_jobs() const;
};

PackFile parse_pack_file(std::string_view text, const std::string& file);

}  // namespace ftplan
