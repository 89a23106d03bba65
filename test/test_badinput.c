/*
 * Bad input, one table: each case runs on ccree's algorithms and must end in an OpenSSL error
 * (ccree's own reason where ccree sees the input) or, where the input is merely unusual, in the
 * default provider's result. Cases near INT_MAX run where there is no AF_ALG (in the VM, under
 * TCG, 2 GiB take minutes).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>

#include <cmocka.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "testutil.h"

#define BIG ((size_t)INT_MAX + 17)

static const unsigned char key[32] = { 1, 2, 3 }, iv[16] = { 4, 5, 6 };
static unsigned char in[256];
static int big; /* run the cases near INT_MAX */

/* One run: the algorithm in one provider, and what it gave. */
struct run {
    EVP_CIPHER *c;
    EVP_MD *md;
    unsigned char out[512];
    int n; /* bytes of out to compare */
};

static EVP_CIPHER_CTX *cinit(struct run *r, int enc, int keyed)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

    assert_non_null(ctx);
    assert_true(EVP_CipherInit_ex2(ctx, r->c, keyed ? key : NULL, iv, enc, NULL));
    return ctx;
}

/* Runs one update then final; returns 1 on success and puts the output in r. */
static int cfinish(struct run *r, EVP_CIPHER_CTX *ctx, unsigned char *out, const unsigned char *src,
                   int len)
{
    int n = 0, m = 0, ok = EVP_CipherUpdate(ctx, out, &n, src, len)
                            && EVP_CipherFinal_ex(ctx, out == NULL ? NULL : out + n, &m);

    r->n = ok ? n + m : 0;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static int update_before_key(struct run *r)
{
    return cfinish(r, cinit(r, 1, 0), r->out, in, 16);
}

static int final_before_key(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 0);
    int n, ok = EVP_CipherFinal_ex(ctx, r->out, &n);

    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static int cipher_before_key(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 0);
    int ok = EVP_Cipher(ctx, r->out, in, 16) > 0;

    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static int null_input(struct run *r)
{
    return cfinish(r, cinit(r, 1, 1), r->out, NULL, 32);
}

static int null_output(struct run *r)
{
    return cfinish(r, cinit(r, 1, 1), NULL, in, 32);
}

static int null_zero_length(struct run *r)
{
    return cfinish(r, cinit(r, 1, 1), r->out, NULL, 0);
}

static int negative_length(struct run *r)
{
    return cfinish(r, cinit(r, 1, 1), r->out, in, -1);
}

static int cipher_partial_block(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n = EVP_Cipher(ctx, r->out, in, 15);

    EVP_CIPHER_CTX_free(ctx);
    r->n = n > 0 ? n : 0;
    return n > 0;
}

static int final_twice(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n = 0, m = 0, k = 0, ok = EVP_CipherUpdate(ctx, r->out, &n, in, 21)
                                   && EVP_CipherFinal_ex(ctx, r->out + n, &m)
                                   && EVP_CipherFinal_ex(ctx, r->out + n + m, &k);

    r->n = ok ? n + m + k : 0;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* In place, with 5 bytes buffered: the output would overwrite input not yet read. */
static int in_place_behind(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n;

    memcpy(r->out, in, 64);
    assert_true(EVP_CipherUpdate(ctx, r->out, &n, r->out, 5));
    return cfinish(r, ctx, r->out + 5, r->out + 5, 59);
}

static int decrypt_partial_block(struct run *r)
{
    return cfinish(r, cinit(r, 0, 1), r->out, in, 31);
}

/* A decrypted last block ending in pad bytes p[0..1] (at 14, 15) under PKCS#7. */
static int unpad(struct run *r, unsigned char b14, unsigned char b15)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    unsigned char plain[32], ct[32];
    int n;

    memcpy(plain, in, 32);
    plain[30] = b14;
    plain[31] = b15;
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    assert_true(EVP_CipherUpdate(ctx, ct, &n, plain, 32) && n == 32);
    EVP_CIPHER_CTX_free(ctx);
    return cfinish(r, cinit(r, 0, 1), r->out, ct, 32);
}

static int pad_zero(struct run *r)
{
    return unpad(r, 0, 0);
}

static int pad_too_long(struct run *r)
{
    return unpad(r, 17, 17);
}

static int pad_bytes_differ(struct run *r)
{
    return unpad(r, 0x38, 2);
}

static int pad_good(struct run *r)
{
    return unpad(r, 2, 2);
}

static int set(struct run *r, const OSSL_PARAM *p)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int ok = EVP_CIPHER_CTX_set_params(ctx, p);

    return cfinish(r, ctx, r->out, in, 40) && ok;
}

static int unknown_param(struct run *r)
{
    int v = 1;
    OSSL_PARAM p[] = { OSSL_PARAM_int("no-such-param", &v), OSSL_PARAM_END };

    return set(r, p);
}

static int padding_as_string(struct run *r)
{
    OSSL_PARAM p[] = { OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_PADDING, "no", 2), OSSL_PARAM_END };

    return set(r, p);
}

