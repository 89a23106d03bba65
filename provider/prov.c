/* The root: configuration, discovery and the self-test at load, the algorithm lists and the
 * provider params; the operations it hands out call core.c, not this file. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/provider.h>

#include "prov.h"

#define CCREE_VERSION "0.1.0"

static OSSL_FUNC_core_get_params_fn *core_get_params;
/* Per-index entry points: OpenSSL's newctx and get_params carry no algorithm. */
static void *newctx(void *provctx, size_t idx)
{
    switch (ccree_op(idx)) {
    case CCREE_OP_DIGEST:
        return ccree_digest_newctx(provctx, idx);
    case CCREE_OP_MAC:
        return ccree_mac_newctx(provctx, idx);
    default:
        return ccree_algs[idx].kind == CCREE_AEAD ? ccree_aead_newctx(provctx, idx)
                                                  : ccree_cipher_newctx(provctx, idx);
    }
}

static int get_params(OSSL_PARAM params[], size_t idx)
{
    return ccree_op(idx) == CCREE_OP_DIGEST ? ccree_digest_get_params(params, idx)
                                            : ccree_cipher_get_params(params, idx);
}

#define ENTRY(i)                                                                                   \
    static void *newctx_##i(void *provctx) { return newctx(provctx, i); }                          \
    static int get_params_##i(OSSL_PARAM params[]) { return get_params(params, i); }
ENTRY(0) ENTRY(1) ENTRY(2) ENTRY(3) ENTRY(4) ENTRY(5) ENTRY(6) ENTRY(7) ENTRY(8) ENTRY(9)
ENTRY(10) ENTRY(11) ENTRY(12) ENTRY(13) ENTRY(14) ENTRY(15) ENTRY(16) ENTRY(17) ENTRY(18) ENTRY(19)
ENTRY(20) ENTRY(21) ENTRY(22) ENTRY(23) ENTRY(24) ENTRY(25) ENTRY(26) ENTRY(27) ENTRY(28) ENTRY(29)
ENTRY(30) ENTRY(31) ENTRY(32) ENTRY(33) ENTRY(34) ENTRY(35) ENTRY(36) ENTRY(37) ENTRY(38) ENTRY(39)
ENTRY(40) ENTRY(41) ENTRY(42)
#define E(i) { newctx_##i, get_params_##i }
static const struct {
    void *(*newctx)(void *);
    int (*get_params)(OSSL_PARAM *);
} entries[] = { E(0),  E(1),  E(2),  E(3),  E(4),  E(5),  E(6),  E(7),  E(8),  E(9),
                E(10), E(11), E(12), E(13), E(14), E(15), E(16), E(17), E(18), E(19),
                E(20), E(21), E(22), E(23), E(24), E(25), E(26), E(27), E(28), E(29),
                E(30), E(31), E(32), E(33), E(34), E(35), E(36), E(37), E(38), E(39),
                E(40), E(41), E(42) };
_Static_assert(sizeof(entries) / sizeof(entries[0]) == CCREE_NALGS, "one entry per algorithm");

#define MAX_FUNCTIONS 24
static OSSL_DISPATCH dispatch[CCREE_NALGS][MAX_FUNCTIONS];
static int dispatch_full; /* a table did not fit: the provider does not load */

/* One more function of algorithm i's table, leaving room for its terminator. */
static void put(size_t i, size_t *n, OSSL_DISPATCH f)
{
    if (*n + 1 < MAX_FUNCTIONS)
        dispatch[i][(*n)++] = f;
    else
        dispatch_full = 1;
}

