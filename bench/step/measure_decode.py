#!/usr/bin/env python3
"""Measured decode steps: the time to generate one token for each of `batch` sequences, each
holding `context` tokens in its KV cache, for comparison with ftplan's generation model.

A dense decoder of a catalog model's shapes (data/models/<id>.json: Llama, Mistral, Qwen2/3),
random BF16 weights on the GPU (nothing is downloaded), written in plain PyTorch as a serving
engine's decode step runs: token embedding; per layer RMSNorm, one fused QKV projection, rotary
embedding, the new key and value written into a preallocated BF16 cache, attention of the new
token over the cache (grouped-query heads folded into the query rows, FlashAttention through
SDPA), output projection, RMSNorm, fused gate/up projection, SiLU, down projection; final norm,
the LM head over the whole vocabulary and a greedy pick. One step is captured as a CUDA graph
and replayed (no host launch cost, as engines do with CUDA graphs); the time of a step is the
median over repeats of the mean of back-to-back replays, CUDA events. Every replay writes the
same cache position, so the step reads exactly `context` cached tokens (plus the new one).

Output: JSON, schema "ftplan-decode/1" (bench/README.md). Progress goes to standard error.
"""

import argparse
import datetime
import gc
import json
import math
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCHEMA = "ftplan-decode/1"
DENSE_TYPES = ("llama", "mistral", "qwen2", "qwen3")
EXIT_NO_GPU = 3


