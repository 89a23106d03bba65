#!/bin/sh
# ctest's entry to the peer suite: evp_peer over the evp_test data that fetch.sh cached, then
# a check that no algorithm skipped as "not offered by ccree" is named in src/algs.c.
# Usage: peer.sh EVP_PEER [--mutate]
set -u
here=$(dirname "$0")
dir=$(sh "$here/fetch.sh" --dir) || exit 1
if ! ls "$dir"/evpciph_*.txt >/dev/null 2>&1; then
    echo "peer: no evp_test data in $dir: run sh test/peer/fetch.sh" >&2
    exit 1
fi
echo "evp_test data of openssl $(cat "$dir/SOURCE") in $dir"
out=$(mktemp)
trap 'rm -f "$out" "$out.algs" "$out.skipped"' EXIT
"$@" "$dir"/evpciph_*.txt "$dir"/evpmd_*.txt "$dir"/evpmac_*.txt >"$out"
rc=$?
cat "$out"
# every name and alias of src/algs.c's rows (the first string of each), lower case
sed -n 's/^ *{ "\([^"]*\)".*/\1/p' "$here/../../src/algs.c" | tr ':' '\n' |
    tr '[:upper:]' '[:lower:]' | sort -u >"$out.algs"
sed -n 's/^not offered by ccree: //p' "$out" | tr '[:upper:]' '[:lower:]' | sort -u >"$out.skipped"
if [ ! -s "$out.algs" ]; then
    echo "peer: no algorithm names read from src/algs.c" >&2
    rc=1
fi
for n in $(comm -12 "$out.algs" "$out.skipped"); do
    echo "peer: $n is skipped as not offered, but src/algs.c has it" >&2
    rc=1
done
exit $rc
