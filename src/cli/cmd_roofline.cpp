// ftplan roofline: one GEMM on one card: FLOPs, bytes, arithmetic intensity against the card's
// ops:byte, and whether it is compute- or memory-bound.
#include <fmt/format.h>

#include <charconv>

#include "cli/cli.hpp"
#include "cli/options.hpp"
#include "cli/perf_options.hpp"
#include "core/error.hpp"
#include "perf/step.hpp"
#include "render/perf_json.hpp"
#include "render/reason_words.hpp"
#include "render/roofline_text.hpp"

namespace ftplan::cli {
namespace {

struct RooflineOptions {
  std::string gemm;
  std::string dtype = "bf16";
  PlacementOptions placement;
  CalibrationOptions calibration;
  bool json = false;
};

GemmShape parse_gemm(const std::string& text) {
  auto bad = [&]() -> UserError {
    return UserError(ErrorCode::kInvalidValue,
                     fmt::format("--gemm expects M,N,K: three whole numbers from 1 to 2^31 "
                                 "(M tokens, N output features, K input features), got '{}'",
                                 text),
                     "gemm");
  };
  double dims[3] = {0, 0, 0};
  std::size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t comma = text.find(',', start);
    if ((i < 2) != (comma != std::string::npos)) throw bad();
    const std::size_t end = comma == std::string::npos ? text.size() : comma;
    long long v = 0;
    auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + end, v);
    if (ec != std::errc() || ptr != text.data() + end || end == start || v < 1 || v > (1LL << 31))
      throw bad();
    dims[i] = static_cast<double>(v);
    start = end + 1;
  }
  return {dims[0], dims[1], dims[2]};
}

TensorPrecision parse_dtype(const std::string& name) {
  if (auto p = tensor_precision_from_name(name)) return *p;
  std::vector<std::string> valid;
  for (auto p : kAllTensorPrecisions)
    valid.emplace_back(tensor_precision_name(p));
  throw_unknown_name("dtype", "dtype", name, valid);
}

const bool registered_roofline = register_command(
    {"roofline", "One GEMM on a card: FLOPs, bytes, arithmetic intensity, ops:byte, bound",
     [](CLI::App& app, Context& ctx) {
       auto o = std::make_shared<RooflineOptions>();
       app.add_option("--gemm", o->gemm,
                      "M,N,K of C[M×N] = A[M×K]·B[K×N] (M tokens, N output features, K input "
                      "features), e.g. 2048,14336,4096")
           ->required();
       app.add_option("--dtype", o->dtype,
                      "Element type of A, B and C: fp64 | tf32 | bf16 | fp16 | fp8 | fp6 | fp4 | "
                      "int8 (default bf16)");
       o->placement.add_to(app, false, true, false);
       o->calibration.add_to(app);
       app.add_flag("--json", o->json, "Print JSON");
       return [&ctx, o] {
         const GemmShape shape = parse_gemm(o->gemm);
         const TensorPrecision dtype = parse_dtype(o->dtype);
         const Placement p = o->placement.build(ctx);
         const Device d = make_device(p);
         if (!d.rate(dtype))
           throw UserError(ErrorCode::kUnsupported,
                           fmt::format("no roofline for {}: {}", tensor_precision_name(dtype),
                                       word_reason(d.missing_rate(dtype))),
                           "dtype");
         const EfficiencyTable e = o->calibration.for_gpu(ctx, *p.gpu, true);
         const GemmRoofline r = gemm_roofline(shape, dtype, d, e);
         if (o->json)
           print_json(ctx, "roofline", roofline_json(d, r));
         else
           print_roofline(ctx.out, d, r);
       };
     },
     30});

}  // namespace
}  // namespace ftplan::cli
