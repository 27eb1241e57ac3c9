#include "plan/fleet.hpp"

#include "mig/layout.hpp"
#include "mig/rules.hpp"

namespace ftplan {

std::vector<FleetEntry> plan_fleet(const std::vector<RunPlan>& runs, const RunsFile& file,
                                   const PlanningData& data) {
  std::vector<FleetEntry> fleet;
  const MigRules rules = load_mig_rules(*data.catalog);
  for (const GpuSpec* gpu : file.gpus) {
    FleetEntry f;
    f.gpu = gpu;
    std::vector<PackJob> jobs;
    for (const auto& rp : runs) {
      const RunPlan::PerGpu* pg = nullptr;
      for (const auto& each : rp.per_gpu)
        if (each.gpu == gpu) pg = &each;
      if (!pg || !pg->minimum) {
        f.unplaced.push_back(rp.run->name);
        continue;
      }
      if (pg->minimum->count == 1) {
        Workload w =
            rp.run->with_recompute(planned_workload(*rp.run, data), pg->minimum->recompute);
        w.micro_batch = pg->minimum->micro_batch;
        jobs.push_back({rp.run->name, w, rp.run->count});
        f.cards_without_mig += rp.run->count;
      } else {
        f.multi_card_runs_cards += pg->minimum->count * rp.run->count;
      }
    }
    if (!jobs.empty() && file.allow_mig && gpu->mig.supported) {
      const PackResult packed = pack(jobs, make_mig_card(*gpu), rules);
      f.mig_cards = packed.total_cards();
    } else {
      f.mig_cards = f.cards_without_mig;
    }
    f.cards_without_mig += f.multi_card_runs_cards;
    f.cards = f.mig_cards + f.multi_card_runs_cards;
    fleet.push_back(std::move(f));
  }
  return fleet;
}

}  // namespace ftplan
