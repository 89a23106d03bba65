#!/bin/bash
# Run a command inside a QEMU (TCG) VM booting one of Debian's kernels (by default
# Debian 12's 6.1), which have AF_ALG. The VM's root (read-only 9p + tmpfs overlay)
# is the host root, or for another architecture a Debian root of it made once with
# mmdebstrap; the caller's git work tree (or cwd) is shared read-write at the same path.
#
# Usage: test/vm/run.sh [-a ARCH] [-k VER] [-o VER [-n]] [-m MODULE]... [-c REV[,PARAM=VALUE]...] -- COMMAND [ARGS...]
#   -a ARCH    Debian architecture of the VM: amd64 (default) or arm64.
#   -o VER     the OpenSSL of the VM's root: this machine's (default), 3.5 (trixie),
#              3.6 (sid), 4.0 (experimental; its nginx and curl are sid's, on 3.6): a root
#              of that suite with what the suite and test/tls.sh need, made once (amd64).
#   -n         no VM: run COMMAND here in the root of -o (chroot), e.g. to build for it.
#   -k VER     the kernel: 5.10 (bullseye-security), 6.1 (default: this machine's apt),
#              6.12 (trixie), 7.2 (sid), 7.3 (experimental); other than 6.1, amd64 only,
#              fetched with an apt configuration of its own under the cache.
#   -m MODULE  do not load MODULE (at boot nor on demand); repeatable.
#   -c REV,... load test/ccsim (a simulated CryptoCell of revision REV: 630p, 710,
#              712, 713, 703) with those module parameters, built for the VM's
#              kernel against Debian's headers (amd64 only; other than 6.1, in a root of
#              that suite with the kernel's compiler, made once); debugfs is mounted.
# Env: CCREE_VM_CACHE (default /var/cache/ccree-vm), CCREE_VM_TIMEOUT (s, 1200).
# Exit status: COMMAND's; 124 on timeout; 125 if the VM gave no status.
set -euo pipefail

usage() { echo "usage: $0 [-a ARCH] [-k VER] [-o VER [-n]] [-m MODULE]... [-c REV[,PARAM=VALUE]...] -- COMMAND [ARGS...]" >&2; exit 2; }
die() { echo "run.sh: $*" >&2; exit 125; }
# A mirror in the middle of a sync serves some index files of the wrong size: go on with the
# indexes that came (what is then missing fails at the install or download, clearly).
update() { "$@" update -qq || { echo "run.sh: apt-get update failed" >&2; return 1; }; }

ARCH=amd64
KV=6.1
EXCLUDE=()
CCSIM=
OSSL=
NOVM=
while [ $# -gt 0 ]; do
    case $1 in
        -a) [ $# -ge 2 ] || usage; ARCH=$2; shift 2 ;;
        -k) [ $# -ge 2 ] || usage; KV=$2; shift 2 ;;
        -m) [ $# -ge 2 ] || usage; EXCLUDE+=("${2//-/_}"); shift 2 ;;
        -c) [ $# -ge 2 ] || usage; CCSIM=$2; shift 2 ;;
        -o) [ $# -ge 2 ] || usage; OSSL=$2; shift 2 ;;
        -n) NOVM=1; shift ;;
        --) shift; break ;;
        *) usage ;;
    esac
