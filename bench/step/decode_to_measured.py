#!/usr/bin/env python3
"""Measured decode steps (ftplan-decode/1, measure_decode.py) as rows of ftplan's validation data
for generation (data/measured/inference.yaml): engine `pytorch` (a bare loop on CUDA graphs), the
step timed at one context (`decode.context`), `concurrency` the batch, `tpot_ms` the step's time.
Rows that did not run (skipped, out of memory, failed) have no figure and are left out.

Usage: decode_to_measured.py --source ID --prefix D decode.json [more.json ...] > rows.yaml
"""

import argparse
import json
import sys


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--source", required=True, help="source id (data/sources-*.yaml)")
    p.add_argument("--prefix", required=True, help="row id prefix (ids must be unique)")
    p.add_argument("files", nargs="+")
    a = p.parse_args(argv)
    out = ["inference:"]
    n = 0
    for path in a.files:
        doc = json.load(open(path))
        if doc.get("schema") != "ftplan-decode/1":
            raise SystemExit(f"decode_to_measured: {path}: schema {doc.get('schema')!r} is not "
                             f"ftplan-decode/1")
        gpu = doc["device"]["ftplan_gpu_id"]
        if not gpu:
            raise SystemExit(f"decode_to_measured: {path}: device.ftplan_gpu_id is empty")
        sw = doc["software"]
        for r in doc["rows"]:
            if r.get("status") != "ok":
                continue
            n += 1
            out += [f"  - id: {a.prefix}{n}", f"    source: {a.source}", "    engine: pytorch",
                    f"    model: {r['model']}", f"    gpu: {gpu}", "    tp: 1",
                    "    weights: bf16", "    kv_dtype: bf16", "    decode:",
                    f"      context: {r['context']}", f"      concurrency: {r['batch']}",
                    f"      tpot_ms: {r['step_ms']:.4f}",
                    f"    note: \"{path.split('/')[-1]} row {r['id']}: median of "
                    f"{len(r['repeat_means_ms'])} repeats of {r['replays_per_repeat']} CUDA-graph "
                    f"replays ({r['min_ms']:.4f} to {r['max_ms']:.4f} ms); KV cache "
                    f"{r['kv_cache_bytes'] / 1e9:.2f} GB, weights {r['weights_bytes'] / 1e9:.2f} "
                    f"GB; torch {sw['torch']}\""]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
