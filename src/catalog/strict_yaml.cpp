#include "catalog/strict_yaml.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>

#include "catalog/preparsed_yaml.hpp"
#include "core/chars.hpp"
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

DocValue parse_document(std::string_view text, const std::string& file) {
  // A built-in file: its form was made by the build, and the tests hold every embedded form to
  // its file's text (tests/test_preparsed_yaml.cpp), so it is not walked again here.
  if (const std::string_view form = preparsed_form(text); !form.empty())
    return DocValue::in_form(form);
  return DocValue(parse_yaml_document(text, file));
}

DocValue::DocValue(YAML::Node node) : kind_(Kind::kYaml), node_(std::move(node)) {
  if (!node_.IsDefined()) kind_ = Kind::kAbsent;
}

DocValue DocValue::in_form(std::string_view form) {
  form_node_at(form, 0);  // checks the header
  DocValue v;
  v.kind_ = Kind::kForm;
  v.form_ = form;
  return v;
}

bool DocValue::defined() const {
  return kind_ != Kind::kAbsent;
}
bool DocValue::is_null() const {
  return kind_ == Kind::kYaml ? node_.IsNull() : form_kind() == 'N';
}
bool DocValue::is_scalar() const {
  return kind_ == Kind::kYaml ? node_.IsScalar() : form_kind() == 'S';
}
bool DocValue::is_sequence() const {
  return kind_ == Kind::kYaml ? node_.IsSequence() : form_kind() == 'L';
}
bool DocValue::is_map() const {
  return kind_ == Kind::kYaml ? node_.IsMap() : form_kind() == 'M';
}

std::string_view DocValue::scalar() const {
  if (!is_scalar()) return {};
  if (kind_ == Kind::kYaml) return node_.Scalar();
  const FormNode n = form_node_at(form_, 0);
  return form_.substr(n.body, n.count);
}

int DocValue::line() const {
  if (kind_ != Kind::kYaml || node_.Mark().is_null()) return 0;
  return node_.Mark().line + 1;
}

std::vector<DocValue> DocValue::items() const {
  std::vector<DocValue> out;
  if (!is_sequence()) return out;
  if (kind_ == Kind::kYaml) {
    out.reserve(node_.size());
    for (const auto& item : node_)
      out.emplace_back(item);
    return out;
  }
  const FormNode n = form_node_at(form_, 0);
  out.reserve(n.count);
  std::size_t at = n.body;
  for (std::size_t i = 0; i < n.count; ++i) {
    out.push_back(in_form(form_.substr(at)));
    at = form_skip(form_, at);
  }
  return out;
}

std::vector<DocValue::Entry> DocValue::entries() const {
  std::vector<Entry> out;
  if (!is_map()) return out;
  if (kind_ == Kind::kYaml) {
    for (const auto& kv : node_) {
      const bool text = kv.first.IsScalar();
      // The key's text lives in the tree node_ keeps alive.
      out.push_back({text ? std::string_view(kv.first.Scalar()) : std::string_view(), text,
                     DocValue(kv.second)});
    }
    return out;
  }
  const FormNode n = form_node_at(form_, 0);
  out.reserve(n.count);
  std::size_t at = n.body;
  for (std::size_t i = 0; i < n.count; ++i) {
    const FormNode key = form_node_at(form_, at);
    if (key.kind != 'S') throw std::runtime_error("malformed preparsed YAML: a key not text");
    at = key.body + key.count;
    out.push_back({form_.substr(key.body, key.count), true, in_form(form_.substr(at))});
    at = form_skip(form_, at);
  }
  return out;
}

YAML::Node DocValue::yaml() const {
  if (kind_ == Kind::kYaml) return node_;
  if (kind_ == Kind::kAbsent) return YAML::Node(YAML::NodeType::Undefined);
  return node_from_preparsed(form_.substr(0, form_skip(form_, 0)));
}

std::string describe_node(const YAML::Node& node) {
  return describe_node(DocValue(node));
}

