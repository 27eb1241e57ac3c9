#include "render/roofline_text.hpp"

#include <fmt/format.h>

#include "core/format.hpp"
#include "render/table.hpp"

namespace ftplan {

void print_roofline(std::ostream& out, const Device& d, const GemmRoofline& r) {
  const std::string dtype = tensor_precision_name(r.dtype).data();
  out << fmt::format("GEMM C[{}×{}] = A[{}×{}] · B[{}×{}] in {} on {}\n\n",
                     format_number(r.shape.m), format_number(r.shape.n), format_number(r.shape.m),
                     format_number(r.shape.k), format_number(r.shape.k), format_number(r.shape.n),
                     dtype, d.name());
  TextTable t({"figure", "value>", "how"});
  t.row({"FLOPs", format_si(r.cost.flops.value, "FLOP"), "2·M·N·K"});
  t.row({"bytes moved", format_si(r.cost.bytes.value, "B"),
         fmt::format("{} B × (M·K + K·N + M·N)", format_number(element_bytes(r.dtype)))});
  t.row({"arithmetic intensity", format_fixed(r.intensity, 1) + " FLOP/B", "FLOPs / bytes"});
  t.row({"card ops:byte", format_fixed(r.ops_per_byte, 1) + " FLOP/B",
         fmt::format("{} / {}", format_TFLOPS(r.peak), format_GBps(d.bandwidth))});
  t.row({"attainable rate", format_TFLOPS(r.attainable), "min(peak, intensity × bandwidth)"});
  t.row({"time at the roofline", format_seconds(r.min_time), "FLOPs / attainable rate"});
  t.row({"estimated time", format_seconds(r.estimated.time()),
         fmt::format("at {:.0f} % of peak compute, {:.0f} % of bandwidth (gemm efficiency)",
                     100 * r.estimated.compute_efficiency, 100 * r.estimated.memory_efficiency)});
  t.print(out);
  out << fmt::format("\nbound: {} — intensity {:.1f} {} the card's ops:byte {:.1f}\n",
                     r.compute_bound ? "compute" : "memory", r.intensity,
                     r.compute_bound ? "exceeds" : "is below", r.ops_per_byte);
  if (d.mig) out << "note: " << d.assumption << "\n";
}

}  // namespace ftplan
