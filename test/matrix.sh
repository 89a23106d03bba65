#!/bin/sh
# The platforms ccree's users run, as one table: the suite natively (this machine's kernel, no
# AF_ALG: the software path) and in the VM on Debian's kernels 5.10 to 7.3, with this machine's
# OpenSSL 3.0 or Debian's 3.5, 3.6 and 4.0 (roots that test/vm/run.sh -o makes, each with its
# own build, build-o<VER>). In each VM cell also: what the shipped configuration (no drivers
# line: drivers = ccree) offloads with the simulated CryptoCell 712 loaded, or why it cannot;
# and with "+tls", test/tls.sh with that module.
#
# Usage: sh test/matrix.sh [CELL...]     CELL: KERNEL/OPENSSL[+tls|+tlscpu], KERNEL native or a
#   version of test/vm/run.sh -k, OPENSSL 3.0 or a version of run.sh -o. Default: every kernel
#   on 3.0, native and 6.1 on every OpenSSL, TLS on 6.1 with 3.0 and 3.5, and on 7.3 with 3.0.
# The suite requires offload (CCREE_REQUIRE_OFFLOAD=1) where the kernel has no AF_ALG allowlist;
# under one (7.3) the tests that need offload skip and say why. Logs: build-matrix/. Prints a
# Markdown table (README, "Platforms", keeps the last); exits 1 if a cell failed. "+tls" runs
# test/tls.sh with the simulated 712; "+tlscpu" without it, under drivers = any (the CPU's
# drivers: on 7.3 root's nginx master may offload what its nobody workers may not).
# Run as root (the VMs, the roots). A cell of the VM suite takes 5 to 8 minutes under TCG.
set -eu
cd "$(dirname "$0")/.."

# In the VM: the suite, requiring offload unless the kernel restricts AF_ALG.
if [ "${1:-}" = --suite ]; then
    r=$(cat /proc/sys/crypto/af_alg_restrict 2>/dev/null || echo 0)
    [ "$r" -gt 0 ] || export CCREE_REQUIRE_OFFLOAD=1
    exec ctest --test-dir "$2" --output-on-failure
fi
# In the VM (or natively): how many algorithms the shipped configuration offloads, and the
# reasons of the others with their counts.
if [ "${1:-}" = --offload ]; then
    { openssl version; OPENSSL_CONF=$2/test/default.cnf "$2/ccree-info"; } >"$3"
    # each reason once, with the row's kernel name as "..." and drivers as *-ccree
    awk 'function lit(s, a, b,   i) { while ((i = index(s, a)) > 0) s = substr(s, 1, i - 1) b substr(s, i + length(a)); return s }
         $3 == "offload" { o++ }
         $3 == "offload" || $3 == "software" { n++ }
         $3 == "software" { w = $0; for (i = 0; i < 4; i++) sub(/^[^ ]+ +/, "", w)
                            w = lit(w, $2, "...")
                            gsub(/[^ ]*-ccree/, "*-ccree", w); why[w]++ }
         END { printf "%d/%d offloaded", o, n
               for (w in why) printf "; %d: %s", why[w], w
               print "" }' "$3"
    exit
fi

CELLS=${*:-native/3.0 native/3.5 native/3.6 native/4.0 5.10/3.0 6.1/3.0+tls 6.12/3.0 7.2/3.0
    7.3/3.0+tlscpu 6.1/3.5+tls 6.1/3.6 6.1/4.0}
OUT=build-matrix
mkdir -p "$OUT"
sh test/peer/fetch.sh >/dev/null
peer=$(sh test/peer/fetch.sh --dir)

# The build for OpenSSL $1 into $b, once per run.
built=
build() {
    if [ "$1" = 3.0 ]; then b=build; else b=build-o$1; fi
    case " $built " in *" $b "*) return ;; esac
    set -- cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo
    if [ "$b" = build ]; then "$@" && cmake --build "$b" -j2
    else test/vm/run.sh -o "${b#build-o}" -n -- sh -c "$* && cmake --build $b -j2"
    fi >"$OUT/build-$b.log" 2>&1 || { echo "matrix.sh: cannot build $b ($OUT/build-$b.log)" >&2; exit 1; }
    # the roots have no copy of this machine's evp_test data
    [ "$b" = build ] || { rm -rf "$b/peer-data" && cp -r "$peer" "$b/peer-data"; }
    built="$built $b"
}
# ctest's summary of log $1: "N/M passed, S skipped".
summary() {
    awk '/tests passed, [0-9]+ tests failed out of/ { t = $NF; f = $(NF - 5) }
         /\(Skipped\)$/ { s++ }
         END { if (t == "") print "did not finish"
               else printf "%d/%d passed%s\n", t - f - s, t, s ? ", " s " skipped" : "" }' "$1"
}

status=0
rows=
for cell in $CELLS; do
    tls=${cell#*+}; [ "$tls" != "$cell" ] || tls=
    cell=${cell%+*} k=${cell%/*} o=${cell#*/}
    build "$o"
    log=$OUT/$k-$o
    oopt=; [ "$o" = 3.0 ] || oopt="-o $o"
    echo "matrix.sh: $k/$o ..." >&2
    penv=; [ "$b" = build ] || penv=CCREE_PEER_DATA=$PWD/$b/peer-data
    if [ "$k" = native ]; then
        if [ "$o" = 3.0 ]; then run=; else run="test/vm/run.sh -o $o -n --"; fi
        # shellcheck disable=SC2086
        $run env $penv ctest --test-dir "$b" --output-on-failure >"$log.suite" 2>&1 || status=1
        # shellcheck disable=SC2086
        $run sh test/matrix.sh --offload "$b" "$log.info" >"$log.offload" 2>&1 || status=1
        kernel="$(uname -r) (no VM)"
    else
        # shellcheck disable=SC2086
        test/vm/run.sh -k "$k" $oopt -- env $penv sh test/matrix.sh --suite "$b" >"$log.suite" 2>&1 || status=1
        # shellcheck disable=SC2086
        test/vm/run.sh -k "$k" $oopt -c 712 -- sh test/matrix.sh --offload "$b" "$log.info" \
            >"$log.offload" 2>&1 || status=1
        kernel=$(sed -n 's/^ccree-vm: kernel \([^,]*\),.*/\1/p' "$log.suite" | head -n1)
    fi
    t=-
    if [ -n "$tls" ]; then
        # shellcheck disable=SC2086
        sim=; [ "$tls" = tlscpu ] || sim="-c 712"
        # shellcheck disable=SC2086
        test/vm/run.sh -k "$k" $oopt $sim -- env CCREE_BUILD="$b" sh test/tls.sh >"$log.tls" 2>&1 || status=1
        t=$(grep -c '^ok ' "$log.tls") f=$(grep -c '^FAIL ' "$log.tls" || true)
        t="$t passed, $f failed$([ -n "$sim" ] || echo " (no simulated CryptoCell)")"
    fi
    ossl=$(sed -n 's/^OpenSSL \([^ ]*\) .*/\1/p' "$log.info" | head -n1)
    rows="$rows| ${kernel:-$k} | ${ossl:-$o} | $(summary "$log.suite") | $(tail -n1 "$log.offload") | $t |
"
done

echo "| kernel | OpenSSL | suite | drivers = ccree, simulated 712 | TLS (tls.sh) |"
echo "|---|---|---|---|---|"
printf '%s' "$rows"
exit $status