std::string describe_node(const DocValue& value) {
  if (!value.defined()) return "nothing";
  if (value.is_null()) return "null";
  if (value.is_sequence()) return "a list";
  if (value.is_map()) return "a map";
  return fmt::format("'{}'", cut_utf8(value.scalar(), 57));
}

StrictMap::StrictMap(DocValue node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {
  if (!node_.is_map()) {
    std::string where_text = path_.empty() ? file_ : fmt::format("{}: key '{}'", file_, path_);
    throw UserError(
        ErrorCode::kBadFile,
        fmt::format("{}: expected a map of keys, got {}", where_text, describe_node(node_)),
        path_.empty() ? file_ : path_);
  }
  entries_ = node_.entries();
  read_.assign(entries_.size(), 0);
  for (std::uint32_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].key_is_text) sorted_.push_back(i);
  // By key; the first of equal keys first (yaml-cpp reads the first).
  std::stable_sort(sorted_.begin(), sorted_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return entries_[a].key < entries_[b].key;
  });
}

const DocValue::Entry* StrictMap::find(std::string_view key) const {
  const auto it =
      std::lower_bound(sorted_.begin(), sorted_.end(), key,
                       [&](std::uint32_t i, std::string_view k) { return entries_[i].key < k; });
  if (it == sorted_.end() || entries_[*it].key != key) return nullptr;
  return &entries_[*it];
}

std::string StrictMap::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

std::string StrictMap::where(std::string_view key) const {
  // The key's line, or, for a key that is absent, the line where its map starts.
  int line = node_.line();
  if (const DocValue::Entry* e = find(key)) line = e->value.line();
  if (line == 0) return fmt::format("{}: key '{}'", file_, key_path(key));
  return fmt::format("{}: key '{}' (line {})", file_, key_path(key), line);
}

void StrictMap::fail(std::string_view key, const std::string& what) const {
  throw UserError(ErrorCode::kInvalidValue, fmt::format("{}: {}", where(key), what), key_path(key));
}

bool StrictMap::has(std::string_view key) const {
  return find(key) != nullptr;
}

bool StrictMap::is_null(std::string_view key) const {
  const DocValue::Entry* e = find(key);
  return e && e->value.is_null();
}

std::string_view StrictMap::key_or_alias(std::string_view key, std::string_view alias) const {
  if (!has(alias)) return key;
  if (has(key)) fail(alias, fmt::format("{} is another name for {}: give one of them", alias, key));
  return alias;
}

bool StrictMap::is_scalar(std::string_view key) const {
  const DocValue::Entry* e = find(key);
  return e && e->value.is_scalar();
}

void StrictMap::known(std::string_view key) {
  get(key);
}

std::vector<std::string> StrictMap::keys() const {
  std::vector<std::string> out;
  for (const auto& e : entries_)
    if (e.key_is_text) out.emplace_back(e.key);
  return out;
}

int StrictMap::line() const {
  return node_.line();
}

DocValue StrictMap::get(std::string_view key) {
  if (const DocValue::Entry* e = find(key)) {
    read_[index_of(e)] = 1;
    return e->value;
  }
  if (std::find(absent_read_.begin(), absent_read_.end(), key) == absent_read_.end())
    absent_read_.emplace_back(key);
  return {};
}

DocValue StrictMap::need(std::string_view key) {
  DocValue n = get(key);
  if (!n.defined()) {
    // A misspelt key is the usual cause: name it.
    std::vector<std::string> present;
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i].key_is_text && !read_[i]) present.emplace_back(entries_[i].key);
    auto near = closest_names(key, present, 1);
    std::string hint = near.empty()
                           ? ""
                           : fmt::format("; the map has an unknown key '{}' — did you mean '{}'?",
                                         near.front(), key);
    // The line of the map the key belongs in (a missing key has none of its own).
    const int map_line = node_.line();
    const std::string line = map_line == 0 ? "" : fmt::format(" (in the map at line {})", map_line);
    throw UserError(
        ErrorCode::kMissingKey,
        fmt::format("{}: required key '{}' is missing{}{}", file_, key_path(key), hint, line),
        key_path(key));
  }
  return n;
}

