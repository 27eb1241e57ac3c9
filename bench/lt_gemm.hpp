// One cuBLASLt matrix product, set up once (descriptors, layouts, the heuristic's first
// algorithm, as PyTorch and Transformer Engine take it) and run many times.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

namespace ftplan::bench {

enum class GemmType { kBF16, kFP8E4M3 };

// D (m×n) = op(A) (m×k) · op(B) (k×n) [+ D], in cuBLASLt's column-major view: a row-major
// PyTorch tensor [rows, cols] is a column-major cols×rows matrix. Inputs BF16 or FP8 E4M3 (then
// with per-tensor FP32 scales), FP32 accumulation, BF16 output.
struct GemmSpec {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  bool transpose_a = false;
  bool transpose_b = false;
  GemmType type = GemmType::kBF16;
  bool accumulate_into_d = false;  // beta = 1: D += op(A)·op(B)
  bool fast_accumulation = false;  // FP8: CUBLASLT_MATMUL_DESC_FAST_ACCUM

  std::string layout() const;  // "TN", "NN", "NT": transposes of A and B
  int input_bytes() const { return type == GemmType::kBF16 ? 2 : 1; }
};

class LtGemm {
 public:
  // a_scale, b_scale: device pointers to one FP32 each (FP8 only; nullptr for BF16).
  LtGemm(cublasLtHandle_t handle, const GemmSpec& spec, std::size_t workspace_bytes,
         const float* a_scale = nullptr, const float* b_scale = nullptr);

  void run(const void* a, const void* b, void* d, void* workspace, cudaStream_t stream) const;
  const GemmSpec& spec() const { return spec_; }

 private:
  template <class Handle>
  using Owned = std::unique_ptr<std::remove_pointer_t<Handle>, cublasStatus_t (*)(Handle)>;

  cublasLtHandle_t handle_;
  GemmSpec spec_;
  std::size_t workspace_bytes_;
  Owned<cublasLtMatmulDesc_t> desc_;
  Owned<cublasLtMatrixLayout_t> a_layout_;
  Owned<cublasLtMatrixLayout_t> b_layout_;
  Owned<cublasLtMatrixLayout_t> d_layout_;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

}  // namespace ftplan::bench
