#!/bin/sh
# OpenSSL's evp_test data (evpciph_*.txt, evpmd_*.txt, evpmac_*.txt) of the libssl3 this machine
# has, from Debian's source package of it, into $CCREE_PEER_CACHE/<libssl3 version>/ (default
# /var/cache/ccree-peer). The deb-src entries are the twins of this machine's own deb entries, in
# a private apt configuration: the machine's apt sources and lists are not touched. Nothing is
# fetched when the cache is there.
#
# Usage: sh test/peer/fetch.sh          fetch (once)
#        sh test/peer/fetch.sh --dir    print the cache directory and exit
# CCREE_PEER_DATA, when set, is the directory itself (for a VM whose root has another libssl3).
# The version of the source used is written to SOURCE in the cache.
set -eu

CACHE=${CCREE_PEER_CACHE:-/var/cache/ccree-peer}
if [ -n "${CCREE_PEER_DATA:-}" ]; then # a root without dpkg's database (the arm64 VM's)
    DIR=$CCREE_PEER_DATA
else
    VER=$(dpkg-query -W -f='${Version}' "libssl3:$(dpkg --print-architecture)")
    DIR=$CACHE/$VER
fi
if [ "${1:-}" = --dir ]; then echo "$DIR"; exit 0; fi
if [ -e "$DIR/SOURCE" ]; then echo "fetch.sh: $DIR is there (source $(cat "$DIR/SOURCE"))"; exit 0; fi
[ -n "${VER:-}" ] || { echo "fetch.sh: no evp_test data in $DIR (CCREE_PEER_DATA)" >&2; exit 1; }

tmp=$(mktemp -d)
chmod 755 "$tmp"    # apt downloads as _apt
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/parts" "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/src"
# deb-src twins of the machine's enabled entries (deb822 .sources and one-line .list files)
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" >"$tmp/parts/$(basename "$f")"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] && sed -n 's/^deb[[:space:]]/deb-src /p' "$f"
done >"$tmp/parts/machine.list"
apt() {
    "$@" -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$tmp/parts" \
         -o Dir::State::Lists="$tmp/lists" -o Dir::Cache="$tmp/cache"
}
apt apt-get -qq update
# The installed version's source, else the nearest one of the same series (3.0) that the
# mirror serves: newer ones first, then older.
series=$(echo "$VER" | cut -d. -f1-2)
versions=$(apt apt-cache showsrc openssl | sed -n 's/^Version: //p' | grep "^$series\." | sort -uV)
newer=$(for v in $versions; do dpkg --compare-versions "$v" ge "$VER" && echo "$v"; done)
older=$(for v in $versions; do dpkg --compare-versions "$v" lt "$VER" && echo "$v"; done | sort -rV)
SRC=
for v in $newer $older; do
    if (cd "$tmp/src" && apt apt-get -qq source --download-only "openssl=$v" >/dev/null 2>&1); then
        SRC=$v
        break
    fi
    rm -f "$tmp/src"/*
done
[ -n "$SRC" ] || { echo "fetch.sh: the mirror serves no openssl $series source" >&2; exit 1; }
[ "$SRC" = "$VER" ] || echo "fetch.sh: the mirror has no openssl $VER source; using $SRC" >&2
dpkg-source -q -x "$tmp/src"/openssl_*.dsc "$tmp/src/openssl" >/dev/null 2>&1 ||
    { echo "fetch.sh: dpkg-source -x failed" >&2; exit 1; }
data=$tmp/src/openssl/test/recipes/30-test_evp_data
mkdir -p "$DIR.new"
cp "$data"/evpciph_*.txt "$data"/evpmd_*.txt "$data"/evpmac_*.txt "$DIR.new/"
echo "$SRC" >"$DIR.new/SOURCE"
rm -rf "$DIR" && mv "$DIR.new" "$DIR"
echo "fetch.sh: $(ls "$DIR"/*.txt | wc -l) files of openssl $SRC in $DIR"
