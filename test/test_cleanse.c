/*
 * Key material is cleansed on free: every block OpenSSL frees (ccree's cipher and MAC
 * contexts and the default provider's behind them) is searched for the key, through
 * CRYPTO_set_mem_functions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "testutil.h"

#define HDR 16 /* keeps the block's size, and its alignment */

static unsigned char key[32];
static int armed, found;

static void scan(void *block)
{
    size_t n;

    memcpy(&n, block, sizeof(n));
    if (armed && memmem((unsigned char *)block + HDR, n, key, 16) != NULL)
        found++;
}

static void *t_malloc(size_t n, const char *file, int line)
{
    unsigned char *b = calloc(1, HDR + n); /* zeroed: the search reads all of it */

    (void)file;
    (void)line;
    if (b == NULL)
        return NULL;
    memcpy(b, &n, sizeof(n));
    return b + HDR;
}

static void t_free(void *p, const char *file, int line)
{
    (void)file;
    (void)line;
    if (p == NULL)
        return;
    scan((unsigned char *)p - HDR);
    free((unsigned char *)p - HDR);
}

static void *t_realloc(void *p, size_t n, const char *file, int line)
{
    void *q = t_malloc(n, file, line);
    size_t old;

    if (q == NULL || p == NULL)
        return q;
    memcpy(&old, (unsigned char *)p - HDR, sizeof(old));
    memcpy(q, p, old < n ? old : n);
    t_free(p, file, line);
    return q;
}

/* The search works: a key freed without cleansing is found. */
static void uncleansed_key_found(void **state)
{
    unsigned char *b = OPENSSL_malloc(64);

    (void)state;
    assert_non_null(b);
    memcpy(b + 8, key, sizeof(key));
    found = 0;
    OPENSSL_free(b);
    assert_int_equal(found, 1);
}

static void contexts_cleansed(void **state)
{
    static const char *const names[] = { "AES-128-ECB", "AES-192-CBC", "AES-256-CTR", "AES-128-GCM",
                                         "AES-256-CCM", "AES-128-XTS", "DES-EDE3-CBC", "SM4-CBC" };
    static unsigned char in[100000], out[100016];
    size_t i;

    (void)state;
    found = 0;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, names[i], "provider=ccree");
        EVP_CIPHER_CTX *a = EVP_CIPHER_CTX_new(), *b = EVP_CIPHER_CTX_new();
        int n, ccm = strstr(names[i], "CCM") != NULL; /* CCM takes one update per message */

        assert_non_null(c);
        assert_true(EVP_EncryptInit_ex2(a, c, key, key + 16, NULL));
        assert_true(EVP_EncryptUpdate(a, out, &n, in, ccm ? 1000 : sizeof(in)));
        assert_true(EVP_CIPHER_CTX_copy(b, a));
        assert_true(ccm || EVP_EncryptUpdate(b, out, &n, in, 100));
        assert_true(EVP_EncryptInit_ex2(a, NULL, NULL, key + 8, NULL));
        assert_true(EVP_EncryptUpdate(a, out, &n, in, 100));
        EVP_CIPHER_CTX_free(a);
        EVP_CIPHER_CTX_free(b);
        EVP_CIPHER_free(c);
    }
    assert_int_equal(found, 0);
}

static void macs_cleansed(void **state)
{
    static const char *const macs[][2] = { { "HMAC", "SHA2-256" }, { "CMAC", "AES-256-CBC" } };
    static unsigned char in[100000], out[64];
    size_t i, n;

    (void)state;
    found = 0;
    for (i = 0; i < sizeof(macs) / sizeof(macs[0]); i++) {
        EVP_MAC *m = EVP_MAC_fetch(NULL, macs[i][0], "provider=ccree");
        EVP_MAC_CTX *a = EVP_MAC_CTX_new(m), *b;
        OSSL_PARAM p[] = { OSSL_PARAM_utf8_string(i ? "cipher" : "digest", (char *)macs[i][1], 0),
                           OSSL_PARAM_END };

        assert_true(a != NULL && EVP_MAC_init(a, key, sizeof(key), p));
        assert_true(EVP_MAC_update(a, in, sizeof(in)));
        assert_non_null(b = EVP_MAC_CTX_dup(a));
        assert_true(EVP_MAC_final(b, out, &n, sizeof(out)));
        assert_true(EVP_MAC_init(a, NULL, 0, NULL) && EVP_MAC_update(a, in, 100));
        EVP_MAC_CTX_free(a);
        EVP_MAC_CTX_free(b);
        EVP_MAC_free(m);
    }
    assert_int_equal(found, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(uncleansed_key_found),
                                        cmocka_unit_test(contexts_cleansed),
                                        cmocka_unit_test(macs_cleansed) };
    OSSL_PROVIDER *prov;
    int rc;

    if (!CRYPTO_set_mem_functions(t_malloc, t_realloc, t_free)
        || (prov = OSSL_PROVIDER_load(NULL, "ccree")) == NULL
        || !RAND_bytes(key, sizeof(key))) {
        fprintf(stderr, "ccree not loaded through OPENSSL_CONF\n");
        return 1;
    }
    armed = 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    armed = 0;
    OSSL_PROVIDER_unload(prov);
    return rc;
}
