#!/usr/bin/env bash
# The seed comparison on built-in data (called by run.sh once ftplan is built): the seed article's
# runs on H200 NVL vs RTX PRO 6000, as a report in out/ (HTML and Markdown, English and German)
# and the planner's summary on the terminal.
set -euo pipefail
cd "$(dirname "$0")/.."
ftplan=build/ftplan
gpus=(--gpu h200-nvl --gpu rtx-pro-6000)
mkdir -p out
for lang in en de; do
  suffix=$([[ $lang == en ]] && echo "" || echo ".$lang")
  for format in html md; do
    $ftplan report "${gpus[@]}" --lang "$lang" --format "$format" -o "out/seed-report$suffix.$format"
  done
done
echo "ftplan — the seed article's runs on H200 NVL vs RTX PRO 6000 (GB = 1e9 bytes)"
echo
$ftplan plan "${gpus[@]}"
echo
echo "The full comparison (memory, roofline, tensor rates, NVLink vs PCIe, MIG, recommendations):"
for f in out/seed-report.html out/seed-report.md out/seed-report.de.html out/seed-report.de.md; do
  printf '  %-26s %7d bytes\n' "$f" "$(wc -c <"$f")"
done
