// Text rendering of `ftplan validate`: the memory model's predicted peak against each published
// measurement, the runs it does not cover, and the error per source.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "memory/measured_runs.hpp"
#include "plan/online_validation.hpp"
#include "plan/throughput.hpp"

namespace ftplan {

// `file`: the path of the measured-runs file the report was made from.
void print_validation(std::ostream& out, const std::string& file, const ValidationReport& r);

}  // namespace ftplan

namespace ftplan {

// The step model against the runs' measured speeds: per run the measured and predicted tokens
// per second per card, in sample and leave-one-source-out, the runs not compared, and the
// summary with the fitted constants.
void print_throughput_validation(std::ostream& out, const ThroughputReport& r);
nlohmann::json throughput_json(const ThroughputReport& r);
// Online runs (GRPO, PPO, RLOO): the whole step against the published step time, with its parts.
void print_online_validation(std::ostream& out, const OnlineReport& r);
nlohmann::json online_json(const OnlineReport& r);

}  // namespace ftplan
