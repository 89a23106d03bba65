#!/bin/sh
# In a VM booted with test/vm/run.sh -c: what the simulated CryptoCell registers
# (/proc/crypto: driver, name, priority, async, self-test) and what ccree-info
# reports under drivers = ccree, then the same for each further revision given
# (the module reloaded with it; other parameters at their defaults).
#
# Usage: sh test/ccsim/show.sh CCREE_INFO CNF [REV...]
set -eu
info=$1 cnf=$2
shift 2
show() {
    echo "== rev $(cat /sys/module/ccsim/parameters/rev)"
    awk '/^name/ {n = $3} /^driver/ {d = $3} /^priority/ {p = $3} /^async/ {a = $3}
         /^selftest/ {s = $3} /^$/ {if (d ~ /-ccree$/) print d, n, p, "async=" a, s; d = ""}' \
        /proc/crypto | sort
    OPENSSL_CONF=$cnf "$info"
}
show
for rev in "$@"; do
    ko=/run/ccree-vm/ccsim.ko
    rmmod ccsim
    insmod "$ko" rev="$rev"
    show
done
