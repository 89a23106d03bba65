/*
 * test_evp.c - differential EVP tests for the ccree OpenSSL 3 provider.
 *
 * Every operation is run on the provider under test ("subject", fetched
 * with "provider=ccree") and on OpenSSL's default provider ("oracle"; the
 * legacy provider for single DES),
 * through the same helper code but into separate result buffers; the
 * results (return codes, output lengths of every EVP call, output bytes)
 * are then compared. Round trips and known-answer vectors give checks
 * that do not depend on the oracle at all.
 *
 * Environment:
 *   OPENSSL_CONF           config activating providers ccree and default
 *   CCREE_TEST_SUBJECT     subject provider name (default "ccree"); any
 *                          other name (e.g. "default", for self-checking
 *                          the test) skips the provider counter checks
 *   CCREE_REQUIRE_OFFLOAD  "1": every algorithm the kernel lists in /proc/crypto must
 *                          be in state "offload" (tu_counter_rule)
 *   CCREE_TEST_SEED        seed for sizes/chunkings/data (hex or decimal)
 *
 * This file sets the run up and lists the tests; evp_common.c has what they share (evp.h),
 * evp_kat.c, evp_cipher.c, evp_state.c, evp_bad.c, evp_digest.c and evp_fork.c the tests.
 */
#include "evp.h"

/* ------------------------------------------------------------------ */
/* Setup                                                                */
/* ------------------------------------------------------------------ */

/* A cipher's oracle provider; its subject is that too when the test checks itself. */
static const char *oracle_of(size_t ci)
{
    return ciphers[ci].oracle != NULL ? ciphers[ci].oracle : g_oracle;
}

static const char *subject_of(size_t ci)
{
    return strcmp(g_subject, g_oracle) == 0 ? oracle_of(ci) : g_subject;
}

static int fetch_all(void)
{
    char q_subj[64], q_orac[64];
    size_t i;

    for (i = 0; i < NCIPHERS; i++) {
        snprintf(q_subj, sizeof(q_subj), "provider=%s", subject_of(i));
        snprintf(q_orac, sizeof(q_orac), "provider=%s", oracle_of(i));
        subj_c[i] = EVP_CIPHER_fetch(NULL, ciphers[i].name, q_subj);
        orac_c[i] = EVP_CIPHER_fetch(NULL, ciphers[i].name, q_orac);
        if (subj_c[i] == NULL || orac_c[i] == NULL) {
            fprintf(stderr, "FATAL: cannot fetch %s from %s\n",
                    ciphers[i].name, subj_c[i] == NULL ? q_subj : q_orac);
            return 0;
        }
    }
    snprintf(q_subj, sizeof(q_subj), "provider=%s", g_subject);
    snprintf(q_orac, sizeof(q_orac), "provider=%s", g_oracle);
    for (i = 0; i < NMDS; i++) {
        subj_m[i] = EVP_MD_fetch(NULL, mds[i].name, q_subj);
        orac_m[i] = EVP_MD_fetch(NULL, mds[i].name, q_orac);
        if (subj_m[i] == NULL || orac_m[i] == NULL) {
            fprintf(stderr, "FATAL: cannot fetch %s from %s\n",
                    mds[i].name, subj_m[i] == NULL ? q_subj : q_orac);
            return 0;
        }
    }
    return 1;
}

static int group_setup(void **state)
{
    const char *e;
    tu_rng r;

    (void)state;
    if ((e = getenv("CCREE_TEST_SUBJECT")) != NULL && *e != '\0')
        g_subject = e;
    g_require_offload = (e = getenv("CCREE_REQUIRE_OFFLOAD")) != NULL
        && strcmp(e, "1") == 0;
    if ((e = getenv("CCREE_TEST_SEED")) != NULL && *e != '\0')
        g_seed = strtoull(e, NULL, 0);
    g_counters = strcmp(g_subject, "ccree") == 0;

    if (!OSSL_PROVIDER_available(NULL, g_subject)
        || !OSSL_PROVIDER_available(NULL, g_oracle)) {
        fprintf(stderr,
                "FATAL: provider '%s' is not available (OPENSSL_CONF=%s).\n"
                "A provider that fails to load is silently ignored by "
                "OpenSSL; check the config and the module path.\n",
                OSSL_PROVIDER_available(NULL, g_subject) ? g_oracle
                : g_subject, getenv("OPENSSL_CONF") ? getenv("OPENSSL_CONF")
                : "(unset)");
        ERR_print_errors_fp(stderr);
        return -1;
    }
    if (g_require_offload && !g_counters) {
        fprintf(stderr, "FATAL: CCREE_REQUIRE_OFFLOAD=1 needs subject "
                "ccree, not '%s'\n", g_subject);
        return -1;
    }
    if (g_counters) {
        g_ccree = OSSL_PROVIDER_load(NULL, "ccree");
        if (g_ccree == NULL) {
            fprintf(stderr, "FATAL: OSSL_PROVIDER_load(ccree) failed\n");
            ERR_print_errors_fp(stderr);
            return -1;
        }
    } else {
        printf("note: subject provider is '%s', not 'ccree': provider "
               "counter checks skipped\n", g_subject);
    }
    /* single DES lives in the legacy provider */
    if ((g_legacy = OSSL_PROVIDER_load(NULL, "legacy")) == NULL || !fetch_all()) {
        ERR_print_errors_fp(stderr);
        return -1;
    }
    g_data = malloc(DATASZ);
    if (g_data == NULL)
        return -1;
    tu_rng_seed(&r, g_seed);
    tu_rng_fill(&r, g_data, DATASZ);
    return 0;
}

