// Strict reading of YAML (and JSON, which YAML parses too) documents: every key is either read or
// reported as unknown, every value is checked for type and range, and every error names the file,
// the key path and the line. Used by all data-file and input-file parsers.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ftplan {

// Parses a whole document; a syntax error becomes a UserError naming the file and line.
YAML::Node parse_yaml_document(std::string_view text, const std::string& file);

class StrictMap {
 public:
  // `path` is the dotted key path of this map inside the document ("" for the root).
  StrictMap(YAML::Node node, std::string file, std::string path);

  bool has(std::string_view key) const;
  // A key present with value null ("~" or "null").
  bool is_null(std::string_view key) const;

  std::string required_string(std::string_view key);
  std::optional<std::string> optional_string(std::string_view key);
  double required_number(std::string_view key, double min, double max);
  std::optional<double> optional_number(std::string_view key, double min, double max);
  long long required_integer(std::string_view key, long long min, long long max);
  std::optional<long long> optional_integer(std::string_view key, long long min, long long max);
  // Keys that must be present but may be null (results files write null for "not measured").
  std::optional<std::string> nullable_string(std::string_view key);
  std::optional<double> nullable_number(std::string_view key, double min, double max);
  // Text that may be empty ("filter": "").
  std::string any_string(std::string_view key);
  bool required_bool(std::string_view key);
  std::optional<bool> optional_bool(std::string_view key);
  // One string, or a list of strings.
  std::vector<std::string> string_list(std::string_view key, bool required);
  std::vector<long long> integer_list(std::string_view key, long long min, long long max);
  // One of `allowed`; the error names the closest valid choice.
  std::string required_choice(std::string_view key, const std::vector<std::string>& allowed);
  std::optional<std::string> optional_choice(std::string_view key,
                                             const std::vector<std::string>& allowed);

  StrictMap required_map(std::string_view key);
  std::optional<StrictMap> optional_map(std::string_view key);
  // Each element must be a map.
  std::vector<StrictMap> map_list(std::string_view key, bool required);
  YAML::Node raw(std::string_view key);  // marks the key as read; the caller validates

  // Reports the first key that was never read (with the closest known key as a hint).
  void finish() const;

  [[noreturn]] void fail(std::string_view key, const std::string& what) const;
  std::string where(std::string_view key) const;  // "file: key 'a.b' (line N)"
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }

 private:
  YAML::Node get(std::string_view key);
  YAML::Node need(std::string_view key);
  std::string key_path(std::string_view key) const;

  // The value of `key` (the first one, as yaml-cpp reads it), or null: yaml-cpp finds a key by
  // walking the whole map, so each map is walked once, here, into an index.
  const YAML::Node* find(std::string_view key) const;

  YAML::Node node_;
  std::string file_;
  std::string path_;
  std::map<std::string, YAML::Node, std::less<>> values_;  // scalar key -> value
  std::set<std::string, std::less<>> read_;
};

// The scalar text of a node for messages, shortened.
std::string describe_node(const YAML::Node& node);

}  // namespace ftplan
