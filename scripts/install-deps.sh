#!/usr/bin/env bash
# Installs the Debian packages ftplan needs to build and test, skipping those already present.
# Usage: scripts/install-deps.sh [--browser]   (--browser adds chromium and Node.js for browser tests,
#        and emscripten, curl, ca-certificates and xz-utils for the page that needs no server)
set -euo pipefail

packages=(g++ cmake ninja-build pkg-config git clang clang-format libclang-rt-14-dev
          nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev libmicrohttpd-dev
          libgtest-dev libbenchmark-dev libcpp-httplib-dev libssl-dev
          pybind11-dev python3-dev python3-pytest  # the Python module and its tests
          dpkg-dev  # the Debian package: dpkg-shlibdeps lists its shared-library dependencies
          zsh fish)  # the shells whose completion scripts the tests check
if [[ "${1:-}" == "--browser" ]]; then
  packages+=(chromium)
  # The page that needs no server (scripts/build-site.sh): the engine compiled to WebAssembly, with
  # yaml-cpp's source fetched from the Debian archive.
  packages+=(emscripten curl ca-certificates xz-utils)
  # Node.js and npm may come from another source than Debian (nodejs bundling npm): ask for the
  # Debian packages only when the commands are missing.
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "Installing: ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then sudo_cmd=(sudo); else
    echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
