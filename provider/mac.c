/*
 * The MACs HMAC and CMAC, their messages as a digest's (hash.c). A MAC keeps the default
 * provider's MAC beside it, keyed and configured as itself: it validates every setting and
 * serves what the kernel does not.
 */
#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include "hash.h"

/*
 * The digest or cipher named: the row of this MAC that runs on it, or NONE; *props, where
 * software has it. Aliases count: "SHA256" is the row of "SHA2-256".
 */
static size_t find_row(struct hash_ctx *h, const char *name, const char **props)
{
    int op = ccree_under(h->family);
    EVP_CIPHER *c = NULL;
    EVP_MD *md = NULL;
    size_t i;

    if ((*props = ccree_software(h->e.prov, op, name)) == NULL)
        return NONE;
    if (op == CCREE_OP_CIPHER)
        c = EVP_CIPHER_fetch(h->e.prov->libctx, name, *props);
    else
        md = EVP_MD_fetch(h->e.prov->libctx, name, *props);
    for (i = h->family; i < CCREE_NALGS && strcmp(ccree_algs[i].names, ccree_algs[h->family].names) == 0;
         i++)
        if (c != NULL ? EVP_CIPHER_is_a(c, ccree_algs[i].under) : EVP_MD_is_a(md, ccree_algs[i].under))
            break;
    EVP_CIPHER_free(c);
    EVP_MD_free(md);
    return i < CCREE_NALGS && strcmp(ccree_algs[i].names, ccree_algs[h->family].names) == 0 ? i : NONE;
}

/* A MAC's settings that only software serves, and their bits in sw_only. */
static const char *const sw_settings[] = { OSSL_MAC_PARAM_TLS_DATA_SIZE, OSSL_MAC_PARAM_DIGEST_NOINIT,
                                           OSSL_MAC_PARAM_DIGEST_ONESHOT };

static int set_key(struct hash_ctx *h, const OSSL_PARAM *p)
{
    if (p->data == NULL) /* as the default provider: the key stays */
        return 1;
    if (!ccree_engine_key(&h->e, p->data, p->data_size)) /* an empty key is a key */
        return 0;
    /* as the default provider: the digest or cipher named takes effect with a key */
    ccree_engine_row(&h->e, h->next_row);
    hash_restart(h);
    return 1;
}

/*
 * params for the software MAC, in sw (room for each of them and two more): as they are, but for
 * "properties": software fetches the digest or cipher where it found it. *row: the row of the
 * digest or cipher named; *name: its name, or NULL.
 */
static int to_sw(struct hash_ctx *h, const OSSL_PARAM params[], OSSL_PARAM *sw, size_t *row,
                 const char **name)
{
    const char *under = ccree_under(h->family) == CCREE_OP_CIPHER ? OSSL_MAC_PARAM_CIPHER : OSSL_MAC_PARAM_DIGEST;
    const char *props = NULL, *asked = NULL;
    const OSSL_PARAM *p;
    size_t n = 0;

    for (p = params; p->key != NULL; p++) {
        if (strcmp(p->key, OSSL_MAC_PARAM_PROPERTIES) == 0) {
            if (!OSSL_PARAM_get_utf8_string_ptr(p, &asked))
                return hash_fail(h, CCREE_R_BAD_PARAM, "properties");
            continue;
        }
        if (strcmp(p->key, under) == 0) {
            if (!OSSL_PARAM_get_utf8_string_ptr(p, name))
                return hash_fail(h, CCREE_R_BAD_PARAM, under);
            *row = find_row(h, *name, &props);
        }
        sw[n++] = *p;
    }
    /* Properties asked for must find the digest or cipher, as in the default provider. */
    if (*name != NULL && asked != NULL
        && !ccree_fetchable(h->e.prov, ccree_under(h->family), *name, asked))
        return hash_fail(h, CCREE_R_BAD_PARAM, "no such digest or cipher with these properties");
    if (props != NULL)
        sw[n++] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_PROPERTIES, (char *)props, 0);
    sw[n] = OSSL_PARAM_construct_end();
    if (n > 0 && !EVP_MAC_CTX_set_params(h->soft_mac, sw)) {
        CCREE_RAISE(h->e.prov, CCREE_R_BAD_PARAM, "%s: %s %s", ccree_algs[h->family].names,
                    *name != NULL ? under : "settings", *name != NULL ? *name : "refused");
        return 0;
    }
    return 1;
}

/* Whether the software MAC takes data, asked of a copy (a TLS HMAC takes an update as a record). */
static int sw_keyed(const struct hash_ctx *h)
{
    EVP_MAC_CTX *t = EVP_MAC_CTX_dup(h->soft_mac);
    int ok = t != NULL && EVP_MAC_update(t, NULL, 0);

    EVP_MAC_CTX_free(t);
    return ok;
}

