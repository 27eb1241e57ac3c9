#!/usr/bin/env bash
# Builds and runs every test: unit, golden (seed figures), properties, CLI cases; the same suite
# under AddressSanitizer + UndefinedBehaviorSanitizer; every libFuzzer target for a bounded time;
# browser tests in headless Chromium, of the served page and of the page that needs no server (the
# engine compiled to WebAssembly); the CUDA targets compile when a toolkit is present.
# Usage: ./test.sh [quick]   (quick: the default build and its tests only)
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-all}"
scripts/install-deps.sh --browser

step() { printf '\n==> %s\n' "$*"; }

step "format: clang-format (.clang-format)"
clang-format --dry-run --Werror $(git ls-files '*.cpp' '*.hpp' '*.cu')

step "build + tests (build/)"
cmake --preset default >/dev/null
cmake --build --preset default
ctest --preset default -j2
[[ "$mode" == quick ]] && exit 0

# One instrumented build serves both the sanitizer run of the tests and the fuzz targets.
step "sanitizers: ASan + UBSan build + tests, libFuzzer targets (build-asan/)"
cmake --preset asan >/dev/null
cmake --build --preset asan
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --preset asan -j2

step "fuzzing: every parser for a bounded time (build-asan/)"
# One target per fuzz/fuzz_*.cpp (fuzz/CMakeLists.txt): each must have been built and run.
declared=0
ran=0
for source in fuzz/fuzz_*.cpp; do
  declared=$((declared + 1))
  name=$(basename "$source" .cpp)
  fuzzer="build-asan/$name"
  if [[ ! -x "$fuzzer" ]]; then
    echo "error: fuzz target $name (from $source) was not built: $fuzzer is missing" >&2
    exit 1
  fi
  corpus="fuzz/corpus/${name#fuzz_}"
  mkdir -p "build-asan/corpus-$name"
  # The request handler gets inputs long enough to nest far past the depth bound.
  extra=()
  [[ "$name" == fuzz_api ]] && extra=(-max_len=65536)
  echo "$name: 20 s"
  "$fuzzer" -max_total_time="${FTPLAN_FUZZ_SECONDS:-20}" -print_final_stats=0 "${extra[@]}" \
    "build-asan/corpus-$name" $( [[ -d "$corpus" ]] && echo "$corpus" ) 2>&1 | tail -2
  ran=$((ran + 1))
done
if (( declared == 0 || ran != declared )); then
  echo "error: ran $ran fuzz targets, fuzz/ declares $declared" >&2
  exit 1
fi

if [[ -f tests/browser/package.json ]]; then
  step "the page that needs no server: engine compiled to WebAssembly (build/site/)"
  command -v emcmake >/dev/null || { echo "error: emscripten is missing" >&2; exit 1; }
  cmake --build --preset default --target site
  step "browser tests: headless Chromium via playwright-core (served page and static site)"
  (cd tests/browser && npm ci --no-audit --no-fund --silent && node run.mjs)
fi
echo
echo "all tests passed"
