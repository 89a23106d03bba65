/*
 * Block ciphers in ECB, CBC, CTR, XTS and CBC-CTS mode: OpenSSL's calls, keys and params. The
 * context owns the state (key, IV or counter, partial block, CTR keystream), so each request
 * can go to the kernel or to the default provider on its own (cipher_req.c); what an update,
 * a final and EVP_Cipher do is the mode's (modes.c).
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

#include "cipher.h"

static void *cipher_dupctx(void *vctx)
{
    struct cipher_ctx *c = vctx, *d = OPENSSL_malloc(sizeof(*d));

    if (d == NULL)
        return NULL;
    *d = *c;
    if (!ccree_engine_dup(&d->e, &c->e)) {
        OPENSSL_clear_free(d, sizeof(*d));
        return NULL;
    }
    return d;
}

static void cipher_freectx(void *vctx)
{
    struct cipher_ctx *c = vctx;

    if (c == NULL)
        return;
    ccree_engine_free(&c->e);
    OPENSSL_clear_free(c, sizeof(*c));
}

static int cipher_set_ctx_params(void *vctx, const OSSL_PARAM params[]);

static int set_key(struct cipher_ctx *c, const unsigned char *key, size_t keylen, int enc)
{
    size_t half = keylen / 2;

    /* As the default provider: XTS encrypts only with two different key halves. */
    if (c->mode->two_keys && enc && keylen == c->e.alg->keylen
        && CRYPTO_memcmp(key, key + half, half) == 0) {
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_KEY_LENGTH, "%s: the two halves of the key are equal",
                    c->e.alg->kname);
        return 0;
    }
    return ccree_engine_key(&c->e, key, keylen);
}

static int cipher_init(struct cipher_ctx *c, const unsigned char *key, size_t keylen,
                       const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[], int enc)
{
    int new_iv = iv != NULL && c->e.alg->ivlen;
    int restart = !new_iv && c->mode->restarts_iv && c->iv_set, started = 1;

    if (!ccree_check_path(c->e.prov, c->e.idx))
        return 0;
    if (new_iv && ivlen != c->e.alg->ivlen) {
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_IV_LENGTH, "%zu bytes, %s takes %zu", ivlen,
                    c->e.alg->kname, c->e.alg->ivlen);
        return 0;
    }
    /*
     * An init without a key, under a new or restored IV, in the direction of a software context
     * that holds the message, starts the next message there, as the default provider's own
     * init (where that fails, the init too, but its state is that of a new message under the
     * IV). Otherwise a new or restored IV drops the stream, and a message that goes on takes it
     * back.
     */
    if ((new_iv || restart) && key == NULL && enc == c->e.sw_enc && c->sw_holds != SW_STALE) {
        started = cipher_sw_restart(c, new_iv ? iv : c->oiv);
    } else if (new_iv || restart) {
        c->sw_holds = SW_STALE;
    } else if (!cipher_take_stream(c)) {
        return 0;
    }
    /* As the default provider: the IV is taken before the key, which may be refused. */
    if (new_iv) {
        memcpy(c->oiv, iv, ivlen);
        memcpy(c->iv, iv, ivlen);
        c->iv_set = 1;
    } else if (restart) {
        memcpy(c->iv, c->oiv, c->e.alg->ivlen);
    }
    if (key != NULL && !set_key(c, key, keylen, enc))
        return 0;
    c->enc = enc;
    c->bufsz = 0;
    c->num = 0;
    c->updated = 0;
    return started && cipher_set_ctx_params(c, params);
}

static int cipher_einit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                        size_t ivlen, const OSSL_PARAM params[])
{
    return cipher_init(vctx, key, keylen, iv, ivlen, params, 1);
}

static int cipher_dinit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                        size_t ivlen, const OSSL_PARAM params[])
{
    return cipher_init(vctx, key, keylen, iv, ivlen, params, 0);
}

static int cipher_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                         const unsigned char *in, size_t inl)
{
    struct cipher_ctx *c = vctx;

    *outl = 0;
    return c->mode->update(c, out, outl, outsize, in, inl);
}

