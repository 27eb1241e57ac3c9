// Reads a Hugging Face config.json (text) into a ModelArch, strictly: a malformed file, an
// unsupported architecture or a missing structural key is a UserError naming file, key and value.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "model/architecture.hpp"

namespace ftplan {

// `file` names the source in messages; `id` becomes ModelArch::id.
ModelArch read_hf_config(std::string_view json_text, const std::string& file,
                         const std::string& id);

// A config.json's text as its top-level object: duplicate keys, depth and UTF-8 checked; a file
// that is not a JSON object is a UserError naming it.
nlohmann::json parse_config_object(std::string_view json_text, const std::string& file);

// The model_type values read_hf_config understands.
const std::vector<std::string>& supported_model_types();

}  // namespace ftplan
