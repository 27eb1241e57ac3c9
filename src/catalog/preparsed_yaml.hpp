// YAML documents parsed ahead of time. Scanning YAML text costs about a thousand instructions per
// byte, most of a CLI call's time; the built-in data files are therefore parsed once at build time
// (src/tools/preparse_data.cpp) into a compact tree form, and parse_yaml_document() rebuilds the
// node tree from that form when it is given the text of such a file.
//
// Form of a node: 'N' (null) | 'S' <size> ':' <bytes> (scalar) | 'L' <count> ':' <node>*
// (sequence) | 'M' <count> ':' (<node> <node>)* (map, key then value). Line marks are not kept:
// the files were checked strictly when they were parsed at build time.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

namespace ftplan {

// The tree form of a node (as read by parse_yaml_document: checked for keys seen twice).
std::string preparse_yaml(const YAML::Node& node);
// The node the tree form describes; a malformed form is a std::runtime_error (the form is made by
// the build, never by a user).
YAML::Node node_from_preparsed(std::string_view form);

// Reading a form in place, without building a tree: the node at byte `at` of `form` is of `kind`
// ('N', 'S', 'L', 'M') with `count` bytes (scalar), items (list) or entries (map), its body
// starting at byte `body`. A malformed form is a std::runtime_error.
struct FormNode {
  char kind;
  std::size_t count;
  std::size_t body;
};
FormNode form_node_at(std::string_view form, std::size_t at);
// The byte after the node that starts at `at`.
std::size_t form_skip(std::string_view form, std::size_t at);

// Makes parse_yaml_document() use `form` whenever it is given exactly `text` (the same bytes at the
// same address: the built-in files, which live as long as the program). Not thread-safe: call it
// before the documents are parsed (the built-in data files register theirs when first listed).
void register_preparsed(std::string_view text, std::string_view form);
// The form registered for `text`, or an empty view.
std::string_view preparsed_form(std::string_view text);

}  // namespace ftplan
