#include "catalog/preparsed_yaml.hpp"

#include <charconv>
#include <stdexcept>
#include <unordered_map>

namespace ftplan {

namespace {

void write_node(const YAML::Node& node, std::string& out) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar: {
      const std::string& s = node.Scalar();
      out += 'S';
      out += std::to_string(s.size());
      out += ':';
      out += s;
      return;
    }
    case YAML::NodeType::Sequence:
      out += 'L';
      out += std::to_string(node.size());
      out += ':';
      for (const auto& item : node)
        write_node(item, out);
      return;
    case YAML::NodeType::Map:
      out += 'M';
      out += std::to_string(node.size());
      out += ':';
      for (const auto& kv : node) {
        if (!kv.first.IsScalar())
          throw std::runtime_error("a map key that is not a scalar cannot be preparsed");
        write_node(kv.first, out);
        write_node(kv.second, out);
      }
      return;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out += 'N';
      return;
  }
}

// Reads the node that starts at byte `at` into `target`, a node of the tree being built; returns
// the byte after it. Children are made through target[...], inside the tree's own memory: yaml-cpp
// merges the memory of nodes built apart, and that merging would cost more than scanning the text.
std::size_t read_into(std::string_view form, std::size_t at, YAML::Node target) {
  const FormNode n = form_node_at(form, at);
  switch (n.kind) {
    case 'N':
      target = YAML::Null;
      return n.body;
    case 'S':
      target = std::string(form.substr(n.body, n.count));
      return n.body + n.count;
    case 'L':
      if (n.count == 0) target = YAML::Node(YAML::NodeType::Sequence);
      at = n.body;
      for (std::size_t i = 0; i < n.count; ++i)
        at = read_into(form, at, target[i]);
      return at;
    default:  // 'M'
      // Defined first: force_insert below, unlike target[key], does not mark a node defined.
      if (n.count == 0)
        target = YAML::Node(YAML::NodeType::Map);
      else
        target = YAML::Null;
      at = n.body;
      for (std::size_t i = 0; i < n.count; ++i) {
        const FormNode key = form_node_at(form, at);
        if (key.kind != 'S')  // preparse_yaml refuses keys that are not scalars
          throw std::runtime_error("malformed preparsed YAML at byte " + std::to_string(at));
        const std::string key_text(form.substr(key.body, key.count));
        at = key.body + key.count;
        // A scalar value (most are) is appended without target[key]'s search of the keys so far.
        if (const FormNode value = form_node_at(form, at); value.kind == 'S') {
          target.force_insert(key_text, std::string(form.substr(value.body, value.count)));
          at = value.body + value.count;
        } else {
          at = read_into(form, at, target[key_text]);
        }
      }
      return at;
  }
}

struct Key {
  const char* data;
  std::size_t size;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    return std::hash<const char*>()(k.data) ^
           static_cast<std::size_t>(k.size * 0x9e3779b97f4a7c15ULL);
  }
};

std::unordered_map<Key, std::string_view, KeyHash>& registry() {
  static std::unordered_map<Key, std::string_view, KeyHash> forms;
  return forms;
}

}  // namespace

std::string preparse_yaml(const YAML::Node& node) {
  std::string out;
  write_node(node, out);
  return out;
}

FormNode form_node_at(std::string_view form, std::size_t at) {
  const auto fail = [&] {
    throw std::runtime_error("malformed preparsed YAML at byte " + std::to_string(at));
  };
  if (at >= form.size()) fail();
  const char kind = form[at];
  if (kind == 'N') return {kind, 0, at + 1};
  if (kind != 'S' && kind != 'L' && kind != 'M') fail();
  std::size_t n = 0;
  const char* begin = form.data() + at + 1;
  const char* const last = form.data() + form.size();
  const auto [end, ec] = std::from_chars(begin, last, n);
  if (ec != std::errc() || end == last || *end != ':') fail();
  const std::size_t body = static_cast<std::size_t>(end - form.data()) + 1;
  if (kind == 'S' && form.size() - body < n) fail();
  return {kind, n, body};
}

std::size_t form_skip(std::string_view form, std::size_t at) {
  const FormNode node = form_node_at(form, at);
  if (node.kind == 'N') return node.body;
  if (node.kind == 'S') return node.body + node.count;
  std::size_t next = node.body;
  const std::size_t children = node.kind == 'M' ? 2 * node.count : node.count;
  for (std::size_t i = 0; i < children; ++i)
    next = form_skip(form, next);
  return next;
}

YAML::Node node_from_preparsed(std::string_view form) {
  YAML::Node node(YAML::NodeType::Null);  // a node of its own: read_into's copies share it
  if (read_into(form, 0, node) != form.size())
    throw std::runtime_error("malformed preparsed YAML: bytes after the document");
  return node;
}

void register_preparsed(std::string_view text, std::string_view form) {
  registry().insert_or_assign(Key{text.data(), text.size()}, form);
}

std::string_view preparsed_form(std::string_view text) {
  const auto& forms = registry();
  if (forms.empty()) return {};
  const auto it = forms.find(Key{text.data(), text.size()});
  return it == forms.end() ? std::string_view() : it->second;
}

}  // namespace ftplan
