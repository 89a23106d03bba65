#!/bin/sh
# In the VM booted without algif_hash, algif_aead and crypto_user (test/vm/run.sh -m ...):
# ciphers are still offloaded, digests, MACs, GCM and CCM run in software and ccree-info says
# why, with fallback = no a digest fails with ccree's error, and the suite still passes, also
# under ASan (which finds leaks too).
set -eu
cd "$(dirname "$0")/.."
export OPENSSL_CONF=$PWD/build/test/any.cnf
build/ccree-info | tee /tmp/ccree-info
[ "$(grep -c -E '^AES-.* offload ' /tmp/ccree-info)" -eq 14 ]
[ "$(grep -c -E '^SHA.* software .*module algif_hash missing' /tmp/ccree-info)" -eq 5 ]
[ "$(grep -c -E '^(HMAC|CMAC)-.* software .*module algif_hash missing' /tmp/ccree-info)" -eq 9 ]
[ "$(grep -c -E '^AES-.*-(GCM|CCM) .* software .*module algif_aead missing' /tmp/ccree-info)" -eq 6 ]
if OPENSSL_CONF=$PWD/build/test/strict.cnf openssl dgst -sha256 -propquery provider=ccree \
       </dev/null 2>/tmp/strict.err; then
    echo "SHA-256 succeeded with fallback = no and no algif_hash" >&2
    exit 1
fi
grep 'algorithm not offloaded and fallback = no' /tmp/strict.err
ctest --test-dir build --output-on-failure -R 'evp-any|aead|^mac$|paths'
ASAN_OPTIONS=verify_asan_link_order=0 ctest --test-dir build-asan --output-on-failure \
    -R 'evp-any|aead|paths|badinput|cleanse'
