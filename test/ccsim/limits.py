#!/usr/bin/python3
"""ccree's limits through AF_ALG, bound to the *-ccree drivers (run as root in a
VM booted with test/vm/run.sh -c 712). Prints one line per check; exits 1 if
any fails."""
import errno
import socket
import sys

KEY16, IV16 = bytes(range(16)), bytes(16)
SO_SNDBUFFORCE, SO_RCVBUFFORCE = 32, 33     # <asm-generic/socket.h>; not in Python's socket
failed = 0


def check(what, fn, want):
    """want: None (success) or an errno."""
    global failed
    try:
        fn()
        got = None
    except OSError as e:
        got = e.errno
    ok = got == want
    failed += not ok
    name = lambda e: "ok" if e is None else errno.errorcode[e]
    print(f"{'PASS' if ok else 'FAIL'} {what}: {name(got)} (expected {name(want)})")


def tfm(kind, driver, key, authsize=None):
    t = socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0)
    t.bind((kind, driver))
    t.setsockopt(socket.SOL_ALG, socket.ALG_SET_KEY, key)
    if authsize is not None:
        t.setsockopt(socket.SOL_ALG, socket.ALG_SET_AEAD_AUTHSIZE, None, authsize)
    return t


def encrypt(driver, n, key=KEY16, pages=False):
    """One request of n bytes; pages: sent a page per sendmsg, so one
    scatterlist entry each, with buffers big enough for it all."""
    op, _ = tfm("skcipher", driver, key).accept()
    with op:
        if pages:
            op.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 4 << 20)
            op.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 4 << 20)
            op.sendmsg_afalg(op=socket.ALG_OP_ENCRYPT, iv=IV16, flags=socket.MSG_MORE)
            for i in range(n // 4096):
                op.sendmsg([bytes(4096)], [], socket.MSG_MORE if i < n // 4096 - 1 else 0)
        else:
            op.sendmsg_afalg([bytes(n)], op=socket.ALG_OP_ENCRYPT, iv=IV16)
        if len(op.recv(n)) != n:
            raise OSError(errno.EIO, "short")


def authsize(driver, size):
    tfm("aead", driver, KEY16, size).close()


check("xts-aes-ccree, 15 bytes", lambda: encrypt("xts-aes-ccree", 15, bytes(range(32))), errno.EINVAL)
check("xts-aes-ccree, 17 bytes", lambda: encrypt("xts-aes-ccree", 17, bytes(range(32))), None)
check("cts-cbc-aes-ccree, 15 bytes", lambda: encrypt("cts-cbc-aes-ccree", 15), errno.EINVAL)
check("cts-cbc-aes-ccree, 17 bytes", lambda: encrypt("cts-cbc-aes-ccree", 17), None)
check("cbc-aes-ccree, 17 bytes", lambda: encrypt("cbc-aes-ccree", 17), errno.EINVAL)
check("ecb-des-ccree, 12 bytes", lambda: encrypt("ecb-des-ccree", 12, bytes(range(1, 9))), errno.EINVAL)
check("ctr-aes-ccree, 17 bytes", lambda: encrypt("ctr-aes-ccree", 17), None)
for size in range(17):
    want = None if size in (4, 8) or 12 <= size <= 16 else errno.EINVAL
    check(f"gcm-aes-ccree, tag of {size}", lambda: authsize("gcm-aes-ccree", size), want)
check("cbc-aes-ccree, 64 entries", lambda: encrypt("cbc-aes-ccree", 64 * 4096, pages=True), None)
check("cbc-aes-ccree, 129 entries", lambda: encrypt("cbc-aes-ccree", 129 * 4096, pages=True), errno.ENOMEM)
sys.exit(1 if failed else 0)
