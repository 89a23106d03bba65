/*
 * AES-GCM and AES-CCM against the default provider. Random call sequences (IV, tag, AAD and
 * data lengths, AAD and data split or not, the tag before or after the data, copies, re-init
 * with a new IV, in place or not) run on ccree and on the default provider in lockstep, and
 * every return, length, output, tag and IV must agree. Then every (AAD, text) length pair from
 * 0 to 64 with every tag length, right and wrong (also as the first request of a fresh
 * provider under offload-min = auto, argv[1]), tampered messages, TLS 1.2 and
 * TLS 1.3 records as libssl drives them, and the counters: the patterns README names as
 * offloaded must show offload (CCREE_REQUIRE_OFFLOAD=1, in the VM), the others software.
 *
 * Environment: OPENSSL_CONF (ccree and default active), CCREE_REQUIRE_OFFLOAD, CCREE_TEST_SEED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "lockstep.h"

#define MAXLEN 70000 /* past one kernel request */

static const char *const algs[] = { "AES-128-GCM", "AES-192-GCM", "AES-256-GCM",
                                    "AES-128-CCM", "AES-192-CCM", "AES-256-CCM" };
#define NALGS (sizeof(algs) / sizeof(algs[0]))

static OSSL_PROVIDER *prov;
static unsigned long compared; /* calls compared between the two providers */
static int require_offload;
static uint64_t seed = 1;
static unsigned char key[32], msg[MAXLEN], aad[MAXLEN];

/* --- helpers -------------------------------------------------------------------------------- */

static EVP_CIPHER *fetch_in(OSSL_LIB_CTX *lib, const char *name, const char *props)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(lib, name, props);

    assert_non_null(c);
    return c;
}

static EVP_CIPHER *fetch(const char *name, const char *props)
{
    return fetch_in(NULL, name, props);
}

static int is_ccm(const char *name)
{
    return strstr(name, "CCM") != NULL;
}

static int set_size(EVP_CIPHER_CTX *ctx, const char *param, size_t v)
{
    OSSL_PARAM p[] = { OSSL_PARAM_size_t(param, &v), OSSL_PARAM_END };

    return EVP_CIPHER_CTX_set_params(ctx, p);
}

static int set_octets(EVP_CIPHER_CTX *ctx, const char *param, const void *v, size_t n)
{
    OSSL_PARAM p[] = { OSSL_PARAM_octet_string(param, (void *)v, n), OSSL_PARAM_END };

    return EVP_CIPHER_CTX_set_params(ctx, p);
}

static int get_octets(EVP_CIPHER_CTX *ctx, const char *param, void *v, size_t n)
{
    OSSL_PARAM p[] = { OSSL_PARAM_octet_string(param, v, n), OSSL_PARAM_END };

    return EVP_CIPHER_CTX_get_params(ctx, p);
}

/* --- the lockstep runner ---------------------------------------------------------------------- */

/* ccree and the default provider, side by side; a failure of ccree must carry ccree's error. */
struct pair {
    tu_pair t;
    EVP_CIPHER_CTX *ctx[2];
    unsigned char *out[2];
};

static void pair_open_with(struct pair *p, const char *name, int enc, const unsigned char *k)
{
    EVP_CIPHER *c[2] = { fetch(name, "provider=ccree"), fetch(name, "provider=default") };
    int i;

    memset(p, 0, sizeof(*p));
    p->t = (tu_pair){ .subject = "ccree", .seed = seed, .strict = 1, .compared = &compared };
    for (i = 0; i < 2; i++) {
        p->ctx[i] = EVP_CIPHER_CTX_new();
        p->out[i] = malloc(MAXLEN + 64);
        assert_non_null(p->ctx[i]);
        assert_non_null(p->out[i]);
        assert_int_equal(EVP_CipherInit_ex2(p->ctx[i], c[i], k, NULL, enc, NULL), 1);
        EVP_CIPHER_free(c[i]);
    }
    tu_note(&p->t.log, "%s %s%s:", name, enc ? "enc" : "dec", k != NULL ? "" : " keyless");
}

static void pair_open(struct pair *p, const char *name, int enc)
{
    pair_open_with(p, name, enc, key);
}

static void pair_close(struct pair *p)
{
    int i;

    for (i = 0; i < 2; i++) {
        EVP_CIPHER_CTX_free(p->ctx[i]);
        free(p->out[i]);
    }
    ERR_clear_error();
}

/* Whether ccree raised an error (with its own reason); clears the queue. */
static int ccree_error(void)
{
    tu_errs x;

    tu_take_errors(&x);
    return tu_ccree_raised(&x);
}

static int both_set_size(struct pair *p, const char *param, size_t v)
{
    tu_errs e[2];
    int r[2], i;

    tu_note(&p->t.log, " %s=%zu", param, v);
    TU_BOTH(i, e, r[i] = set_size(p->ctx[i], param, v));
    return tu_same(&p->t, r[0], r[1], e, param);
}

static int both_set_octets(struct pair *p, const char *param, const void *v, size_t n)
{
    tu_errs e[2];
    int r[2], i;

    tu_note(&p->t.log, " %s(%zu)", param, n);
    TU_BOTH(i, e, r[i] = set_octets(p->ctx[i], param, v, n));
    return tu_same(&p->t, r[0], r[1], e, param);
}

static int both_init(struct pair *p, const unsigned char *k, const unsigned char *iv, int enc)
{
    tu_errs e[2];
    int r[2], i;

    tu_note(&p->t.log, k != NULL ? " key+iv" : " iv");
    TU_BOTH(i, e, r[i] = EVP_CipherInit_ex2(p->ctx[i], NULL, k, iv, enc, NULL));
    return tu_same(&p->t, r[0], r[1], e, "init");
}

static int both_get_octets(struct pair *p, const char *param, size_t n)
{
    unsigned char v[2][128];
    tu_errs e[2];
    int r[2], i;

    tu_note(&p->t.log, " get %s(%zu)", param, n);
    TU_BOTH(i, e, r[i] = get_octets(p->ctx[i], param, v[i], n));
    if (tu_same(&p->t, r[0], r[1], e, param) && memcmp(v[0], v[1], n) != 0)
        tu_differ(&p->t, param);
    return r[0];
}

/* An update (out NULL for AAD, in NULL for CCM's length), in place or not; outputs compared. */
static int both_update(struct pair *p, int with_out, const unsigned char *in, size_t len, int inplace)
{
    tu_errs e[2];
    int r[2], n[2], i;

    tu_note(&p->t.log, " %s%zu%s", with_out ? "data" : in ? "aad" : "len", len, inplace ? "i" : "");
    TU_BOTH(i, e, const unsigned char *src = in;
         if (inplace && in != NULL) src = memcpy(p->out[i], in, len); n[i] = -1;
         r[i] = EVP_CipherUpdate(p->ctx[i], with_out ? p->out[i] : NULL, &n[i], src, (int)len));
    if (tu_same(&p->t, r[0], r[1], e, "update")
        && (n[0] != n[1] || (with_out && memcmp(p->out[0], p->out[1], n[0]) != 0)))
        tu_differ(&p->t, "update output");
    return r[0];
}

static int both_final(struct pair *p)
{
    tu_errs e[2];
    int r[2], n[2], i;

    tu_note(&p->t.log, " final");
    TU_BOTH(i, e, r[i] = EVP_CipherFinal_ex(p->ctx[i], p->out[i], &n[i]));
    if (tu_same(&p->t, r[0], r[1], e, "final") && n[0] != n[1])
        tu_differ(&p->t, "final length");
    return r[0];
}

/* EVP_Cipher (out NULL for AAD, in NULL for the final), in place or not; returns and outputs
 * compared. */
