/*
 * AES-GCM and AES-CCM. The kernel takes a whole message (AAD, data and tag) in one request, so
 * a message goes to it when its data comes in one update after the AAD and, on decrypt, after
 * the tag: every such encryption, libssl's TLS 1.3 records and TLS 1.2 records. Until the data
 * comes the context keeps the AAD (and GCM, after a one-shot, its data): a message that then
 * goes on differently is replayed into the default provider and goes on there. This file:
 * OpenSSL's calls and params.
 */
#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

#include "aead.h"

static int aead_set_ctx_params(void *vctx, const OSSL_PARAM params[]);

static int aead_init(struct aead_ctx *c, const unsigned char *key, size_t keylen,
                     const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[], int enc)
{
    /* As OpenSSL's IV state: data encrypted under this IV spends it, for the next key too. */
    int spent = c->enc && c->datalen > 0;

    if (!ccree_check_path(c->e.prov, c->e.idx))
        return 0;
    /* Neither key nor IV: the message goes on, in the default provider too if it holds it. */
    if (key == NULL && iv == NULL && c->msg == MSG_STREAM && enc != c->enc) {
        if (!ccree_engine_sw_init(&c->e, enc)(c->e.sw, NULL, 0, NULL, 0, NULL))
            return aead_fail(c, CCREE_R_SOFTWARE, "cannot turn the default provider's direction");
        c->e.sw_enc = enc;
    }
    c->enc = enc;
    if (iv != NULL) {
        if (c->mode->iv_sets_len ? ivlen < c->mode->iv_min || ivlen > c->mode->iv_max
                                 : ivlen != c->ivlen) {
            CCREE_RAISE(c->e.prov, CCREE_R_BAD_IV_LENGTH, "%s: %zu bytes", c->e.alg->kname, ivlen);
            return 0;
        }
        memcpy(c->iv, iv, ivlen);
        c->ivlen = ivlen;
        c->ivstate = IV_SET;
        c->gen_next = 0; /* tlsivgen gives out this IV first */
        aead_new_message(c);
    }
    if (key != NULL) {
        if (!ccree_engine_key(&c->e, key, keylen))
            return 0;
        c->kivlen = c->ivlen;
        c->ktaglen = c->taglen;
        if (iv == NULL && spent)
            c->ivstate = IV_USED;
        aead_new_message(c);
    }
    return aead_set_ctx_params(c, params);
}

static int aead_einit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                      size_t ivlen, const OSSL_PARAM params[])
{
    return aead_init(vctx, key, keylen, iv, ivlen, params, 1);
}

static int aead_dinit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                      size_t ivlen, const OSSL_PARAM params[])
{
    return aead_init(vctx, key, keylen, iv, ivlen, params, 0);
}

static int aead_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                       const unsigned char *in, size_t inl)
{
    struct aead_ctx *c = vctx;

    *outl = 0;
    if (c->mode->streams && inl == 0)
        return 1;
    /* The hot path: data streamed in a message the default provider holds, one call of its
     * update (counted first); anything else as aead_message takes it. */
    if (c->mode->streams && c->msg == MSG_STREAM && !c->tls && c->ivstate == IV_SET && inl <= INT_MAX
        && ccree_buffers_fine(out, 0, inl, outsize, in, inl)) {
        c->datalen += inl;
        ccree_count(c->e.idx, 1, 1, inl);
        return c->e.soft->update(c->e.sw, out, outl, outsize, in, inl);
    }
    return aead_message(c, out, outl, outsize, in, inl, 0);
}

static int aead_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    struct aead_ctx *c = vctx;

    if (!aead_message(c, out, outl, outsize, NULL, 0, 1))
        return 0;
    *outl = 0;
    return 1;
}

/*
 * EVP_Cipher: as update, or final when in is NULL. The length returned is inl, as the default
 * provider's, except a CCM final's from OpenSSL 3.0.22 (ossl_ccm_stream_final): none.
 */
static int aead_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                       const unsigned char *in, size_t inl)
{
    struct aead_ctx *c = vctx;

    if (!aead_message(c, out, outl, outsize, in, inl, in == NULL))
        return 0;
    if (in != NULL || !c->e.prov->sw_final_seals_empty[c->e.idx])
        *outl = inl;
    return 1;
}

