/*
 * HMAC and CMAC against the default provider, in lockstep: every digest and cipher ccree
 * offloads and some it does not (those run in software, with the default provider's result);
 * keys of every length HMAC takes, messages of 0 to 300000 bytes (CMAC: 65537) in random
 * chunks, copies (EVP_MAC_CTX_dup) at random points with both copies going on, re-init with
 * the same key and with a new one, the key given to init or as a parameter, the size and
 * block-size parameters after every step, the digest or cipher changed after the key, aliases
 * and properties; each MAC also against a fresh context of the default provider. Then
 * bad input (use before a key, NULL buffers, unknown and unfit digests and ciphers, wrong CMAC
 * key lengths, malformed parameters): every return, length and output compared, and every
 * failure of ccree carrying ccree's error (tu_failure_ok). Last, the counter rule
 * (tu_counter_rule) for each row ccree offloads.
 *
 * Environment: OPENSSL_CONF (ccree and default active), CCREE_TEST_SUBJECT (another provider
 * as the subject, e.g. "default" to check the test itself: no counters), CCREE_REQUIRE_OFFLOAD,
 * CCREE_TEST_SEED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "lockstep.h"

#define MAXLEN 300000
#define CMAC_MAXLEN 65537 /* the default provider's CMAC calls its cipher per block: slow in TCG */
#define MAXCHUNK 70000
#define MAXCHUNKS 1024

struct mac {
    const char *row;   /* its line in ccree-algorithms; NULL: ccree runs it in software */
    const char *mac;   /* "HMAC" or "CMAC" */
    const char *alg;   /* the digest or cipher */
    const char *alias; /* another name of alg */
    size_t keylen;     /* CMAC: the cipher's key length; HMAC: 0, any length */
};

static const struct mac macs[] = {
    { "HMAC-SHA1", "HMAC", "SHA1", "SHA-1", 0 },
    { "HMAC-SHA2-224", "HMAC", "SHA2-224", "SHA224", 0 },
    { "HMAC-SHA2-256", "HMAC", "SHA2-256", "sha256", 0 },
    { "HMAC-SHA2-384", "HMAC", "SHA2-384", "SHA-384", 0 },
    { "HMAC-SHA2-512", "HMAC", "SHA2-512", "2.16.840.1.101.3.4.2.3", 0 },
    { "HMAC-MD5", "HMAC", "MD5", "md5", 0 },
    { NULL, "HMAC", "SHA3-256", "sha3-256", 0 },
    { NULL, "HMAC", "SHA2-512/256", "SHA512-256", 0 },
    { NULL, "HMAC", "SM3", "sm3", 0 },
    { "CMAC-AES-128-CBC", "CMAC", "AES-128-CBC", "aes128", 16 },
    { "CMAC-AES-192-CBC", "CMAC", "AES-192-CBC", "AES192", 24 },
    { "CMAC-AES-256-CBC", "CMAC", "AES-256-CBC", "aes-256-cbc", 32 },
    { NULL, "CMAC", "DES-EDE3-CBC", "DES3", 24 },
    { NULL, "CMAC", "SM4-CBC", "SM4", 16 },
    { NULL, "CMAC", "CAMELLIA-256-CBC", "camellia256", 32 },
};
#define NMACS (sizeof(macs) / sizeof(macs[0]))

/* HMAC keys: empty, short, the block of SHA-256 (64) and of SHA-512 (128), a byte more, longer */
static const size_t keylens[] = { 0, 1, 16, 64, 65, 128, 129, 200 };
#define NKEYLENS (sizeof(keylens) / sizeof(keylens[0]))
/* around the blocks of the digests (64, 128) and of 16 KiB, past 64 KiB, the longest */
static const size_t lens[] = { 0,   1,   15,  16,  17,   55,   56,    63,    64,    65,    127,
                               128, 129, 255, 1000, 4096, 16383, 16384, 16385, 65537, MAXLEN };
#define NLENS (sizeof(lens) / sizeof(lens[0]))

static const char *subject = "ccree";
static int counters; /* the subject is ccree */
static OSSL_PROVIDER *prov;
static uint64_t seed = 1;
static unsigned char *data; /* 2 * MAXLEN seeded bytes */
static EVP_MAC *evp_mac[2][2]; /* [HMAC, CMAC][subject, oracle] */
static unsigned long compared;

