// A validator for the part of JSON Schema (2020-12) that ftplan's output schemas use: type (one or
// a list), properties, required, additionalProperties (true, false or a schema), items, enum,
// const, minimum, anyOf, and $ref to "#/$defs/NAME". Keywords outside this set are refused when
// the schema is checked, so a schema never claims more than is validated.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ftplan {

// One place where a document breaks its schema: "/runs/0/memory_GB: expected number, got string".
struct SchemaViolation {
  std::string path;  // JSON pointer into the document ("" for the root)
  std::string message;
};

// Throws a UserError (field `file`) naming the keyword when `schema` uses one this validator does
// not implement, or a $ref that does not resolve.
void check_schema(const nlohmann::json& schema, const std::string& file);

// Every violation of `doc` against `schema` (empty when it conforms); at most `max` are listed.
std::vector<SchemaViolation> validate_json(const nlohmann::json& doc, const nlohmann::json& schema,
                                           std::size_t max = 20);

}  // namespace ftplan
