#!/bin/sh
# Installs what ccree needs to build and test on Debian 12 (run as root).
# Usage: sh tools/deps.sh [deb] [tls] [bench] [arm64]
#   deb    also what dpkg-buildpackage needs (debhelper)
#   tls    also nginx and curl, which test/tls.sh runs in the VM
#   bench  also what test/bench/run.sh needs (libkcapi for its floor loop, gnuplot)
#   arm64  also the aarch64 cross compiler, the arm64 libraries that
#          cmake/aarch64-linux-gnu.cmake builds against, and qemu-user
set -eu
pkgs="build-essential cmake pkg-config openssl libssl-dev libcmocka-dev valgrind strace clang"
pkgs="$pkgs libclang-rt-14-dev"
update=
for set in "$@"; do
  case $set in
    deb) pkgs="$pkgs debhelper" ;;
    tls) pkgs="$pkgs nginx curl" ;;
    bench) pkgs="$pkgs libkcapi-dev gnuplot-nox" ;;
    arm64)
      if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        dpkg --add-architecture arm64
        update=1
      fi
      pkgs="$pkgs gcc-aarch64-linux-gnu libc6-dev-arm64-cross pkgconf:arm64 libssl-dev:arm64"
      pkgs="$pkgs libcmocka-dev:arm64 qemu-user-static" ;;
    *) echo "usage: $0 [deb] [tls] [bench] [arm64]" >&2; exit 2 ;;
  esac
done
missing=
for p in $pkgs; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing$update" ]; then
  apt-get update
fi
if [ -n "$missing" ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
fi