static int cipher_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    struct cipher_ctx *c = vctx;

    *outl = 0;
    return c->mode->final(c, out, outl, outsize);
}

static int cipher_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                         const unsigned char *in, size_t inl)
{
    struct cipher_ctx *c = vctx;

    *outl = 0;
    if (!cipher_usable(c, in, inl)
        || !ccree_check_apart(c->e.prov, c->e.alg->kname, out, 0, in, inl)
        || !c->mode->whole(c, out, outsize, in, inl))
        return 0;
    *outl = inl;
    return 1;
}

int ccree_cipher_get_params(OSSL_PARAM params[], size_t idx)
{
    static const struct {
        const char *key;
        unsigned long flag;
    } flags[] = {
        { OSSL_CIPHER_PARAM_AEAD, EVP_CIPH_FLAG_AEAD_CIPHER },
        { OSSL_CIPHER_PARAM_CUSTOM_IV, EVP_CIPH_CUSTOM_IV },
        { OSSL_CIPHER_PARAM_CTS, EVP_CIPH_FLAG_CTS },
        { OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, EVP_CIPH_FLAG_TLS1_1_MULTIBLOCK },
        { OSSL_CIPHER_PARAM_HAS_RAND_KEY, EVP_CIPH_RAND_KEY },
    };
    const struct ccree_alg *a = &ccree_algs[idx];
    OSSL_PARAM *p;
    size_t i;

    for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if ((p = OSSL_PARAM_locate(params, flags[i].key)) != NULL
            && !OSSL_PARAM_set_int(p, (a->flags & flags[i].flag) != 0))
            return 0;
    return ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_MODE)) == NULL
            || OSSL_PARAM_set_uint(p, (unsigned int)a->mode))
           && ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_KEYLEN)) == NULL
               || OSSL_PARAM_set_size_t(p, a->keylen))
           && ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IVLEN)) == NULL
               || OSSL_PARAM_set_size_t(p, a->ivlen))
           && ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_BLOCK_SIZE)) == NULL
               || OSSL_PARAM_set_size_t(p, a->blocksize));
}

const OSSL_PARAM *ccree_cipher_gettable_params(void *provctx)
{
    static const OSSL_PARAM params[] = {
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_CTS, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, NULL),
        OSSL_PARAM_END,
    };

    (void)provctx;
    return params;
}

static int set_iv_param(OSSL_PARAM *p, const unsigned char *iv, size_t len)
{
    return p == NULL || OSSL_PARAM_set_octet_ptr(p, iv, len) || OSSL_PARAM_set_octet_string(p, iv, len);
}

/* A random key with DES's rules (odd parity, not weak), from the default or legacy provider. */
static int rand_key(struct cipher_ctx *c, OSSL_PARAM *p)
{
    OSSL_PARAM q[] = { *p, OSSL_PARAM_END };

    if (!ccree_engine_sw(&c->e) || !c->e.soft->get_ctx_params(c->e.sw, q))
        return 0;
    p->return_size = q[0].return_size;
    return 1;
}

/* What get_ctx_params answers, the most asked first (EVP: the IV length at every init). */
enum { G_IVLEN, G_KEYLEN, G_PADDING, G_NUM, G_CTS_MODE, G_TLS_MAC, G_RANDOM_KEY, G_IV,
       G_UPDATED_IV, G_N };
static const char *const get_keys[G_N] = {
    OSSL_CIPHER_PARAM_IVLEN,    OSSL_CIPHER_PARAM_KEYLEN,     OSSL_CIPHER_PARAM_PADDING,
    OSSL_CIPHER_PARAM_NUM,      OSSL_CIPHER_PARAM_CTS_MODE,   OSSL_CIPHER_PARAM_TLS_MAC,
    OSSL_CIPHER_PARAM_RANDOM_KEY, OSSL_CIPHER_PARAM_IV,       OSSL_CIPHER_PARAM_UPDATED_IV,
};