done
[ $# -gt 0 ] || usage

CACHE=$(realpath -m "${CCREE_VM_CACHE:-/var/cache/ccree-vm}")
TIMEOUT=${CCREE_VM_TIMEOUT:-1200}
SELF=$(realpath "$0")
# Loaded at boot (with dependencies); virtio_pci is the transport for 9p.
MODULES=(virtio_pci 9pnet_virtio 9p overlay
         af_alg algif_hash algif_skcipher algif_aead algif_rng crypto_user)
# The CPU crypto drivers are what udev would load on a real machine (x86: their
# self-tests cost ~2.5 s under TCG; drop them with -m to boot faster). A kernel
# may lack some (7.x has the SHA and GHASH ones in lib/crypto, built in).
CPUMODULES=()
case $ARCH in
    amd64)
        # tsc=reliable: the kernel otherwise distrusts TCG's TSC and takes the HPET, so that
        # each CLOCK_MONOTONIC read (offload-min = auto's timing) is a system call and an
        # emulated device read (0.9 us against the vDSO's 0.06), as on a board it is not.
        QEMU=(qemu-system-x86_64 -cpu max -bios qboot.rom) QPKG=qemu-system-x86 CONSOLE=ttyS0
        KARGS="tsc=reliable"
        CPUMODULES+=(aesni_intel sha1_ssse3 sha256_ssse3 sha512_ssse3 ghash_clmulni_intel) ;;
    arm64)
        KARGS=
        # pauth-impdef: -cpu max with a pointer authentication that is cheaper to emulate
        # (the suite runs in half the time).
        QEMU=(qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on)
        QPKG=qemu-system-arm CONSOLE=ttyAMA0
        CPUMODULES+=(aes_ce_blk aes_ce_ccm sha1_ce sha2_ce sha512_ce ghash_ce) ;;
    *) usage ;;
esac
# -k: the suites whose index has the kernel (empty: this machine's apt, as it is).
case $KV in
    5.10) SUITES="bullseye bullseye-security" ;;
    6.1) SUITES= ;;
    6.12) SUITES="trixie trixie-security" ;;
    7.2) SUITES=sid ;;
    7.3) SUITES="sid experimental" ;;   # experimental has only what differs from sid
    *) usage ;;
esac
# -o: the suites of the root, and the packages to take from the last of them
case $OSSL in
    '') OSUITES= ;;
    3.5) OSUITES="trixie trixie-security" OFROM= ;;
    3.6) OSUITES=sid OFROM= ;;
    4.0) OSUITES="sid experimental" OFROM=/experimental ;;
    *) usage ;;
esac
[ -z "$SUITES$OSUITES" ] || [ "$ARCH" = amd64 ] || die "-k, -o: amd64 only"
[ -z "$NOVM" ] || [ -n "$OSSL" ] || usage
# Debian's sources lines of some suites
sources() {
    local s d
    for s in "$@"; do
        d=debian; [[ $s == *-security ]] && d=debian-security
        echo "deb [arch=amd64] http://deb.debian.org/$d $s main"
    done
}
APT=(apt-get) APTCACHE=(apt-cache)
if [ -n "$SUITES" ]; then
    A=$CACHE/apt-$KV
    # shellcheck disable=SC2086
    mapfile -t SOURCES < <(sources $SUITES)
    # (sid's and experimental's Release files may outlive their Valid-Until)
    APTOPTS=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts=/dev/null
             -o Dir::State::Lists="$A/lists" -o Dir::Cache="$A/cache"
             -o Acquire::Check-Valid-Until=false -o Acquire::Languages=none)
    APT+=("${APTOPTS[@]}") APTCACHE+=("${APTOPTS[@]}")
fi
# The root: the host's, or for another architecture the packages the VM runs,
# unpacked (without their maintainer scripts, which the tests do not need).
if [ -n "$OSSL" ]; then
    ROOTPKGS=build-essential,cmake,pkg-config,libcmocka-dev,kmod,busybox-static,strace,procps,nginx,curl
    ROOTPKGS+=,openssl$OFROM,libssl-dev$OFROM
    ROOT=$CACHE/root-openssl-$OSSL-$(echo "$ROOTPKGS" | sha256sum | cut -c1-12)
elif [ "$ARCH" = "$(dpkg --print-architecture)" ]; then
    ROOT=/
else
    ROOTPKGS=bash,coreutils,dash,diffutils,findutils,grep,sed,kmod,busybox-static
    ROOTPKGS+=,cmake,openssl,libcmocka0,strace
    ROOT=$CACHE/root-$ARCH-$(echo "$ROOTPKGS" | sha256sum | cut -c1-12)
fi

