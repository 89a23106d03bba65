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
trap 'rm -f "$out"' EXIT
"$@" "$dir"/evpciph_*.txt "$dir"/evpmd_*.txt "$dir"/evpmac_*.txt >"$out"
rc=$?
cat "$out"
# every name and alias of src/algs.c's rows (the first string of each), lower case
names=$(sed -n 's/^ *{ "\([^"]*\)".*/\1/p' "$here/../../src/algs.c" | tr ':' '\n' |
        tr '[:upper:]' '[:lower:]' | sort -u)
if [ -z "$names" ]; then
    echo "peer: no algorithm names read from src/algs.c" >&2
    exit 1
fi
for n in $(sed -n 's/^not offered by ccree: \([^ ]*\)$/\1/p' "$out" | tr '[:upper:]' '[:lower:]'); do
    if echo "$names" | grep -qxF "$n"; then
        echo "peer: $n is skipped as not offered, but src/algs.c has it" >&2
        rc=1
    fi
done
exit $rc