/* Each algorithm's dispatch table: its operation's functions plus its own entry points. */
static void build_dispatch(void)
{
    static const int newctx_id[] = { OSSL_FUNC_CIPHER_NEWCTX, OSSL_FUNC_DIGEST_NEWCTX,
                                     OSSL_FUNC_MAC_NEWCTX };
    static const int get_params_id[] = { OSSL_FUNC_CIPHER_GET_PARAMS, OSSL_FUNC_DIGEST_GET_PARAMS,
                                         0 }; /* a MAC has no algorithm params */
    const OSSL_DISPATCH *ops[] = { ccree_cipher_functions, ccree_digest_functions,
                                   ccree_mac_functions };
    size_t i, n;

    for (i = 0; i < CCREE_NALGS; i++) {
        enum ccree_op op = ccree_op(i);
        const OSSL_DISPATCH *f = ccree_algs[i].kind == CCREE_AEAD ? ccree_aead_functions : ops[op];

        for (n = 0; f->function_id != 0; f++)
            put(i, &n, *f);
        if (op == CCREE_OP_MAC)
            for (f = ccree_under(i) == CCREE_OP_CIPHER ? ccree_cmac_settings : ccree_hmac_settings;
                 f->function_id != 0; f++)
                put(i, &n, *f);
        put(i, &n, (OSSL_DISPATCH){ newctx_id[op], (void (*)(void))entries[i].newctx });
        if (get_params_id[op] != 0)
            put(i, &n, (OSSL_DISPATCH){ get_params_id[op], (void (*)(void))entries[i].get_params });
    }
}

/*
 * Whether ccree offers row i to OpenSSL's fetches: where software has it too (the kernel may
 * refuse any request), and ccree offloads it (a MAC: any of its rows) or offer = all or
 * fallback = no (whose requests then fail with the reason). What it does not offer,
 * ?provider=ccree fetches from the other providers.
 */
static int offered(const struct ccree_prov *p, size_t i)
{
    size_t j;

    if (ccree_op(i) != CCREE_OP_MAC && p->sw_props[i] == NULL)
        return 0;
    if (p->offer_all || !p->fallback || p->path[i].offload)
        return 1;
    for (j = 0; ccree_op(i) == CCREE_OP_MAC && j < CCREE_NALGS; j++)
        if (p->path[j].offload && strcmp(ccree_algs[j].names, ccree_algs[i].names) == 0)
            return 1;
    return 0;
}

/* The algorithms offered; a MAC once, through its first row. */
static void build_lists(struct ccree_prov *p)
{
    size_t i, j, n[3] = { 0 };

    for (i = 0; i < CCREE_NALGS; i++) {
        enum ccree_op op = ccree_op(i);

        for (j = 0; op == CCREE_OP_MAC && j < i && strcmp(ccree_algs[j].names, ccree_algs[i].names);
             j++)
            ;
        if (!(p->listed[i] = (unsigned char)offered(p, i)) || (op == CCREE_OP_MAC && j < i))
            continue;
        p->lists[op][n[op]++] = (OSSL_ALGORITHM){ ccree_algs[i].names, "provider=ccree",
                                                  dispatch[i], NULL };
    }
}

static const OSSL_ALGORITHM *query(void *provctx, int id, int *no_cache)
{
    struct ccree_prov *p = provctx;

    *no_cache = 0;
    switch (id) {
    case OSSL_OP_CIPHER:
        return p->lists[CCREE_OP_CIPHER];
    case OSSL_OP_DIGEST:
        return p->lists[CCREE_OP_DIGEST];
    case OSSL_OP_MAC:
        return p->lists[CCREE_OP_MAC];
    }
    return NULL;
}

/*
 * offload-min = auto: one line per algorithm measured, tab-separated: its name, then a field
 * per size class measured, "BYTES:KERNEL_NS:SOFTWARE_NS" (BYTES the class's smallest size).
 */
static char *timings(const struct ccree_prov *p)
{
    size_t i, c, len = 0, cap = 128 * CCREE_NALGS * CCREE_CLASSES;
    char *s = OPENSSL_zalloc(cap), name[CCREE_NAME_MAX];

    for (i = 0; s != NULL && i < CCREE_NALGS; i++) {
        size_t start = len;

        len += snprintf(s + len, cap - len, "%s", ccree_name(i, name));
        for (c = 0; c < CCREE_CLASSES; c++) {
            uint32_t k = p->timing[i].ns[c][0], w = p->timing[i].ns[c][1];

            if (k != 0 || w != 0)
                len += snprintf(s + len, cap - len, "\t%zu:%u:%u", (size_t)1 << c, k, w);
        }
        if (len == start + strlen(name))
            s[len = start] = '\0'; /* nothing measured */
        else
            len += snprintf(s + len, cap - len, "\n");
    }
    return s;
}