static int is_cmac(const struct mac *m)
{
    return strcmp(m->mac, "CMAC") == 0;
}

static const char *alg_param(const struct mac *m)
{
    return is_cmac(m) ? OSSL_MAC_PARAM_CIPHER : OSSL_MAC_PARAM_DIGEST;
}

/* --- the lockstep pair ------------------------------------------------------------------------ */

/* The subject and the oracle side by side. */
struct pair {
    tu_pair t;
    EVP_MAC_CTX *ctx[2];
};

static void pair_open(struct pair *p, const struct mac *m)
{
    int i, k = is_cmac(m);

    memset(p, 0, sizeof(*p));
    p->t = (tu_pair){ .subject = subject, .seed = seed, .compared = &compared };
    for (i = 0; i < 2; i++) {
        p->ctx[i] = EVP_MAC_CTX_new(evp_mac[k][i]);
        assert_non_null(p->ctx[i]);
    }
    tu_note(&p->t.log, "%s(%s):", m->mac, m->alg);
}

static void pair_close(struct pair *p)
{
    EVP_MAC_CTX_free(p->ctx[0]);
    EVP_MAC_CTX_free(p->ctx[1]);
    ERR_clear_error();
}

static int both_init(struct pair *p, const unsigned char *key, size_t keylen, const OSSL_PARAM *params)
{
    tu_errs e[2];
    int r[2], i;

    tu_note(&p->t.log, key != NULL ? " init(key %zu)" : " init(NULL, %zu)", keylen);
    TU_BOTH(i, e, r[i] = EVP_MAC_init(p->ctx[i], key, keylen, params));
    return tu_same(&p->t, r[0], r[1], e, "init");
}

static int both_set(struct pair *p, const OSSL_PARAM *params, const char *what)
{
    tu_errs e[2];
    int r[2], i;

    tu_note(&p->t.log, " set(%s)", what);
    TU_BOTH(i, e, r[i] = EVP_MAC_CTX_set_params(p->ctx[i], params));
    return tu_same(&p->t, r[0], r[1], e, "set_params");
}

static int both_update(struct pair *p, const unsigned char *in, size_t len)
{
    tu_errs e[2];
    int r[2], i;

    tu_note(&p->t.log, " u%zu", len);
    TU_BOTH(i, e, r[i] = EVP_MAC_update(p->ctx[i], in, len));
    return tu_same(&p->t, r[0], r[1], e, "update");
}

/* final into a buffer of outsize bytes (out NULL: the length only); the MAC into mac */
static int both_final(struct pair *p, size_t outsize, int null_out, unsigned char *mac, size_t *maclen)
{
    unsigned char out[2][EVP_MAX_MD_SIZE];
    size_t n[2] = { 0, 0 };
    tu_errs e[2];
    int r[2], i;

    tu_note(&p->t.log, " final(%zu%s)", outsize, null_out ? ", NULL" : "");
    TU_BOTH(i, e, r[i] = EVP_MAC_final(p->ctx[i], null_out ? NULL : out[i], &n[i], outsize));
    /* a failed final leaves its length unset */
    if (tu_same(&p->t, r[0], r[1], e, "final")
        && (n[0] != n[1] || (!null_out && memcmp(out[0], out[1], n[0]) != 0)))
        tu_differ(&p->t, "the MAC");
    if (mac != NULL && r[0] && !null_out) {
        memcpy(mac, out[0], n[0]);
        *maclen = n[0];
    }
    return r[0];
}

