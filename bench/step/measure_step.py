#!/usr/bin/env python3
"""Measured full, LoRA and QLoRA fine-tuning steps, for comparison with ftplan's estimates.

Builds catalog models (data/models/<id>.json) with random weights on the GPU (nothing is
downloaded), attaches rank-16 LoRA adapters to all seven block projections (PEFT), and times
whole optimizer steps (forward, backward, AdamW) at a fixed sequence length for each micro-batch
size, with activation checkpointing on and off. A full fine-tune trains every weight in FP32
under BF16 autocast, as the Hugging Face Trainer does with bf16=True and an FP32 model. QLoRA stores the block projections in NF4 with
double quantization, dequantized to BF16 on every use (nf4_torch.py; bitsandbytes is not
needed). Each row records the step time (median of the measured steps, CUDA events, after
warm-up), peak memory (torch.cuda.max_memory_allocated / max_memory_reserved), every setting,
and the ftplan command lines that predict the same run. Output: JSON, schema "ftplan-step/1"
(bench/README.md). Progress goes to standard error.

With --objective dpo each step is a DPO step (TRL DPOTrainer's order): a micro-batch of N pairs
is 2N sequences (chosen and rejected) in one policy forward; the reference's log-probabilities
come from a forward under no_grad after it (LoRA: the same model with its adapters switched off,
PEFT disable_adapter; full: a frozen BF16 copy of the model); then the sigmoid loss (beta 0.1)
and one backward. Log-probabilities as the model's own loss computes them: logits upcast to FP32,
cross-entropy per token.
"""

import argparse
import datetime
import gc
import json
import math
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCHEMA = "ftplan-step/1"
# HF module names of the seven block projections, and ftplan's names for them (--targets).
TARGET_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
FTPLAN_TARGETS = "q,k,v,o,gate,up,down"
DEFAULT_MODELS = "qwen3-0.6b,llama-3.2-1b,llama-3.1-8b"
DEFAULT_FULL_MODELS = "qwen3-0.6b,llama-3.2-1b,llama-3.2-3b"
METHODS = ("lora", "full", "qlora")
OBJECTIVES = ("sft", "dpo")
DPO_BETA = 0.1
EXIT_NO_GPU = 3


