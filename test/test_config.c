/*
 * Configuration: bad values refuse the load with an error naming key and value; good ones
 * load; fallback = no turns every algorithm without a kernel path into a clear init error;
 * what ccree offers to fetches (offer, and fallback = no, against what it offloads);
 * offload-goal picks by wall-clock or by CPU time (with the simulated CryptoCell).
 * Usage: test_config DIR MODULE (DIR: where to write configurations, MODULE: ccree.so).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <algs.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "testutil.h"

static const char *dir, *module;

/*
 * A library context loaded from a configuration with these ccree settings. OpenSSL drops the
 * errors of a provider that fails to activate from a configuration, so the tests that look
 * at errors leave "activate" out and load the provider themselves.
 */
static OSSL_LIB_CTX *load(const char *settings)
{
    char path[4096];
    FILE *f;
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();

    snprintf(path, sizeof(path), "%s/config-test.cnf", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "openssl_conf = init\n[init]\nproviders = provs\n[provs]\nccree = ccree_sect\n"
            "default = default_sect\n[default_sect]\nactivate = 1\n[ccree_sect]\nmodule = %s\n%s\n",
            module, settings);
    fclose(f);
    setenv("OPENSSL_CONF", path, 1); /* where ccree looks for keys it does not know */
    assert_non_null(ctx);
    assert_int_equal(OSSL_LIB_CTX_load_config(ctx, path), 1);
    return ctx;
}

static void bad_values(void **state)
{
    static const struct {
        const char *settings, *says;
    } cases[] = {
        { "drivers = Bad!", "drivers = \"Bad!\"" },
        { "drivers = ccree,,x", "drivers = \"ccree,,x\"" },
        { "drivers = ,ccree", "drivers = \",ccree\"" },
        { "offload-min = abc", "offload-min = \"abc\"" },
        { "offload-min = -1", "offload-min = \"-1\"" },
        { "offload-min = 12k", "offload-min = \"12k\"" },
        { "offload-min = 99999999999999999999999", "offload-min = \"99999999999999999999999\"" },
        { "offload-min = 1048577", "offload-min = \"1048577\"" },
        { "offload-goal = speed", "offload-goal = \"speed\"" },
        { "offload-goal = CPU", "offload-goal = \"CPU\"" },
        { "fallback = maybe", "fallback = \"maybe\"" },
        { "fallback = ", "fallback = \"\"" },
        { "offer = some", "offer = \"some\"" },
        { "offer = offload", "offer = \"offload\"" },
        { "ofload-min = 10", "ofload-min" },
        { "drivers = any\nfalback = no", "falback" },
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char settings[256];
        OSSL_LIB_CTX *ctx = load(cases[i].settings);

        if (OSSL_PROVIDER_load(ctx, "ccree") != NULL)
            fail_msg("loaded with \"%s\"", cases[i].settings);
        if (!tu_error_says(cases[i].says))
            fail_msg("no error naming %s", cases[i].says);
        OSSL_LIB_CTX_free(ctx);
        snprintf(settings, sizeof(settings), "activate = 1\n%s", cases[i].settings);
        ctx = load(settings);
        if (OSSL_PROVIDER_available(ctx, "ccree"))
            fail_msg("activated with \"%s\"", cases[i].settings);
        OSSL_LIB_CTX_free(ctx);
        ERR_clear_error();
    }
}

