#!/usr/bin/env python3
"""All-reduce and all-gather bus bandwidth between the GPUs of one machine, through PyTorch's
NCCL backend. Run under torchrun, one process per GPU:

    torchrun --standalone --nproc_per_node=N bench/nccl/allreduce.py --out nccl.json

For each buffer size (1 MiB to 4 GiB, powers of two; `bytes` is the full buffer: the reduced
tensor, or the gathered output) it times the collective with CUDA events after warm-up and
reports, as nccl-tests does (doc/PERFORMANCE.md):
    algbw = bytes / time
    busbw = algbw * 2(n-1)/n   for all-reduce        (n = number of GPUs)
    busbw = algbw * (n-1)/n    for all-gather
The time of a size is the slowest rank's median over the timed iterations. Each collective is
checked once on known values first. On a machine with fewer than two GPUs it says so and exits
with status 0. Output: JSON, schema "ftplan-nccl/1" (bench/README.md), written by rank 0.
"""

import argparse
import datetime
import json
import os
import statistics
import sys

SCHEMA = "ftplan-nccl/1"
MiB = 2**20


def log(message):
    print(f"[allreduce] {message}", file=sys.stderr, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", help="results JSON (written by rank 0; default: standard output)")
    p.add_argument("--min-bytes", type=int, default=MiB, help="smallest buffer (default 1 MiB)")
    p.add_argument("--max-bytes", type=int, default=None,
                   help="largest buffer (default 4 GiB, --quick 1 GiB)")
    p.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16",
                   help="element type (default bf16, as gradients)")
    p.add_argument("--warmup", type=int, default=5, help="untimed iterations per size")
    p.add_argument("--iters", type=int, default=None, help="timed iterations (default 20, quick 10)")
    p.add_argument("--quick", action="store_true", help="sizes up to 1 GiB, 10 iterations")
    args = p.parse_args(argv)
    args.max_bytes = args.max_bytes or (2**30 if args.quick else 4 * 2**30)
    args.iters = args.iters or (10 if args.quick else 20)
    if args.min_bytes < 1 or args.max_bytes < args.min_bytes or args.iters < 1:
        p.error("need 1 <= --min-bytes <= --max-bytes and --iters >= 1")
    return args


def bus_factor(collective, n):
    return 2.0 * (n - 1) / n if collective == "all_reduce" else (n - 1) / n


def sizes(lo, hi):
    out, size = [], 1
    while size < lo:
        size *= 2
    while size <= hi:
        out.append(size)
        size *= 2
    return out


def write(doc, out):
    text = json.dumps(doc, indent=2) + "\n"
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def single_gpu_exit(args, gpus, torch_version):
    log(f"{gpus} GPU(s) on this machine: the NCCL bus bandwidth needs at least 2; nothing "
        "measured")
    if args.out:
        write({"schema": SCHEMA, "status": "skipped",
               "reason": f"{gpus} GPU(s): at least 2 are needed", "gpus": gpus,
               "torch": torch_version, "rows": []}, args.out)
    return 0