def log(message):
    print(f"[measure_step] {message}", file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", help="results JSON (default: standard output)")
    p.add_argument("--models", default=DEFAULT_MODELS,
                   help=f"catalog model ids for lora and qlora, comma-separated (default "
                        f"{DEFAULT_MODELS})")
    p.add_argument("--full-models", default=DEFAULT_FULL_MODELS,
                   help=f"catalog model ids for full fine-tuning (default {DEFAULT_FULL_MODELS})")
    p.add_argument("--methods", default=",".join(METHODS),
                   help="lora, full, qlora, comma-separated, measured in that order "
                        "(default all three)")
    p.add_argument("--micro-batches", default="1,4", help="micro-batch sizes (default 1,4)")
    p.add_argument("--checkpointing", default="on,off",
                   help="activation checkpointing: on, off or both (default both)")
    p.add_argument("--objective", choices=OBJECTIVES, default="sft",
                   help="sft (default: next-token loss) or dpo (pairs, reference model)")
    p.add_argument("--seq", type=int, default=2048, help="tokens per sequence (default 2048)")
    p.add_argument("--rank", type=int, default=16, help="LoRA rank (default 16, the seed's)")
    p.add_argument("--warmup", type=int, default=None, help="untimed steps (default 3, quick 2)")
    p.add_argument("--steps", type=int, default=None, help="timed steps (default 10, quick 5)")
    p.add_argument("--quick", action="store_true", help="fewer warm-up and timed steps")
    p.add_argument("--time-budget-s", type=float, default=None,
                   help="skip the remaining rows (recorded as skipped) once this much time is spent")
    p.add_argument("--gpu-id", help="ftplan catalog id of this card (default: from the device "
                                    "name and data/gpus)")
    p.add_argument("--lora-impl", choices=("peft", "builtin"), default="peft",
                   help="LoRA layers from PEFT (default) or the small built-in equivalent")
    p.add_argument("--device", default="cuda", help="torch device (default cuda)")
    args = p.parse_args(argv)
    args.warmup = args.warmup if args.warmup is not None else (2 if args.quick else 3)
    args.steps = args.steps if args.steps is not None else (5 if args.quick else 10)
    if args.steps < 1 or args.warmup < 1:
        p.error("--steps and --warmup must be at least 1 (the first step allocates the "
                "optimizer states)")
    return args


def split(text, allowed=None, name="value"):
    items = [s.strip() for s in text.split(",") if s.strip()]
    if allowed is not None:
        for item in items:
            if item not in allowed:
                raise SystemExit(f"measure_step: {name}: '{item}' is not one of "
                                 f"{', '.join(allowed)}")
    return items


def catalog_gpus():
    """(id, name) of every card in data/gpus, read from the top-level keys of each file."""
    cards = []
    for path in sorted((REPO / "data" / "gpus").glob("*.yaml")):
        fields = {}
        for line in path.read_text().splitlines():
            m = re.match(r"^(id|name):\s*(.+?)\s*$", line)
            if m:
                fields[m.group(1)] = m.group(2)
        if "id" in fields and "name" in fields:
            cards.append((fields["id"], fields["name"]))
    return cards


def match_gpu(device_name):
    """The catalog id for a device name as CUDA reports it, and how it was found. nvidia-smi
    and CUDA name the NVL and PCIe variants explicitly and the SXM module plainly
    ("NVIDIA H200"), so a plain name that prefixes several catalog names is the SXM one."""
    cards = catalog_gpus()
    for card_id, name in cards:
        if name == device_name:
            return card_id, "device name equals the catalog name"
    prefixed = [(i, n) for i, n in cards if n.startswith(device_name + " ")]
    if len(prefixed) == 1:
        return prefixed[0][0], f"the only catalog name starting with '{device_name}'"
    sxm = [(i, n) for i, n in prefixed if "SXM" in n]
    if len(sxm) == 1:
        return sxm[0][0], f"'{device_name}' is how the SXM variant reports itself"
    return None, f"no catalog card matches '{device_name}': pass --gpu-id"


def versions():
    out = {"python": platform.python_version()}
    for module in ("torch", "transformers", "peft"):
        try:
            out[module] = __import__(module).__version__
        except Exception as error:  # noqa: BLE001 - record whatever stops the import
            out[module] = f"unavailable: {error}"
    import torch
    out["torch_cuda"] = torch.version.cuda
    out["cudnn"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return out


def build_model(model_id, device, dtype_name="bfloat16"):
    """A causal LM from the catalog config.json with random weights, in `dtype_name`, on
    `device`."""
    import torch
    import transformers

    config_dict = json.loads((REPO / "data" / "models" / f"{model_id}.json").read_text())
    model_type = config_dict.pop("model_type")
    for key in ("architectures", "transformers_version", "torch_dtype", "dtype"):
        config_dict.pop(key, None)
    try:
        config = transformers.AutoConfig.for_model(model_type, **config_dict)
    except AttributeError:  # a transformers without AutoConfig.for_model
        config = transformers.CONFIG_MAPPING[model_type](**config_dict)
    config.use_cache = False
    torch.manual_seed(0)
    dtype = getattr(torch, dtype_name)
    with torch.device(device):
        try:
            model = transformers.AutoModelForCausalLM.from_config(
                config, dtype=dtype, attn_implementation="sdpa")
        except TypeError:  # transformers before the `dtype` argument
            model = transformers.AutoModelForCausalLM.from_config(
                config, torch_dtype=dtype, attn_implementation="sdpa")
    return model.to(device=device, dtype=dtype), config


class BuiltinLoraLinear:
    """Factory for the built-in LoRA layer (used when PEFT is absent or --lora-impl builtin):
    y = base(x) + (alpha / r) * x A^T B^T, A [r, in] Kaiming-uniform, B [out, r] zero, FP32
    adapter weights as PEFT keeps them."""

    @staticmethod
    def wrap(model, rank, alpha):
        import torch

        class LoraLinear(torch.nn.Module):
            def __init__(self, base):
                super().__init__()
                self.base = base
                device = base.weight.device
                self.lora_A = torch.nn.Parameter(
                    torch.empty(rank, base.in_features, device=device, dtype=torch.float32))
                self.lora_B = torch.nn.Parameter(
                    torch.zeros(base.out_features, rank, device=device, dtype=torch.float32))
                torch.nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
                self.scaling = alpha / rank

            def forward(self, x):
                update = torch.nn.functional.linear(
                    torch.nn.functional.linear(x, self.lora_A), self.lora_B)
                return self.base(x) + update * self.scaling

        for p in model.parameters():
            p.requires_grad_(False)
        targets = [(parent, name, child) for parent in model.modules()
                   for name, child in parent.named_children() if name in TARGET_MODULES
                   and isinstance(child, torch.nn.Linear)]
        for parent, name, child in targets:
            setattr(parent, name, LoraLinear(child))
        return model


def attach_lora(model, rank, impl):
    """LoRA on all seven projections, alpha = 2r; returns (model, implementation used)."""
    alpha = 2 * rank
    if impl == "peft":
        try:
            from peft import LoraConfig, get_peft_model
            config = LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=0.0, bias="none",
                                target_modules=list(TARGET_MODULES), task_type="CAUSAL_LM")
            return get_peft_model(model, config), "peft"
        except ImportError as error:
            log(f"PEFT unavailable ({error}); using the built-in LoRA layers")
    return BuiltinLoraLinear.wrap(model, rank, alpha), "builtin"


def base_model(model):
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def set_checkpointing(model, on):
    base = base_model(model)
    if on:
        base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    else:
        base.gradient_checkpointing_disable()
    base.config.use_cache = False


def ftplan_commands(model_id, method, seq, micro_batch, checkpointing, rank, gpu_id,
                    objective="sft"):
    adapter = [] if method == "full" else [f"--rank {rank}", f"--targets {FTPLAN_TARGETS}"]
    if objective == "sft":
        method_flags = [f"--method {method}"]
    else:
        method_flags = [f"--method {objective}"] + ([] if method == "full"
                                                     else [f"--adapter {method}"])
    flags = [f"--model {model_id}", *method_flags, *adapter,
             "--optimizer adamw", "--precision bf16", "--stack pytorch",
             f"--seq {seq}", f"--micro-batch {micro_batch}", "--grad-accum 1",
             f"--recompute {'full' if checkpointing else 'none'}", "--attention flash"]
    if method == "qlora":
        flags += ["--quant-block 64", "--quant-second-block 256"]
    gpu = f"--gpu {gpu_id if gpu_id else 'UNKNOWN'}"
    common = " ".join(flags)
    return {
        "fit": f"ftplan fit {common} --peak reserved {gpu} --json",
        "fit_allocated": f"ftplan fit {common} --peak allocated {gpu} --json",
        "step": f"ftplan step {common} {gpu} --json",
        "compare": {
            "peak_reserved_bytes": "fit: the estimated peak (reserved)",
            "peak_allocated_bytes": "fit_allocated: the estimated peak (allocated)",
            "median_s": "step: the estimated time of one optimizer step",
        },
    }


def sequence_logps(model, ids, labels):
    """Sum of each sequence's next-token log-probabilities, as the model's own loss computes
    them: the logits upcast to FP32, cross-entropy per token (the last position ignored)."""
    import torch

    logits = model(input_ids=ids).logits
    per_token = torch.nn.functional.cross_entropy(
        logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100,
        reduction="none")
    return -per_token.view(ids.shape[0], -1).sum(-1)


def dpo_loss(model, reference, ids, labels):
    """TRL's sigmoid DPO loss over pairs: rows [0, n) chosen, [n, 2n) rejected. The reference
    runs under no_grad after the policy's forward: `reference` is a frozen model, or None for
    the policy with its adapters switched off (PEFT disable_adapter)."""
    import contextlib
    import torch

    policy = sequence_logps(model, ids, labels)
    off = model.disable_adapter() if reference is None and hasattr(model, "disable_adapter") \
        else contextlib.nullcontext()
    with torch.no_grad(), off:
        ref = sequence_logps(reference if reference is not None else model, ids, labels)
    n = ids.shape[0] // 2
    margin = (policy[:n] - ref[:n]) - (policy[n:] - ref[n:])
    return -torch.nn.functional.logsigmoid(DPO_BETA * margin).mean()


def measure_row(model, optimizer, device, vocab_size, seq, micro_batch, warmup, steps,
                objective="sft", reference=None):
    """Times `steps` optimizer steps after `warmup` steps; returns the row's measurements.
    A DPO micro-batch of `micro_batch` pairs holds 2 × micro_batch sequences."""
    import torch

    cuda = device.startswith("cuda")
    generator = torch.Generator(device="cpu").manual_seed(micro_batch)
    sequences = micro_batch * (2 if objective == "dpo" else 1)
    ids = torch.randint(0, vocab_size, (sequences, seq), generator=generator).to(device)
    labels = torch.nn.functional.pad(ids[:, 1:], (0, 1), value=-100)

    def step():
        with torch.autocast(device_type="cuda" if cuda else "cpu", dtype=torch.bfloat16):
            if objective == "dpo":
                loss = dpo_loss(model, reference, ids, labels)
            else:
                loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    for _ in range(warmup):
        loss = step()
    times = []
    if cuda:
        torch.cuda.synchronize()
        allocated_before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        for _ in range(steps):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            loss = step()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) / 1e3)
        free, total = torch.cuda.mem_get_info()
        memory = {
            "allocated_before_step_bytes": allocated_before,
            "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
            "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
            "device_used_after_bytes": total - free,
        }
    else:
        for _ in range(steps):
            start = time.perf_counter()
            loss = step()
            times.append(time.perf_counter() - start)
        memory = {"allocated_before_step_bytes": None, "peak_allocated_bytes": None,
                  "peak_reserved_bytes": None, "device_used_after_bytes": None}
    loss_value = float(loss.detach().float())
    median = statistics.median(times)
    return {
        "median_s": median, "min_s": min(times), "max_s": max(times), "step_times_s": times,
        "tokens_per_s": sequences * seq / median, "sequences_per_micro_batch": sequences, "loss": loss_value, **memory,
    }


