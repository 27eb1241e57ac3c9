// The report's model: every figure `ftplan report` shows, gathered once from the analyses (planner,
// memory, step, communication, MIG, catalog) for the compared cards and the planned runs. It holds
// numbers and references only, no text in any language: report_document.cpp turns it into one
// document per language, which report_markdown.cpp and report_html.cpp write out, so the Markdown
// and the HTML report never disagree. Nothing here derives a figure itself: each comes from the
// function that owns its formula (the report adds only ratios and sums of those figures).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "comm/traffic.hpp"
#include "memory/fit.hpp"
#include "mig/fit.hpp"
#include "mig/layout.hpp"
#include "mig/rules.hpp"
#include "perf/reference_gemms.hpp"
#include "perf/step.hpp"
#include "plan/evaluate.hpp"
#include "plan/planner.hpp"

namespace ftplan {

struct ReportInput {
  const RunsFile* runs = nullptr;
  const PlanningData* data = nullptr;
  // The compared cards are the runs file's candidates (runs->gpus, at least one), which the
  // planner searches. Further cards are shown in the card and tensor-rate tables only (e.g. other
  // editions of a compared chip: other_editions()).
  std::vector<const GpuSpec*> also;
  PlanOptions plan_options;
};

// One run on one placement: its memory (and, where timed, its step and traffic).
struct ReportMemory {
  const GpuSpec* gpu = nullptr;
  int count = 1;
  Sharding sharding = Sharding::kNone;
  MemoryEstimate memory;  // per card
};

struct ReportMemoryRow {
  const PlannedRun* run = nullptr;
  Workload workload;  // as evaluated: the run's settings, gradient accumulation to the global batch
  ParamCount params = 0;
  ParamCount trained = 0;
  std::vector<ReportMemory> one_card;  // parallel to ReportModel::cards
  // Where one card of a type is not enough: the fewest cards the planner found for it, with every
  // model state sharded (FSDP / ZeRO-3), the seed's "a second card and FSDP".
  std::vector<ReportMemory> sharded;
};

// An operation of the example run's step on the roofline, on every compared card.
struct ReportOpPoint {
  std::size_t op = 0;                              // index into ReportRoofline::ops.ops
  std::vector<std::optional<double>> achieved;     // FLOP/s per card: FLOPs / modelled time
  std::vector<std::optional<bool>> compute_bound;  // per card (empty: the card cannot time it)
};

struct ReportGemm {
  std::string op_name;                   // the op of the example run, or the reference example's id
  std::optional<std::size_t> reference;  // index into ReportModel::references (none: the run's op)
  GemmShape shape;
  TensorPrecision precision = TensorPrecision::kBF16;
  double intensity = 0;                            // FLOP per byte
  std::vector<std::optional<bool>> compute_bound;  // per card, on the roofline at peak
};

struct ReportRoofline {
  const PlannedRun* run =
      nullptr;  // whose step is shown (the first LoRA/QLoRA run, else the first)
  Workload workload;
  StepOps ops;
  std::vector<Device> devices;      // per card
  std::vector<StepEstimate> steps;  // per card (feasible false with the reason if untimed)
  std::vector<std::optional<StepComparison>> versus_first;  // per card: the first card over it
  std::vector<ReportGemm> gemms;      // published examples, the big GEMM, the adapter
  std::vector<ReportOpPoint> points;  // every op with FLOPs, on every card
};

struct ReportRates {
  std::vector<const GpuSpec*> cards;                // compared cards, then the `also` cards
  std::vector<Device> devices;                      // parallel
  std::vector<std::vector<FormatSupport>> formats;  // per card, per ComputeFormat
  // Per card, per TensorPrecision: the first card's dense rate over this card's (none where
  // either rate is unpublished).
  std::vector<std::array<std::optional<double>, kTensorPrecisionCount>> first_over;
};

// Traffic of one run under one strategy at every allowed count above one.
struct ReportTrafficRow {
  const PlannedRun* run = nullptr;
  Sharding sharding = Sharding::kDdp;
  CommStrategy strategy = CommStrategy::kDataParallel;
  std::vector<int> counts;
  std::vector<CommPlan> plans;  // parallel to counts (on the first card's best topology)
  std::vector<PayloadTraffic> frozen_base;  // parallel to counts: the base's share of plans
  // Of plans[i]: the relation to the data-parallel row of the same run (1.5 for FSDP of a full
  // fine-tune), where that row exists.
  std::optional<double> over_data_parallel;
};

// A sharded run over 1..N cards of one type and topology (the scaling curves).
struct ReportScalePoint {
  int count = 1;
  ScaleResult result;
  PayloadTraffic frozen_base;  // the base's share of result.comm
};
struct ReportScaleSeries {
  const GpuSpec* gpu = nullptr;
  std::string topology;      // preset name at the largest count ("pcie", "nvlink-bridge-4", ...)
  bool forced_pcie = false;  // an NVLink card held to PCIe, to show what the link is worth
  std::vector<ReportScalePoint> points;
};
struct ReportScaling {
  const PlannedRun* run = nullptr;
  Workload workload;  // at micro-batch 1: gradient accumulation is set per count
  std::vector<ReportScaleSeries> series;
};

struct ReportTopology {
  const GpuSpec* gpu = nullptr;
  Topology topology;
};

struct ReportMigCard {
  const GpuSpec* gpu = nullptr;
  MigCard card;
  std::vector<MigFitReport> runs;  // parallel to ReportModel::memory (the runs)
  std::vector<MigNote> notes;
};

struct ReportModel {
  const RunsFile* runs = nullptr;
  std::vector<const GpuSpec*> cards;
  std::vector<const GpuSpec*> also;
  Plan plan;
  std::vector<ReportMemoryRow> memory;
  ReportRoofline roofline;
  ReportRates rates;
  std::vector<ReportTrafficRow> traffic;
  std::vector<ReportScaling> scaling;      // runs that need more than one card of some type
  std::vector<ReportTopology> topologies;  // each card at each allowed count above one
  std::vector<ReportMigCard> mig;
  MigRules mig_rules;
  std::vector<ReferenceGemm> references;
  std::vector<int> counts;  // the allowed card counts above one
};

// The catalog's other editions of the compared cards' chips: cards of the same architecture,
// memory type and datasheet memory (RTX PRO 6000 Server Edition and Max-Q beside the Workstation
// Edition; H200 SXM beside the H200 NVL), in catalog order, the compared cards left out.
std::vector<const GpuSpec*> other_editions(const Catalog& catalog,
                                           const std::vector<const GpuSpec*>& cards);

// Runs every analysis the report shows. UserError for a request that makes no sense (no card).
ReportModel build_report_model(const ReportInput& in);

}  // namespace ftplan
