/*
 * One context, two paths: with offload-min = 4096 (mixed.cnf) small calls run in software
 * and large ones in the kernel, on the same context, with the default provider's results.
 * Also: running out of file descriptors falls back to software, or with fallback = no
 * (STRICT_CNF, the first argument) fails with ccree's error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "testutil.h"

static const char *const ciphers[] = { "AES-128-ECB", "AES-192-ECB", "AES-256-ECB",
                                       "AES-128-CBC", "AES-192-CBC", "AES-256-CBC",
                                       "AES-128-CTR", "AES-192-CTR", "AES-256-CTR" };
static const char *const digests[] = { "SHA1", "SHA2-224", "SHA2-256", "SHA2-384", "SHA2-512" };
static OSSL_PROVIDER *prov;
static const char *strict_cnf;

/* Both paths used when the algorithm is offloaded, software only when it is not. */
static void check_paths(const tu_alg_info *before, const char *name)
{
    tu_alg_info after = tu_alg(prov, name);

    assert_true(after.fallback_ops > before->fallback_ops);
    if (strcmp(after.state, "offload") == 0)
        assert_true(after.offload_ops > before->offload_ops);
    else
        assert_true(after.offload_ops == before->offload_ops);
}

static const size_t sizes[] = { 100, 8192, 17, 5000, 3, 70000, 1, 4096, 15, 65536, 33, 20000, 0, 7 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define TOTAL 300000

/* The same sequence of updates over len bytes (the rest of them last), every output recorded. */
static int run(const char *name, const char *props, int enc, const unsigned char *key,
               const unsigned char *iv, const unsigned char *in, size_t len, unsigned char *out,
               int *lens)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, props);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    size_t i, off = 0, o = 0;

    assert_non_null(c);
    assert_true(EVP_CipherInit_ex2(ctx, c, key, iv, enc, NULL));
    for (i = 0; i < NSIZES; i++) {
        assert_true(EVP_CipherUpdate(ctx, out + o, &lens[i], in + off, (int)sizes[i]));
        off += sizes[i];
        o += lens[i];
    }
    assert_true(EVP_CipherUpdate(ctx, out + o, &lens[NSIZES], in + off, (int)(len - off)));
    o += lens[NSIZES];
    assert_true(EVP_CipherFinal_ex(ctx, out + o, &lens[NSIZES + 1]));
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    return (int)o + lens[NSIZES + 1];
}

static void cipher_switches_paths(void **state)
{
    static unsigned char key[32], iv[16], in[TOTAL], a[TOTAL + 32], b[TOTAL + 32];
    int la[NSIZES + 2], lb[NSIZES + 2];
    size_t i, n;

    (void)state;
    for (i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++) {
        tu_alg_info before = tu_alg(prov, ciphers[i]);
        int enc, len = 200000, outlen;

        assert_true(RAND_bytes(key, sizeof(key)) && RAND_bytes(iv, sizeof(iv))
                    && RAND_bytes(in, sizeof(in)));
        for (enc = 1; enc >= 0; enc--) {
            if (!enc) /* decrypt what was encrypted, padding included */
                memcpy(in, a, len);
            outlen = run(ciphers[i], "provider=ccree", enc, key, iv, in, len, a, la);
            assert_int_equal(run(ciphers[i], "provider=default", enc, key, iv, in, len, b, lb),
                             outlen);
            len = outlen;
            for (n = 0; n < NSIZES + 2; n++)
                if (la[n] != lb[n])
                    fail_msg("%s %s: call %zu gave %d bytes, default %d", ciphers[i],
                             enc ? "encrypt" : "decrypt", n, la[n], lb[n]);
            assert_memory_equal(a, b, len);
        }
        check_paths(&before, ciphers[i]);
    }
}

static void digest_switches_paths(void **state)
{
    static unsigned char in[100000];
    unsigned char a[EVP_MAX_MD_SIZE], b[EVP_MAX_MD_SIZE];
    static const size_t lens[] = { 100, 100000, 0, 5000, 64 };
    size_t i, n;

    (void)state;
    assert_true(RAND_bytes(in, sizeof(in)));
    for (i = 0; i < sizeof(digests) / sizeof(digests[0]); i++) {
        tu_alg_info before = tu_alg(prov, digests[i]);
        EVP_MD *md = EVP_MD_fetch(NULL, digests[i], "provider=ccree");
        EVP_MD *ref = EVP_MD_fetch(NULL, digests[i], "provider=default");
        EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        unsigned int la, lb;

        assert_non_null(md);
        assert_non_null(ref);
        for (n = 0; n < sizeof(lens) / sizeof(lens[0]); n++) { /* one context, reused */
            assert_true(EVP_DigestInit_ex2(ctx, md, NULL));
            assert_true(EVP_DigestUpdate(ctx, in, lens[n]));
            assert_true(EVP_DigestFinal_ex(ctx, a, &la));
            assert_true(EVP_Digest(in, lens[n], b, &lb, ref, NULL));
            assert_int_equal(la, lb);
            assert_memory_equal(a, b, la);
        }
        EVP_MD_CTX_free(ctx);
        EVP_MD_free(md);
        EVP_MD_free(ref);
        check_paths(&before, digests[i]);
    }
}

