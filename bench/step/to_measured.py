#!/usr/bin/env python3
"""Measured steps (ftplan-step/1) as rows of ftplan's validation data (data/measured/*.yaml).

Each row that ran (status ok) of a LoRA or full fine-tune becomes a run with its settings, the
measured peak (reserved, in GB) and the measured step time, on the `pytorch` stack (a bare loop:
no trainer's fixed time per micro-batch); DPO rows (--objective dpo) as method dpo, with
`adapter: lora` for LoRA. QLoRA rows are left out: measure_step.py dequantizes
NF4 in plain PyTorch (nf4_torch.py), which is neither bitsandbytes' memory nor its speed; rows
that ran out of memory or were skipped have no figure to compare.

Usage: to_measured.py --source ID --prefix G step.json [more.json ...] > rows.yaml
"""

import argparse
import json
import sys

TARGETS = "q,k,v,o,gate,up,down"


def rows(paths):
    n = 0
    for path in paths:
        doc = json.load(open(path))
        if doc.get("schema") != "ftplan-step/1":
            raise SystemExit(f"to_measured: {path}: schema {doc.get('schema')!r} is not ftplan-step/1")
        gpu = doc["device"]["ftplan_gpu_id"]
        if not gpu:
            raise SystemExit(f"to_measured: {path}: device.ftplan_gpu_id is empty: no catalog card")
        sw = doc["software"]
        for r in doc["rows"]:
            if r["status"] != "ok" or r["method"] not in ("lora", "full"):
                continue
            n += 1
            yield n, path, gpu, sw, r


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", required=True, help="source id (data/sources-*.yaml)")
    p.add_argument("--prefix", required=True, help="run id prefix (ids must be unique)")
    p.add_argument("files", nargs="+")
    a = p.parse_args(argv)
    out = ["runs:"]
    for n, path, gpu, sw, r in rows(a.files):
        lines = [f"  - id: {a.prefix}{n}", f"    source: {a.source}", f"    model: {r['model']}"]
        objective = r.get("objective", "sft")
        if objective == "sft":
            lines += [f"    method: {r['method']}"]
        else:  # a preference objective trains the whole model or, with `adapter`, LoRA
            lines += [f"    method: {objective}"]
            if r["method"] != "full":
                lines += [f"    adapter: {r['method']}"]
        if r["method"] == "lora":
            lines += [f"    rank: {r['lora_rank']}", f"    targets: {TARGETS}"]
        lines += ["    optimizer: adamw", f"    recompute: {r['recompute']}", "    attention: sdpa",
                  f"    seq: {r['seq']}", f"    micro_batch: {r['micro_batch']}",
                  f"    grad_accum: {r['grad_accum']}", f"    gpu: {gpu}", "    gpus: 1",
                  "    peak: reserved", f"    measured: {r['peak_reserved_bytes'] / 1e9:.3f}",
                  "    unit: GB", "    stack: pytorch", "    throughput:",
                  f"      value: {r['median_s']:.5f}", "      unit: step_seconds",
                  f"      note: \"median of {len(r['step_times_s'])} timed steps "
                  f"({min(r['step_times_s']):.4f} to {max(r['step_times_s']):.4f} s) after "
                  f"{r['warmup_steps']} warm-up steps, CUDA events\"",
                  f"    note: \"{path.split('/')[-1]} row {r['id']}: peak allocated "
                  f"{r['peak_allocated_bytes']:,} B, reserved {r['peak_reserved_bytes']:,} B; "
                  f"torch {sw['torch']}, transformers {sw['transformers']}, peft {sw['peft']}\""]
        out += lines
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
