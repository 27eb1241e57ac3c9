// `ftplan params` with safetensors headers at hand: the checkpoint's stored inventory (bytes as
// stored, dtypes, quantization found) and its cross-check against config.json, as text and JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include "model/checkpoint.hpp"

namespace ftplan {

// `check`: null when the model was counted from the checkpoint itself (nothing to compare).
// `note`: the model's note (why it was counted from the headers), printed when not empty.
void print_checkpoint(std::ostream& out, const CheckpointInventory& inv, const std::string& origin,
                      const CheckpointCheck* check, const std::string& note);
nlohmann::json checkpoint_json(const CheckpointInventory& inv, const std::string& origin,
                               const CheckpointCheck* check, const std::string& note);

}  // namespace ftplan