static int num_out_of_range(struct run *r)
{
    unsigned int v = 16;
    OSSL_PARAM p[] = { OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, &v), OSSL_PARAM_END };

    return set(r, p);
}

/* TLS 1.2 record mode, then an update that is not in place. */
static int tls_record_mode(struct run *r)
{
    unsigned int v = 0x0303;
    OSSL_PARAM p[] = { OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, &v), OSSL_PARAM_END };

    return set(r, p);
}

/* A TLS 1.2 record of 31 bytes to decrypt, in place. */
static int tls_record_partial(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 0, 1);
    unsigned int v = 0x0303;
    OSSL_PARAM p[] = { OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, &v), OSSL_PARAM_END };
    int n = 0, ok;

    memcpy(r->out, in, 31);
    ok = EVP_CIPHER_CTX_set_params(ctx, p) && EVP_CipherUpdate(ctx, r->out, &n, r->out, 31);
    EVP_CIPHER_CTX_free(ctx);
    r->n = 0;
    return ok;
}

static int wrong_key_length(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 0);
    int ok = EVP_CIPHER_CTX_set_key_length(ctx, 17) && EVP_CipherInit_ex2(ctx, NULL, key, iv, 1, NULL);

    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static int iv_buffer_too_small(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int ok = EVP_CIPHER_CTX_get_updated_iv(ctx, r->out, 4);

    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* INT_MAX bytes in place over zero pages: the software path cuts them for EVP's int. */
static int int_max_update(struct run *r)
{
    unsigned char *m = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n = 0, ok;

    assert_true(m != MAP_FAILED);
    ok = EVP_CipherUpdate(ctx, m, &n, m, INT_MAX);
    EVP_CIPHER_CTX_free(ctx);
    r->n = 0;
    if (ok) { /* the digest of the output stands for it */
        unsigned int l;

        assert_true(EVP_Digest(m, (size_t)n, r->out, &l, EVP_sha256(), NULL));
        r->n = (int)l;
    }
    munmap(m, BIG);
    return ok;
}

static EVP_MD_CTX *dinit(struct run *r)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();

    assert_non_null(ctx);
    assert_true(EVP_DigestInit_ex2(ctx, r->md, NULL));
    return ctx;
}

static int dfinish(struct run *r, EVP_MD_CTX *ctx, int ok)
{
    unsigned int l = 0;

    ok = ok && EVP_DigestFinal_ex(ctx, r->out, &l);
    r->n = ok ? (int)l : 0;
    EVP_MD_CTX_free(ctx);
    return ok;
}

static int digest_null_input(struct run *r)
{
    EVP_MD_CTX *ctx = dinit(r);

    return dfinish(r, ctx, EVP_DigestUpdate(ctx, NULL, 10));
}

static int digest_null_zero_length(struct run *r)
{
    EVP_MD_CTX *ctx = dinit(r);

    return dfinish(r, ctx, EVP_DigestUpdate(ctx, NULL, 0));
}

static int digest_null_output(struct run *r)
{
    EVP_MD_CTX *ctx = dinit(r);
    unsigned int l;
    int ok = EVP_DigestUpdate(ctx, in, 10) && EVP_DigestFinal_ex(ctx, NULL, &l);

    EVP_MD_CTX_free(ctx);
    return ok;
}

static int digest_final_twice(struct run *r)
{
    EVP_MD_CTX *ctx = dinit(r);

    assert_true(EVP_DigestUpdate(ctx, in, 10) && EVP_DigestFinal_ex(ctx, r->out, NULL));
    return dfinish(r, ctx, 1);
}

static int digest_update_after_final(struct run *r)
{
    EVP_MD_CTX *ctx = dinit(r);

    return dfinish(r, ctx, EVP_DigestFinal_ex(ctx, r->out, NULL) && EVP_DigestUpdate(ctx, in, 1));
}

static int digest_huge_length(struct run *r)
{
    EVP_MD_CTX *ctx = dinit(r);

    return dfinish(r, ctx, EVP_DigestUpdate(ctx, in, SIZE_MAX - 8));
}

