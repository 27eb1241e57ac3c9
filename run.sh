#!/usr/bin/env bash
# The main job: installs what is missing, builds ftplan, and regenerates the seed comparison
# (H200 NVL vs RTX PRO 6000 for the article's runs) from built-in data.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default --target ftplan
scripts/main-job.sh