namespace {

std::optional<double> scalar_number(const DocValue& n) {
  if (!n.is_scalar()) return std::nullopt;
  const std::string_view s = n.scalar();
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = chars_to_double(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::string StrictMap::required_string(std::string_view key) {
  DocValue n = need(key);
  if (!n.is_scalar() || n.scalar().empty())
    fail(key, fmt::format("expected text, got {}", describe_node(n)));
  return std::string(n.scalar());
}

std::optional<std::string> StrictMap::optional_string(std::string_view key) {
  if (!has(key) || is_null(key)) {
    get(key);
    return std::nullopt;
  }
  return required_string(key);
}

double StrictMap::required_number(std::string_view key, double min, double max) {
  DocValue n = need(key);
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
  DocValue n = need(key);
  long long v = 0;
  bool ok = false;
  if (n.is_scalar()) {
    const std::string_view s = n.scalar();
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
  DocValue n = need(key);
  if (!n.is_scalar()) fail(key, fmt::format("expected text, got {}", describe_node(n)));
  return std::string(n.scalar());
}

bool StrictMap::required_bool(std::string_view key) {
  DocValue n = need(key);
  if (n.is_scalar()) {
    const std::string_view s = n.scalar();
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
  DocValue n = required ? need(key) : get(key);
  std::vector<std::string> out;
  if (!n.defined() || n.is_null()) return out;
  if (n.is_scalar()) {
    out.emplace_back(n.scalar());
  } else if (n.is_sequence()) {
    for (const DocValue& item : n.items()) {
      if (!item.is_scalar() || item.scalar().empty())
        fail(key, fmt::format("expected a list of text values, found {}", describe_node(item)));
      out.emplace_back(item.scalar());
    }
  } else {
    fail(key, fmt::format("expected text or a list of text values, got {}", describe_node(n)));
  }
  return out;
}

std::vector<long long> StrictMap::integer_list(std::string_view key, long long min, long long max) {
  DocValue n = need(key);
  if (!n.is_sequence())
    fail(key, fmt::format("expected a list of whole numbers, got {}", describe_node(n)));
  std::vector<long long> out;
  for (const DocValue& item : n.items()) {
    long long v = 0;
    bool ok = false;
    if (item.is_scalar()) {
      const std::string_view s = item.scalar();
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
  DocValue n = need(key);
  if (!n.is_map()) fail(key, fmt::format("expected a map of keys, got {}", describe_node(n)));
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
  DocValue n = required ? need(key) : get(key);
  std::vector<StrictMap> out;
  if (!n.defined() || n.is_null()) return out;
  if (!n.is_sequence()) fail(key, fmt::format("expected a list, got {}", describe_node(n)));
  std::size_t i = 0;
  for (const DocValue& item : n.items()) {
    std::string p = fmt::format("{}[{}]", key_path(key), i++);
    if (!item.is_map())
      throw UserError(ErrorCode::kInvalidValue,
                      fmt::format("{}: key '{}': expected a map of keys, got {}", file_, p,
                                  describe_node(item)),
                      p);
    out.emplace_back(item, file_, p);
  }
  return out;
}

YAML::Node StrictMap::raw(std::string_view key) {
  return get(key).yaml();
}

DocValue StrictMap::value(std::string_view key) {
  return get(key);
}

void StrictMap::finish() const {
  std::vector<std::string> known(absent_read_.begin(), absent_read_.end());
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (read_[i]) known.emplace_back(entries_[i].key);
  std::sort(known.begin(), known.end());
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (!entries_[i].key_is_text)
      throw UserError(ErrorCode::kBadFile,
                      fmt::format("{}: a key under '{}' is not text", file_, path_), path_);
    if (read_[i]) continue;
    const std::string k(entries_[i].key);
    auto near = closest_names(k, known, 1);
    std::string hint = near.empty() ? "" : fmt::format("; did you mean '{}'?", near.front());
    throw UserError(ErrorCode::kUnknownName,
                    fmt::format("{}: unknown key '{}'{}", where(k), key_path(k), hint), key_path(k),
                    std::move(near));
  }
}

}  // namespace ftplan
