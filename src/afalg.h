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
int afalg_open(enum ccree_kind kind, const char *driver, const unsigned char *key, size_t keylen,
               size_t authsize);
int afalg_clone(int op);
void afalg_close(int *fd);
int afalg_cipher(int op, int enc, const unsigned char *iv, size_t ivlen, size_t assoclen,
                 const struct iovec *in, int nin, size_t inlen, const struct iovec *out, int nout,
                 size_t outlen);
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

#endif
