#!/bin/sh
# Issue 6's benchmark in one command, on this machine: installs what it needs, builds, boots
# the VM once (test/vm/run.sh, with the simulated CryptoCell at latency 0 for column (f)) and
# runs test/bench/bench.sh there. It writes build/bench/:
# table.md (also printed), throughput.png, results.tsv, syscalls.tsv, throughput.tsv.
# Usage: sh test/bench/run.sh   Env: CCREE_BENCH_SECONDS, seconds per point (default 1).
set -eu
cd "$(dirname "$0")/../.."
sh tools/deps.sh bench
cmake -S . -B build >/dev/null
cmake --build build -j2 >/dev/null
test/vm/run.sh -c 712,priority=100 -- sh test/bench/bench.sh build build/bench
