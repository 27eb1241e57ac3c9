#!/usr/bin/env bash
# The seed comparison on built-in data (called by run.sh once ftplan is built).
set -euo pipefail
cd "$(dirname "$0")/.."
ftplan=build/ftplan
echo "ftplan — the seed article's runs on H200 NVL vs RTX PRO 6000 (GB = 1e9 bytes)"
echo
for run in "llama-3.1-8b lora" "qwen3-32b lora" "llama-3.3-70b qlora" "llama-3.1-8b full adamw" \
           "llama-3.1-8b full adamw-8bit" "llama-3.3-70b lora"; do
  set -- $run
  for gpu in h200-nvl rtx-pro-6000; do
    line=$($ftplan fit --model "$1" --method "$2" --optimizer "${3:-adamw}" --gpu "$gpu" | tail -1)
    printf '%-16s %-6s %-11s %-13s %s\n' "$1" "$2" "${3:-}" "$gpu" "${line#verdict: }"
  done
done