/* size and block-size, as parameters and through EVP_MAC_CTX_get_mac_size */
static void both_sizes(struct pair *p)
{
    size_t v[2][2], m[2];
    OSSL_PARAM q[3];
    tu_errs e[2];
    int r[2], i, mod[2][2];

    tu_note(&p->t.log, " sizes");
    TU_BOTH(i, e, v[i][0] = v[i][1] = 4242;
         q[0] = OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &v[i][0]);
         q[1] = OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_BLOCK_SIZE, &v[i][1]);
         q[2] = OSSL_PARAM_construct_end(); r[i] = EVP_MAC_CTX_get_params(p->ctx[i], q);
         mod[i][0] = OSSL_PARAM_modified(&q[0]); mod[i][1] = OSSL_PARAM_modified(&q[1]));
    if (tu_same(&p->t, r[0], r[1], e, "get_params")
        && (mod[0][0] != mod[1][0] || mod[0][1] != mod[1][1] || v[0][0] != v[1][0] || v[0][1] != v[1][1]))
        tu_differ(&p->t, "size or block-size");
    TU_BOTH(i, e, m[i] = EVP_MAC_CTX_get_mac_size(p->ctx[i]));
    if (m[0] != m[1])
        tu_differ(&p->t, "EVP_MAC_CTX_get_mac_size");
}

/* Copies of both contexts into q, which goes on separately. */
static void pair_dup(struct pair *p, struct pair *q)
{
    int i;

    *q = *p;
    tu_note(&q->t.log, " dup:");
    for (i = 0; i < 2; i++)
        q->ctx[i] = EVP_MAC_CTX_dup(p->ctx[i]);
    if ((q->ctx[0] == NULL) != (q->ctx[1] == NULL) || q->ctx[1] == NULL)
        tu_differ(&p->t, "EVP_MAC_CTX_dup");
    tu_note(&p->t.log, " (dup)");
}

/* --- parameters and the independent answer -------------------------------------------------- */

/* The algorithm (and properties, and the key when key != NULL) as parameters. */
static OSSL_PARAM *alg_params(OSSL_PARAM *q, const struct mac *m, const char *alg, const char *props,
                              const unsigned char *key, size_t keylen)
{
    OSSL_PARAM *p = q;

    *p++ = OSSL_PARAM_construct_utf8_string(alg_param(m), (char *)alg, 0);
    if (props != NULL)
        *p++ = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_PROPERTIES, (char *)props, 0);
    if (key != NULL)
        *p++ = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, (void *)key, keylen);
    *p = OSSL_PARAM_construct_end();
    return q;
}

/* The default provider's MAC of a || b, with a fresh context. */
static size_t oracle_mac(const struct mac *m, const char *alg, const unsigned char *key, size_t keylen,
                         const unsigned char *a, size_t alen, const unsigned char *b, size_t blen,
                         unsigned char *out)
{
    EVP_MAC_CTX *c = EVP_MAC_CTX_new(evp_mac[is_cmac(m)][1]);
    OSSL_PARAM q[4];
    size_t n = 0;

    assert_non_null(c);
    assert_int_equal(EVP_MAC_init(c, key, keylen, alg_params(q, m, alg, NULL, NULL, 0)), 1);
    assert_int_equal(EVP_MAC_update(c, a, alen), 1);
    assert_int_equal(EVP_MAC_update(c, b, blen), 1);
    assert_int_equal(EVP_MAC_final(c, out, &n, EVP_MAX_MD_SIZE), 1);
    EVP_MAC_CTX_free(c);
    return n;
}

static void expect_mac(struct pair *p, const char *what, const unsigned char *got, size_t gotlen,
                       const unsigned char *want, size_t wantlen)
{
    if (gotlen != wantlen || memcmp(got, want, wantlen) != 0)
        tu_differ(&p->t, what);
}

/* --- random runs ----------------------------------------------------------------------------- */

/* Data after a copy or a re-init: mostly short, now and then past a 16 KiB buffer. */
static size_t next_len(tu_rng *r)
{
    return tu_rng_range(r, 0, 3) ? tu_rng_range(r, 0, 300) : 16384 + tu_rng_range(r, 0, 100);
}

/*
 * One message of len bytes in random chunks, with a copy at a random chunk going on with other
 * data; then the same key again (init with a NULL key), then a new key. Every MAC is also
 * checked against a fresh one-shot context of the default provider.
 */