static int both_cipher(struct pair *p, int with_out, const unsigned char *in, size_t len,
                       int inplace)
{
    tu_errs e[2];
    int r[2], i;

    tu_note(&p->t.log, " cipher-%s%zu%s", in == NULL ? "final" : with_out ? "data" : "aad", len,
            inplace ? "i" : "");
    TU_BOTH(i, e, const unsigned char *src = in;
         if (inplace && in != NULL) src = memcpy(p->out[i], in, len);
         r[i] = EVP_Cipher(p->ctx[i], with_out ? p->out[i] : NULL, src, (unsigned int)len));
    if (tu_same(&p->t, r[0] >= 0, r[1] >= 0, e, "EVP_Cipher")
        && (r[0] != r[1] || (with_out && memcmp(p->out[0], p->out[1], (size_t)r[0]) != 0)))
        tu_differ(&p->t, "EVP_Cipher output");
    return r[0] >= 0;
}

static void both_copy(struct pair *p)
{
    tu_note(&p->t.log, " copy");
    assert_true(tu_copy_both(p->ctx));
}

/* --- random sequences ------------------------------------------------------------------------ */

static size_t pick(tu_rng *r, const size_t *v, size_t n)
{
    return v[tu_rng_range(r, 0, n - 1)];
}

/* A keyed context; CCM's IV and tag lengths are set before the key, as CCM needs. */
static EVP_CIPHER_CTX *aead_ctx_in(OSSL_LIB_CTX *lib, const char *name, const char *props, int enc,
                                   size_t ivlen, size_t taglen)
{
    EVP_CIPHER *c = fetch_in(lib, name, props);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

    assert_int_equal(EVP_CipherInit_ex2(ctx, c, NULL, NULL, enc, NULL), 1);
    assert_int_equal(set_size(ctx, OSSL_CIPHER_PARAM_AEAD_IVLEN, ivlen), 1);
    if (is_ccm(name))
        assert_int_equal(set_octets(ctx, OSSL_CIPHER_PARAM_AEAD_TAG, NULL, taglen), 1);
    assert_int_equal(EVP_CipherInit_ex2(ctx, NULL, key, NULL, enc, NULL), 1);
    EVP_CIPHER_free(c);
    return ctx;
}

static EVP_CIPHER_CTX *aead_ctx(const char *name, const char *props, int enc, size_t ivlen,
                                size_t taglen)
{
    return aead_ctx_in(NULL, name, props, enc, ivlen, taglen);
}

/* Ciphertext and full tag of one message (msg, aad), through props. */
static void seal_as(const char *props, const char *name, size_t ivlen, size_t taglen,
                    const unsigned char *iv, size_t aadlen, size_t len, unsigned char *ct,
                    unsigned char *tag)
{
    EVP_CIPHER_CTX *ctx = aead_ctx(name, props, 1, ivlen, taglen);
    int n;

    assert_int_equal(EVP_EncryptInit_ex2(ctx, NULL, NULL, iv, NULL), 1);
    if (is_ccm(name))
        assert_int_equal(EVP_EncryptUpdate(ctx, NULL, &n, NULL, (int)len), 1);
    assert_int_equal(EVP_EncryptUpdate(ctx, NULL, &n, aad, (int)aadlen), 1);
    assert_int_equal(EVP_EncryptUpdate(ctx, ct, &n, msg, (int)len), 1);
    assert_int_equal(EVP_EncryptFinal_ex(ctx, ct + n, &n), 1);
    assert_int_equal(get_octets(ctx, OSSL_CIPHER_PARAM_AEAD_TAG, tag, is_ccm(name) ? taglen : 16), 1);
    EVP_CIPHER_CTX_free(ctx);
}

/* ... from the default provider alone. */
static void seal(const char *name, size_t ivlen, size_t taglen, const unsigned char *iv,
                 size_t aadlen, size_t len, unsigned char *ct, unsigned char *tag)
{
    seal_as("provider=default", name, ivlen, taglen, iv, aadlen, len, ct, tag);
}

/* Pieces of len bytes: one (most often) or up to four. */
static size_t split(tu_rng *r, size_t len, size_t *pieces, int allow)
{
    size_t n = 0, left = len;

    if (!allow || tu_rng_range(r, 0, 2) != 0) {
        pieces[0] = len;
        return 1;
    }
    while (n < 3 && left > 0) {
        pieces[n] = tu_rng_range(r, 0, left);
        left -= pieces[n++];
    }
    pieces[n++] = left;
    return n;
}

/* Messages on one context pair: each with its own IV, lengths, splits and tag order. */
static void random_sequence(const char *name, tu_rng *r)
{
    static const size_t gcm_iv[] = { 12, 12, 12, 1, 8, 13, 16, 64, 128 };
    static const size_t gcm_tag[] = { 16, 16, 4, 8, 12, 13, 14, 15, 1, 3 };
    static const size_t lens[] = { 0, 1, 13, 15, 16, 17, 64, 255, 1024, 16384, 65500, MAXLEN };
    static unsigned char ct[MAXLEN], tag[16];
    int ccm = is_ccm(name), enc = (int)tu_rng_range(r, 0, 1), m, nmsg = (int)tu_rng_range(r, 1, 3);
    struct pair p;

    pair_open(&p, name, enc);
    for (m = 0; m < nmsg; m++) {
        size_t ivlen = ccm ? tu_rng_range(r, 7, 13) : pick(r, gcm_iv, 9);
        size_t taglen = ccm ? 2 * tu_rng_range(r, 2, 8) : pick(r, gcm_tag, 10);
        size_t aadlen = pick(r, lens, 12), len = pick(r, lens, 12), piece[4], np, i, off;
        unsigned char iv[128];
        int tag_first = ccm || tu_rng_range(r, 0, 3) != 0, copy_at = (int)tu_rng_range(r, 0, 6);
        int inplace = (int)tu_rng_range(r, 0, 1);

        if (ccm && ivlen > 13 - (len > 65535)) /* L must hold the length */
            ivlen = 12;
        tu_rng_fill(r, iv, sizeof(iv));
        if (!enc)
            seal(name, ivlen, ccm ? taglen : 16, iv, aadlen, len, ct, tag);
        /* CCM takes its lengths with the key: set them, then key and IV */
        if (!both_set_size(&p, OSSL_CIPHER_PARAM_AEAD_IVLEN, ivlen)
            || (ccm && !both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, NULL, taglen))
            || !both_init(&p, ccm ? key : NULL, iv, enc)
            || (ccm && !enc && !both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, tag, taglen)))
            break;
        if (!ccm && !enc && tag_first && !both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, tag, taglen))
            break;
        if (ccm && (aadlen > 0 || tu_rng_range(r, 0, 1)) && !both_update(&p, 0, NULL, len, 0))
            break;
        if (copy_at == 0)
            both_copy(&p);
        np = split(r, aadlen, piece, !ccm || tu_rng_range(r, 0, 3) == 0);
        for (i = 0, off = 0; i < np; off += piece[i++])
            if (!both_update(&p, 0, aad + off, piece[i], 0))
                goto done;
        if (copy_at == 1)
            both_copy(&p);
        np = split(r, len, piece, !ccm && (enc || !tag_first)); /* see tag_first_split */
        for (i = 0, off = 0; i < np; off += piece[i++]) {
            if (!both_update(&p, 1, (enc ? msg : ct) + off, piece[i], inplace))
                goto done;
            if (copy_at == 2 && i == 0)
                both_copy(&p);
        }
        if (!ccm && !enc && !tag_first && !both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, tag, taglen))
            break;
        if (copy_at == 3)
            both_copy(&p);
        if (!both_final(&p))
            break;
        both_get_octets(&p, OSSL_CIPHER_PARAM_UPDATED_IV, ivlen);
        if (enc)
            both_get_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, ccm ? taglen : tu_rng_range(r, 1, 16));
    }
done:
    pair_close(&p);
}

static void differential(void **state)
{
    size_t a;
    int i, n = require_offload ? 100 : 400;

    (void)state;
    for (a = 0; a < NALGS; a++) {
        tu_rng r;

        tu_rng_seed(&r, tu_seed_mix(seed, a, 0));
        for (i = 0; i < n; i++)
            random_sequence(algs[a], &r);
    }
    printf("%d random sequences per algorithm, %lu calls compared\n", n, compared);
}

