/*
 * GCM and CCM, inside: the context (aead.c: OpenSSL's calls and params), a message on its path
 * (aead_req.c: the kernel or the default provider, and what is kept for a replay), and what
 * each mode does with a call (aead_modes.c: GCM, CCM and TLS 1.2 records).
 */
#ifndef CCREE_AEAD_H
#define CCREE_AEAD_H

#include "engine.h"

#define TAG_MAX 16
#define GCM_IV_MAX 128 /* as the default provider */
#define TLS_AAD 13     /* EVP_AEAD_TLS1_AAD_LEN */
#define TLS_FIXED 4    /* the implicit part of a TLS 1.2 nonce */
#define TLS_EXPLICIT 8 /* the part carried in the record */

enum { IV_NONE, IV_SET, IV_USED };
/* Where the data of the current message went. */
enum { MSG_AAD, MSG_ONESHOT, MSG_STREAM, MSG_FAILED };

struct aead_ctx {
    struct ccree_engine e;
    const struct aead_mode *mode; /* what a call does */
    int enc;
    unsigned char iv[GCM_IV_MAX];
    size_t ivlen;
    int ivstate;
    unsigned char tag[TAG_MAX];
    size_t taglen; /* GCM: 0 until a tag is set or computed; CCM: M */
    int tagset;    /* CCM: the tag is given (decrypt) or computed (encrypt); GCM: given for
                    * this message (the default provider keeps an old one for final) */
    size_t msglen; /* CCM: the data length announced before the AAD */
    int data_done; /* CCM: this message's data came */
    size_t kivlen, ktaglen; /* CCM: the IV and tag lengths when the key was set */
    int msglen_set;
    unsigned char tlsaad[TLS_AAD];
    int tls;
    int ivgen; /* GCM: a TLS fixed IV is set, and the context makes the explicit part */
    size_t tlspad;
    int msg;
    size_t naad;         /* non-empty AAD updates of this message */
    unsigned char *buf;  /* this message so far: AAD || one-shot data (GCM) */
    size_t cap, aadlen, datalen;
    unsigned char *aadout; /* where the kernel writes the AAD back, so that ours stays intact */
    size_t aadcap;
    int gen_next; /* tlsivgen gave out the explicit nonce: count it up before the next */
    unsigned char ivout[GCM_IV_MAX]; /* the IV as the default provider reports it */
};

/* What a mode does with one call (keyed), of a message or a TLS 1.2 record (final: a final, or
 * EVP_Cipher without input): chosen by the row at newctx. */
typedef int aead_call(struct aead_ctx *c, unsigned char *out, size_t *outl,
                      const unsigned char *in, size_t len, int final);
/*
 * The default provider's context at the start of a message (CCM: the tag to check and the
 * length, if known), and a one-shot's data and tag there after its AAD: 1, 0 with an error
 * raised, or -1 when a decryption fails authentication (out wiped).
 */
typedef int aead_sw_start(struct aead_ctx *c, const unsigned char *tag, int known, size_t len);
typedef int aead_sw_seal(struct aead_ctx *c, const unsigned char *in, unsigned char *out,
                         size_t len, unsigned char *tag, size_t taglen);