def plan_rows(args):
    models = split(args.models)
    for model_id in models:
        if not (REPO / "data" / "models" / f"{model_id}.json").exists():
            raise SystemExit(f"measure_step: --models: no catalog config data/models/"
                             f"{model_id}.json")
    methods = split(args.methods, METHODS, "--methods")
    full_models = split(args.full_models)
    for model_id in full_models:
        if not (REPO / "data" / "models" / f"{model_id}.json").exists():
            raise SystemExit(f"measure_step: --full-models: no catalog config data/models/"
                             f"{model_id}.json")
    micro_batches = [int(m) for m in split(args.micro_batches)]
    checkpointing = [c == "on" for c in split(args.checkpointing, ("on", "off"),
                                                  "--checkpointing")]
    # Grouped by method, then model (one model build each); cheap rows first within a group.
    # Methods in the order of METHODS: what a cut-short run leaves out is the last of them.
    return [(model_id, method, [(ckpt, mb) for ckpt in checkpointing for mb in micro_batches])
            for method in METHODS if method in methods
            for model_id in (full_models if method == "full" else models)]


def empty_row(model_id, method, seq, mb, ckpt, args, gpu_id):
    kind = method if args.objective == "sft" else f"{args.objective}-{method}"
    return {
        "id": f"{model_id}.{kind}.mb{mb}.ckpt-{'on' if ckpt else 'off'}",
        "model": model_id, "objective": args.objective, "method": method, "seq": seq,
        "micro_batch": mb, "grad_accum": 1,
        "activation_checkpointing": ckpt, "recompute": "full" if ckpt else "none",
        "lora_rank": None if method == "full" else args.rank, "status": "skipped",
        "reason": None,
        "warmup_steps": args.warmup, "steps": args.steps,
        "ftplan": ftplan_commands(model_id, method, seq, mb, ckpt, args.rank, gpu_id,
                                  args.objective),
    }