/* One line per algorithm, tab-separated; the diagnostic tool and the tests read it. */
static char *report(const struct ccree_prov *p)
{
    size_t i, len = 0, cap = 1024 * CCREE_NALGS;
    char *s = OPENSSL_malloc(cap);

    for (i = 0; s != NULL && i < CCREE_NALGS; i++) {
        const struct ccree_path *pa = &p->path[i];
        const struct ccree_stats *st = &ccree_stats[i];
        const char *whose = p->listed[i] || p->sw_props[i] == NULL
                                ? "" : "; not offered (fetched from the other providers)";
        char name[CCREE_NAME_MAX];
        int n = snprintf(s + len, cap - len, "%s\t%s\t%s\t%s\t%s%s\t%llu\t%llu\t%llu\t%llu\n",
                         ccree_name(i, name), ccree_algs[i].kname, pa->offload ? "offload" : "software",
                         pa->driver[0] ? pa->driver : "-", pa->offload ? "-" : pa->reason, whose,
                         (unsigned long long)st->ops[0], (unsigned long long)st->bytes[0],
                         (unsigned long long)st->ops[1], (unsigned long long)st->bytes[1]);

        if (n < 0 || (size_t)n >= cap - len) {
            OPENSSL_free(s);
            return NULL;
        }
        len += n;
    }
    return s;
}

/* Sets p to the report s (NULL: out of memory) and frees s, malloc'ed by libc or by OpenSSL. */
static int set_text(OSSL_PARAM *p, char *s, int libc)
{
    int ok = s != NULL && OSSL_PARAM_set_utf8_string(p, s);

    if (libc)
        free(s);
    else
        OPENSSL_free(s);
    return ok;
}

static const OSSL_PARAM *gettable_params(void *provctx)
{
    static const OSSL_PARAM params[] = {
        OSSL_PARAM_DEFN(OSSL_PROV_PARAM_NAME, OSSL_PARAM_UTF8_PTR, NULL, 0),
        OSSL_PARAM_DEFN(OSSL_PROV_PARAM_VERSION, OSSL_PARAM_UTF8_PTR, NULL, 0),
        OSSL_PARAM_DEFN(OSSL_PROV_PARAM_BUILDINFO, OSSL_PARAM_UTF8_PTR, NULL, 0),
        OSSL_PARAM_DEFN(OSSL_PROV_PARAM_STATUS, OSSL_PARAM_INTEGER, NULL, 0),
        OSSL_PARAM_uint64("ccree-offload-ops", NULL),
        OSSL_PARAM_uint64("ccree-offload-bytes", NULL),
        OSSL_PARAM_uint64("ccree-fallback-ops", NULL),
        OSSL_PARAM_uint64("ccree-fallback-bytes", NULL),
        OSSL_PARAM_utf8_string("ccree-algorithms", NULL, 0),
        OSSL_PARAM_utf8_string("ccree-stats", NULL, 0),
        OSSL_PARAM_utf8_string("ccree-timings", NULL, 0),
        OSSL_PARAM_utf8_string("ccree-ktls", NULL, 0),
        OSSL_PARAM_END,
    };

    (void)provctx;
    return params;
}