aead_sw_start aead_gcm_sw_start, aead_ccm_sw_start;
aead_sw_seal aead_gcm_sw_seal, aead_ccm_sw_seal;
struct aead_mode {
    aead_call *message, *record;
    int (*tls_fixed)(struct aead_ctx *c, const unsigned char *fixed, size_t len);
    aead_sw_start *sw_start;
    aead_sw_seal *sw_seal;
    size_t ivlen, taglen;    /* at newctx, the default provider's (CCM: L = 8, M = 12) */
    size_t iv_min, iv_max;   /* the IV lengths that can be set */
    size_t tag_min, tag_odd; /* the tag lengths that can be set: tag_min to TAG_MAX, odd ones? */
    int ivlen_voids;         /* what a new IV length leaves of an IV set: IV_USED or IV_NONE */
    /* The default provider's rules that differ (GCM's; CCM's where marked): */
    int iv_sets_len;   /* an init's IV has any length from iv_min to iv_max, and sets it
                        * (CCM: the length set) */
    int streams;       /* AAD and data come in any number of updates, an empty one no step
                        * (CCM: each in one) */
    int keeps_data;    /* a one-shot's data is kept: the message can go on */
    int new_drops_tag; /* a new message drops the tag given for the last */
    int tag_len_alone; /* CCM: a tag length is set without a tag */
    int data_verifies; /* CCM: a decryption's data is checked against its tag as it comes */
    int tlsaad_once;   /* a tlsaad is spent by its record, even one refused */
    int iv_read_set;   /* the IV can be read only once set (or made for a message) */
    size_t tls_taglen; /* a TLS record's tag length (0: the tag length set) */
    /* An encryption's tag, got as OSSL_CIPHER_PARAM_AEAD_TAG. */
    int (*get_tag)(struct aead_ctx *c, OSSL_PARAM *p);
    /* The kernel's: the IV as it takes it (into 16 bytes: its length), the only IV length it
     * takes (0: any) and the tag lengths (a bit each). */
    size_t (*kernel_iv)(const struct aead_ctx *c, unsigned char kiv[16]);
    size_t kernel_ivlen;
    unsigned int kernel_tags;
};
extern const struct aead_mode aead_gcm_mode, aead_ccm_mode;

/* Fails with ccree's error: the algorithm, then what. */
int aead_fail(struct aead_ctx *c, int reason, const char *what);
/* The message buffer holds at least n bytes. */
int aead_reserve(struct aead_ctx *c, size_t n);
/* What this message kept of its data goes: a one-shot encryption's plaintext. */
void aead_forget_data(struct aead_ctx *c);
void aead_new_message(struct aead_ctx *c);
/* The path of a message of total bytes: 1 the kernel, 0 software (timed where both can). */
int aead_choose(struct aead_ctx *c, size_t total, size_t taglen, struct ccree_choice *ch);
/*
 * A whole message, aad || in to out with its tag, on the path chosen, the kernel failing over
 * to the default provider: 1, 0 with an error raised, or -1 when a decryption fails
 * authentication (out wiped, no error raised: the caller's to say).
 */
int aead_oneshot(struct aead_ctx *c, struct ccree_choice *ch, unsigned char *aad, size_t aadlen,
                 const unsigned char *in, unsigned char *out, size_t len, unsigned char *tag,
                 size_t taglen);
/* A one-shot as the end of an operation: an authentication failure is an error. */
int aead_oneshot_final(struct aead_ctx *c, unsigned char *aad, size_t aadlen,
                       const unsigned char *in, unsigned char *out, size_t len,
                       unsigned char *tag, size_t taglen);
/* The software context brought to where this message is, to go on there. */
int aead_to_stream(struct aead_ctx *c);
/* AAD kept while it fits one kernel request with the data still to come. */
int aead_add_aad(struct aead_ctx *c, const unsigned char *aad, size_t len);
/*
 * The software context's: an update (AAD with out NULL, CCM's length with in NULL too), data
 * (counted), the tag set or got, GCM's end of message.
 */
int aead_sw_update(struct aead_ctx *c, unsigned char *out, const unsigned char *in, size_t len);
int aead_sw_data(struct aead_ctx *c, unsigned char *out, const unsigned char *in, size_t len);
int aead_sw_set_tag(struct aead_ctx *c, const unsigned char *tag, size_t taglen);
int aead_sw_get_tag(struct aead_ctx *c, unsigned char *tag, size_t taglen);
int aead_sw_gcm_final(struct aead_ctx *c, unsigned char *tag, size_t taglen);

/* One update, final or EVP_Cipher call (final: a final, or EVP_Cipher without input), a TLS
 * record or by the mode; out (NULL: in is AAD) holds outsize bytes. */
int aead_message(struct aead_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                 const unsigned char *in, size_t len, int final);
/* A tag an encryption computed (if computed), len bytes (0: any up to TAG_MAX), into p. */
int aead_give_tag(struct aead_ctx *c, OSSL_PARAM *p, int computed, size_t len);

/* The 64-bit counter that ends a TLS nonce, counted up. */
static inline void aead_ctr64_inc(unsigned char *counter)
{
    int n = 8;

    while (n-- > 0 && ++counter[n] == 0)
        continue;
}

#endif
