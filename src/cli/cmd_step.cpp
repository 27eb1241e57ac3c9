// ftplan step: the time of one training step on one card, op by op, with the split by op class,
// tokens per second and model FLOPs utilisation.
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/from_files.hpp"
#include "cli/options.hpp"
#include "cli/perf_options.hpp"
#include "core/error.hpp"
#include "parallel/layout.hpp"
#include "perf/step.hpp"
#include "render/perf_json.hpp"
#include "render/reason_words.hpp"
#include "render/step_text.hpp"
#include "workload/objective.hpp"

namespace ftplan::cli {
namespace {

// Each op of `ops` timed on `d` with `e`, in the order of ops.ops.
std::vector<OpTiming> time_ops(const StepOps& ops, const Device& d, const EfficiencyTable& e) {
  std::vector<OpTiming> timings;
  timings.reserve(ops.ops.size());
  for (const auto& op : ops.ops)
    timings.push_back(time_op(op, d, e));
  return timings;
}

struct StepOptions {
  WorkloadOptions workload;
  LayoutOptions layout;
  PlacementOptions placement;
  CalibrationOptions calibration;
  bool json = false;
  bool all_ops = false;
  double power_limit_W = 0;
};

const bool registered_step = register_command(
    {"step", "Time of one training step on one card: op table, split by op class, tokens/s, MFU",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<StepOptions>();
       o->workload.add_to(app);
       o->placement.add_to(app, false, true, false);
       o->layout.add_to(app);
       o->calibration.add_to(app);
       app.add_flag("--all-ops", o->all_ops, "List every op, not only the slowest");
       app.add_option("--power-limit", o->power_limit_W,
                      "Cap each card at this many watts (nvidia-smi -pl): tensor and vector rates "
                      "follow the lower sustained clock (default: the card's TDP)");
       app.add_flag("--json", o->json, "Print JSON (seconds, FLOPs, bytes; ops per micro-batch)");
       return [&ctx, o] {
         Workload w = o->workload.build(ctx);
         Placement p = o->placement.build(ctx, w);
         o->workload.resolve_rollouts(w, p);
         p.power_limit_W = o->power_limit_W;
         validate(p);
         require_training_format(*p.gpu, w.precision, load_training_formats(ctx.catalog()));
         const Layout& l = o->layout.layout;
         if (!l.trivial()) {
           p.count = l.min_cards();
           p.layout = l;
           check_layout(w, p);
         }
         const Device d = apply_power_limit(make_device(p), p.power_limit_W,
                                            load_power_scaling(ctx.catalog()), "power_limit");
         const EfficiencyTable e = o->calibration.for_gpu(ctx, *p.gpu, true);
         StepOps ops = build_step_ops(w);
         int stage = 0;
         if (!l.trivial()) {
           // One card of the slower edge stage: its share of the layers, tokens and weights.
           const TrainedSet set = trained_set(w);
           const ModelStates replica = model_states(w, set);
           const EdgeStages edges = edge_stages(w.model->arch, l);
           StepOps slowest;
           Seconds slowest_time;
           for (int i = 0; i < edges.count(); ++i) {
             CardWork card = card_work(w, set, replica, ops, l, edges[i]);
             const StepEstimate one = estimate_step(card.ops, d, e);
             if (i == 0 || one.micro_batch > slowest_time) {
               slowest_time = one.micro_batch;
               slowest = std::move(card.ops);
               stage = edges[i].index;
             }
           }
           ops = std::move(slowest);
           ctx.err << fmt::format(
               "note: step times one card of pipeline stage {} (of {}) under --tp {} --pp {} --cp "
               "{} --ep {}: its own compute; the exchanges between the cards and the pipeline "
               "bubble are in ftplan scale\n",
               stage, l.pp, l.tp, l.pp, l.cp, l.ep);
         }
         const StepEstimate s = estimate_step(ops, d, e);
         if (!s.feasible)
           throw UserError(ErrorCode::kUnsupported,
                           fmt::format("cannot estimate the step time: {}; give the rate in a "
                                       "card file (--gpu FILE, data/gpus schema)",
                                       word_reason(s.reason)),
                           "gpu");
         if (is_online(w))
           ctx.err << fmt::format(
               "note: step times the scoring and training passes of the {} step; its rollout "
               "(prefill, decode), weight sync and the whole step are in ftplan scale (--gpus 1 "
               "for one card) and explain rl\n",
               objective_traits(w.objective).label);
         if (w.options.offload_optimizer || w.options.offload_parameters ||
             w.options.offload_activations)
           ctx.err << "note: step times the card's own work; the copies to and from host memory "
                      "and the optimizer step on the host are in ftplan scale and plan\n";
         if (o->json) {
           nlohmann::json j = step_json(w, d, ops, s, e);
           j["layout"] = {{"tp", l.tp}, {"pp", l.pp}, {"vpp", l.vpp},
                          {"cp", l.cp}, {"ep", l.ep}, {"stage", stage}};
           print_json(ctx, "step", std::move(j));
         } else {
           print_step(ctx.out, w, d, ops, s, e, time_ops(ops, d, e), o->all_ops);
         }
       };
     },
     40});

}  // namespace
}  // namespace ftplan::cli
