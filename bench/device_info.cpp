#include "device_info.hpp"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <string>

#include "cuda_util.hpp"

// NVML's device handle type (nvml.h: typedef struct nvmlDevice_st* nvmlDevice_t). nvml.h is not
// part of every toolkit install, so the few entry points used are declared here and loaded at
// run time; their signatures are NVML's stable C ABI.
struct nvmlDevice_st;

namespace ftplan::bench {

namespace {

using NvmlDevice = nvmlDevice_st*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;   // NVML_CLOCK_SM
constexpr int kNvmlClockMem = 2;  // NVML_CLOCK_MEM
constexpr int kNvmlTemperatureGpu = 0;

class Nvml {
 public:
  static Nvml& get() {
    static Nvml nvml;
    return nvml;
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool ready() const { return ready_; }

  std::optional<std::string> driver_version() const {
    char text[96] = {};
    if (!ready_ || driver_version_(text, sizeof text) != kNvmlSuccess) return std::nullopt;
    return std::string(text);
  }

  NvmlDevice device(const std::string& pci_bus_id) const {
    NvmlDevice d = nullptr;
    if (!ready_ || handle_by_pci_(pci_bus_id.c_str(), &d) != kNvmlSuccess) return nullptr;
    return d;
  }

  std::optional<double> clock_MHz(NvmlDevice d, int type, bool maximum) const {
    unsigned int mhz = 0;
    if (!d) return std::nullopt;
    const int status = maximum ? max_clock_(d, type, &mhz) : clock_(d, type, &mhz);
    if (status != kNvmlSuccess) return std::nullopt;
    return static_cast<double>(mhz);
  }

  std::optional<double> power_limit_W(NvmlDevice d) const {
    unsigned int milliwatts = 0;
    if (!d || power_limit_(d, &milliwatts) != kNvmlSuccess) return std::nullopt;
    return static_cast<double>(milliwatts) / 1000.0;
  }

  std::optional<double> temperature_C(NvmlDevice d) const {
    unsigned int celsius = 0;
    if (!d || temperature_(d, kNvmlTemperatureGpu, &celsius) != kNvmlSuccess) return std::nullopt;
    return static_cast<double>(celsius);
  }

 private:
  Nvml() {
    library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library_) return;
    const bool all =
        load(init_, "nvmlInit_v2") && load(driver_version_, "nvmlSystemGetDriverVersion") &&
        load(handle_by_pci_, "nvmlDeviceGetHandleByPciBusId_v2") &&
        load(clock_, "nvmlDeviceGetClockInfo") && load(max_clock_, "nvmlDeviceGetMaxClockInfo") &&
        load(power_limit_, "nvmlDeviceGetPowerManagementLimit") &&
        load(temperature_, "nvmlDeviceGetTemperature");
    ready_ = all && init_() == kNvmlSuccess;
  }
  ~Nvml() = default;  // NVML stays initialised until the process ends

  template <class F>
  bool load(F& function, const char* name) {
    function = reinterpret_cast<F>(dlsym(library_, name));
    return function != nullptr;
  }

  void* library_ = nullptr;
  bool ready_ = false;
  int (*init_)() = nullptr;
  int (*driver_version_)(char*, unsigned int) = nullptr;
  int (*handle_by_pci_)(const char*, NvmlDevice*) = nullptr;
  int (*clock_)(NvmlDevice, int, unsigned int*) = nullptr;
  int (*max_clock_)(NvmlDevice, int, unsigned int*) = nullptr;
  int (*power_limit_)(NvmlDevice, unsigned int*) = nullptr;
  int (*temperature_)(NvmlDevice, int, unsigned int*) = nullptr;
};

// 13000 → "13.0"
std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

int attribute(cudaDeviceAttr which, int device) {
  int value = 0;
  FTPLAN_CUDA_CHECK(cudaDeviceGetAttribute(&value, which, device));
  return value;
}

}  // namespace

DeviceReport query_device(int device) {
  cudaDeviceProp prop{};
  FTPLAN_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceReport r;
  r.name = prop.name;
  r.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  r.sm_count = prop.multiProcessorCount;
  r.memory_total_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  r.l2_cache_bytes = prop.l2CacheSize;
  r.memory_bus_width_bits = prop.memoryBusWidth;
  char pci[32] = {};
  FTPLAN_CUDA_CHECK(cudaDeviceGetPCIBusId(pci, sizeof pci, device));
  r.pci_bus_id = pci;

  int driver = 0, runtime = 0;
  FTPLAN_CUDA_CHECK(cudaDriverGetVersion(&driver));
  FTPLAN_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  r.cuda_driver_api_version = cuda_version_text(driver);
  r.cuda_runtime_version = cuda_version_text(runtime);
  const std::size_t lt = cublasLtGetVersion();  // major·10000 + minor·100 + patch
  r.cublaslt_version = std::to_string(lt / 10000) + "." + std::to_string(lt / 100 % 100) + "." +
                       std::to_string(lt % 100);

  const Nvml& nvml = Nvml::get();
  const NvmlDevice d = nvml.device(r.pci_bus_id);
  if (d) {
    r.clocks_source = "nvml";
    r.driver_version = nvml.driver_version();
    r.sm_clock_max_MHz = nvml.clock_MHz(d, kNvmlClockSm, true);
    r.memory_clock_max_MHz = nvml.clock_MHz(d, kNvmlClockMem, true);
    r.sm_clock_start_MHz = nvml.clock_MHz(d, kNvmlClockSm, false);
    r.power_limit_W = nvml.power_limit_W(d);
  } else {
    // Peak clocks in kHz (cudaDeviceProp's clock fields are gone from CUDA 13).
    r.clocks_source = "cudaDeviceGetAttribute";
    r.sm_clock_max_MHz = attribute(cudaDevAttrClockRate, device) / 1000.0;
    r.memory_clock_max_MHz = attribute(cudaDevAttrMemoryClockRate, device) / 1000.0;
  }
  return r;
}

void record_end_state(DeviceReport& report) {
  const Nvml& nvml = Nvml::get();
  const NvmlDevice d = nvml.device(report.pci_bus_id);
  if (!d) return;
  report.sm_clock_end_MHz = nvml.clock_MHz(d, kNvmlClockSm, false);
  report.temperature_end_C = nvml.temperature_C(d);
}

}  // namespace ftplan::bench