static void *aead_dupctx(void *vctx)
{
    struct aead_ctx *c = vctx, *d = OPENSSL_malloc(sizeof(*d));

    if (d == NULL)
        return NULL;
    *d = *c;
    d->buf = d->aadout = NULL;
    d->aadcap = 0;
    if (!ccree_engine_dup(&d->e, &c->e)
        || (c->cap > 0 && (d->buf = OPENSSL_memdup(c->buf, c->cap)) == NULL)) {
        ccree_engine_free(&d->e);
        OPENSSL_clear_free(d->buf, d->cap);
        OPENSSL_clear_free(d, sizeof(*d));
        return NULL;
    }
    return d;
}

static void aead_freectx(void *vctx)
{
    struct aead_ctx *c = vctx;

    if (c == NULL)
        return;
    ccree_engine_free(&c->e);
    OPENSSL_clear_free(c->buf, c->cap);
    OPENSSL_free(c->aadout);
    OPENSSL_clear_free(c, sizeof(*c));
}

static int set_octets(OSSL_PARAM *p, const unsigned char *v, size_t len)
{
    return OSSL_PARAM_set_octet_string(p, v, len) || OSSL_PARAM_set_octet_ptr(p, v, len);
}

int aead_give_tag(struct aead_ctx *c, OSSL_PARAM *p, int computed, size_t len)
{
    size_t sz = p->data_size;

    if (!c->enc || !computed)
        return aead_fail(c, CCREE_R_BAD_TAG, "no tag computed");
    if (p->data_type != OSSL_PARAM_OCTET_STRING || sz == 0 || sz > TAG_MAX
        || (len != 0 && sz != len))
        return aead_fail(c, CCREE_R_BAD_TAG, "bad tag length asked for");
    if (!OSSL_PARAM_set_octet_string(p, c->tag, sz))
        return aead_fail(c, CCREE_R_BAD_PARAM, "cannot return the tag");
    return 1;
}

/* tlsivgen: the explicit part of the next TLS nonce, which starts a message. */
static int get_ivgen(struct aead_ctx *c, OSSL_PARAM *p)
{
    size_t n = p->data_size == 0 || p->data_size > c->ivlen ? c->ivlen : p->data_size;

    if (p->data == NULL || p->data_type != OSSL_PARAM_OCTET_STRING || !c->ivgen
        || c->e.key == NULL || c->ivlen < TLS_EXPLICIT)
        return aead_fail(c, CCREE_R_BAD_STATE, "no TLS fixed IV set");
    if (c->gen_next)
        aead_ctr64_inc(c->iv + c->ivlen - TLS_EXPLICIT);
    memcpy(p->data, c->iv + c->ivlen - n, n); /* this message's nonce */
    p->return_size = n;
    c->gen_next = 1;
    c->ivstate = IV_SET;
    aead_new_message(c);
    return 1;
}

static int get_size(struct aead_ctx *c, OSSL_PARAM *p, size_t v)
{
    return p == NULL || OSSL_PARAM_set_size_t(p, v)
           || aead_fail(c, CCREE_R_BAD_PARAM, "cannot return a parameter");
}

static int get_iv(struct aead_ctx *c, OSSL_PARAM *p)
{
    if (p == NULL)
        return 1;
    if (c->ivstate == IV_NONE && c->mode->iv_read_set)
        return aead_fail(c, CCREE_R_BAD_STATE, "no IV set");
    memcpy(c->ivout, c->iv, c->ivlen);
    if (c->gen_next) /* the default provider has counted up the nonce it gave out */
        aead_ctr64_inc(c->ivout + c->ivlen - TLS_EXPLICIT);
    if ((p->data != NULL && p->data_size < c->ivlen) || !set_octets(p, c->ivout, c->ivlen))
        return aead_fail(c, CCREE_R_BAD_IV_LENGTH, "IV buffer too small");
    return 1;
}

/* What get_ctx_params answers, the most asked first (EVP: the IV length at every init). */
enum { G_IVLEN, G_TAG, G_KEYLEN, G_TAGLEN, G_TLSPAD, G_IV, G_UPDATED_IV, G_IVGEN, G_N };
static const char *const get_keys[G_N] = {
    OSSL_CIPHER_PARAM_IVLEN,       OSSL_CIPHER_PARAM_AEAD_TAG,
    OSSL_CIPHER_PARAM_KEYLEN,      OSSL_CIPHER_PARAM_AEAD_TAGLEN,
    OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, OSSL_CIPHER_PARAM_IV,
    OSSL_CIPHER_PARAM_UPDATED_IV,  OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN,
};

