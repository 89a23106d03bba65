#!/bin/sh
# The benchmark itself, run where AF_ALG is: in the VM by test/bench/run.sh, or directly on a
# board. Checks each configuration's results, measures their throughput side by side and
# counts syscalls per op under strace, then writes the report (report.sh) and, where gnuplot
# is installed, the plot (plot.gp).
# Usage (in the source tree): sh test/bench/bench.sh [BUILD_DIR [OUT_DIR]]
#   defaults: build and BUILD_DIR/bench. Env: CCREE_BENCH_SECONDS per point (default 1),
#   CCREE_BENCH_ROUNDS of the throughput measurements, of which the report keeps the best
#   (default 1; more where other load disturbs the machine).
set -eu
build=$(cd "${1:-build}" && pwd)
out=${2:-$build/bench}
secs=${CCREE_BENCH_SECONDS:-1}
rounds=${CCREE_BENCH_ROUNDS:-1}
sizes="16 64 256 1024 8192 16384"
algs="AES-128-CBC AES-128-CTR AES-128-GCM SHA-256"
loops=$build/test/bench
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

# (b) and (c): the provider's configuration files, from the tests' template.
conf() { # NAME SETTINGS
    sed -e "s|@CCREE_MODULE@|$build/ccree.so|" -e "s|@CCREE_SETTINGS@|$2|" \
        "$here/../ccree-test.cnf.in" >"$out/$1.cnf"
}
conf forced 'drivers = any\noffload-min = 0'
conf ccree 'drivers = any'
conf ccsim 'drivers = ccree\noffload-min = 0'

# name, OPENSSL_CONF (- for the system's), what serves it: a provider (property query), an
# engine, or libkcapi.
configs="default - provider=default
forced $out/forced.cnf provider=ccree
ccree $out/ccree.cnf provider=ccree
afalg - engine=afalg
kcapi - kcapi"
# The simulated CryptoCell, when loaded (test/bench/run.sh: below the CPU drivers' priority,
# so that only drivers = ccree takes it): ccree on its asynchronous path.
[ ! -d /sys/module/ccsim ] || configs="$configs
ccsim $out/ccsim.cnf provider=ccree"

run=                            # a prefix for each measuring command: strace, when tracing
with_conf() { # CONFIG COMMAND...: COMMAND under the configuration's OPENSSL_CONF
    cf=$(echo "$configs" | awk -v n="$1" '$1 == n { print $2 }')
    shift
    if [ "$cf" = - ]; then "$@"; else (export OPENSSL_CONF="$cf"; "$@"); fi
}
speed() { # SECONDS ALG OPTIONS...: openssl speed at its default sizes, which are ours
    t=$1 alg=$2
    shift 2
    $run openssl speed -elapsed -mr -seconds "$t" "$@" -evp "$alg" 2>&1 |
        awk -F: '/^\+DT:/ { s = $4 } /^\+R:/ { print s, $2, $4 }'
}
evp() { # SECONDS evp_loop ARGS...
    t=$1
    shift
    $run "$loops/evp_loop" -t "$t" "$@" | awk '{ print $2, $3, $4 }'
}
# One case at every size, as "SIZE OPS SECONDS" lines; nothing where a configuration has no
# such case. GCM runs as TLS-like messages (new IV, 13-byte AAD, data, tag): speed -aead runs
# that loop at one size per run only, so evp_loop runs it at every size in one.
point() { # SECONDS SERVER CASE
    case $2,$3 in
        provider=*,*GCM) evp "$1" -q "$2" msg "$3" $sizes ;;
        provider=*,SHA-256:64B-updates) evp "$1" -q "$2" stream SHA-256 64 ;;
        provider=*,*) speed "$1" "$3" -propquery "$2" ;;
        engine=*,AES-128-CBC) speed "$1" "$3" -engine "${2#engine=}" ;;
        kcapi,*:*|engine=*) ;;
        kcapi,*) $run "$loops/kcapi_loop" "$1" "$3" $sizes | awk '{ print $2, $3, $4 }' ;;
    esac
}
record() { # CONFIG LABEL: "SIZE OPS SECONDS" lines into results.tsv
    awk -v c="$1" -v a="$2" '{ printf "%s\t%s\t%s\t%s\t%s\n", c, a, $1, $2, $3 }' >>"$out/results.tsv"
}

