// Rendering of `ftplan infer`: the KV cache per token and per sequence, the card's memory split,
// prefill and decode rates, and a batch sweep, as a text table and as JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

#include "infer/generation.hpp"
#include "perf/device.hpp"

namespace ftplan {

struct InferView {
  const GenerationModel& model;
  const Device& device;
  const GenerationRequest& request;
  const GenerationEstimate& estimate;
  const Topology* topology = nullptr;  // the tensor-parallel group's cards (null: one card)
};

void print_infer(std::ostream& out, const InferView& v);
// The document of schemas/infer.schema.json (without schema and schema_version).
nlohmann::json infer_json(const InferView& v);

}  // namespace ftplan