/* The sizes first, then the IV, the tag, and tlsivgen (which counts the nonce on) last. */
static int aead_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    struct aead_ctx *c = vctx;
    OSSL_PARAM *at[G_N];

    ccree_params_find(params, get_keys, G_N, at);
    return get_size(c, at[G_IVLEN], c->ivlen) && get_size(c, at[G_KEYLEN], c->e.alg->keylen)
           && get_size(c, at[G_TAGLEN], c->taglen != 0 ? c->taglen : TAG_MAX)
           && get_size(c, at[G_TLSPAD], c->tlspad) && get_iv(c, at[G_IV])
           && get_iv(c, at[G_UPDATED_IV]) && (at[G_TAG] == NULL || c->mode->get_tag(c, at[G_TAG]))
           && (at[G_IVGEN] == NULL || get_ivgen(c, at[G_IVGEN]));
}

static int set_tag(struct aead_ctx *c, const OSSL_PARAM *p)
{
    size_t sz = p->data_size;

    if (p->data_type != OSSL_PARAM_OCTET_STRING || sz < c->mode->tag_min || sz > TAG_MAX
        || (sz & 1 && !c->mode->tag_odd))
        return aead_fail(c, CCREE_R_BAD_TAG, "bad tag length");
    if (p->data == NULL && !c->mode->tag_len_alone)
        return aead_fail(c, CCREE_R_BAD_TAG, "no tag given");
    if (p->data != NULL) {
        if (c->enc)
            return aead_fail(c, CCREE_R_BAD_TAG, "a tag is set for decryption only");
        memcpy(c->tag, p->data, sz);
        c->tagset = 1;
    }
    if (c->msg == MSG_FAILED)
        return aead_fail(c, CCREE_R_BAD_STATE, "the data failed authentication and was withheld");
    c->taglen = sz;
    /* A new tag after a one-shot decryption: verified again, in software. */
    if (c->msg == MSG_ONESHOT && c->mode->keeps_data && !aead_to_stream(c))
        return 0;
    return c->msg != MSG_STREAM || aead_sw_set_tag(c, p->data, sz);
}

static int set_ivlen(struct aead_ctx *c, const OSSL_PARAM *p)
{
    size_t sz;

    if (!OSSL_PARAM_get_size_t(p, &sz) || sz < c->mode->iv_min || sz > c->mode->iv_max)
        return aead_fail(c, CCREE_R_BAD_IV_LENGTH, "bad IV length");
    if (sz != c->ivlen && c->ivstate != IV_NONE) /* as the default provider: the IV set is void */
        c->ivstate = c->mode->ivlen_voids;
    c->ivlen = sz;
    return 1;
}

static int set_tls_aad(struct aead_ctx *c, const OSSL_PARAM *p)
{
    size_t len, tail = c->mode->tls_taglen != 0 ? c->mode->tls_taglen : c->taglen;

    if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data_size != TLS_AAD)
        return aead_fail(c, CCREE_R_BAD_PARAM, "TLS AAD is 13 bytes");
    memcpy(c->tlsaad, p->data, TLS_AAD);
    c->tls = 1;
    len = (size_t)c->tlsaad[TLS_AAD - 2] << 8 | c->tlsaad[TLS_AAD - 1];
    if (len < TLS_EXPLICIT + (c->enc ? 0 : tail))
        return aead_fail(c, CCREE_R_BAD_LENGTH, "TLS record too short");
    len -= TLS_EXPLICIT + (c->enc ? 0 : tail);
    c->tlsaad[TLS_AAD - 2] = (unsigned char)(len >> 8);
    c->tlsaad[TLS_AAD - 1] = (unsigned char)len;
    c->tlspad = tail;
    return 1;
}

static int set_tls_fixed(struct aead_ctx *c, const OSSL_PARAM *p)
{
    if (p->data_type != OSSL_PARAM_OCTET_STRING)
        return aead_fail(c, CCREE_R_BAD_PARAM, "TLS fixed IV");
    return c->mode->tls_fixed(c, p->data, p->data_size);
}

/* tlsivinv: the explicit part of a received TLS nonce, which starts a message. */
static int set_tls_inv(struct aead_ctx *c, const OSSL_PARAM *p)
{
    if (p->data == NULL || p->data_type != OSSL_PARAM_OCTET_STRING || !c->ivgen
        || c->e.key == NULL || c->enc || p->data_size > c->ivlen)
        return aead_fail(c, CCREE_R_BAD_STATE, "no TLS fixed IV set for decryption");
    memcpy(c->iv + c->ivlen - p->data_size, p->data, p->data_size);
    c->ivstate = IV_SET;
    aead_new_message(c);
    return 1;
}

