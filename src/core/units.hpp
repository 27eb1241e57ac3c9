// Physical quantities as distinct types, so that bytes, seconds, FLOPs and rates cannot mix.
// GB = 10^9 bytes, GiB = 2^30 bytes, MiB = 2^20 bytes everywhere in ftplan.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string_view>

namespace ftplan {

// A double tagged with its unit. Same-unit arithmetic is allowed; the cross-unit operations that
// have a physical meaning (FLOPs / rate = time, bytes / bandwidth = time, ...) are spelled out
// below.
template <class Unit>
struct Quantity {
  double value = 0.0;

  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : value(v) {}

  constexpr Quantity& operator+=(Quantity o) {
    value += o.value;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    value -= o.value;
    return *this;
  }
  constexpr Quantity& operator*=(double k) {
    value *= k;
    return *this;
  }
  constexpr Quantity& operator/=(double k) {
    value /= k;
    return *this;
  }
  friend constexpr Quantity operator+(Quantity a, Quantity b) {
    return Quantity(a.value + b.value);
  }
  friend constexpr Quantity operator-(Quantity a, Quantity b) {
    return Quantity(a.value - b.value);
  }
  friend constexpr Quantity operator-(Quantity a) { return Quantity(-a.value); }
  friend constexpr Quantity operator*(Quantity a, double k) { return Quantity(a.value * k); }
  friend constexpr Quantity operator*(double k, Quantity a) { return Quantity(a.value * k); }
  friend constexpr Quantity operator/(Quantity a, double k) { return Quantity(a.value / k); }
  friend constexpr double operator/(Quantity a, Quantity b) { return a.value / b.value; }
  friend constexpr auto operator<=>(Quantity a, Quantity b) = default;
};

struct BytesUnit {};
struct SecondsUnit {};
struct FlopsUnit {};  // a count of floating-point operations
struct FlopsPerSecondUnit {};
struct BytesPerSecondUnit {};
struct WattsUnit {};

using Bytes = Quantity<BytesUnit>;
using Seconds = Quantity<SecondsUnit>;
using Flops = Quantity<FlopsUnit>;
using FlopsPerSecond = Quantity<FlopsPerSecondUnit>;
using BytesPerSecond = Quantity<BytesPerSecondUnit>;
using Watts = Quantity<WattsUnit>;

inline constexpr double kBytesPerGB = 1e9;
inline constexpr double kBytesPerGiB = 1073741824.0;  // 2^30
inline constexpr double kBytesPerMiB = 1048576.0;     // 2^20
inline constexpr double kBytesPerMB = 1e6;

constexpr Bytes bytes_from_GB(double gb) {
  return Bytes(gb * kBytesPerGB);
}
constexpr Bytes bytes_from_GiB(double gib) {
  return Bytes(gib * kBytesPerGiB);
}
constexpr Bytes bytes_from_MiB(double mib) {
  return Bytes(mib * kBytesPerMiB);
}
// The units a measured memory figure may be written in: GB and MB (powers of ten), GiB and MiB
// (powers of two; nvidia-smi prints MiB), in the order error messages list them.
inline constexpr std::array<std::string_view, 4> kMemoryUnitNames = {"GB", "GiB", "MB", "MiB"};
// Bytes per one of kMemoryUnitNames; 0 for any other name.
constexpr double bytes_per_memory_unit(std::string_view unit) {
  if (unit == "GB") return kBytesPerGB;
  if (unit == "GiB") return kBytesPerGiB;
  if (unit == "MB") return kBytesPerMB;
  if (unit == "MiB") return kBytesPerMiB;
  return 0.0;
}
constexpr double to_GB(Bytes b) {
  return b.value / kBytesPerGB;
}
constexpr double to_GiB(Bytes b) {
  return b.value / kBytesPerGiB;
}

constexpr FlopsPerSecond flops_per_second_from_TFLOPS(double t) {
  return FlopsPerSecond(t * 1e12);
}
constexpr double to_TFLOPS(FlopsPerSecond r) {
  return r.value / 1e12;
}
constexpr BytesPerSecond bytes_per_second_from_GBps(double g) {
  return BytesPerSecond(g * 1e9);
}
constexpr double to_GBps(BytesPerSecond r) {
  return r.value / 1e9;
}

constexpr Seconds operator/(Flops f, FlopsPerSecond r) {
  return Seconds(f.value / r.value);
}
constexpr Seconds operator/(Bytes b, BytesPerSecond r) {
  return Seconds(b.value / r.value);
}
constexpr Flops operator*(FlopsPerSecond r, Seconds s) {
  return Flops(r.value * s.value);
}
constexpr Bytes operator*(BytesPerSecond r, Seconds s) {
  return Bytes(r.value * s.value);
}

// Arithmetic intensity in FLOP per byte moved.
constexpr double intensity(Flops f, Bytes b) {
  return b.value > 0 ? f.value / b.value : 0.0;
}
// A processor's ops:byte ratio: peak rate over memory bandwidth (FLOP per byte).
constexpr double ops_per_byte(FlopsPerSecond r, BytesPerSecond b) {
  return r.value / b.value;
}

using ParamCount = std::int64_t;

}  // namespace ftplan
