/*
 * testutil.h - small helpers for the ccree provider tests.
 *
 *  - a fixed-seed PRNG (splitmix64) so sizes/chunkings are reproducible,
 *  - chunking generator and hex/chunk printers for failure reports,
 *  - a search of the error queue, and the rule for a subject's errors,
 *  - a log of calls for failure reports,
 *  - readers for the ccree provider counters ("ccree-offload-ops", ...)
 *    and a parser for the "ccree-algorithms" table, and one algorithm's line of it,
 *  - the counter rule every test applies to the work it sends through an algorithm.
 *
 * Header-only; everything is static inline (no unused-function warnings).
 */
#ifndef CCREE_TESTUTIL_H
#define CCREE_TESTUTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

/* ------------------------------------------------------------------ */
/* PRNG                                                                 */
/* ------------------------------------------------------------------ */

typedef struct {
    uint64_t s;
} tu_rng;

static inline void tu_rng_seed(tu_rng *r, uint64_t seed)
{
    r->s = seed;
}

static inline uint64_t tu_rng_next(tu_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* uniform in [lo, hi] (inclusive) */
static inline size_t tu_rng_range(tu_rng *r, size_t lo, size_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (size_t)(tu_rng_next(r) % (uint64_t)(hi - lo + 1));
}

static inline void tu_rng_fill(tu_rng *r, unsigned char *buf, size_t n)
{
    while (n > 0) {
        uint64_t v = tu_rng_next(r);
        size_t k = n < 8 ? n : 8;

        memcpy(buf, &v, k);
        buf += k;
        n -= k;
    }
}

/* mix a few integers into a seed (for per-test / per-algorithm streams) */
static inline uint64_t tu_seed_mix(uint64_t seed, uint64_t a, uint64_t b)
{
    tu_rng r;

    tu_rng_seed(&r, seed ^ (a * 0x100000001b3ULL) ^ (b << 32) ^ b);
    return tu_rng_next(&r);
}

/*
 * Split `total` bytes into chunks written to chunks[0..n). Returns n.
 * Each chunk is 0..max_chunk bytes; the mix favours small (0..17, around
 * block boundaries) chunks but includes medium and large ones. The last
 * chunk absorbs whatever remains once max_chunks-1 chunks are used, so
 * it may exceed max_chunk; callers that care pass a large enough
 * max_chunks.
 */
static inline size_t tu_chunking(tu_rng *r, size_t total, size_t max_chunk,
                          size_t *chunks, size_t max_chunks)
{
    size_t n = 0, left = total;
    /* per-chunking bias: 0 = many tiny, 1 = mixed, 2 = mostly large */
    unsigned style = (unsigned)(tu_rng_next(r) % 3);

    while (left > 0 && n + 1 < max_chunks) {
        unsigned pick = (unsigned)(tu_rng_next(r) % 100);
        size_t c;

        if (style == 0)
            pick = pick / 2;                  /* shift towards small */
        else if (style == 2)
            pick = 50 + pick / 2;             /* shift towards large */

        if (pick < 5)
            c = 0;
        else if (pick < 35)
            c = tu_rng_range(r, 1, 17);
        else if (pick < 55)
            c = tu_rng_range(r, 1, 64);
        else if (pick < 80)
            c = tu_rng_range(r, 65, 4096);
        else
            c = tu_rng_range(r, 4097, max_chunk);
        if (c > max_chunk)
            c = max_chunk;
        if (c > left)
            c = left;
        chunks[n++] = c;
        left -= c;
    }
    if (left > 0 || n == 0)
        chunks[n++] = left;
    return n;
}

static inline void tu_print_chunks(FILE *f, const size_t *chunks, size_t n)
{
    size_t i, shown = n > 48 ? 48 : n;

    fprintf(f, "chunking (%zu chunks): [", n);
    for (i = 0; i < shown; i++)
        fprintf(f, "%s%zu", i ? "," : "", chunks[i]);
    if (shown < n)
        fprintf(f, ",... (%zu more)", n - shown);
    fprintf(f, "]\n");
}

static inline void tu_hex(FILE *f, const char *label, const unsigned char *b,
                   size_t n)
{
    size_t i, shown = n > 64 ? 64 : n;

    fprintf(f, "%s (%zu bytes): ", label, n);
    for (i = 0; i < shown; i++)
        fprintf(f, "%02x", b[i]);
    if (shown < n)
        fprintf(f, "...");
    fprintf(f, "\n");
}

static inline int tu_unhex(const char *hex, unsigned char *out, size_t outlen)
{
    size_t i;

    if (strlen(hex) != 2 * outlen)
        return 0;
    for (i = 0; i < outlen; i++) {
        unsigned v;

        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return 0;
        out[i] = (unsigned char)v;
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* errors                                                               */
/* ------------------------------------------------------------------ */

/* The errors on the queue (their library and reason), taken off it. */
typedef struct {
    int n;
    unsigned long e[16];
} tu_errs;

static inline void tu_take_errors(tu_errs *x)
{
    unsigned long e;

    x->n = 0;
    while ((e = ERR_get_error()) != 0)
        if (x->n < 16)
            x->e[x->n++] = ERR_PACK(ERR_GET_LIB(e), 0, ERR_GET_REASON(e));
}

/* The errors taken off the queue into x; 1 if one's reason or text says want ("": any error). */
static inline int tu_take_errors_say(tu_errs *x, const char *want)
{
    const char *data, *reason;
    unsigned long e;
    int flags, found = 0;

    x->n = 0;
    while ((e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags)) != 0) {
        if (x->n < 16)
            x->e[x->n++] = ERR_PACK(ERR_GET_LIB(e), 0, ERR_GET_REASON(e));
        if (((flags & ERR_TXT_STRING) && strstr(data, want) != NULL)
            || ((reason = ERR_reason_error_string(e)) != NULL && strstr(reason, want) != NULL))
            found = 1;
    }
    return *want == '\0' ? x->n > 0 : found;
}

/* Whether an error on the queue has want in its text or reason string (any error when want
 * is ""); clears the queue. */
static inline int tu_error_says(const char *want)
{
    tu_errs x;

    return tu_take_errors_say(&x, want);
}

/* Both cipher contexts of a lockstep pair replaced by copies of themselves; 0 if one failed. */
static inline int tu_copy_both(EVP_CIPHER_CTX *ctx[2])
{
    int i;

    for (i = 0; i < 2; i++) {
        EVP_CIPHER_CTX *d = EVP_CIPHER_CTX_new();

        if (d == NULL || EVP_CIPHER_CTX_copy(d, ctx[i]) != 1) {
            EVP_CIPHER_CTX_free(d);
            return 0;
        }
        EVP_CIPHER_CTX_free(ctx[i]);
        ctx[i] = d;
    }
    return 1;
}

/* One call on each side of a lockstep pair (the body sees the side as i), its errors in e[i]. */
#define TU_BOTH(i, e, ...)                                                                         \
    do {                                                                                           \
        for ((i) = 0; (i) < 2; (i)++) {                                                            \
            ERR_clear_error();                                                                     \
            __VA_ARGS__;                                                                           \
            tu_take_errors(&(e)[i]);                                                               \
        }                                                                                          \
    } while (0)

/* Whether one of the errors in x is ccree's own. */
static inline int tu_ccree_raised(const tu_errs *x)
{
    const char *lib;
    int i;

    for (i = 0; i < x->n; i++)
        if ((lib = ERR_lib_error_string(x->e[i])) != NULL && strcmp(lib, "ccree") == 0)
            return 1;
    return 0;
}

/*
 * Whether a subject's failure shows as it must, next to the oracle's failure of the same call:
 * with ccree's error, or with exactly the oracle's errors (raised by libcrypto before any
 * provider, or passed on from the default provider); ccree never fails silently. Another
 * subject (the test checking itself) must give exactly the oracle's errors.
 */
static inline int tu_failure_ok(const char *subject, const tu_errs *s, const tu_errs *o)
{
    int i, ccree = strcmp(subject, "ccree") == 0;

    if (ccree && tu_ccree_raised(s))
        return 1;
    if (s->n != o->n || (ccree && s->n == 0))
        return 0;
    for (i = 0; i < s->n; i++)
        if (s->e[i] != o->e[i])
            return 0;
    return 1;
}

/*
 * What a differential test reads from its environment: the subject provider
 * (CCREE_TEST_SUBJECT, default ccree; loaded here when it is ccree, for its counters), the
 * property query that fetches from it, and the seed (CCREE_TEST_SEED). 0 when ccree does not
 * load.
 */
static inline int tu_subject(const char **subject, OSSL_PROVIDER **prov, char props[64],
                             uint64_t *seed)
{
    const char *s = getenv("CCREE_TEST_SUBJECT");

    if (s != NULL && *s != '\0')
        *subject = s;
    if ((s = getenv("CCREE_TEST_SEED")) != NULL)
        *seed = strtoull(s, NULL, 0);
    snprintf(props, 64, "provider=%s", *subject);
    *prov = NULL;
    if (strcmp(*subject, "ccree") == 0 && (*prov = OSSL_PROVIDER_load(NULL, "ccree")) == NULL) {
        ERR_print_errors_fp(stderr);
        return 0;
    }
    printf("subject %s, seed %llu\n", *subject, (unsigned long long)*seed);
    return 1;
}

/* A log of the calls a test made, for its failure report. */
typedef struct {
    char s[4096];
    size_t n;
} tu_log;

static inline void tu_note(tu_log *l, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    if (l->n < sizeof(l->s) - 128)
        l->n += (size_t)vsnprintf(l->s + l->n, sizeof(l->s) - l->n, fmt, ap);
    va_end(ap);
}


/* ------------------------------------------------------------------ */
/* ccree provider counters                                              */
/* ------------------------------------------------------------------ */

typedef struct {
    uint64_t offload_ops, offload_bytes, fallback_ops, fallback_bytes;
} tu_totals;

typedef struct {
    char name[64];
    char kname[128];
    char state[16];
    char driver[128];
    char reason[512];
    uint64_t offload_ops, offload_bytes, fallback_ops, fallback_bytes;
    long long sim_messages; /* the simulated CryptoCell's count for driver (test/ccsim), or -1 */
} tu_alg_info;

/* A counter of the simulated CryptoCell's driver (debugfs); -1 when it is none of its drivers. */
static inline long long tu_ccsim_counter(const char *driver, const char *name)
{
    char path[256], line[64];
    long long v = -1, n;
    FILE *f;

    if (strstr(driver, "-ccree") == NULL)
        return -1;
    snprintf(path, sizeof(path), "/sys/kernel/debug/ccsim/%s", driver);
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ' '
            && sscanf(line + strlen(name), "%lld", &n) == 1)
            v = n;
    fclose(f);
    return v;
}

/* Returns 1 if all four counters were returned by the provider. */
static inline int tu_get_totals(OSSL_PROVIDER *prov, tu_totals *t)
{
    OSSL_PARAM p[5];

    memset(t, 0, sizeof(*t));
    p[0] = OSSL_PARAM_construct_uint64("ccree-offload-ops", &t->offload_ops);
    p[1] = OSSL_PARAM_construct_uint64("ccree-offload-bytes",
                                       &t->offload_bytes);
    p[2] = OSSL_PARAM_construct_uint64("ccree-fallback-ops",
                                       &t->fallback_ops);
    p[3] = OSSL_PARAM_construct_uint64("ccree-fallback-bytes",
                                       &t->fallback_bytes);
    p[4] = OSSL_PARAM_construct_end();
    if (!OSSL_PROVIDER_get_params(prov, p))
        return 0;
    return OSSL_PARAM_modified(&p[0]) && OSSL_PARAM_modified(&p[1])
        && OSSL_PARAM_modified(&p[2]) && OSSL_PARAM_modified(&p[3]);
}

/* Returns a malloc'ed NUL-terminated copy of the provider's string param name, or NULL. */
static inline char *tu_get_string(OSSL_PROVIDER *prov, const char *name)
{
    OSSL_PARAM p[2];
    size_t len;
    char *buf;

    p[0] = OSSL_PARAM_construct_utf8_string(name, NULL, 0);
    p[1] = OSSL_PARAM_construct_end();
    if (!OSSL_PROVIDER_get_params(prov, p) || !OSSL_PARAM_modified(&p[0]))
        return NULL;
    len = p[0].return_size;
    buf = calloc(1, len + 1);
    if (buf == NULL)
        return NULL;
    p[0] = OSSL_PARAM_construct_utf8_string(name, buf, len + 1);
    if (!OSSL_PROVIDER_get_params(prov, p) || p[0].return_size > len) {
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

static inline int tu_copy_field(char *dst, size_t dstsz, const char *s, size_t n,
                         int may_truncate)
{
    if (n >= dstsz) {
        if (!may_truncate)
            return 0;
        n = dstsz - 1;
    }
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 1;
}

static inline int tu_parse_u64(const char *s, size_t n, uint64_t *v)
{
    char tmp[32], *end;
    unsigned long long x;

    if (n == 0 || n >= sizeof(tmp))
        return 0;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    if (tmp[0] < '0' || tmp[0] > '9')
        return 0;
    errno = 0;
    x = strtoull(tmp, &end, 10);
    if (errno != 0 || *end != '\0')
        return 0;
    *v = (uint64_t)x;
    return 1;
}

/*
 * Parse one table line (without its '\n'):
 * name TAB kname TAB state TAB driver TAB reason TAB oops TAB obytes TAB
 * fops TAB fbytes. Returns 1 on success, 0 if malformed.
 */
static inline int tu_parse_alg_line(const char *line, size_t len, tu_alg_info *a)
{
    const char *f[9];
    size_t flen[9];
    size_t i, nf = 0, start = 0;

    memset(a, 0, sizeof(*a));
    for (i = 0; i <= len; i++) {
        if (i == len || line[i] == '\t') {
            if (nf == 9)
                return 0;                     /* too many fields */
            f[nf] = line + start;
            flen[nf] = i - start;
            nf++;
            start = i + 1;
        }
    }
    if (nf != 9)
        return 0;
    if (flen[0] == 0 || flen[2] == 0)
        return 0;
    if (!tu_copy_field(a->name, sizeof(a->name), f[0], flen[0], 0)
        || !tu_copy_field(a->kname, sizeof(a->kname), f[1], flen[1], 1)
        || !tu_copy_field(a->state, sizeof(a->state), f[2], flen[2], 0)
        || !tu_copy_field(a->driver, sizeof(a->driver), f[3], flen[3], 1)
        || !tu_copy_field(a->reason, sizeof(a->reason), f[4], flen[4], 1))
        return 0;
    if (strcmp(a->state, "offload") != 0 && strcmp(a->state, "software") != 0)
        return 0;
    return tu_parse_u64(f[5], flen[5], &a->offload_ops)
        && tu_parse_u64(f[6], flen[6], &a->offload_bytes)
        && tu_parse_u64(f[7], flen[7], &a->fallback_ops)
        && tu_parse_u64(f[8], flen[8], &a->fallback_bytes);
}

/*
 * Find `name` in the table. Returns 1 if found (and parsed), 0 if absent,
 * -1 if any line of the table is malformed (so a broken table can't pass).
 * *errline (optional) gets the 1-based number of the bad line.
 */
static inline int tu_find_alg(const char *table, const char *name, tu_alg_info *out,
                       int *errline)
{
    const char *p = table;
    int lineno = 0, found = 0;

    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        tu_alg_info a;

        lineno++;
        if (nl == NULL || !tu_parse_alg_line(p, len, &a)) {
            /* every line, including the last, must end in '\n' */
            if (errline != NULL)
                *errline = lineno;
            return -1;
        }
        if (strcmp(a.name, name) == 0) {
            if (found) {                      /* duplicate entry */
                if (errline != NULL)
                    *errline = lineno;
                return -1;
            }
            *out = a;
            found = 1;
        }
        p = nl + 1;
    }
    if (found)
        out->sim_messages = tu_ccsim_counter(out->driver, "messages");
    return found;
}

/* One algorithm's line of the provider's table; a missing table or line ends the test run. */
static inline tu_alg_info tu_alg(OSSL_PROVIDER *prov, const char *name)
{
    char *table = tu_get_string(prov, "ccree-algorithms");
    tu_alg_info a;
    int found = table != NULL && tu_find_alg(table, name, &a, NULL) == 1;

    free(table);
    if (!found) {
        fprintf(stderr, "%s is not in ccree's ccree-algorithms table\n", name);
        exit(1);
    }
    return a;
}

/* ------------------------------------------------------------------ */
/* the counter rule                                                     */
/* ------------------------------------------------------------------ */

static inline int tu_env_is_1(const char *name)
{
    const char *e = getenv(name);

    return e != NULL && strcmp(e, "1") == 0;
}

/* CCREE_REQUIRE_OFFLOAD=1: the VM's run (drivers = any, offload-min = 0). */
static inline int tu_require_offload(void)
{
    return tu_env_is_1("CCREE_REQUIRE_OFFLOAD");
}

/*
 * Why the kernel forbids offloading this algorithm (Linux 7.3's af_alg_restrict refused its
 * bind), or NULL: a test that needs offload skips it, saying so. Never with
 * CCREE_REQUIRE_OFFLOAD=1, where offload must be shown.
 */
static inline const char *tu_kernel_forbids(const tu_alg_info *a)
{
    if (tu_require_offload() || strcmp(a->state, "software") != 0
        || strstr(a->reason, "af_alg_restrict = ") == NULL)
        return NULL;
    return a->reason;
}

/*
 * Whether /proc/crypto has an implementation named kname whose driver the test
 * configurations' drivers (CCREE_TEST_DRIVERS: any, or one suffix such as ccree) accept.
 */
static inline int tu_kernel_lists(const char *kname)
{
    FILE *f = fopen("/proc/crypto", "re");
    const char *want = CCREE_TEST_DRIVERS;
    char line[256], key[32], val[160];
    int named = 0, found = 0;
    size_t n, w = strlen(want);

    if (f == NULL)
        return 0;
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "%31s : %159[^\n]", key, val) != 2)
            continue;
        if (strcmp(key, "name") == 0)
            named = strcmp(val, kname) == 0;
        else if (named && strcmp(key, "driver") == 0)
            found = strcmp(want, "any") == 0
                    || ((n = strlen(val)) > w && val[n - w - 1] == '-'
                        && strcmp(val + n - w, want) == 0);
    }
    fclose(f);
    return found;
}

