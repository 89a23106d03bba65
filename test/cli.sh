#!/bin/sh
# The openssl CLI through the provider (OPENSSL_CONF from CTest), compared with the default
# provider, for every algorithm; then the diagnostic tool and openssl speed. Usage: cli.sh CCREE_INFO
set -eu
info=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
openssl list -providers | grep -q 'ccree' || { echo "ccree not loaded"; exit 1; }
head -c 300000 /dev/urandom > "$tmp/in"
key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
iv=0f0e0d0c0b0a09080706050403020100
for bits in 128 192 256; do
  k=$(echo $key | cut -c1-$((bits / 4)))
  for mode in ecb cbc ctr; do
    c=aes-$bits-$mode
    set -- -K "$k"
    [ $mode = ecb ] || set -- "$@" -iv $iv
    openssl enc -$c "$@" -in "$tmp/in" -out "$tmp/ccree" -propquery provider=ccree
    openssl enc -$c "$@" -in "$tmp/in" -out "$tmp/default" -propquery provider=default
    cmp "$tmp/ccree" "$tmp/default"
    openssl enc -d -$c "$@" -in "$tmp/ccree" -out "$tmp/back" -propquery provider=ccree
    cmp "$tmp/back" "$tmp/in"
    echo "$c: ccree matches default"
  done
done
for d in sha1 sha224 sha256 sha384 sha512; do
  a=$(openssl dgst -$d -r -propquery provider=ccree "$tmp/in" | cut -d' ' -f1)
  b=$(openssl dgst -$d -r -propquery provider=default "$tmp/in" | cut -d' ' -f1)
  [ "$a" = "$b" ] || { echo "$d: $a != $b"; exit 1; }
  echo "$d: ccree matches default"
done
# Fetched from ccree, not silently from default.
openssl list -cipher-algorithms -propquery provider=ccree -provider ccree | grep -q 'AES-128-CTR @ ccree'
"$info" | tee "$tmp/info"
# Rows (test_config counts them against the table), each with its path (no awk: the arm64
# root has none).
rows=$(sed -n '2,/^statistics: /p' "$tmp/info" | sed '$d')
[ -n "$rows" ]
[ "$(echo "$rows" | grep -c -v -E ' (offload|software) ')" -eq 0 ]
# Then the kernel TLS path: the tls module, and a row for each of kTLS's four ciphers.
[ "$(sed -n '/^kernel TLS: tls module /,$p' "$tmp/info" | grep -c -E '^(AES-...-[GC]CM|ChaCha20-Poly1305) ')" -eq 4 ]
# openssl speed on GCM: every message is one kernel request in the VM (one sendmsg carrying its
# 1024 bytes, counted by strace); natively it runs in software. speed ignores failures itself.
# Under strace in a loaded VM a second may pass before the first message: then longer.
for mode in -evp -aead; do
  for secs in 1 4 16; do
    set -- openssl speed -elapsed -seconds $secs -bytes 1024 -propquery '?provider=ccree'
    [ $mode = -aead ] && set -- "$@" -aead
    strace -f -e trace=sendmsg -o "$tmp/trace" "$@" -evp aes-128-gcm >"$tmp/speed" 2>&1
    # "N AES-128-GCM's in" in OpenSSL 3.0, "N AES-128-GCM ops in" in 3.5
    ops=$(sed -n "s/.*1024 size blocks: \([0-9]*\) AES-128-GCM[' ].* in .*/\1/p" "$tmp/speed")
    [ "${ops:-0}" -eq 0 ] || break
  done
  sent=$(grep -c 'iov_len=1024}' "$tmp/trace" || true)
  echo "speed $mode aes-128-gcm: $ops messages, $sent kernel requests of 1024 bytes"
  [ "$ops" -gt 0 ]
  if [ "${CCREE_REQUIRE_OFFLOAD:-0}" = 1 ]; then [ "$sent" -ge "$ops" ]; else [ "$sent" -eq 0 ]; fi
done
