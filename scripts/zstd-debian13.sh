#!/usr/bin/env bash
# Debian 13's libzstd (1.5.7) for a Debian 12 build, without touching the
# system: Debian 12's libzstd 1.5.4 lacks zstd 1.5.5's mid-level speed-up
# (bench/RESULTS.md, "Why blosc zstd is slower"), and Debian 13's libzstd1
# needs only libc6 >= 2.34, which Debian 12 has.
#
#   scripts/zstd-debian13.sh DIR      (DIR inside a build tree)
#
# Fetches trixie's libzstd1 and libzstd-dev .debs with apt itself, given a
# private sources list, state and cache under DIR/apt: `apt-get update`
# checks the InRelease signature against the Debian archive keyring (the
# trixie key is checked with gpgv first), `apt-get download` checks each
# .deb's SHA256 against the signed Packages index. The .debs are unpacked
# with `dpkg-deb -x` into DIR, so DIR/usr is the root to build with:
#   cmake ... -DNZ_ZSTD_ROOT=DIR/usr      (docs/DEVELOPING.md)
# Nothing outside DIR is written; the system's packages stay as they are.
# Prints DIR/usr on stdout as its last line. Reruns reuse what is there.
# On a system whose own libzstd is already >= 1.5.7 (Debian 13) it says so
# and exits 0 doing nothing (build without NZ_ZSTD_ROOT there).
# Environment: NZ_DEBIAN_MIRROR (http://deb.debian.org/debian),
# NZ_DEBIAN_KEYRING (/usr/share/keyrings/debian-archive-keyring.gpg).
set -euo pipefail
dir=${1:?usage: zstd-debian13.sh DIR}
want=1.5.7
mirror=${NZ_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=${NZ_DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
fail() { echo "zstd-debian13.sh: $*" >&2; exit 1; }

for t in apt-get dpkg dpkg-deb gpgv curl; do
  command -v "$t" >/dev/null || fail "needs $t (a Debian system with apt, gpgv and curl)"
done
have=$(dpkg-query -W -f='${Version}' libzstd1 2>/dev/null || true)
if [ -n "$have" ] && dpkg --compare-versions "$have" ge "$want"; then
  echo "zstd-debian13.sh: the system's libzstd1 is $have (>= $want): not needed, nothing done" >&2
  exit 0
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
lib=$(echo "$dir"/usr/lib/*/libzstd.so.1)
if [ -e "$lib" ] && [ -e "$dir/usr/include/zstd.h" ] && [ -e "$dir/.complete" ]; then
  echo "zstd-debian13.sh: $(cat "$dir/.complete") already in $dir" >&2
  echo "$dir/usr"
  exit 0
fi

# The key first, so that a keyring without trixie's key fails here by name
# rather than as apt's NO_PUBKEY further down.
apt=$dir/apt
mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/parts" "$apt/prefs" "$dir/debs"
curl -fsS --retry 2 --max-time 60 -o "$apt/InRelease.check" "$mirror/dists/trixie/InRelease" ||
  fail "cannot fetch $mirror/dists/trixie/InRelease (mirror unreachable?)"
gpgv --keyring "$keyring" "$apt/InRelease.check" >/dev/null 2>"$apt/gpgv.log" ||
  fail "$keyring does not verify trixie's InRelease (gpgv: $(tail -1 "$apt/gpgv.log"))"
rm -f "$apt/InRelease.check"

printf 'Types: deb\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: %s\n' \
  "$mirror" "$keyring" > "$apt/parts/trixie.sources"
: > "$apt/status"
aptopts=(-q -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt/parts"
  -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts="$apt/prefs"
  -o Dir::State="$apt" -o Dir::State::Lists="$apt/lists" -o Dir::State::status="$apt/status"
  -o Dir::Cache="$apt" -o Dir::Cache::Archives="$apt/archives"
  -o Dir::Cache::pkgcache="" -o Dir::Cache::srcpkgcache=""
  -o Acquire::Languages=none -o APT::Sandbox::User=root -o Debug::NoLocking=1)
apt-get "${aptopts[@]}" update >"$apt/update.log" 2>&1 ||
  fail "apt-get update of trixie from $mirror failed: $(grep -E '^(E|W):' "$apt/update.log" | head -3)"
grep -q '^E:' "$apt/update.log" &&
  fail "apt-get update of trixie: $(grep '^E:' "$apt/update.log" | head -3)"
(cd "$dir/debs" && rm -f ./*.deb &&
  apt-get "${aptopts[@]}" download libzstd1 libzstd-dev >"$apt/download.log" 2>&1) ||
  fail "apt-get download libzstd1 libzstd-dev from trixie failed: $(grep -E '^(E|W):' "$apt/download.log" | head -3)"

ver=
for deb in "$dir"/debs/libzstd1_*.deb "$dir"/debs/libzstd-dev_*.deb; do
  [ -e "$deb" ] || fail "apt-get download left no $(basename "$deb") in $dir/debs"
  v=$(dpkg-deb -f "$deb" Version)
  dpkg --compare-versions "$v" ge "$want" || fail "$deb is version $v, not >= $want"
  [ -z "$ver" ] || [ "$ver" = "$v" ] || fail "libzstd1 $ver and libzstd-dev $v differ"
  ver=$v
  dpkg-deb -x "$deb" "$dir"
done
lib=$(echo "$dir"/usr/lib/*/libzstd.so.1)
[ -e "$lib" ] || fail "no usr/lib/*/libzstd.so.1 in the unpacked .debs ($dir)"
echo "libzstd $ver (Debian 13)" > "$dir/.complete"
echo "zstd-debian13.sh: libzstd $ver unpacked in $dir/usr (build with -DNZ_ZSTD_ROOT=$dir/usr)" >&2
echo "$dir/usr"
