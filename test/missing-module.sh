#!/bin/sh
# In the VM booted without algif_hash and crypto_user (test/vm/run.sh -m ...): ciphers are
# still offloaded, digests run in software and ccree-info says why; the suite still passes.
set -eu
cd "$(dirname "$0")/.."
export OPENSSL_CONF=$PWD/build/test/any.cnf
build/ccree-info | tee /tmp/ccree-info
[ "$(grep -c -E '^AES-.* offload ' /tmp/ccree-info)" -eq 9 ]
[ "$(grep -c -E '^SHA.* software .*module algif_hash missing' /tmp/ccree-info)" -eq 5 ]
ctest --test-dir build --output-on-failure -R 'evp-any|paths|cli'
