// Short labels that head the text output and appear in JSON: a run's title, where an efficiency
// table comes from.
#pragma once

#include <string>

#include "perf/efficiency.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// "Llama 3.1 8B · LoRA r16 (q,k,v,o,gate,up,down) · adamw": the run as the text output heads it.
std::string run_title(const Workload& w);

// "NVIDIA H200 NVL: default efficiencies" / "...: calibrated (FILE, measurement)".
std::string efficiency_label(const EfficiencyTable& e);

}  // namespace ftplan
