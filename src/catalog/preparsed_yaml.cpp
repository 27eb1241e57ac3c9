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

class Reader {
 public:
  explicit Reader(std::string_view form) : form_(form) {}

  // Reads one node into `target`, a node of the tree being built. Children are made through
  // target[...], inside the tree's own memory: yaml-cpp merges the memory of nodes built apart, and
  // that merging would cost more than scanning the text.
  void read_into(YAML::Node target) {
    const char kind = next();
    if (kind == 'N') {
      target = YAML::Null;
      return;
    }
    const std::size_t n = count();
    if (kind == 'S') {
      if (form_.size() - at_ < n) fail();
      target = std::string(form_.substr(at_, n));
      at_ += n;
    } else if (kind == 'L') {
      if (n == 0) target = YAML::Node(YAML::NodeType::Sequence);
      for (std::size_t i = 0; i < n; ++i)
        read_into(target[i]);
    } else if (kind == 'M') {
      // Defined first: force_insert below, unlike target[key], does not mark a node defined.
      if (n == 0)
        target = YAML::Node(YAML::NodeType::Map);
      else
        target = YAML::Null;
      for (std::size_t i = 0; i < n; ++i) {
        if (next() != 'S') fail();  // keys are scalars (preparse_yaml refuses others)
        const std::size_t size = count();
        if (form_.size() - at_ < size) fail();
        const std::string key(form_.substr(at_, size));
        at_ += size;
        // A scalar value (most are) is appended without target[key]'s search of the keys so far.
        if (at_ < form_.size() && form_[at_] == 'S') {
          ++at_;
          const std::size_t value_size = count();
          if (form_.size() - at_ < value_size) fail();
          target.force_insert(key, std::string(form_.substr(at_, value_size)));
          at_ += value_size;
        } else {
          read_into(target[key]);
        }
      }
    } else {
      fail();
    }
  }

  bool done() const { return at_ == form_.size(); }

 private:
  [[noreturn]] void fail() const {
    throw std::runtime_error("malformed preparsed YAML at byte " + std::to_string(at_));
  }
  char next() {
    if (at_ >= form_.size()) fail();
    return form_[at_++];
  }
  std::size_t count() {
    std::size_t n = 0;
    const char* begin = form_.data() + at_;
    const auto [end, ec] = std::from_chars(begin, form_.data() + form_.size(), n);
    if (ec != std::errc() || end == form_.data() + form_.size() || *end != ':') fail();
    at_ += static_cast<std::size_t>(end - begin) + 1;
    return n;
  }

  std::string_view form_;
  std::size_t at_ = 0;
};

struct Key {
  const char* data;
  std::size_t size;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    return std::hash<const char*>()(k.data) ^ (k.size * 0x9e3779b97f4a7c15ULL);
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
  Reader reader(form);
  YAML::Node node(YAML::NodeType::Null);  // a node of its own: read_into's copies share it
  reader.read_into(node);
  if (!reader.done())
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
