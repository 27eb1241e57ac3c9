// ftplan calibrate: measurements on a real card against the model. `import` turns ftplan-bench
// results into a calibration file (achieved efficiencies per op class and size range) and NCCL
// results into a link calibration; `show` prints predicted vs measured per benchmark; `step`
// compares measured training steps (time, peak memory) with ftplan's prediction.
#include <fmt/format.h>

#include <functional>

#include "catalog/device_match.hpp"
#include "cli/cli.hpp"
#include "cli/perf_options.hpp"
#include "comm/link_calibration.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "memory/measured_runs.hpp"
#include "perf/calibration.hpp"
#include "plan/measured_step.hpp"
#include "plan/throughput.hpp"
#include "render/calibrate_text.hpp"
#include "render/calibration_json.hpp"
#include "render/calibration_yaml.hpp"
#include "render/labels.hpp"
#include "render/reason_words.hpp"
#include "render/validate_text.hpp"

namespace ftplan::cli {
namespace {

struct ImportOptions {
  std::string results;
  std::string output;
  std::string gpu;
  std::string gemm_precision = "bf16";
  std::string link;
  bool skip_failed = false;
};

struct ShowOptions {
  std::string results;
  std::string gpu;
  std::string gemm_precision = "bf16";
  bool skip_failed = false;
  bool json = false;
  CalibrationOptions calibration;
};

struct CalibrateFitOptions {
  std::string runs;
  std::string output;
};

struct StepCheckOptions {
  std::string results;
  std::string gpu;
  bool json = false;
  CalibrationOptions calibration;
};

// ---- shared ----------------------------------------------------------------------------------

struct ResultsFile {
  std::string text;
  DataFile file() const { return {path, text, {}}; }
  std::string path;
};

ResultsFile read_results(Context& ctx, const std::string& path) {
  return {ctx.read_file(path, "results"), path};
}

[[noreturn]] void wrong_schema(const std::string& path, const std::string& schema,
                               const std::string& wanted) {
  throw UserError(
      ErrorCode::kInvalidValue,
      fmt::format("{}: schema '{}' is not what this command reads ({})", path, schema, wanted),
      "results");
}

// --gpu ID forces the card; otherwise the results' device is matched to the catalog.
CardMatch resolve_card(Context& ctx, const std::string& forced, const DeviceIdentity& device,
                       const std::string& file) {
  if (!forced.empty()) return {&ctx.resolve_gpu(forced), fmt::format("--gpu {}", forced)};
  return match_card(ctx.catalog(), device, file);
}

TensorPrecision gemm_precision(const std::string& name) {
  if (name == "bf16") return TensorPrecision::kBF16;
  if (name == "fp8") return TensorPrecision::kFP8;
  throw_unknown_name("GEMM precision", "gemm-precision", name, {"bf16", "fp8"});
}

// Without -o the file goes to stdout (to be redirected); with -o it is written and summarized.
void emit(Context& ctx, const std::string& output, const std::string& text,
          const std::function<void()>& summary) {
  if (output.empty()) {
    ctx.out << text;
    return;
  }
  ctx.write_file(output, text, "output");
  summary();
  print_calibration_written(ctx.out, output);
}

// ---- import: ftplan-bench -> efficiency calibration -----------------------------------------

std::vector<std::string> import_comment(const BenchResults& r, const CalibrationFit& fit,
                                        const std::vector<BenchMeasurement>& measurements) {
  std::vector<std::string> lines = {
      fmt::format("Calibration of {} written by `ftplan calibrate import {}`.", fit.table.card(),
                  r.file),
      "Rule: a size range of a class that holds measurements gets their median efficiency",
      "(achieved / the card's datasheet peak or bandwidth); every other range keeps",
      "data/efficiency/default.yaml, and its basis starts 'not measured'.", "Measured:"};
  for (const auto& range : fit.ranges)
    lines.push_back(fmt::format("  {} {} {}: {:.4f} from {} benchmark(s)",
                                op_class_name(range.op_class), curve_name(range.curve),
                                size_range_label(range), range.fraction,
                                range.measurements.size()));
  lines.emplace_back("Not measured, the defaults kept:");
  for (const auto& k : fit.kept_defaults)
    lines.push_back("  " + k);
  for (const auto& m : measurements)
    if (!m.excluded.empty())
      lines.push_back(fmt::format("Not used: {}: {}", m.bench->id, word_reason(m.excluded)));
  if (!r.note.empty()) lines.push_back("The results file says: " + r.note);
  return lines;
}

void import_bench(Context& ctx, const ImportOptions& o, const ResultsFile& f) {
  const BenchResults r = parse_bench_results(
      f.file(), o.skip_failed ? FailedBenchmarks::kKeep : FailedBenchmarks::kReject);
  const CardMatch card = resolve_card(ctx, o.gpu, r.device, r.file);
  const EfficiencyTable defaults = default_efficiency(ctx.catalog());
  const std::vector<BenchMeasurement> measurements =
      measure_benchmarks(r, make_device(*card.gpu), defaults, gemm_precision(o.gemm_precision));
  const CalibrationFit fit =
      fit_calibration(measurements, defaults, bench_calibration_header(r, *card.gpu, card.basis));
  if (fit.ranges.empty())
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: no timed benchmark can calibrate {} (none ran, or the card "
                                "publishes none of their rates)",
                                r.file, card.gpu->id),
                    "results");
  const std::string text = efficiency_yaml(fit.table, import_comment(r, fit, measurements));
  // The file must load with the parser of --calibration FILE.
  parse_efficiency({o.output.empty() ? "calibration" : o.output, text, {}},
                   ctx.catalog().sources());
  emit(ctx, o.output, text, [&] { print_bench_import_summary(ctx.out, card, fit, defaults); });
}

// ---- import: ftplan-nccl -> link calibration -------------------------------------------------

LinkLevel link_level(const ImportOptions& o, const GpuSpec& gpu, const std::string& file) {
  if (o.link == "nvlink") return LinkLevel::kNvlink;
  if (o.link == "pcie") return LinkLevel::kPcie;
  if (o.link == "network") return LinkLevel::kNetwork;
  if (!o.link.empty()) throw_unknown_name("link", "link", o.link, {"nvlink", "pcie"});
  if (auto implied = implied_link(gpu)) return *implied;
  throw UserError(ErrorCode::kMissingKey,
                  fmt::format("{}: {} joins cards with NVLink ({}); say which link the run "
                              "crossed: --link nvlink or --link pcie (`nvidia-smi topo -m`, in "
                              "the results' machine/ folder, shows NV# between NVLink-joined "
                              "cards)",
                              file, gpu.id, link_kind_name(gpu.nvlink.kind)),
                  "link");
}

DeviceIdentity nccl_device(const NcclResults& r) {
  for (const auto& name : r.devices)
    if (name != r.devices.front())
      throw UserError(ErrorCode::kUnsupported,
                      fmt::format("{}: the ranks ran on different cards ({} and {}); a link "
                                  "calibration is for one card type",
                                  r.file, r.devices.front(), name),
                      "results");
  return {r.devices.empty() ? "" : r.devices.front(), "", std::nullopt};
}

void import_nccl(Context& ctx, const ImportOptions& o, const ResultsFile& f) {
  const NcclResults r = parse_nccl_results(f.file());
  if (r.status != "ok")
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: the NCCL run measured nothing ({})", r.file, r.reason),
                    "results");
  const CardMatch card = resolve_card(ctx, o.gpu, nccl_device(r), r.file);
  const LinkLevel level = link_level(o, *card.gpu, r.file);
  const CommConstants k = load_comm_constants(ctx.catalog());
  const LinkFit fit = fit_link_calibration(r, *card.gpu, level, card.basis, k);
  std::vector<std::string> comment = {
      fmt::format("Link calibration of {} ({}) written by `ftplan calibrate import {}`.",
                  card.gpu->id, link_level_name(level), r.file),
      "Rule: achieved fraction = median bus bandwidth of the all-reduces from " +
          format_number(k.calibration_large_message.value / kBytesPerMiB) +
          " MiB on / the card's nominal per-direction rate (data/comm/links.yaml)."};
  if (!r.note.empty()) comment.push_back("The results file says: " + r.note);
  const std::string text = link_calibration_yaml(fit, comment);
  parse_link_calibration({o.output.empty() ? "calibration" : o.output, text, {}},
                         ctx.catalog().sources());
  emit(ctx, o.output, text, [&] {
    print_link_import_summary(ctx.out, card, fit, level, k.achieved_fraction(level, *card.gpu));
  });
}

