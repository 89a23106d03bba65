/*
 * TLS record mode of CBC ciphers against the default provider, as libssl drives it: after the
 * key, "tls-version" and "tls-mac-size"; then one in-place EVP_CipherUpdate per record.
 * Encryption pads the record (output = input + padding); decryption drops TLS 1.1+'s explicit
 * IV, checks and strips the padding and the MAC, returns the payload length and hands the MAC
 * out through "tls-mac". Every return, length, output byte and MAC is compared. A record with
 * bad padding must look the same from outside as in the default provider (success and the same
 * lengths with a MAC, a MAC that is not the record's; failure without a MAC); publicly invalid
 * records (not whole blocks, too short, not in place) must fail.
 *
 * Environment: OPENSSL_CONF (the subject and default active), CCREE_TEST_SUBJECT (the provider
 * under test, default "ccree"; "default" checks the test itself), CCREE_REQUIRE_OFFLOAD ("1":
 * ccree's AES-CBC records must run in the kernel), CCREE_TEST_SEED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/prov_ssl.h>

#include "testutil.h"

#define MAXREC (16384 + 512)

static const char *const algs[] = { "AES-128-CBC", "AES-256-CBC", "DES-EDE3-CBC" };
#define NALGS 3
static const int versions[] = { TLS1_VERSION, TLS1_1_VERSION, TLS1_2_VERSION };
static const size_t macsizes[] = { 0, 20, 32, 48 };

static const char *subject = "ccree";
static EVP_CIPHER *ciphers[NALGS][2]; /* the subject's (NULL if it lacks one) and default's */
static int require_offload;
static uint64_t seed = 1;
static tu_rng rng;
static unsigned char key[32], iv[16];
static unsigned long compared;

/* What one provider did with one record. */
struct rec {
    int rc, outl, macok;
    unsigned char buf[MAXREC], mac[64];
};

/* The case being run, for failure reports. */
static char where[160];

static void differ(const char *what)
{
    fprintf(stderr, "%s: %s and default differ in %s\n", where, subject, what);
    ERR_print_errors_fp(stderr);
    fail();
}

static void expect(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "%s: %s\n", where, what);
        ERR_print_errors_fp(stderr);
        fail();
    }
}

/* Keyed contexts of the subject and default in TLS record mode; both must take the params. */
static void tls_pair(int a, int enc, int version, size_t macsize, EVP_CIPHER_CTX *ctx[2])
{
    OSSL_PARAM p[] = { OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS_VERSION, &version),
                       OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &macsize), OSSL_PARAM_END };
    int i, rc[2];

    for (i = 0; i < 2; i++) {
        ctx[i] = EVP_CIPHER_CTX_new();
        assert_non_null(ctx[i]);
        assert_int_equal(EVP_CipherInit_ex2(ctx[i], ciphers[a][i], key, iv, enc, NULL), 1);
        rc[i] = EVP_CIPHER_CTX_set_params(ctx[i], p);
    }
    if (rc[0] != rc[1])
        differ("setting tls-version and tls-mac-size");
    expect(rc[0] == 1, "tls-version and tls-mac-size refused");
}

static void free_pair(EVP_CIPHER_CTX *ctx[2])
{
    EVP_CIPHER_CTX_free(ctx[0]);
    EVP_CIPHER_CTX_free(ctx[1]);
}

/* One record, in[len], through both contexts in place (out elsewhere if !inplace). */
static void both(EVP_CIPHER_CTX *ctx[2], const unsigned char *in, size_t len, size_t macsize,
                 int inplace, struct rec r[2])
{
    static unsigned char other[MAXREC];
    int i;

    for (i = 0; i < 2; i++) {
        unsigned char *m = NULL;
        OSSL_PARAM p[] = { OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC, (void **)&m, macsize),
                           OSSL_PARAM_END };

        memcpy(r[i].buf, in, len);
        r[i].outl = -1;
        r[i].rc = EVP_CipherUpdate(ctx[i], inplace ? r[i].buf : other, &r[i].outl, r[i].buf,
                                   (int)len);
        r[i].macok = r[i].rc && !EVP_CIPHER_CTX_is_encrypting(ctx[i]) && macsize > 0
                     && EVP_CIPHER_CTX_get_params(ctx[i], p) && m != NULL;
        if (r[i].macok)
            memcpy(r[i].mac, m, macsize);
        if (!r[i].rc)
            expect(tu_error_says(""), "a failure without an error on the queue");
        ERR_clear_error();
    }
    compared++;
    if (r[0].rc != r[1].rc)
        differ("the return value");
    if (r[0].rc && r[0].outl != r[1].outl)
        differ("the output length");
}

