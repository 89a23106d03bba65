/*
 * Key material is cleansed on free: every block OpenSSL frees (ccree's cipher and MAC
 * contexts and the default provider's behind them) is searched for the key, through
 * CRYPTO_set_mem_functions. A message is wiped at its end: after a digest's or MAC's final or
 * re-init, no block OpenSSL holds has the message in it.
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

/* Before each block: its size, and its place in the list of live blocks. */
struct hdr {
    size_t n;
    struct hdr *prev, *next;
};
#define HDR 32 /* a struct hdr, keeping the block's alignment */

static unsigned char key[32];
static int armed, found;
static struct hdr live; /* the list's head */

static int holds(const struct hdr *h, const unsigned char *what)
{
    return memmem((const unsigned char *)h + HDR, h->n, what, 16) != NULL;
}

static void *t_malloc(size_t n, const char *file, int line)
{
    struct hdr *h = calloc(1, HDR + n); /* zeroed: the search reads all of it */

    (void)file;
    (void)line;
    if (h == NULL)
        return NULL;
    h->n = n;
    h->prev = &live;
    h->next = live.next;
    if (live.next != NULL)
        live.next->prev = h;
    live.next = h;
    return (unsigned char *)h + HDR;
}

static void t_free(void *p, const char *file, int line)
{
    struct hdr *h;

    (void)file;
    (void)line;
    if (p == NULL)
        return;
    h = (struct hdr *)((unsigned char *)p - HDR);
    if (armed && holds(h, key))
        found++;
    h->prev->next = h->next;
    if (h->next != NULL)
        h->next->prev = h->prev;
    free(h);
}

static void *t_realloc(void *p, size_t n, const char *file, int line)
{
    void *q = t_malloc(n, file, line);
    size_t old;

    if (q == NULL || p == NULL)
        return q;
    old = ((struct hdr *)((unsigned char *)p - HDR))->n;
    memcpy(q, p, old < n ? old : n);
    t_free(p, file, line);
    return q;
}

/* How many live blocks hold the first 16 bytes of what. */
static int live_holding(const unsigned char *what)
{
    const struct hdr *h;
    int n = 0;

    for (h = live.next; h != NULL; h = h->next)
        n += holds(h, what);
    return n;
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

/*
 * A message of 100 bytes (its first 16 searched: the default provider's CMAC keeps its last
 * block) through one context, ended by final or by re-init: afterwards no live block holds it.
 */
static unsigned char msg[100];

static int digest_keeps(const char *name, int reinit)
{
    EVP_MD *md = EVP_MD_fetch(NULL, name, "provider=ccree");
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    unsigned char out[64];
    int n;

    assert_true(md != NULL && c != NULL && EVP_DigestInit_ex2(c, md, NULL));
    assert_true(EVP_DigestUpdate(c, msg, 60) && EVP_DigestUpdate(c, msg + 60, 40));
    assert_true(reinit ? EVP_DigestInit_ex2(c, md, NULL) : EVP_DigestFinal_ex(c, out, NULL));
    n = live_holding(msg);
    EVP_MD_CTX_free(c);
    EVP_MD_free(md);
    return n;
}

static int mac_keeps(const char *name, const char *under, int reinit)
{
    EVP_MAC *m = EVP_MAC_fetch(NULL, name, "provider=ccree");
    EVP_MAC_CTX *c = EVP_MAC_CTX_new(m);
    OSSL_PARAM p[] = { OSSL_PARAM_utf8_string(strcmp(name, "CMAC") == 0 ? "cipher" : "digest",
                                              (char *)under, 0),
                       OSSL_PARAM_END };
    unsigned char out[64];
    size_t l;
    int n;

    assert_true(c != NULL && EVP_MAC_init(c, key, 16, p));
    assert_true(EVP_MAC_update(c, msg, 60) && EVP_MAC_update(c, msg + 60, 40));
    assert_true(reinit ? EVP_MAC_init(c, NULL, 0, NULL) : EVP_MAC_final(c, out, &l, sizeof(out)));
    n = live_holding(msg);
    EVP_MAC_CTX_free(c);
    EVP_MAC_free(m);
    return n;
}

static void messages_wiped(void **state)
{
    static const char *const mds[] = { "SHA1", "SHA2-256" };
    static const char *const macs[][2] = { { "HMAC", "SHA2-256" }, { "CMAC", "AES-128-CBC" } };
    int reinit, failures = 0;
    size_t i;

    (void)state;
    assert_true(RAND_bytes(msg, sizeof(msg)));
    for (reinit = 0; reinit < 2; reinit++) {
        for (i = 0; i < sizeof(mds) / sizeof(mds[0]); i++)
            if (digest_keeps(mds[i], reinit) != 0 && ++failures)
                print_error("%s: the message is kept after %s\n", mds[i], reinit ? "re-init" : "final");
        for (i = 0; i < sizeof(macs) / sizeof(macs[0]); i++)
            if (mac_keeps(macs[i][0], macs[i][1], reinit) != 0 && ++failures)
                print_error("%s: the message is kept after %s\n", macs[i][0], reinit ? "re-init" : "final");
    }
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(uncleansed_key_found),
                                        cmocka_unit_test(contexts_cleansed),
                                        cmocka_unit_test(macs_cleansed),
                                        cmocka_unit_test(messages_wiped) };
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
