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

}  // namespace ftplan::embedded