static size_t explicit_iv(int version, size_t bs)
{
    return version >= TLS1_1_VERSION ? bs : 0;
}

/* Runs fn for every cipher the subject has, TLS version and MAC size. */
static void each(void (*fn)(int a, int version, size_t macsize))
{
    int a, v, m;

    for (a = 0; a < NALGS; a++) {
        if (ciphers[a][0] == NULL)
            continue;
        for (v = 0; v < 3; v++)
            for (m = 0; m < 4; m++) {
                snprintf(where, sizeof(where), "%s, TLS version 0x%x, MAC of %zu bytes", algs[a],
                         versions[v], macsizes[m]);
                fn(a, versions[v], macsizes[m]);
            }
    }
}

/*
 * Records of several lengths on one context pair each way (TLS 1.0 chains the IV from record
 * to record): encrypted, then decrypted, compared with default and with what was sent.
 */
static void roundtrip(int a, int version, size_t macsize)
{
    static const size_t lens[] = { 0, 1, 15, 16, 17, 100, 1000, 4095, 16384 };
    static unsigned char in[MAXREC], ct[MAXREC];
    size_t bs = (size_t)EVP_CIPHER_get_block_size(ciphers[a][1]), ivl = explicit_iv(version, bs);
    EVP_CIPHER_CTX *enc[2], *dec[2];
    struct rec r[2];
    size_t i;

    tls_pair(a, 1, version, macsize, enc);
    tls_pair(a, 0, version, macsize, dec);
    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        size_t len = ivl + lens[i] + macsize, ctlen = (len / bs + 1) * bs;

        tu_rng_fill(&rng, in, len); /* explicit IV, payload, MAC */
        both(enc, in, len, macsize, 1, r);
        expect(r[0].rc == 1, "encryption failed");
        expect((size_t)r[0].outl == ctlen, "encryption did not pad to whole blocks");
        if (memcmp(r[0].buf, r[1].buf, ctlen) != 0)
            differ("the ciphertext");
        memcpy(ct, r[0].buf, ctlen);
        both(dec, ct, ctlen, macsize, 1, r);
        expect(r[0].rc == 1, "decryption failed");
        expect((size_t)r[0].outl == lens[i], "the decrypted length is not the payload's");
        if (memcmp(r[0].buf, r[1].buf, ctlen) != 0)
            differ("the decrypted record");
        expect(memcmp(r[0].buf + ivl, in + ivl, lens[i]) == 0, "the payload did not come back");
        if (macsize > 0) {
            expect(r[0].macok && r[1].macok, "no tls-mac after decryption");
            if (memcmp(r[0].mac, r[1].mac, macsize) != 0)
                differ("the MAC");
            expect(memcmp(r[0].mac, in + ivl + lens[i], macsize) == 0, "the MAC is not the record's");
        }
    }
    free_pair(enc);
    free_pair(dec);
}

/*
 * The ciphers of a CTR-DRBG, which the records do not use: a decryption's random MAC comes from
 * the DRBG of ccree's child library context, which must run on the default provider, not on
 * ccree's own ciphers again (main gives this process's DRBG the default provider's too).
 */
static const char *const drbg_ciphers[] = { "AES-256-CTR", "AES-256-ECB" };