static void run(const struct mac *m, tu_rng *r, size_t keylen, size_t len)
{
    static size_t chunks[MAXCHUNKS];
    const unsigned char *other = data + MAXLEN;
    unsigned char key[256], key2[256], mac[EVP_MAX_MD_SIZE], ref[EVP_MAX_MD_SIZE];
    size_t n, i, off = 0, dup_at, rest, maclen = 0, reflen, len2, keylen2;
    int key_as_param = (int)tu_rng_range(r, 0, 1);
    struct pair p, q;
    OSSL_PARAM prm[4];

    tu_rng_fill(r, key, sizeof(key));
    tu_rng_fill(r, key2, sizeof(key2));
    pair_open(&p, m);
    q.ctx[0] = NULL;
    tu_note(&p.t.log, " key %zu len %zu", keylen, len);
    both_sizes(&p);
    alg_params(prm, m, m->alg, NULL, key_as_param ? key : NULL, keylen);
    if (key_as_param ? !both_set(&p, prm, "alg, key") || !both_init(&p, NULL, 0, NULL)
                     : !both_init(&p, key, keylen, prm))
        goto done;
    both_sizes(&p);
    n = tu_chunking(r, len, MAXCHUNK, chunks, MAXCHUNKS);
    dup_at = tu_rng_range(r, 0, n + n / 2); /* past n: no copy */
    for (i = 0; i <= n; i++) {
        if (i == dup_at)
            pair_dup(&p, &q);
        if (i < n && !both_update(&p, data + off, chunks[i]))
            goto done;
        off += i < n ? chunks[i] : 0;
    }
    both_sizes(&p);
    if (!both_final(&p, EVP_MAX_MD_SIZE, 0, mac, &maclen))
        goto done;
    reflen = oracle_mac(m, m->alg, key, keylen, data, len, NULL, 0, ref);
    expect_mac(&p, "the MAC against a fresh context", mac, maclen, ref, reflen);
    if (q.ctx[0] != NULL) { /* the copy: the prefix, then other data */
        for (i = 0, off = 0; i < dup_at; i++)
            off += chunks[i];
        rest = next_len(r);
        if (!both_update(&q, other, rest / 3) || !both_update(&q, other + rest / 3, rest - rest / 3)
            || !both_final(&q, EVP_MAX_MD_SIZE, 0, mac, &maclen))
            goto done;
        reflen = oracle_mac(m, m->alg, key, keylen, data, off, other, rest, ref);
        expect_mac(&q, "the copy's MAC against a fresh context", mac, maclen, ref, reflen);
    }
    /* the same key again, then a new one */
    len2 = next_len(r);
    if (!both_init(&p, NULL, 0, NULL) || !both_update(&p, other, len2)
        || !both_final(&p, EVP_MAX_MD_SIZE, 0, mac, &maclen))
        goto done;
    reflen = oracle_mac(m, m->alg, key, keylen, other, len2, NULL, 0, ref);
    expect_mac(&p, "the MAC after init with the same key", mac, maclen, ref, reflen);
    keylen2 = m->keylen ? m->keylen : keylens[tu_rng_range(r, 0, NKEYLENS - 1)];
    if (!both_init(&p, key2, keylen2, NULL) || !both_update(&p, data, len2)
        || !both_final(&p, EVP_MAX_MD_SIZE, 0, mac, &maclen))
        goto done;
    both_sizes(&p);
    reflen = oracle_mac(m, m->alg, key2, keylen2, data, len2, NULL, 0, ref);
    expect_mac(&p, "the MAC after init with a new key", mac, maclen, ref, reflen);
done:
    if (q.ctx[0] != NULL)
        pair_close(&q);
    pair_close(&p);
}

static void differential(void **state)
{
    size_t a, i;

    (void)state;
    for (a = 0; a < NMACS; a++) {
        tu_rng r;

        tu_rng_seed(&r, tu_seed_mix(seed, a, 1));
        for (i = 0; i < NLENS; i++)
            if (lens[i] <= (is_cmac(&macs[a]) ? CMAC_MAXLEN : MAXLEN))
                run(&macs[a], &r, macs[a].keylen ? macs[a].keylen : keylens[i % NKEYLENS],
                    lens[i] + (lens[i] > 1000 ? tu_rng_range(&r, 0, 3) : 0));
    }
    printf("%lu calls compared\n", compared);
}

/* --- parameters ------------------------------------------------------------------------------ */