# --- host tools -----------------------------------------------------------
if [ -n "$NOVM" ]; then PKGS=(); else PKGS=("$QPKG" kmod cpio); fi
[ -z "$SUITES" ] || PKGS+=(zstd)
if [ -n "$CCSIM" ]; then
    [ "$ARCH" = amd64 ] || die "-c: the simulated CryptoCell is built for amd64 only"
    if [ -n "$SUITES" ]; then PKGS+=(mmdebstrap); else PKGS+=(gcc-12 make); fi
fi
if [ "$ROOT" = / ]; then PKGS+=(busybox-static); else PKGS+=(mmdebstrap); fi
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    update apt-get || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9     # serialise cache setup between concurrent runs

# --- root of another architecture ------------------------------------------
if [ -n "$OSSL" ] && [ ! -e "$ROOT/.done" ]; then
    echo "run.sh: making a root with OpenSSL $OSSL" >&2
    rm -rf "$CACHE/root-openssl-$OSSL"-*
    # shellcheck disable=SC2086
    mapfile -t OSOURCES < <(sources $OSUITES)
    mmdebstrap --quiet --variant=apt --include="$ROOTPKGS" \
        --aptopt='Acquire::Check-Valid-Until "false"' --aptopt='Acquire::Languages "none"' \
        "${OSUITES%% *}" "$ROOT" "${OSOURCES[@]}" >&2
    touch "$ROOT/.done"
elif [ "$ROOT" != / ] && [ ! -e "$ROOT/.done" ]; then
    echo "run.sh: making the $ARCH root" >&2
    rm -rf "$CACHE"/root-"$ARCH"-*
    . /etc/os-release
    mmdebstrap --quiet --variant=extract --architectures="$ARCH" --include="$ROOTPKGS" \
        "$VERSION_CODENAME" "$ROOT" >&2
    touch "$ROOT/.done"
fi
# extract runs no maintainer scripts: the accounts base-passwd would make that the tests use
if [ "$ROOT" != / ] && [ ! -e "$ROOT/etc/passwd" ]; then
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' \
        >"$ROOT/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$ROOT/etc/group"
fi

# --- per-run control share: parameters, job script, exit status -----------
TREE=$(git rev-parse --show-toplevel 2>/dev/null || pwd)
[ "$TREE" != / ] || die "refusing to share / read-write; run from a work tree"
CTL=$(mktemp -d)
trap 'rm -rf "$CTL"' EXIT
printf 'TREE=%q\n' "$TREE" >"$CTL/params"
{
    printf 'cd -- %q || exit 125\n' "$PWD"
    printf 'exec /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root USER=root'
    while IFS= read -r v; do
        [[ $v =~ ^(CCREE_|OPENSSL_)|^CI$ ]] && printf ' %q' "$v=${!v}"
    done < <(compgen -e)
    printf ' %q' "$@"
    printf ' </dev/null\n'
} >"$CTL/job.sh"

if [ -n "$NOVM" ]; then
    flock -u 9
    # shellcheck disable=SC2016
    # (the tree after /tmp's tmpfs, which would hide a tree under /tmp)
    unshare --mount --pid --fork --kill-child sh -c 'r=$1 t=$2 c=$3 && mount --make-rprivate / &&
        mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" && mount -t tmpfs tmpfs "$r/tmp" &&
        mkdir -p "$r$t" "$r/run/ccree-vm" && mount --bind "$t" "$r$t" && mount --bind "$c" "$r/run/ccree-vm" &&
        exec chroot "$r" /bin/bash /run/ccree-vm/job.sh' sh "$ROOT" "$TREE" "$CTL"
    exit
fi

# --- kernel ---------------------------------------------------------------
# The private apt of -k: its index, fetched again after a day.
if [ -n "$SUITES" ] && [ -z "$(find "$A/stamp" -mmin -1440 2>/dev/null)" ]; then
    mkdir -p "$A/lists/partial" "$A/cache/archives/partial"
    printf '%s\n' "${SOURCES[@]}" >"$A/sources.list"
    if update "${APT[@]}"; then touch "$A/stamp"; fi
