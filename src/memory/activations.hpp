// Activation memory of one card during a training step: the tensors each decoder block saves.
//
// The count follows the tensors a training step keeps from the forward to the backward pass,
// derived from the shapes of the model (Korthikanti et al. 2022, §4, generalised): which tensors
// each operation saves (PyTorch autograd), how recomputation, FlashAttention, LoRA adapters,
// quantized weights, chunked losses and offloading change that. Where the model states sit during
// the step is memory/states_on_card.hpp; the step's phases and its peak, memory/step_memory.hpp.
#pragma once

#include <cstdint>
#include <memory>

#include "core/units.hpp"
#include "workload/roles.hpp"
#include "workload/workload.hpp"

namespace ftplan {

// Bytes that grow with the micro-batch: per token of the micro-batch (s·b), and per s²·b for the
// attention probabilities that eager attention keeps.
struct TokenBytes {
  double per_token = 0;
  double per_seq_squared = 0;

  Bytes at(std::int64_t seq, std::int64_t micro_batch) const {
    const double s = static_cast<double>(seq), b = static_cast<double>(micro_batch);
    return Bytes(per_token * s * b + per_seq_squared * s * s * b);
  }
  TokenBytes& operator+=(const TokenBytes& o) {
    per_token += o.per_token;
    per_seq_squared += o.per_seq_squared;
    return *this;
  }
  friend TokenBytes operator+(TokenBytes a, const TokenBytes& b) { return a += b; }
  friend TokenBytes operator*(TokenBytes a, double k) {
    a.per_token *= k;
    a.per_seq_squared *= k;
    return a;
  }
};

// What one decoder block looks like to the activation model.
struct BlockShape {
  std::int64_t hidden = 0;             // h
  std::int64_t q_dim = 0;              // n_h · d
  std::int64_t kv_dim = 0;             // n_kv · d (GQA: narrower than q_dim); the width of K
  std::int64_t v_dim = 0;              // the width of V (MLA: n_h · v_head_dim); 0: kv_dim
  std::int64_t attention_out_dim = 0;  // o_proj's input (MLA: n_h · v_head_dim); 0: q_dim
  std::int64_t q_latent = 0;           // MLA: q_lora_rank (0: a plain q_proj, or no MLA)
  std::int64_t kv_latent = 0;          // MLA: kv_lora_rank
  std::int64_t kv_rope = 0;            // MLA: qk_rope_head_dim, beside the latent in kv_a
  std::int64_t heads = 0;              // a
  std::int64_t mlp_width = 0;          // I of a dense MLP (GPT: 4h)
  bool gated_mlp = true;               // SwiGLU / GeGLU: act(gate) * up; else fc1 -> act -> fc2
  int norms = 2;                       // norms per block (Gemma 3: 4)
  bool norm_upcasts = true;  // RMSNorm written in PyTorch ops (Hugging Face, torchtune): in
                             // eager mode it keeps an FP32 copy of its input
  bool layer_norm = false;   // nn.LayerNorm (Phi, StarCoder2, Phi-3.5-MoE): one fused kernel
  bool qk_norm = false;      // Qwen3, Gemma 3: RMSNorm on q and k
  bool dropout = false;      // GPT-style dropout after attention and MLP, and on the probabilities
  bool attention_dropout = false;  // dropout on the probabilities only (StarCoder2)
  bool residual_dropout = false;   // dropout after attention and MLP only (Phi-2, StarCoder2)
  // Attention and MLP read one norm's output (Phi): one norm per block, whose output q, k, v and
  // the MLP's first projection share.
  bool parallel_block = false;
  bool fused_qkv = false;      // one qkv_proj module (one LoRA adapter for q, k, v)
  bool fused_gate_up = false;  // one gate_up_proj module
  // Mixture of experts (experts == 0: a dense MLP).
  std::int64_t experts = 0;
  std::int64_t experts_per_token = 0;    // k
  std::int64_t expert_width = 0;         // I of one expert
  std::int64_t shared_expert_width = 0;  // the shared experts' gated MLP (0: none)
  bool shared_expert_gated = false;      // Qwen2-MoE: sigmoid(shared_expert_gate(x)) scales it
  std::int64_t value_width() const { return v_dim > 0 ? v_dim : kv_dim; }
  std::int64_t output_width() const { return attention_out_dim > 0 ? attention_out_dim : q_dim; }
};

// The dense and the MoE block of a catalog architecture (a dense model has no MoE block).
BlockShape dense_block_shape(const ModelArch& arch);
BlockShape moe_block_shape(const ModelArch& arch);

// What of a run the per-block count depends on.
struct ActivationSettings {
  bool full_finetune = false;  // every weight trained: every projection keeps its input
  ProjectionSet adapted = 0;   // LoRA / QLoRA targets
  int rank = 0;
  bool fp32_adapters = false;  // adapters kept in FP32 (PEFT's default with a 16-bit base): each
                               // adapted projection casts its input to its own copy, which
                               // autocast casts back to 16 bits for the product
  bool dora = false;      // DoRA: each adapted module also keeps its base and adapter outputs (out
                          // wide) for the magnitude's gradient (PEFT DoraLinearLayer)
  bool compiled = false;  // torch.compile / fused kernels
  bool autocast = false;  // mixed precision under autocast: FP32 master weights, 16-bit products
  double lora_dropout = 0;  // > 0: each adapted input keeps a dropout mask and its dropped copy
  Attention attention = Attention::kFlash;
  // FP32 norm weights on a quantized base (TrainedSet::fp32_unquantized, PEFT's k-bit
  // preparation): the norms' outputs, the MLP's products and the residual stream are FP32
  // tensors.
  bool fp32_stream = false;
  // Fused LoRA autograd functions (Unsloth's LoRA_QKV, LoRA_W, LoRA_MLP): each group of adapted
  // projections keeps its one 16-bit input and nothing per adapter; the MLP keeps gate and up and
  // rebuilds act(gate)·up in its backward pass, in place.
  bool fused_lora = false;
  // Experts run one after the other (ExpertsImpl::kLoop): their backward passes too, so one
  // expert's share of the routed tokens holds its activation gradients at a time.
  bool experts_one_at_a_time = false;
  // Quantized base layers keep their 16-bit input (TrainingOptions::quant_keeps_input): one copy
  // of each distinct input, or one per layer where an FP32 stream makes each cast its own.
  bool quant_keeps_input = false;
  // Bytes per element of the residual stream and of the tensors computed from it in full
  // precision (norm inputs, the MLP's intermediates, their gradients).
  double stream_bytes() const { return fp32_stream ? 4.0 : 2.0; }
  // How a trained parameter is held in this run (the optimizer table's ParamPrecision): in pure
  // 16-bit training every parameter is 16-bit but the adapters the stack keeps in FP32.
  ParamPrecision precision_of(const TrainedMatrix& m, bool pure_16) const {
    if (!pure_16) return ParamPrecision::kMixed;
    return m.adapter && fp32_adapters ? ParamPrecision::kFp32 : ParamPrecision::kPure16;
  }
};
ActivationSettings activation_settings(const Workload& w);
ActivationSettings activation_settings(const Workload& w, const TrainedSet& set);

// One block's activation memory for one micro-batch.
struct BlockActivations {
  TokenBytes saved;               // kept from forward to backward without recomputation
  TokenBytes attention_core;      // the part of `saved` selective recomputation drops (s² terms)
  TokenBytes input;               // the block's input: all that full recomputation keeps
  TokenBytes per_op;              // what the per-op selective policy keeps (workload/stack.hpp)
  TokenBytes backward_transient;  // gradients of activations that live at once in its backward
};
BlockActivations block_activations(const BlockShape& shape, const ActivationSettings& s);

// Per-workload precomputation (independent of sequence length and micro-batch, and of the
// placement): evaluate it many times with step_memory().
struct ActivationProfile {
  TokenBytes saved_all;           // every block, for the recompute mode
  TokenBytes saved_one;           // the largest block's saved set for the recompute mode
  TokenBytes recompute;           // rebuilt during one block's backward (full and per-op: the
                                  // whole set; selective: the attention core)
  TokenBytes backward_transient;  // the largest block's
  TokenBytes output_saved;        // final norm and output-layer inputs
  TokenBytes logits;              // logits and the loss's working set
  // A forward pass without gradient (a preference objective's reference, KTO's KL batch): its
  // 16-bit logits, with no labels given so no FP32 upcast; TRL's selective_log_softmax then works
  // one row at a time.
  TokenBytes scoring_logits;
  TokenBytes hidden_gradient;  // gradient of the final hidden state
  // The logits' 16-bit gradient as the output layer's backward reads it (every chunk's under a
  // chunked loss); zero where the output layer and the loss are fused.
  TokenBytes logits_gradient;
  // The model's returned logits that the training loop still holds during the backward pass
  // (the stack's memory.loss.held_logits_bytes); zero where only the loss is kept.
  TokenBytes held_logits;
  // The previous micro-batch's graph, which the loop holds until the model returns this
  // micro-batch's logits (the stack's memory.loss.previous_graph_held), keeps the 16-bit input of
  // every quantized layer outside the recomputed blocks when those layers hold it as a plain
  // attribute (quant_keeps_input): through this micro-batch's forward pass, not its loss.
  TokenBytes previous_graph_inputs;
  Bytes dequant_buffer;    // the largest weight materialised for one product: a QLoRA
                           // base dequantized to BF16, DoRA's W + s·B·A for its norm
  Bytes layer_params;      // the largest block's parameters as stored (FSDP all-gather)
  Bytes layer_gradients;   // the largest block's gradients, unsharded
  Bytes output_params;     // the output layer's weight in 16-bit (FSDP all-gather)
  Bytes root_params;       // every parameter outside the blocks in 16-bit (FSDP's root unit:
                           // embeddings, final norm, output layer)
  Bytes largest_gradient;  // the largest single trained tensor's gradient
  Bytes head_gradients;    // gradients the backward pass produces first (output layer)
  // Every frozen 16-bit weight of the blocks at its stored width, where adapters sit in the
  // blocks: the gradients an FSDP1 unit that mixes frozen and trained parameters makes for them.
  Bytes block_frozen_gradients;
  // An FP32 output layer under autocast (TrainedSet::fp32_unquantized): the 16-bit copy autocast
  // casts its weight to, which the product keeps for the input's gradient until the head's
  // backward pass.
  Bytes head_cast;
  std::int64_t blocks = 0;
  // The master copies and optimizer states as the run holds its trained parameters
  // (ActivationSettings::precision_of: pure 16-bit drops the master copy and halves states that
  // follow the parameter's dtype), as a share of the mixed-precision count (memory/states_on_card).
  double master_scale = 1;
  double states_scale = 1;
  // Whether the backward pass rebuilds anything (selective recomputation of FlashAttention or SDPA
  // under the attention-core policy rebuilds nothing).
  bool rebuilds() const { return recompute.per_token > 0 || recompute.per_seq_squared > 0; }
  // The profile with the stack's preparation of the quantized base skipped, where the stack skips
  // it for a base FSDP shards over several cards (StackProfile::kbit_skipped_when_sharded); null
  // where nothing differs. placed() picks the profile a placement runs.
  std::shared_ptr<const ActivationProfile> sharded;
  const ActivationProfile& placed(const Placement& p) const;
};
ActivationProfile activation_profile(const Workload& w);

}  // namespace ftplan
