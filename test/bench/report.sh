#!/bin/sh
# The Markdown report of bench.sh's measurements, with issue 6's targets checked; also writes
# OUT/throughput.tsv (MB/s by algorithm and size, one column per configuration) for plot.gp.
# Usage: sh test/bench/report.sh OUT_DIR SECONDS ROUNDS
set -eu
out=$1
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sort -u | head -n1)
echo "Measured $(date -u +%Y-%m-%d) on Linux $(uname -r), $(nproc) CPUs: ${cpu:-$(uname -m)};"
echo "$2 s per point, the best of $3 round(s)."
echo
awk -F'\t' -v tsv="$out/throughput.tsv" '
function mbs(c, a, s) { return (c, a, s) in best ? best[c, a, s] * s / 1e6 : "" }
function num(v) { return v == "" ? "-" : sprintf(v < 10 ? "%.2f" : "%.1f", v) }
function max(x, y) { return x == "" ? y : y == "" || x > y ? x : y }
function ratio(x, y, min) {         # x/y, marked against min when min is set
    if (x == "" || y == "" || y == 0) return "-"
    if (min == "") return sprintf("%.2f", x / y)
    total++
    if (x / y >= min) { met++; return sprintf("%.2f ✓", x / y) }
    return sprintf("**%.2f ✗**", x / y)
}
function mark(ok) { total++; met += ok; return ok ? "✓" : "**✗**" }
FILENAME ~ /results/ { if ($4 > 0 && $4 / $5 > best[$1, $2, $3]) best[$1, $2, $3] = $4 / $5; next }
FILENAME ~ /syscalls/ { sys[++nsys] = $0; next }
END {
    split("AES-128-CBC AES-128-CTR AES-128-GCM SHA-256", alg, " ")
    split("16 64 256 1024 8192 16384", size, " ")
    split("default forced ccree afalg kcapi ccsim", cfg, " ")
    print "Throughput in MB/s (10^6 bytes per second):\n"
    print "| algorithm | bytes | (a) default | (b) forced | (c) ccree | (d) afalg | (e) kcapi | (f) ccsim | b/d | b/e | c/max(a,b) | f/b |"
    print "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    printf "alg\tsize\tdefault\tforced\tccree\tafalg\tkcapi\tccsim\n" >tsv
    for (i = 1; i <= 4; i++) for (j = 1; j <= 6; j++) {
        a = alg[i]; s = size[j]
        line = "| " a " | " s; row = a "\t" s
        for (k = 1; k <= 6; k++) {
            v[k] = mbs(cfg[k], a, s)
            line = line " | " num(v[k]); row = row "\t" (v[k] == "" ? "NaN" : v[k])
        }
        print row >tsv
        print line " | " ratio(v[2], v[4], s <= 256 ? 1.5 : 1.0) " | " \
              ratio(v[2], v[5], s >= 1024 ? 0.95 : "") " | " ratio(v[3], max(v[1], v[2]), 0.9) " | " \
              ratio(v[6], v[2], "") " |"
    }
    print "\nSHA-256 in 64-byte updates of one long message (evp_loop), MB/s:\n"
    print "| (a) default | (b) forced | (c) ccree | c/max(a,b) |\n|--:|--:|--:|--:|"
    for (k = 1; k <= 3; k++) v[k] = mbs(cfg[k], "SHA-256:64B-updates", 64)
    print "| " num(v[1]) " | " num(v[2]) " | " num(v[3]) " | " ratio(v[3], max(v[1], v[2]), 0.9) " |"
    print "\nSyscalls per op in the timed loop (strace), and the targets on them:\n"
    print "| configuration | case | bytes | ops | syscalls per op | per op | target |"
    print "|---|---|--:|--:|--:|---|---|"
    for (i = 1; i <= nsys; i++) {
        split(sys[i], f, "\t"); n = split(f[6], call, " ")
        if (f[4] == 0) { printf "| %s | %s | %s | 0 | - | - | **no op ran** |\n", f[1], f[2], f[3]; continue }
        per = ""; keys = 0
        for (k = 1; k <= n; k++) {
            split(call[k], kv, "=")
            per = per (per == "" ? "" : ", ") kv[1] " " sprintf("%.2f", kv[2] / f[4])
            if (kv[1] == "ALG_SET_KEY") keys += kv[2]
        }
        t = f[5] / f[4]; target = ""
        if (f[2] ~ /:(new-IV|message)$/)
            target = "≤ 2 per request " mark(t <= 2) ", no key sent " mark(keys == 0)
        if (f[2] ~ /:64B-updates$/) {  # one more where the window cuts a 16 KiB block
            kib16 = f[4] * f[3] / 16384
            target = sprintf("≤ 1 per 16 KiB: %d for %.1f × 16 KiB ", f[5], kib16) \
                     mark(f[5] <= int(kib16) + 1)
        }
        printf "| %s | %s | %s | %s | %.2f | %s | %s |\n", f[1], f[2], f[3], f[4], t, per, target
    }
    printf "\nTargets met: %d of %d.\n", met, total
}' "$out/results.tsv" "$out/syscalls.tsv"