/*
 * The state an algorithm must be in. With CCREE_REQUIRE_OFFLOAD=1 that is "offload" where
 * /proc/crypto lists its kernel name, else "software", which is then said once per algorithm
 * (offload cannot be shown for what the kernel lacks). Without it, the state ccree reports.
 */
static inline const char *tu_expected_state(const tu_alg_info *a)
{
    static char said[4096];
    char tag[80];

    if (!tu_require_offload())
        return a->state;
    if (tu_kernel_lists(a->kname))
        return "offload";
    snprintf(tag, sizeof(tag), "|%s|", a->name);
    if (strstr(said, tag) == NULL && strlen(said) + strlen(tag) < sizeof(said)) {
        strcat(said, tag);
        printf("offload could not be shown for %s: no %s in /proc/crypto for drivers = %s "
               "(ccree: %s)\n", a->name, a->kname, CCREE_TEST_DRIVERS, a->reason);
        fflush(stdout);
    }
    return "software";
}

/*
 * The counter rule for work a test sent through one algorithm between two readings of its
 * line: the algorithm is in its expected state, and its ops grew on that path only. small:
 * some calls were below offload-min, which an offloaded algorithm serves in software unless
 * offload is required (offload-min = 0). Under offload-min = auto (CCREE_TEST_AUTO=1) every
 * call may be: the path of a size is what the provider measured faster (on the simulated
 * CryptoCell, whose work is the CPU's behind a worker, software at every size). On a driver of
 * the simulated CryptoCell, its count of messages grew as the kernel ops did. Returns 1, or
 * prints what is wrong and returns 0.
 */