static void good_values(void **state)
{
    static const char *const cases[] = {
        "activate = 1", "activate = 1\ndrivers = any", "activate = 1\ndrivers = ccree,caam_jr",
        "activate = 1\noffload-min = 0",
        "activate = 1\noffload-min = 1048576\nfallback = no\ndrivers = ccree",
        "activate = 1\noffload-goal = time", "activate = 1\noffload-goal = cpu",
        "activate = 1\noffer = offloaded", "activate = 1\noffer = all",
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        OSSL_LIB_CTX *ctx = load(cases[i]);
        OSSL_PROVIDER *p = OSSL_PROVIDER_load(ctx, "ccree");
        char *name = NULL, *version = NULL, *buildinfo = NULL;
        int status = 0;
        OSSL_PARAM params[] = {
            OSSL_PARAM_utf8_ptr("name", &name, 0),
            OSSL_PARAM_utf8_ptr("version", &version, 0),
            OSSL_PARAM_utf8_ptr("buildinfo", &buildinfo, 0),
            OSSL_PARAM_int("status", &status),
            OSSL_PARAM_END,
        };

        if (p == NULL)
            fail_msg("refused \"%s\"", cases[i]);
        assert_int_equal(OSSL_PROVIDER_get_params(p, params), 1);
        assert_non_null(strstr(name, "ccree"));
        assert_non_null(version);
        assert_non_null(buildinfo);
        assert_int_equal(status, 1);
        OSSL_PROVIDER_unload(p);
        OSSL_LIB_CTX_free(ctx);
    }
}

static void strict(void **state)
{
    OSSL_LIB_CTX *ctx = load("activate = 1\ndrivers = any\noffload-min = 0\nfallback = no");
    OSSL_PROVIDER *p = OSSL_PROVIDER_load(ctx, "ccree");
    char *rep, *line, *save = NULL;
    unsigned char key[64], iv[16] = { 0 }, out[64];
    int n = 0;

    (void)state;
    for (n = 0; n < (int)sizeof(key); n++) /* XTS wants two different halves */
        key[n] = (unsigned char)n;
    n = 0;
    assert_non_null(p);
    assert_non_null(rep = tu_get_string(p, "ccree-algorithms"));
    for (line = strtok_r(rep, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save), n++) {
        char name[64];
        int offloaded = strstr(line, "\toffload\t") != NULL, ok;
        EVP_CIPHER *c;
        EVP_MD *md;

        snprintf(name, sizeof(name), "%.*s", (int)strcspn(line, "\t"), line);
        if (strncmp(name, "HMAC-", 5) == 0 || strncmp(name, "CMAC-", 5) == 0) {
            int cmac = name[0] == 'C';
            EVP_MAC *mac = EVP_MAC_fetch(ctx, cmac ? "CMAC" : "HMAC", "provider=ccree");
            size_t keylen = cmac ? (size_t)atoi(name + 9) / 8 : 32; /* CMAC-AES-128-CBC: 16 */

            assert_non_null(mac);
            ok = EVP_Q_mac(ctx, cmac ? "CMAC" : "HMAC", "provider=ccree", name + 5, NULL, key,
                           keylen, key, 32, out, sizeof(out), NULL) != NULL;
            EVP_MAC_free(mac);
        } else if ((c = EVP_CIPHER_fetch(ctx, name, "provider=ccree")) != NULL) {
            EVP_CIPHER_CTX *cc = EVP_CIPHER_CTX_new();
            int outl;

            ok = EVP_EncryptInit_ex2(cc, c, key, iv, NULL)
                 && EVP_EncryptUpdate(cc, out, &outl, key, 32);
            EVP_CIPHER_CTX_free(cc);
            EVP_CIPHER_free(c);
        } else {
            unsigned int mdl;

            md = EVP_MD_fetch(ctx, name, "provider=ccree");
            assert_non_null(md);
            ok = EVP_Digest(key, 32, out, &mdl, md, NULL);
            EVP_MD_free(md);
        }
        if (ok != offloaded)
            fail_msg("%s: %s with fallback = no", name, ok ? "ran without offload" : "failed");
        if (!offloaded && !tu_error_says("not offloaded and fallback = no"))
            fail_msg("%s: no clear error", name);
        ERR_clear_error();
    }
    assert_int_equal(n, CCREE_NALGS); /* a row for each of the table's */
    free(rep);
    OSSL_PROVIDER_unload(p);
    OSSL_LIB_CTX_free(ctx);
}

/*
 * What ccree offers: by default only what it offloads (a MAC: when any of its rows is), and
 * ?provider=ccree fetches the rest from the default provider, whose implementation then runs;
 * under offer = all and under fallback = no every algorithm software has. The report says
 * "not offered" of exactly the rows ccree does not offer. Natively nothing is offloaded.
 */