def run(args, torch, dist):
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", torch.cuda.current_device())
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    element = torch.tensor([], dtype=dtype).element_size()
    names = [None] * world
    dist.all_gather_object(names, torch.cuda.get_device_name(device))
    rows = []

    def allocate(collective, numel_per_rank):
        if collective == "all_reduce":
            return torch.empty(numel_per_rank * world, dtype=dtype, device=device), None
        return (torch.empty(numel_per_rank, dtype=dtype, device=device),
                torch.empty(numel_per_rank * world, dtype=dtype, device=device))

    def measure(collective, data, out, numel_per_rank):
        """This rank's times of `collective`, after a check on known values."""
        def op():
            if collective == "all_reduce":
                dist.all_reduce(data)
            else:
                dist.all_gather_into_tensor(out, data)

        # Check: rank r contributes r + 1 (exact in BF16 for the sums of a few ranks).
        data.fill_(rank + 1)
        op()
        torch.cuda.synchronize()
        if collective == "all_reduce":
            expected = torch.full((1,), world * (world + 1) / 2, dtype=dtype, device=device)
            ok = bool((data[:: max(1, data.numel() // 1024)] == expected).all())
        else:
            chunks = out.view(world, numel_per_rank)[:, :: max(1, numel_per_rank // 64)]
            want = torch.arange(1, world + 1, dtype=dtype, device=device)[:, None]
            ok = bool((chunks == want).all())
        times = []
        for i in range(args.warmup + args.iters):
            data.fill_(rank + 1)  # keeps sums finite; before the start event, so not timed
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            op()
            stop.record()
            stop.synchronize()
            if i >= args.warmup:
                times.append(start.elapsed_time(stop) / 1e3)
        return times, ok

    def agree(values, op):
        """The element-wise max (or sum) over ranks of a few floats."""
        t = torch.tensor(values, dtype=torch.float64, device=device)
        dist.all_reduce(t, op=op)
        return t.tolist()

    for collective in ("all_reduce", "all_gather"):
        factor = bus_factor(collective, world)
        for size in sizes(args.min_bytes, args.max_bytes):
            numel_per_rank = max(1, size // element // world)
            total_bytes = numel_per_rank * world * element
            row = {"collective": collective, "bytes": total_bytes,
                   "elements_per_rank": numel_per_rank, "dtype": args.dtype, "status": "ok",
                   "median_s": None, "min_s": None, "max_s": None, "bus_factor": factor,
                   "algbw_GBps": None, "busbw_GBps": None, "iters": args.iters,
                   "check_passed": False}
            # Every rank must have its buffers before any rank enters the collective.
            try:
                data, out = allocate(collective, numel_per_rank)
                short = 0.0
            except torch.cuda.OutOfMemoryError:
                data = out = None
                short = 1.0
            if agree([short], dist.ReduceOp.MAX)[0]:
                row["status"] = "oom"
                rows.append(row)
                if rank == 0:
                    log(f"{collective} {total_bytes / MiB:.0f} MiB: out of memory on a rank; "
                        "larger sizes skipped")
                del data, out
                torch.cuda.empty_cache()
                break
            times, ok = measure(collective, data, out, numel_per_rank)
            del data, out
            torch.cuda.empty_cache()
            # The collective ends when the slowest rank does: the largest median over ranks.
            median, fastest, slowest, failed = agree(
                [statistics.median(times), min(times), max(times), 0.0 if ok else 1.0],
                dist.ReduceOp.MAX)
            row.update(median_s=median, min_s=fastest, max_s=slowest, check_passed=not failed,
                       algbw_GBps=total_bytes / median / 1e9,
                       busbw_GBps=total_bytes / median / 1e9 * factor)
            if failed:
                row["status"] = "failed"
            rows.append(row)
            if rank == 0:
                log(f"{collective} {total_bytes / MiB:.0f} MiB: {row['busbw_GBps']:.1f} GB/s "
                    f"busbw, {median * 1e3:.3f} ms" + ("" if ok else " (check failed)"))
    return names, rows


def main(argv):
    args = parse_args(argv)
    try:
        import torch
        import torch.distributed as dist
    except ImportError as error:
        log(f"PyTorch is not installed ({error}): nothing measured")
        return 0
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if gpus < 2:
        return single_gpu_exit(args, gpus, torch.__version__)
    if world < 2:
        log(f"{gpus} GPUs: run one process per GPU under torchrun: torchrun --standalone "
            f"--nproc_per_node={gpus} {sys.argv[0]} {' '.join(argv)}")
        return 2
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    try:
        dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    except TypeError:  # PyTorch before device_id
        dist.init_process_group("nccl")
    try:
        names, rows = run(args, torch, dist)
        if dist.get_rank() == 0:
            nccl = torch.cuda.nccl.version()
            write({
                "schema": SCHEMA, "status": "ok",
                "timestamp_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
                    "%Y-%m-%dT%H:%M:%SZ"),
                "world_size": dist.get_world_size(), "devices": names,
                "torch": torch.__version__,
                "nccl": ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl),
                "dtype": args.dtype, "warmup": args.warmup, "iters": args.iters,
                "bytes_counted": "the full buffer: the reduced tensor, or the gathered output",
                "bus_factors": {"all_reduce": "2(n-1)/n", "all_gather": "(n-1)/n"},
                "rows": rows,
            }, args.out)
        failed = any(r["status"] == "failed" for r in rows)
    finally:
        dist.destroy_process_group()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
