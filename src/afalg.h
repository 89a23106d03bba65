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
/* A keyed op socket; with whole, one that takes AFALG_MAX_REQUEST in one answer, or -ENOBUFS. */
int afalg_open(enum ccree_kind kind, const char *driver, const unsigned char *key, size_t keylen,
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
int afalg_hash_send(int op, const struct iovec *in, int nin, int more);
int afalg_hash_read(int op, unsigned char *md, size_t mdlen);

/* Which kernel drivers count as hardware, and what discovery found for one algorithm. */
struct ccree_drivers {
    int any;
    char list[128]; /* comma-separated suffixes: "ccree" accepts "cbc-aes-ccree" */
};

struct ccree_path {
    int offload;
    char driver[128];  /* the driver bound, or the best one seen */
    char reason[400];  /* why not offloaded */
};

int ccree_drivers_parse(struct ccree_drivers *d, const char *value);
void ccree_discover(const struct ccree_drivers *d, struct ccree_path *paths);
/*
 * The kernel TLS path, now: tab-separated lines "module STATE", then per kTLS cipher "cipher
 * NAME KERNEL-NAME DRIVER PRIORITY hardware|software|- WHY" (the implementation the kernel would
 * take), then "counter NAME VALUE" from /proc/net/tls_stat. malloc'ed; NULL without memory.
 */
char *ccree_ktls_report(const struct ccree_drivers *d);

#endif
