#!/bin/sh
# Instructions per call through ccree against the default provider, natively (where the kernel
# has no AF_ALG, ccree's software path): each operation of insn.c, N calls counted by callgrind
# in measure() alone, under build/test/default.cnf (both providers, ccree as shipped). Prints
# a Markdown table with insn.c's targets marked; exits 0 whether they are met or not, non-zero
# when a run fails. Keeps callgrind's files in build/insn/ (callgrind_annotate --inclusive=yes).
# Usage: sh test/bench/insn.sh
set -eu
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || sh tools/deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j2 >/dev/null
n=2000
out=build/insn
insn=build/test/bench/insn
mkdir -p "$out"
export OPENSSL_CONF="$PWD/build/test/default.cnf"

ir() { # ALG SIZE PROVIDER: the instructions of N calls
    f=$out/$1-$2-$3.out
    valgrind -q --tool=callgrind --collect-atstart=no --toggle-collect=measure \
        --callgrind-out-file="$f" "$insn" "$1" "$2" "$3" "$n"
    awk '/^summary:/ { s = $2 } END { if (s > 0) print s; else exit 1 }' "$f"
}

echo "Instructions per call (callgrind, $n calls after a warm-up; Linux $(uname -r)):"
echo
echo "| call | default provider (instructions per call) | through ccree | ratio | target | ✓/✗ |"
echo "|---|--:|--:|--:|--:|---|"
"$insn" list | while read -r alg size call target; do
    d=$(ir "$alg" "$size" default)
    c=$(ir "$alg" "$size" ccree)
    awk -v a="$alg $call, $size B" -v d="$d" -v c="$c" -v n="$n" -v t="$target" 'BEGIN {
        r = c / d
        printf "| %s | %.0f | %.0f | %.2f | ≤ %s | %s |\n", a, d / n, c / n, r, t, r <= t ? "✓" : "**✗**"
    }'
done
