// One formatting function per unit, so that every front end prints figures the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/units.hpp"

namespace ftplan {

std::string group_digits(std::int64_t n);  // 8,030,261,248
std::string format_count_short(double n);  // 8.03 B, 41.9 M
// A quantity with a decimal prefix: (4.29e9, "FLOP") -> "4.29 GFLOP", (1.36e7, "B") -> "13.6 MB".
std::string format_si(double v, std::string_view unit);
std::string format_GB(Bytes b, int decimals = 1);               // "16.7 GB"
std::string format_GiB(Bytes b, int decimals = 1);              // "15.6 GiB"
std::string format_seconds(Seconds s);                          // "1.23 s", "45.6 ms", "12.3 µs"
std::string format_TFLOPS(FlopsPerSecond r, int decimals = 1);  // "835.5 TFLOPS"
std::string format_GBps(BytesPerSecond r, int decimals = 0);    // "4800 GB/s"
std::string format_fixed(double v, int decimals);               // "1.66"
std::string format_share(double share);                         // 0.052 -> "5.2 %"
std::string format_signed_share(double share);                  // -0.052 -> "-5.2 %"
// A decimal number without trailing zeros: 835.5, 4800, 0.25.
std::string format_number(double v, int max_decimals = 3);
// "1, 2, 4": the divisors of n up to `limit` (for errors that say what would divide).
std::string format_divisors(std::int64_t n, std::int64_t limit);

}  // namespace ftplan
