// The card a run measures: name, compute capability, memory, versions, clocks. Clocks, power
// limit, temperature and the driver's version come from NVML when libnvidia-ml can be loaded
// (it ships with the driver), otherwise from cudaDeviceGetAttribute (peak clocks only).
#pragma once

#include "results.hpp"

namespace ftplan::bench {

DeviceReport query_device(int device);

// Clocks and temperature at the end of a run (NVML only; unchanged without it).
void record_end_state(DeviceReport& report);

}  // namespace ftplan::bench
