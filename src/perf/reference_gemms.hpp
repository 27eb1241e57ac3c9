// Published examples of arithmetic intensity (data/roofline_examples.yaml): GEMMs a source prints
// an intensity for, so that a report can place them on the roofline beside a run's own operations.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "perf/ops.hpp"

namespace ftplan {

struct ReferenceGemm {
  std::string id;  // "nvidia-linear-batch-512"
  GemmShape shape;
  TensorPrecision precision = TensorPrecision::kBF16;
  double published_FLOP_per_B = 0;  // as the source prints it (rounded)
  std::vector<std::string> sources;

  // FLOPs and bytes by the op model (gemm_cost), every operand in `precision`.
  GemmCost cost() const { return gemm_cost(shape, element_bytes(precision)); }
};

// Parses roofline_examples.yaml of the catalog (strictly: unknown key, bad value or undefined
// source id is a UserError naming the file, the key and the line).
std::vector<ReferenceGemm> load_reference_gemms(const Catalog& catalog);
std::vector<ReferenceGemm> parse_reference_gemms(
    const DataFile& file, const std::map<std::string, SourceInfo, std::less<>>& sources);

}  // namespace ftplan