static void records(void **state)
{
    tu_alg_info before[2], after[2], drbg[2];
    int a, counters = strcmp(subject, "ccree") == 0;
    OSSL_PROVIDER *prov = counters ? OSSL_PROVIDER_load(NULL, "ccree") : NULL;

    (void)state;
    for (a = 0; counters && a < 2; a++) {
        before[a] = tu_alg(prov, algs[a]);
        drbg[a] = tu_alg(prov, drbg_ciphers[a]);
    }
    each(roundtrip);
    for (a = 0; counters && a < 2; a++) {
        tu_alg_info now = tu_alg(prov, drbg_ciphers[a]);

        if (now.offload_ops + now.fallback_ops != drbg[a].offload_ops + drbg[a].fallback_ops)
            fail_msg("%s ran in ccree during the records: a DRBG on ccree", drbg_ciphers[a]);
    }
    for (a = 0; counters && a < 2; a++) {
        after[a] = tu_alg(prov, algs[a]);
        printf("%s records: %llu offloaded, %llu in software\n", algs[a],
               (unsigned long long)(after[a].offload_ops - before[a].offload_ops),
               (unsigned long long)(after[a].fallback_ops - before[a].fallback_ops));
        if (require_offload) {
            assert_true(after[a].offload_ops > before[a].offload_ops);
            assert_int_equal(after[a].fallback_ops, before[a].fallback_ops);
        }
    }
    OSSL_PROVIDER_unload(prov);
}

/*
 * Records made with plain CBC, so that their padding can be anything: good padding of random
 * length (up to 255 bytes), a wrong padding byte, and a padding length past the record.
 */
enum { GOOD, WRONG_BYTE, TOO_LONG };

static void padding_case(int a, int version, size_t macsize, int kind)
{
    static unsigned char pt[MAXREC], ct[MAXREC];
    size_t bs = (size_t)EVP_CIPHER_get_block_size(ciphers[a][1]), ivl = explicit_iv(version, bs);
    size_t payload = tu_rng_range(&rng, 0, 200), base = ivl + payload + macsize;
    size_t pad = (bs - (base + 1) % bs) % bs, len;
    EVP_CIPHER_CTX *plain = EVP_CIPHER_CTX_new(), *dec[2];
    struct rec r[2];
    int n;

    if (kind == GOOD)
        pad += bs * tu_rng_range(&rng, 0, (255 - pad) / bs);
    else if (kind == WRONG_BYTE && pad == 0)
        pad = bs;
    len = base + pad + 1;
    tu_rng_fill(&rng, pt, base);
    memset(pt + base, (int)pad, pad + 1);
    if (kind == WRONG_BYTE)
        pt[len - 2] ^= 0x40;
    else if (kind == TOO_LONG)
        pt[len - 1] = 255; /* more than the record holds: payload <= 200, pad < 16 */
    assert_non_null(plain);
    assert_int_equal(EVP_EncryptInit_ex2(plain, ciphers[a][1], key, iv, NULL), 1);
    assert_int_equal(EVP_CIPHER_CTX_set_padding(plain, 0), 1);
    assert_int_equal(EVP_EncryptUpdate(plain, ct, &n, pt, (int)len), 1);
    EVP_CIPHER_CTX_free(plain);

    tls_pair(a, 0, version, macsize, dec);
    both(dec, ct, len, macsize, 1, r);
    if (kind == GOOD) {
        expect(r[0].rc == 1 && (size_t)r[0].outl == payload, "a good record was refused");
        if (memcmp(r[0].buf, r[1].buf, len) != 0)
            differ("the decrypted record");
        if (macsize > 0) {
            expect(r[0].macok && r[1].macok, "no tls-mac after decryption");
            if (memcmp(r[0].mac, r[1].mac, macsize) != 0)
                differ("the MAC");
            expect(memcmp(r[0].mac, pt + ivl + payload, macsize) == 0, "the MAC is not the record's");
        }
    } else if (macsize == 0) {
        expect(r[0].rc == 0, "bad padding without a MAC accepted");
    } else {
        /* success, a MAC of the right size that is not the record's: the MAC check fails */
        expect(r[0].rc == 1, "bad padding with a MAC refused (not in constant time)");
        expect(r[0].macok && r[1].macok, "no tls-mac after bad padding");
        expect(memcmp(r[0].mac, pt + ivl + payload, macsize) != 0, "bad padding gave the real MAC");
        expect(memcmp(r[1].mac, pt + ivl + payload, macsize) != 0, "default gave the real MAC");
    }
    free_pair(dec);
}