void run_import(Context& ctx, const ImportOptions& o) {
  const ResultsFile f = read_results(ctx, o.results);
  const std::string schema = results_schema(f.file());
  // By family: each reader names an unsupported version of its own schema.
  if (schema.starts_with("ftplan-bench/")) return import_bench(ctx, o, f);
  if (schema.starts_with("ftplan-nccl/")) return import_nccl(ctx, o, f);
  if (schema.starts_with("ftplan-step/"))
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: measured steps ({}) are compared, not imported: ftplan "
                                "calibrate step {}",
                                f.path, schema, f.path),
                    "results");
  wrong_schema(f.path, schema, fmt::format("{} or {}", kBenchResultsSchema, kNcclResultsSchema));
}

// ---- show: predicted vs measured per benchmark ------------------------------------------------

struct ShownTable {
  EfficiencyTable table;
  std::string label;
};

// The calibration to compare with: --calibration (or FTPLAN_CALIBRATION_DIR) for this card, else
// the one this results file makes.
ShownTable shown_table(Context& ctx, const ShowOptions& o, const CardMatch& card,
                       const BenchResults& r, const std::vector<BenchMeasurement>& measurements,
                       const EfficiencyTable& defaults) {
  if (auto t = o.calibration.find_for_gpu(ctx, *card.gpu, true)) return {*t, efficiency_label(*t)};
  CalibrationFit fit =
      fit_calibration(measurements, defaults, bench_calibration_header(r, *card.gpu, card.basis));
  return {fit.table, fmt::format("fitted from {} (median per size range; not written)", r.file)};
}

