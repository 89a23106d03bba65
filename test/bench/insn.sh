#!/bin/sh
# Instructions per call natively (where the kernel has no AF_ALG ccree offloads nothing): each
# operation of insn.c, N calls counted by callgrind in measure() alone, from the default
# provider; as an application gets it under ccree's shipped settings (?provider=ccree with
# build/test/default.cnf: here the default provider's, ccree does not offer it); and through
# ccree's software path (provider=ccree with build/test/default-all.cnf, offer = all). Prints
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

ir() { # ALG SIZE CALL PROVIDER CONF: the instructions of N calls, and the provider measured
    f=$out/$1-$2-$3-$4.out
    from=$(OPENSSL_CONF="$PWD/build/test/$5.cnf" valgrind -q --tool=callgrind --collect-atstart=no \
        --toggle-collect=measure --callgrind-out-file="$f" "$insn" "$1" "$2" "$3" "$4" "$n")
    awk -v from="$from" '/^summary:/ { s = $2 } END { if (s > 0) print s, from; else exit 1 }' "$f"
}

echo "Instructions per call (callgrind, $n calls after a warm-up; Linux $(uname -r)):"
echo
echo "| call | default provider | shipped: ?provider=ccree (served by) | ratio | ccree in software (offer = all) | ratio | targets | ✓/✗ |"
echo "|---|--:|--:|--:|--:|--:|--:|---|"
"$insn" list | while read -r alg size call target; do
    d=$(ir "$alg" "$size" "$call" default default)
    p=$(ir "$alg" "$size" "$call" preferred default)
    c=$(ir "$alg" "$size" "$call" ccree default-all)
    awk -v a="$alg $call, $size B" -v d="$d" -v p="$p" -v c="$c" -v n="$n" -v t="$target" 'BEGIN {
        split(d, D, " "); split(p, P, " "); split(c, C, " ")
        rp = P[1] / D[1]; rc = C[1] / D[1]
        printf "| %s | %.0f | %.0f (%s) | %.2f | %.0f | %.2f | = 1.00; ≤ %s | %s / %s |\n", a, D[1] / n,
               P[1] / n, P[2], rp, C[1] / n, rc, t, rp == 1 ? "✓" : "**✗**", rc <= t ? "✓" : "**✗**"
    }'
done