def log(message):
    print(f"[measure_decode] {message}", file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", help="results JSON (default: standard output)")
    p.add_argument("--models", default="qwen3-0.6b,llama-3.1-8b,qwen3-32b",
                   help="catalog model ids, comma-separated (dense Llama/Mistral/Qwen layouts)")
    p.add_argument("--contexts", default="1024,8192", help="cached tokens per sequence")
    p.add_argument("--batches", default="1,8,32,64,128,256,512",
                   help="sequences decoded together")
    p.add_argument("--max-cache-gb", type=float, default=80.0,
                   help="skip a (batch, context) whose KV cache exceeds this many GB (10^9 B)")
    p.add_argument("--repeats", type=int, default=5, help="timed repeats (default 5)")
    p.add_argument("--min-repeat-ms", type=float, default=30.0,
                   help="replays per repeat: enough to last this long (default 30 ms)")
    p.add_argument("--time-budget-s", type=float, default=None,
                   help="skip the remaining rows (recorded as skipped) once this much is spent")
    p.add_argument("--gpu-id", help="ftplan catalog id of this card (default: from its name)")
    return p.parse_args(argv)


def ints(text):
    return [int(x) for x in text.split(",") if x.strip()]


class Decoder:
    """The weights and one decode step of a dense decoder of `config`'s shapes."""

    def __init__(self, config, device):
        import torch

        self.c = config
        h = config["hidden_size"]
        self.heads = config["num_attention_heads"]
        self.kv_heads = config.get("num_key_value_heads", self.heads)
        self.head_dim = config.get("head_dim") or h // self.heads
        self.layers = config["num_hidden_layers"]
        inter = config["intermediate_size"]
        vocab = config["vocab_size"]
        self.eps = config.get("rms_norm_eps", 1e-6)
        self.qk_norm = config["model_type"] == "qwen3"
        self.qkv_bias = config["model_type"] == "qwen2" or config.get("attention_bias", False)
        bf16 = torch.bfloat16
        torch.manual_seed(0)

        def weight(*shape):
            return (torch.randn(*shape, device=device, dtype=bf16) * 0.02)

        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        self.embed = weight(vocab, h)
        self.tied = bool(config.get("tie_word_embeddings", False))
        self.lm_head = self.embed if self.tied else weight(vocab, h)
        self.blocks = []
        for _ in range(self.layers):
            b = {
                "ln1": torch.ones(h, device=device, dtype=bf16),
                "wqkv": weight(q + 2 * kv, h),
                "wo": weight(h, q),
                "ln2": torch.ones(h, device=device, dtype=bf16),
                "wgu": weight(2 * inter, h),
                "wd": weight(h, inter),
            }
            if self.qkv_bias:
                b["bqkv"] = torch.zeros(q + 2 * kv, device=device, dtype=bf16)
            if self.qk_norm:
                b["qn"] = torch.ones(self.head_dim, device=device, dtype=bf16)
                b["kn"] = torch.ones(self.head_dim, device=device, dtype=bf16)
            self.blocks.append(b)
        self.norm = torch.ones(h, device=device, dtype=bf16)
        self.weight_bytes = sum(t.numel() * t.element_size() for b in self.blocks
                                for t in b.values())
        self.weight_bytes += self.embed.numel() * 2 + (0 if self.tied else self.lm_head.numel() * 2)
        self.weight_bytes += self.norm.numel() * 2

    def kv_bytes_per_token(self):
        return self.layers * 2 * self.kv_heads * self.head_dim * 2

    def rms(self, x, w):
        import torch

        v = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(v + self.eps)).to(x.dtype) * w

    def rope(self, x, cos, sin):
        import torch

        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin

    def step(self, tokens, caches, position, cos, sin):
        """One decode step of tokens [B]: writes cache slot `position`, attends over slots
        [0, position]; returns the greedy next tokens [B]."""
        import torch
        import torch.nn.functional as F

        batch = tokens.shape[0]
        d, hq, hkv = self.head_dim, self.heads, self.kv_heads
        x = F.embedding(tokens, self.embed)  # [B, h]
        for b, (kc, vc) in zip(self.blocks, caches):
            a = self.rms(x, b["ln1"])
            qkv = F.linear(a, b["wqkv"], b.get("bqkv"))
            q, k, v = qkv.split((hq * d, hkv * d, hkv * d), dim=-1)
            q = q.view(batch, hq, d)
            k = k.view(batch, hkv, d)
            if self.qk_norm:
                q, k = self.rms(q, b["qn"]), self.rms(k, b["kn"])
            q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
            kc[:, :, position] = k
            vc[:, :, position] = v.view(batch, hkv, d)
            # The query heads sharing a KV head become that head's query rows: one new token
            # sees every cached position, so no mask is needed.
            o = F.scaled_dot_product_attention(q.view(batch, hkv, hq // hkv, d), kc, vc)
            x = x + F.linear(o.reshape(batch, hq * d), b["wo"])
            a = self.rms(x, b["ln2"])
            g, u = F.linear(a, b["wgu"]).chunk(2, dim=-1)
            x = x + F.linear(F.silu(g) * u, b["wd"])
        logits = F.linear(self.rms(x, self.norm), self.lm_head)
        return torch.argmax(logits, dim=-1)


def time_point(dec, batch, context, args, device):
    """Captures one step at (batch, context) and times its replays."""
    import torch

    hkv, d = dec.kv_heads, dec.head_dim
    slots = context + 1  # the cached tokens and the new one
    caches = [(torch.zeros(batch, hkv, slots, d, device=device, dtype=torch.bfloat16),
               torch.zeros(batch, hkv, slots, d, device=device, dtype=torch.bfloat16))
              for _ in range(dec.layers)]
    for kc, vc in caches:  # cached values of the scale real keys and values have
        kc.normal_(0, 1)
        vc.normal_(0, 1)
    tokens = torch.randint(0, dec.c["vocab_size"], (batch,), device=device)
    theta = dec.c.get("rope_theta", 10000.0)
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, device=device, dtype=torch.float32) / d))
    angle = torch.cat((context * inv, context * inv))
    cos, sin = angle.cos().to(torch.bfloat16), angle.sin().to(torch.bfloat16)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            out = dec.step(tokens, caches, context, cos, sin)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        out = dec.step(tokens, caches, context, cos, sin)
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    graph.replay()
    stop.record()
    stop.synchronize()
    one = max(start.elapsed_time(stop), 1e-3)
    replays = max(3, min(2000, math.ceil(args.min_repeat_ms / one)))
    means = []
    for _ in range(args.repeats):
        start.record()
        for _ in range(replays):
            graph.replay()
        stop.record()
        stop.synchronize()
        means.append(start.elapsed_time(stop) / replays)
    assert int(out.min()) >= 0
    del graph, caches
    return {"step_ms": statistics.median(means), "min_ms": min(means), "max_ms": max(means),
            "repeat_means_ms": means, "replays_per_repeat": replays}


def versions():
    import torch

    return {"python": platform.python_version(), "torch": torch.__version__,
            "torch_cuda": torch.version.cuda}


