/*
 * Block ciphers, inside: the context (cipher.c: OpenSSL's calls, keys and params), its
 * requests on their path (cipher_req.c: the kernel or the default provider, and the input
 * checks), and what each mode does with them (modes.c: ECB/CBC, CTR, XTS and CBC-CTS).
 */
#ifndef CCREE_CIPHER_H
#define CCREE_CIPHER_H

#include <openssl/core_names.h>

#include "engine.h"

#define MAXBLK 16

enum { CS1, CS2, CS3 }; /* cts_mode: kernel's cts(cbc(aes)) is CS3 */
extern const char *const cts_names[]; /* OpenSSL's names of CS1, CS2 and CS3 */

/*
 * What the software context holds of the message: nothing current; its IV (ccree holds the
 * partial block and feeds it whole blocks, padding off); or the stream, its IV and partial
 * block (buf/bufsz mirror it; CTR's num is read back) under ccree's padding, so that an update
 * in software is one call of the default provider's. A context holding the stream is keyed.
 */
enum sw_holds { SW_STALE, SW_IV, SW_STREAM };

struct cipher_ctx {
    struct ccree_engine e;
    const struct mode *mode; /* what its updates, finals and EVP_Cipher calls do */
    size_t bs; /* the cipher's block: 8 or 16 bytes */
    int enc, pad, iv_set;
    int cts_mode, updated; /* CBC-CTS: one update per init */
    unsigned char oiv[MAXBLK], iv[MAXBLK]; /* iv: next IV or counter, unless sw_holds it */
    unsigned char buf[MAXBLK];             /* ECB/CBC: partial or held-back block */
    size_t bufsz;
    unsigned char ks[MAXBLK]; /* CTR: keystream of the current block, used up to num */
    unsigned int num;
    unsigned int tls_version;  /* TLS record mode (ECB and CBC) when not 0 */
    size_t tls_macsize, tls_maclen;
    unsigned char tls_mac[EVP_MAX_MD_SIZE]; /* the MAC of the last record decrypted */
    enum sw_holds sw_holds;
};

/*
 * How a request of whole blocks moves the IV: not at all, to CBC's last ciphertext block, or
 * CTR's counter on. (XTS and CBC-CTS take each update as one message, and set their own.)
 */
enum chain { CHAIN_NONE, CHAIN_CBC, CHAIN_CTR };

/*
 * What a mode does with an update (out gets *outl bytes), a final, and EVP_Cipher (whole
 * blocks, no buffering or padding; outsize checked), and its rules, as the default
 * provider's: chosen by the row at newctx.
 */
struct mode {
    int (*update)(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                  const unsigned char *in, size_t inl);
    int (*final)(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize);
    int (*whole)(struct cipher_ctx *c, unsigned char *out, size_t outsize, const unsigned char *in,
                 size_t inl);
    enum chain chain;
    unsigned int restarts_iv : 1; /* an init without an IV restarts from the IV last given */
    unsigned int needs_iv : 1;    /* no update before an IV */
    unsigned int two_keys : 1;    /* encrypts only with two different key halves */
    unsigned int cts : 1;         /* CS1, CS2 or CS3; one update per init */
    size_t unit_max;              /* the longest update of a mode that takes each as a message */
};
extern const struct mode cipher_ecb_mode, cipher_cbc_mode, cipher_ctr_mode, cipher_xts_mode,
    cipher_cts_mode;

static inline int is_cts(const struct cipher_ctx *c)
{
    return c->mode->cts;
}

/* The IV the software context holds, read into iv; and CTR's num where it holds the stream. */
int cipher_read_iv(struct cipher_ctx *c);
/*
 * The software context, keeping what it holds (not SW_STALE), starts a message under iv: an
 * init without a key in the same direction. 0 with an error, and it holds nothing.
 */
int cipher_sw_restart(struct cipher_ctx *c, const unsigned char *iv);
/* The software context gives up what it holds of the message: ccree holds all of it again. */
int cipher_take_stream(struct cipher_ctx *c);
/*
 * The software context takes the stream under ccree's padding, and the partial block ccree
 * holds (out gets *k bytes of it, a held-back block the padding lets out); 0 with an error.
 */
int cipher_sw_take(struct cipher_ctx *c, unsigned char *out, size_t *k);
/* A setting the software context's stream takes too (padding, num); ccree's error if refused. */
int cipher_sw_forward(struct cipher_ctx *c, const OSSL_PARAM *p);
/* Padding on or off, in the software context's stream too. */
int cipher_set_pad(struct cipher_ctx *c, int pad);
/* The default provider failed a request: ccree's error, and 0. */
int cipher_sw_failed(struct cipher_ctx *c);
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
/* pre || in (whole blocks) to out, and for CTR one keystream block to ks: on the path ch. */
int cipher_run(struct cipher_ctx *c, struct ccree_choice *ch, unsigned char *out,
               const unsigned char *pre, size_t prelen, const unsigned char *in, size_t inlen,
               unsigned char *ks);
/* The same on the path the policy chooses. */
int cipher_process(struct cipher_ctx *c, unsigned char *out, const unsigned char *pre,
                   size_t prelen, const unsigned char *in, size_t inlen, unsigned char *ks);
/* The input checks (prov.h) and a key set, each raising ccree's error. */
int cipher_usable(struct cipher_ctx *c, const unsigned char *in, size_t inl);

/* All of them for an update, at the cost of a few compares when they pass. */
static inline int cipher_checks(struct cipher_ctx *c, unsigned char *out, size_t ahead,
                                size_t need, size_t outsize, const unsigned char *in, size_t inl)
{
    return (c->e.key != NULL && ccree_buffers_fine(out, ahead, need, outsize, in, inl))
           || (cipher_usable(c, in, inl)
               && ccree_check_apart(c->e.prov, c->e.alg->kname, out, ahead, in, inl)
               && ccree_check_room(c->e.prov, c->e.alg->kname, out, need, outsize));
}

#endif