fi
# The newest linux-image-$ARCH of version KV, and the package it depends on.
# (apt needs "dpkg --add-architecture ARCH" and an update for another architecture)
kpkg() {
    local v
    v=$("${APTCACHE[@]}" madison "linux-image-$ARCH:$ARCH" 2>/dev/null |
        awk -F' *[|] *' -v k="$KV" 'index($2, k ".") == 1 || index($2, k "~") == 1 { print $2; exit }')
    [ -n "$v" ] || return 0
    "${APTCACHE[@]}" depends "linux-image-$ARCH:$ARCH=$v" 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*\).*$/\1/p' | head -n1 || true
}
KPKG=$(kpkg)
if [ -z "$KPKG" ] && [ -z "$SUITES" ]; then
    dpkg --print-foreign-architectures | grep -qx "$ARCH" || dpkg --add-architecture "$ARCH"
    update apt-get || true; KPKG=$(kpkg)
fi
[ -n "$KPKG" ] || die "cannot resolve the kernel package of linux-image-$ARCH $KV"
KVER=${KPKG#linux-image-}
KROOT=$CACHE/$KPKG
# 6.12 on: modules (and from 7.x, vmlinuz and config) under usr/lib/modules.
kfile() {
    local f
    for f in "$@"; do [ -e "$KROOT/root/$f" ] && { echo "$KROOT/root/$f"; return; }; done
    die "$KPKG has none of $*"
}
mdir() { kfile "usr/lib/modules/$KVER" "lib/modules/$KVER"; }
if [ ! -e "$KROOT/.done" ]; then
    echo "run.sh: fetching $KPKG" >&2
    rm -rf "$CACHE/linux-image-$KV".*-"$ARCH" "$CACHE/linux-image-$KV-$ARCH" && mkdir -p "$KROOT/root"
    # 7.x: the image package is empty, its files are in linux-{base,binary,modules}-$KVER.
    parts=$("${APTCACHE[@]}" depends "$KPKG:$ARCH" | sed -n "s/^ *Depends: \(linux-[a-z]*-$KVER\)\$/\1:$ARCH/p")
    # shellcheck disable=SC2086
    (cd "$KROOT" && "${APT[@]}" -q -o APT::Sandbox::User=root download "$KPKG:$ARCH" $parts >&2)
    for d in "$KROOT"/*.deb; do dpkg-deb -x "$d" "$KROOT/root"; done
    rm -f "$KROOT"/*.deb
    MDIR=$(mdir)
    depmod -b "${MDIR%/lib/modules/*}" "$KVER"    # the package's postinst would do this
    VMLINUZ=$(kfile "boot/vmlinuz-$KVER" "usr/lib/modules/$KVER/vmlinuz")
    if [ "$ARCH" = amd64 ] && grep -qx CONFIG_PVH=y "$(kfile "boot/config-$KVER" "usr/lib/modules/$KVER/config")"; then
        # Decompressing the bzImage takes ~3 s under TCG: extract the ELF vmlinux
        # once, which QEMU boots directly (PVH entry). Its payload (xz or zstd, then
        # 4 bytes of size) is where the boot header's setup_sects, payload_offset and
        # payload_length say.
        hdr() { od -An -tu"$2" -j$(($1)) -N"$2" "$VMLINUZ" | tr -d ' '; }
        off=$(( ($(hdr 0x1f1 1) + 1) * 512 + $(hdr 0x248 4) ))
        payload() { tail -c +$((off + 1)) "$VMLINUZ" | head -c $(($(hdr 0x24c 4) - 4)); }
        case $(payload | head -c4 | od -An -tx1 | tr -d ' ') in
            fd377a58) payload | xz -dc ;;
            28b52ffd) payload | zstd -dcq ;;
            *) die "$VMLINUZ: neither xz nor zstd" ;;
        esac >"$KROOT/vmlinux" || true
        [ "$(head -c4 "$KROOT/vmlinux")" = $'\x7fELF' ] || die "cannot extract vmlinux from $VMLINUZ"
    fi
    touch "$KROOT/.done"
fi
MDIR=$(mdir)
# arm64's vmlinuz is an uncompressed Image, which QEMU boots as it is; so is a bzImage
# without PVH.
KERNEL=$KROOT/vmlinux
[ -e "$KERNEL" ] || KERNEL=$(kfile "boot/vmlinuz-$KVER" "usr/lib/modules/$KVER/vmlinuz")

# --- simulated CryptoCell (-c): Debian's headers of the kernel, the module ----
if [ -n "$CCSIM" ]; then
    kv=$("${APTCACHE[@]}" show --no-all-versions "$KPKG:$ARCH" | sed -n 's/^Version: //p')
    if [ -z "$SUITES" ]; then   # this machine's compiler, the headers unpacked
        BROOT=
        HROOT=$CACHE/linux-headers-$KVER
        if [ ! -e "$HROOT/.done" ]; then
            echo "run.sh: fetching the headers of $KVER" >&2
            rm -rf "$CACHE"/linux-headers-*-"$ARCH" && mkdir -p "$HROOT/root"
            (cd "$HROOT" && apt-get -q -o APT::Sandbox::User=root download \
                "linux-headers-$KVER:$ARCH=$kv" "linux-headers-${KVER%-"$ARCH"}-common=$kv" \
                "linux-kbuild-$(echo "$KVER" | cut -d. -f1,2):$ARCH=$kv" >&2)
            for d in "$HROOT"/*.deb; do dpkg-deb -x "$d" "$HROOT/root"; done
            rm -f "$HROOT"/*.deb
            # The flavour's Makefile includes the common one by its installed path.
            sed -i "s|^include /usr/src/|include $HROOT/root/usr/src/|" \
                "$HROOT/root/usr/src/linux-headers-$KVER/Makefile"
            touch "$HROOT/.done"
        fi
        KDIR=$HROOT/root/usr/src/linux-headers-$KVER
    else
        # The suite's kbuild tools need its libc, the kernel its compiler: a root of
        # the suite with the headers, which depend on that compiler; unpacked only
        # (no maintainer scripts: awk is mawk's alternative).
        BROOT=$CACHE/build-$KVER
        if [ ! -e "$BROOT/.done" ]; then
            echo "run.sh: making a root to build for $KVER" >&2
            rm -rf "$CACHE/build-$KV".*-"$ARCH" "$CACHE/build-$KV-$ARCH"
            mmdebstrap --quiet --variant=extract --aptopt='Acquire::Check-Valid-Until "false"' \
                --aptopt='Acquire::Languages "none"' \
                --include="base-files,dash,coreutils,sed,grep,mawk,findutils,diffutils,make,libc6-dev,linux-headers-$KVER=$kv" \
                "${SUITES%% *}" "$BROOT" "${SOURCES[@]}" >&2
            ln -sf mawk "$BROOT/usr/bin/awk"
            mkdir -p "$BROOT/proc" "$BROOT/mnt"
            touch "$BROOT/.done"
        fi
        KDIR=/usr/src/linux-headers-$KVER
    fi
    CSRC=$(dirname "$SELF")/../ccsim
    CBUILD=$CACHE/ccsim-$KVER-$(cat "$CSRC"/{ccsim.c,Kbuild,Makefile} | sha256sum | cut -c1-12)
    if [ ! -e "$CBUILD/ccsim.ko" ]; then
        echo "run.sh: building ccsim for $KVER" >&2
        rm -rf "$CBUILD" && mkdir -p "$CBUILD"
        cp "$CSRC"/{ccsim.c,Kbuild,Makefile} "$CBUILD"/
        # (DEB_*_ARCH: the headers' .kernelvariables would ask dpkg, which the root lacks)
        MAKECMD=(make -s DEB_BUILD_ARCH=amd64 DEB_HOST_ARCH=amd64 KDIR="$KDIR")
        if [ -z "$BROOT" ]; then
            "${MAKECMD[@]}" -C "$CBUILD" >&2
        else    # objtool reads /proc
            unshare --mount --fork sh -c 'r=$1 b=$2 && shift 2 && mount -t proc proc "$r/proc" &&
                mount --bind "$b" "$r/mnt" && exec chroot "$r" "$@" -C /mnt' sh "$BROOT" "$CBUILD" "${MAKECMD[@]}" >&2
        fi || die "cannot build test/ccsim"
    fi
fi

# --- module load order, resolved on the host ------------------------------
is_excluded() { local e; for e in "${EXCLUDE[@]}"; do [ "$e" = "$1" ] && return 0; done; return 1; }
modname() { local n=${1##*/}; n=${n%%.ko*}; echo "${n//-/_}"; }
LOAD=()
for m in "${MODULES[@]}" "${CPUMODULES[@]}"; do
    is_excluded "$m" && continue
    if ! deps=$(modprobe -d "${MDIR%/lib/modules/*}" -S "$KVER" --show-depends "$m" 2>/dev/null); then
        [[ " ${CPUMODULES[*]} " == *" $m "* ]] || die "unknown module $m"
        echo "run.sh: $KVER has no module $m" >&2; continue
    fi
    skip=
    while read -r kind path _; do
        n=$(modname "$path")
        is_excluded "$n" && skip=$n
    done <<<"$deps"
    if [ -n "$skip" ]; then echo "run.sh: not loading $m (needs excluded $skip)" >&2; continue; fi
    while read -r kind path _; do
        case $kind in
            # ("builtin NAME" lines: =y in the kernel config, nothing to load)
            insmod) [[ " ${LOAD[*]} " == *" $path "* ]] || LOAD+=("$path") ;;
        esac
    done <<<"$deps"
