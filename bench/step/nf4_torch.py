"""NF4 with double quantization in plain PyTorch, for QLoRA steps without bitsandbytes.

The format is QLoRA's (Dettmers et al. 2023, §3) and the one ftplan-bench's CPU reference and
CUDA kernel use (bench/reference.hpp, Nf4Tensor):
  codes          two 4-bit indices into the 16 NF4 levels per byte, element 2i in the high nibble;
  absmax_codes   one int8 per block of 64 weights: round(127 * (absmax - offset) / scale);
  absmax_scales  one FP32 per 256 blocks: max |absmax - offset| over them;
  absmax_offset  one FP32 per tensor: the mean of the block absmax values.
That is 4 + 8/64 + 32/(64*256) = 4.127 bits per weight. (bitsandbytes stores the first-level
constants as 8-bit floats of its dynamic map; the linear 8-bit code here has the same size.)

NF4Linear keeps only that; every use dequantizes the weight to BF16 (forward, the recomputation
under activation checkpointing, and backward for the input gradient) and frees it again, as
QLoRA does. The base weight gets no gradient. The dequantization is a few PyTorch operations, so
it holds about 8 bytes per weight of the matrix being dequantized for a moment (int32 indices,
FP32 values, the BF16 result); bitsandbytes' fused kernel writes only the 2-byte result.
"""

import torch

NF4_LEVELS = (
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
    0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
    0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0,
)


class NF4Tensor:
    """A weight matrix in NF4 with double-quantized constants (layout in the module text)."""

    def __init__(self, codes, absmax_codes, absmax_scales, absmax_offset, shape, block,
                 second_block):
        self.codes = codes
        self.absmax_codes = absmax_codes
        self.absmax_scales = absmax_scales
        self.absmax_offset = absmax_offset
        self.shape = tuple(shape)
        self.block = block
        self.second_block = second_block

    def nbytes(self):
        """Codes and constants (the one FP32 offset per tensor not counted, as ftplan counts)."""
        return (self.codes.numel() + self.absmax_codes.numel()
                + 4 * self.absmax_scales.numel())

    def block_absmax(self):
        """Per block: code * (scale / 127) + offset, in FP32."""
        blocks = self.absmax_codes.numel()
        scales = (self.absmax_scales / 127.0).repeat_interleave(self.second_block)[:blocks]
        return self.absmax_codes.float() * scales + self.absmax_offset

    def dequantize(self, dtype=torch.bfloat16):
        levels = torch.tensor(NF4_LEVELS, dtype=torch.float32, device=self.codes.device)
        # Byte b -> (level[b >> 4], level[b & 15]): one lookup per byte gives both weights.
        byte = torch.arange(256, device=self.codes.device)
        pairs = torch.stack((levels[byte >> 4], levels[byte & 15]), dim=1)
        values = torch.index_select(pairs, 0, self.codes.to(torch.int32)).view(-1, self.block)
        values.mul_(self.block_absmax()[:, None])
        return values.to(dtype).view(self.shape)


def quantize_nf4(weight, block=64, second_block=256):
    """Weight matrix -> NF4Tensor: per block of `block` weights, absmax = max |w|, each weight
    the nearest NF4 level of w / absmax; then the absmax values double-quantized."""
    flat = weight.detach().float().reshape(-1)
    if flat.numel() % block != 0 or flat.numel() % 2 != 0:
        raise ValueError(f"NF4: {flat.numel()} weights is not a multiple of the block {block}")
    blocks = flat.view(-1, block)
    absmax = blocks.abs().amax(dim=1)
    normalized = blocks / absmax.clamp_min(torch.finfo(torch.float32).tiny)[:, None]
    levels = torch.tensor(NF4_LEVELS, dtype=torch.float32, device=flat.device)
    midpoints = (levels[1:] + levels[:-1]) / 2
    # Nearest level; a weight exactly between two levels takes the lower one.
    index = torch.bucketize(normalized.reshape(-1), midpoints).to(torch.uint8)
    del normalized
    codes = (index[0::2] << 4) | index[1::2]
    del index

    offset = absmax.mean()
    centred = absmax - offset
    groups = -(-centred.numel() // second_block)
    padded = torch.zeros(groups * second_block, dtype=torch.float32, device=flat.device)
    padded[: centred.numel()] = centred
    scales = padded.view(groups, second_block).abs().amax(dim=1)
    per_block_scale = scales.repeat_interleave(second_block)[: centred.numel()]
    absmax_codes = torch.where(per_block_scale > 0,
                               torch.round(127.0 * centred / per_block_scale.clamp_min(1e-30)),
                               torch.zeros_like(centred)).clamp(-127, 127).to(torch.int8)
    return NF4Tensor(codes, absmax_codes, scales, offset, weight.shape, block, second_block)


class _NF4LinearFunction(torch.autograd.Function):
    """y = x W^T with W dequantized from NF4 for the forward and again for the backward."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.weight = weight
        ctx.input_dtype = x.dtype
        w = weight.dequantize(torch.bfloat16)
        return torch.nn.functional.linear(x.to(torch.bfloat16), w)

    @staticmethod
    def backward(ctx, grad_output):
        w = ctx.weight.dequantize(torch.bfloat16)
        grad_input = grad_output.to(torch.bfloat16) @ w
        return grad_input.to(ctx.input_dtype), None


class NF4Linear(torch.nn.Linear):
    """A frozen nn.Linear (no bias) whose weight is stored only in NF4.

    It stays an nn.Linear so that PEFT wraps it like any linear layer; `weight` is an empty
    BF16 placeholder from which PEFT reads the device and dtype for the adapters."""

    def __init__(self, linear, block=64, second_block=256):
        torch.nn.Module.__init__(self)
        if linear.bias is not None:
            raise ValueError("NF4Linear: projections with a bias are not supported")
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        self.nf4 = quantize_nf4(linear.weight.data, block, second_block)
        # Buffers, so that .to() and state_dict() see them.
        self.register_buffer("codes", self.nf4.codes)
        self.register_buffer("absmax_codes", self.nf4.absmax_codes)
        self.register_buffer("absmax_scales", self.nf4.absmax_scales)
        self.register_buffer("absmax_offset", self.nf4.absmax_offset)
        self.weight = torch.nn.Parameter(
            torch.empty(0, dtype=linear.weight.dtype, device=linear.weight.device),
            requires_grad=False)
        self.register_parameter("bias", None)

    def forward(self, x):
        self.nf4.codes, self.nf4.absmax_codes = self.codes, self.absmax_codes
        self.nf4.absmax_scales, self.nf4.absmax_offset = self.absmax_scales, self.absmax_offset
        return _NF4LinearFunction.apply(x, self.nf4)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, nf4_dq"


def quantize_linear_layers(model, target_names, block=64, second_block=256):
    """Replaces every nn.Linear whose attribute name is in target_names by an NF4Linear (the
    block projections; embeddings, output layer and norms stay BF16, as in QLoRA). Returns the
    number of weights quantized and the bytes of their codes and constants."""
    replaced = []
    for parent in model.modules():
        for name, child in list(parent.named_children()):
            if name in target_names and type(child) is torch.nn.Linear:
                replaced.append((parent, name))
    weights = 0
    nbytes = 0
    for parent, name in replaced:  # one at a time: each BF16 weight is freed once replaced
        child = getattr(parent, name)
        q = NF4Linear(child, block, second_block)
        setattr(parent, name, q)
        weights += child.weight.numel()
        nbytes += q.nf4.nbytes()
        del child
    return weights, nbytes