/* The names in two parameter lists, order aside. */
static int same_names(const OSSL_PARAM *a, const OSSL_PARAM *b)
{
    const OSSL_PARAM *x;
    int na = 0, nb = 0;

    for (x = a; x != NULL && x->key != NULL; x++, na++)
        if (b == NULL || OSSL_PARAM_locate_const(b, x->key) == NULL)
            return 0;
    for (x = b; x != NULL && x->key != NULL; x++)
        nb++;
    return na == nb;
}

/* A short message on the pair, its MAC compared. */
static void both_message(struct pair *p)
{
    if (both_update(p, data, 100))
        both_final(p, EVP_MAX_MD_SIZE, 0, NULL, NULL);
}

/*
 * The parameter lists; size and block-size before and after the algorithm and the key; the
 * algorithm changed after the key, then the same key, then a new key; aliases; properties.
 */
static void params(void **state)
{
    static const char *const props[] = { "provider=default", "?provider=default", "",
                                         "provider=nonexistent", "-fips" };
    unsigned char key[64], key2[64];
    size_t a, i;

    (void)state;
    memcpy(key, data, sizeof(key));
    memcpy(key2, data + 64, sizeof(key2));
    for (a = 0; a < 2; a++) {
        EVP_MAC *s = evp_mac[a][0], *o = evp_mac[a][1];

        if (!same_names(EVP_MAC_settable_ctx_params(s), EVP_MAC_settable_ctx_params(o))
            || !same_names(EVP_MAC_gettable_ctx_params(s), EVP_MAC_gettable_ctx_params(o))
            || !same_names(EVP_MAC_gettable_params(s), EVP_MAC_gettable_params(o))) {
            fprintf(stderr, "%s's parameter lists differ from the default provider's\n", a ? "CMAC" : "HMAC");
            fail();
        }
    }
    for (a = 0; a < NMACS; a++) {
        const struct mac *m = &macs[a];
        /* another digest or cipher of the same kind, and its key length */
        const char *other = is_cmac(m) ? (m->keylen == 32 ? "AES-128-CBC" : "AES-256-CBC")
                                       : (strcmp(m->alg, "SHA2-512") == 0 ? "SHA1" : "SHA2-512");
        size_t klen = m->keylen ? m->keylen : 20, klen2 = is_cmac(m) ? (m->keylen == 32 ? 16 : 32) : 20;
        OSSL_PARAM q[4];
        struct pair p;

        pair_open(&p, m);
        both_sizes(&p);
        both_set(&p, alg_params(q, m, m->alg, NULL, NULL, 0), m->alg);
        both_sizes(&p);
        both_init(&p, key, klen, NULL);
        both_sizes(&p);
        both_message(&p);
        both_set(&p, alg_params(q, m, other, NULL, NULL, 0), other);
        both_sizes(&p);
        both_init(&p, NULL, 0, NULL);
        both_sizes(&p);
        both_message(&p);
        both_init(&p, key2, klen2, NULL);
        both_sizes(&p);
        both_message(&p);
        pair_close(&p);

        /* the alias, and the key with the algorithm in one set_params */
        pair_open(&p, m);
        both_set(&p, alg_params(q, m, m->alias, NULL, key, klen), m->alias);
        both_sizes(&p);
        if (both_init(&p, NULL, 0, NULL))
            both_message(&p);
        pair_close(&p);

        for (i = 0; i < sizeof(props) / sizeof(props[0]); i++) {
            pair_open(&p, m);
            tu_note(&p.t.log, " properties '%s'", props[i]);
            if (both_init(&p, key, klen, alg_params(q, m, m->alg, props[i], NULL, 0)))
                both_message(&p);
            both_sizes(&p);
            pair_close(&p);
        }
    }
}

/* --- bad input ------------------------------------------------------------------------------- */

struct bad {
    const char *what;
    int kind; /* 0: both MACs, 1: HMAC only, 2: CMAC only */
    void (*run)(struct pair *p, const struct mac *m, const unsigned char *key);
};

static size_t klen_of(const struct mac *m)
{
    return m->keylen ? m->keylen : 32;
}

