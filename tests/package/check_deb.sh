#!/bin/sh
# Usage: check_deb.sh BUILD_DIR VERSION
# Builds the Debian package of a built tree (cpack -G DEB; nothing is compiled when the tree is up
# to date), unpacks it into a temporary root and runs the packaged CLI from there.
set -eu
build=$1
version=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

if ! (cd "$build" && cpack -G DEB -B "$work/out") >"$work/cpack.log" 2>&1; then
  cat "$work/cpack.log"
  fail "cpack -G DEB failed"
fi
set -- "$work"/out/ftplan_"$version"_*.deb
[ -f "$1" ] || fail "no ftplan_${version}_*.deb in $(ls "$work/out")"
deb=$1
echo "built $(basename "$deb")"
[ "$(dpkg-deb -f "$deb" Package)" = ftplan ] || fail "the package is not named ftplan"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "the package's version is not $version"
dpkg-deb -f "$deb" Depends | grep -q libc6 ||
  fail "the package lists no shared-library dependencies"

root=$work/root
dpkg-deb -x "$deb" "$root"
for f in usr/bin/ftplan usr/lib/ftplan/ftplan-net usr/share/man/man1/ftplan.1 \
         usr/share/bash-completion/completions/ftplan usr/share/zsh/vendor-completions/_ftplan \
         usr/share/fish/vendor_completions.d/ftplan.fish \
         usr/share/doc/ftplan/examples/seed-runs.yaml usr/share/doc/ftplan/docs/reference.md; do
  [ -s "$root/$f" ] || fail "the package lacks /$f"
done
[ -x "$root/usr/lib/ftplan/ftplan-net" ] || fail "/usr/lib/ftplan/ftplan-net is not executable"
grep -q '^\.TH FTPLAN 1' "$root/usr/share/man/man1/ftplan.1" || fail "ftplan.1 has no .TH header"
grep -q '^\.SS "ftplan fit"' "$root/usr/share/man/man1/ftplan.1" || fail "ftplan.1 has no section for fit"
if dpkg-deb -c "$deb" | grep -q 'python'; then fail "the package holds the Python module"; fi

got=$("$root/usr/bin/ftplan" --version) || fail "ftplan --version exits with $?"
[ "$got" = "ftplan $version" ] || fail "ftplan --version prints '$got', not 'ftplan $version'"
echo "$got"
got=$("$root/usr/bin/ftplan" fit --model llama-3.1-8b --method lora --gpu h200-nvl) ||
  fail "the packaged ftplan fit exits with $?"
echo "$got" | grep -q 'verdict: fits' ||
  fail "the packaged ftplan fit prints no 'verdict: fits': $got"
echo "packaged ftplan fit: verdict: fits"