/* Lengths and calls the default provider refuses, and a few it takes: the same answer. */
static void edges(void **state)
{
    static const size_t ivlens[] = { 0, 1, 6, 7, 12, 13, 14, 16, 128, 129 };
    static const size_t taglens[] = { 0, 1, 3, 4, 5, 6, 15, 16, 17 };
    unsigned char iv[129] = { 9 }, tag[17] = { 7 };
    size_t a, i;
    struct pair p;

    (void)state;
    for (a = 0; a < NALGS; a++) {
        for (i = 0; i < sizeof(ivlens) / sizeof(ivlens[0]); i++) {
            pair_open(&p, algs[a], 1);
            if (both_set_size(&p, OSSL_CIPHER_PARAM_AEAD_IVLEN, ivlens[i]) && both_init(&p, is_ccm(algs[a]) ? key : NULL, iv, 1)
                && both_update(&p, 0, aad, 5, 0) && both_update(&p, 1, msg, 40, 0))
                both_final(&p);
            pair_close(&p);
        }
        for (i = 0; i < sizeof(taglens) / sizeof(taglens[0]); i++) {
            pair_open(&p, algs[a], 0);
            both_set_size(&p, OSSL_CIPHER_PARAM_AEAD_IVLEN, 12);
            both_init(&p, is_ccm(algs[a]) ? key : NULL, iv, 0);
            both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, tag, taglens[i]);
            pair_close(&p);
        }
        /* No IV on decrypt; data before the key's IV; CCM: AAD before the length, a wrong length. */
        pair_open(&p, algs[a], 0);
        both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, tag, 16);
        both_update(&p, 1, msg, 16, 0);
        pair_close(&p);
        pair_open(&p, algs[a], 1);
        both_set_size(&p, OSSL_CIPHER_PARAM_AEAD_IVLEN, 12);
        both_init(&p, is_ccm(algs[a]) ? key : NULL, iv, 1);
        if (is_ccm(algs[a])) {
            both_update(&p, 0, aad, 5, 0);
            both_update(&p, 0, NULL, 32, 0);
            both_update(&p, 1, msg, 31, 0);
        } else {
            both_update(&p, 1, msg, 31, 0);
            both_update(&p, 0, aad, 5, 0); /* AAD after data */
            both_final(&p);
            both_final(&p); /* twice */
            both_update(&p, 1, msg, 1, 0);
        }
        pair_close(&p);
    }
}

/* A wrong tag, AAD or ciphertext fails, and the output holds no plaintext. */
static void tampered(void **state)
{
    static unsigned char ct[4096], tag[16], out[4096 + 16];
    unsigned char iv[12] = { 3 };
    size_t a, len = 1000;
    int what, n, m, ok;

    (void)state;
    for (a = 0; a < NALGS; a++) {
        int ccm = is_ccm(algs[a]);

        for (what = 0; what < 3; what++) {
            EVP_CIPHER_CTX *ctx = aead_ctx(algs[a], "provider=ccree", 0, 12, 16);
            unsigned char bad_aad[13];

            seal(algs[a], 12, 16, iv, 13, len, ct, tag);
            memcpy(bad_aad, aad, 13);
            tag[0] ^= what == 0;
            bad_aad[12] ^= what == 1;
            ct[len - 1] ^= what == 2;
            memset(out, 0, sizeof(out));
            assert_int_equal(EVP_DecryptInit_ex2(ctx, NULL, NULL, iv, NULL), 1);
            assert_int_equal(set_octets(ctx, OSSL_CIPHER_PARAM_AEAD_TAG, tag, 16), 1);
            if (ccm)
                assert_int_equal(EVP_DecryptUpdate(ctx, NULL, &n, NULL, (int)len), 1);
            assert_int_equal(EVP_DecryptUpdate(ctx, NULL, &n, bad_aad, 13), 1);
            ok = EVP_DecryptUpdate(ctx, out, &n, ct, (int)len) && EVP_DecryptFinal_ex(ctx, out + n, &m);
            assert_int_equal(ok, 0);
            assert_true(tu_error_says("bad decrypt"));
            for (n = 0; n < (int)len; n++)
                if (out[n] != 0) {
                    fprintf(stderr, "%s: plaintext released after a tampered %s\n", algs[a],
                            what == 0 ? "tag" : what == 1 ? "AAD" : "ciphertext");
                    fail();
                }
            EVP_CIPHER_CTX_free(ctx);
        }
    }
}


/* --- every length, right and wrong tag ----------------------------------------------------- */

static const size_t short_lens[] = { 0, 1, 15, 16, 17, 64 };
static const char *auto_cnf; /* offload-min = auto: each new library context a fresh provider */

/*
 * One decryption through lib and props, CCM's tag (and GCM's when tag_first) set before the
 * data, GCM's otherwise after it (its update then releases the plaintext before final refuses
 * it, in both providers): 1 accepted, 0 refused.
 */