def main(argv):
    args = parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    configs = {}
    for model_id in models:
        path = REPO / "data" / "models" / f"{model_id}.json"
        if not path.exists():
            raise SystemExit(f"measure_decode: --models: no catalog config {path}")
        config = json.loads(path.read_text())
        if config.get("model_type") not in DENSE_TYPES:
            raise SystemExit(f"measure_decode: --models: {model_id} is model_type "
                             f"{config.get('model_type')!r}; this loop builds "
                             f"{', '.join(DENSE_TYPES)}")
        configs[model_id] = config
    try:
        import torch
    except ImportError as error:
        log(f"PyTorch is not installed ({error}): nothing measured")
        return EXIT_NO_GPU
    if not torch.cuda.is_available():
        log("no CUDA device available: nothing measured")
        return EXIT_NO_GPU
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    # One home for the card's catalog id and for writing results as rows arrive.
    from measure_step import match_gpu, write  # noqa: E402

    started = time.monotonic()
    props = torch.cuda.get_device_properties(0)
    gpu_id, basis = (args.gpu_id, "--gpu-id") if args.gpu_id else match_gpu(props.name)
    doc = {
        "schema": SCHEMA, "tool": "bench/step/measure_decode.py",
        "timestamp_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ"),
        "device": {"name": props.name, "compute_capability": f"{props.major}.{props.minor}",
                   "memory_total_bytes": props.total_memory, "ftplan_gpu_id": gpu_id,
                   "ftplan_gpu_id_basis": basis},
        "software": versions(),
        "settings": {"weights": "bf16", "kv_cache": "bf16", "attention": "sdpa",
                     "cuda_graph": True, "repeats": args.repeats,
                     "min_repeat_ms": args.min_repeat_ms, "max_cache_gb": args.max_cache_gb},
        "elapsed_s": None, "rows": [],
    }
    failures = 0
    for model_id in models:
        if args.time_budget_s is not None and time.monotonic() - started > args.time_budget_s:
            log(f"{model_id}: time budget spent")
            break
        dec = None
        try:
            dec = Decoder(configs[model_id], "cuda")
        except Exception as error:  # noqa: BLE001 - recorded, the next model still runs
            log(f"{model_id}: build failed: {error}")
            doc["rows"].append({"model": model_id, "status": "failed",
                                "reason": f"build: {type(error).__name__}: {error}"})
            failures += 1
            dec = None
            gc.collect()
            torch.cuda.empty_cache()
            continue
        per_token = dec.kv_bytes_per_token()
        log(f"{model_id}: {dec.weight_bytes / 1e9:.2f} GB of weights, {per_token:,} KV B/token")
        for context in ints(args.contexts):
            for batch in ints(args.batches):
                row = {"id": f"{model_id}.b{batch}.c{context}", "model": model_id,
                       "batch": batch, "context": context, "weights_bytes": dec.weight_bytes,
                       "kv_bytes_per_token": per_token,
                       "kv_cache_bytes": per_token * batch * (context + 1),
                       "status": "skipped", "reason": None}
                doc["rows"].append(row)
                free, _ = torch.cuda.mem_get_info()
                if row["kv_cache_bytes"] > args.max_cache_gb * 1e9:
                    row["reason"] = f"cache above --max-cache-gb {args.max_cache_gb:g}"
                    continue
                if row["kv_cache_bytes"] > free - 6e9:  # room for logits and workspaces
                    row["reason"] = (f"cache above the {free / 1e9:.1f} GB free beside the "
                                     f"weights, less 6 GB")
                    continue
                if args.time_budget_s is not None and \
                        time.monotonic() - started > args.time_budget_s:
                    row["reason"] = "time budget spent"
                    continue
                try:
                    row.update(time_point(dec, batch, context, args, "cuda"))
                    row["status"] = "ok"
                    row["tokens_per_s"] = batch / (row["step_ms"] / 1e3)
                    log(f"{row['id']}: {row['step_ms']:.3f} ms/step, "
                        f"{row['tokens_per_s']:.0f} tokens/s")
                except torch.cuda.OutOfMemoryError as error:
                    row.update(status="oom", reason=str(error).splitlines()[0])
                    log(f"{row['id']}: out of memory")
                except Exception as error:  # noqa: BLE001
                    row.update(status="failed", reason=f"{type(error).__name__}: {error}")
                    failures += 1
                    log(f"{row['id']}: failed: {error}")
                gc.collect()
                torch.cuda.empty_cache()
                write(doc, args.out)
        del dec
        gc.collect()
        torch.cuda.empty_cache()
    doc["elapsed_s"] = time.monotonic() - started
    write(doc, args.out, final=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