# Syscalls between alarm() and SIGALRM (openssl speed: from its start time, times(), on),
# one line per timed window: the total, then each call's count (ALG_SET_KEY apart).
windows() { # TRACE
    awk '/^alarm\([1-9]/ { on = 1; t = 0; split("", n); next }
         /^--- SIGALRM/ { if (on) { l = t; for (k in n) l = l " " k "=" n[k]; print l }
                          on = 0; next }
         !on || /^(---|\+\+\+)/ { next }
         /^times\(/ { t = 0; split("", n); next }
         { k = $0; sub(/\(.*/, "", k); if (/ALG_SET_KEY/) k = "ALG_SET_KEY"; n[k]++; t++ }' "$1"
}
trace() { # CONFIG LABEL COMMAND...: syscalls.tsv rows, one per size
    c=$1 label=$2
    shift 2
    run="strace -o $tmp/trace"
    with_conf "$c" "$@" >"$tmp/points"
    run=
    windows "$tmp/trace" | paste -d' ' "$tmp/points" - |
        awk -v c="$c" -v a="$label" '{ printf "%s\t%s\t%s\t%s\t%s\t", c, a, $1, $2, $4
                                       for (i = 5; i <= NF; i++) printf "%s ", $i; print "" }' \
        >>"$out/syscalls.tsv"
}

echo "== correctness: each configuration against the default provider"
for c in forced ccree $([ ! -d /sys/module/ccsim ] || echo ccsim); do
    for alg in $algs; do
        with_conf "$c" "$loops/evp_loop" -q provider=ccree check "$alg" $sizes >/dev/null
    done
    echo "$c: ok"
done
# The engine must load, agree with the default provider and really open AF_ALG sockets
# (it is not ours: where it does not, its column is left out).
head -c 100000 /dev/urandom >"$tmp/in"
set -- -aes-128-cbc -K 000102030405060708090a0b0c0d0e0f -iv 0f0e0d0c0b0a09080706050403020100
openssl enc "$@" -in "$tmp/in" -out "$tmp/default"
if strace -o "$tmp/trace" openssl enc -engine afalg "$@" -in "$tmp/in" -out "$tmp/afalg" \
       2>/dev/null && cmp -s "$tmp/default" "$tmp/afalg" && grep -q '^socket(AF_ALG' "$tmp/trace"; then
    echo "afalg: ok, through AF_ALG sockets"
else
    echo "afalg: the engine failed, differed or did not use AF_ALG: left out"
    configs=$(echo "$configs" | grep -v '^afalg ')
fi
echo "kcapi: each size checked by kcapi_loop"

echo "== throughput, $secs s per point, $rounds round(s)"
: >"$out/results.tsv"
for round in $(seq "$rounds"); do
    for alg in $algs SHA-256:64B-updates; do
        echo "$round: $alg"     # every configuration of a case together, as load may drift
        echo "$configs" | while read -r name cf server; do
            with_conf "$name" point "$secs" "$server" "$alg" </dev/null | record "$name" "$alg"
        done
    done
done

echo "== syscalls per op (strace, $secs s per point)"
: >"$out/syscalls.tsv"
while read -r c label cmd; do
    echo "$configs" | grep -q "^$c " || continue
    echo "$c $label"
    trace "$c" "$label" $cmd </dev/null
done <<EOF
forced AES-128-CBC point $secs provider=ccree AES-128-CBC
forced SHA-256 point $secs provider=ccree SHA-256
afalg AES-128-CBC point $secs engine=afalg AES-128-CBC
kcapi AES-128-CBC point $secs kcapi AES-128-CBC
forced AES-128-CBC:new-IV evp $secs -q provider=ccree msg AES-128-CBC 16 16384 65536
forced AES-128-CTR:new-IV evp $secs -q provider=ccree msg AES-128-CTR 16 16384 65536
forced AES-128-GCM:message evp $secs -q provider=ccree msg AES-128-GCM 16 16384
forced SHA-256:64B-updates evp $secs -q provider=ccree stream SHA-256 64
EOF

echo "== report ($(($(date +%s) - start)) s of measurement)"
sh "$here/report.sh" "$out" "$secs" "$rounds" >"$out/table.md"
cat "$out/table.md"
if command -v gnuplot >/dev/null; then
    gnuplot -e "dir='$out'" "$here/plot.gp" && echo "plot: $out/throughput.png"
fi