static int open_msg(OSSL_LIB_CTX *lib, const char *name, const char *props, size_t taglen,
                    int tag_first, const unsigned char *iv, size_t aadlen, const unsigned char *ct,
                    size_t len, const unsigned char *tag, unsigned char *out)
{
    EVP_CIPHER_CTX *ctx = aead_ctx_in(lib, name, props, 0, 12, taglen);
    int ccm = is_ccm(name), n = 0, m = 0, ok;

    tag_first |= ccm;
    ok = EVP_DecryptInit_ex2(ctx, NULL, NULL, iv, NULL)
         && (!tag_first || set_octets(ctx, OSSL_CIPHER_PARAM_AEAD_TAG, tag, taglen))
         && (!ccm || EVP_DecryptUpdate(ctx, NULL, &n, NULL, (int)len))
         && EVP_DecryptUpdate(ctx, NULL, &n, aad, (int)aadlen)
         && EVP_DecryptUpdate(ctx, out, &n, ct, (int)len)
         && (tag_first || set_octets(ctx, OSSL_CIPHER_PARAM_AEAD_TAG, tag, taglen))
         && EVP_DecryptFinal_ex(ctx, out + n, &m);
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* A refused decryption left no byte of the plaintext in out (poisoned with 0xa5 before). */
static int no_plaintext(const unsigned char *out, size_t len)
{
    size_t i;

    for (i = 0; i < len; i++)
        if (out[i] == msg[i] && msg[i] != 0 && msg[i] != 0xa5)
            return 0;
    return 1;
}

/*
 * ccree's verdict on one message under lib (ccree as configured there) against the default
 * provider's: the same, a refusal with ccree's error and no plaintext, an acceptance with it.
 * 0, or 1 with what is wrong printed.
 */
static int wrong_verdict(OSSL_LIB_CTX *lib, const char *name, size_t taglen, int tag_first,
                         const unsigned char *iv, size_t aadlen, const unsigned char *ct, size_t len,
                         const unsigned char *tag, int forged)
{
    static unsigned char out[2][64 + 16];
    int r[2], i, bad;

    for (i = 0; i < 2; i++) {
        memset(out[i], 0xa5, sizeof(out[i]));
        r[i] = open_msg(i ? NULL : lib, name, i ? "provider=default" : "provider=ccree", taglen,
                        tag_first, iv, aadlen, ct, len, tag, out[i]);
    }
    bad = r[1] != !forged || r[0] != r[1] || (r[0] && memcmp(out[0], msg, len) != 0)
          || (!r[0] && !ccree_error())
          || (!r[0] && (tag_first || is_ccm(name)) && !no_plaintext(out[0], len));
    if (bad)
        fprintf(stderr, "%s, tag of %zu bytes %s, AAD %zu, text %zu, %s tag: ccree %s, the default "
                "provider %s\n", name, taglen, tag_first ? "first" : "last", aadlen, len,
                forged ? "wrong" : "right", r[0] ? "accepts" : "refuses", r[1] ? "accepts" : "refuses");
    ERR_clear_error();
    return bad;
}

/* The tag lengths a mode allows: GCM 4, 8, 12 to 16; CCM 4 to 16, even. */
static int tag_allowed(int ccm, size_t t)
{
    return ccm ? t % 2 == 0 : t == 4 || t == 8 || t >= 12;
}

/* Every (AAD, text) length pair x tag length x right and wrong tag, ccree encrypting. */
static void lengths(void **state)
{
    static unsigned char ct[2][64], tag[2][16];
    unsigned char iv[12] = { 9, 8, 7 };
    size_t a, t, x, y, forged, first;

    (void)state;
    for (a = 0; a < NALGS; a++) {
        int ccm = is_ccm(algs[a]);
        tu_alg_info before = tu_alg(prov, algs[a]), after;

        for (t = 4; t <= 16; t++)
            for (x = 0; tag_allowed(ccm, t) && x < 6; x++)
                for (y = 0; y < 6; y++) {
                    size_t aadlen = short_lens[x], len = short_lens[y];

                    seal_as("provider=ccree", algs[a], 12, t, iv, aadlen, len, ct[0], tag[0]);
                    seal(algs[a], 12, t, iv, aadlen, len, ct[1], tag[1]);
                    if (memcmp(ct[0], ct[1], len) != 0 || memcmp(tag[0], tag[1], t) != 0)
                        fail_msg("%s, tag %zu, AAD %zu, text %zu: ccree seals differently",
                                 algs[a], t, aadlen, len);
                    for (forged = 0; forged < 2; forged++) {
                        tag[1][t - 1] ^= (unsigned char)forged;
                        for (first = 0; first < 2 - (size_t)ccm; first++)
                            assert_false(wrong_verdict(NULL, algs[a], t, (int)first, iv, aadlen,
                                                       ct[1], len, tag[1], (int)forged));
                    }
                }
        after = tu_alg(prov, algs[a]);
        printf("%s: %llu offloaded, %llu in software\n", algs[a],
               (unsigned long long)(after.offload_ops - before.offload_ops),
               (unsigned long long)(after.fallback_ops - before.fallback_ops));
        if (strcmp(tu_expected_state(&after), "offload") == 0)
            assert_true(after.offload_ops > before.offload_ops);
    }
}

/*
 * offload-min = auto measures each path once first, so a new process sends its first request
 * of a size to the kernel: forged empty messages, each the first request of a process forked
 * from one that loaded ccree under auto and sent it nothing, are refused.
 */
static void forged_auto(void **state)
{
    static unsigned char ct[16], tag[16];
    unsigned char iv[12] = { 4 };
    OSSL_LIB_CTX *lib;
    size_t a, k;

    (void)state;
    if (auto_cnf == NULL)
        skip();
    assert_non_null(lib = OSSL_LIB_CTX_new());
    assert_int_equal(OSSL_LIB_CTX_load_config(lib, auto_cnf), 1);
    for (a = 0; a < NALGS; a++)
        for (k = 0; k < 4; k++) {
            int status = -1;
            pid_t pid;

            seal(algs[a], 12, 16, iv, 0, 0, ct, tag);
            tag[k] ^= 0x40;
            if ((pid = fork()) == 0)
                _exit(wrong_verdict(lib, algs[a], 16, k & 1, iv, 0, ct, 0, tag, 1)
                      || wrong_verdict(lib, algs[a], 16, k & 1, iv, 0, ct, 0, tag, 1));
            assert_true(pid > 0);
            assert_int_equal(waitpid(pid, &status, 0), pid);
            assert_int_equal(status, 0);
        }
    OSSL_LIB_CTX_free(lib);
}

/*
 * GCM, tag set first, data in two updates: the first update cannot know it is not the whole
 * message, so it is checked whole, fails, and its output is withheld; the second update fails
 * (the default provider would release unauthenticated plaintext and go on).
 */
static void tag_first_split(void **state)
{
    static unsigned char ct[2000], out[2000];
    unsigned char iv[12] = { 8 }, tag[16];
    size_t a, i;
    int n;

    (void)state;
    for (a = 0; a < 3; a++) {
        EVP_CIPHER_CTX *ctx = aead_ctx(algs[a], "provider=ccree", 0, 12, 16);

        seal(algs[a], 12, 16, iv, 0, 2000, ct, tag);
        memset(out, 0x55, sizeof(out));
        assert_int_equal(EVP_DecryptInit_ex2(ctx, NULL, NULL, iv, NULL), 1);
        assert_int_equal(set_octets(ctx, OSSL_CIPHER_PARAM_AEAD_TAG, tag, 16), 1);
        assert_int_equal(EVP_DecryptUpdate(ctx, out, &n, ct, 1000), 1);
        for (i = 0; i < 1000; i++)
            assert_int_equal(out[i], 0);
        assert_int_equal(EVP_DecryptUpdate(ctx, out + 1000, &n, ct + 1000, 1000), 0);
        assert_true(tu_error_says("takes its data in one update"));
        EVP_CIPHER_CTX_free(ctx);
    }
}

/* EVP_Cipher of no data is no step, also on a GCM decryption with its tag set first. */
static void cipher_empty(void **state)
{
    static unsigned char ct[100];
    unsigned char iv[12] = { 8 }, tag[16];
    size_t a;
    int enc;
    struct pair p;

    (void)state;
    for (a = 0; a < NALGS; a++)
        for (enc = 0; enc < 2 && !is_ccm(algs[a]); enc++) {
            seal(algs[a], 12, 16, iv, 5, sizeof(ct), ct, tag);
            pair_open(&p, algs[a], enc);
            both_init(&p, NULL, iv, enc);
            if (!enc)
                both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, tag, 16);
            if (both_cipher(&p, 0, aad, 5, 0) && both_cipher(&p, 1, enc ? msg : ct, 0, 0)
                && both_cipher(&p, 1, enc ? msg : ct, sizeof(ct), 0)
                && both_cipher(&p, 1, NULL, 0, 0) && enc)
                both_get_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, 16);
            pair_close(&p);
        }
}

/* --- TLS records, as libssl drives them ------------------------------------------------------- */

/* TLS 1.2: fixed IV, then per record tlsaad (reading tlsaadpad) and one in-place call. */
static size_t tls12_record(EVP_CIPHER_CTX *ctx, int enc, unsigned char *rec, size_t payload,
                           uint64_t seq, int use_cipher)
{
    unsigned char ad[13];
    size_t pad = 0, len, i;
    OSSL_PARAM p[] = { OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, &pad), OSSL_PARAM_END };
    int n;

    for (i = 0; i < 8; i++)
        ad[i] = (unsigned char)(seq >> (56 - 8 * i));
    ad[8] = 23, ad[9] = 3, ad[10] = 3;
    len = payload + 8 + (enc ? 0 : 16);
    ad[11] = (unsigned char)(len >> 8), ad[12] = (unsigned char)len;
    if (!set_octets(ctx, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, ad, 13) || !EVP_CIPHER_CTX_get_params(ctx, p))
        return 0;
    assert_int_equal(pad, 16);
    len = payload + 8 + 16;
    if (use_cipher)
        return EVP_Cipher(ctx, rec, rec, (unsigned int)len) > 0 ? len : 0;
    return EVP_CipherUpdate(ctx, rec, &n, rec, (int)len) ? (size_t)n : 0;
}

static EVP_CIPHER_CTX *tls12_ctx(const char *name, const char *props, int enc, const unsigned char *fixed,
                                 size_t fixedlen)
{
    EVP_CIPHER_CTX *ctx = aead_ctx(name, props, enc, 12, 16);

    assert_true(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IV_FIXED, (int)fixedlen, (void *)fixed) > 0);
    return ctx;
}

