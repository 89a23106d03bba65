#!/bin/sh
# Installs dependencies, builds and installs ccree, then encrypts and hashes a file with the
# openssl CLI as /etc/ssl/ccree.cnf makes applications fetch (?provider=ccree: ccree where
# it offloads the algorithm, the default provider otherwise), checks each result against the
# default provider, and shows which path (kernel driver or software, and why) serves each.
set -eu
cd "$(dirname "$0")/.."
sh tools/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j2
cmake --install build
export OPENSSL_CONF=/etc/ssl/ccree.cnf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c 1048576 /dev/urandom > "$tmp/data"
key=000102030405060708090a0b0c0d0e0f
iv=0f0e0d0c0b0a09080706050403020100
for c in aes-128-cbc aes-128-ctr; do
  openssl enc -$c -K $key -iv $iv -in "$tmp/data" -out "$tmp/ccree" -propquery '?provider=ccree'
  openssl enc -$c -K $key -iv $iv -in "$tmp/data" -out "$tmp/default" -propquery provider=default
  cmp "$tmp/ccree" "$tmp/default" && echo "$c: 1 MiB with ?provider=ccree, same as the default provider"
done
for d in sha256 sha512; do
  a=$(openssl dgst -$d -r -propquery '?provider=ccree' "$tmp/data" | cut -d' ' -f1)
  b=$(openssl dgst -$d -r -propquery provider=default "$tmp/data" | cut -d' ' -f1)
  [ "$a" = "$b" ] && echo "$d: 1 MiB with ?provider=ccree, same as the default provider"
done
echo
ccree-info
