#!/usr/bin/env python3
"""Writes ftplan-step-sample.json: a SYNTHETIC results file in measure_step.py's schema
("ftplan-step/1", bench/README.md), for testing `ftplan calibrate step` without a GPU.

No number in it is a measurement: step times and peak memory are round figures of a plausible
size chosen by hand; the other fields follow from them (tokens/s = micro_batch x seq / median)
or from the model configs (trainable LoRA parameters, NF4 weights). The rows, the settings and
the ftplan command lines come from measure_step.py itself, so the keys are the writer's.
Run: python3 bench/results/sample/make_step_sample.py > bench/results/sample/ftplan-step-sample.json
"""
import json
import sys
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "bench" / "step"))
import measure_step  # noqa: E402 - needs the path above; imports no torch at module level

SEQ, RANK, WARMUP, STEPS = 2048, 16, 3, 10
# (model, method, micro-batch, checkpointing, median step s, peak allocated GB, peak reserved GB)
MEASURED = [
    ("qwen3-0.6b", "lora", 1, True, 0.110, 3.1, 3.6),
    ("qwen3-0.6b", "lora", 4, False, 0.290, 22.0, 24.0),
    ("llama-3.2-1b", "qlora", 1, True, 0.210, 2.6, 3.0),
    ("llama-3.1-8b", "lora", 1, True, 0.520, 19.5, 21.0),
]
SKIPPED = [("llama-3.1-8b", "qlora", 4, False)]


def config(model):
    return json.loads((REPO / "data" / "models" / f"{model}.json").read_text())


def projections(c):
    """(in, out) of the seven block projections of one layer."""
    h, i = c["hidden_size"], c["intermediate_size"]
    d = c.get("head_dim") or h // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * d, c["num_key_value_heads"] * d
    return [(h, q), (h, kv), (h, kv), (q, h), (h, i), (h, i), (i, h)]


def counts(model, method):
    c = config(model)
    layers, h, v = c["num_hidden_layers"], c["hidden_size"], c["vocab_size"]
    proj = projections(c)
    block = sum(a * b for a, b in proj) + 2 * h
    total = v * h * (1 if c.get("tie_word_embeddings") else 2) + layers * block + h
    trainable = layers * sum(RANK * (a + b) for a, b in proj)
    nf4 = layers * len(proj) if method == "qlora" else 0
    numel = layers * sum(a * b for a, b in proj) if method == "qlora" else 0
    nf4_bytes = int(numel / 2 + numel / 64 + 4 * numel / 64 / 256)
    return total, trainable, nf4, nf4_bytes


def measured_row(args, gpu_id, model, method, mb, ckpt, median, alloc_gb, reserved_gb):
    row = measure_step.empty_row(model, method, SEQ, mb, ckpt, args, gpu_id)
    total, trainable, nf4, nf4_bytes = counts(model, method)
    times = [round(median * (1 + 0.004 * (k - 4.5)), 6) for k in range(STEPS)]
    row.update(
        status="ok", build_s=5.0, lora_impl="peft", total_params=total,
        trainable_params=trainable, adapter_dtype="float32", nf4_weights=nf4,
        nf4_bytes=nf4_bytes, median_s=median, min_s=min(times), max_s=max(times),
        step_times_s=times, tokens_per_s=mb * SEQ / median, loss=12.0,
        allocated_before_step_bytes=int(alloc_gb * 0.4e9),
        peak_allocated_bytes=int(alloc_gb * 1e9), peak_reserved_bytes=int(reserved_gb * 1e9),
        device_used_after_bytes=int(reserved_gb * 1e9 + 0.6e9))
    return row


def main():
    args = SimpleNamespace(rank=RANK, warmup=WARMUP, steps=STEPS)
    name = "NVIDIA H200"
    gpu_id, basis = measure_step.match_gpu(name)
    rows = [measured_row(args, gpu_id, *m) for m in MEASURED]
    for model, method, mb, ckpt in SKIPPED:
        row = measure_step.empty_row(model, method, SEQ, mb, ckpt, args, gpu_id)
        row["reason"] = "time budget of 240 s spent"
        rows.append(row)
    doc = {
        "schema": measure_step.SCHEMA,
        "note": ("SYNTHETIC example for testing `ftplan calibrate step`: no number in this file is "
                 "a measurement. Step times and peak memory are round figures of a plausible size "
                 "chosen by hand for an NVIDIA H200 SXM; written by make_step_sample.py."),
        "tool": "bench/step/measure_step.py",
        "timestamp_utc": "2026-01-01T00:00:00Z",
        "device": {"name": name, "compute_capability": "9.0",
                   "memory_total_bytes": 143771 * 2**20, "ftplan_gpu_id": gpu_id,
                   "ftplan_gpu_id_basis": basis},
        "software": {"python": "synthetic", "torch": "synthetic", "transformers": "synthetic",
                     "peft": "synthetic", "torch_cuda": "synthetic", "cudnn": None},
        "settings": {
            "quick": False, "seq": SEQ, "lora_rank": RANK, "lora_alpha": 2 * RANK,
            "lora_targets": list(measure_step.TARGET_MODULES), "lora_impl": "peft",
            "lora_dropout": 0.0,
            "optimizer": "torch.optim.AdamW(lr=1e-4, weight_decay=0.01, fused=True)",
            "autocast": "bf16", "base_weights": "bf16 (lora), nf4 + double quantization (qlora)",
            "attention": "sdpa", "loss": "cross-entropy over the full vocabulary (not chunked)",
            "warmup_steps": WARMUP, "steps": STEPS, "time_budget_s": 240.0,
            "peak_memory": "torch.cuda.max_memory_allocated / max_memory_reserved over the "
                           "timed steps, after warm-up (optimizer states already allocated)",
        },
        "elapsed_s": 120.0,
        "rows": rows,
    }
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