static void offer(void **state)
{
    static const char *const settings[] = { "", "\noffer = all", "\nfallback = no" };
    size_t s;

    (void)state;
    for (s = 0; s < sizeof(settings) / sizeof(settings[0]); s++) {
        char conf[128], *rep, *line, *save = NULL, hmac = 0, cmac = 0;
        OSSL_LIB_CTX *ctx;
        OSSL_PROVIDER *p;
        int n = 0;

        snprintf(conf, sizeof(conf), "activate = 1\ndrivers = %s%s", CCREE_TEST_DRIVERS,
                 settings[s]);
        ctx = load(conf);
        assert_non_null(p = OSSL_PROVIDER_load(ctx, "ccree"));
        assert_non_null(rep = tu_get_string(p, "ccree-algorithms"));
        for (line = rep; *line != '\0'; line += strcspn(line, "\n") + (strchr(line, '\n') != NULL)) {
            tu_alg_info a; /* the MAC families with an offloaded row */

            if (tu_parse_alg_line(line, strcspn(line, "\n"), &a) && strcmp(a.state, "offload") == 0)
                hmac |= strncmp(a.name, "HMAC-", 5) == 0, cmac |= strncmp(a.name, "CMAC-", 5) == 0;
        }
        for (line = strtok_r(rep, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save), n++) {
            tu_alg_info a;
            char name[64];
            int mac, sw, want, q;
            const char *fetched[3] = { NULL, NULL, NULL }; /* as props[] */

            assert_true(tu_parse_alg_line(line, strlen(line), &a));
            mac = strncmp(a.name, "HMAC-", 5) == 0 || strncmp(a.name, "CMAC-", 5) == 0;
            sw = strstr(a.reason, "no software implementation") == NULL;
            want = sw && (s > 0 || strcmp(a.state, "offload") == 0 || (mac && (a.name[0] == 'H' ? hmac : cmac)));
            snprintf(name, sizeof(name), "%s", mac ? (a.name[0] == 'H' ? "HMAC" : "CMAC") : a.name);
            for (q = 0; q < 3; q++) {
                static const char *const props[] = { "provider=ccree", "?provider=ccree",
                                                     "provider=default" };
                EVP_CIPHER *c = NULL;
                EVP_MD *md = NULL;
                EVP_MAC *m = NULL;

                ERR_set_mark();
                if (mac)
                    m = EVP_MAC_fetch(ctx, name, props[q]);
                else if ((c = EVP_CIPHER_fetch(ctx, name, props[q])) == NULL)
                    md = EVP_MD_fetch(ctx, name, props[q]);
                ERR_pop_to_mark();
                if (m != NULL || c != NULL || md != NULL)
                    fetched[q] = OSSL_PROVIDER_get0_name(m != NULL ? EVP_MAC_get0_provider(m)
                                                         : c != NULL ? EVP_CIPHER_get0_provider(c)
                                                                     : EVP_MD_get0_provider(md));
                EVP_MAC_free(m);
                EVP_CIPHER_free(c);
                EVP_MD_free(md);
            }
            if ((fetched[0] != NULL) != want)
                fail_msg("%s (%s): fetched with provider=ccree: %s, wanted %s", a.name, conf,
                         fetched[0] ? "yes" : "no", want ? "yes" : "no");
            /* not offered: what the default provider has (single DES: nothing) */
            if (want ? fetched[1] == NULL || strcmp(fetched[1], "ccree") != 0
                     : (fetched[1] == NULL) != (fetched[2] == NULL)
                           || (fetched[1] != NULL && strcmp(fetched[1], "default") != 0))
                fail_msg("%s (%s): ?provider=ccree fetched from %s", a.name, conf,
                         fetched[1] ? fetched[1] : "nowhere");
            if ((strstr(a.reason, "; not offered (fetched from the other providers)") != NULL) != (sw && !want))
                fail_msg("%s (%s): the report says \"%s\"", a.name, conf, a.reason);
        }
        assert_int_equal(n, CCREE_NALGS);
        free(rep);
        OSSL_PROVIDER_unload(p);
        OSSL_LIB_CTX_free(ctx);
    }
}