done
for e in "${EXCLUDE[@]}"; do
    if grep -q "/$e.ko" "$MDIR/modules.builtin"; then
        echo "run.sh: warning: $e is built into the kernel, cannot exclude it" >&2
    fi
done

# --- initramfs (rebuilt when this script or the module set changes) -------
SELFKEY=$(sha256sum "$SELF" | cut -c1-12)
SETKEY=$(echo "$KVER $ROOT ${LOAD[*]} | ${EXCLUDE[*]}" | sha256sum | cut -c1-12)
INITRD=$CACHE/initramfs-$SELFKEY-$SETKEY.cpio.gz
if [ ! -e "$INITRD" ]; then
    find "$CACHE" -maxdepth 1 -name 'initramfs-*' ! -name "initramfs-$SELFKEY-*" -delete
    stage=$(mktemp -d)
    mkdir -p "$stage"/{bin,dev,proc,sys,ctl,host,upper,newroot,lib/modules,etc}
    mknod "$stage/dev/console" c 5 1
    cp "$ROOT/bin/busybox" "$stage/bin/busybox"
    for path in "${LOAD[@]}"; do
        n=$(modname "$path")
        case $path in   # busybox insmod cannot decompress
            *.xz) xz -dc "$path" ;; *.zst) zstd -dc "$path" ;; *.gz) gzip -dc "$path" ;; *) cat "$path" ;;
        esac >"$stage/lib/modules/$n.ko"
        echo "$n" >>"$stage/etc/load"
    done
    touch "$stage/etc/load"
    printf '%s\n' "${EXCLUDE[@]}" >"$stage/etc/exclude"
    # The kernel runs this for on-demand module loads, from the initramfs root.
    cat >"$stage/bin/modprobe" <<'EOF'