/* Records both ways between ccree and the default provider, and ccree against itself. */
static void tls12(void **state)
{
    static const size_t payloads[] = { 0, 1, 100, 1500, 16384 };
    static unsigned char rec[3][16384 + 64];
    unsigned char fixed[12] = { 0xf1, 0xf2, 0xf3, 0xf4, 0, 0, 0, 0, 0, 0, 0, 9 };
    const char *props[2] = { "provider=ccree", "provider=default" };
    size_t a, i;
    int s, whole;

    (void)state;
    for (a = 0; a < NALGS; a++)
        for (whole = 0; whole < 2; whole++) {
            /* GCM: a 4-byte fixed part (random explicit part) or the whole IV (-1: exact). */
            size_t fl = whole && !is_ccm(algs[a]) ? (size_t)-1 : 4;

            for (s = 0; s < 2; s++) {
                EVP_CIPHER_CTX *e = tls12_ctx(algs[a], props[s], 1, fixed, fl);
                EVP_CIPHER_CTX *d = tls12_ctx(algs[a], props[!s], 0, fixed, fl);
                EVP_CIPHER_CTX *o = fl == (size_t)-1 ? tls12_ctx(algs[a], props[!s], 1, fixed, fl) : NULL;

                for (i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
                    size_t n = payloads[i], len = n + 24;
                    int use_cipher = (int)(i & 1);

                    if (is_ccm(algs[a])) /* the explicit nonce comes from the caller's buffer */
                        memset(rec[0], (int)i, 8), memset(rec[2], (int)i, 8);
                    memcpy(rec[0] + 8, msg, n);
                    memcpy(rec[2] + 8, msg, n);
                    assert_int_equal(tls12_record(e, 1, rec[0], n, i, use_cipher), len);
                    if (o != NULL) {
                        assert_int_equal(tls12_record(o, 1, rec[2], n, i, use_cipher), len);
                        assert_memory_equal(rec[0], rec[2], len);
                    }
                    memcpy(rec[1], rec[0], len);
                    assert_int_equal(tls12_record(d, 0, rec[1], n, i, use_cipher),
                                     use_cipher ? len : n);
                    assert_memory_equal(rec[1] + 8, msg, n);
                    /* the same record again, a bit flipped: refused and wiped */
                    memcpy(rec[1], rec[0], len);
                    rec[1][len - 1] ^= 1;
                    assert_int_equal(tls12_record(d, 0, rec[1], n, i, use_cipher), 0);
                    ERR_clear_error();
                    for (len = 0; len < n; len++)
                        assert_int_equal(rec[1][8 + len], 0);
                }
                EVP_CIPHER_CTX_free(e);
                EVP_CIPHER_CTX_free(d);
                EVP_CIPHER_CTX_free(o);
            }
        }
}

/* CCM's IV length changed after the key: its length, AAD and data are refused until a key, as
 * the default provider refuses them (its key's L does not fit the new IV). */
static void ccm_late_ivlen(void **state)
{
    unsigned char iv[13] = { 5 }, tag[16] = { 6 };
    size_t a;
    int enc;
    struct pair p;

    (void)state;
    for (a = 0; a < NALGS; a++)
        for (enc = 0; enc < 2 && is_ccm(algs[a]); enc++) {
            pair_open_with(&p, algs[a], enc, NULL);
            both_set_size(&p, OSSL_CIPHER_PARAM_AEAD_IVLEN, 12);
            both_init(&p, key, iv, enc);
            both_set_size(&p, OSSL_CIPHER_PARAM_AEAD_IVLEN, 7);
            both_init(&p, NULL, iv, enc);
            if (!enc)
                both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, tag, sizeof(tag));
            both_update(&p, 0, NULL, 16, 0);
            both_update(&p, 0, aad, 5, 0);
            both_update(&p, 1, msg, 16, 0);
            pair_close(&p);
        }
}

/* A GCM TLS 1.2 record refused for want of a key spends its IV and tlsaad, as in the default
 * provider: a key set after it takes no AAD or data until a new IV. */
static void tls12_keyless(void **state)
{
    static const unsigned char fixed[4] = { 0xf1, 0xf2, 0xf3, 0xf4 };
    unsigned char ad[13] = { 0, 0, 0, 0, 0, 0, 0, 1, 23, 3, 3, 0, 40 };
    size_t a;
    int enc;
    struct pair p;

    (void)state;
    for (a = 0; a < NALGS; a++)
        for (enc = 0; enc < 2 && !is_ccm(algs[a]); enc++) {
            pair_open_with(&p, algs[a], enc, NULL);
            ad[12] = enc ? 40 : 64; /* the record's length: its data, or the whole */
            both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, fixed, sizeof(fixed));
            both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, ad, sizeof(ad));
            both_cipher(&p, 1, msg, 64, 1); /* the record */
            if (both_init(&p, key, NULL, enc) && both_update(&p, 0, aad, 5, 0))
                both_update(&p, 1, msg, 16, 0);
            pair_close(&p);
        }
}

/* A GCM TLS 1.2 record refused for its output starting inside its input spends its IV and
 * tlsaad, as in the default provider: an in-place call after it is no record. */
static void tls12_overlap(void **state)
{
    static const unsigned char fixed[12] = { 0xf1, 0xf2, 0xf3, 0xf4 };
    unsigned char ad[13] = { 0, 0, 0, 0, 0, 0, 0, 1, 23, 3, 3, 0, 40 };
    tu_errs e[2];
    size_t a;
    int enc, r[2], i;
    struct pair p;

    (void)state;
    for (a = 0; a < NALGS; a++)
        for (enc = 0; enc < 2 && !is_ccm(algs[a]); enc++) {
            pair_open(&p, algs[a], enc);
            ad[12] = enc ? 40 : 64;
            both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, fixed, enc ? 4 : 12);
            both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, ad, sizeof(ad));
            tu_note(&p.t.log, " cipher-record64-ahead1");
            TU_BOTH(i, e, memcpy(p.out[i], msg, 64);
                    r[i] = EVP_Cipher(p.ctx[i], p.out[i] + 1, p.out[i], 64));
            tu_same(&p.t, r[0] >= 0, r[1] >= 0, e, "EVP_Cipher");
            both_cipher(&p, 1, msg, 64, 1);
            pair_close(&p);
        }
}

/* TLS 1.3: per record a new IV (key kept), tag first on decrypt, header as AAD, one update. */
static int tls13_record(EVP_CIPHER_CTX *ctx, int ccm, int enc, const unsigned char *iv,
                        unsigned char *rec, size_t len, unsigned char *tag)
{
    unsigned char hdr[5] = { 23, 3, 3, (unsigned char)((len + 16) >> 8), (unsigned char)(len + 16) };
    int n, m;

    return EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc)
           && (enc || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag) > 0)
           && (!ccm || EVP_CipherUpdate(ctx, NULL, &n, NULL, (int)len))
           && EVP_CipherUpdate(ctx, NULL, &n, hdr, 5) && EVP_CipherUpdate(ctx, rec, &n, rec, (int)len)
           && EVP_CipherFinal_ex(ctx, rec + n, &m) && (size_t)(n + m) == len
           && (!enc || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0);
}

/* A TLS 1.3 context as libssl makes one: a 12-byte nonce and a 16-byte tag, then the key. */
static EVP_CIPHER_CTX *tls13_ctx(const char *name, const char *props, int enc)
{
    return aead_ctx(name, props, enc, 12, 16);
}

static void tls13(void **state)
{
    static const size_t lens[] = { 0, 1, 100, 1500, 16385 };
    static unsigned char rec[3][16385];
    size_t a, i, s;

    (void)state;
    for (a = 0; a < NALGS; a++)
        for (s = 0; s < 2; s++) {
            /* ccree and the default provider encrypt; each in turn decrypts */
            EVP_CIPHER_CTX *ctx[3] = { tls13_ctx(algs[a], "provider=ccree", 1),
                                       tls13_ctx(algs[a], s ? "provider=ccree" : "provider=default", 0),
                                       tls13_ctx(algs[a], "provider=default", 1) };
            int k, ccm = is_ccm(algs[a]);

            for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
                unsigned char iv[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, (unsigned char)i };
                unsigned char tag[2][16];

                memcpy(rec[0], msg, lens[i]);
                memcpy(rec[2], msg, lens[i]);
                assert_true(tls13_record(ctx[0], ccm, 1, iv, rec[0], lens[i], tag[0]));
                assert_true(tls13_record(ctx[2], ccm, 1, iv, rec[2], lens[i], tag[1]));
                assert_memory_equal(rec[0], rec[2], lens[i]);
                assert_memory_equal(tag[0], tag[1], 16);
                memcpy(rec[1], rec[0], lens[i]);
                assert_true(tls13_record(ctx[1], ccm, 0, iv, rec[1], lens[i], tag[0]));
                assert_memory_equal(rec[1], msg, lens[i]);
            }
            for (k = 0; k < 3; k++)
                EVP_CIPHER_CTX_free(ctx[k]);
        }
}



