#include "catalog/strict_yaml.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <map>

#include "catalog/preparsed_yaml.hpp"
#include "core/error.hpp"
#include "core/utf8.hpp"

namespace ftplan {

namespace {

constexpr int kMaxYamlDepth = 64;

// Every map of `node` and below: no key twice (yaml-cpp keeps both and reads the first), nesting
// no deeper than kMaxYamlDepth.
void check_yaml_keys(const YAML::Node& node, const std::string& file, int depth) {
  if (depth > kMaxYamlDepth)
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: nests maps and lists deeper than {} levels (line {})", file,
                                kMaxYamlDepth, node.Mark().line + 1),
                    file);
  if (node.IsSequence()) {
    for (const auto& item : node)
      check_yaml_keys(item, file, depth + 1);
  } else if (node.IsMap()) {
    std::map<std::string, int, std::less<>> seen;  // key -> line
    for (const auto& kv : node) {
      if (kv.first.IsScalar()) {
        const int line = kv.first.Mark().line + 1;
        auto [it, added] = seen.emplace(kv.first.Scalar(), line);
        if (!added)
          throw UserError(ErrorCode::kBadFile,
                          fmt::format("{}: key '{}' appears twice in one map (lines {} and {}); "
                                      "keep one",
                                      file, cut_utf8(kv.first.Scalar(), 60), it->second, line),
                          kv.first.Scalar());
      }
      check_yaml_keys(kv.second, file, depth + 1);
    }
  }
}

}  // namespace

YAML::Node parse_yaml_document(std::string_view text, const std::string& file) {
  // A built-in file: parsed and checked at build time.
  if (const std::string_view form = preparsed_form(text); !form.empty())
    return node_from_preparsed(form);
  if (const std::size_t bad = first_invalid_utf8(text); bad != std::string_view::npos)
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: not UTF-8 text: byte {} ({}) does not start or continue a "
                                "UTF-8 character; save the file as UTF-8",
                                file, bad, line_and_column(text, bad)),
                    file);
  YAML::Node node;
  try {
    node = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("{}: not valid YAML/JSON at line {}, column {}: {}", file,
                                e.mark.line + 1, e.mark.column + 1, cut_utf8(e.msg, 200)),
                    file);
  }
  check_yaml_keys(node, file, 0);
  return node;
}

std::string describe_node(const YAML::Node& node) {
  if (!node.IsDefined()) return "nothing";
  if (node.IsNull()) return "null";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  std::string s = node.Scalar();
  return fmt::format("'{}'", cut_utf8(s, 57));
}

