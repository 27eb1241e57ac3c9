// `ftplan gpus --detect`: the cards of the local machine, as text and as JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

#include "catalog/smi_csv.hpp"

namespace ftplan {

void print_detected(std::ostream& out, const DetectedMachine& machine);
nlohmann::json detected_json(const DetectedMachine& machine);

}  // namespace ftplan