/* Kernel and software ops of algs[a] since *before, which moves on. */
static void ops_since(size_t a, tu_alg_info *before, uint64_t *kernel, uint64_t *software)
{
    tu_alg_info after = tu_alg(prov, algs[a]);

    *kernel = after.offload_ops - before->offload_ops;
    *software = after.fallback_ops - before->fallback_ops;
    *before = after;
}

/*
 * Messages with no data show their work all the same: an AAD-only message reads its AAD back
 * (right tag accepted, wrong refused: one kernel op each), empty TLS 1.2 and 1.3 records their
 * AAD or tag; an empty decryption is not sent (no kernel op).
 */
static void empty_outputs(void **state)
{
    static unsigned char ct[16], tag[16], out[64], rec[2][8 + 16];
    unsigned char iv[12] = { 6 }, fixed[4] = { 4, 3, 2, 1 };
    uint64_t k, sw;
    size_t a;
    int forged;

    (void)state;
    for (a = 0; a < NALGS; a++) {
        tu_alg_info before = tu_alg(prov, algs[a]);
        int want = strcmp(tu_expected_state(&before), "offload") == 0;
        EVP_CIPHER_CTX *e = tls12_ctx(algs[a], "provider=ccree", 1, fixed, 4);
        EVP_CIPHER_CTX *d = tls12_ctx(algs[a], "provider=ccree", 0, fixed, 4);

        for (forged = 0; forged < 2; forged++) {
            seal(algs[a], 12, 16, iv, 13, 0, ct, tag);
            tag[5] ^= (unsigned char)forged;
            ops_since(a, &before, &k, &sw);
            assert_int_equal(open_msg(NULL, algs[a], "provider=ccree", 16, 1, iv, 13, ct, 0, tag,
                                      out), !forged);
            ops_since(a, &before, &k, &sw);
            if (want && (k != 1 || sw != 0))
                fail_msg("%s, AAD only, %s tag: %llu kernel, %llu software ops", algs[a],
                         forged ? "wrong" : "right", (unsigned long long)k, (unsigned long long)sw);
        }
        assert_false(open_msg(NULL, algs[a], "provider=ccree", 16, 1, iv, 0, ct, 0, tag, out));
        ops_since(a, &before, &k, &sw);
        if (k != 0)
            fail_msg("%s, empty decryption: %llu kernel ops", algs[a], (unsigned long long)k);
        memset(rec, 0, sizeof(rec));
        assert_int_equal(tls12_record(e, 1, rec[0], 0, 1, 0), 24);
        memcpy(rec[1], rec[0], sizeof(rec[0]));
        assert_int_equal(tls12_record(d, 0, rec[1], 0, 1, 0), 0);
        rec[0][23] ^= 1;
        assert_int_equal(tls12_record(d, 0, rec[0], 0, 1, 0), 0);
        ERR_clear_error();
        EVP_CIPHER_CTX_free(e);
        EVP_CIPHER_CTX_free(d);
        e = tls13_ctx(algs[a], "provider=ccree", 1);
        d = tls13_ctx(algs[a], "provider=ccree", 0);
        assert_true(tls13_record(e, is_ccm(algs[a]), 1, iv, rec[0], 0, tag));
        assert_true(tls13_record(d, is_ccm(algs[a]), 0, iv, rec[0], 0, tag));
        ops_since(a, &before, &k, &sw);
        if (want && (k != 5 || sw != 0))
            fail_msg("%s, empty records: %llu kernel, %llu software ops", algs[a],
                     (unsigned long long)k, (unsigned long long)sw);
        EVP_CIPHER_CTX_free(e);
        EVP_CIPHER_CTX_free(d);
    }
}

/* --- nonces --------------------------------------------------------------------------------- */

/*
 * A re-init with the key and no IV after data was encrypted must not encrypt under the same
 * nonce again: ccree refuses with its error (the default provider refuses for CCM and, for
 * GCM, goes on with the old message's state).
 */
static void nonce_reuse(void **state)
{
    unsigned char iv[12] = { 7 }, ct[2][32];
    size_t a;
    int n, k;

    (void)state;
    for (a = 0; a < NALGS; a++) {
        EVP_CIPHER_CTX *ctx = aead_ctx(algs[a], "provider=ccree", 1, 12, 16);
        int ccm = is_ccm(algs[a]), ok = 1;

        for (k = 0; k < 2 && ok; k++) {
            ok = EVP_EncryptInit_ex2(ctx, NULL, key, k ? NULL : iv, NULL)
                 && (!ccm || EVP_EncryptUpdate(ctx, NULL, &n, NULL, 32))
                 && EVP_EncryptUpdate(ctx, ct[k], &n, msg, 32);
        }
        if (ok)
            fail_msg("%s: a second message under the same nonce was encrypted (%s keystream)",
                     algs[a], memcmp(ct[0], ct[1], 32) == 0 ? "the same" : "other");
        assert_true(ccree_error());
        EVP_CIPHER_CTX_free(ctx);
    }
}

/* One GCM message as libssl's IV_GEN path makes it: the nonce given out, then AAD, data, tag. */
static int ivgen_message(EVP_CIPHER_CTX *ctx, unsigned char *nonce, unsigned char *out)
{
    int n, m;

    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_IV_GEN, 8, nonce) > 0
           && EVP_EncryptUpdate(ctx, NULL, &n, aad, 13) && EVP_EncryptUpdate(ctx, out, &n, msg, 100)
           && EVP_EncryptFinal_ex(ctx, out + n, &m)
           && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, out + 100) > 0;
}

/*
 * tlsivgen (EVP_CTRL_GCM_IV_GEN): the nonce given out is the one the message uses, and a TLS
 * 1.2 record after it takes the next: in lockstep with the default provider, from one fixed
 * whole IV.
 */
static void ivgen(void **state)
{
    unsigned char fixed[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
    unsigned char nonce[2][3][8], out[2][3][100 + 16 + 24];
    size_t a;
    int i, k;

    (void)state;
    for (a = 0; a < NALGS; a++) {
        if (is_ccm(algs[a]))
            continue;
        for (i = 0; i < 2; i++) {
            EVP_CIPHER_CTX *ctx = aead_ctx(algs[a], i ? "provider=default" : "provider=ccree", 1,
                                           12, 16);

            assert_true(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, -1, fixed) > 0);
            for (k = 0; k < 2; k++)
                assert_true(ivgen_message(ctx, nonce[i][k], out[i][k]));
            memcpy(out[i][2] + 8, msg, 100);
            assert_int_equal(tls12_record(ctx, 1, out[i][2], 100, 5, 0), 100 + 24);
            EVP_CIPHER_CTX_free(ctx);
        }
        for (k = 0; k < 2; k++)
            if (memcmp(nonce[0][k], nonce[1][k], 8) != 0 || memcmp(out[0][k], out[1][k], 116) != 0)
                fail_msg("%s: IV_GEN message %d: ccree's nonce or message differs", algs[a], k);
        if (memcmp(out[0][2], out[1][2], 124) != 0)
            fail_msg("%s: the TLS record after IV_GEN differs", algs[a]);
    }
}

/* --- which patterns are offloaded ------------------------------------------------------------- */

enum pattern { ONESHOT_ENC, TAG_FIRST_DEC, TLS12, TLS13, GCM_IV16, GCM_TWO_UPDATES, GCM_TAG_AFTER,
               CCM_TWO_AAD };
static const char *const pattern_name[] = { "one-shot encryption", "decryption, tag first",
                                            "TLS 1.2 records", "TLS 1.3 records", "GCM, 16-byte IV",
                                            "GCM, data in two updates", "GCM, tag after the data",
                                            "CCM, AAD in two updates" };

