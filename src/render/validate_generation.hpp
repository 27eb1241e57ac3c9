// Rendering of the generation model against published serving measurements (`ftplan validate`):
// per row the measured and predicted KV cache tokens, memory split and time per output token, the
// rows not predicted, and the error summaries.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

#include "infer/measured_generation.hpp"

namespace ftplan {

void print_generation_validation(std::ostream& out, const GenerationValidationReport& r);
nlohmann::json generation_validation_json(const GenerationValidationReport& r);

}  // namespace ftplan