static int provider_get_params(void *provctx, OSSL_PARAM params[])
{
    static const char *const counters[] = { "ccree-offload-ops", "ccree-offload-bytes",
                                            "ccree-fallback-ops", "ccree-fallback-bytes" };
    OSSL_PARAM *p;
    size_t c, i;

    if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_NAME)) != NULL
        && !OSSL_PARAM_set_utf8_ptr(p, "ccree: Arm CryptoCell through AF_ALG"))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_VERSION)) != NULL
        && !OSSL_PARAM_set_utf8_ptr(p, CCREE_VERSION))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_BUILDINFO)) != NULL
        && !OSSL_PARAM_set_utf8_ptr(p, "ccree " CCREE_VERSION ", built with " OPENSSL_VERSION_TEXT))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_STATUS)) != NULL && !OSSL_PARAM_set_int(p, 1))
        return 0;
    for (c = 0; c < 4; c++) {
        uint64_t sum = 0;

        if ((p = OSSL_PARAM_locate(params, counters[c])) == NULL)
            continue;
        for (i = 0; i < CCREE_NALGS; i++)
            sum += c % 2 ? ccree_stats[i].bytes[c / 2] : ccree_stats[i].ops[c / 2];
        if (!OSSL_PARAM_set_uint64(p, sum))
            return 0;
    }
    if ((p = OSSL_PARAM_locate(params, "ccree-stats")) != NULL) {
        const struct ccree_prov *pr = provctx;
        char where[512];

        ccree_stats_file(where, sizeof(where));
        if (where[0] == '\0')
            snprintf(where, sizeof(where), "%s%s%s", pr->stats_dir[0] ? pr->stats_dir : "off",
                     pr->stats_dir[0] ? ": " : "",
                     !pr->stats_dir[0] ? "" : pr->stats_err ? strerror(-pr->stats_err)
                                                            : "no file for this process");
        if (!OSSL_PARAM_set_utf8_string(p, where))
            return 0;
    }
    if ((p = OSSL_PARAM_locate(params, "ccree-timings")) != NULL && !set_text(p, timings(provctx), 0))
        return 0;
    if ((p = OSSL_PARAM_locate(params, "ccree-algorithms")) != NULL && !set_text(p, report(provctx), 0))
        return 0;
    if ((p = OSSL_PARAM_locate(params, "ccree-ktls")) != NULL
        && !set_text(p, ccree_ktls_report(&((const struct ccree_prov *)provctx)->drivers), 1))
        return 0;
    return 1;
}

static void teardown(void *provctx)
{
    struct ccree_prov *p = provctx;
    size_t i;

    for (i = 0; i < CCREE_NALGS; i++) {
        EVP_CIPHER_free(p->sw_evp_cipher[i]);
        EVP_MAC_free(p->sw_mac[i]);
    }
    ccree_pool_drop(p);
    OSSL_PROVIDER_unload(p->legacy);
    OSSL_PROVIDER_unload(p->deflt);
    OSSL_LIB_CTX_free(p->libctx);
    OPENSSL_free(p);
}

static const OSSL_DISPATCH provider_functions[] = {
    { OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))teardown },
    { OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, (void (*)(void))gettable_params },
    { OSSL_FUNC_PROVIDER_GET_PARAMS, (void (*)(void))provider_get_params },
    { OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))query },
    { OSSL_FUNC_PROVIDER_GET_REASON_STRINGS, (void (*)(void))ccree_reason_strings },
    { 0, NULL },
};

/* The dispatch table of operation op's name in provider prov, or NULL. */
static const OSSL_DISPATCH *sw_dispatch(OSSL_PROVIDER *prov, int op, const char *name)
{
    const OSSL_ALGORITHM *all, *a;
    const OSSL_DISPATCH *d = NULL;
    size_t n = strlen(name), k;
    const char *s;
    int no_cache;

    if ((all = OSSL_PROVIDER_query_operation(prov, op, &no_cache)) == NULL)
        return NULL;
    for (a = all; d == NULL && a->algorithm_names != NULL; a++)
        for (s = a->algorithm_names; d == NULL; s += k + 1) {
            k = strcspn(s, ":");
            if (k == n && strncasecmp(s, name, n) == 0)
                d = a->implementation;
            else if (s[k] == '\0')
                break;
        }
    OSSL_PROVIDER_unquery_operation(prov, op, all);
    return d;
}

/* A function the software implementation must have: its id, and where our table keeps it. */
struct sw_function {
    int id;
    size_t at;
};

