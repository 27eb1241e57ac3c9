// A fact from a data file: its value (or why it is unknown) and where it comes from.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ftplan {

template <class T>
struct Figure {
  std::optional<T> value;  // empty: unknown, see unknown_reason
  std::string unknown_reason;
  std::vector<std::string> sources;  // ids in data/sources*.yaml
  std::string note;
  std::string dispute;         // what another source says instead
  bool sparse_halved = false;  // vendor printed a 2:4-sparse rate; this is half of it
  std::string accumulate;  // accumulate mode the vendor figure is for ("fp32", "fp16"), if stated

  bool known() const { return value.has_value(); }
};

}  // namespace ftplan
