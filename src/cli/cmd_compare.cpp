// ftplan compare: two cards side by side: dense tensor rates per precision, bandwidth, ops:byte,
// their ratios and the training formats each supports; with --model, also one workload's step
// time on both, per op class, and why the overall ratio lands where it does.
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "cli/perf_options.hpp"
#include "core/error.hpp"
#include "perf/step.hpp"
#include "render/compare_text.hpp"
#include "render/perf_json.hpp"
#include "render/reason_words.hpp"

namespace ftplan::cli {
namespace {

struct CompareOptions {
  std::vector<std::string> gpus;
  WorkloadOptions workload;
  CalibrationOptions calibration;
  bool json = false;
};

const bool registered_compare = register_command(
    {"compare",
     "Two cards side by side: dense rates, bandwidth, ops:byte, ratios, training formats; with "
     "--model, one run's step time on both",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<CompareOptions>();
       app.add_option("--gpu", o->gpus, "A GPU id or card file; give exactly two: --gpu A --gpu B")
           ->required();
       o->workload.add_to(app, true, false);
       o->calibration.add_to(app);
       app.add_flag("--json", o->json, "Print JSON");
       return [&ctx, o] {
         if (o->gpus.size() != 2)
           throw UserError(ErrorCode::kInvalidValue,
                           fmt::format("compare takes exactly two cards (--gpu A --gpu B), got {}",
                                       o->gpus.size()),
                           "gpu");
         const GpuSpec& ga = ctx.resolve_gpu(o->gpus[0]);
         const GpuSpec& gb = ctx.resolve_gpu(o->gpus[1]);
         const Device a = make_device(ga), b = make_device(gb);
         const TrainingFormats formats = load_training_formats(ctx.catalog());
         std::optional<StepPair> step;
         std::optional<Workload> w;
         std::optional<StepOps> ops;
         if (!o->workload.model.empty() || !o->workload.method.empty()) {
           if (o->workload.model.empty() || o->workload.method.empty())
             throw UserError(ErrorCode::kMissingKey,
                             "a step comparison needs both --model and --method",
                             o->workload.model.empty() ? "model" : "method");
           w = o->workload.build(ctx);
           require_training_format(ga, w->precision, formats);
           require_training_format(gb, w->precision, formats);
           ops = build_step_ops(*w);
           const EfficiencyTable ea = o->calibration.for_gpu(ctx, ga, false);
           const EfficiencyTable eb = o->calibration.for_gpu(ctx, gb, false);
           StepPair sp{&*w, &*ops, estimate_step(*ops, a, ea), estimate_step(*ops, b, eb), {}};
           for (const StepEstimate* s : {&sp.a, &sp.b})
             if (!s->feasible)
               throw UserError(ErrorCode::kUnsupported,
                               fmt::format("cannot compare step times: {}", word_reason(s->reason)),
                               "gpu");
           sp.comparison = compare_steps(*ops, a, ea, b, eb);
           step = std::move(sp);
         }
         if (o->json) {
           print_json(ctx, "compare", compare_json(a, b, formats, step));
           return;
         }
         print_rates(ctx.out, a, b, formats);
         if (step) print_step_comparison(ctx.out, a, b, *step);
       };
     },
     45});

}  // namespace
}  // namespace ftplan::cli
