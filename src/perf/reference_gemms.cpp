#include "perf/reference_gemms.hpp"

#include <fmt/format.h>

#include "catalog/strict_yaml.hpp"
#include "core/error.hpp"

namespace ftplan {

namespace {
constexpr std::string_view kFile = "roofline_examples.yaml";
}  // namespace

std::vector<ReferenceGemm> parse_reference_gemms(
    const DataFile& file, const std::map<std::string, SourceInfo, std::less<>>& sources) {
  StrictMap root(parse_document(file.text, file.path), file.path, "");
  std::vector<ReferenceGemm> out;
  for (StrictMap& m : root.map_list("examples", true)) {
    ReferenceGemm g;
    g.id = m.required_string("id");
    for (const auto& seen : out)
      if (seen.id == g.id) m.fail("id", fmt::format("id '{}' is defined twice", g.id));
    // Dimensions up to 2^24: far beyond any layer, small enough that 2·M·N·K stays exact.
    g.shape.m = static_cast<double>(m.required_integer("m", 1, 1 << 24));
    g.shape.n = static_cast<double>(m.required_integer("n", 1, 1 << 24));
    g.shape.k = static_cast<double>(m.required_integer("k", 1, 1 << 24));
    std::vector<std::string> names;
    for (auto p : kAllTensorPrecisions)
      names.emplace_back(tensor_precision_name(p));
    g.precision = *tensor_precision_from_name(m.required_choice("precision", names));
    g.published_FLOP_per_B = m.required_number("published_FLOP_per_B", 0, 1e9);
    g.sources = read_source_ids(m, sources);
    m.finish();
    out.push_back(std::move(g));
  }
  root.finish();
  return out;
}

std::vector<ReferenceGemm> load_reference_gemms(const Catalog& catalog) {
  const DataFile* file = catalog.file(kFile);
  if (!file)
    throw UserError(ErrorCode::kBadFile,
                    fmt::format("the data file {} is missing (it holds the published intensity "
                                "examples the report shows)",
                                kFile),
                    std::string(kFile));
  return parse_reference_gemms(*file, catalog.sources());
}

}  // namespace ftplan
