// ftplan scale: a run on several cards — strategy, bytes per card, link time, exposed time,
// scaling.
#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "cli/perf_options.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "plan/evaluate.hpp"
#include "render/comm_json.hpp"
#include "render/json.hpp"
#include "render/table.hpp"

namespace ftplan::cli {
namespace {

struct ScaleOptions {
  WorkloadOptions workload;
  std::vector<std::string> gpus;
  int count = 2;
  std::string shard = "auto";
  std::string topology;
  double network_GBps = 0;
  int cards_per_node = 0;
  bool sweep = false;
  bool json = false;
  CalibrationOptions calibration;
};

// --shard auto: replicate (DDP) when one replica fits a card, else shard everything (FSDP).
Sharding choose_sharding(const std::string& shard, const Workload& w, const ModelStates& replica,
                         const GpuSpec& gpu, int count) {
  if (count <= 1) return Sharding::kNone;
  if (shard != "auto") return parse_sharding(shard, "shard");
  Placement one;
  one.gpu = &gpu;
  return estimate_memory(w, replica, one).verdict == Verdict::kFits ? Sharding::kDdp
                                                                    : Sharding::kFsdp;
}

ScaleResult evaluate(const ScaleOptions& o, const Workload& w, const ModelStates& replica,
                     const StepOps& ops, const GpuSpec& gpu, int count, const PlanningData& data) {
  Placement p;
  p.gpu = &gpu;
  p.count = count;
  p.sharding = choose_sharding(o.shard, w, replica, gpu, count);
  p.topology = o.topology;
  validate(p);
  const Topology t =
      build_topology(gpu, count, o.topology, data.comm, o.network_GBps, o.cards_per_node);
  p.topology = t.preset;
  return evaluate_placement(w, replica, ops, p, t, data);
}

void print_one(Context& ctx, const Workload& w, const ScaleResult& r) {
  std::ostream& out = ctx.out;
  const Placement& p = r.placement;
  out << fmt::format("{} · {} on {} × {}\n", w.model->arch.name, method_name(w.method), p.count,
                     p.gpu->name);
  out << fmt::format("strategy: {} · topology: {} · micro-batch {} × {} tokens, {} per step\n\n",
                     comm_strategy_name(r.comm.strategy), r.topology.preset, w.micro_batch, w.seq,
                     w.grad_accum);
  out << fmt::format("memory per card: model states {}, peak {} of {} — {}\n\n",
                     format_GB(r.memory.states.total()), format_GB(r.memory.peak),
                     format_GB(r.memory.capacity), verdict_name(r.memory.verdict));
  if (!r.step.feasible) {
    out << "step time: cannot be estimated — " << r.step.reason << "\n";
    return;
  }
  TextTable t(
      {"collective", "per", "buffer GB>", "received GB/card>", "min link s>", "estimated s>"});
  for (const auto& c : r.comm.calls())
    t.row({std::string(c.what), c.per_micro_batch ? "micro-batch" : "step",
           format_fixed(to_GB(c.cost.size), 2), format_fixed(to_GB(c.cost.received_per_card), 2),
           format_fixed(c.cost.min_link_seconds.value, 3),
           format_fixed(c.cost.estimated_seconds.value, 3)});
  if (r.comm.call_count > 0) {
    t.print(out);
    const Link& link = r.topology.link(r.comm.link);
    out << fmt::format(
        "\nreceived per card: {} per micro-batch, {} per step\n"
        "link: {} ({} per direction, nominal); lower bound {} per micro-batch, {} per step\n",
        format_GB(r.comm.received_per_card_per_micro_batch, 2),
        format_GB(r.comm.received_per_card_per_step, 2), link.name, format_GBps(link.per_direction),
        format_seconds(r.comm.min_link_seconds_per_micro_batch),
        format_seconds(r.comm.min_link_seconds_per_step));
  } else {
    out << "no traffic between cards\n";
  }
  out << fmt::format(
      "compute {} per step; communication {} (at achieved link rates), exposed {} -> step {}\n"
      "scaling efficiency {:.1f} % · tokens/s (all cards) {:.0f}\n",
      format_seconds(r.scale.compute_per_step), format_seconds(r.scale.comm_per_step),
      format_seconds(r.scale.exposed_per_step), format_seconds(r.scale.step_seconds),
      100 * r.scale.scaling_efficiency, r.tokens_per_second);
  for (const auto& n : r.topology.notes)
    out << "note: " << n << "\n";
}

void print_sweep(Context& ctx, const Workload& w, const std::vector<std::vector<ScaleResult>>& rows,
                 const std::vector<const GpuSpec*>& gpus) {
  ctx.out << fmt::format("{} · {} · micro-batch {} × {} tokens: scaling over 1, 2, 4, 8 cards\n\n",
                         w.model->arch.name, method_name(w.method), w.micro_batch, w.seq);
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    ctx.out << gpus[g]->name << "\n";
    TextTable t({"cards>", "strategy", "topology", "verdict", "GB recv/card/step>", "exposed s>",
                 "step s>", "tokens/s>", "efficiency>"});
    for (const auto& r : rows[g]) {
      const bool timed = r.step.feasible;
      t.row({std::to_string(r.placement.count), std::string(comm_strategy_name(r.comm.strategy)),
             r.topology.preset, std::string(verdict_name(r.memory.verdict)),
             format_fixed(to_GB(r.comm.received_per_card_per_step), 1),
             timed ? format_fixed(r.scale.exposed_per_step.value, 3) : "-",
             timed ? format_fixed(r.scale.step_seconds.value, 3) : "-",
             timed ? format_fixed(r.tokens_per_second, 0) : "-",
             timed ? format_fixed(100 * r.scale.scaling_efficiency, 1) + " %" : "-"});
    }
    t.print(ctx.out);
    ctx.out << "\n";
  }
}

const bool registered = register_command(
    {"scale",
     "Several cards: strategy, bytes per card, link time, exposed time, scaling (NVLink vs PCIe)",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<ScaleOptions>();
       o->workload.add_to(app);
       app.add_option("--gpu", o->gpus, "GPU id (twice with --sweep: two cards side by side)")
           ->required();
       app.add_option("--gpus", o->count, "Number of cards (default 2)");
       app.add_option("--shard", o->shard,
                      "auto | none | ddp | zero1 | zero2 | fsdp (default auto: DDP when a replica "
                      "fits one card, "
                      "else FSDP — for LoRA/QLoRA a sharded frozen base)");
       app.add_option("--topology", o->topology,
                      "pcie | nvlink-bridge-2 | nvlink-bridge-4 | nvswitch (default: the best the "
                      "card supports)");
       app.add_option(
           "--network-GBps", o->network_GBps,
           "Network bandwidth per node and direction for runs beyond one node (default from data)");
       app.add_option("--cards-per-node", o->cards_per_node, "Cards per node (default 8)");
       app.add_flag("--sweep", o->sweep, "Sweep N = 1, 2, 4, 8 (for each --gpu)");
       app.add_flag("--json", o->json, "Print JSON");
       o->calibration.add_to(app);
       return [&ctx, o] {
         Workload w = o->workload.build(ctx);
         if (o->count < 1 || o->count > 65536)
           throw UserError(
               ErrorCode::kInvalidValue,
               fmt::format("number of GPUs must be a whole number from 1 to 65536, got {}",
                           o->count),
               "gpus");
         if (!o->sweep && o->gpus.size() > 1)
           throw UserError(ErrorCode::kInvalidValue, "give one --gpu, or two with --sweep", "gpu");
         if (o->network_GBps < 0 || o->cards_per_node < 0)
           throw UserError(ErrorCode::kInvalidValue,
                           "--network-GBps and --cards-per-node must be positive", "network_GBps");
         std::vector<const GpuSpec*> gpus;
         for (const auto& id : o->gpus) {
           gpus.push_back(&ctx.resolve_gpu(id));
           require_training_format(*gpus.back(), w.precision, load_training_formats(ctx.catalog()));
         }
         Calibrations cal = o->calibration.load(ctx);
         const PlanningData data =
             PlanningData::load(ctx.catalog(), std::move(cal.efficiency), std::move(cal.links));
         const ModelStates replica = model_states(w);
         const StepOps ops = build_step_ops(w);
         if (!o->sweep) {
           const ScaleResult r = evaluate(*o, w, replica, ops, *gpus[0], o->count, data);
           if (o->json) {
             nlohmann::json j = workload_json(w);
             j.update(scale_json(r));
             ctx.out << j.dump(2) << "\n";
           } else {
             print_one(ctx, w, r);
           }
           return;
         }
         std::vector<std::vector<ScaleResult>> rows(gpus.size());
         for (std::size_t g = 0; g < gpus.size(); ++g)
           for (int n : {1, 2, 4, 8}) {
             // A topology the card cannot have at this count (e.g. a 4-way bridge for 2 cards)
             // falls back to the card's best.
             ScaleOptions each = *o;
             if (!o->topology.empty() && n == 1) each.topology.clear();
             rows[g].push_back(evaluate(each, w, replica, ops, *gpus[g], n, data));
           }
         if (o->json) {
           nlohmann::json arr = nlohmann::json::array();
           for (const auto& row : rows)
             for (const auto& r : row)
               arr.push_back(scale_json(r));
           nlohmann::json j = workload_json(w);
           j["sweep"] = arr;
           ctx.out << j.dump(2) << "\n";
         } else {
           print_sweep(ctx, w, rows, gpus);
         }
       };
     },
     50});

}  // namespace
}  // namespace ftplan::cli
