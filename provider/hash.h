/*
 * Digests and MACs, inside: on the request engine (engine.h), one way a message is buffered,
 * sent and finished (hash.c, with the digests), and the MACs' keys and settings (mac.c), which
 * keep the default provider's MAC beside the message.
 */
#ifndef CCREE_HASH_H
#define CCREE_HASH_H

#include "engine.h"

#define NONE CCREE_NALGS /* a MAC on a digest or cipher the table lacks: software only */

enum { H_START, H_KERNEL, H_SOFT, H_LOST }; /* H_LOST: a failure lost part of the message */

struct hash_ctx {
    struct ccree_engine e; /* its row: the message's; a MAC's: of the digest or cipher in effect */
    size_t family; /* a MAC: the first row of its name (HMAC, CMAC); NONE for a digest */
    int state, finalised;
    unsigned char *buf;
    size_t buflen, size, cap; /* the buffer grows to cap as a message needs it */
    size_t used;              /* the most of it this message used: wiped at its end */
    void *soft_md;         /* a digest in software: the software provider's context */
    EVP_MAC_CTX *soft_mac; /* a MAC in software, keyed and set up as this context */
    size_t next_row;       /* a MAC: the row of the digest or cipher named, in effect with a key */
    unsigned int sw_only;  /* a MAC's settings the kernel lacks: a bit per setting */
};

typedef void (*fn)(void);

int hash_fail(const struct hash_ctx *h, int reason, const char *what);
void hash_restart(struct hash_ctx *h);
struct hash_ctx *hash_newctx(struct ccree_prov *p, size_t row, size_t family);
int hash_update(void *vctx, const unsigned char *in, size_t inl);
int hash_final(void *vctx, unsigned char *out, size_t *outl, size_t outsz);
void hash_freectx(void *vctx);
void *hash_dupctx(void *vctx);

#endif