/* Writes value to the simulated CryptoCell's module parameter name: 1, or 0 without it. */
static int ccsim_param(const char *name, const char *value)
{
    char path[128];
    FILE *f;

    snprintf(path, sizeof(path), "/sys/module/ccsim/parameters/%s", name);
    if ((f = fopen(path, "we")) == NULL)
        return 0;
    fputs(value, f);
    return fclose(f) == 0;
}

/*
 * offload-goal under offload-min = auto, with the simulated CryptoCell made slow as a device
 * is: each request waits 20 ms for the module (latency_us), asleep. By wall-clock (time) the
 * software is faster and keeps the requests; by the calling thread's CPU time (cpu) the kernel
 * costs only its system calls, and takes them. 16 KiB of DES-EDE3-CBC, whose software costs
 * more than those calls (under TCG, 16 KiB of AES-NI costs less: 0.25 ms against 0.6 ms).
 * Only in the VM with the module (test/vm/run.sh -c); it skips elsewhere.
 */
static void offload_goal(void **state)
{
    static const char *const goals[] = { "time", "cpu" };
    static unsigned char key[24], iv[16], in[16384], out[16384 + 16];
    size_t g;

    (void)state;
    if (!ccsim_param("latency_us", "20000")) {
        printf("offload_goal skipped: no simulated CryptoCell (test/vm/run.sh -c)\n");
        skip();
    }
    for (g = 0; g < sizeof(key); g++) /* three different DES keys */
        key[g] = (unsigned char)(g * 37);
    for (g = 0; g < 2; g++) {
        char settings[128];
        OSSL_LIB_CTX *ctx;
        OSSL_PROVIDER *p;
        EVP_CIPHER *c;
        EVP_CIPHER_CTX *cc = EVP_CIPHER_CTX_new();
        tu_alg_info before, after;
        uint64_t kernel, software;
        int i, n;

        snprintf(settings, sizeof(settings), "activate = 1\ndrivers = ccree\noffload-goal = %s",
                 goals[g]);
        ctx = load(settings);
        p = OSSL_PROVIDER_load(ctx, "ccree");
        c = EVP_CIPHER_fetch(ctx, "DES-EDE3-CBC", "provider=ccree");
        assert_non_null(p);
        assert_non_null(c);
        before = tu_alg(p, "DES-EDE3-CBC");
        assert_string_equal(before.state, "offload");
        assert_int_equal(EVP_EncryptInit_ex2(cc, c, key, iv, NULL), 1);
        for (i = 0; i < 200; i++)
            assert_int_equal(EVP_EncryptUpdate(cc, out, &n, in, sizeof(in)), 1);
        after = tu_alg(p, "DES-EDE3-CBC");
        kernel = after.offload_ops - before.offload_ops;
        software = after.fallback_ops - before.fallback_ops;
        printf("offload-goal = %s: %llu requests in the kernel, %llu in software\n", goals[g],
               (unsigned long long)kernel, (unsigned long long)software);
        if (g == 0 ? kernel * 4 > software : software * 4 > kernel)
            fail_msg("offload-goal = %s sent most requests the %s way", goals[g],
                     g == 0 ? "slower" : "costlier");
        EVP_CIPHER_CTX_free(cc);
        EVP_CIPHER_free(c);
        OSSL_PROVIDER_unload(p);
        OSSL_LIB_CTX_free(ctx);
    }
}

/* The module as it was loaded: no delay (also after a failure). */
static int no_latency(void **state)
{
    (void)state;
    ccsim_param("latency_us", "0");
    return 0;
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_values),
        cmocka_unit_test(good_values),
        cmocka_unit_test(strict),
        cmocka_unit_test(offer),
        cmocka_unit_test_teardown(offload_goal, no_latency),
    };

    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR MODULE\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    module = argv[2];
    return cmocka_run_group_tests(tests, NULL, NULL);
}
