#!/usr/bin/env python3
"""Writes the bad results files of tests/cases/cli_errors.yaml: each is the SYNTHETIC sample of
bench/results/sample/ (first three benchmarks, or the first rows) with one fault.
Run from this folder: python3 make_fixtures.py"""
import copy
import json
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[4] / "bench" / "results" / "sample"
bench = json.loads((SAMPLES / "ftplan-bench-sample.json").read_text())
bench["benchmarks"] = bench["benchmarks"][:3]
step = json.loads((SAMPLES / "ftplan-step-sample.json").read_text())


def write(name, doc):
    Path(name).write_text(json.dumps(doc, indent=2) + "\n")


def bench_with(change):
    doc = copy.deepcopy(bench)
    change(doc)
    return doc


def failed(doc):
    b = doc["benchmarks"][0]
    b.update(status="failed", reason="12 of 24 sampled outputs outside the bound", median_s=None,
             min_s=None, max_s=None, achieved_TFLOPS=None, achieved_GBps=None)
    b["check"]["passed"] = False


write("bench_ok_three.json", bench)
write("bench_schema_v2.json", bench_with(lambda d: d.update(schema="ftplan-bench/2")))
write("bench_missing_key.json", bench_with(lambda d: d["device"].pop("sm_count")))
write("bench_unknown_key.json", bench_with(lambda d: d["benchmarks"][1].update(medain_s=1)))
write("bench_gflops.json", bench_with(
    lambda d: d["benchmarks"][0].update(achieved_TFLOPS=d["benchmarks"][0]["achieved_TFLOPS"] * 1e3)))
write("bench_failed_check.json", bench_with(failed))
write("bench_memory_mib.json", bench_with(lambda d: d["device"].update(memory_total_bytes=143771)))
write("bench_ambiguous_card.json", bench_with(lambda d: d["device"].update(
    name="NVIDIA RTX PRO 6000 Blackwell", compute_capability="12.0",
    memory_total_bytes=97887 * 2**20)))
step_bad = copy.deepcopy(step)
step_bad["rows"][0]["peak_alloc_bytes"] = step_bad["rows"][0].pop("peak_allocated_bytes")
write("step_renamed_key.json", step_bad)