#!/bin/sh
exec /bin/chroot /newroot /sbin/modprobe "$@"
EOF
    cat >"$stage/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
stty -F /dev/console -onlcr     # no CRLF in the command's output
hostname ccree-vm
off() { sync; echo 0 >/proc/sys/kernel/printk; poweroff -f; }   # printk 0: no "Power down"
fail() { echo "ccree-vm: $*" >&2; off; }
while read -r m; do insmod "/lib/modules/$m.ko" || echo "ccree-vm: insmod $m failed" >&2; done </etc/load
p9=trans=virtio,version=9p2000.L,msize=512000
mount -t 9p -o "$p9,cache=mmap" ctl /ctl || fail "cannot mount the control share"
. /ctl/params                   # TREE (host path)
mount -t 9p -o "$p9,ro,cache=loose" hostroot /host || fail "cannot mount the host root"
mount -t tmpfs tmpfs /upper && mkdir /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/host,upperdir=/upper/u,workdir=/upper/w /newroot ||
    fail "cannot mount the overlay root"
R=/newroot
mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts devpts $R/dev/pts
mount -t tmpfs tmpfs $R/dev/shm
mount -t tmpfs tmpfs $R/tmp
mount -t tmpfs tmpfs $R/run
mkdir -p "$R$TREE" $R/run/ccree-vm "$R/lib/modules/$(uname -r)"
mount -t 9p -o "$p9,cache=mmap" tree "$R$TREE" || fail "cannot mount the work tree $TREE"
mount --bind /ctl $R/run/ccree-vm
mount -t 9p -o "$p9,ro,cache=loose" kmods "$R/lib/modules/$(uname -r)" || fail "cannot mount the modules"
# Excluded modules must not come back through on-demand loading either.
mkdir -p $R/etc/modprobe.d
while read -r m; do [ -n "$m" ] && echo "install $m /bin/false"; done </etc/exclude >$R/etc/modprobe.d/ccree-vm.conf
echo /bin/modprobe >/proc/sys/kernel/modprobe
if [ -e /ctl/ccsim.ko ]; then   # -c: after the root, for the software it loads
    mount -t debugfs debugfs $R/sys/kernel/debug
    insmod /ctl/ccsim.ko $(cat /ctl/ccsim.params) || fail "cannot load ccsim"
