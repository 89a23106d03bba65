/*
 * What the operations call: errors with ccree's reasons, the path policy of a request (may it
 * run, may software take over a failed one) and where software has an algorithm. A leaf:
 * prov.c, the root, sets it up and hands out the operations.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "prov.h"

static OSSL_FUNC_core_new_error_fn *core_new_error;
static OSSL_FUNC_core_set_error_debug_fn *core_set_error_debug;
static OSSL_FUNC_core_vset_error_fn *core_vset_error;

void ccree_errors_init(const OSSL_DISPATCH *in)
{
    for (; in->function_id != 0; in++)
        switch (in->function_id) {
        case OSSL_FUNC_CORE_NEW_ERROR:
            core_new_error = OSSL_FUNC_core_new_error(in);
            break;
        case OSSL_FUNC_CORE_SET_ERROR_DEBUG:
            core_set_error_debug = OSSL_FUNC_core_set_error_debug(in);
            break;
        case OSSL_FUNC_CORE_VSET_ERROR:
            core_vset_error = OSSL_FUNC_core_vset_error(in);
            break;
        }
}

static const OSSL_ITEM reason_strings[] = {
    { CCREE_R_BAD_CONFIG, "bad configuration" },
    { CCREE_R_NOT_OFFLOADED, "algorithm not offloaded and fallback = no" },
    { CCREE_R_KERNEL, "kernel request failed" },
    { CCREE_R_SOFTWARE, "software fallback failed" },
    { CCREE_R_BAD_KEY_LENGTH, "bad key length" },
    { CCREE_R_BAD_IV_LENGTH, "bad iv length" },
    { CCREE_R_NO_KEY, "no key set" },
    { CCREE_R_BAD_LENGTH, "bad data length" },
    { CCREE_R_OUTPUT_TOO_SMALL, "output buffer too small" },
    { CCREE_R_BAD_DECRYPT, "bad decrypt" },
    { CCREE_R_BAD_PARAM, "bad parameter" },
    { CCREE_R_FINALISED, "operation already finalised" },
    { CCREE_R_UNSUPPORTED, "unsupported" },
    { CCREE_R_OVERLAP, "partially overlapping buffers" },
    { CCREE_R_BAD_TAG, "bad tag" },
    { CCREE_R_BAD_STATE, "call out of order" },
    { 0, NULL },
};

const OSSL_ITEM *ccree_reason_strings(void *provctx)
{
    (void)provctx;
    return reason_strings;
}

void ccree_raise(const OSSL_CORE_HANDLE *h, int reason, const char *file, int line,
                 const char *func, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    core_new_error(h);
    core_set_error_debug(h, file, line, func);
    core_vset_error(h, reason, fmt, ap);
    va_end(ap);
}

int ccree_check_path(const struct ccree_prov *p, size_t idx)
{
    if (p->path[idx].offload || p->fallback)
        return 1;
    CCREE_RAISE(p, CCREE_R_NOT_OFFLOADED, "%s: %s", ccree_algs[idx].kname, p->path[idx].reason);
    return 0;
}

/* Algorithm idx, and every row of its kernel algorithm, to software in this process. */
static void lose_offload(struct ccree_prov *p, size_t idx)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    const struct ccree_alg *a = &ccree_algs[idx];
    char why[CCREE_REASON_MAX];
    size_t i;

    if (!ccree_refused(&p->ident, p->path[idx].driver, why, sizeof(why)))
        return;
    pthread_mutex_lock(&lock);
    for (i = 0; i < CCREE_NALGS; i++) {
        if (ccree_algs[i].kind != a->kind || strcmp(ccree_algs[i].kname, a->kname) != 0
            || !p->path[i].offload)
            continue;
        memcpy(p->path[i].reason, why, sizeof(why));
        p->path[i].offload = 0; /* after the reason: a reader of a cleared path finds it */
        ccree_stats_software(i, why);
    }
    pthread_mutex_unlock(&lock);
}

int ccree_open(struct ccree_prov *p, size_t idx, const unsigned char *key, size_t keylen,
               size_t authsize, int whole)
{
    int tfm = afalg_bind(ccree_algs[idx].kind, p->path[idx].driver);

    if (tfm == -ENOENT)
        lose_offload(p, idx);
    return tfm < 0 ? tfm : afalg_open(tfm, ccree_algs[idx].kind, key, keylen, authsize, whole);
}

int ccree_kernel_failed(const struct ccree_prov *p, size_t idx, int err, int clobbered)
{
    if (p->fallback && !clobbered)
        return 1;
    CCREE_RAISE(p, CCREE_R_KERNEL, "%s (%s): %s%s", ccree_algs[idx].kname, p->path[idx].driver,
                strerror(-err), clobbered ? ", after it may have written over the input" : "");
    return 0;
}

int ccree_overlap(const void *a, size_t alen, const void *b, size_t blen)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

    return alen > 0 && blen > 0 && x < y + blen && y < x + alen;
}

int ccree_check_input(const struct ccree_prov *p, const char *name, const void *in, size_t inl)
{
    if (in == NULL && inl > 0)
        CCREE_RAISE(p, CCREE_R_BAD_PARAM, "%s: NULL input", name);
    else if (inl > SIZE_MAX / 2)
        CCREE_RAISE(p, CCREE_R_BAD_LENGTH, "%s: %zu bytes", name, inl);
    else
        return 1;
    return 0;
}

int ccree_check_apart(const struct ccree_prov *p, const char *name, const void *out, size_t ahead,
                      const void *in, size_t inl)
{
    if (inl == 0 || (uintptr_t)out + ahead <= (uintptr_t)in || (uintptr_t)out >= (uintptr_t)in + inl)
        return 1;
    CCREE_RAISE(p, CCREE_R_OVERLAP, "%s: output %td bytes ahead of the input", name,
                (const unsigned char *)out + ahead - (const unsigned char *)in);
    return 0;
}

int ccree_check_room(const struct ccree_prov *p, const char *name, const void *out, size_t need,
                     size_t outsize)
{
    if (out == NULL && need > 0)
        CCREE_RAISE(p, CCREE_R_BAD_PARAM, "%s: NULL output", name);
    else if (need > outsize)
        CCREE_RAISE(p, CCREE_R_OUTPUT_TOO_SMALL, "%s: %zu bytes for %zu", name, outsize, need);
    else
        return 1;
    return 0;
}

int ccree_fetchable(struct ccree_prov *p, int op, const char *name, const char *props)
{
    void *impl;

    ERR_set_mark();
    if (op == CCREE_OP_CIPHER)
        EVP_CIPHER_free(impl = EVP_CIPHER_fetch(p->libctx, name, props));
    else
        EVP_MD_free(impl = EVP_MD_fetch(p->libctx, name, props));
    ERR_pop_to_mark();
    return impl != NULL;
}

const char *ccree_software(struct ccree_prov *p, int op, const char *name)
{
    static const char *const props[] = { "provider=default", "provider=legacy" };
    size_t i;

    for (i = 0; i < sizeof(props) / sizeof(props[0]); i++)
        if (ccree_fetchable(p, op, name, props[i]))
            return props[i];
    return NULL;
}

void ccree_params_find(OSSL_PARAM params[], const char *const keys[], size_t n, OSSL_PARAM *at[])
{
    size_t i;

    for (i = 0; i < n; i++)
        at[i] = NULL;
    for (; params != NULL && params->key != NULL; params++)
        for (i = 0; i < n; i++)
            if (strcmp(params->key, keys[i]) == 0) {
                if (at[i] == NULL)
                    at[i] = params;
                break;
            }
}
