// How a figure was derived: the formula, the inputs and the source. Analyses append to a Trace
// when one is passed (explain, the report and the web page read it); the planner passes none.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ftplan {

struct Derivation {
  std::string id;     // stable key, e.g. "memory.model_states"
  std::string label;  // what the figure is
  double value = 0;
  std::string unit;                                         // "GB", "s", "FLOP/B", ...
  std::string formula;                                      // the formula in words and symbols
  std::vector<std::pair<std::string, std::string>> inputs;  // name -> value with unit
  std::string source;                                       // where the formula comes from
  // Ids of the figures in the same trace this one is computed from (explain --depth follows them).
  std::vector<std::string> depends_on = {};
};

class Trace {
 public:
  void add(Derivation d) { items_.push_back(std::move(d)); }
  const std::vector<Derivation>& items() const { return items_; }
  const Derivation* find(const std::string& id) const {
    for (const auto& d : items_)
      if (d.id == id) return &d;
    return nullptr;
  }

 private:
  std::vector<Derivation> items_;
};

}  // namespace ftplan
