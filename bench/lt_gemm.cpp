#include "lt_gemm.hpp"

#include <sstream>

#include "cuda_util.hpp"

namespace ftplan::bench {

namespace {

cudaDataType_t input_type(GemmType t) {
  return t == GemmType::kBF16 ? CUDA_R_16BF : CUDA_R_8F_E4M3;
}

// A column-major rows×cols matrix with leading dimension rows.
cublasLtMatrixLayout_t make_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols) {
  cublasLtMatrixLayout_t layout = nullptr;
  FTPLAN_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, type, static_cast<std::uint64_t>(rows),
                                                 static_cast<std::uint64_t>(cols), rows));
  return layout;
}

template <class T>
void set_attribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                   const T& value) {
  FTPLAN_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof value));
}

}  // namespace

std::string GemmSpec::layout() const {
  return std::string(transpose_a ? "T" : "N") + (transpose_b ? "T" : "N");
}

LtGemm::LtGemm(cublasLtHandle_t handle, const GemmSpec& spec, std::size_t workspace_bytes,
               const float* a_scale, const float* b_scale)
    : handle_(handle),
      spec_(spec),
      workspace_bytes_(workspace_bytes),
      desc_(nullptr, cublasLtMatmulDescDestroy),
      a_layout_(nullptr, cublasLtMatrixLayoutDestroy),
      b_layout_(nullptr, cublasLtMatrixLayoutDestroy),
      d_layout_(nullptr, cublasLtMatrixLayoutDestroy) {
  cublasLtMatmulDesc_t desc = nullptr;
  FTPLAN_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  desc_.reset(desc);
  set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, spec.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N);
  set_attribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, spec.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N);
  if (spec.type == GemmType::kFP8E4M3) {
    set_attribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, a_scale);
    set_attribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, b_scale);
    const std::int8_t fast = spec.fast_accumulation ? 1 : 0;
    set_attribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, fast);
  }

  const cudaDataType_t in = input_type(spec.type);
  // Stored shapes: op(A) is m×k, so A is k×m when transposed; op(B) is k×n, so B is n×k then.
  a_layout_.reset(spec.transpose_a ? make_layout(in, spec.k, spec.m)
                                   : make_layout(in, spec.m, spec.k));
  b_layout_.reset(spec.transpose_b ? make_layout(in, spec.n, spec.k)
                                   : make_layout(in, spec.k, spec.n));
  d_layout_.reset(make_layout(CUDA_R_16BF, spec.m, spec.n));

  cublasLtMatmulPreference_t preference = nullptr;
  FTPLAN_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  const Owned<cublasLtMatmulPreference_t> owned_preference(preference,
                                                           cublasLtMatmulPreferenceDestroy);
  const std::uint64_t max_workspace = workspace_bytes;
  FTPLAN_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace, sizeof max_workspace));
  int found = 0;
  FTPLAN_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, desc, a_layout_.get(), b_layout_.get(),
                                                     d_layout_.get(), d_layout_.get(), preference,
                                                     1, &heuristic_, &found));
  if (found == 0) {
    std::ostringstream message;
    message << "cuBLASLt offers no algorithm for " << spec.m << "x" << spec.n << "x" << spec.k
            << " " << spec.layout();
    throw CudaError(message.str(), false);
  }
}

void LtGemm::run(const void* a, const void* b, void* d, void* workspace,
                 cudaStream_t stream) const {
  const float alpha = 1.0f;
  const float beta = spec_.accumulate_into_d ? 1.0f : 0.0f;
  FTPLAN_CUBLAS_CHECK(cublasLtMatmul(handle_, desc_.get(), &alpha, a, a_layout_.get(), b,
                                     b_layout_.get(), &beta, d, d_layout_.get(), d, d_layout_.get(),
                                     &heuristic_.algo, workspace, workspace_bytes_, stream));
}

}  // namespace ftplan::bench
