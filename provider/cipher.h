/*
 * Block ciphers, inside: the context (cipher.c: OpenSSL's calls, keys and params), its
 * requests on their path (cipher_req.c: the kernel or the default provider, and the input
 * checks), and what each mode does with them (modes.c: ECB/CBC, CTR, XTS and CBC-CTS).
 */
#ifndef CCREE_CIPHER_H
#define CCREE_CIPHER_H

#include <openssl/core_names.h>

#include "prov.h"

#define MAXBLK 16
#define XTS_UNIT_MAX (1 << 24) /* the default provider's data unit limit: 2^20 blocks */

enum { CS1, CS2, CS3 }; /* cts_mode: kernel's cts(cbc(aes)) is CS3 */
extern const char *const cts_names[]; /* OpenSSL's names of CS1, CS2 and CS3 */

struct cipher_ctx {
    struct ccree_prov *prov;
    size_t idx;
    const struct ccree_alg *alg;
    const struct mode *mode; /* what its updates, finals and EVP_Cipher calls do */
    size_t bs; /* the cipher's block: 8 or 16 bytes */
    int enc, pad, keyed, iv_set;
    int cts_mode, updated; /* CBC-CTS: one update per init */
    unsigned char key[64];
    unsigned char oiv[MAXBLK], iv[MAXBLK]; /* iv: next IV or counter, unless sw_iv */
    unsigned char buf[MAXBLK];             /* ECB/CBC: partial or held-back block */
    size_t bufsz;
    unsigned char ks[MAXBLK]; /* CTR: keystream of the current block, used up to num */
    unsigned int num;
    unsigned int tls_version;  /* TLS record mode (ECB and CBC) when not 0 */
    size_t tls_macsize, tls_maclen;
    unsigned char tls_mac[EVP_MAX_MD_SIZE]; /* the MAC of the last record decrypted */
    struct ccree_sock op;
    int kernel_off; /* the kernel failed this key: software until the next key */
    void *sw; /* the software provider's context, called through its functions (soft) */
    int sw_keyed, sw_enc, sw_iv; /* sw_iv: the software context holds the current IV */
};

static inline const struct ccree_sw_cipher *soft(const struct cipher_ctx *c)
{
    return &c->prov->sw_cipher[c->idx];
}

/*
 * What a mode does with an update (out gets *outl bytes), a final, and EVP_Cipher (whole
 * blocks, no buffering or padding; outsize checked): chosen by the row at newctx.
 */
struct mode {
    int (*update)(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                  const unsigned char *in, size_t inl);
    int (*final)(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize);
    int (*whole)(struct cipher_ctx *c, unsigned char *out, size_t outsize, const unsigned char *in,
                 size_t inl);
};
extern const struct mode cipher_block_mode, cipher_ctr_mode, cipher_unit_mode;

static inline int is_cts(const struct cipher_ctx *c)
{
    return (c->alg->flags & EVP_CIPH_FLAG_CTS) != 0;
}

/* The software context gives up the IV it holds. */
int cipher_sync_iv(struct cipher_ctx *c);
/* The path of a request of len bytes: 1 the kernel, 0 software. */
int cipher_choose(struct cipher_ctx *c, size_t len, struct ccree_choice *ch);
/*
 * A request the policy sends to the kernel, run by run(c, arg, &clobbered): 1 done, 0 it
 * failed and software takes over, -1 it failed and software may not.
 */
int cipher_in_kernel(struct cipher_ctx *c, struct ccree_choice *ch,
                     int (*run)(struct cipher_ctx *, void *, int *), void *arg);
/* pre || in to out, and ks when given, in software; the kernel did none of it. */
int cipher_sw_process(struct cipher_ctx *c, struct ccree_choice *ch, unsigned char *out,
                      const unsigned char *pre, size_t prelen, const unsigned char *in,
                      size_t inlen, unsigned char *ks);
/* pre || in (whole blocks) to out, and for CTR one keystream block to ks: on its path. */
int cipher_process(struct cipher_ctx *c, unsigned char *out, const unsigned char *pre,
                   size_t prelen, const unsigned char *in, size_t inlen, unsigned char *ks);
/* The input checks: a key and a buffer a caller can mean; output not ahead of unread input;
 * room for need bytes. Each raises ccree's error. */
int cipher_usable(struct cipher_ctx *c, const unsigned char *in, size_t inl);
int cipher_apart(struct cipher_ctx *c, const unsigned char *out, size_t ahead,
                 const unsigned char *in, size_t inl);
int cipher_room(struct cipher_ctx *c, const unsigned char *out, size_t need, size_t outsize);

#endif
