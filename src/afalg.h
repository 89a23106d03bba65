/* AF_ALG sockets and discovery: the kernel-facing side of ccree. Errors are -errno. */
#ifndef CCREE_AFALG_H
#define CCREE_AFALG_H

#include <stddef.h>
#include <sys/uio.h>

#include "algs.h"

/* Largest request (an AEAD one whole): well under the socket's send buffer (net.core.wmem_default). */
#define AFALG_MAX_REQUEST 65536

const char *afalg_type(enum ccree_kind kind);
int afalg_available(void);
int afalg_bind(enum ccree_kind kind, const char *name);
/*
 * A keyed op socket of the bound socket tfm, which it closes; with whole, one that takes
 * AFALG_MAX_REQUEST in one answer, or -ENOBUFS.
 */
int afalg_open(int tfm, enum ccree_kind kind, const unsigned char *key, size_t keylen,
               size_t authsize, int whole);
int afalg_clone(int op);
void afalg_close(int *fd);
/*
 * A cipher or AEAD request: sendmsg of the op, IV, AAD length and in, then recvmsg into out
 * until outlen bytes came back. The kernel answers short when the socket's receive budget runs
 * out, having written that much and keeping the rest queued; whole units of it (the mode's
 * block, 0 for none) are progress and it goes on.
 */
struct afalg_req {
    int enc;
    const unsigned char *iv;
    size_t ivlen, assoclen;
    const struct iovec *in;
    int nin;
    size_t inlen;
    const struct iovec *out;
    int nout;
    size_t outlen, unit;
    size_t done; /* set: the output that came back whole and in order */
    int sent;    /* set: the kernel had the request, so out past done may be written too */
};
/*
 * 0 when all outlen bytes came back; else -errno (-EBADMSG: an AEAD tag mismatch). A request
 * with nothing to read back is refused unsent: the kernel would return without running it.
 */
int afalg_cipher(int op, struct afalg_req *r);
/* ccm(aes)'s IV from a nonce of len bytes (7 to 13): the counter block's flags (L - 1), then
 * the nonce (RFC 3610). Its length, 16. */
size_t afalg_ccm_iv(unsigned char kiv[16], const unsigned char *nonce, size_t len);
int afalg_hash_send(int op, const struct iovec *in, int nin, int more);
int afalg_hash_read(int op, unsigned char *md, size_t mdlen);

/* Which kernel drivers count as hardware, and what discovery found for one algorithm. */
struct ccree_drivers {
    int any;
    char list[128]; /* comma-separated suffixes: "ccree" accepts "cbc-aes-ccree" */
};

#define CCREE_REASON_MAX 400

struct ccree_path {
    _Atomic int offload; /* set at load; cleared after, when the kernel refuses (ccree_refused) */
    char driver[128];    /* the name sockets bind: a driver, or the kernel name (see README) */
    char reason[CCREE_REASON_MAX]; /* why not offloaded */
};

int ccree_drivers_parse(struct ccree_drivers *d, const char *value);
void ccree_discover(const struct ccree_drivers *d, struct ccree_path *paths);

/* Who a process is to AF_ALG's allowlist: taken at discovery, compared after. */
struct ccree_ident {
    long pid, euid, egid;
    unsigned long long caps; /* effective capabilities */
};

void ccree_ident(struct ccree_ident *id);
/*
 * A bind of name refused with ENOENT after load: 1 with why when this process is not the
 * one discovery ran in (a forked child), or its credentials changed since (a drop to an
 * unprivileged user); 0 when it is that process, unchanged.
 */
int ccree_refused(const struct ccree_ident *then, const char *name, char *why, size_t len);
/*
 * The kernel TLS path, now: tab-separated lines "module STATE", then per kTLS cipher "cipher
 * NAME KERNEL-NAME DRIVER PRIORITY hardware|software|- WHY" (the implementation the kernel would
 * take), then "counter NAME VALUE" from /proc/net/tls_stat. malloc'ed; NULL without memory.
 */
char *ccree_ktls_report(const struct ccree_drivers *d);

#endif
