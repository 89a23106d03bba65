#!/bin/sh
# Differential fuzzing for SECONDS (0: replay the kept corpus once) with build-fuzz/'s target.
# New inputs go to a scratch directory; a difference, crash or leak fails with its input.
# With CCREE_REQUIRE_OFFLOAD=1 the provider's counters must show kernel work.
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-60}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$secs" -eq 0 ]; then limit=-runs=0; else limit=-max_total_time=$secs; fi
if ! build-fuzz/test/fuzz/fuzz_diff $limit -print_final_stats=1 -rss_limit_mb=1536 -artifact_prefix="$work/" \
        "$work" test/fuzz/corpus >"$work/log" 2>&1; then
    tail -n 40 "$work/log"
    grep -E '^(ccree differs|calls:)' "$work/log" || true
    for f in "$work"/crash-* "$work"/leak-*; do [ -e "$f" ] && base64 -w0 "$f" && echo; done
    exit 1
fi
grep -E '^stat::number_of_executed_units|^ccree fuzz' "$work/log"
if [ "${CCREE_REQUIRE_OFFLOAD:-0}" = 1 ]; then
    grep -qE '^ccree fuzz: offload-ops [1-9]' "$work/log" || { echo "no work offloaded" >&2; exit 1; }
fi