static int group_teardown(void **state)
{
    size_t i;

    (void)state;
    for (i = 0; i < NCIPHERS; i++) {
        EVP_CIPHER_free(subj_c[i]);
        EVP_CIPHER_free(orac_c[i]);
    }
    for (i = 0; i < NMDS; i++) {
        EVP_MD_free(subj_m[i]);
        EVP_MD_free(orac_m[i]);
    }
    if (g_ccree != NULL)
        OSSL_PROVIDER_unload(g_ccree);
    if (g_legacy != NULL)
        OSSL_PROVIDER_unload(g_legacy);
    free(g_data);
    return 0;
}

static int test_setup(void **state)
{
    (void)state;
    where("(test start)");
    where_key(NULL, 0, NULL, 0);
    ERR_clear_error();
    return 0;
}

static const char *prov_name(const OSSL_PROVIDER *p)
{
    return p != NULL ? OSSL_PROVIDER_get0_name(p) : "(null)";
}

/* ------------------------------------------------------------------ */
/* 0. Providers, fetches, algorithm table                               */
/* ------------------------------------------------------------------ */

static void test_providers(void **state)
{
    size_t i;

    (void)state;
    where("test=providers");
    CHECK(OSSL_PROVIDER_available(NULL, g_subject), "%s", g_subject);
    for (i = 0; i < NCIPHERS; i++) {
        const char *ps = prov_name(EVP_CIPHER_get0_provider(subj_c[i]));
        const char *po = prov_name(EVP_CIPHER_get0_provider(orac_c[i]));

        CHECK(strcmp(ps, subject_of(i)) == 0, "%s subject comes from %s",
              ciphers[i].name, ps);
        CHECK(strcmp(po, oracle_of(i)) == 0, "%s oracle comes from %s",
              ciphers[i].name, po);
        CHECK(EVP_CIPHER_is_a(subj_c[i], ciphers[i].name), "%s",
              ciphers[i].name);
    }
    for (i = 0; i < NMDS; i++) {
        const char *ps = prov_name(EVP_MD_get0_provider(subj_m[i]));
        const char *po = prov_name(EVP_MD_get0_provider(orac_m[i]));

        CHECK(strcmp(ps, g_subject) == 0, "%s subject comes from %s",
              mds[i].name, ps);
        CHECK(strcmp(po, g_oracle) == 0, "%s oracle comes from %s",
              mds[i].name, po);
        CHECK(EVP_MD_is_a(subj_m[i], mds[i].name), "%s", mds[i].name);
    }
    if (g_counters) {
        /* every algorithm listed once, well-formed; state if required */
        for (i = 0; i < NCIPHERS + NMDS; i++) {
            csnap s;

            counters_begin(&s, i < NCIPHERS ? ciphers[i].name
                           : mds[i - NCIPHERS].name, 1);
        }
    }
}

/* ------------------------------------------------------------------ */

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_providers, test_setup),
        cmocka_unit_test_setup(test_kat, test_setup),
        cmocka_unit_test_setup(test_cipher_oneshot, test_setup),
        cmocka_unit_test_setup(test_cipher_chunked, test_setup),
        cmocka_unit_test_setup(test_cipher_inplace, test_setup),
        cmocka_unit_test_setup(test_cipher_reinit_iv, test_setup),
        cmocka_unit_test_setup(test_cipher_copy, test_setup),
        cmocka_unit_test_setup(test_cipher_params, test_setup),
        cmocka_unit_test_setup(test_cipher_evp_cipher, test_setup),
        cmocka_unit_test_setup(test_cipher_bad_decrypt, test_setup),
        cmocka_unit_test_setup(test_bad_input, test_setup),
        cmocka_unit_test_setup(test_cipher_interleave, test_setup),
        cmocka_unit_test_setup(test_digest_sizes, test_setup),
        cmocka_unit_test_setup(test_digest_copy, test_setup),
        cmocka_unit_test_setup(test_digest_params, test_setup),
        cmocka_unit_test_setup(test_fork, test_setup),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
