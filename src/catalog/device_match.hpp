// Which catalog card a measured device is: from the name the driver reports, its compute
// capability and its memory. Used by every importer of measurements (ftplan calibrate import,
// show, step), so that a results file and the calibration made from it name the same card.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "catalog/catalog.hpp"
#include "core/units.hpp"

namespace ftplan {

// What a results file says about the card it ran on (empty / nullopt where it says nothing).
struct DeviceIdentity {
  std::string name;                // "NVIDIA H200", as CUDA and nvidia-smi report it
  std::string compute_capability;  // "9.0"
  std::optional<Bytes> memory;     // total device memory (cudaDeviceProp::totalGlobalMem)
};

struct CardMatch {
  const GpuSpec* gpu = nullptr;
  std::string basis;  // how the card was found, in words
};

// The rule, in order (bench/step/measure_step.py applies the same name rule):
//  1. a catalog card whose `name` equals the device name;
//  2. the one catalog name that starts with the device name and a space; where several do, the
//     one with "SXM" in it (the driver names the NVL and PCIe variants explicitly and the SXM
//     module plainly: "NVIDIA H200");
//  3. otherwise the cards of the same compute capability whose driver-visible memory
//     (`memory.visible_MiB`) equals the device's memory in MiB.
// A name match whose compute capability differs from the device's is an error. No card, or
// several at the last step, is a UserError naming `file`, the candidates and `--gpu ID`.
CardMatch match_card(const Catalog& catalog, const DeviceIdentity& device, std::string_view file);

}  // namespace ftplan
