#!/usr/bin/env python3
"""Writes ftplan-bench-sample.json: a SYNTHETIC results file in ftplan-bench's schema
("ftplan-bench/1", bench/README.md), for testing the calibration import without a GPU.

No number in it is a measurement. Each rate is a chosen fraction of the NVIDIA H200 SXM datasheet
(data/gpus/h200-sxm.yaml: 989.5 dense BF16 TFLOPS, 1979 dense FP8 TFLOPS, 4800 GB/s HBM3e); the
times follow from the FLOPs and bytes of each benchmark, computed as ftplan-bench computes them.
Run: python3 bench/results/sample/make_sample.py > bench/results/sample/ftplan-bench-sample.json
"""
import json
import math

BF16_TFLOPS, FP8_TFLOPS, HBM_GBPS = 989.5, 1979.0, 4800.0
L2_BYTES = 60 * 2**20
MODELS = {  # hidden, q, kv, intermediate (data/models/*.json)
    "llama-3.1-8b": (4096, 4096, 1024, 14336),
    "qwen3-32b": (5120, 8192, 1024, 25600),
    "llama-3.3-70b": (8192, 8192, 1024, 28672),
}


def footprint(n):
    return (n + 255) // 256 * 256


def input_sets(set_bytes):
    others = 3 * L2_BYTES
    return 1 if set_bytes >= others else min(1 + -(-others // set_bytes), 64)


def projection(model, name):
    h, q, kv, i = MODELS[model]
    return {"q": (h, q), "kv": (h, kv), "o": (q, h), "gate_up": (h, i), "down": (i, h)}[name]


def gemm(dtype, model, proj, op, tokens, fraction, max_error):
    k_in, n_out = projection(model, proj)
    m, n, k = {"fwd": (n_out, tokens, k_in), "bwd_dx": (k_in, tokens, n_out),
               "bwd_dw": (k_in, n_out, tokens)}[op]
    fp8 = dtype == "fp8"
    size = 1 if fp8 else 2
    layout = "TN" if fp8 else {"fwd": "TN", "bwd_dx": "NN", "bwd_dw": "NT"}[op]
    return dict(
        id=f"gemm.{dtype}.{model}.{proj}.{op}.t{tokens}", cls="gemm", op=op, model=model,
        projection=proj,
        shape={"tokens": tokens, "in_features": k_in, "out_features": n_out, "m": m, "n": n, "k": k},
        layout=layout, dtype="fp8_e4m3" if fp8 else "bf16", output_dtype="bf16",
        accumulate="fp32_fast" if fp8 and op == "fwd" else "fp32",
        flops=2 * m * n * k, bytes=(m * k + k * n) * size + m * n * 2,
        bytes_counted="A and B read once, D written once (minimum traffic)",
        rate=("flops", fraction * (FP8_TFLOPS if fp8 else BF16_TFLOPS) * 1e12),
        set_bytes=footprint(m * k * size) + footprint(k * n * size) + footprint(m * n * 2),
        check=("|gpu - ref| / max(|ref|, sqrt(sum_p (a_p b_p)^2)), ref in FP64 from the device's "
               "inputs, at sampled outputs", max_error, 1 / 32 if fp8 else 1 / 64, 24))


def memory(id, cls, op, shape, dtype, output_dtype, flops, nbytes, counted, set_bytes, fraction,
           check, model=None, projection=None, layout=None, accumulate=None):
    return dict(id=id, cls=cls, op=op, model=model, projection=projection, shape=shape,
                layout=layout, dtype=dtype, output_dtype=output_dtype, accumulate=accumulate,
                flops=flops, bytes=nbytes, bytes_counted=counted,
                rate=("bytes", fraction * HBM_GBPS * 1e9), set_bytes=set_bytes, check=check)


def entries():
    out = [
        gemm("bf16", "llama-3.1-8b", "gate_up", "fwd", 2048, 0.70, 2.1e-3),
        gemm("bf16", "llama-3.1-8b", "gate_up", "bwd_dx", 2048, 0.66, 2.4e-3),
        gemm("bf16", "llama-3.1-8b", "gate_up", "bwd_dw", 2048, 0.64, 1.9e-3),
        gemm("bf16", "llama-3.1-8b", "kv", "fwd", 2048, 0.45, 1.7e-3),
        gemm("bf16", "qwen3-32b", "q", "fwd", 4096, 0.70, 2.2e-3),
        gemm("bf16", "llama-3.3-70b", "down", "fwd", 8192, 0.74, 2.6e-3),
        gemm("fp8", "llama-3.1-8b", "gate_up", "fwd", 2048, 0.58, 7.5e-3),
        gemm("fp8", "llama-3.3-70b", "down", "fwd", 8192, 0.66, 9.1e-3),
    ]
    gib = 2**30
    out.append(memory("bandwidth.d2d_copy.1gib", "bandwidth", "d2d_copy", {"bytes": gib}, "bytes",
                      "bytes", 0, 2 * gib, "bytes read + bytes written (2 x the copy size)",
                      2 * footprint(gib), 0.85,
                      ("mismatching 32-bit words (source vs copy) in 16 evenly spaced 1 MiB slices",
                       0, 0, 17)))
    out.append(memory("bandwidth.read.1gib", "bandwidth", "read", {"bytes": gib}, "bytes", "u64", 0,
                      gib, "bytes read (the 8-byte sum written per block is not counted)",
                      footprint(gib), 0.90,
                      ("|gpu sum - cpu sum| of all 32-bit words (mod 2^64)", 0, 0, 1)))
    for tokens, fraction in ((2048, 0.55), (8192, 0.75)):
        h, r = 4096, 16
        out.append(memory(
            f"adapter.lora_r16.llama-3.1-8b.t{tokens}", "adapter", "lora_pair",
            {"tokens": tokens, "hidden": h, "rank": r}, "bf16", "bf16", 4 * tokens * h * r,
            2 * (tokens * h + r * h + tokens * r) + 2 * (tokens * r + h * r + 2 * tokens * h),
            "x, A read and h written; h, B, y read and y written (2 B each)",
            2 * footprint(tokens * h * 2) + footprint(tokens * r * 2), fraction,
            ("|gpu - ref| / max(|ref|, sqrt(sum of squared terms)), FP64 reference, h at sampled "
             "tokens and y over sampled output features", 2.9e-3, 1 / 64, 8 * (16 + 65)),
            model="llama-3.1-8b", layout="TN,TN", accumulate="fp32"))
    for model, fraction in (("llama-3.1-8b", 0.80), ("llama-3.3-70b", 0.85)):
        h, _, _, i = MODELS[model]
        n = i * h
        blocks = n // 64
        groups = -(-blocks // 256)
        out.append(memory(
            f"dequant.nf4_dq.{model}.gate_up", "dequant", "nf4_dequant",
            {"rows": i, "cols": h, "numel": n, "block": 64, "second_block": 256}, "nf4", "bf16",
            n + 2 * blocks, n // 2 + blocks + 4 * groups + 2 * n,
            "4-bit codes + 8-bit absmax codes + FP32 second-level scales read, BF16 weights written",
            footprint(n // 2) + footprint(blocks) + footprint(4 * groups) + footprint(2 * n),
            fraction, ("|gpu - ref| / |ref| (0 where both are 0), ref = reference.cpp "
                       "nf4_dequantize_element, at 2^20 evenly spaced weights", 3.1e-3, 1 / 128,
                       2**20 + 1), model=model, projection="gate_up"))
    for tokens, fraction in ((2048, 0.60), (8192, 0.80)):
        h = 4096
        out.append(memory(
            f"norm.rmsnorm_fwd.llama-3.1-8b.t{tokens}", "norm", "rmsnorm_fwd",
            {"tokens": tokens, "hidden": h}, "bf16", "bf16", 4 * tokens * h,
            4 * tokens * h + 2 * h, "x read, y written (2 B each), the weight vector read once",
            2 * footprint(tokens * h * 2), fraction,
            ("|gpu - ref| / |ref|, FP64 reference, every element of 16 evenly spaced rows", 3.9e-3,
             1 / 128, 17 * h), model="llama-3.1-8b", accumulate="fp32"))
    params = 41943040
    out.append(memory(
        "optimizer.adamw_fused.lora_r16.llama-3.1-8b", "optimizer", "adamw", {"params": params},
        "fp32", "bf16", 15 * params, 28 * params,
        "FP32 p, m, v and BF16 grad read (14 B/param); FP32 p, m, v and BF16 weight written "
        "(14 B/param)", 3 * footprint(4 * params) + 2 * footprint(2 * params), 0.85,
        ("worst of error / its bound: FP32 p, m, v as |gpu - ref| / largest term of the update "
         "(bound 1e-5), BF16 weight as |gpu - ref| / |ref| (bound 2^-7); FP64 reference, first "
         "2^20 parameters", 0.52, 1.0, 4 * 2**20), model="llama-3.1-8b"))
    return out


def record(e):
    kind, rate = e["rate"]
    median = e[kind] / rate
    sets = input_sets(e["set_bytes"])
    per_repeat = max(1, math.ceil(1e-3 / median / sets)) * sets
    metric, max_error, bound, samples = e["check"]
    return {
        "id": e["id"], "class": e["cls"], "op": e["op"], "model": e["model"],
        "projection": e["projection"], "shape": e["shape"], "layout": e["layout"],
        "dtype": e["dtype"], "output_dtype": e["output_dtype"], "accumulate": e["accumulate"],
        "flops": e["flops"], "bytes": e["bytes"], "bytes_counted": e["bytes_counted"],
        "status": "ok", "reason": None,
        "median_s": float(f"{median:.9g}"), "min_s": float(f"{0.98 * median:.9g}"),
        "max_s": float(f"{1.05 * median:.9g}"),
        "achieved_TFLOPS": float(f"{e['flops'] / median / 1e12:.9g}"),
        "achieved_GBps": float(f"{e['bytes'] / median / 1e9:.9g}"),
        "repeats": 30, "launches_per_repeat": per_repeat,
        "warmup_launches": 10 + max(3, sets) + per_repeat, "input_sets": sets, "cuda_graph": True,
        "check": {"passed": True, "metric": metric, "max_error": max_error, "bound": bound,
                  "samples": samples},
    }


def main():
    benchmarks = [record(e) for e in entries()]
    doc = {
        "schema": "ftplan-bench/1",
        "note": ("SYNTHETIC example for testing the calibration import: no number in this file is "
                 "a measurement. Rates are chosen fractions of the NVIDIA H200 SXM datasheet "
                 "(989.5 dense BF16 TFLOPS, 1979 dense FP8 TFLOPS, 4800 GB/s): BF16 GEMMs 45-74 %, "
                 "FP8 GEMMs 58-66 %, memory-bound kernels 55-90 % of the bandwidth; times follow "
                 "from each benchmark's FLOPs and bytes. Written by make_sample.py."),
        "tool": "ftplan-bench", "tool_version": "0.1.0", "timestamp_utc": "2026-01-01T00:00:00Z",
        "elapsed_s": 60,
        "settings": {"quick": False, "warmup": 10, "repeats": 30, "min_repeat_s": 0.001,
                     "filter": "", "command_line": "ftplan-bench --out ftplan-bench.json"},
        "device": {
            "name": "NVIDIA H200", "compute_capability": "9.0", "sm_count": 132,
            "memory_total_bytes": 143771 * 2**20, "l2_cache_bytes": L2_BYTES,
            "memory_bus_width_bits": 6144, "pci_bus_id": "00000000:00:00.0",
            "driver_version": "synthetic", "cuda_driver_api_version": "13.0",
            "cuda_runtime_version": "13.0", "cublaslt_version": "13.0.0",
            "clocks": {"source": "nvml", "sm_max_MHz": 1980, "memory_max_MHz": 3201,
                       "sm_at_start_MHz": 1980, "sm_at_end_MHz": 1980},
            "power_limit_W": 700, "temperature_at_end_C": None},
        "benchmarks": benchmarks,
    }
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
