#include "cuda_util.hpp"

#include <sstream>

namespace ftplan::bench {

namespace {

// Errors after which the context cannot run anything more (CUDA runtime API documentation,
// "sticky" errors): a kernel fault leaves the process's context corrupted.
bool is_sticky(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
      return true;
    default:
      return false;
  }
}

}  // namespace

void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line) {
  std::ostringstream message;
  message << call << " failed at " << file << ":" << line << ": " << cudaGetErrorName(error) << " ("
          << cudaGetErrorString(error) << ")";
  throw CudaError(message.str(), is_sticky(error));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  std::ostringstream message;
  message << call << " failed at " << file << ":" << line << ": " << cublasLtGetStatusName(status)
          << " (" << cublasLtGetStatusString(status) << ")";
  throw CudaError(message.str(), false);
}

DeviceArena::DeviceArena(std::size_t capacity_bytes) : capacity_(capacity_bytes) {
  void* base = nullptr;
  FTPLAN_CUDA_CHECK(cudaMalloc(&base, capacity_));
  base_ = static_cast<char*>(base);
}

DeviceArena::~DeviceArena() {
  cudaFree(base_);  // nothing to do about a failure while tearing down
}

void* DeviceArena::take(std::size_t bytes) {
  const std::size_t size = footprint(bytes);
  if (size > capacity_ - used_) {
    std::ostringstream message;
    message << "device arena exhausted: " << size << " bytes wanted, " << capacity_ - used_
            << " of " << capacity_ << " left";
    throw CudaError(message.str(), false);
  }
  void* out = base_ + used_;
  used_ += size;
  return out;
}

}  // namespace ftplan::bench
