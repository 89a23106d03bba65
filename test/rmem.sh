#!/bin/sh
# The real kernel, no shim, under small socket receive budgets: with net.core.rmem_default,
# then separately net.core.rmem_max (the ceiling of a socket's own SO_RCVBUF), at 65536, 16384
# and 4096 bytes (or the least above it the kernel takes), test_kfaults runs every operation
# kind in place, aligned and one byte past, against the default provider: a receive budget
# spent mid-request makes recvmsg return short after writing. The settings are restored.
# Usage, in the VM (as root): test/vm/run.sh -- sh test/rmem.sh BUILD_DIR
set -u
T=$(cd "${1:?usage: rmem.sh BUILD_DIR}" && pwd)/test
P=/proc/sys/net/core
old_default=$(cat $P/rmem_default) old_max=$(cat $P/rmem_max)
restore() { echo "$old_default" > $P/rmem_default && echo "$old_max" > $P/rmem_max; }
trap restore EXIT
trap 'exit 1' INT TERM
status=0
for key in rmem_default rmem_max; do
    for n in 65536 16384 4096; do
        v=$n
        # the kernel refuses less than its minimum (SOCK_MIN_RCVBUF, 4608 on Linux 6.1)
        while ! (echo $v > $P/$key) 2>/dev/null; do
            v=$((v + 256))
            [ $v -le $((n + 2048)) ] || { echo "rmem.sh: $key = $n refused" >&2; exit 1; }
        done
        echo "== net.core.$key = $v"
        if env OPENSSL_CONF="$T/any.cnf" CCREE_REQUIRE_OFFLOAD=1 CCREE_KFAULT_PLACES=in \
            "$T/test_kfaults" "$T/strict.cnf"; then
            echo "== net.core.$key = $v: passed"
        else
            echo "== net.core.$key = $v: FAILED"
            status=1
        fi
        restore
    done
done
exit $status
