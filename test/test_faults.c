/*
 * The kernel misbehaving, through the LD_PRELOAD shim test/fault.c (CCREE_FAULT), in the VM:
 * Linux 7.2+ and 7.3+ refusals are found at load (under drivers = any, refused driver names
 * leave the kernel name), failing requests fall back to software
 * (or fail clearly with fallback = no), a driver giving wrong answers or accepting any tag
 * fails the self-test at load, re-init with a new IV sends no key, and offload-min = auto (AUTO_CNF) follows the path
 * measured faster, with either made slower.
 * Usage: test_faults STRICT_CNF AUTO_CNF. Without AF_ALG it skips (77), unless
 * CCREE_REQUIRE_OFFLOAD=1.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "testutil.h"

static const char *const algs[] = { "AES-128-ECB", "AES-192-CBC", "AES-256-CTR", "SHA1",
                                    "SHA2-256", "SHA2-512" };
#define NALGS (sizeof(algs) / sizeof(algs[0]))
#define LEN 100000
static OSSL_PROVIDER *prov;
static const char *strict_cnf, *auto_cnf;
static const char *skip_why; /* set: the kernel forbade all the test needed (it skips) */
static unsigned char key[32], iv[16], in[LEN];

/* LEN bytes through name in ctx's provider (props), one update: returns the output length. */
static int crypt(OSSL_LIB_CTX *ctx, const char *name, const char *props, unsigned char *out)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(ctx, name, props);
    int ok, n = 0, m = 0;

    ERR_set_mark();
    if (c == NULL) {
        EVP_MD *md = EVP_MD_fetch(ctx, name, props);
        unsigned int l = 0;

        ERR_pop_to_mark();
        assert_non_null(md);
        ok = EVP_Digest(in, LEN, out, &l, md, NULL);
        EVP_MD_free(md);
        return ok ? (int)l : -1;
    }
    ERR_pop_to_mark();
    {
        EVP_CIPHER_CTX *cc = EVP_CIPHER_CTX_new();

        ok = EVP_EncryptInit_ex2(cc, c, key, iv, NULL) && EVP_EncryptUpdate(cc, out, &n, in, LEN)
             && EVP_EncryptFinal_ex(cc, out + n, &m);
        EVP_CIPHER_CTX_free(cc);
        EVP_CIPHER_free(c);
    }
    return ok ? n + m : -1;
}

/* Each algorithm gives the default provider's result, in software. */
static void same_in_software(void)
{
    static unsigned char a[LEN + 64], b[LEN + 64];
    size_t i;

    for (i = 0; i < NALGS; i++) {
        tu_alg_info before = tu_alg(prov, algs[i]), after;
        int n = crypt(NULL, algs[i], "provider=ccree", a);

        assert_true(n > 0);
        assert_int_equal(crypt(NULL, algs[i], "provider=default", b), n);
        assert_memory_equal(a, b, n);
        after = tu_alg(prov, algs[i]);
        if (after.offload_ops != before.offload_ops || after.fallback_ops <= before.fallback_ops)
            fail_msg("%s: not served in software", algs[i]);
    }
}

static void refused(const char *why)
{
    size_t i;

    for (i = 0; i < NALGS; i++) {
        tu_alg_info a = tu_alg(prov, algs[i]);

        if (strcmp(a.state, "software") != 0 || strstr(a.reason, why) == NULL)
            fail_msg("%s: %s, \"%s\" (expected \"%s\")", algs[i], a.state, a.reason, why);
    }
    same_in_software();
}

/*
 * Binds by driver name refused: under drivers = any every implementation is accepted, so the
 * sockets bind the kernel name, which serves in the kernel; under a list, software, also where
 * the implementations it does not accept are still in their self-tests (bind-driver-testing):
 * once tested, the kernel name may resolve to one of them.
 */
