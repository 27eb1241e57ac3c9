#include "core/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace ftplan {

std::string group_digits(std::int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count && count % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return n < 0 ? "-" + out : out;
}

std::string format_count_short(double n) {
  const double a = std::fabs(n);
  if (a >= 1e12) return fmt::format("{:.2f} T", n / 1e12);
  if (a >= 1e9) return fmt::format("{:.2f} B", n / 1e9);
  if (a >= 1e6) return fmt::format("{:.1f} M", n / 1e6);
  if (a >= 1e3) return fmt::format("{:.1f} k", n / 1e3);
  return fmt::format("{:.0f}", n);
}

std::string format_si(double v, std::string_view unit) {
  static constexpr std::pair<double, const char*> prefixes[] = {
      {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [scale, prefix] : prefixes)
    if (std::fabs(v) >= scale) return fmt::format("{:.3g} {}{}", v / scale, prefix, unit);
  return fmt::format("{:.3g} {}", v, unit);
}

std::string format_share(double share) {
  return fmt::format("{:.1f} %", 100 * share);
}

std::string format_signed_share(double share) {
  return fmt::format("{:+.1f} %", 100 * share);
}

std::string format_fixed(double v, int decimals) {
  return fmt::format("{:.{}f}", v, decimals);
}

std::string format_GB(Bytes b, int decimals) {
  return format_fixed(to_GB(b), decimals) + " GB";
}
std::string format_GiB(Bytes b, int decimals) {
  return format_fixed(to_GiB(b), decimals) + " GiB";
}

std::string format_seconds(Seconds s) {
  const double v = s.value;
  const double a = std::fabs(v);
  if (a >= 3600) return fmt::format("{:.2f} h", v / 3600);
  if (a >= 1) return fmt::format("{:.3g} s", v);
  if (a >= 1e-3) return fmt::format("{:.3g} ms", v * 1e3);
  if (a == 0) return "0 s";
  return fmt::format("{:.3g} µs", v * 1e6);
}

std::string format_TFLOPS(FlopsPerSecond r, int decimals) {
  return format_fixed(to_TFLOPS(r), decimals) + " TFLOPS";
}

std::string format_GBps(BytesPerSecond r, int decimals) {
  return format_fixed(to_GBps(r), decimals) + " GB/s";
}

std::string format_number(double v, int max_decimals) {
  std::string s = fmt::format("{:.{}f}", v, max_decimals);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0')
      s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string format_divisors(std::int64_t n, std::int64_t limit) {
  std::string out;
  for (std::int64_t d = 1; d <= std::min(n, limit); ++d)
    if (n % d == 0) out += fmt::format("{}{}", out.empty() ? "" : ", ", d);
  return out;
}

}  // namespace ftplan