static void padding_cases(int a, int version, size_t macsize)
{
    int i, kind;

    for (i = 0; i < 8; i++)
        for (kind = GOOD; kind <= TOO_LONG; kind++)
            padding_case(a, version, macsize, kind);
}

static void padding(void **state)
{
    (void)state;
    each(padding_cases);
}

/* Decryption of records that are not whole blocks or too short for the explicit IV, MAC and
 * padding byte, and records not in place: both refuse them. */
static void invalid_cases(int a, int version, size_t macsize)
{
    static unsigned char junk[MAXREC];
    size_t bs = (size_t)EVP_CIPHER_get_block_size(ciphers[a][1]), ivl = explicit_iv(version, bs);
    size_t shortest = ivl + (macsize + 1 + bs - 1) / bs * bs, lens[64], n = 0, i;
    EVP_CIPHER_CTX *ctx[2];
    struct rec r[2];
    int enc;

    lens[n++] = 1;
    lens[n++] = bs + 1;
    lens[n++] = shortest + bs - 1;
    for (i = bs; i < shortest; i += bs)
        lens[n++] = i;
    tu_rng_fill(&rng, junk, sizeof(junk));
    for (i = 0; i < n; i++) {
        tls_pair(a, 0, version, macsize, ctx);
        both(ctx, junk, lens[i], macsize, 1, r);
        expect(r[0].rc == 0, "a publicly invalid record accepted");
        free_pair(ctx);
    }
    for (enc = 0; enc < 2; enc++) {
        tls_pair(a, enc, version, macsize, ctx);
        both(ctx, junk, shortest + bs, macsize, 0, r);
        expect(r[0].rc == 0, "a record not in place accepted");
        free_pair(ctx);
    }
}

static void invalid(void **state)
{
    (void)state;
    each(invalid_cases);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(records), cmocka_unit_test(padding),
                                        cmocka_unit_test(invalid) };
    const char *e;
    char q[80];
    int a, rc;

    if ((e = getenv("CCREE_TEST_SUBJECT")) != NULL && *e != '\0')
        subject = e;
    require_offload = (e = getenv("CCREE_REQUIRE_OFFLOAD")) != NULL && strcmp(e, "1") == 0
                      && strcmp(subject, "ccree") == 0;
    if ((e = getenv("CCREE_TEST_SEED")) != NULL)
        seed = strtoull(e, NULL, 0);
    if (!RAND_set_DRBG_type(NULL, NULL, "provider=default", NULL, NULL)
        || !OSSL_PROVIDER_available(NULL, subject) || !OSSL_PROVIDER_available(NULL, "default")) {
        fprintf(stderr, "%s and default must be active (OPENSSL_CONF)\n", subject);
        return 1;
    }
    printf("subject %s, seed %llu\n", subject, (unsigned long long)seed);
    snprintf(q, sizeof(q), "provider=%s", subject);
    for (a = 0; a < NALGS; a++) {
        ciphers[a][0] = EVP_CIPHER_fetch(NULL, algs[a], q);
        ciphers[a][1] = EVP_CIPHER_fetch(NULL, algs[a], "provider=default");
        if (ciphers[a][1] == NULL || (ciphers[a][0] == NULL && a < 2)) {
            fprintf(stderr, "cannot fetch %s\n", algs[a]);
            ERR_print_errors_fp(stderr);
            return 1;
        }
        if (ciphers[a][0] == NULL)
            printf("note: %s has no %s: skipped\n", subject, algs[a]);
        ERR_clear_error();
    }
    tu_rng_seed(&rng, seed);
    tu_rng_fill(&rng, key, sizeof(key));
    tu_rng_fill(&rng, iv, sizeof(iv));
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    printf("%lu records compared\n", compared);
    for (a = 0; a < NALGS; a++) {
        EVP_CIPHER_free(ciphers[a][0]);
        EVP_CIPHER_free(ciphers[a][1]);
    }
    return rc;
}
