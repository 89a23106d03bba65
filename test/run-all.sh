#!/bin/sh
# The whole test suite: natively (this machine's kernel may lack AF_ALG: the software path),
# then in a VM with a real kernel, where drivers = any and the counters must show offload:
# the suite on OpenSSL 3.5 (with OpenSSL's own evp_test data, test/peer), small socket
# receive budgets (test/rmem.sh), without some modules, Linux 7.3's allowlist, kTLS on 7.2,
# with the simulated CryptoCell (drivers = ccree: the suite, its faults, TLS end to end
# through nginx and openssl s_server), under ASan+UBSan, under valgrind, and the fuzz target;
# then the Debian package, and the aarch64 cross build under qemu-user and in an arm64 VM.
# CCREE_FUZZ_SECONDS (default 300) bounds the fuzz run.
set -eu
cd "$(dirname "$0")/.."
sh tools/deps.sh deb tls arm64 armhf
sh test/peer/fetch.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j2
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug \
      "-DCMAKE_C_FLAGS=-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake --build build-asan -j2
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCCREE_FUZZ=ON
cmake --build build-fuzz -j2 --target fuzz_diff
ctest --test-dir build --output-on-failure
sh test/fuzz/run.sh 0
# OpenSSL 3.5 (Debian 13's, in a root that run.sh -o makes): built in that root, then its
# suite in the VM with offload required, on OpenSSL's evp_test data of this machine's 3.0.
# (3.0's build runs the same suite on the kernel path below: under ASan, under valgrind and
# on the simulated CryptoCell; cli here, with 3.0's openssl.)
test/vm/run.sh -o 3.5 -n -- sh -c 'cmake -S . -B build-o3.5 -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
      cmake --build build-o3.5 -j2'
rm -rf build-o3.5/peer-data && cp -r "$(sh test/peer/fetch.sh --dir)" build-o3.5/peer-data
test/vm/run.sh -o 3.5 -- env CCREE_REQUIRE_OFFLOAD=1 CCREE_PEER_DATA="$PWD/build-o3.5/peer-data" \
      ctest --test-dir build-o3.5 --output-on-failure
test/vm/run.sh -- sh -c 'sh test/rmem.sh build && CCREE_REQUIRE_OFFLOAD=1 ctest --test-dir build --output-on-failure -R "^cli$"'
test/vm/run.sh -m algif_hash -m algif_aead -m crypto_user -- sh test/missing-module.sh
# Linux 7.3 (Debian experimental; run.sh -k fetches it) with the simulated CryptoCell: its
# AF_ALG allowlist (af_alg_restrict = 1) refuses every bind by driver name, so no algorithm
# may be offloaded under the shipped configuration and ccree-info must name the allowlist;
# under drivers = any the kernel names bind instead where the allowlist has them (cbc(aes))
# and not where it has not (gcm(aes)). (kTLS to the module on 7.3 is not here: one transfer
# in two or three is cut short there; README.)
test/vm/run.sh -k 7.3 -c 712 -- sh -c 'OPENSSL_CONF=build/test/default.cnf build/ccree-info >/tmp/ccree &&
      ! grep -q " offload " /tmp/ccree && grep -q "refused by af_alg_restrict = 1" /tmp/ccree &&
      OPENSSL_CONF=build/test/any.cnf build/ccree-info >/tmp/any &&
      awk "\$1 == \"AES-128-CBC\" && \$3 == \"offload\" && \$4 == \"cbc(aes)\" { c = 1 }
           \$1 == \"AES-128-GCM\" && \$3 == \"software\" && /refused by af_alg_restrict = 1/ { g = 1 }
           END { exit !(c && g) }" /tmp/any || { cat /tmp/ccree /tmp/any; exit 1; }'
# On 7.3 without the module (drivers = any: the CPU's drivers), nginx's root master may
# offload AES-CBC and its nobody workers may not: each worker runs it in software with the
# reason in its statistics; AES-GCM, refused to root, ccree does not offer (the default
# provider runs it); with fallback = no every transfer is refused (SHA-256 is refused to
# nobody). TLS end to end without kTLS.
test/vm/run.sh -k 7.3 -- sh test/tls.sh nginx
# Linux 7.2 (sid), whose AF_ALG cannot reach the simulated CryptoCell, and OpenSSL 3.5's nginx
# and curl: kTLS puts the records on the module (priority 600: above x86's AES-NI GCM at 500,
# as ccree's 400 is above arm64's CE at 300). To curl only: a transfer takes about three times
# as long on 7.2 as on 6.1 under TCG, and s_client's transfers are 6.1's below.
test/vm/run.sh -k 7.2 -o 3.5 -c 712,priority=600 -- env CCREE_BUILD=build-o3.5 CCREE_TLS_CLIENTS=curl \
      sh test/tls.sh ktls
