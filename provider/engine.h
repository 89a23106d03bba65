/*
 * The request engine under ciphers, AEADs, digests and MACs: what each of their contexts starts
 * with (the row, the key, the kernel socket keyed with it, the default provider's cipher context
 * a cipher's request in software runs on), and the steps every request shares (engine.c).
 */
#ifndef CCREE_ENGINE_H
#define CCREE_ENGINE_H

#include "prov.h"

struct ccree_engine {
    struct ccree_prov *prov;
    size_t idx;                  /* the row; a MAC's: of what it runs on, or CCREE_NALGS */
    const struct ccree_alg *alg; /* ... its row, or NULL */
    unsigned char *key;          /* NULL: none yet; a MAC's may be empty */
    size_t keylen;
    struct ccree_sock op;
    size_t op_authsize; /* the tag length the socket's transform has (AEAD) */
    int kernel_off;     /* a cipher's: the kernel failed this key, software until the next */
    size_t sw_below;    /* shorter requests go to software, unmeasured */
    const struct ccree_sw_cipher *soft; /* a cipher: the software provider's functions, */
    void *sw;                           /* called on its context, */
    int sw_keyed, sw_enc;               /* keyed with this key, for this direction */
};

void ccree_engine_init(struct ccree_engine *e, struct ccree_prov *p, size_t idx);
/* The row requests run on from now (a MAC's follows what it runs on): the socket closes. */
void ccree_engine_row(struct ccree_engine *e, size_t idx);
/* d, a copy of s, gets its own key, software context and no socket yet: 0 with no memory. */
int ccree_engine_dup(struct ccree_engine *d, const struct ccree_engine *s);
void ccree_engine_free(struct ccree_engine *e);
/*
 * The key, a cipher's length checked (a MAC's the default provider's MAC has checked): a new
 * one closes the socket and the software context's key. 0 with an error raised.
 */
int ccree_engine_key(struct ccree_engine *e, const unsigned char *key, size_t keylen);
/* No key any more, and no socket. */
void ccree_engine_drop_key(struct ccree_engine *e);
/* The software context of a cipher, made when first needed: 0 with no memory. */
int ccree_engine_sw(struct ccree_engine *e);
/* The default provider's init of that context for direction enc. */
static inline OSSL_FUNC_cipher_encrypt_init_fn *ccree_engine_sw_init(const struct ccree_engine *e,
                                                                     int enc)
{
    return enc ? e->soft->einit : e->soft->dinit;
}
/* The socket, keyed, for tags of authsize bytes (0: not an AEAD): 1, or -errno. */
int ccree_engine_socket(struct ccree_engine *e, size_t authsize);
/*
 * A cipher's or AEAD's request in the kernel failed with err; clobbered as for
 * ccree_kernel_failed. 1: software takes it over, and this key's requests, with the socket
 * closed; 0 with the error raised.
 */
int ccree_engine_failed(struct ccree_engine *e, int err, int clobbered);

/*
 * Whether a request of len bytes goes to software with nothing to measure (ccree_sw_below), as
 * ccree_engine_choose would send it: a hot path's test, one compare. (It may say no where the
 * algorithm has since lost its kernel path: ccree_engine_choose then says software.)
 */
static inline int ccree_engine_plain_software(const struct ccree_engine *e, size_t len)
{
    return len < e->sw_below;
}

/* The path of a request of len bytes: 1 the kernel, 0 software. */
static inline int ccree_engine_choose(const struct ccree_engine *e, size_t len,
                                      struct ccree_choice *ch)
{
    if (!e->kernel_off)
        return ccree_choose(e->prov, e->idx, len, ch);
    *ch = (struct ccree_choice){ .kernel = 0 };
    return 0;
}

#endif
