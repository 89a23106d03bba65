#!/bin/sh
# In a VM booted with test/vm/run.sh -c: the simulated CryptoCell's faults through the real
# kernel path. test_kfaults with no fault (the module's count of messages of each driver must
# grow as the provider's kernel operations do), then with each fault mode of the module set
# for the call with the fault (every operation kind, in place and not, beside the default
# provider); then a corrupting driver (wrong bytes, success), which the provider's self-test at
# load must refuse: each algorithm offloaded without the fault stays in software, so reasoned.
# Usage: sh test/ccsim/faults.sh BUILD_DIR (configured with -DCCREE_TEST_DRIVERS=ccree)
set -eu
B=$(cd "${1:?usage: faults.sh BUILD_DIR}" && pwd)
P=/sys/module/ccsim/parameters
export OPENSSL_CONF="$B/test/any.cnf"
echo "== no fault"
CCREE_REQUIRE_OFFLOAD=1 "$B/test/test_kfaults" "$B/test/strict.cnf"
for f in eio enomem ebusy ebadmsg partial-garbage partial-prefix; do
    echo "== fault = $f"
    CCREE_REQUIRE_OFFLOAD=1 CCREE_FAULT=ccsim-$f "$B/test/test_kfaults" "$B/test/strict.cnf"
done
echo "== fault = corrupt, from the provider's load"
trap 'echo none > $P/fault' EXIT
offloaded=$("$B/ccree-info" | awk '$3 == "offload"' | wc -l)
echo corrupt > $P/fault
"$B/ccree-info" > /tmp/ccree-corrupt
echo none > $P/fault
cat /tmp/ccree-corrupt
refused=$(awk '$3 == "software" && /self-test of [^ ]*-ccree failed/' /tmp/ccree-corrupt | wc -l)
if awk '$3 == "offload"' /tmp/ccree-corrupt | grep -q . || [ "$refused" -ne "$offloaded" ]; then
    echo "faults.sh: a corrupting driver: $refused of $offloaded algorithms refused" >&2
    exit 1
fi
echo "== a corrupting driver: all $offloaded algorithms refused by the self-test"