static const struct sw_function digest_functions[] = {
    { OSSL_FUNC_DIGEST_NEWCTX, offsetof(struct ccree_sw_digest, newctx) },
    { OSSL_FUNC_DIGEST_INIT, offsetof(struct ccree_sw_digest, init) },
    { OSSL_FUNC_DIGEST_UPDATE, offsetof(struct ccree_sw_digest, update) },
    { OSSL_FUNC_DIGEST_FINAL, offsetof(struct ccree_sw_digest, final) },
    { OSSL_FUNC_DIGEST_DUPCTX, offsetof(struct ccree_sw_digest, dupctx) },
    { OSSL_FUNC_DIGEST_FREECTX, offsetof(struct ccree_sw_digest, freectx) },
    { 0, 0 },
};
static const struct sw_function cipher_functions[] = {
    { OSSL_FUNC_CIPHER_NEWCTX, offsetof(struct ccree_sw_cipher, newctx) },
    { OSSL_FUNC_CIPHER_ENCRYPT_INIT, offsetof(struct ccree_sw_cipher, einit) },
    { OSSL_FUNC_CIPHER_DECRYPT_INIT, offsetof(struct ccree_sw_cipher, dinit) },
    { OSSL_FUNC_CIPHER_UPDATE, offsetof(struct ccree_sw_cipher, update) },
    { OSSL_FUNC_CIPHER_CIPHER, offsetof(struct ccree_sw_cipher, cipher) },
    { OSSL_FUNC_CIPHER_FINAL, offsetof(struct ccree_sw_cipher, final) },
    { OSSL_FUNC_CIPHER_GET_CTX_PARAMS, offsetof(struct ccree_sw_cipher, get_ctx_params) },
    { OSSL_FUNC_CIPHER_SET_CTX_PARAMS, offsetof(struct ccree_sw_cipher, set_ctx_params) },
    { OSSL_FUNC_CIPHER_DUPCTX, offsetof(struct ccree_sw_cipher, dupctx) },
    { OSSL_FUNC_CIPHER_FREECTX, offsetof(struct ccree_sw_cipher, freectx) },
    { 0, 0 },
};

/*
 * The functions of operation op's name in the software provider of props, into table, and
 * that provider's context: 1, or 0 if one is missing.
 */
static int sw_functions(struct ccree_prov *p, int op, const char *name, const char *props,
                        const struct sw_function *want, void *table, void **provctx)
{
    OSSL_PROVIDER *prov = strcmp(props, "provider=legacy") == 0 ? p->legacy : p->deflt;
    const OSSL_DISPATCH *d = sw_dispatch(prov, op, name);
    size_t i, missing = 0;

    for (i = 0; want[i].id != 0; i++)
        missing++;
    for (; d != NULL && d->function_id != 0; d++)
        for (i = 0; want[i].id != 0; i++)
            if (d->function_id == want[i].id) {
                memcpy((char *)table + want[i].at, &d->function, sizeof(d->function));
                missing--;
            }
    *provctx = OSSL_PROVIDER_get0_provider_ctx(prov);
    return missing == 0;
}

/* Whether software refuses its AEAD IV length given twice in one set_params (asked once). */
static int refuses_repeats(EVP_CIPHER *sw, size_t ivlen)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    OSSL_PARAM twice[] = { OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &ivlen),
                           OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &ivlen), OSSL_PARAM_END };
    int refuses;

    ERR_set_mark();
    refuses = ctx != NULL && EVP_EncryptInit_ex2(ctx, sw, NULL, NULL, NULL)
              && EVP_CIPHER_CTX_set_params(ctx, twice) <= 0;
    ERR_pop_to_mark();
    EVP_CIPHER_CTX_free(ctx);
    return refuses;
}

/* Whether software's CCM final checks the tag of a decryption whose data never came. */
static int final_seals_empty(EVP_CIPHER *sw)
{
    static const unsigned char zero[32];
    unsigned char out[16];
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    OSSL_PARAM tag[] = { OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, (void *)zero, 16),
                         OSSL_PARAM_END };
    int n, checks;

    ERR_set_mark();
    checks = ctx != NULL && EVP_DecryptInit_ex2(ctx, sw, NULL, NULL, tag)
             && EVP_DecryptInit_ex2(ctx, NULL, zero, zero, NULL) && !EVP_DecryptFinal_ex(ctx, out, &n);
    ERR_pop_to_mark();
    EVP_CIPHER_CTX_free(ctx);
    return checks;
}

