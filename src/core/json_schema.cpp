#include "core/json_schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "core/error.hpp"

namespace ftplan {

namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 18> kKeywords = {
    "$schema",    "$id",         "$defs",
    "title",      "description", "type",
    "properties", "required",    "additionalProperties",
    "items",      "minItems",    "maxItems",
    "enum",       "const",       "minimum",
    "anyOf",      "$ref",        "examples"};

std::string type_of(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::null:
      return "null";
    default:
      return "unknown";
  }
}

bool has_type(const json& v, const std::string& want) {
  const std::string t = type_of(v);
  if (want == t) return true;
  // Every integer is a number; a float with no fraction is an integer (JSON does not tell them
  // apart).
  if (want == "number") return t == "integer";
  if (want == "integer" && t == "number") {
    const double d = v.get<double>();
    return d == static_cast<double>(static_cast<long long>(d));
  }
  return false;
}

std::string escape_pointer(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

const json* resolve_ref(const json& root, const std::string& ref) {
  constexpr std::string_view prefix = "#/$defs/";
  if (!ref.starts_with(prefix)) return nullptr;
  const std::string name = ref.substr(prefix.size());
  if (!root.contains("$defs") || !root["$defs"].contains(name)) return nullptr;
  return &root["$defs"][name];
}

void check_node(const json& node, const json& root, const std::string& file,
                const std::string& where) {
  if (node.is_boolean()) return;
  if (!node.is_object())
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: {}: a schema must be an object or a boolean", file, where),
                    file);
  for (const auto& [key, value] : node.items()) {
    if (std::find(kKeywords.begin(), kKeywords.end(), key) == kKeywords.end())
      throw UserError(
          ErrorCode::kUnsupported,
          fmt::format("{}: {}: keyword '{}' is not one the validator implements", file, where, key),
          file);
    if ((key == "minItems" || key == "maxItems") && !value.is_number_unsigned())
      throw UserError(ErrorCode::kBadFile,
                      fmt::format("{}: {}: {} must be a whole number at least 0, not {}", file,
                                  where, key, value.dump()),
                      file);
    if (key == "$ref" && (!value.is_string() || !resolve_ref(root, value.get<std::string>())))
      throw UserError(
          ErrorCode::kBadFile,
          fmt::format("{}: {}: $ref {} does not name an entry of $defs", file, where, value.dump()),
          file);
  }
  if (node.contains("properties"))
    for (const auto& [key, value] : node["properties"].items())
      check_node(value, root, file, where + "/properties/" + key);
  if (node.contains("$defs"))
    for (const auto& [key, value] : node["$defs"].items())
      check_node(value, root, file, where + "/$defs/" + key);
  if (node.contains("items")) check_node(node["items"], root, file, where + "/items");
  if (node.contains("additionalProperties"))
    check_node(node["additionalProperties"], root, file, where + "/additionalProperties");
  if (node.contains("anyOf"))
    for (std::size_t i = 0; i < node["anyOf"].size(); ++i)
      check_node(node["anyOf"][i], root, file, fmt::format("{}/anyOf/{}", where, i));
}

struct Validator {
  const json& root;
  std::size_t max;
  std::vector<SchemaViolation> out;

  void fail(const std::string& path, std::string message) {
    if (out.size() < max) out.push_back({path, std::move(message)});
  }

  void run(const json& doc, const json& schema, const std::string& path) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) fail(path, "no value is allowed here");
      return;
    }
    if (schema.contains("$ref")) {
      run(doc, *resolve_ref(root, schema["$ref"].get<std::string>()), path);
    }
    if (schema.contains("type")) {
      const json& t = schema["type"];
      bool ok = false;
      std::vector<std::string> wanted;
      for (const auto& one : t.is_array() ? t : json::array({t})) {
        wanted.push_back(one.get<std::string>());
        ok |= has_type(doc, wanted.back());
      }
      if (!ok) {
        fail(path, fmt::format("expected {}, got {}", fmt::join(wanted, " or "), type_of(doc)));
        return;
      }
    }
    if (schema.contains("enum") &&
        std::find(schema["enum"].begin(), schema["enum"].end(), doc) == schema["enum"].end())
      fail(path, fmt::format("{} is not one of {}", doc.dump(), schema["enum"].dump()));
    if (schema.contains("const") && doc != schema["const"])
      fail(path, fmt::format("expected {}, got {}", schema["const"].dump(), doc.dump()));
    if (schema.contains("minimum") && doc.is_number() &&
        doc.get<double>() < schema["minimum"].get<double>())
      fail(path, fmt::format("{} is below the minimum {}", doc.dump(), schema["minimum"].dump()));
    if (schema.contains("anyOf")) {
      bool any = false;
      for (const auto& alt : schema["anyOf"]) {
        Validator v{root, 1, {}};
        v.run(doc, alt, path);
        if (v.out.empty()) {
          any = true;
          break;
        }
      }
      if (!any) fail(path, "matches none of the alternatives (anyOf)");
    }
    if (doc.is_object()) {
      const json* props = schema.contains("properties") ? &schema["properties"] : nullptr;
      if (schema.contains("required"))
        for (const auto& key : schema["required"])
          if (!doc.contains(key.get<std::string>()))
            fail(path, fmt::format("required key '{}' is missing", key.get<std::string>()));
      for (const auto& [key, value] : doc.items()) {
        const std::string at = path + "/" + escape_pointer(key);
        if (props && props->contains(key)) {
          run(value, (*props)[key], at);
        } else if (schema.contains("additionalProperties")) {
          const json& extra = schema["additionalProperties"];
          if (extra.is_boolean() && !extra.get<bool>())
            fail(at, fmt::format("key '{}' is not in the schema", key));
          else
            run(value, extra, at);
        }
      }
    }
    if (doc.is_array() && schema.contains("minItems") &&
        doc.size() < schema["minItems"].get<std::size_t>())
      fail(path, fmt::format("{} items, fewer than {}", doc.size(),
                             schema["minItems"].get<std::size_t>()));
    if (doc.is_array() && schema.contains("maxItems") &&
        doc.size() > schema["maxItems"].get<std::size_t>())
      fail(path, fmt::format("{} items, more than {}", doc.size(),
                             schema["maxItems"].get<std::size_t>()));
    if (doc.is_array() && schema.contains("items"))
      for (std::size_t i = 0; i < doc.size(); ++i)
        run(doc[i], schema["items"], fmt::format("{}/{}", path, i));
  }
};

}  // namespace

void check_schema(const json& schema, const std::string& file) {
  check_node(schema, schema, file, "#");
}

std::vector<SchemaViolation> validate_json(const json& doc, const json& schema, std::size_t max) {
  Validator v{schema, max, {}};
  v.run(doc, schema, "");
  return std::move(v.out);
}

}  // namespace ftplan