static void linux_7_2(void **state)
{
    static unsigned char a[LEN + 64], b[LEN + 64];
    size_t i;

    (void)state;
    if (strcmp(CCREE_TEST_DRIVERS, "any") != 0) {
        refused("Linux 7.2+ binds only software implementations");
        return;
    }
    for (i = 0; i < NALGS; i++) {
        tu_alg_info before = tu_alg(prov, algs[i]), after;
        int n;

        if (strcmp(before.state, "offload") != 0 || strcmp(before.driver, before.kname) != 0)
            fail_msg("%s: %s, driver %s, \"%s\" (expected offload through %s)", algs[i],
                     before.state, before.driver, before.reason, before.kname);
        n = crypt(NULL, algs[i], "provider=ccree", a);
        assert_true(n > 0);
        assert_int_equal(crypt(NULL, algs[i], "provider=default", b), n);
        assert_memory_equal(a, b, n);
        after = tu_alg(prov, algs[i]);
        if (after.offload_ops <= before.offload_ops)
            fail_msg("%s: no kernel op", algs[i]);
    }
}

/*
 * Linux 7.3 gives unprivileged processes a shorter allowlist: the reason says which list this
 * process got, from its effective capabilities as /proc/self/status shows them.
 */
static void linux_7_3(void **state)
{
    char line[128], why[160];
    unsigned long long eff = 0;
    FILE *f = fopen("/proc/self/status", "re");

    (void)state;
    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "CapEff: %llx", &eff) == 1)
            break;
    fclose(f);
    snprintf(why, sizeof(why), "bind refused by af_alg_restrict = 1 to a process %s",
             eff & (1ull << 12 | 1ull << 21) ? "with CAP_NET_ADMIN or CAP_SYS_ADMIN"
                                               : "without CAP_NET_ADMIN and CAP_SYS_ADMIN");
    refused(why);
}

static void wrong_answers(void **state)
{
    (void)state;
    refused("its answer differs from the default provider's");
}

/*
 * A driver that accepts any tag fails the self-test at load: GCM and CCM are not offloaded
 * (those the kernel forbids are not checked).
 */
static void any_tag(void **state)
{
    static const char *const aeads[] = { "AES-128-GCM", "AES-256-GCM", "AES-128-CCM",
                                         "AES-256-CCM" };
    size_t i, checked = 0;

    (void)state;
    for (i = 0; i < sizeof(aeads) / sizeof(aeads[0]); i++) {
        tu_alg_info a = tu_alg(prov, aeads[i]);

        if ((skip_why = tu_kernel_forbids(&a)) != NULL) {
            printf("%s not checked: the kernel forbids offload (%s)\n", aeads[i], skip_why);
            continue;
        }
        checked++;
        if (strcmp(a.state, "software") != 0 || strstr(a.reason, "accepts a tampered tag") == NULL)
            fail_msg("%s: %s, \"%s\"", aeads[i], a.state, a.reason);
    }
    if (checked > 0)
        skip_why = NULL;
}

/* Every request fails: software takes over; with fallback = no the call fails clearly. */
static void requests_fail(void **state)
{
    static unsigned char out[LEN + 64];
    OSSL_LIB_CTX *strict = OSSL_LIB_CTX_new();
    const char *data;
    unsigned long e;
    size_t i;

    (void)state;
    same_in_software();
    assert_int_equal(OSSL_LIB_CTX_load_config(strict, strict_cnf), 1);
    assert_true(OSSL_PROVIDER_available(strict, "ccree"));
    for (i = 0; i < NALGS; i++) {
        int found = 0;

        ERR_clear_error();
        if (crypt(strict, algs[i], "provider=ccree", out) >= 0)
            fail_msg("%s: succeeded with fallback = no and a failing kernel", algs[i]);
        while ((e = ERR_get_error_all(NULL, NULL, NULL, &data, NULL)) != 0)
            found |= strcmp(ERR_reason_error_string(e), "kernel request failed") == 0
                     && strstr(data, "Input/output error") != NULL;
        if (!found)
            fail_msg("%s: no \"kernel request failed\" error naming EIO", algs[i]);
    }
    OSSL_LIB_CTX_free(strict);
}

