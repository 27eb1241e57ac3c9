#!/usr/bin/env bash
# Builds the page that needs no server into BUILD/site/: the web page with its engine (the HTTP
# API's handler compiled to WebAssembly by Debian's emscripten), a folder of static files any web
# server can host. Run by the `site` target of the main build (cmake --build --preset default
# --target site), after that build has made generated/ (the embedded data).
# Usage: scripts/build-site.sh BUILD SOURCE
# Without emscripten it says so and builds nothing (exit 0); scripts/install-deps.sh --browser
# installs it.
set -euo pipefail
build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)

if ! command -v emcmake >/dev/null || ! command -v em++ >/dev/null; then
  echo "site: skipped: emscripten is not installed (Debian package emscripten;" \
       "scripts/install-deps.sh --browser installs it)"
  exit 0
fi

deps="$build/wasm-deps"
mkdir -p "$deps"

# yaml-cpp, compiled for WebAssembly from the source of the version Debian's libyaml-cpp-dev has
# (that package holds only the headers and the host's library): from the Debian archive, checked
# against the checksum its source description (.dsc) gives.
package=$(dpkg-query -W -f='${source:Package}' libyaml-cpp-dev)
version=$(dpkg-query -W -f='${source:Version}' libyaml-cpp-dev)
upstream=$(dpkg-query -W -f='${source:Upstream-Version}' libyaml-cpp-dev)
yaml_dir="$deps/yaml-cpp-$upstream"
if [[ ! -f "$yaml_dir/include/yaml-cpp/yaml.h" ]]; then
  dsc="${package}_${version#*:}.dsc"
  tarball="${package}_${upstream}.orig.tar.xz"
  # HTTPS first; plain HTTP (as apt's sources use) where HTTPS is not let through.
  fetched=""
  for mirror in ${FTPLAN_DEBIAN_POOL:-https://deb.debian.org/debian/pool/main \
                http://deb.debian.org/debian/pool/main}; do
    pool="$mirror/${package:0:1}/$package"
    echo "site: fetching the source of $package $version from $pool"
    if curl -fsSL --retry 3 -o "$deps/$dsc" "$pool/$dsc" &&
       curl -fsSL --retry 3 -o "$deps/$tarball" "$pool/$tarball"; then
      fetched=yes
      break
    fi
  done
  if [[ -z "$fetched" ]]; then
    echo "error: could not download $tarball from the Debian archive" >&2
    exit 1
  fi
  want=$(awk -v f="$tarball" '/^Checksums-Sha256:/ {s=1; next} s && /^ / && $3 == f {print $1; exit}' \
         "$deps/$dsc")
  have=$(sha256sum "$deps/$tarball" | cut -d' ' -f1)
  if [[ -z "$want" || "$want" != "$have" ]]; then
    echo "error: $tarball: SHA-256 $have, its .dsc gives '${want}'" >&2
    exit 1
  fi
  rm -rf "$yaml_dir" "$deps/unpack"
  mkdir -p "$deps/unpack"
  tar -xJf "$deps/$tarball" -C "$deps/unpack"
  mv "$deps/unpack"/* "$yaml_dir"
  rmdir "$deps/unpack"
fi

# The header-only libraries, each alone in a folder: the host's other system headers must not
# shadow emscripten's.
mkdir -p "$deps/headers"
for lib in nlohmann fmt CLI; do
  ln -sfn "/usr/include/$lib" "$deps/headers/$lib"
done

# Debian's emscripten runs its JavaScript tools with `node`; Node.js from elsewhere finds Debian's
# node-acorn only by NODE_PATH.
export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"
wasm="$build/wasm"
if [[ ! -f "$wasm/build.ninja" ]]; then
  emcmake cmake -G Ninja -S "$source/wasm" -B "$wasm" -DCMAKE_BUILD_TYPE=Release \
    -DFTPLAN_SOURCE_DIR="$source" -DFTPLAN_GENERATED_DIR="$build/generated" \
    -DFTPLAN_YAML_CPP_DIR="$yaml_dir" -DFTPLAN_HEADERS_DIR="$deps/headers" \
    -DFTPLAN_VERSION="$(sed -n 's/^project(ftplan VERSION \([0-9.]*\).*/\1/p' "$source/CMakeLists.txt")" \
    >/dev/null
fi
cmake --build "$wasm"

# The folder: the page as the server serves it, told to use the engine instead of the server.
site="$build/site"
rm -rf "$site"
mkdir -p "$site"
cp "$source/web/app.js" "$source/web/style.css" "$source/web/engine-worker.js" \
   "$wasm/ftplan-engine.js" "$wasm/ftplan-engine.wasm" "$site/"
sed 's|^<title>|<meta name="ftplan-engine" content="engine-worker.js">\n<title>|' \
  "$source/web/index.html" > "$site/index.html"
grep -q 'name="ftplan-engine"' "$site/index.html" || {
  echo "error: web/index.html has no <title> line to put the engine's meta tag before" >&2
  exit 1
}
echo "site: $site (serve it with any static web server)"