void run_show(Context& ctx, const ShowOptions& o) {
  const ResultsFile f = read_results(ctx, o.results);
  const std::string schema = results_schema(f.file());
  if (!schema.starts_with("ftplan-bench/"))
    wrong_schema(f.path, schema, std::string(kBenchResultsSchema));
  const BenchResults r = parse_bench_results(
      f.file(), o.skip_failed ? FailedBenchmarks::kKeep : FailedBenchmarks::kReject);
  const CardMatch card = resolve_card(ctx, o.gpu, r.device, r.file);
  const Device d = make_device(*card.gpu);
  const EfficiencyTable defaults = default_efficiency(ctx.catalog());
  const std::vector<BenchMeasurement> measurements =
      measure_benchmarks(r, d, defaults, gemm_precision(o.gemm_precision));
  const ShownTable shown = shown_table(ctx, o, card, r, measurements, defaults);
  const std::vector<BenchPrediction> predictions =
      predict_benchmarks(measurements, d, defaults, shown.table);
  if (o.json)
    print_json(ctx, "calibrate-bench",
               bench_predictions_json(card, shown.label, measurements, predictions));
  else
    print_bench_predictions(ctx.out, card, shown.label, measurements, predictions,
                            summarize_errors(predictions));
}

// ---- step: measured training steps vs the prediction ------------------------------------------