StrictMap::StrictMap(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {
  if (!node_.IsMap()) {
    std::string where_text = path_.empty() ? file_ : fmt::format("{}: key '{}'", file_, path_);
    throw UserError(
        ErrorCode::kBadFile,
        fmt::format("{}: expected a map of keys, got {}", where_text, describe_node(node_)),
        path_.empty() ? file_ : path_);
  }
  for (const auto& kv : node_)
    if (kv.first.IsScalar()) values_.emplace(kv.first.Scalar(), kv.second);
}

const YAML::Node* StrictMap::find(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

std::string StrictMap::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

std::string StrictMap::where(std::string_view key) const {
  // The key's line, or, for a key that is absent, the line where its map starts.
  YAML::Mark mark = node_.Mark();
  if (const YAML::Node* value = find(key)) mark = value->Mark();
  if (mark.is_null()) return fmt::format("{}: key '{}'", file_, key_path(key));
  return fmt::format("{}: key '{}' (line {})", file_, key_path(key), mark.line + 1);
}

void StrictMap::fail(std::string_view key, const std::string& what) const {
  throw UserError(ErrorCode::kInvalidValue, fmt::format("{}: {}", where(key), what), key_path(key));
}

bool StrictMap::has(std::string_view key) const {
  return find(key) != nullptr;
}

bool StrictMap::is_null(std::string_view key) const {
  const YAML::Node* value = find(key);
  return value && value->IsNull();
}

YAML::Node StrictMap::get(std::string_view key) {
  read_.insert(std::string(key));
  if (const YAML::Node* value = find(key)) return *value;
  return YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node StrictMap::need(std::string_view key) {
  YAML::Node n = get(key);
  if (!n.IsDefined()) {
    // A misspelt key is the usual cause: name it.
    std::vector<std::string> present;
    for (const auto& kv : node_)
      if (kv.first.IsScalar() && !read_.count(kv.first.Scalar()))
        present.push_back(kv.first.Scalar());
    auto near = closest_names(key, present, 1);
    std::string hint = near.empty()
                           ? ""
                           : fmt::format("; the map has an unknown key '{}' — did you mean '{}'?",
                                         near.front(), key);
    // The line of the map the key belongs in (a missing key has none of its own).
    const YAML::Mark mark = node_.Mark();
    const std::string line =
        mark.is_null() ? "" : fmt::format(" (in the map at line {})", mark.line + 1);
    throw UserError(
        ErrorCode::kMissingKey,
        fmt::format("{}: required key '{}' is missing{}{}", file_, key_path(key), hint, line),
        key_path(key));
  }
  return n;
}

namespace {

std::optional<double> scalar_number(const YAML::Node& n) {
  if (!n.IsScalar()) return std::nullopt;
  const std::string& s = n.Scalar();
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::string StrictMap::required_string(std::string_view key) {
  YAML::Node n = need(key);
  if (!n.IsScalar() || n.Scalar().empty())
    fail(key, fmt::format("expected text, got {}", describe_node(n)));
  return n.Scalar();
}

std::optional<std::string> StrictMap::optional_string(std::string_view key) {
  if (!has(key) || is_null(key)) {
    get(key);
    return std::nullopt;
  }
  return required_string(key);
}

double StrictMap::required_number(std::string_view key, double min, double max) {
  YAML::Node n = need(key);
  auto v = scalar_number(n);
  if (!v) fail(key, fmt::format("expected a number, got {}", describe_node(n)));
  if (*v < min || *v > max)
    fail(key, fmt::format("expected a number from {} to {}, got {}", min, max, *v));
  return *v;
}

std::optional<double> StrictMap::optional_number(std::string_view key, double min, double max) {
  if (!has(key) || is_null(key)) {
    get(key);
    return std::nullopt;
  }
  return required_number(key, min, max);
}

long long StrictMap::required_integer(std::string_view key, long long min, long long max) {
  YAML::Node n = need(key);
  long long v = 0;
  bool ok = false;
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    ok = ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
  }
  if (!ok) fail(key, fmt::format("expected a whole number, got {}", describe_node(n)));
  if (v < min || v > max)
    fail(key, fmt::format("expected a whole number from {} to {}, got {}", min, max, v));
  return v;
}

std::optional<long long> StrictMap::optional_integer(std::string_view key, long long min,
                                                     long long max) {
  if (!has(key) || is_null(key)) {
    get(key);
    return std::nullopt;
  }
  return required_integer(key, min, max);
}

std::optional<std::string> StrictMap::nullable_string(std::string_view key) {
  need(key);
  return optional_string(key);
}

std::optional<double> StrictMap::nullable_number(std::string_view key, double min, double max) {
  need(key);
  return optional_number(key, min, max);
}

std::string StrictMap::any_string(std::string_view key) {
  YAML::Node n = need(key);
  if (!n.IsScalar()) fail(key, fmt::format("expected text, got {}", describe_node(n)));
  return n.Scalar();
}

bool StrictMap::required_bool(std::string_view key) {
  YAML::Node n = need(key);
  if (n.IsScalar()) {
    const std::string& s = n.Scalar();
    if (s == "true") return true;
    if (s == "false") return false;
  }
  fail(key, fmt::format("expected true or false, got {}", describe_node(n)));
}

std::optional<bool> StrictMap::optional_bool(std::string_view key) {
  if (!has(key) || is_null(key)) {
    get(key);
    return std::nullopt;
  }
  return required_bool(key);
}

std::vector<std::string> StrictMap::string_list(std::string_view key, bool required) {
  YAML::Node n = required ? need(key) : get(key);
  std::vector<std::string> out;
  if (!n.IsDefined() || n.IsNull()) return out;
  if (n.IsScalar()) {
    out.push_back(n.Scalar());
  } else if (n.IsSequence()) {
    for (const auto& item : n) {
      if (!item.IsScalar() || item.Scalar().empty())
        fail(key, fmt::format("expected a list of text values, found {}", describe_node(item)));
      out.push_back(item.Scalar());
    }
  } else {
    fail(key, fmt::format("expected text or a list of text values, got {}", describe_node(n)));
  }
  return out;
}

std::vector<long long> StrictMap::integer_list(std::string_view key, long long min, long long max) {
  YAML::Node n = need(key);
  if (!n.IsSequence())
    fail(key, fmt::format("expected a list of whole numbers, got {}", describe_node(n)));
  std::vector<long long> out;
  for (const auto& item : n) {
    long long v = 0;
    bool ok = false;
    if (item.IsScalar()) {
      const std::string& s = item.Scalar();
      auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      ok = ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
    }
    if (!ok || v < min || v > max)
      fail(key, fmt::format("expected whole numbers from {} to {}, found {}", min, max,
                            describe_node(item)));
    out.push_back(v);
  }
  return out;
}

std::string StrictMap::required_choice(std::string_view key,
                                       const std::vector<std::string>& allowed) {
  std::string v = required_string(key);
  for (const auto& a : allowed)
    if (a == v) return v;
  try {
    throw_unknown_name("value", key_path(key), v, allowed);
  } catch (const UserError& e) {
    throw UserError(ErrorCode::kUnknownName, fmt::format("{}: {}", where(key), e.what()),
                    key_path(key));
  }
}

std::optional<std::string> StrictMap::optional_choice(std::string_view key,
                                                      const std::vector<std::string>& allowed) {
  if (!has(key) || is_null(key)) {
    get(key);
    return std::nullopt;
  }
  return required_choice(key, allowed);
}

StrictMap StrictMap::required_map(std::string_view key) {
  YAML::Node n = need(key);
  if (!n.IsMap()) fail(key, fmt::format("expected a map of keys, got {}", describe_node(n)));
  return StrictMap(n, file_, key_path(key));
}

std::optional<StrictMap> StrictMap::optional_map(std::string_view key) {
  if (!has(key)) {
    get(key);
    return std::nullopt;
  }
  return required_map(key);
}

std::vector<StrictMap> StrictMap::map_list(std::string_view key, bool required) {
  YAML::Node n = required ? need(key) : get(key);
  std::vector<StrictMap> out;
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence()) fail(key, fmt::format("expected a list, got {}", describe_node(n)));
  std::size_t i = 0;
  for (const auto& item : n) {
    std::string p = fmt::format("{}[{}]", key_path(key), i++);
    if (!item.IsMap())
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("{}: key '{}': expected a map of keys, got {}", file_, p,
                                  describe_node(item)),
                      p);
    out.emplace_back(item, file_, p);
  }
  return out;
}

YAML::Node StrictMap::raw(std::string_view key) {
  return get(key);
}

void StrictMap::finish() const {
  std::vector<std::string> known(read_.begin(), read_.end());
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar())
      throw UserError(ErrorCode::kBadFile,
                      fmt::format("{}: a key under '{}' is not text", file_, path_), path_);
    const std::string& k = kv.first.Scalar();
    if (read_.count(k)) continue;
    auto near = closest_names(k, known, 1);
    std::string hint = near.empty() ? "" : fmt::format("; did you mean '{}'?", near.front());
    throw UserError(ErrorCode::kUnknownName,
                    fmt::format("{}: unknown key '{}'{}", where(k), key_path(k), hint), key_path(k),
                    std::move(near));
  }
}

}  // namespace ftplan