static int cipher_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    struct cipher_ctx *c = vctx;
    OSSL_PARAM *at[G_N], *p;

    ccree_params_find(params, get_keys, G_N, at);
    if ((at[G_UPDATED_IV] != NULL || at[G_NUM] != NULL) && !cipher_read_iv(c))
        return 0;
    if (((p = at[G_KEYLEN]) != NULL && !OSSL_PARAM_set_size_t(p, c->e.alg->keylen))
        || ((p = at[G_IVLEN]) != NULL && !OSSL_PARAM_set_size_t(p, c->e.alg->ivlen))
        || ((p = at[G_PADDING]) != NULL && !OSSL_PARAM_set_uint(p, (unsigned int)c->pad))
        || ((p = at[G_NUM]) != NULL && !OSSL_PARAM_set_uint(p, c->num))
        || ((p = at[G_CTS_MODE]) != NULL && is_cts(c)
            && !OSSL_PARAM_set_utf8_string(p, cts_names[c->cts_mode]))
        || ((p = at[G_TLS_MAC]) != NULL && !OSSL_PARAM_set_octet_ptr(p, c->tls_mac, c->tls_maclen))
        || ((p = at[G_RANDOM_KEY]) != NULL
            && (!(c->e.alg->flags & EVP_CIPH_RAND_KEY) || !rand_key(c, p)))
        || !set_iv_param(at[G_IV], c->oiv, c->e.alg->ivlen)
        || !set_iv_param(at[G_UPDATED_IV], c->iv, c->e.alg->ivlen)) {
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_PARAM, "cannot return a parameter");
        return 0;
    }
    return 1;
}

static int set_cts_mode(struct cipher_ctx *c, const OSSL_PARAM *p)
{
    const char *name = NULL;
    int i;

    if (OSSL_PARAM_get_utf8_string_ptr(p, &name))
        for (i = CS1; i <= CS3; i++)
            if (OPENSSL_strcasecmp(name, cts_names[i]) == 0) {
                c->cts_mode = i;
                return cipher_take_stream(c); /* the software context takes the mode at its next start */
            }
    CCREE_RAISE(c->e.prov, CCREE_R_BAD_PARAM, "cts_mode");
    return 0;
}

/* What set_ctx_params takes, the most set first (EVP: the padding at every init). */
enum { S_PADDING, S_KEYLEN, S_NUM, S_CTS_MODE, S_TLS_VERSION, S_TLS_MAC_SIZE, S_N };
static const char *const set_keys[S_N] = {
    OSSL_CIPHER_PARAM_PADDING,     OSSL_CIPHER_PARAM_KEYLEN,       OSSL_CIPHER_PARAM_NUM,
    OSSL_CIPHER_PARAM_CTS_MODE,    OSSL_CIPHER_PARAM_TLS_VERSION,  OSSL_CIPHER_PARAM_TLS_MAC_SIZE,
};

static int cipher_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    struct cipher_ctx *c = vctx;
    OSSL_PARAM *at[S_N];
    const OSSL_PARAM *p;
    unsigned int v;

    if (params == NULL)
        return 1;
    ccree_params_find((OSSL_PARAM *)params, set_keys, S_N, at);
    /*
     * The key length is fixed: refuse another, as OpenSSL's XTS and SIV do. After 3.0 (so in 3.5)
     * EVP_CIPHER_CTX_set_params keeps a KEYLEN that set_ctx_params accepted as the context's
     * key length, so one accepted and ignored would be what EVP_CIPHER_CTX_get_key_length says.
     */
    if ((p = at[S_KEYLEN]) != NULL) {
        size_t keylen;

        if (!OSSL_PARAM_get_size_t(p, &keylen) || keylen != c->e.alg->keylen) {
            CCREE_RAISE(c->e.prov, CCREE_R_BAD_KEY_LENGTH, "keylen: %s takes %zu bytes",
                        c->e.alg->kname, c->e.alg->keylen);
            return 0;
        }
    }
    if ((p = at[S_PADDING]) != NULL) {
        if (!OSSL_PARAM_get_uint(p, &v)) {
            CCREE_RAISE(c->e.prov, CCREE_R_BAD_PARAM, "padding");
            return 0;
        }
        if (!cipher_set_pad(c, v != 0))
            return 0;
    }
    if ((p = at[S_NUM]) != NULL) {
        /*
         * CTR's only 0, as OpenSSL's default provider from 3.0.20 (its CTR block is a byte);
         * before, it took any, and read keystream it may never have computed.
         */
        if (!OSSL_PARAM_get_uint(p, &v) || v >= c->bs || (v != 0 && c->mode->chain == CHAIN_CTR)) {
            CCREE_RAISE(c->e.prov, CCREE_R_BAD_PARAM, "num");
            return 0;
        }
        c->num = c->mode->chain == CHAIN_CTR ? v : 0;
        if (!cipher_sw_forward(c, p))
            return 0;
    }
    if ((p = at[S_CTS_MODE]) != NULL && is_cts(c)
        && !set_cts_mode(c, p))
        return 0;
    if ((p = at[S_TLS_VERSION]) != NULL
        && !OSSL_PARAM_get_uint(p, &c->tls_version)) {
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_PARAM, "tls-version");
        return 0;
    }
    if ((p = at[S_TLS_MAC_SIZE]) != NULL
        && (!OSSL_PARAM_get_size_t(p, &c->tls_macsize) || c->tls_macsize > EVP_MAX_MD_SIZE)) {
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_PARAM, "tls-mac-size");
        return 0;
    }
    return 1;
}

