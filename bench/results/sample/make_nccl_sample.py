#!/usr/bin/env python3
"""Writes ftplan-nccl-sample.json: a SYNTHETIC results file in allreduce.py's schema
("ftplan-nccl/1", bench/README.md), for testing the link calibration import without GPUs.

No number in it is a measurement. It pretends to be 8 NVIDIA H200 SXM on one NVSwitch baseboard
(450 GB/s nominal NVLink per direction, data/gpus/h200-sxm.yaml): the bus bandwidth of a size is
a chosen plateau (370 GB/s all-reduce, 360 GB/s all-gather) times size / (size + 16 MiB), a
curve of the shape nccl-tests show; times follow from it through allreduce.py's own bus factors.
Run: python3 bench/results/sample/make_nccl_sample.py > bench/results/sample/ftplan-nccl-sample.json
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "bench" / "nccl"))
import allreduce  # noqa: E402 - needs the path above; imports no torch at module level

WORLD, ELEMENT = 8, 2  # ranks, bytes per BF16 element
PLATEAU_GBPS = {"all_reduce": 370.0, "all_gather": 360.0}
HALF_SIZE = 16 * allreduce.MiB


def row(collective, size):
    factor = allreduce.bus_factor(collective, WORLD)
    numel = max(1, size // ELEMENT // WORLD)
    total = numel * WORLD * ELEMENT
    busbw = PLATEAU_GBPS[collective] * total / (total + HALF_SIZE)
    algbw = busbw / factor
    median = total / algbw / 1e9
    return {"collective": collective, "bytes": total, "elements_per_rank": numel,
            "dtype": "bf16", "status": "ok", "median_s": median, "min_s": 0.98 * median,
            "max_s": 1.05 * median, "bus_factor": factor, "algbw_GBps": total / median / 1e9,
            "busbw_GBps": total / median / 1e9 * factor, "iters": 20, "check_passed": True}


def main():
    rows = [row(c, s) for c in ("all_reduce", "all_gather")
            for s in allreduce.sizes(allreduce.MiB, 4 * 2**30)]
    doc = {
        "schema": allreduce.SCHEMA,
        "note": ("SYNTHETIC example for testing the link calibration import: no number in this file "
                 "is a measurement. 8 NVIDIA H200 SXM on NVSwitch are pretended; bus bandwidth = a "
                 "chosen plateau (370 GB/s all-reduce, 360 GB/s all-gather) x size / (size + 16 "
                 "MiB); written by make_nccl_sample.py."),
        "status": "ok", "timestamp_utc": "2026-01-01T00:00:00Z", "world_size": WORLD,
        "devices": ["NVIDIA H200"] * WORLD, "torch": "synthetic", "nccl": "synthetic",
        "dtype": "bf16", "warmup": 5, "iters": 20,
        "bytes_counted": "the full buffer: the reduced tensor, or the gathered output",
        "bus_factors": {"all_reduce": "2(n-1)/n", "all_gather": "(n-1)/n"},
        "rows": rows,
    }
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