/* With only a few descriptors left, the contexts that get no socket run in software, and with
 * fallback = no a request that needs one fails with EMFILE. */
/*
 * One more than the highest descriptor open below limit (idle kernel sockets may sit above
 * free ones; valgrind keeps its own above the limit it shows).
 */
static int fd_top(rlim_t limit)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int top = 0, fd;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if ((fd = atoi(e->d_name)) >= top && (rlim_t)fd < limit && fd != dirfd(d))
            top = fd + 1;
    closedir(d);
    return top;
}

static void out_of_descriptors(void **state)
{
    enum { N = 16, LEN = 65536 };
    static unsigned char key[16], iv[16], in[LEN], a[LEN + 16], b[LEN + 16];
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, "AES-128-CBC", "provider=ccree");
    EVP_CIPHER *ref = EVP_CIPHER_fetch(NULL, "AES-128-CBC", "provider=default");
    EVP_CIPHER_CTX *ctx[N];
    tu_alg_info before = tu_alg(prov, "AES-128-CBC");
    struct rlimit old, low;
    OSSL_LIB_CTX *strict;
    EVP_CIPHER *sc;
    EVP_CIPHER_CTX *sctx;
    int i, la, lb, offloaded, top;

    (void)state;
    assert_true(RAND_bytes(key, sizeof(key)) && RAND_bytes(iv, sizeof(iv))
                && RAND_bytes(in, sizeof(in)));
    {
        EVP_CIPHER_CTX *r = EVP_CIPHER_CTX_new();

        assert_true(EVP_EncryptInit_ex2(r, ref, key, iv, NULL));
        assert_true(EVP_EncryptUpdate(r, b, &lb, in, LEN));
        EVP_CIPHER_CTX_free(r);
    }
    /* With fallback = no: a context keyed before the limit, whose first request needs a socket. */
    strict = OSSL_LIB_CTX_new();
    assert_int_equal(OSSL_LIB_CTX_load_config(strict, strict_cnf), 1);
    sc = EVP_CIPHER_fetch(strict, "AES-128-CBC", "provider=ccree");
    sctx = EVP_CIPHER_CTX_new();
    offloaded = strcmp(before.state, "offload") == 0;
    if (offloaded)
        assert_true(EVP_EncryptInit_ex2(sctx, sc, key, iv, NULL));
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    low = old;
    top = fd_top(old.rlim_cur);
    low.rlim_cur = (rlim_t)top + 3;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    for (i = 0; i < N; i++) {
        ctx[i] = EVP_CIPHER_CTX_new();
        assert_true(EVP_EncryptInit_ex2(ctx[i], c, key, iv, NULL));
        assert_true(EVP_EncryptUpdate(ctx[i], a, &la, in, LEN));
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
    }
    ERR_clear_error();
    if (offloaded && (EVP_EncryptUpdate(sctx, a, &la, in, LEN)
                      || !tu_error_says(strerror(EMFILE))))
        fail_msg("fallback = no and no descriptor: no \"%s\" error", strerror(EMFILE));
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    EVP_CIPHER_CTX_free(sctx);
    EVP_CIPHER_free(sc);
    OSSL_LIB_CTX_free(strict);
    for (i = 0; i < N; i++)
        EVP_CIPHER_CTX_free(ctx[i]);
    EVP_CIPHER_free(c);
    EVP_CIPHER_free(ref);
    check_paths(&before, "AES-128-CBC");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cipher_switches_paths),
        cmocka_unit_test(digest_switches_paths),
        cmocka_unit_test(out_of_descriptors),
    };
    int rc;

    if (argc != 2 || (prov = OSSL_PROVIDER_load(NULL, "ccree")) == NULL) {
        fprintf(stderr, "usage: %s STRICT_CNF, with ccree loaded through OPENSSL_CONF\n", argv[0]);
        return 1;
    }
    strict_cnf = argv[1];
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    OSSL_PROVIDER_unload(prov);
    return rc;
}