/* Re-init with only a new IV keeps the kernel socket: the key is sent once. */
static void reinit_sends_no_key(void **state)
{
    static const char *const names[] = { "AES-128-CBC", "AES-256-CTR" };
    static unsigned char a[LEN + 16], b[LEN + 16];
    unsigned long *keys = dlsym(RTLD_DEFAULT, "ccree_fault_keys");
    size_t i;
    int r;

    (void)state;
    assert_non_null(keys); /* the shim is preloaded */
    for (i = 0; i < 2; i++) {
        EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, names[i], "provider=ccree");
        EVP_CIPHER *ref = EVP_CIPHER_fetch(NULL, names[i], "provider=default");
        EVP_CIPHER_CTX *cc = EVP_CIPHER_CTX_new(), *rc = EVP_CIPHER_CTX_new();
        tu_alg_info before = tu_alg(prov, names[i]), after;
        unsigned long k0 = *keys;

        assert_string_equal(before.state, "offload");
        assert_true(EVP_EncryptInit_ex2(cc, c, key, NULL, NULL));
        assert_true(EVP_EncryptInit_ex2(rc, ref, key, NULL, NULL));
        for (r = 0; r < 6; r++) {
            int n, m;

            iv[0] = (unsigned char)r;
            assert_true(EVP_EncryptInit_ex2(cc, NULL, NULL, iv, NULL));
            assert_true(EVP_EncryptInit_ex2(rc, NULL, NULL, iv, NULL));
            assert_true(EVP_EncryptUpdate(cc, a, &n, in, LEN));
            assert_true(EVP_EncryptUpdate(rc, b, &m, in, LEN));
            assert_int_equal(n, m);
            assert_memory_equal(a, b, n);
        }
        after = tu_alg(prov, names[i]);
        assert_true(after.offload_ops >= before.offload_ops + 6);
        assert_int_equal(*keys - k0, 1);
        EVP_CIPHER_CTX_free(cc);
        EVP_CIPHER_CTX_free(rc);
        EVP_CIPHER_free(c);
        EVP_CIPHER_free(ref);
    }
}

/* The times ccree measured for name's requests of size bytes (ccree-timings), in ns. */
static void measured(OSSL_PROVIDER *p, const char *name, size_t size, unsigned long *kernel,
                     unsigned long *software)
{
    char *s, *line, field[40];

    assert_non_null(s = tu_get_string(p, "ccree-timings"));
    snprintf(field, sizeof(field), "\t%zu:", size);
    for (line = s; line != NULL && strncmp(line, name, strlen(name)) != 0; line = strchr(line, '\n'))
        line += *line == '\n';
    assert_non_null(line);
    assert_non_null(line = strstr(line, field));
    assert_int_equal(sscanf(line + strlen(field), "%lu:%lu", kernel, software), 2);
    free(s);
}

/*
 * offload-min = auto with one path made 2 ms slower a request (enough for the kernel in the
 * VM; valgrind's software can be slower still): the path measured slower gets no more than a
 * try now and then, and the delay shows in its time. The results stay right.
 */