/* A key params gives twice (the first of them), or NULL. */
static const char *repeated(const OSSL_PARAM params[])
{
    const OSSL_PARAM *p, *q;

    for (p = params; p->key != NULL; p++)
        for (q = p + 1; q->key != NULL; q++)
            if (strcmp(p->key, q->key) == 0)
                return p->key;
    return NULL;
}

/* What set_ctx_params takes, in the order it takes them. */
enum { S_TAG, S_IVLEN, S_TLSAAD, S_TLSFIXED, S_TLSINV, S_N };
static const char *const set_keys[S_N] = {
    OSSL_CIPHER_PARAM_AEAD_TAG,           OSSL_CIPHER_PARAM_AEAD_IVLEN,
    OSSL_CIPHER_PARAM_AEAD_TLS1_AAD,      OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED,
    OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV,
};

static int aead_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    struct aead_ctx *c = vctx;
    OSSL_PARAM *at[S_N];
    const char *key;

    /* as the default provider of this OpenSSL: from 3.6 it refuses a repeated parameter */
    if (params != NULL && c->e.prov->sw_refuses_repeats[c->e.idx]
        && (key = repeated(params)) != NULL) {
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_PARAM, "%s: %s is repeated", c->e.alg->kname, key);
        return 0;
    }
    ccree_params_find((OSSL_PARAM *)params, set_keys, S_N, at);
    return (at[S_TAG] == NULL || set_tag(c, at[S_TAG]))
           && (at[S_IVLEN] == NULL || set_ivlen(c, at[S_IVLEN]))
           && (at[S_TLSAAD] == NULL || set_tls_aad(c, at[S_TLSAAD]))
           && (at[S_TLSFIXED] == NULL || set_tls_fixed(c, at[S_TLSFIXED]))
           && (at[S_TLSINV] == NULL || set_tls_inv(c, at[S_TLSINV]));
}

static const OSSL_PARAM *aead_gettable_ctx_params(void *cctx, void *provctx)
{
    static const OSSL_PARAM params[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN, NULL, 0),
        OSSL_PARAM_END,
    };

    (void)cctx;
    (void)provctx;
    return params;
}

static const OSSL_PARAM *aead_settable_ctx_params(void *cctx, void *provctx)
{
    static const OSSL_PARAM params[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV, NULL, 0),
        OSSL_PARAM_END,
    };

    (void)cctx;
    (void)provctx;
    return params;
}

void *ccree_aead_newctx(struct ccree_prov *p, size_t idx)
{
    struct aead_ctx *c = OPENSSL_zalloc(sizeof(*c));

    if (c == NULL)
        return NULL;
    ccree_engine_init(&c->e, p, idx);
    c->mode = c->e.alg->mode == EVP_CIPH_GCM_MODE ? &aead_gcm_mode : &aead_ccm_mode;
    c->ivlen = c->mode->ivlen;
    c->taglen = c->mode->taglen;
    return c;
}

typedef void (*fn)(void);
const OSSL_DISPATCH ccree_aead_functions[] = {
    { OSSL_FUNC_CIPHER_ENCRYPT_INIT, (fn)aead_einit },
    { OSSL_FUNC_CIPHER_DECRYPT_INIT, (fn)aead_dinit },
    { OSSL_FUNC_CIPHER_UPDATE, (fn)aead_update },
    { OSSL_FUNC_CIPHER_FINAL, (fn)aead_final },
    { OSSL_FUNC_CIPHER_CIPHER, (fn)aead_cipher },
    { OSSL_FUNC_CIPHER_FREECTX, (fn)aead_freectx },
    { OSSL_FUNC_CIPHER_DUPCTX, (fn)aead_dupctx },
    { OSSL_FUNC_CIPHER_GETTABLE_PARAMS, (fn)ccree_cipher_gettable_params },
    { OSSL_FUNC_CIPHER_GET_CTX_PARAMS, (fn)aead_get_ctx_params },
    { OSSL_FUNC_CIPHER_SET_CTX_PARAMS, (fn)aead_set_ctx_params },
    { OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, (fn)aead_gettable_ctx_params },
    { OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, (fn)aead_settable_ctx_params },
    { 0, NULL },
};
