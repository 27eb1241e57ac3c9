#!/usr/bin/env bash
# One command on a GPU machine: builds ftplan-bench for the card present, runs the CUDA
# micro-benchmarks, the measured LoRA, full and QLoRA training steps and, with several GPUs, the NCCL bus
# bandwidth, and writes everything into one results folder with a short summary.
#
# Usage: bench/run-all.sh [RESULTS_DIR] [--full] [--parts LIST]
#   RESULTS_DIR  default bench/results/<card>-<UTC date>/
#   --full       ftplan-bench's and the step script's default repeats instead of --quick
#                (longer than the 8-minute budget the quick run keeps)
#   --parts LIST comma-separated, in this order: steps (LoRA, full, QLoRA at 2048 tokens),
#                seqs (LoRA and full at 512 and 4096 tokens), dpo (DPO steps), decode (decode
#                steps, CUDA graphs), micro (ftplan-bench), nccl; default steps,micro,nccl
# Needs: nvidia-smi, the CUDA toolkit (nvcc, cuBLASLt), CMake >= 3.20, Python 3 with PyTorch,
# transformers and peft. Nothing is downloaded. Every part has a time limit; a part that fails
# or runs out of time leaves what it measured and the others still run.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

budget_s=${FTPLAN_BENCH_BUDGET_S:-400}  # the parts' limits; with their grace periods < 8 min
quick=(--quick)
results=""
parts=steps,micro,nccl
all_parts=" steps seqs dpo decode micro nccl "
while (($#)); do
  case "$1" in
    --full) quick=() ;;
    --parts)
      (($# > 1)) || { echo "run-all.sh: --parts needs a list" >&2; exit 2; }
      parts=$2
      shift
      ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run-all.sh: unknown option '$1' (RESULTS_DIR, --full and --parts are accepted)" >&2; exit 2 ;;
    *) results="$1" ;;
  esac
  shift
done
for part in ${parts//,/ }; do
  [[ "$all_parts" == *" $part "* ]] ||
    { echo "run-all.sh: --parts: '$part' is not one of:$all_parts" >&2; exit 2; }
done
want() { [[ ",$parts," == *",$1,"* ]]; }

start=$SECONDS
step() { printf '\n==> [%3d s] %s\n' "$((SECONDS - start))" "$*" >&2; }
left() { echo $((budget_s - (SECONDS - start))); }
# Seconds for a part: what is left less `reserve` for the parts after it, at most `cap`.
allow() {
  local reserve=$1 cap=$2 s
  s=$(($(left) - reserve))
  ((s > cap)) && s=$cap
  ((s < 10)) && s=10
  echo "$s"
}

if ! command -v nvidia-smi >/dev/null; then
  echo "run-all.sh: nvidia-smi not found: this needs a machine with an NVIDIA GPU and driver" >&2
  exit 3
fi
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
slug=$(echo "$card" | tr '[:upper:]' '[:lower:]' | sed -e 's/^nvidia //' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/-$//')
results=${results:-bench/results/${slug}-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$results/machine"
python=${PYTHON:-python3}
status=()  # "part: outcome" lines for the summary

step "machine: $gpus x $card (compute capability ${cc:-unknown}); results in $results"
nvidia-smi -q >"$results/machine/nvidia-smi-q.txt" 2>&1
nvidia-smi topo -m >"$results/machine/topology.txt" 2>&1
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host_cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "cpus: $(nproc)"
  echo "git_commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -n 2 | head -n 1)"
  echo "cmake: $(cmake --version 2>/dev/null | head -n 1)"
  echo "python: $($python --version 2>&1)"
  "$python" -c 'import torch, sys; print("torch:", torch.__version__, "cuda", torch.version.cuda)' 2>&1
  "$python" -c 'import transformers; print("transformers:", transformers.__version__)' 2>&1
  "$python" -c 'import peft; print("peft:", peft.__version__)' 2>&1
} >"$results/machine/software.txt"

# ---- 1. measured training steps (first: the most valuable figures when time is short)
if want steps; then
  limit=$(allow 190 300)
  step "measured LoRA, full and QLoRA steps ${quick[*]} (at most $limit s)"
  timeout -k 10 "$((limit + 40))" "$python" bench/step/measure_step.py "${quick[@]}" \
    --time-budget-s "$limit" --out "$results/step.json" 2> >(tee "$results/step.log" >&2)
  status+=("measure_step: exit $?")
fi
if want dpo; then
  limit=$(allow 170 110)
  step "measured DPO steps, LoRA and full (at most $limit s)"
  timeout -k 10 "$((limit + 40))" "$python" bench/step/measure_step.py "${quick[@]}" \
    --objective dpo --methods lora,full --full-models qwen3-0.6b,llama-3.2-1b \
    --micro-batches 1,2 --time-budget-s "$limit" --out "$results/dpo.json" \
    2> >(tee "$results/dpo.log" >&2)
  status+=("measure_step --objective dpo: exit $?")
fi
if want decode; then
  limit=$(allow 160 90)
  step "measured decode steps (at most $limit s)"
  timeout -k 10 "$((limit + 30))" "$python" bench/step/measure_decode.py \
    --time-budget-s "$limit" --out "$results/decode.json" 2> >(tee "$results/decode.log" >&2)
  status+=("measure_decode: exit $?")
fi

# The same at other lengths: how time and memory grow with the sequence.
if want seqs; then
  for seq in 512 4096; do
    limit=$(allow $((seq == 512 ? 90 : 0)) 90)
    step "measured LoRA and full steps at $seq tokens (at most $limit s)"
    timeout -k 10 "$((limit + 30))" "$python" bench/step/measure_step.py "${quick[@]}" \
      --seq "$seq" --methods lora,full --micro-batches 1,4 --time-budget-s "$limit" \
      --out "$results/step-seq$seq.json" 2> >(tee "$results/step-seq$seq.log" >&2)
    status+=("measure_step --seq $seq: exit $?")
  done
fi

# ---- 2. build ftplan-bench: bench/ on its own (needs none of ftplan's libraries), this card only
step "build ftplan-bench"
bench_bin=""
if ! want micro; then
  status+=("build: not asked for (--parts)")
elif command -v cmake >/dev/null && { command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; }; then
  arch=${cc/./}
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  rm -rf build-bench  # a fresh configure: a stale cache from another machine would not do
  if cmake -S bench -B build-bench "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      ${arch:+-DCMAKE_CUDA_ARCHITECTURES=${arch}-real} >"$results/build.log" 2>&1 &&
    timeout "$(allow 60 180)" cmake --build build-bench -j "$(nproc)" >>"$results/build.log" 2>&1 &&
    [[ -x build-bench/ftplan-bench ]]; then
    bench_bin=build-bench/ftplan-bench
    status+=("build: ok")
  else
    status+=("build: failed (see build.log)")
    tail -n 20 "$results/build.log" >&2
  fi
else
  status+=("build: skipped (cmake or nvcc not found)")
fi
echo "${status[-1]}" >&2

# ---- 3. micro-benchmarks
if [[ -n "$bench_bin" ]]; then
  limit=$(allow 15 150)
  step "ftplan-bench ${quick[*]} (at most $limit s)"
  timeout -k 10 "$((limit + 20))" "$bench_bin" "${quick[@]}" --time-budget-s "$limit" \
    --out "$results/ftplan-bench.json" 2> >(tee "$results/ftplan-bench.log" >&2)
  rc=$?
  status+=("ftplan-bench: exit $rc")
fi

# ---- 4. NCCL bus bandwidth (several GPUs only; the script says so on one)
limit=$(allow 0 60)
if ! want nccl; then
  :
elif ((gpus > 1)); then
  step "NCCL all-reduce / all-gather on $gpus GPUs (at most $limit s)"
  timeout -k 10 "$limit" "$python" -m torch.distributed.run --standalone --nproc_per_node="$gpus" \
    bench/nccl/allreduce.py "${quick[@]}" --out "$results/nccl.json" 2> >(tee "$results/nccl.log" >&2)
else
  step "NCCL: one GPU"
  "$python" bench/nccl/allreduce.py --out "$results/nccl.json" 2> >(tee "$results/nccl.log" >&2)
fi
rc=$?
want nccl && status+=("nccl: exit $rc")

# ---- ftplan's predictions for the measured rows, when an ftplan binary is at hand
ftplan_bin=${FTPLAN:-build/ftplan}
if [[ -x "$ftplan_bin" ]] && "$ftplan_bin" --help >/dev/null 2>&1 && [[ -f "$results/step.json" ]]; then
  step "ftplan's predictions for the measured rows ($ftplan_bin)"
  "$python" - "$results" "$ftplan_bin" <<'EOF'
import json, shlex, subprocess, sys
from pathlib import Path

folder, binary = Path(sys.argv[1]), sys.argv[2]
out = folder / "predictions"
out.mkdir(exist_ok=True)
index = []
for row in json.loads((folder / "step.json").read_text())["rows"]:
    for kind in ("fit", "fit_allocated", "step"):
        argv = shlex.split(row["ftplan"][kind])
        done = subprocess.run([binary] + argv[1:], capture_output=True, text=True, timeout=60)
        (out / f"{row['id']}.{kind}.json").write_text(done.stdout)
        index.append({"row": row["id"], "kind": kind, "exit": done.returncode,
                      "stderr": done.stderr.strip()[-500:]})
(out / "index.json").write_text(json.dumps(index, indent=2) + "\n")
print(f"{sum(i['exit'] == 0 for i in index)} of {len(index)} predictions written to {out}",
      file=sys.stderr)
EOF
  status+=("predictions: exit $?")
fi

# ---- 5. summary
step "summary"
"$python" - "$results" "${status[@]}" <<'EOF' | tee "$results/SUMMARY.md"
import json, sys
from pathlib import Path

folder, statuses = Path(sys.argv[1]), sys.argv[2:]

def gb(value):
    return "-" if value is None else f"{value / 1e9:.2f}"

def load(name):
    try:
        return json.loads((folder / name).read_text())
    except (OSError, ValueError):
        return None

print(f"# Results in {folder}\n")
for s in statuses:
    print(f"- {s}")
bench = load("ftplan-bench.json")
if bench:
    d = bench["device"]
    print(f"\n## ftplan-bench on {d['name']} (compute capability {d['compute_capability']}, "
          f"driver {d['driver_version']}, CUDA {d['cuda_runtime_version']})\n")
    rows = bench["benchmarks"]
    counts = {s: sum(r["status"] == s for r in rows) for s in ("ok", "failed", "skipped")}
    print(f"{counts['ok']} ok, {counts['failed']} failed, {counts['skipped']} skipped\n")
    print("| class | dtype | benchmarks | median TFLOPS | best TFLOPS | median GB/s | best GB/s |")
    print("|---|---|---|---|---|---|---|")
    groups = {}
    for r in rows:
        if r["status"] == "ok":
            groups.setdefault((r["class"], r["dtype"]), []).append(r)
    for (cls, dtype), rs in sorted(groups.items()):
        tflops = sorted(r["achieved_TFLOPS"] for r in rs)
        gbps = sorted(r["achieved_GBps"] for r in rs)
        print(f"| {cls} | {dtype} | {len(rs)} | {tflops[len(rs) // 2]:.1f} | {tflops[-1]:.1f} | "
              f"{gbps[len(rs) // 2]:.0f} | {gbps[-1]:.0f} |")
    for r in rows:
        if r["status"] == "failed":
            print(f"\nfailed: {r['id']}: {r['reason']}")
for name in ("step.json", "step-seq512.json", "step-seq4096.json", "dpo.json"):
    step = load(name)
    if not step:
        continue
    print(f"\n## Measured steps: {name} ({step['settings'].get('objective', 'sft')}, seq "
          f"{step['settings']['seq']}, ftplan --gpu {step['device']['ftplan_gpu_id']})\n")
    print("| row | status | ms/step | tokens/s | peak allocated GB | peak reserved GB |")
    print("|---|---|---|---|---|---|")
    for r in step["rows"]:
        if r["status"] == "ok":
            print(f"| {r['id']} | ok | {r['median_s'] * 1e3:.1f} | {r['tokens_per_s']:.0f} | "
                  f"{gb(r['peak_allocated_bytes'])} | {gb(r['peak_reserved_bytes'])} |")
        else:
            print(f"| {r['id']} | {r['status']} | | | | |")
decode = load("decode.json")
if decode:
    print(f"\n## Measured decode steps (BF16, CUDA graphs, ftplan --gpu "
          f"{decode['device']['ftplan_gpu_id']})\n")
    print("| row | status | ms/step | tokens/s | KV cache GB |")
    print("|---|---|---|---|---|")
    for r in decode["rows"]:
        if r["status"] == "ok":
            print(f"| {r['id']} | ok | {r['step_ms']:.3f} | {r['tokens_per_s']:.0f} | "
                  f"{gb(r['kv_cache_bytes'])} |")
        else:
            print(f"| {r.get('id', r['model'])} | {r['status']} | | | |")
nccl = load("nccl.json")
if nccl and nccl.get("rows"):
    print(f"\n## NCCL on {nccl['world_size']} GPUs (bus bandwidth, largest size)\n")
    for coll in ("all_reduce", "all_gather"):
        ok = [r for r in nccl["rows"] if r["collective"] == coll and r["status"] == "ok"]
        if ok:
            r = max(ok, key=lambda r: r["bytes"])
            print(f"- {coll}: {r['busbw_GBps']:.1f} GB/s at {r['bytes'] / 2**20:.0f} MiB")
elif nccl:
    print(f"\nNCCL: {nccl.get('reason', 'no rows')}")
EOF
printf '\nrun-all.sh: done in %d s; results in %s\n' "$((SECONDS - start))" "$results" >&2
