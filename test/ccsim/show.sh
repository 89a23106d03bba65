#!/bin/sh
# In a VM booted with test/vm/run.sh -c: what the simulated CryptoCell registers
# (/proc/crypto: driver, name, priority, async, self-test), what ccree-info reports under
# drivers = ccree, and test_evp with every algorithm the revision has offloaded to its driver;
# then the same for each further revision given (the module reloaded with it; other parameters
# at their defaults).
#
# Usage: sh test/ccsim/show.sh BUILD_DIR [REV...] (BUILD_DIR configured with
# -DCCREE_TEST_DRIVERS=ccree)
set -eu
B=$(cd "${1:?usage: show.sh BUILD_DIR [REV...]}" && pwd)
shift
show() {
    echo "== rev $(cat /sys/module/ccsim/parameters/rev)"
    awk '/^name/ {n = $3} /^driver/ {d = $3} /^priority/ {p = $3} /^async/ {a = $3}
         /^selftest/ {s = $3} /^$/ {if (d ~ /-ccree$/) print d, n, p, "async=" a, s; d = ""}' \
        /proc/crypto | sort
    OPENSSL_CONF=$B/test/any.cnf "$B/ccree-info"
    OPENSSL_CONF=$B/test/any.cnf CCREE_REQUIRE_OFFLOAD=1 "$B/test/test_evp" >/tmp/ccsim-evp 2>&1 ||
        { cat /tmp/ccsim-evp; exit 1; }
    grep -E '^\[  PASSED|offload could not be shown' /tmp/ccsim-evp
}
show
for rev in "$@"; do
    rmmod ccsim
    insmod /run/ccree-vm/ccsim.ko rev="$rev"
    show
done