CardMatch step_card(Context& ctx, const StepCheckOptions& o, const StepResults& r) {
  if (o.gpu.empty() && !r.ftplan_gpu_id.empty())
    if (const GpuSpec* g = ctx.catalog().find_gpu(r.ftplan_gpu_id))
      return {g, fmt::format("measure_step.py: {}", r.ftplan_gpu_id_basis)};
  return resolve_card(ctx, o.gpu, r.device, r.file);
}

void run_step_check(Context& ctx, const StepCheckOptions& o) {
  const ResultsFile f = read_results(ctx, o.results);
  const std::string schema = results_schema(f.file());
  if (!schema.starts_with("ftplan-step/"))
    wrong_schema(f.path, schema, std::string(kStepResultsSchema));
  const StepResults r = parse_step_results(f.file());
  const CardMatch card = step_card(ctx, o, r);
  const EfficiencyTable e = o.calibration.for_gpu(ctx, *card.gpu, true);
  const std::vector<StepCheck> checks = check_measured_steps(
      r, ctx.catalog(), ctx.overheads(), ctx.stacks().find(kMeasuredStepStack), *card.gpu, e);
  if (o.json)
    print_json(ctx, "calibrate-step", step_checks_json(card, efficiency_label(e), checks));
  else
    print_step_checks(ctx.out, r, card, e, checks, summarize_step_errors(checks));
}

// ---- registration ------------------------------------------------------------------------------

void add_gpu_option(CLI::App& app, std::string& gpu) {
  app.add_option("--gpu", gpu,
                 "The card the results come from (catalog id or card file); default: matched "
                 "from the device name, compute capability and memory");
}

CLI::App* setup_import(CLI::App& parent, ImportOptions& o) {
  CLI::App* app = parent.add_subcommand(
      "import",
      "ftplan-bench results -> calibration file (efficiency per op class and size "
      "range); ftplan-nccl results -> link calibration");
  app->add_option("results", o.results, "ftplan-bench/1 or ftplan-nccl/1 results (JSON)")
      ->required();
  app->add_option("-o,--output", o.output, "Write the calibration here (default: stdout)");
  add_gpu_option(*app, o.gpu);
  app->add_option("--gemm-precision", o.gemm_precision,
                  "GEMMs of this precision make the gemm curve: bf16 | fp8 (default bf16)");
  app->add_option("--link", o.link,
                  "NCCL results: the link the run crossed, nvlink | pcie (default: pcie for a "
                  "card without NVLink)");
  app->add_flag("--skip-failed", o.skip_failed,
                "Leave out benchmarks whose check failed instead of refusing the file");
  return app;
}

CLI::App* setup_show(CLI::App& parent, ShowOptions& o) {
  CLI::App* app = parent.add_subcommand(
      "show", "Predicted vs measured per benchmark: defaults, calibrated, error per class");
  app->add_option("results", o.results, "ftplan-bench/1 results (JSON)")->required();
  add_gpu_option(*app, o.gpu);
  app->add_option("--gemm-precision", o.gemm_precision,
                  "Without a calibration file: GEMMs of this precision make the gemm curve of "
                  "the fit (bf16 | fp8, default bf16)");
  app->add_flag("--skip-failed", o.skip_failed, "Leave out benchmarks whose check failed");
  o.calibration.add_to(*app);
  app->add_flag("--json", o.json, "Print JSON");
  return app;
}

// ---- fit: measured runs -> the step model's fitted constants ---------------------------------