# The shipped drivers = ccree against the simulated CryptoCell (test/ccsim): the suite on the
# 712 with every algorithm it has offloaded to its *-ccree driver (evp-default: as shipped but
# offer = all, offload-min = auto), its fault modes, TLS end to end on it, then each revision's set
# (show.sh reloads the module with each).
cmake -S . -B build-ccsim -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCCREE_TEST_DRIVERS=ccree
cmake --build build-ccsim -j2
CCREE_VM_TIMEOUT=2400 test/vm/run.sh -c 712 -- sh -c 'CCREE_REQUIRE_OFFLOAD=1 ctest --test-dir build-ccsim --output-on-failure \
      -E cli && sh test/ccsim/faults.sh build-ccsim && sh test/tls.sh &&
      sh test/ccsim/show.sh build-ccsim 630p 710 713 703'
# The shim of the fault tests is preloaded ahead of the ASan runtime; cli runs the openssl binary.
test/vm/run.sh -- env CCREE_REQUIRE_OFFLOAD=1 ASAN_OPTIONS=verify_asan_link_order=0 \
      ctest --test-dir build-asan --output-on-failure -E cli
# valgrind (its own finding beside ASan's: reads of memory never written, also into system
# calls): what runs the same code again under other settings or inputs is left to ASan above
# (evp-mixed, evp-default, mac-mixed, modes-mixed: the tests again under other configurations;
# peer and peer-mutate: 3117 vectors in variants, 7 minutes under valgrind; the faults-*
# cases: test_faults' and test_kfaults' requests again, with the shim's faults; threads: the
# calls again from several threads, which valgrind runs one at a time); and stats, whose
# processes must finish within seconds (under valgrind in the VM a counting one takes longer
# than 30 s; its children pass valgrind natively).
CCREE_VM_TIMEOUT=3600 test/vm/run.sh -- env CCREE_REQUIRE_OFFLOAD=1 ctest --test-dir build -T memcheck --output-on-failure \
      -E 'cli|-mixed|evp-default|peer|faults-|threads|^stats$'
# The fuzz target in the VM: the whole corpus once (AEAD, MACs and faults too), then
# CCREE_FUZZ_SECONDS of new inputs on ciphers and digests without faults (CCREE_FUZZ_OLD=1): the
# long runs over AEAD and MACs with faults are by hand (README, Fuzzing).
test/vm/run.sh -- env CCREE_REQUIRE_OFFLOAD=1 sh -c 'sh test/fuzz/run.sh 0 &&
      CCREE_FUZZ_OLD=1 sh test/fuzz/run.sh "${CCREE_FUZZ_SECONDS:-300}"'
# The Debian package, built from a copy of the tree (dpkg-buildpackage writes beside the tree),
# installed and smoke-tested in the VM, whose root is a throwaway overlay (its build runs the
# suite, without the cases of 2 GiB: the native run's); and cross-built for arm64 (without its
# tests, which cannot run here: they run below).
rm -rf build-deb && mkdir -p build-deb/ccree
git ls-files -co --exclude-standard -z | tar --null -T - -c | tar -x -C build-deb/ccree
(cd build-deb/ccree && CCREE_BADINPUT_BIG=0 dpkg-buildpackage -us -uc -b &&
 DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -a arm64 -Pnocheck -us -uc -b)
test/vm/run.sh -- sh -c \
      'dpkg -i build-deb/ccree_*_"$(dpkg --print-architecture)".deb && debian/tests/smoke'
# 32-bit armhf: the suite under qemu-user (size_t of 32 bits; the software path, as there is no
# AF_ALG; cli is left out: it runs this machine's openssl, which cannot load the module; the
# cases of 2 GiB are the native run's: emulated they take many minutes). Then aarch64: the
# cross build, and its suite in the arm64 VM (the software path under qemu-user is the
# native run's; the faults-recv-* and faults-send-* cases, 700 of them each, the x86 VMs').
cmake -S . -B build-armhf -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_TOOLCHAIN_FILE=cmake/arm-linux-gnueabihf.cmake
cmake --build build-armhf -j2
CCREE_BADINPUT_BIG=0 ctest --test-dir build-armhf --output-on-failure -E cli
cmake -S . -B build-aarch64 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
cmake --build build-aarch64 -j2
# The arm64 VM's root has no /var/cache: the peer suite's data goes in the shared tree.
rm -rf build-aarch64/peer-data && cp -r "$(sh test/peer/fetch.sh --dir)" build-aarch64/peer-data
test/vm/run.sh -a arm64 -- env CCREE_REQUIRE_OFFLOAD=1 CCREE_PEER_DATA="$PWD/build-aarch64/peer-data" \
      ctest --test-dir build-aarch64 --output-on-failure -E 'faults-(recv|send)'
