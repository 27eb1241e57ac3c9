// The data/, web/, examples/ and schemas/ files, compiled into the binary (cmake/embed.cmake).
#pragma once

#include <string_view>
#include <vector>

namespace ftplan::embedded {

struct File {
  std::string_view path;  // relative to the repository root, e.g. "data/gpus/h200-nvl.yaml"
  std::string_view text;
};

const std::vector<File>& files();

// The YAML files under data/, parsed at build time (src/tools/preparse_data.cpp): `path` as in
// files(), `text` the tree form of catalog/preparsed_yaml.hpp.
const std::vector<File>& preparsed_files();

}  // namespace ftplan::embedded