static void run_pattern(const char *name, enum pattern pat)
{
    static unsigned char ct[2048], out[2048 + 64], tag[16];
    unsigned char iv[16] = { 5 }, fixed[4] = { 1, 2, 3, 4 };
    int ccm = is_ccm(name), enc = pat == ONESHOT_ENC || pat == GCM_IV16 || pat == GCM_TWO_UPDATES
                                  || pat == CCM_TWO_AAD;
    size_t ivlen = pat == GCM_IV16 ? 16 : 12, len = 1024;
    EVP_CIPHER_CTX *ctx = aead_ctx(name, "provider=ccree", enc, ivlen, 16);
    int n, m;

    if (pat == TLS12) {
        EVP_CIPHER_CTX *e = tls12_ctx(name, "provider=ccree", 1, fixed, 4);
        EVP_CIPHER_CTX *d = tls12_ctx(name, "provider=ccree", 0, fixed, 4);

        memset(out, 0, 8);
        assert_int_equal(tls12_record(e, 1, out, len, 7, 0), len + 24);
        assert_int_equal(tls12_record(d, 0, out, len, 7, 0), len);
        EVP_CIPHER_CTX_free(e);
        EVP_CIPHER_CTX_free(d);
    } else if (pat == TLS13) {
        EVP_CIPHER_CTX *e = tls13_ctx(name, "provider=ccree", 1);
        EVP_CIPHER_CTX *d = tls13_ctx(name, "provider=ccree", 0);

        memcpy(out, msg, len);
        assert_true(tls13_record(e, ccm, 1, iv, out, len, tag));
        assert_true(tls13_record(d, ccm, 0, iv, out, len, tag));
        assert_memory_equal(out, msg, len);
        EVP_CIPHER_CTX_free(e);
        EVP_CIPHER_CTX_free(d);
    } else {
        if (!enc)
            seal(name, ivlen, 16, iv, 13, len, ct, tag);
        assert_int_equal(EVP_CipherInit_ex2(ctx, NULL, NULL, iv, enc, NULL), 1);
        if (!enc && pat != GCM_TAG_AFTER)
            assert_int_equal(set_octets(ctx, OSSL_CIPHER_PARAM_AEAD_TAG, tag, 16), 1);
        if (ccm)
            assert_int_equal(EVP_CipherUpdate(ctx, NULL, &n, NULL, (int)len), 1);
        assert_int_equal(EVP_CipherUpdate(ctx, NULL, &n, aad, pat == CCM_TWO_AAD ? 6 : 13), 1);
        if (pat == CCM_TWO_AAD)
            assert_int_equal(EVP_CipherUpdate(ctx, NULL, &n, aad + 6, 7), 1);
        if (pat == GCM_TWO_UPDATES) {
            assert_int_equal(EVP_CipherUpdate(ctx, out, &n, msg, 512), 1);
            assert_int_equal(EVP_CipherUpdate(ctx, out + 512, &n, msg + 512, (int)len - 512), 1);
        } else {
            assert_int_equal(EVP_CipherUpdate(ctx, out, &n, enc ? msg : ct, (int)len), 1);
        }
        if (pat == GCM_TAG_AFTER)
            assert_int_equal(set_octets(ctx, OSSL_CIPHER_PARAM_AEAD_TAG, tag, 16), 1);
        assert_int_equal(EVP_CipherFinal_ex(ctx, out + len, &m), 1);
        if (!enc)
            assert_memory_equal(out, msg, len);
    }
    EVP_CIPHER_CTX_free(ctx);
}

static void offload(void **state)
{
    size_t a;
    int pat;

    (void)state;
    for (a = 0; a < NALGS; a++)
        for (pat = ONESHOT_ENC; pat <= CCM_TWO_AAD; pat++) {
            int kernel = pat <= TLS13;
            tu_alg_info before, after;

            if (is_ccm(algs[a]) ? pat >= GCM_IV16 && pat != CCM_TWO_AAD : pat == CCM_TWO_AAD)
                continue;
            before = tu_alg(prov, algs[a]);
            run_pattern(algs[a], (enum pattern)pat);
            after = tu_alg(prov, algs[a]);
            printf("%s, %s: %llu offloaded, %llu in software\n", algs[a], pattern_name[pat],
                   (unsigned long long)(after.offload_ops - before.offload_ops),
                   (unsigned long long)(after.fallback_ops - before.fallback_ops));
            if (kernel)
                assert_true(tu_counter_rule(&before, &after, 0));
            else
                assert_true(after.fallback_ops > before.fallback_ops);
        }
}

/*
 * A CCM final before the message's data came, in lockstep, each on a new pair: without an IV,
 * with nothing, with an announced length, AAD only, and decryptions with no tag, a wrong tag
 * and the right one. From OpenSSL 3.0.22 the default provider's final takes such a message as
 * the empty one (its tag computed or checked: an empty message's forged tag is refused);
 * before, it did nothing.
 */
static void ccm_final_without_data(void **state)
{
    static const char *const ccms[] = { "AES-128-CCM", "AES-256-CCM" };
    unsigned char iv[7] = { 1, 2, 3, 4, 5, 6, 7 }, zero[12] = { 0 }, right[12];
    EVP_CIPHER_CTX *ctx;
    struct pair p;
    size_t a;
    int n;

    (void)state;
    for (a = 0; a < sizeof(ccms) / sizeof(ccms[0]); a++) {
        const char *name = ccms[a];

        ctx = aead_ctx(name, "provider=default", 1, 7, 12); /* the right tag of AAD only */
        assert_true(EVP_CipherInit_ex2(ctx, NULL, NULL, iv, 1, NULL)
                    && EVP_CipherUpdate(ctx, NULL, &n, NULL, 0)
                    && EVP_CipherUpdate(ctx, NULL, &n, aad, 7)
                    && EVP_CipherUpdate(ctx, msg, &n, msg, 0)
                    && get_octets(ctx, OSSL_CIPHER_PARAM_AEAD_TAG, right, 12));
        EVP_CIPHER_CTX_free(ctx);

        pair_open(&p, name, 1); /* no IV, then nothing: an empty message */
        both_final(&p);
        both_init(&p, NULL, iv, 1);
        if (both_final(&p))
            both_get_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, 12);
        pair_close(&p);
        pair_open(&p, name, 1); /* a length announced, no data */
        both_init(&p, NULL, iv, 1);
        both_update(&p, 0, NULL, 100, 0);
        both_final(&p);
        pair_close(&p);
        pair_open(&p, name, 1); /* AAD only */
        both_init(&p, NULL, iv, 1);
        both_update(&p, 0, NULL, 0, 0);
        both_update(&p, 0, aad, 7, 0);
        if (both_final(&p))
            both_get_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, 12);
        pair_close(&p);

        pair_open(&p, name, 0); /* no tag */
        both_init(&p, NULL, iv, 0);
        both_final(&p);
        pair_close(&p);
        pair_open(&p, name, 0); /* a wrong tag */
        both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, zero, 12);
        both_init(&p, NULL, iv, 0);
        both_final(&p);
        pair_close(&p);
        pair_open(&p, name, 0); /* the right tag; a second final: the message is done */
        both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, right, 12);
        both_init(&p, NULL, iv, 0);
        both_update(&p, 0, NULL, 0, 0);
        both_update(&p, 0, aad, 7, 0);
        both_final(&p);
        both_final(&p);
        pair_close(&p);
    }
}

/*
 * CCM's finals and updates without input, in lockstep: after a TLS 1.2 record (the default
 * provider's final runs a record of no data, which fails, only where an IV is set and it
 * decrypts or has no tag yet, from OpenSSL 3.0.22; before, always), and an update with output
 * but no input, which does nothing, before a message's length, AAD and data; EVP_Cipher without
 * input or output (a final from 3.0.22), twice. A record under a
 * 9-byte IV fails on both, after the default provider wrote its nonce into the IV.
 */
