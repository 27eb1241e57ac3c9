// Option groups shared by the subcommands that describe a run (fit, step, scale, mig, max, ...).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/cli.hpp"
#include "core/workload.hpp"

namespace ftplan::cli {

struct WorkloadOptions {
  std::string model;
  std::string method;
  int rank = 16;
  std::string targets = "q,k,v,o,gate,up,down";
  std::string optimizer = "adamw";
  std::string precision = "bf16";
  long long seq = 2048;
  long long micro_batch = 1;
  long long grad_accum = 1;
  std::string recompute = "full";
  std::string attention = "flash";
  std::string peak = "reserved";
  int loss_chunks = 8;
  int quant_block = 64;
  int quant_second_block = 256;
  bool no_double_quant = false;
  TrainingOptions training;

  // `runtime`: also the options of the activation model (sequence, batch, recompute, ...).
  void add_to(CLI::App& app, bool runtime = true);
  Workload build(Context& ctx) const;
};

struct PlacementOptions {
  std::string gpu;
  int gpus = 1;
  std::string shard;
  std::string mig;
  std::string topology;

  void add_to(CLI::App& app, bool multi_card = true, bool with_mig = false,
              bool with_topology = false);
  Placement build(Context& ctx) const;
};

// The sharding used when --shard is not given: DDP for several cards, none for one.
Sharding default_sharding(int cards);

}  // namespace ftplan::cli