def finite(value):
    """JSON has no NaN or infinity: such values become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def write(doc, out, final=False):
    """To `out` after every row (a run cut short still leaves its rows), or once to stdout."""
    text = json.dumps(finite(doc), indent=2, allow_nan=False) + "\n"
    if out:
        tmp = Path(out).with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, out)
    elif final:
        sys.stdout.write(text)


def main(argv):
    args = parse_args(argv)
    groups = plan_rows(args)
    try:
        import torch
    except ImportError as error:
        log(f"PyTorch is not installed ({error}): nothing measured")
        return EXIT_NO_GPU
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        log("no CUDA device available: nothing measured (--device cpu runs a smoke test)")
        return EXIT_NO_GPU
    started = time.monotonic()

    if args.device.startswith("cuda"):
        props = torch.cuda.get_device_properties(torch.device(args.device))
        device = {"name": props.name, "compute_capability": f"{props.major}.{props.minor}",
                  "memory_total_bytes": props.total_memory}
    else:
        device = {"name": platform.processor() or "cpu", "compute_capability": None,
                  "memory_total_bytes": None}
    gpu_id, basis = (args.gpu_id, "--gpu-id") if args.gpu_id else match_gpu(device["name"])
    device["ftplan_gpu_id"] = gpu_id
    device["ftplan_gpu_id_basis"] = basis
    doc = {
        "schema": SCHEMA,
        "tool": "bench/step/measure_step.py",
        "timestamp_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ"),
        "device": device,
        "software": versions(),
        "settings": {
            "quick": args.quick, "objective": args.objective, "seq": args.seq, "lora_rank": args.rank,
            "lora_alpha": 2 * args.rank, "lora_targets": list(TARGET_MODULES),
            "lora_impl": args.lora_impl, "lora_dropout": 0.0,
            "optimizer": "torch.optim.AdamW(lr=1e-4, weight_decay=0.01, fused=True)",
            "autocast": "bf16",
            "base_weights": "bf16 (lora), nf4 + double quantization (qlora), fp32 trained "
                            "under bf16 autocast (full)",
            "attention": "sdpa", "loss": "cross-entropy over the full vocabulary (not chunked)",
            "warmup_steps": args.warmup, "steps": args.steps,
            "time_budget_s": args.time_budget_s,
            "dpo": None if args.objective != "dpo" else {
                "loss": f"sigmoid, beta {DPO_BETA}", "pairs": "micro_batch pairs = 2 x "
                "micro_batch sequences in one forward",
                "reference": "lora: the policy with adapters disabled (PEFT disable_adapter); "
                             "full: a frozen bf16 copy, forward under no_grad after the policy's"},
            "peak_memory": "torch.cuda.max_memory_allocated / max_memory_reserved over the "
                           "timed steps, after warm-up (optimizer states already allocated)",
        },
        "elapsed_s": None,
        "rows": [],
    }
    log(f"{device['name']} (ftplan --gpu {gpu_id}: {basis}); {sum(len(g[2]) for g in groups)} "
        f"rows, {args.warmup} warm-up + {args.steps} timed steps each")

    from nf4_torch import quantize_linear_layers  # noqa: E402 - needs torch, imported late

    failures = 0
    for model_id, method, configs in groups:
        rows = [empty_row(model_id, method, args.seq, mb, ckpt, args, gpu_id)
                for ckpt, mb in configs]
        doc["rows"].extend(rows)
        if args.time_budget_s is not None and time.monotonic() - started > args.time_budget_s:
            for row in rows:
                row["reason"] = f"time budget of {args.time_budget_s:.0f} s spent"
            write(doc, args.out)
            continue
        model = optimizer = reference = None
        try:
            build_start = time.monotonic()
            full = method == "full"
            model, config = build_model(model_id, args.device,
                                        "float32" if full else "bfloat16")
            total_params = sum(p.numel() for p in model.parameters())
            quantized = (0, 0)
            if method == "qlora":
                quantized = quantize_linear_layers(model, set(TARGET_MODULES))
            if full:
                impl = "none"  # every weight trained, no adapter layers
                for p in model.parameters():
                    p.requires_grad_(True)
            else:
                model, impl = attach_lora(model, args.rank, args.lora_impl)
            if args.objective == "dpo" and full:
                reference, _ = build_model(model_id, args.device, "bfloat16")
                reference.eval()
                for p in reference.parameters():
                    p.requires_grad_(False)
            trainable = [p for p in model.parameters() if p.requires_grad]
            fused = {"fused": True} if args.device.startswith("cuda") else {}
            optimizer = torch.optim.AdamW(trainable, lr=1e-4, weight_decay=0.01, **fused)
            model.train()
            build = {
                "build_s": time.monotonic() - build_start, "lora_impl": impl,
                "total_params": total_params,
                "trainable_params": sum(p.numel() for p in trainable),
                "adapter_dtype": str(trainable[0].dtype).replace("torch.", ""),
                "nf4_weights": quantized[0], "nf4_bytes": quantized[1],
            }
            log(f"{model_id} {method}: built in {build['build_s']:.1f} s, "
                f"{build['trainable_params']:,} trainable of {total_params:,} parameters")
        except Exception as error:  # noqa: BLE001 - a row records why it could not run
            failures += len(rows)
            for row in rows:
                row.update(status="failed", reason=f"model build: {type(error).__name__}: {error}")
            log(f"{model_id} {method}: model build failed: {error}")
            del model, optimizer, reference
            gc.collect()
            write(doc, args.out)
            continue

        for row, (ckpt, mb) in zip(rows, configs):
            if args.time_budget_s is not None and time.monotonic() - started > args.time_budget_s:
                row["reason"] = f"time budget of {args.time_budget_s:.0f} s spent"
                continue
            row.update(build)
            try:
                set_checkpointing(model, ckpt)
                result = measure_row(model, optimizer, args.device, config.vocab_size, args.seq,
                                     mb, args.warmup, args.steps, args.objective, reference)
                row.update(result)
                if math.isfinite(result["loss"]):
                    row["status"] = "ok"
                else:
                    row.update(status="failed", reason=f"loss is {result['loss']}")
                    failures += 1
            except torch.cuda.OutOfMemoryError as error:
                row.update(status="oom", reason=str(error).splitlines()[0])
                optimizer.zero_grad(set_to_none=True)
            except Exception as error:  # noqa: BLE001
                row.update(status="failed", reason=f"{type(error).__name__}: {error}")
                optimizer.zero_grad(set_to_none=True)
                failures += 1
            gc.collect()
            if args.device.startswith("cuda"):
                torch.cuda.empty_cache()
            if row["status"] == "ok":
                peak = row["peak_reserved_bytes"]
                log(f"{row['id']}: {row['median_s'] * 1e3:.1f} ms/step, "
                    f"{row['tokens_per_s']:.0f} tokens/s"
                    + (f", peak reserved {peak / 1e9:.2f} GB" if peak else ""))
            else:
                log(f"{row['id']}: {row['status']}: {row['reason']}")
            write(doc, args.out)
        del model, optimizer, reference
        gc.collect()
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()

    doc["elapsed_s"] = time.monotonic() - started
    write(doc, args.out, final=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main(sys.argv[1:]))