static void ccm_no_input(void **state)
{
    static const char *const ccms[] = { "AES-128-CCM", "AES-256-CCM" };
    static const unsigned char fixed[4] = { 0xf1, 0xf2, 0xf3, 0xf4 }, iv[12] = { 9, 8, 7 };
    unsigned char ad[13] = { 0, 0, 0, 0, 0, 0, 0, 1, 23, 3, 3, 0, 40 };
    struct pair p;
    size_t a;
    int enc;

    (void)state;
    for (a = 0; a < sizeof(ccms) / sizeof(ccms[0]); a++)
        for (enc = 0; enc < 2; enc++) {
            pair_open_with(&p, ccms[a], enc, NULL);
            ad[12] = enc ? 40 : 64; /* the record's length: its data, or the whole */
            both_set_size(&p, OSSL_CIPHER_PARAM_AEAD_IVLEN, 12);
            both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 16);
            both_init(&p, key, NULL, enc);
            both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, fixed, sizeof(fixed));
            both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, ad, sizeof(ad));
            both_cipher(&p, 1, msg, 64, 1); /* the record */
            both_final(&p);                 /* no IV set */
            both_cipher(&p, 1, NULL, 0, 0);
            both_update(&p, 1, NULL, 0, 0);
            both_init(&p, NULL, iv, enc); /* an IV set */
            both_final(&p);
            both_cipher(&p, 1, NULL, 0, 0);
            both_set_size(&p, OSSL_CIPHER_PARAM_AEAD_IVLEN, 9);
            both_cipher(&p, 1, msg, 64, 1);
            both_final(&p);
            both_get_octets(&p, OSSL_CIPHER_PARAM_UPDATED_IV, 9);
            pair_close(&p);

            pair_open(&p, ccms[a], enc);
            both_init(&p, NULL, iv, enc);
            both_update(&p, 1, NULL, 0, 0);
            if (!enc)
                both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, msg, 12);
            both_update(&p, 0, NULL, 16, 0);
            both_update(&p, 0, aad, 7, 0);
            both_update(&p, 1, msg, 16, 0);
            if (both_final(&p) && enc)
                both_get_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, 12);
            pair_close(&p);

            pair_open(&p, ccms[a], enc); /* EVP_Cipher without input or output, twice */
            both_init(&p, NULL, iv, enc);
            both_cipher(&p, 0, NULL, 16, 0);
            if (both_cipher(&p, 0, NULL, 16, 0) && enc)
                both_get_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, 12);
            pair_close(&p);
        }
}

/*
 * CCM encryption after its data (a one-shot, or streamed in the default provider after AAD in
 * two updates): a length again starts the next message under the same nonce, as in the
 * default provider (ccm_set_iv). The first message's data is longer than all the context kept
 * of it (its AAD).
 */
static void ccm_length_after_data(void **state)
{
    static const char *const ccms[] = { "AES-128-CCM", "AES-256-CCM" };
    static const unsigned char iv[7] = { 3, 1, 4 };
    struct pair p;
    size_t a;
    int streamed;

    (void)state;
    for (a = 0; a < sizeof(ccms) / sizeof(ccms[0]); a++)
        for (streamed = 0; streamed < 2; streamed++) {
            pair_open(&p, ccms[a], 1);
            both_init(&p, NULL, iv, 1);
            both_update(&p, 0, NULL, 4000, 0);
            both_update(&p, 0, aad, 1, 0);
            if (streamed)
                both_update(&p, 0, aad + 1, 1, 0);
            both_update(&p, 1, msg, 4000, 0);
            both_update(&p, 0, NULL, 32, 0);
            both_update(&p, 0, aad, 3, 0);
            both_update(&p, 1, msg, 32, 0);
            if (both_final(&p))
                both_get_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, 12);
            pair_close(&p);
        }
}

/*
 * Where GCM and CCM differ, in lockstep: an empty update before any key (GCM's is no step);
 * the IV read before one is set (GCM's refused);
 * a decryption verified whole with its tag set first, then given a tag again (wrong, or the
 * same) before final, which checks the tag it then holds; a key after a tlsaad; a decryption
 * that becomes an encryption.
 */
static void mode_rules(void **state)
{
    static unsigned char ct[64], tag[16], wrong[16] = { 1 };
    unsigned char iv[12] = { 4, 2 };
    size_t a;
    int again;
    struct pair p;

    (void)state;
    for (a = 0; a < NALGS; a++) {
        pair_open_with(&p, algs[a], 1, NULL);
        both_update(&p, 1, msg, 0, 0);
        pair_close(&p);
        pair_open(&p, algs[a], 1); /* the IV read before one is set */
        both_get_octets(&p, OSSL_CIPHER_PARAM_IV, is_ccm(algs[a]) ? 7 : 12);
        both_get_octets(&p, OSSL_CIPHER_PARAM_UPDATED_IV, is_ccm(algs[a]) ? 7 : 12);
        pair_close(&p);
        for (again = 0; again < 2 && !is_ccm(algs[a]); again++) {
            seal(algs[a], 12, 16, iv, 5, 64, ct, tag);
            pair_open(&p, algs[a], 0);
            both_init(&p, NULL, iv, 0);
            both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, tag, 16);
            both_update(&p, 0, aad, 5, 0);
            both_update(&p, 1, ct, 64, 0);
            both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, again ? tag : wrong, 16);
            both_final(&p);
            pair_close(&p);
        }
        /* A tlsaad, then a key: the next call is still a record, as in the default provider. */
        for (again = 0; again < 2 && !is_ccm(algs[a]); again++) {
            static const unsigned char ad[13] = { 0, 0, 0, 0, 0, 0, 0, 1, 23, 3, 3, 0, 40 };

            pair_open(&p, algs[a], 1);
            both_init(&p, NULL, iv, 1);
            both_set_octets(&p, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, ad, sizeof(ad));
            both_init(&p, key, NULL, 1);
            if (again) {
                both_cipher(&p, 1, msg, 64, 1);
            } else {
                both_update(&p, 0, aad, 5, 0);
                both_update(&p, 1, msg, 16, 0);
            }
            pair_close(&p);
        }
        /* A decryption turned into an encryption (an init with neither key nor IV): streamed,
         * or after a final refused for want of a tag; its final, then its tag. */
        for (again = 0; again < 2 && !is_ccm(algs[a]); again++) {
            pair_open(&p, algs[a], 0);
            both_init(&p, NULL, iv, 0);
            if (again) {
                both_final(&p);
            } else {
                both_update(&p, 0, aad, 5, 0);
                both_update(&p, 1, msg, 16, 0);
            }
            both_init(&p, NULL, NULL, 1);
            if (again) {
                both_update(&p, 0, aad, 5, 0);
                both_update(&p, 1, msg, 16, 0);
            }
            both_final(&p);
            both_get_octets(&p, OSSL_CIPHER_PARAM_AEAD_TAG, 16);
            pair_close(&p);
        }
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(differential), cmocka_unit_test(edges), cmocka_unit_test(tampered),
        cmocka_unit_test(tag_first_split), cmocka_unit_test(cipher_empty), cmocka_unit_test(ccm_late_ivlen),
        cmocka_unit_test(lengths), cmocka_unit_test(forged_auto),
        cmocka_unit_test(tls12), cmocka_unit_test(tls12_keyless),
        cmocka_unit_test(tls12_overlap),        cmocka_unit_test(tls13), cmocka_unit_test(nonce_reuse),
        cmocka_unit_test(ivgen),        cmocka_unit_test(empty_outputs), cmocka_unit_test(offload),
        cmocka_unit_test(ccm_final_without_data), cmocka_unit_test(ccm_no_input),
        cmocka_unit_test(ccm_length_after_data), cmocka_unit_test(mode_rules),
    };
    const char *s = getenv("CCREE_TEST_SEED");
    tu_rng r;

    prov = OSSL_PROVIDER_load(NULL, "ccree");
    if (prov == NULL) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    require_offload = getenv("CCREE_REQUIRE_OFFLOAD") != NULL
                      && strcmp(getenv("CCREE_REQUIRE_OFFLOAD"), "1") == 0;
    if (s != NULL)
        seed = strtoull(s, NULL, 0);
    auto_cnf = argc > 1 ? argv[1] : NULL;
    printf("seed %llu\n", (unsigned long long)seed);
    tu_rng_seed(&r, seed);
    tu_rng_fill(&r, key, sizeof(key));
    tu_rng_fill(&r, msg, sizeof(msg));
    tu_rng_fill(&r, aad, sizeof(aad));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