/* Settings go to the software MAC first; then this context follows: its row, key and settings. */
static int mac_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    struct hash_ctx *h = vctx;
    const OSSL_PARAM *p;
    OSSL_PARAM *sw;
    const char *name = NULL;
    size_t i, n = 0, row = h->next_row;
    uint64_t v;
    int ok;

    for (p = params; p != NULL && p->key != NULL; p++)
        n++;
    if (n == 0)
        return 1;
    if ((sw = OPENSSL_malloc((n + 2) * sizeof(*sw))) == NULL) /* and "properties", and the end */
        return hash_fail(h, CCREE_R_SOFTWARE, "no memory");
    ok = to_sw(h, params, sw, &row, &name);
    OPENSSL_free(sw);
    if (!ok && OSSL_PARAM_locate_const(params, OSSL_MAC_PARAM_KEY) != NULL && !sw_keyed(h)) {
        /* the default provider's MAC refused the key and kept none (CMAC): neither do we */
        ccree_engine_drop_key(&h->e);
    }
    if (!ok)
        return 0;
    h->next_row = row;
    for (i = 0; i < sizeof(sw_settings) / sizeof(sw_settings[0]); i++)
        if ((p = OSSL_PARAM_locate_const(params, sw_settings[i])) != NULL) {
            h->sw_only &= ~(1u << i);
            if (OSSL_PARAM_get_uint64(p, &v) && v != 0)
                h->sw_only |= 1u << i;
        }
    return (p = OSSL_PARAM_locate_const(params, OSSL_MAC_PARAM_KEY)) == NULL || set_key(h, p);
}

static int mac_init(void *vctx, const unsigned char *key, size_t keylen, const OSSL_PARAM params[])
{
    struct hash_ctx *h = vctx;
    OSSL_PARAM k[] = { OSSL_PARAM_octet_string(OSSL_MAC_PARAM_KEY, (void *)key, keylen),
                       OSSL_PARAM_END };
    int kernel;

    if (!mac_set_ctx_params(h, params) || (key != NULL && !mac_set_ctx_params(h, k)))
        return 0;
    kernel = h->e.alg != NULL && !h->sw_only;
    if (!kernel && !h->e.prov->fallback)
        return hash_fail(h, CCREE_R_NOT_OFFLOADED, "these settings run in software");
    if (kernel && !ccree_check_path(h->e.prov, h->e.idx))
        return 0;
    if (!EVP_MAC_init(h->soft_mac, NULL, 0, NULL))
        return hash_fail(h, CCREE_R_SOFTWARE, "cannot start the MAC: is it keyed?");
    hash_restart(h);
    return 1;
}

static int mac_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    struct hash_ctx *h = vctx;

    return EVP_MAC_CTX_get_params(h->soft_mac, params)
           || hash_fail(h, CCREE_R_BAD_PARAM, "cannot return a parameter");
}

/* OpenSSL asks for a MAC's settings without a context: one pair of functions per MAC. */
static const OSSL_PARAM *settings(void *provctx, const char *mac, int settable)
{
    struct ccree_prov *p = provctx;
    size_t i;

    for (i = 0; ccree_op(i) != CCREE_OP_MAC || strcmp(ccree_algs[i].names, mac) != 0; i++)
        ;
    return settable ? EVP_MAC_settable_ctx_params(p->sw_mac[i])
                    : EVP_MAC_gettable_ctx_params(p->sw_mac[i]);
}

static const OSSL_PARAM *hmac_gettable(void *vctx, void *provctx)
{
    (void)vctx;
    return settings(provctx, "HMAC", 0);
}

static const OSSL_PARAM *hmac_settable(void *vctx, void *provctx)
{
    (void)vctx;
    return settings(provctx, "HMAC", 1);
}

static const OSSL_PARAM *cmac_gettable(void *vctx, void *provctx)
{
    (void)vctx;
    return settings(provctx, "CMAC", 0);
}

static const OSSL_PARAM *cmac_settable(void *vctx, void *provctx)
{
    (void)vctx;
    return settings(provctx, "CMAC", 1);
}

const OSSL_DISPATCH ccree_hmac_settings[] = {
    { OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS, (fn)hmac_gettable },
    { OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS, (fn)hmac_settable },
    { 0, NULL },
};

const OSSL_DISPATCH ccree_cmac_settings[] = {
    { OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS, (fn)cmac_gettable },
    { OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS, (fn)cmac_settable },
    { 0, NULL },
};

void *ccree_mac_newctx(struct ccree_prov *p, size_t idx)
{
    struct hash_ctx *h = hash_newctx(p, NONE, idx);

    if (h != NULL)
        h->next_row = NONE;
    if (h != NULL && (h->soft_mac = EVP_MAC_CTX_new(p->sw_mac[idx])) == NULL) {
        hash_freectx(h);
        return NULL;
    }
    return h;
}

const OSSL_DISPATCH ccree_mac_functions[] = {
    { OSSL_FUNC_MAC_INIT, (fn)mac_init },
    { OSSL_FUNC_MAC_UPDATE, (fn)hash_update },
    { OSSL_FUNC_MAC_FINAL, (fn)hash_final },
    { OSSL_FUNC_MAC_FREECTX, (fn)hash_freectx },
    { OSSL_FUNC_MAC_DUPCTX, (fn)hash_dupctx },
    { OSSL_FUNC_MAC_GET_CTX_PARAMS, (fn)mac_get_ctx_params },
    { OSSL_FUNC_MAC_SET_CTX_PARAMS, (fn)mac_set_ctx_params },
    { 0, NULL },
};
