// ftplan report [RUNS]: the seed article's comparison regenerated from the model for the given
// runs and cards, as Markdown or as one self-contained HTML file, in English or German.
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/runs_options.hpp"
#include "core/error.hpp"
#include "plan/planner.hpp"
#include "render/report.hpp"

namespace ftplan::cli {
namespace {

struct ReportCliOptions {
  std::string file;
  std::string format;  // empty: from the output file's extension, else Markdown
  std::string lang = "en";
  std::string output;
  std::string rank_by = "card-hours";
  std::vector<std::string> gpus;
  CalibrationOptions calibration;
};

// --format, or what -o FILE's extension says (.html, .htm: HTML), or Markdown.
ReportFormat format_of(const ReportCliOptions& o) {
  if (!o.format.empty()) return parse_report_format(o.format, "format");
  return o.output.ends_with(".html") || o.output.ends_with(".htm") ? ReportFormat::kHtml
                                                                   : ReportFormat::kMarkdown;
}

void write_output(Context& ctx, const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    ctx.out << text;
    return;
  }
  if (!ctx.allow_files)
    throw UserError(ErrorCode::kUnsupported, "the report is returned, not written to a file",
                    "output");
  ctx.write_file(path, text, "output");
}

const bool registered_report = register_command(
    {"report",
     "The seed's comparison regenerated for your runs and cards: Markdown or self-contained HTML",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<ReportCliOptions>();
       app.add_option("file", o->file,
                      "Runs file (YAML, see examples/; - reads standard input); default: the "
                      "seed article's runs");
       app.add_option("--format", o->format, "md | html (default: html for -o FILE.html, else md)");
       app.add_option("--lang", o->lang, "en | de (default en)");
       app.add_option("-o,--output", o->output, "Write to FILE (default: standard output)");
       app.add_option("--gpu", o->gpus,
                      "Compared card (repeatable; all: every card of the catalog); default: the "
                      "runs file's candidates");
       app.add_option("--rank-by", o->rank_by,
                      "card-hours | time | cost | energy (the planner's ranking, as ftplan plan)");
       o->calibration.add_to(app);
       return [&ctx, o] {
         // Options first, so that a typo is reported before minutes of work.
         const ReportFormat format = format_of(*o);
         const ReportLang lang = parse_report_lang(o->lang, "lang");
         ReportInput in;
         in.plan_options.rank_by = parse_rank_by(o->rank_by);
         RunsFile file = load_runs(ctx, o->file);
         restrict_gpus(ctx, file, o->gpus);
         const PlanningData data = planning_data(ctx, o->calibration);
         in.runs = &file;
         in.data = &data;
         in.also = other_editions(ctx.catalog(), file.gpus);
         const ReportModel model = build_report_model(in);
         const ReportDocument doc = report_document(model, ctx.catalog(), lang);
         write_output(ctx, o->output,
                      format == ReportFormat::kHtml ? report_html(doc) : report_markdown(doc));
       };
     },
     75});

}  // namespace
}  // namespace ftplan::cli
