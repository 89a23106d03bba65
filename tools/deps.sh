#!/bin/sh
# Installs what ccree needs to build and test on Debian 12 (run as root).
# Usage: sh tools/deps.sh [deb] [tls] [bench] [arm64] [armhf]
#   deb    also what dpkg-buildpackage needs (debhelper)
#   tls    also nginx and curl, which test/tls.sh runs in the VM
#   bench  also what test/bench/run.sh needs (libkcapi for its floor loop, gnuplot)
#   arm64  also the aarch64 cross compiler, the arm64 libraries that
#          cmake/aarch64-linux-gnu.cmake builds against, and qemu-user
#   armhf  the same for 32-bit Armv7 (cmake/arm-linux-gnueabihf.cmake)
set -eu
pkgs="build-essential cmake pkg-config openssl libssl-dev libcmocka-dev valgrind strace clang"
pkgs="$pkgs libclang-rt-14-dev"
update= foreign=
for set in "$@"; do
  case $set in
    deb) pkgs="$pkgs debhelper" ;;
    tls) pkgs="$pkgs nginx curl" ;;
    bench) pkgs="$pkgs libkcapi-dev gnuplot-nox" ;;
    arm64|armhf)
      if ! dpkg --print-foreign-architectures | grep -qx "$set"; then
        dpkg --add-architecture "$set"
        update=1
      fi
      case $set in
        arm64) pkgs="$pkgs gcc-aarch64-linux-gnu libc6-dev-arm64-cross" ;;
        armhf) pkgs="$pkgs gcc-arm-linux-gnueabihf libc6-dev-armhf-cross" ;;
      esac
      pkgs="$pkgs pkgconf:$set libssl-dev:$set libcmocka-dev:$set qemu-user-static"
      foreign="$foreign $set" ;;
    *) echo "usage: $0 [deb] [tls] [bench] [arm64] [armhf]" >&2; exit 2 ;;
  esac
done
missing=
for p in $pkgs; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing$update" ]; then
  # A mirror in the middle of a sync serves some index files of the wrong size: try again,
  # then go on with the indexes that came (the install below says what it cannot find).
  apt-get update || { sleep 30; apt-get update; } || echo "deps.sh: apt-get update failed" >&2
fi
install() { DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"; }
native=$(echo "$missing" | tr ' ' '\n' | grep -v :) || true
cross=$(echo "$missing" | tr ' ' '\n' | grep :) || true
[ -z "$native" ] || install $native
if [ -n "$cross" ]; then
  # libssl3 is Multi-Arch: same: every architecture's at one version, the newest the archive has
  # for all of them (a mirror may have a newer one for one architecture only, and the machine's
  # own may be gone from it); the native libssl and openssl move to it too.
  archs="$(dpkg --print-architecture) $foreign"
  v=$(for a in $archs; do apt-cache madison "libssl3:$a" | cut -d'|' -f2 | tr -d ' ' | sort -u; done |
      sort | uniq -c | awk -v n="$(echo $archs | wc -w)" '$1 == n { print $2 }' | sort -V | tail -n 1)
  [ -n "$v" ] || { echo "deps.sh: no libssl3 version for all of $archs" >&2; exit 1; }
  install --allow-downgrades libssl-dev="$v" libssl3="$v" openssl="$v" $(echo "$cross" | sed "s/^libssl-dev:.*/&=$v/") \
          $(for a in $foreign; do echo "libssl3:$a=$v"; done)
fi