/*
 * The software implementations, in a child library context: the default provider's, and the
 * legacy provider's for single DES. An algorithm without one is not offered.
 */
static int load_software(struct ccree_prov *p, const OSSL_DISPATCH *in)
{
    size_t i;

    /* The child's DRBG (randomness for TLS records) would otherwise fetch ccree's own AES. */
    if ((p->libctx = OSSL_LIB_CTX_new_child(p->handle, in)) == NULL
        || (p->deflt = OSSL_PROVIDER_load(p->libctx, "default")) == NULL
        || !RAND_set_DRBG_type(p->libctx, NULL, "provider=default", NULL, NULL))
        return 0;
    ERR_set_mark();
    p->legacy = OSSL_PROVIDER_load(p->libctx, "legacy");
    ERR_pop_to_mark();
    for (i = 0; i < CCREE_NALGS; i++) {
        const struct ccree_alg *a = &ccree_algs[i];
        enum ccree_op op = ccree_op(i);
        char name[CCREE_NAME_MAX];

        if (op == CCREE_OP_MAC) {
            p->sw_props[i] = ccree_software(p, ccree_under(i), a->under);
            if ((p->sw_mac[i] = EVP_MAC_fetch(p->libctx, a->names, "provider=default")) == NULL)
                return 0;
            continue;
        }
        ccree_name(i, name);
        if ((p->sw_props[i] = ccree_software(p, op, name)) == NULL) {
            p->path[i].offload = 0;
            snprintf(p->path[i].reason, sizeof(p->path[i].reason),
                     "not offered: no software implementation (default or legacy provider)");
        } else if (op == CCREE_OP_DIGEST
                       ? !sw_functions(p, OSSL_OP_DIGEST, name, p->sw_props[i], digest_functions,
                                       &p->sw_digest[i], &p->sw_digest[i].provctx)
                       : (p->sw_evp_cipher[i] = EVP_CIPHER_fetch(p->libctx, name, p->sw_props[i])) == NULL
                             || !sw_functions(p, OSSL_OP_CIPHER, name, p->sw_props[i],
                                              cipher_functions, &p->sw_cipher[i],
                                              &p->sw_cipher[i].provctx)) {
            return 0;
        }
        if (p->sw_evp_cipher[i] != NULL && a->kind == CCREE_AEAD)
            p->sw_refuses_repeats[i] = refuses_repeats(p->sw_evp_cipher[i], a->ivlen);
        if (p->sw_evp_cipher[i] != NULL && a->mode == EVP_CIPH_CCM_MODE)
            p->sw_final_seals_empty[i] = final_seals_empty(p->sw_evp_cipher[i]);
    }
    return 1;
}

int OSSL_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                       const OSSL_DISPATCH **out, void **provctx)
{
    static CRYPTO_ONCE once = CRYPTO_ONCE_STATIC_INIT;
    const OSSL_DISPATCH *f;
    struct ccree_prov *p;

    for (f = in; f->function_id != 0; f++)
        if (f->function_id == OSSL_FUNC_CORE_GET_PARAMS)
            core_get_params = OSSL_FUNC_core_get_params(f);
    ccree_errors_init(in);
    if ((p = OPENSSL_zalloc(sizeof(*p))) == NULL)
        return 0;
    p->handle = handle;
    if (!ccree_read_config(handle, core_get_params, p)) {
        teardown(p);
        return 0;
    }
    ccree_ident(&p->ident);
    ccree_discover(&p->drivers, p->path);
    if (!CRYPTO_THREAD_run_once(&once, build_dispatch) || dispatch_full || !ccree_fork_setup()
        || !load_software(p, in)) {
        CCREE_RAISE(p, CCREE_R_SOFTWARE, "cannot set up the dispatch tables, the default provider or fork handling");
        teardown(p);
        return 0;
    }
    ccree_selftest(p);
    build_lists(p);
    if (p->stats_dir[0] != '\0')
        p->stats_err = ccree_stats_open(p->stats_dir, p->path);
    *out = provider_functions;
    *provctx = p;
    return 1;
}