static void bad_fresh(struct pair *p, const struct mac *m, const unsigned char *key)
{
    (void)m, (void)key;
    both_update(p, data, 10);
    both_final(p, EVP_MAX_MD_SIZE, 0, NULL, NULL);
    both_init(p, NULL, 0, NULL);
    both_update(p, data, 10);
}

static void bad_no_key(struct pair *p, const struct mac *m, const unsigned char *key)
{
    OSSL_PARAM q[4];

    (void)key;
    both_set(p, alg_params(q, m, m->alg, NULL, NULL, 0), m->alg);
    both_update(p, data, 10);
    both_final(p, EVP_MAX_MD_SIZE, 0, NULL, NULL);
    both_init(p, NULL, 0, NULL);
    both_update(p, data, 10);
    both_final(p, EVP_MAX_MD_SIZE, 0, NULL, NULL);
    both_init(p, NULL, 16, NULL); /* a length without a key */
    both_init(p, NULL, 0, alg_params(q, m, m->alg, NULL, NULL, 0));
}

/* Updates of no bytes and of some, each refused by both. */
static void unkeyed_updates(struct pair *p)
{
    if (both_update(p, data, 0) || both_update(p, data, 10))
        tu_differ(&p->t, "an update without a key succeeds");
}

static void bad_unkeyed(struct pair *p, const struct mac *m, const unsigned char *key)
{
    OSSL_PARAM q[4];

    (void)key;
    unkeyed_updates(p);
    both_set(p, alg_params(q, m, m->alg, NULL, NULL, 0), m->alg);
    unkeyed_updates(p);
}

/* A key refused after a message began: the default provider's CMAC is left without a key. */
static void bad_key_refused(struct pair *p, const struct mac *m, const unsigned char *key)
{
    OSSL_PARAM q[4];

    both_init(p, key, klen_of(m), alg_params(q, m, m->alg, NULL, NULL, 0));
    both_update(p, data, 10);
    both_init(p, key, klen_of(m) - 1, NULL);
    unkeyed_updates(p);
    both_final(p, EVP_MAX_MD_SIZE, 0, NULL, NULL);
}

/* The algorithm given as name, then a message if init took it. */
static void with_alg(struct pair *p, const struct mac *m, const unsigned char *key, const char *name,
                     const char *props, size_t klen)
{
    OSSL_PARAM q[4];

    tu_note(&p->t.log, " alg '%s'", name);
    if (both_init(p, key, klen, alg_params(q, m, name, props, NULL, 0))) {
        both_sizes(p);
        both_message(p);
    }
}

static void bad_unknown(struct pair *p, const struct mac *m, const unsigned char *key)
{
    with_alg(p, m, key, "NO-SUCH-ALG", NULL, klen_of(m));
    with_alg(p, m, key, "", NULL, klen_of(m));
    with_alg(p, m, key, m->alg, "provider=nonexistent", klen_of(m));
}

/* accepted or refused as the default provider does: XOF digests, odd ones, CMAC's mode */
static void bad_unfit(struct pair *p, const struct mac *m, const unsigned char *key)
{
    static const char *const hmac[] = { "SHAKE128", "KECCAK-KMAC-256", "NULL", "MD5-SHA1" };
    static const char *const cmac[] = { "AES-128-ECB", "AES-128-CTR", "AES-128-GCM", "DES-EDE3-ECB" };
    static const size_t cmac_klen[] = { 16, 16, 16, 24 };
    size_t i;

    for (i = 0; i < 4; i++) {
        struct pair q;

        pair_open(&q, m);
        with_alg(&q, m, key, is_cmac(m) ? cmac[i] : hmac[i], NULL, is_cmac(m) ? cmac_klen[i] : 16);
        pair_close(&q);
    }
    (void)p;
}

static void bad_keylen(struct pair *p, const struct mac *m, const unsigned char *key)
{
    OSSL_PARAM q[4];
    size_t k;

    for (k = 0; k <= 64; k += k == 0 ? 1 : k == 1 ? 7 : 8) {
        if (k == m->keylen)
            continue;
        both_init(p, key, k, alg_params(q, m, m->alg, NULL, NULL, 0));
        both_sizes(p);
        both_set(p, alg_params(q, m, m->alg, NULL, key, k), "key param");
    }
}