static const OSSL_PARAM *cipher_gettable_ctx_params(void *cctx, void *provctx)
{
    static const OSSL_PARAM params[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
        OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_RANDOM_KEY, NULL, 0),
        OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC, NULL, 0),
        OSSL_PARAM_END,
    };

    (void)cctx;
    (void)provctx;
    return params;
}

static const OSSL_PARAM *cipher_settable_ctx_params(void *cctx, void *provctx)
{
    static const OSSL_PARAM params[] = {
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
        OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, NULL, 0),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, NULL),
        OSSL_PARAM_END,
    };

    (void)cctx;
    (void)provctx;
    return params;
}

static const struct mode *mode_of(const struct ccree_alg *a)
{
    if (a->flags & EVP_CIPH_FLAG_CTS)
        return &cipher_cts_mode;
    switch (a->mode) {
    case EVP_CIPH_CBC_MODE:
        return &cipher_cbc_mode;
    case EVP_CIPH_CTR_MODE:
        return &cipher_ctr_mode;
    case EVP_CIPH_XTS_MODE:
        return &cipher_xts_mode;
    default:
        return &cipher_ecb_mode;
    }
}

void *ccree_cipher_newctx(struct ccree_prov *p, size_t idx)
{
    struct cipher_ctx *c = OPENSSL_zalloc(sizeof(*c));

    if (c == NULL)
        return NULL;
    ccree_engine_init(&c->e, p, idx);
    c->bs = c->e.alg->blocksize > 1 ? c->e.alg->blocksize : c->e.alg->ivlen;
    c->mode = mode_of(c->e.alg);
    c->pad = 1;
    return c;
}

typedef void (*fn)(void);
const OSSL_DISPATCH ccree_cipher_functions[] = {
    { OSSL_FUNC_CIPHER_ENCRYPT_INIT, (fn)cipher_einit },
    { OSSL_FUNC_CIPHER_DECRYPT_INIT, (fn)cipher_dinit },
    { OSSL_FUNC_CIPHER_UPDATE, (fn)cipher_update },
    { OSSL_FUNC_CIPHER_FINAL, (fn)cipher_final },
    { OSSL_FUNC_CIPHER_CIPHER, (fn)cipher_cipher },
    { OSSL_FUNC_CIPHER_FREECTX, (fn)cipher_freectx },
    { OSSL_FUNC_CIPHER_DUPCTX, (fn)cipher_dupctx },
    { OSSL_FUNC_CIPHER_GETTABLE_PARAMS, (fn)ccree_cipher_gettable_params },
    { OSSL_FUNC_CIPHER_GET_CTX_PARAMS, (fn)cipher_get_ctx_params },
    { OSSL_FUNC_CIPHER_SET_CTX_PARAMS, (fn)cipher_set_ctx_params },
    { OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, (fn)cipher_gettable_ctx_params },
    { OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, (fn)cipher_settable_ctx_params },
    { 0, NULL },
};
