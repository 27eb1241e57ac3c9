// ftplan scale: a run on several cards — strategy, bytes per card, link time, exposed time,
// scaling.
#include <fmt/format.h>

#include <cmath>

#include "cli/cli.hpp"
#include "cli/from_files.hpp"
#include "cli/options.hpp"
#include "cli/perf_options.hpp"
#include "core/error.hpp"
#include "parallel/layout.hpp"
#include "plan/evaluate.hpp"
#include "render/comm_json.hpp"
#include "render/json.hpp"
#include "render/scale_text.hpp"
#include "workload/objective.hpp"

namespace ftplan::cli {
namespace {

struct ScaleOptions {
  WorkloadOptions workload;
  LayoutOptions layout;
  std::vector<std::string> gpus;
  int count = 2;
  std::string shard = "auto";
  int shard_group = 0;
  std::string topology;
  double network_GBps = 0;
  int cards_per_node = 0;
  std::string network;
  int nics_per_node = 0;
  int nodes = 0;
  std::string p2p = "auto";
  double power_limit_W = 0;
  bool sweep = false;
  bool json = false;
  CalibrationOptions calibration;
};

// --shard auto: replicate (DDP) when one replica fits a card, else shard everything (FSDP);
// under a model-parallel layout, layout_sharding (ZeRO-1 for a full fine-tune, else DDP).
Sharding choose_sharding(const std::string& shard, const Workload& w, const ModelStates& replica,
                         const GpuSpec& gpu, int count, const Layout& layout) {
  if (count <= 1) return Sharding::kNone;
  if (shard != "auto") return parse_sharding(shard, "shard");
  Placement p;
  p.gpu = &gpu;
  p.count = count;
  p.layout = layout;
  return auto_sharding(w, replica, p);
}

ScaleResult evaluate(const ScaleOptions& o, const Workload& w, const ModelStates& replica,
                     const StepOps& ops, const GpuSpec& gpu, int count, const PlanningData& data) {
  Placement p;
  p.gpu = &gpu;
  p.count = count;
  p.sharding = choose_sharding(o.shard, w, replica, gpu, count, o.layout.layout);
  p.topology = o.topology;
  p.power_limit_W = o.power_limit_W;
  p.layout = o.layout.layout;
  p.shard_group = o.shard_group;
  validate(p);
  check_layout(w, p);
  NodeOptions nodes;
  nodes.network = o.network;
  nodes.nics_per_node = o.nics_per_node;
  nodes.network_GBps_per_node = o.network_GBps;
  nodes.cards_per_node = o.cards_per_node;
  const Topology t =
      build_topology(gpu, count, o.topology, data.comm, nodes, parse_p2p(o.p2p, "p2p"));
  p.topology = t.preset;
  resolve_shard_group(p, t.cards_per_node);
  check_shard_group(p);
  return evaluate_placement(w, replica, ops, p, t, data);
}

const bool registered_scale = register_command(
    {"scale",
     "Several cards: strategy, bytes per card, link time, exposed time, scaling (NVLink vs PCIe)",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<ScaleOptions>();
       o->workload.add_to(app);
       o->layout.add_to(app);
       app.add_option("--gpu", o->gpus, "GPU id (twice with --sweep: two cards side by side)")
           ->required();
       CLI::Option* count_option = app.add_option(
           "--gpus", o->count, "Number of cards (default 2; with --gpu local: the machine's)");
       app.add_option("--shard", o->shard,
                      "auto | none | ddp | zero1 | zero2 | fsdp | hsdp (default auto: DDP when a "
                      "replica fits one card, "
                      "else FSDP — for LoRA/QLoRA a sharded frozen base; under --tp/--pp/--cp/--ep "
                      "ZeRO-1 for a full fine-tune, else DDP)");
       app.add_option("--shard-group", o->shard_group, kShardGroupHelp);
       app.add_option("--topology", o->topology,
                      "pcie | nvlink-bridge-2 | nvlink-bridge-4 | nvswitch (default: the best the "
                      "card supports)");
       app.add_option(
           "--network-GBps,--network-gbps", o->network_GBps,
           "Network bandwidth per node and direction for runs beyond one node (default from data)");
       app.add_option("--cards-per-node", o->cards_per_node, "Cards per node (default 8)");
       app.add_option("--network", o->network,
                      "Node network from data/comm/networks.yaml (ib-ndr-400, roce-400, efa-p5, "
                      "...; default: one 400 Gb/s NIC per node)");
       app.add_option("--nics-per-node", o->nics_per_node,
                      "NICs per node (default: the network's)");
       CLI::Option* nodes_option =
           app.add_option("--nodes", o->nodes, "Number of nodes: cards = nodes x cards per node");
       app.add_option("--power-limit", o->power_limit_W,
                      "Cap each card at this many watts (nvidia-smi -pl): tensor and vector rates "
                      "follow the lower sustained clock (default: the card's TDP)");
       app.add_option("--p2p", o->p2p,
                      "auto | on | off: PCIe peer-to-peer between the cards (default auto: as the "
                      "card's data says; off stages traffic through host memory)");
       app.add_flag("--sweep", o->sweep, "Sweep N = 1, 2, 4, 8 (for each --gpu)");
       app.add_flag("--json", o->json, "Print JSON");
       o->calibration.add_to(app);
       return [&ctx, o, count_option, nodes_option] {
         Workload w = o->workload.build(ctx);
         // --gpu local without --gpus: the machine's own count.
         if (o->gpus.size() == 1 && Context::is_local_gpu(o->gpus[0]) && count_option->count() == 0)
           o->count = ctx.local_card(o->gpus[0]).count();
         if (nodes_option->count() > 0) {
           if (o->nodes < 1 || o->nodes > 65536)
             throw UserError(
                 ErrorCode::kInvalidValue,
                 fmt::format("number of nodes must be a whole number from 1 to 65536, got {}",
                             o->nodes),
                 "nodes");
           if (o->sweep)
             throw UserError(ErrorCode::kInvalidValue,
                             "--nodes sets the card count; --sweep sweeps it: give one", "nodes");
         }
         if (!(o->network_GBps >= 0 && std::isfinite(o->network_GBps)) || o->cards_per_node < 0 ||
             o->nics_per_node < 0)
           throw UserError(ErrorCode::kInvalidValue,
                           "--network-GBps, --cards-per-node and --nics-per-node must be positive",
                           "network_GBps");
         // A layout without --gpus: the fewest cards it runs on (Layout::min_cards).
         if (!o->layout.layout.trivial() && count_option->count() == 0)
           o->count = o->layout.layout.min_cards();
         if (o->sweep && !o->layout.layout.trivial())
           throw UserError(ErrorCode::kInvalidValue,
                           "--sweep doubles the cards of a data-parallel run; give the layout's "
                           "cards with --gpus instead",
                           "sweep");
         if (o->count < 1 || o->count > 65536)
           throw UserError(
               ErrorCode::kInvalidValue,
               fmt::format("number of GPUs must be a whole number from 1 to 65536, got {}",
                           o->count),
               "gpus");
         if (!o->sweep && o->gpus.size() > 1)
           throw UserError(ErrorCode::kInvalidValue, "give one --gpu, or two with --sweep", "gpu");
         std::vector<const GpuSpec*> gpus;
         for (const auto& id : o->gpus) {
           gpus.push_back(&ctx.resolve_gpu(id));
           require_training_format(*gpus.back(), w.precision, load_training_formats(ctx.catalog()));
         }
         Calibrations cal = o->calibration.load(ctx);
         const PlanningData data =
             PlanningData::load(ctx.catalog(), std::move(cal.efficiency), std::move(cal.links));
         if (!o->network.empty() && !data.comm.network(o->network))
           throw_unknown_name("network", "network", o->network, data.comm.network_names());
         if (nodes_option->count() > 0) {
           // --nodes N: N x the node's cards; --gpus, if given, must agree.
           const int per_node = node_size(data.comm, o->topology, o->cards_per_node);
           const long long cards = static_cast<long long>(o->nodes) * per_node;
           if (cards > 65536)
             throw UserError(ErrorCode::kInvalidValue,
                             fmt::format("{} nodes of {} cards are {} cards, more than 65536",
                                         o->nodes, per_node, cards),
                             "nodes");
           if (count_option->count() > 0 && o->count != cards)
             throw UserError(
                 ErrorCode::kInvalidValue,
                 fmt::format("--nodes {} with {} cards per node is {} cards, but --gpus says {}; "
                             "give one of them, or set --cards-per-node",
                             o->nodes, per_node, cards, o->count),
                 "nodes");
           o->count = static_cast<int>(cards);
         }
         // An online objective's gradient accumulation follows from its prompts per step and
         // the data-parallel cards (resolve_rollout_batch): per card count.
         auto resolved = [&](int count) {
           Workload each = w;
           Placement at;
           at.count = count;
           at.layout = o->layout.layout;
           o->workload.resolve_rollouts(each, at);
           return each;
         };
         if (!o->sweep) w = resolved(o->count);
         const ModelStates replica = model_states(w);
         const StepOps ops = build_step_ops(w);
         if (!o->sweep) {
           if (o->count == 1 && o->shard != "auto" &&
               parse_sharding(o->shard, "shard") > Sharding::kDdp)
             warn_one_card_sharding(ctx, o->shard);
           const ScaleResult r = evaluate(*o, w, replica, ops, *gpus[0], o->count, data);
           if (o->json) {
             nlohmann::json j = workload_json(w);
             j.update(scale_json(r));
             print_json(ctx, "scale", std::move(j));
           } else {
             print_scale(ctx.out, w, r);
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
             if (is_online(w)) {
               const Workload at = resolved(n);
               rows[g].push_back(
                   evaluate(each, at, replica, build_step_ops(at), *gpus[g], n, data));
               continue;
             }
             rows[g].push_back(evaluate(each, w, replica, ops, *gpus[g], n, data));
           }
         if (o->json) {
           nlohmann::json arr = nlohmann::json::array();
           for (const auto& row : rows)
             for (const auto& r : row)
               arr.push_back(scale_json(r));
           nlohmann::json j = workload_json(w);
           j["sweep"] = arr;
           print_json(ctx, "scale-sweep", std::move(j));
         } else {
           print_scale_sweep(ctx.out, w, rows, gpus);
         }
       };
     },
     50});

}  // namespace
}  // namespace ftplan::cli
