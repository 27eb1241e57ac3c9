// The optimizer table: one row per optimizer, the only place that says what an optimizer keeps
// per trained parameter, in which format, what its update costs, and which parameters it treats
// differently. Memory (memory/model_states.cpp), time (perf/ops.cpp) and the activation rules
// read rows; adding an optimizer is adding a row (optimizer.cpp) and its enumerator here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ftplan {

enum class Optimizer {
  kAdamW,           // mixed precision: BF16 weight + grad + FP32 master, m, v = 16 B (ZeRO count)
  kAdamW8bit,       // bitsandbytes 8-bit states: 2 + 2 + 4 + 1 + 1 = 10 B
  kPagedAdamW,      // as kAdamW, states in CUDA unified memory that can be evicted to the host
  kPagedAdamW8bit,  // as kAdamW8bit, paged
  kAdamWBf16,       // pure BF16: weight, grad, m, v in BF16, no master copy = 8 B
  kSgdMomentum,     // BF16 weight + grad + FP32 master + FP32 momentum = 12 B
  kSgd,             // BF16 weight + grad + FP32 master = 8 B
  kAdafactor,       // BF16 weight + grad + FP32 master + factored second moment (row + column)
  kLion,            // BF16 weight + grad + FP32 master + one FP32 momentum = 12 B
  kMuon,            // hidden matrices: momentum + Newton-Schulz (12 B); the rest: AdamW (16 B)
};

// Which parameters a row applies to. kEvery: all of them. kHiddenMatrices: 2-D weights inside
// the blocks only; every other parameter (embeddings, output layer, norms, biases, vectors) is
// updated by the row's `others` optimizer (Muon: AdamW for those, Jordan et al. 2024).
enum class MatrixRule { kEvery, kHiddenMatrices };

struct OptimizerRow {
  Optimizer id;
  std::string_view name;  // as the CLI, runs files and the API spell it
  // Bytes per trained parameter in mixed-precision training.
  double weight_bytes;            // the trained 16-bit copy
  double gradient_bytes;          // its 16-bit gradient
  double master_bytes;            // FP32 master copy (0: trained in 16 bits)
  int states;                     // optimizer states per parameter (m, v, momentum, ...)
  double state_bytes;             // their bytes per parameter together (all states)
  std::string_view state_format;  // "FP32", "BF16", "8-bit blockwise", "FP32 row + column"
  // The states are allocated like the parameter (torch.zeros_like): FP32 with a master copy, BF16
  // when the weights are trained in BF16 with no master (pure BF16).
  bool states_follow_parameter_dtype;
  bool factored;     // second moment as one row and one column vector per matrix (Adafactor)
  bool paged;        // states in CUDA unified memory, evicted to the host under pressure
  bool offloadable;  // a CPU implementation exists (ZeRO-Offload / FSDP CPU offload)
  // FLOPs of the element-wise update per parameter, counted from the update rule.
  double update_flops;
  // Passes over the states per update: 1 for a fused multi-tensor kernel (every row here today).
  int memory_passes;
  // State-sized temporaries the update allocates for every trained tensor at once when it runs
  // as torch's foreach kernels (data/stacks `optimizer.implementation`, --optimizer-impl): AdamW
  // makes the denominator sqrt(v) as a new tensor list before dividing into it
  // (torch/optim/adamw.py _multi_tensor_adamw); one tensor's worth run per tensor (for-loop);
  // none fused. Rows whose update is a library's own kernel (bitsandbytes) or a per-tensor loop
  // whatever the stack (Adafactor, Lion, Muon) keep 0.
  int update_temporaries;
  MatrixRule rule;
  Optimizer others;  // for parameters the rule leaves out (kHiddenMatrices)
  // Newton-Schulz iterations orthogonalising each matrix update (Muon: 5); 0: none.
  int orthogonalize_steps;
  std::string_view basis;  // the count and where it comes from
};

const std::vector<OptimizerRow>& optimizer_table();
const OptimizerRow& optimizer_row(Optimizer o);

std::string_view optimizer_name(Optimizer o);
Optimizer parse_optimizer(std::string_view name, std::string_view field = "optimizer");
const std::vector<std::string>& optimizer_names();

// One trained tensor as an optimizer sees it: `copies` matrices of rows x cols (a vector is one
// row), e.g. a LoRA A of one module in every layer, or an expert tensor [E, out, in].
struct TensorSpec;  // model/params.hpp

struct TrainedMatrix {
  std::int64_t rows = 1;
  std::int64_t cols = 1;
  std::int64_t copies = 1;
  bool matrix = false;  // two or more dimensions (a weight matrix), not a norm, bias or vector
  bool hidden = false;  // inside the decoder blocks (not the embedding or the output layer)
  // The model tensor it belongs to: itself, or the one its adapter sits on (null: none given).
  const TensorSpec* tensor = nullptr;
  bool adapter = false;  // an adapter's own weight (LoRA A or B, DoRA's magnitude)
  std::int64_t numel() const { return rows * cols * copies; }
};

// What one optimizer costs for one trained tensor: bytes of model states and update work.
struct OptimizerCost {
  double weight_bytes = 0;
  double gradient_bytes = 0;
  double master_bytes = 0;
  double state_bytes = 0;
  double update_flops = 0;         // element-wise, on the vector units
  double orthogonalize_flops = 0;  // Newton-Schulz matrix products, on the tensor cores
};

// The row that updates `m` under `o` (Muon hands vectors, embeddings and the head to AdamW).
const OptimizerRow& row_for(Optimizer o, const TrainedMatrix& m);
OptimizerCost optimizer_cost(Optimizer o, const TrainedMatrix& m);
// How a trained parameter is held: mixed precision (the table's bytes: a 16-bit weight beside an
// FP32 master copy), pure 16-bit (no master copy; states that follow the parameter's dtype are
// 16-bit too) or an FP32 parameter in a pure 16-bit run (PEFT's FP32 adapters: no master copy, an
// FP32 weight and gradient, states at their own width). Rows without a master copy are the same
// in all three.
enum class ParamPrecision { kMixed, kPure16, kFp32 };
OptimizerCost optimizer_cost(Optimizer o, const TrainedMatrix& m, ParamPrecision p);

// Newton-Schulz orthogonalisation of one m x n matrix (m <= n after transposing), per iteration:
// A = X·Xᵀ (2m²n), B = b·A + c·A·A (2m³ + 3m²), X = a·X + B·X (2m²n + 2mn) (Jordan et al. 2024).
double newton_schulz_flops_per_step(std::int64_t rows, std::int64_t cols);

}  // namespace ftplan
