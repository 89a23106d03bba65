/*
 * Many threads share the provider, each with its own contexts: mixed algorithms and sizes,
 * every result checked against the default provider in the same thread.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "testutil.h"

#define THREADS 8
#define ROUNDS 40
#define MAXLEN 150000

static const char *const names[] = { "AES-128-ECB", "AES-192-CBC", "AES-256-CBC", "AES-128-CTR",
                                     "AES-256-CTR", "AES-128-GCM", "AES-256-GCM", "SHA1",
                                     "SHA2-224", "SHA2-256", "SHA2-384", "SHA2-512" };
#define NNAMES (sizeof(names) / sizeof(names[0]))

struct job {
    uint64_t seed;
    int failures;
    char what[160];
};

/* One message through provider props; returns the output length or -1. */
static int one(const char *name, const char *props, const unsigned char *key,
               const unsigned char *iv, const unsigned char *in, size_t len, size_t chunk,
               unsigned char *out)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, props);
    size_t off;
    int n, total = 0, ok = 1;

    if (c == NULL) {
        EVP_MD *md = EVP_MD_fetch(NULL, name, props);
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        unsigned int l = 0;

        ok = md != NULL && ctx != NULL && EVP_DigestInit_ex2(ctx, md, NULL);
        for (off = 0; ok && off < len; off += chunk)
            ok = EVP_DigestUpdate(ctx, in + off, len - off < chunk ? len - off : chunk);
        ok = ok && EVP_DigestFinal_ex(ctx, out, &l);
        EVP_MD_CTX_free(ctx);
        EVP_MD_free(md);
        return ok ? (int)l : -1;
    } else {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

        ok = ctx != NULL && EVP_EncryptInit_ex2(ctx, c, key, iv, NULL);
        for (off = 0; ok && off < len; off += chunk, total += n)
            ok = EVP_EncryptUpdate(ctx, out + total, &n, in + off,
                                   (int)(len - off < chunk ? len - off : chunk));
        ok = ok && EVP_EncryptFinal_ex(ctx, out + total, &n);
        total += n;
        EVP_CIPHER_CTX_free(ctx);
        EVP_CIPHER_free(c);
        return ok ? total : -1;
    }
}

static void *worker(void *arg)
{
    struct job *j = arg;
    unsigned char *in = malloc(MAXLEN), *a = malloc(MAXLEN + 16), *b = malloc(MAXLEN + 16);
    unsigned char key[32], iv[16];
    tu_rng r;
    int round;

    tu_rng_seed(&r, j->seed);
    for (round = 0; in && a && b && round < ROUNDS && j->failures == 0; round++) {
        const char *name = names[tu_rng_range(&r, 0, NNAMES - 1)];
        size_t len = tu_rng_range(&r, 0, 1) ? tu_rng_range(&r, 0, 300) : tu_rng_range(&r, 0, MAXLEN);
        size_t chunk = tu_rng_range(&r, 1, len + 1);
        int la, lb;

        tu_rng_fill(&r, key, sizeof(key));
        tu_rng_fill(&r, iv, sizeof(iv));
        tu_rng_fill(&r, in, len);
        la = one(name, "provider=ccree", key, iv, in, len, chunk, a);
        lb = one(name, "provider=default", key, iv, in, len, chunk, b);
        if (la < 0 || la != lb || memcmp(a, b, la) != 0) {
            snprintf(j->what, sizeof(j->what), "%s len %zu chunk %zu: %d vs %d bytes, seed %llx",
                     name, len, chunk, la, lb, (unsigned long long)j->seed);
            j->failures++;
        }
    }
    if (in == NULL || a == NULL || b == NULL)
        j->failures++;
    free(in);
    free(a);
    free(b);
    return NULL;
}

static void threads_share_the_provider(void **state)
{
    pthread_t t[THREADS];
    struct job jobs[THREADS];
    int i;

    (void)state;
    for (i = 0; i < THREADS; i++) {
        jobs[i] = (struct job){ .seed = 0x7e57 + (uint64_t)i };
        assert_int_equal(pthread_create(&t[i], NULL, worker, &jobs[i]), 0);
    }
    for (i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        if (jobs[i].failures != 0)
            fail_msg("thread %d: %s", i, jobs[i].what);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(threads_share_the_provider) };
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(NULL, "ccree");
    tu_totals before, after;
    int rc;

    if (prov == NULL || !tu_get_totals(prov, &before)) {
        fprintf(stderr, "the ccree provider is not loaded (OPENSSL_CONF?)\n");
        return 1;
    }
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (!tu_get_totals(prov, &after)) /* every message counted once somewhere */
        rc = 1;
    else if (after.offload_ops + after.fallback_ops < before.offload_ops + before.fallback_ops
                                                          + THREADS * ROUNDS) {
        fprintf(stderr, "counters missed operations\n");
        rc = 1;
    }
    if (getenv("CCREE_REQUIRE_OFFLOAD") != NULL && strcmp(getenv("CCREE_REQUIRE_OFFLOAD"), "1") == 0
        && after.offload_ops == before.offload_ops) {
        fprintf(stderr, "nothing was offloaded\n");
        rc = 1;
    }
    OSSL_PROVIDER_unload(prov);
    return rc;
}