static void auto_path(int kernel_slow)
{
    enum { N = 200, LEN4K = 4096 };
    static unsigned char a[N * LEN4K], b[N * LEN4K + 16];
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *p;
    EVP_CIPHER *c, *ref = EVP_CIPHER_fetch(NULL, "AES-128-CBC", "provider=default");
    EVP_CIPHER_CTX *cc = EVP_CIPHER_CTX_new(), *rc = EVP_CIPHER_CTX_new();
    tu_alg_info before, after;
    unsigned long k, s, ratio;
    uint64_t slow;
    int i, n;

    assert_int_equal(OSSL_LIB_CTX_load_config(ctx, auto_cnf), 1);
    p = OSSL_PROVIDER_load(ctx, "ccree");
    c = EVP_CIPHER_fetch(ctx, "AES-128-CBC", "provider=ccree");
    assert_true(p != NULL && c != NULL);
    before = tu_alg(p, "AES-128-CBC");
    assert_string_equal(before.state, "offload");
    assert_true(EVP_EncryptInit_ex2(cc, c, key, iv, NULL) && EVP_EncryptInit_ex2(rc, ref, key, iv, NULL));
    for (i = 0; i < N; i++)
        assert_true(EVP_EncryptUpdate(cc, a + i * LEN4K, &n, in, LEN4K) && n == LEN4K);
    for (i = 0; i < N; i++)
        assert_true(EVP_EncryptUpdate(rc, b + i * LEN4K, &n, in, LEN4K) && n == LEN4K);
    assert_memory_equal(a, b, sizeof(a));
    after = tu_alg(p, "AES-128-CBC");
    measured(p, "AES-128-CBC", LEN4K, &k, &s);
    assert_true((kernel_slow ? k : s) >= 2000000);
    slow = k > s ? after.offload_ops - before.offload_ops : after.fallback_ops - before.fallback_ops;
    ratio = k > s ? (k + s - 1) / s : (s + k - 1) / k;
    printf("%s 2 ms slower: the kernel %lu us, software %lu us a request; %llu of %d requests "
           "took the slower\n", kernel_slow ? "kernel" : "software", k / 1000, s / 1000,
           (unsigned long long)slow, N);
    /* a first measurement, a try once both are known, then one in 32 times the ratio */
    assert_true(slow >= 1 && slow <= 3 + N / (32 * ratio));
    EVP_CIPHER_CTX_free(cc);
    EVP_CIPHER_CTX_free(rc);
    EVP_CIPHER_free(c);
    EVP_CIPHER_free(ref);
    OSSL_PROVIDER_unload(p);
    OSSL_LIB_CTX_free(ctx);
}

static void auto_with_a_slow_kernel(void **state)
{
    (void)state;
    auto_path(1);
}

static void auto_with_slow_software(void **state)
{
    (void)state;
    auto_path(0);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *fault; /* CCREE_FAULT */
        struct CMUnitTest test;
    } modes[] = {
        { "", cmocka_unit_test(reinit_sends_no_key) },
        { "bind-driver", cmocka_unit_test(linux_7_2) },
        { "bind-driver-testing", cmocka_unit_test(linux_7_2) },
        { "bind-all", cmocka_unit_test(linux_7_3) },
        { "request-eio", cmocka_unit_test(requests_fail) },
        { "corrupt", cmocka_unit_test(wrong_answers) },
        { "any-tag", cmocka_unit_test(any_tag) },
        { "slow-kernel", cmocka_unit_test(auto_with_a_slow_kernel) },
        { "slow-software", cmocka_unit_test(auto_with_slow_software) },
    };
    const char *fault = getenv("CCREE_FAULT"), *req = getenv("CCREE_REQUIRE_OFFLOAD");
    size_t m;
    tu_alg_info a;
    int rc;

    if (argc != 3 || (prov = OSSL_PROVIDER_load(NULL, "ccree")) == NULL) {
        fprintf(stderr, "usage: %s STRICT_CNF AUTO_CNF, with ccree loaded through OPENSSL_CONF\n",
                argv[0]);
        return 1;
    }
    strict_cnf = argv[1];
    auto_cnf = argv[2];
    a = tu_alg(prov, "SHA1");
    if (strstr(a.reason, "no AF_ALG") != NULL && (req == NULL || strcmp(req, "1") != 0)) {
        printf("skipped: this kernel has no AF_ALG (these tests run in the VM)\n");
        return 77;
    }
    assert_true(RAND_bytes(key, sizeof(key)) && RAND_bytes(iv, sizeof(iv))
                && RAND_bytes(in, sizeof(in)));
    for (m = 0; m < sizeof(modes) / sizeof(modes[0]) && strcmp(modes[m].fault, fault ? fault : "");
         m++)
        ;
    if (m == sizeof(modes) / sizeof(modes[0])) {
        fprintf(stderr, "unknown CCREE_FAULT %s\n", fault);
        return 1;
    }
    rc = _cmocka_run_group_tests(modes[m].fault, &modes[m].test, 1, NULL, NULL);
    OSSL_PROVIDER_unload(prov);
    if (rc == 0 && skip_why != NULL) {
        printf("skipped: the kernel forbids offload of what this test needs (%s)\n", skip_why);
        return 77;
    }
    return rc;
}
