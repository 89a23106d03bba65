#!/bin/sh
# Installs what ccree needs to build and test on Debian 12 (run as root).
set -eu
missing=
for p in build-essential cmake pkg-config openssl libssl-dev libcmocka-dev valgrind strace \
         clang libclang-rt-14-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
fi