static void bad_params(struct pair *p, const struct mac *m, const unsigned char *key)
{
    OSSL_PARAM q[4], x[2];
    int v = 5;
    size_t sz = 3;

    both_init(p, key, klen_of(m), alg_params(q, m, m->alg, NULL, NULL, 0));
    x[1] = OSSL_PARAM_construct_end();
    x[0] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, NULL, 0);
    both_set(p, x, "key NULL");
    x[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_KEY, "abcdefghijklmnop", 0);
    both_set(p, x, "key as a string");
    x[0] = OSSL_PARAM_construct_int(alg_param(m), &v);
    both_set(p, x, "alg as an int");
    x[0] = OSSL_PARAM_construct_octet_string(alg_param(m), (void *)"SHA1", 4);
    both_set(p, x, "alg as octets");
    x[0] = OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &sz);
    both_set(p, x, "size");
    x[0] = OSSL_PARAM_construct_utf8_string("no-such-param", "x", 0);
    both_set(p, x, "unknown");
    both_sizes(p);
    both_message(p);
}

static void bad_buffers(struct pair *p, const struct mac *m, const unsigned char *key)
{
    OSSL_PARAM q[4];

    both_init(p, key, klen_of(m), alg_params(q, m, m->alg, NULL, NULL, 0));
    both_update(p, NULL, 0);
    both_update(p, data, 0);
    both_update(p, data, 5);
    both_final(p, 0, 1, NULL, NULL);  /* the length only */
    both_final(p, 4, 0, NULL, NULL);  /* too short: refused, the message goes on */
    both_update(p, data + 5, 100);
    both_final(p, EVP_MAX_MD_SIZE, 0, NULL, NULL);
}

static const struct bad bads[] = {
    { "update, final and re-init of a fresh context", 0, bad_fresh },
    { "the algorithm but no key", 0, bad_no_key },
    { "updates of 0 and 10 bytes before a key", 0, bad_unkeyed },
    { "a key refused after a message began", 2, bad_key_refused },
    { "unknown algorithms and properties", 0, bad_unknown },
    { "unfit digests and ciphers", 0, bad_unfit },
    { "wrong CMAC key lengths", 2, bad_keylen },
    { "malformed and unknown parameters", 0, bad_params },
    { "NULL and short buffers", 0, bad_buffers },
};

/* EVP_MAC_update(ctx, NULL, n > 0): the default provider reads NULL, so only the subject runs. */
static void null_update(const struct mac *m, const unsigned char *key)
{
    EVP_MAC_CTX *c = EVP_MAC_CTX_new(evp_mac[is_cmac(m)][0]);
    OSSL_PARAM q[4];
    tu_errs e, none = { 0 };

    assert_int_equal(EVP_MAC_init(c, key, klen_of(m), alg_params(q, m, m->alg, NULL, NULL, 0)), 1);
    ERR_clear_error();
    if (EVP_MAC_update(c, NULL, 5) != 0 || (tu_take_errors(&e), !tu_failure_ok(subject, &e, &none))) {
        fprintf(stderr, "%s(%s): EVP_MAC_update(ctx, NULL, 5) must fail with ccree's error\n", m->mac,
                m->alg);
        fail();
    }
    EVP_MAC_CTX_free(c);
}

/* After final, update and final need a new init: the default provider goes on with garbage. */
static void after_final(const struct mac *m, const unsigned char *key)
{
    EVP_MAC_CTX *c = EVP_MAC_CTX_new(evp_mac[is_cmac(m)][0]);
    unsigned char out[EVP_MAX_MD_SIZE];
    OSSL_PARAM q[4];
    tu_errs e, none = { 0 };
    size_t n;
    int k;

    assert_int_equal(EVP_MAC_init(c, key, klen_of(m), alg_params(q, m, m->alg, NULL, NULL, 0)), 1);
    assert_int_equal(EVP_MAC_update(c, key, 10), 1);
    assert_int_equal(EVP_MAC_final(c, out, &n, sizeof(out)), 1);
    for (k = 0; k < 2; k++) {
        ERR_clear_error();
        if ((k ? EVP_MAC_final(c, out, &n, sizeof(out)) : EVP_MAC_update(c, key, 10)) != 0
            || (tu_take_errors(&e), !tu_failure_ok(subject, &e, &none))) {
            fprintf(stderr, "%s(%s): %s after final must fail with ccree's error\n", m->mac, m->alg,
                    k ? "final" : "update");
            fail();
        }
    }
    EVP_MAC_CTX_free(c);
}