static int digest_past_int_max(struct run *r)
{
    unsigned char *m = mmap(NULL, BIG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    EVP_MD_CTX *ctx = dinit(r);
    int ok;

    assert_true(m != MAP_FAILED);
    ok = dfinish(r, ctx, EVP_DigestUpdate(ctx, in, 3) && EVP_DigestUpdate(ctx, m, BIG));
    munmap(m, BIG);
    return ok;
}

enum { CIPHER = 1, BLOCK = 2, IV = 4, CTR = 8, DIGEST = 16 }; /* BLOCK: ECB, CBC; IV: CBC, CTR */

/* fails: a reason or text ccree's error must carry, "" for any error, NULL: as the default. */
static const struct {
    const char *name;
    int (*run)(struct run *);
    int kinds, big;
    const char *fails;
} cases[] = {
    { "update before a key", update_before_key, CIPHER, 0, "no key set" },
    { "final before a key", final_before_key, CIPHER, 0, "no key set" },
    { "EVP_Cipher before a key", cipher_before_key, CIPHER, 0, "no key set" },
    { "NULL input", null_input, CIPHER, 0, "NULL input" },
    { "NULL output", null_output, CIPHER, 0, "NULL output" },
    { "NULL input of length 0", null_zero_length, CIPHER, 0, NULL },
    { "negative length", negative_length, CIPHER, 0, "" },
    { "EVP_Cipher on a partial block", cipher_partial_block, BLOCK, 0, "bad data length" },
    { "final twice", final_twice, CIPHER, 0, NULL },
    { "in place with bytes buffered", in_place_behind, BLOCK, 0, "partially overlapping buffers" },
    { "decrypt a partial block", decrypt_partial_block, BLOCK, 0, "bad data length" },
    { "padding byte 0", pad_zero, BLOCK, 0, "bad decrypt" },
    { "padding byte 17", pad_too_long, BLOCK, 0, "bad decrypt" },
    { "padding bytes differ", pad_bytes_differ, BLOCK, 0, "bad decrypt" },
    { "padding good", pad_good, BLOCK, 0, NULL },
    { "unknown parameter", unknown_param, CIPHER, 0, NULL },
    { "padding as a string", padding_as_string, CIPHER, 0, "bad parameter" },
    { "num out of range", num_out_of_range, CIPHER, 0, "bad parameter" },
    { "TLS record not in place", tls_record_mode, BLOCK, 0, "one padded update in place" },
    { "TLS record mode of CTR", tls_record_mode, CTR, 0, NULL },
    { "TLS record of a partial block", tls_record_partial, BLOCK, 0, "bad data length" },
    { "wrong key length", wrong_key_length, CIPHER, 0, "" },
    { "IV buffer too small", iv_buffer_too_small, IV, 0, "" },
    { "INT_MAX bytes in one update", int_max_update, CTR, 1, NULL },
    { "digest NULL input", digest_null_input, DIGEST, 0, "NULL input" },
    { "digest NULL input of length 0", digest_null_zero_length, DIGEST, 0, NULL },
    { "digest NULL output", digest_null_output, DIGEST, 0, "NULL output" },
    { "digest final twice", digest_final_twice, DIGEST, 0, "operation already finalised" },
    { "digest update after final", digest_update_after_final, DIGEST, 0,
      "operation already finalised" },
    { "digest of SIZE_MAX - 8 bytes", digest_huge_length, DIGEST, 0, "bad data length" },
    { "digest past INT_MAX bytes", digest_past_int_max, DIGEST, 1, NULL },
};

static const struct {
    const char *name;
    int kind;
} algs[] = {
    { "AES-128-ECB", CIPHER | BLOCK }, { "AES-192-CBC", CIPHER | BLOCK | IV },
    { "AES-256-CTR", CIPHER | IV | CTR }, { "SHA1", DIGEST }, { "SHA2-384", DIGEST },
};

static void bad_input(void **state)
{
    int failures = 0;
    size_t i, a;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int ran = 0; /* a case near INT_MAX runs on one algorithm */

        if (cases[i].big && !big) {
            printf("skipped here: %s\n", cases[i].name);
            continue;
        }
        for (a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
            static struct run r[2];
            const char *name = algs[a].name;
            int k, ok[2];

            for (k = 0; k < 2; k++) {
                const char *props = k ? "provider=default" : "provider=ccree";

                r[k].c = algs[a].kind & CIPHER ? EVP_CIPHER_fetch(NULL, name, props) : NULL;
                r[k].md = algs[a].kind & DIGEST ? EVP_MD_fetch(NULL, name, props) : NULL;
                assert_true(r[k].c != NULL || r[k].md != NULL);
            }
            if ((cases[i].kinds & algs[a].kind) != 0 && !(cases[i].big && ran++)) {
                ok[0] = cases[i].run(&r[0]);
                if (cases[i].fails != NULL && (ok[0] || !tu_error_says(cases[i].fails))) {
                    print_error("%s, %s: %s, not the error \"%s\"\n", cases[i].name, name,
                                ok[0] ? "succeeded" : "another error", cases[i].fails);
                    failures++;
                }
                ERR_clear_error();
                if (cases[i].fails == NULL) {
                    ok[1] = cases[i].run(&r[1]);
                    if (ok[0] != ok[1] || r[0].n != r[1].n || memcmp(r[0].out, r[1].out, r[0].n)) {
                        print_error("%s, %s: differs from the default provider\n", cases[i].name,
                                    name);
                        failures++;
                    }
                    ERR_clear_error();
                }
            }
            for (k = 0; k < 2; k++) {
                EVP_CIPHER_free(r[k].c);
                EVP_MD_free(r[k].md);
            }
        }
    }
    assert_int_equal(failures, 0);
}

int main(void)
{
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(NULL, "ccree");
    int rc;
    const struct CMUnitTest tests[] = { cmocka_unit_test(bad_input) };

    if (prov == NULL) {
        fprintf(stderr, "ccree not loaded through OPENSSL_CONF\n");
        return 1;
    }
    big = strstr(tu_alg(prov, "SHA1").reason, "no AF_ALG") != NULL;
    memset(in, 0xa5, sizeof(in));
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    OSSL_PROVIDER_unload(prov);
    return rc;
}