fi
# 7.3 self-tests an algorithm after registering it, in the background: the command starts
# once no test runs (no larval left), so that what it binds is settled.
i=0
while grep -q '^type *: larval' /proc/crypto && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
! grep -q '^type *: larval' /proc/crypto || echo "ccree-vm: kernel self-tests still running after 60 s" >&2
[ -e /proc/sys/crypto/af_alg_restrict ] && r=present || r=absent
echo "ccree-vm: kernel $(uname -r), $(grep -c ^name /proc/crypto) /proc/crypto entries, af_alg_restrict $r"
: >/ctl/started
chroot $R /bin/bash /run/ccree-vm/job.sh
echo $? >/ctl/status
off
EOF
    chmod +x "$stage/init" "$stage/bin/modprobe"
    (cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) >"$INITRD.tmp"
    mv "$INITRD.tmp" "$INITRD"
    rm -rf "$stage"
fi
flock -u 9

# --- boot -------------------------------------------------------------------
if [ -n "$CCSIM" ]; then
    cp "$CBUILD/ccsim.ko" "$CTL/"
    echo "rev=${CCSIM//,/ }" >"$CTL/ccsim.params"
fi
# A kernel that fails before the command starts (7.2.13 under TCG: now and then an Oops at
# boot, int3 in enqueue_task_fair) is booted once more; a command that stops the VM is not.
for boot in 1 2; do
    rm -f "$CTL/status" "$CTL/started"
    rc=0
    timeout "$TIMEOUT" "${QEMU[@]}" -accel tcg -m 2048 -smp 2 \
        -nographic -nodefaults -serial stdio -no-reboot \
        -kernel "$KERNEL" -initrd "$INITRD" \
        -append "console=$CONSOLE quiet loglevel=3 panic=-1 $KARGS" \
        -virtfs local,path="$ROOT",mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
        -virtfs local,path="$MDIR",mount_tag=kmods,security_model=none,readonly=on \
        -virtfs local,path="$TREE",mount_tag=tree,security_model=none \
        -virtfs local,path="$CTL",mount_tag=ctl,security_model=none \
        </dev/null || rc=$?
    [ $rc -ne 124 ] || { echo "run.sh: VM timed out after ${TIMEOUT}s" >&2; exit 124; }
    [ $rc -eq 0 ] || die "qemu failed (status $rc)"
    [ ! -s "$CTL/status" ] || exit "$(cat "$CTL/status")"
    [ $boot = 1 ] && [ ! -e "$CTL/started" ] || break
    echo "run.sh: the kernel failed before the command started; booting once more" >&2
done
die "the VM did not report the command's exit status ($([ -e "$CTL/started" ] &&
    echo "the command stopped the VM" || echo "boot failure"))"
