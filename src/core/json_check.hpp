// Checks on a JSON text before it is parsed: nesting no deeper than a bound (a parse, a dump or a
// copy of the value then never runs deep) and no key twice in one object (a JSON parser keeps one
// of them silently). Both errors name the file (or request part), the key and its lines.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace ftplan {

inline constexpr std::size_t kMaxJsonDepth = 64;

// Throws a UserError when `text` nests objects and arrays deeper than `max_depth` (field `field`)
// or repeats a key within one object (field: the key). Other syntax errors are left to the parser.
void check_json_text(std::string_view text, const std::string& file, const std::string& field,
                     std::size_t max_depth = kMaxJsonDepth);

// A value for an error message: a scalar as JSON (cut to 60 bytes on a character boundary), an
// object or a list by its kind and size, never its whole content.
std::string describe_json_value(const nlohmann::json& value);

}  // namespace ftplan
