#!/bin/sh
# The whole test suite: natively (this machine's kernel may lack AF_ALG: the software path),
# then in a VM with a real kernel, where drivers = any and the counters must show offload.
set -eu
cd "$(dirname "$0")/.."
sh tools/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j2
ctest --test-dir build --output-on-failure
test/vm/run.sh -- env CCREE_REQUIRE_OFFLOAD=1 ctest --test-dir build --output-on-failure
test/vm/run.sh -m algif_hash -m crypto_user -- sh test/missing-module.sh