static void bad_input(void **state)
{
    unsigned char key[64];
    size_t a, b;

    (void)state;
    memcpy(key, data + 1000, sizeof(key));
    for (a = 0; a < NMACS; a++) {
        for (b = 0; b < sizeof(bads) / sizeof(bads[0]); b++) {
            struct pair p;

            if (bads[b].kind == 1 + !is_cmac(&macs[a]))
                continue;
            pair_open(&p, &macs[a]);
            tu_note(&p.t.log, " [%s]", bads[b].what);
            bads[b].run(&p, &macs[a], key);
            pair_close(&p);
        }
        if (counters) {
            null_update(&macs[a], key);
            after_final(&macs[a], key);
        }
    }
    if (!counters)
        printf("EVP_MAC_update(ctx, NULL, 5) not tried: the default provider reads the NULL\n");
}

/* --- counters -------------------------------------------------------------------------------- */

/* A long message through each offloaded row, by its alias, in three updates. */
static void offload(void **state)
{
    unsigned char key[32], mac[EVP_MAX_MD_SIZE], ref[EVP_MAX_MD_SIZE];
    size_t a, len = 100000, maclen;

    (void)state;
    if (!counters) {
        printf("subject %s: counters not checked\n", subject);
        skip();
    }
    memcpy(key, data, sizeof(key));
    for (a = 0; a < NMACS; a++) {
        const struct mac *m = &macs[a];
        size_t klen = klen_of(m);
        tu_alg_info before, after;
        OSSL_PARAM q[4];
        struct pair p;

        if (m->row == NULL)
            continue;
        before = tu_alg(prov, m->row);
        pair_open(&p, m);
        assert_true(both_init(&p, key, klen, alg_params(q, m, m->alias, NULL, NULL, 0)));
        assert_true(both_update(&p, data, 40000) && both_update(&p, data + 40000, 30000)
                    && both_update(&p, data + 70000, len - 70000));
        assert_true(both_final(&p, EVP_MAX_MD_SIZE, 0, mac, &maclen));
        expect_mac(&p, "the MAC against a fresh context", mac, maclen, ref,
                   oracle_mac(m, m->alg, key, klen, data, len, NULL, 0, ref));
        pair_close(&p);
        after = tu_alg(prov, m->row);
        printf("%s: %llu kernel ops, %llu software ops\n", m->row,
               (unsigned long long)(after.offload_ops - before.offload_ops),
               (unsigned long long)(after.fallback_ops - before.fallback_ops));
        assert_true(tu_counter_rule(&before, &after, 0));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(differential),
        cmocka_unit_test(params),
        cmocka_unit_test(bad_input),
        cmocka_unit_test(offload),
    };
    char props[2][64] = { "", "provider=default" };
    tu_rng r;
    int k, i;

    if (!tu_subject(&subject, &prov, props[0], &seed))
        return 1;
    counters = prov != NULL;
    for (k = 0; k < 2; k++)
        for (i = 0; i < 2; i++)
            if ((evp_mac[k][i] = EVP_MAC_fetch(NULL, k ? "CMAC" : "HMAC", props[i])) == NULL) {
                fprintf(stderr, "cannot fetch %s with %s\n", k ? "CMAC" : "HMAC", props[i]);
                ERR_print_errors_fp(stderr);
                return 1;
            }
    if ((data = malloc(2 * MAXLEN)) == NULL)
        return 1;
    tu_rng_seed(&r, seed);
    tu_rng_fill(&r, data, 2 * MAXLEN);
    k = cmocka_run_group_tests(tests, NULL, NULL);
    for (i = 0; i < 4; i++)
        EVP_MAC_free(evp_mac[i / 2][i % 2]);
    free(data);
    if (prov != NULL)
        OSSL_PROVIDER_unload(prov);
    return k;
}