static inline int tu_counter_rule(const tu_alg_info *before, const tu_alg_info *after, int small)
{
    const char *want = tu_expected_state(after);
    uint64_t oo = after->offload_ops - before->offload_ops;
    uint64_t ob = after->offload_bytes - before->offload_bytes;
    uint64_t fo = after->fallback_ops - before->fallback_ops;
    const char *bad = NULL;

    if (strcmp(after->state, want) != 0 || strcmp(before->state, after->state) != 0)
        bad = "wrong state";
    else if (after->offload_ops < before->offload_ops || after->offload_bytes < before->offload_bytes
             || after->fallback_ops < before->fallback_ops
             || after->fallback_bytes < before->fallback_bytes)
        bad = "a counter went backwards";
    else if (before->sim_messages >= 0 && after->sim_messages >= 0
             && (uint64_t)(after->sim_messages - before->sim_messages) != oo)
        bad = "the simulated CryptoCell counted other messages than the kernel ops";
    else if (strcmp(want, "software") == 0)
        bad = fo == 0 ? "no software op" : oo + ob != 0 ? "kernel ops in state software" : NULL;
    else if ((small || tu_env_is_1("CCREE_TEST_AUTO")) && !tu_require_offload())
        bad = oo + fo == 0 ? "no op counted" : NULL;
    else if (oo == 0 || ob == 0)
        bad = "no kernel op";
    else if (tu_require_offload() && fo != 0)
        bad = "software ops where offload is required";
    if (bad == NULL)
        return 1;
    fprintf(stderr, "%s: %s (state %s, expected %s, driver '%s', reason '%s'; kernel ops +%llu, "
            "software ops +%llu, simulated CryptoCell's messages +%lld)\n", after->name, bad,
            after->state, want, after->driver, after->reason, (unsigned long long)oo,
            (unsigned long long)fo, after->sim_messages - before->sim_messages);
    return 0;
}

#endif /* CCREE_TESTUTIL_H */
