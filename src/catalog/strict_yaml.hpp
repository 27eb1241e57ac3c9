// Strict reading of YAML (and JSON, which YAML parses too) documents: every key is either read or
// reported as unknown, every value is checked for type and range, and every error names the file,
// the key path and the line. Used by all data-file and input-file parsers.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace ftplan {

// A value of a parsed document: a yaml-cpp node (a user's file), or a node of a built-in file's
// preparsed form (catalog/preparsed_yaml.hpp), read in place: building yaml-cpp nodes costs more
// than a CLI call's whole work.
struct DocEntry;
class DocValue {
 public:
  DocValue() = default;  // absent
  explicit DocValue(YAML::Node node);
  static DocValue in_form(std::string_view form);  // the node `form` starts with

  bool defined() const;
  bool is_null() const;
  bool is_scalar() const;
  bool is_sequence() const;
  bool is_map() const;
  std::string_view scalar() const;  // empty unless a scalar
  int line() const;                 // 1-based; 0 when unknown (preparsed forms keep no lines)

  using Entry = DocEntry;
  std::vector<DocValue> items() const;  // a list's items (none otherwise)
  std::vector<Entry> entries() const;   // a map's entries in order (none otherwise)
  YAML::Node yaml() const;              // as a yaml-cpp node (built for a preparsed value)

 private:
  enum class Kind : char { kAbsent, kYaml, kForm };
  Kind kind_ = Kind::kAbsent;
  YAML::Node node_;        // kYaml
  std::string_view form_;  // kForm: from the node to the end of the whole form
  char form_kind() const { return form_.empty() ? 0 : form_.front(); }
};

// An entry of a map.
struct DocEntry {
  std::string_view key;  // empty when the key is not text
  bool key_is_text;
  DocValue value;
};

// Parses a whole document; a syntax error becomes a UserError naming the file and line.
YAML::Node parse_yaml_document(std::string_view text, const std::string& file);
// The same, as a DocValue: a built-in file's preparsed form is read in place.
DocValue parse_document(std::string_view text, const std::string& file);

class StrictMap {
 public:
  // `path` is the dotted key path of this map inside the document ("" for the root).
  StrictMap(DocValue node, std::string file, std::string path);
  StrictMap(YAML::Node node, std::string file, std::string path)
      : StrictMap(DocValue(std::move(node)), std::move(file), std::move(path)) {}

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
  DocValue value(std::string_view key);  // the same, without building a yaml-cpp node
  // Marks `key` as one this map may have (for the hint on a misspelt key) without reading it.
  void known(std::string_view key);
  // The value of `key` is text (a scalar), without reading it.
  bool is_scalar(std::string_view key) const;
  // Where `alias` is another name for `key` (seq_max for seq): the one of the two the map gives
  // (`key` when neither); both given is an error at the alias.
  std::string_view key_or_alias(std::string_view key, std::string_view alias) const;
  std::vector<std::string> keys() const;  // the text keys, in the file's order
  int line() const;                       // the map's line (1-based); 0 when unknown

  // Reports the first key that was never read (with the closest known key as a hint).
  void finish() const;

  [[noreturn]] void fail(std::string_view key, const std::string& what) const;
  // Runs `f`; a UserError it throws is re-thrown naming the file, the key and its line.
  template <class F>
  auto at_key(std::string_view key, F f) -> decltype(f()) {
    try {
      return f();
    } catch (const UserError& e) {
      fail(key, e.what());
    }
  }
  std::string where(std::string_view key) const;  // "file: key 'a.b' (line N)"
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

 private:
  DocValue get(std::string_view key);
  DocValue need(std::string_view key);
  std::string key_path(std::string_view key) const;

  // The entry of `key` (the first one, as yaml-cpp reads it), or null: yaml-cpp finds a key by
  // walking the whole map, so each map is walked once, here, into an index.
  const DocValue::Entry* find(std::string_view key) const;
  std::size_t index_of(const DocValue::Entry* entry) const {
    return static_cast<std::size_t>(entry - entries_.data());
  }

  DocValue node_;
  std::string file_;
  std::string path_;
  std::vector<DocValue::Entry> entries_;  // in the file's order
  std::vector<std::uint32_t> sorted_;     // entries_ with a text key, by key
  std::vector<char> read_;                // per entry of entries_: read
  std::vector<std::string> absent_read_;  // keys read that the map does not have
};

// The scalar text of a node for messages, shortened.
std::string describe_node(const YAML::Node& node);
std::string describe_node(const DocValue& value);

}  // namespace ftplan