void run_fit(Context& ctx, const CalibrateFitOptions& o) {
  const std::string text = ctx.read_file(o.runs, "runs");
  const std::vector<MeasuredRun> runs =
      parse_measured_runs({o.runs, text, {}}, ctx.catalog(), ctx.overheads(), ctx.stacks());
  const PlanningData data = PlanningData::load(ctx.catalog());
  const ThroughputReport r = validate_throughput(runs, data, true);
  if (r.compared == 0)
    throw UserError(ErrorCode::kInvalidValue,
                    fmt::format("{}: no run has a throughput with every setting stated (stack, "
                                "throughput, seq, micro_batch, ...): nothing to fit; see "
                                "data/README.md, 'measured/*.yaml'",
                                o.runs),
                    "runs");
  EfficiencyTable t = data.default_efficiency;
  r.fitted.apply(t);
  t.name = "fitted";
  t.description = fmt::format(
      "the default efficiencies with host costs and architecture multipliers fitted to {}", o.runs);
  t.host.basis =
      fmt::format("fitted to the {} runs of {} (ftplan calibrate fit)", r.compared, o.runs);
  for (auto& a : t.architectures)
    a.basis = fmt::format("fitted to {}", o.runs);
  t.fit = {r.compared,
           r.sources,
           r.fitted_median_abs_error,
           r.loso_median_abs_error,
           r.loso_error_p10,
           r.loso_error_p90,
           fmt::format("ftplan calibrate fit {}: error of tokens/s, leave-one-source-out "
                       "percentiles",
                       o.runs)};
  const std::string yaml = efficiency_yaml(
      t, {fmt::format("Step-model constants fitted to the measured runs of {}.", o.runs),
          "Use it with --calibration FILE: it replaces the defaults for every card."});
  // The file must load with the parser of --calibration FILE.
  check_architectures(parse_efficiency({o.output.empty() ? "calibration" : o.output, yaml, {}},
                                       ctx.catalog().sources()),
                      ctx.catalog());
  if (o.output.empty()) print_throughput_validation(ctx.err, r);
  emit(ctx, o.output, yaml, [&] { print_throughput_validation(ctx.out, r); });
}

CLI::App* setup_fit(CLI::App& parent, CalibrateFitOptions& o) {
  CLI::App* app = parent.add_subcommand(
      "fit",
      "Measured runs (data/measured schema, with throughput and stack) -> the step model's "
      "host costs and architecture multipliers fitted to them, as a calibration file; the "
      "residuals, in sample and leave-one-source-out");
  app->add_option("runs", o.runs, "Measured-runs file (YAML, the data/measured schema)")
      ->required();
  app->add_option("-o,--output", o.output,
                  "Write the calibration here (default: stdout; the residuals then go to "
                  "standard error)");
  return app;
}

CLI::App* setup_step(CLI::App& parent, StepCheckOptions& o) {
  CLI::App* app = parent.add_subcommand(
      "step",
      "Measured LoRA/QLoRA steps (bench/step/measure_step.py) vs ftplan's step time and "
      "peak memory");
  app->add_option("results", o.results, "ftplan-step/1 results (JSON)")->required();
  add_gpu_option(*app, o.gpu);
  o.calibration.add_to(*app);
  app->add_flag("--json", o.json, "Print JSON");
  return app;
}

const bool registered_calibrate = register_command(
    {"calibrate",
     "Measurements on a card: import benchmark and NCCL results as calibration files; "
     "predicted vs measured per benchmark and per training step",
     [](CLI::App& app, Context& ctx) {
       app.require_subcommand(1);
       auto imp = std::make_shared<ImportOptions>();
       auto show = std::make_shared<ShowOptions>();
       auto step = std::make_shared<StepCheckOptions>();
       auto fit = std::make_shared<CalibrateFitOptions>();
       CLI::App* a = setup_import(app, *imp);
       CLI::App* b = setup_show(app, *show);
       CLI::App* c = setup_step(app, *step);
       CLI::App* d = setup_fit(app, *fit);
       return [&ctx, a, b, c, d, imp, show, step, fit] {
         if (a->parsed()) run_import(ctx, *imp);
         if (b->parsed()) run_show(ctx, *show);
         if (c->parsed()) run_step_check(ctx, *step);
         if (d->parsed()) run_fit(ctx, *fit);
       };
     },
     69});

}  // namespace
}  // namespace ftplan::cli
