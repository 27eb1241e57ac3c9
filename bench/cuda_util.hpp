// Error checks and owning wrappers for the CUDA runtime and cuBLASLt, host side.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ftplan::bench {

// A CUDA runtime or cuBLASLt call that failed: the call, where, and the library's message.
// `sticky` marks errors after which the CUDA context is unusable (e.g. an illegal address).
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& what, bool sticky) : std::runtime_error(what), sticky_(sticky) {}
  bool sticky() const { return sticky_; }

 private:
  bool sticky_;
};

[[noreturn]] void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);

#define FTPLAN_CUDA_CHECK(call)                                                    \
  do {                                                                             \
    const cudaError_t ftplan_error_ = (call);                                      \
    if (ftplan_error_ != cudaSuccess)                                              \
      ::ftplan::bench::throw_cuda_error(ftplan_error_, #call, __FILE__, __LINE__); \
  } while (false)

#define FTPLAN_CUBLAS_CHECK(call)                                                     \
  do {                                                                                \
    const cublasStatus_t ftplan_status_ = (call);                                     \
    if (ftplan_status_ != CUBLAS_STATUS_SUCCESS)                                      \
      ::ftplan::bench::throw_cublas_error(ftplan_status_, #call, __FILE__, __LINE__); \
  } while (false)

// One device allocation carved into 256-byte aligned buffers; reset() forgets them all. Every
// benchmark takes its input sets from here, so nothing is allocated while timing.
class DeviceArena {
 public:
  explicit DeviceArena(std::size_t capacity_bytes);
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  void reset() { used_ = 0; }
  void* take(std::size_t bytes);
  template <class T>
  T* take_elements(std::int64_t count) {
    return static_cast<T*>(take(static_cast<std::size_t>(count) * sizeof(T)));
  }
  std::size_t capacity() const { return capacity_; }

  static constexpr std::size_t kAlignment = 256;
  // Bytes `take` uses for a buffer of `bytes` (rounded up to the alignment).
  static std::size_t footprint(std::size_t bytes) {
    return (bytes + kAlignment - 1) / kAlignment * kAlignment;
  }

 private:
  char* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t used_ = 0;
};

// Copies `count` elements of `T` from the device into a host vector (synchronously).
template <class T>
std::vector<T> copy_to_host(const T* device, std::int64_t count) {
  std::vector<T> host(static_cast<std::size_t>(count));
  FTPLAN_CUDA_CHECK(
      cudaMemcpy(host.data(), device, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

}  // namespace ftplan::bench
