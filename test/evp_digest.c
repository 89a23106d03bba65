/* test_evp: digests: sizes and chunkings, copies and re-init, parameters. */
#include "evp.h"

/* ------------------------------------------------------------------ */
/* Digest helpers                                                       */
/* ------------------------------------------------------------------ */

/* stream `len` bytes in the given chunks; returns 1 on success */
static int md_stream(const EVP_MD *md, const unsigned char *in,
                     const size_t *chunks, size_t n, unsigned char *out,
                     unsigned int *outl)
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();
    size_t i, off = 0;
    int ok;

    assert_non_null(m);
    ok = EVP_DigestInit_ex2(m, md, NULL) == 1;
    for (i = 0; ok && i < n; i++) {
        ok = EVP_DigestUpdate(m, in + off, chunks[i]) == 1;
        off += chunks[i];
    }
    if (ok)
        ok = EVP_DigestFinal_ex(m, out, outl) == 1;
    EVP_MD_CTX_free(m);
    return ok;
}

/* oracle digest of the concatenation a||b (independent of any copy) */
static void oracle_md2(size_t mi, const unsigned char *a, size_t al,
                       const unsigned char *b, size_t bl, unsigned char *out,
                       unsigned int *outl)
{
    EVP_MD_CTX *m = EVP_MD_CTX_new();

    assert_non_null(m);
    assert_int_equal(EVP_DigestInit_ex2(m, orac_m[mi], NULL), 1);
    assert_int_equal(EVP_DigestUpdate(m, a, al), 1);
    assert_int_equal(EVP_DigestUpdate(m, b, bl), 1);
    assert_int_equal(EVP_DigestFinal_ex(m, out, outl), 1);
    EVP_MD_CTX_free(m);
}

/* ------------------------------------------------------------------ */
/* 10. Digests: sizes, chunkings                                        */
/* ------------------------------------------------------------------ */

void test_digest_sizes(void **state)
{
    size_t *chunks = malloc(MAXCHUNKS * sizeof(size_t));
    size_t mi, si;

    (void)state;
    assert_non_null(chunks);
    for (mi = 0; mi < NMDS; mi++) {
        unsigned char ds[EVP_MAX_MD_SIZE], dO[EVP_MAX_MD_SIZE];
        unsigned int ls, lo;
        size_t lens[4], li, k, n;
        csnap s;
        tu_rng r;
        int ok;

        rng_for(&r, 10, mi);
        counters_begin(&s, mds[mi].name, 0);
        for (si = 0; si < NSIZES; si++) {
            where("test=digest one-shot alg=%s size=%zu", mds[mi].name,
                  sizes[si]);
            ls = lo = 0;
            ok = EVP_Digest(g_data, sizes[si], ds, &ls, subj_m[mi], NULL);
            CHECK(ok == 1, "EVP_Digest failed");
            CHECK(EVP_Digest(g_data, sizes[si], dO, &lo, orac_m[mi], NULL)
                  == 1, "oracle");
            CHECK(ls == (unsigned)mds[mi].size, "digest length %u", ls);
            expect_bytes("EVP_Digest", ds, ls, dO, lo);
        }
        lens[0] = tu_rng_range(&r, 1, 1000);
        lens[1] = 65537;
        lens[2] = 100000 + tu_rng_range(&r, 0, 127);
        lens[3] = 300000;
        for (li = 0; li < 4; li++) {
            CHECK(EVP_Digest(g_data, lens[li], dO, &lo, orac_m[mi], NULL)
                  == 1, "oracle");
            for (k = 0; k < 3; k++) {
                n = tu_chunking(&r, lens[li], MAXCHUNK, chunks, MAXCHUNKS);
                where("test=digest chunked alg=%s size=%zu chunking#%zu",
                      mds[mi].name, lens[li], k);
                where_chunks(chunks, n);
                CHECK(md_stream(subj_m[mi], g_data, chunks, n, ds, &ls),
                      "streaming digest failed");
                expect_bytes("chunked digest vs one-shot", ds, ls, dO, lo);
            }
        }
        /* fixed small update sizes: 64 over 100 KiB, 1, 63, 65, 128 */
        {
            static const size_t fixed[][2] = {
                { 64, 1600 }, { 1, 1000 }, { 63, 300 }, { 65, 300 },
                { 128, 200 },
            };

            for (k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++) {
                size_t i;

                n = fixed[k][1];
                for (i = 0; i < n; i++)
                    chunks[i] = fixed[k][0];
                where("test=digest fixed-updates alg=%s %zu x %zu bytes",
                      mds[mi].name, n, fixed[k][0]);
                CHECK(EVP_Digest(g_data, n * fixed[k][0], dO, &lo,
                                 orac_m[mi], NULL) == 1, "oracle");
                CHECK(md_stream(subj_m[mi], g_data, chunks, n, ds, &ls),
                      "streaming digest failed");
                expect_bytes("fixed-size updates vs one-shot", ds, ls, dO,
                             lo);
            }
        }
        counters_end(&s);
    }
    free(chunks);
}

/* ------------------------------------------------------------------ */
/* 11. EVP_MD_CTX_copy_ex, re-init                                      */
/* ------------------------------------------------------------------ */

static void md_final_check(const char *what, EVP_MD_CTX *m, size_t mi,
                           const unsigned char *a, size_t al,
                           const unsigned char *b, size_t bl)
{
    unsigned char d[EVP_MAX_MD_SIZE], e[EVP_MAX_MD_SIZE];
    unsigned int dl = 0, el = 0;

    CHECK(EVP_DigestFinal_ex(m, d, &dl) == 1, "%s: final failed", what);
    oracle_md2(mi, a, al, b, bl, e, &el);
    expect_bytes(what, d, dl, e, el);
}

void test_digest_copy(void **state)
{
    size_t mi;

    (void)state;
    for (mi = 0; mi < NMDS; mi++) {
        const EVP_MD *md = subj_m[mi];
        const unsigned char *P = g_data, *X = g_data + 150000;
        const unsigned char *Y = g_data + 300000, *Z = g_data + 450000;
        size_t p, x, y, z, w;
        EVP_MD_CTX *A, *B, *C, *D;
        csnap s;
        tu_rng r;

        rng_for(&r, 11, mi);
        counters_begin(&s, mds[mi].name, 0);
        A = EVP_MD_CTX_new();
        B = EVP_MD_CTX_new();
        C = EVP_MD_CTX_new();
        D = EVP_MD_CTX_new();
        assert_true(A && B && C && D);

        /* (a) mid-stream copy, copy of a copy, copy into a used ctx */
        p = 100 * 1024 + tu_rng_range(&r, 0, 63);
        x = tu_rng_range(&r, 0, 70000);
        y = tu_rng_range(&r, 0, 70000);
        z = tu_rng_range(&r, 0, 70000);
        w = tu_rng_range(&r, 0, 5000);
        where("test=digest-copy mid-stream alg=%s p=%zu x=%zu y=%zu z=%zu",
              mds[mi].name, p, x, y, z);
        CHECK(EVP_DigestInit_ex2(A, md, NULL) == 1, "init");
        CHECK(EVP_DigestUpdate(A, P, p / 3) == 1, "update");
        CHECK(EVP_DigestUpdate(A, P + p / 3, p - p / 3) == 1, "update");
        /* D holds a live context of another digest before the copy */
        CHECK(EVP_DigestInit_ex2(D, subj_m[(mi + 1) % NMDS], NULL) == 1,
              "init D");
        CHECK(EVP_DigestUpdate(D, Z, 777) == 1, "update D");
        CHECK(EVP_MD_CTX_copy_ex(B, A) == 1, "copy A->B");
        CHECK(EVP_MD_CTX_copy_ex(C, B) == 1, "copy B->C");
        CHECK(EVP_MD_CTX_copy_ex(D, A) == 1, "copy A->D (used D)");
        CHECK(EVP_DigestUpdate(A, X, x) == 1, "update A");
        CHECK(EVP_DigestUpdate(B, Y, y / 2) == 1, "update B");
        CHECK(EVP_DigestUpdate(C, Z, z) == 1, "update C");
        CHECK(EVP_DigestUpdate(B, Y + y / 2, y - y / 2) == 1, "update B");
        md_final_check("original", A, mi, P, p, X, x);
        EVP_MD_CTX_free(A);             /* original first */
        md_final_check("copy", B, mi, P, p, Y, y);
        md_final_check("copy of copy", C, mi, P, p, Z, z);
        CHECK(EVP_DigestUpdate(D, Z + 1000, w) == 1, "update D");
        md_final_check("copy into used ctx", D, mi, P, p, Z + 1000, w);

        /* (b) copy before any update */
        A = EVP_MD_CTX_new();
        assert_non_null(A);
        where("test=digest-copy before-update alg=%s x=%zu y=%zu",
              mds[mi].name, x, y);
        CHECK(EVP_DigestInit_ex2(A, md, NULL) == 1, "init");
        CHECK(EVP_MD_CTX_copy_ex(B, A) == 1, "copy");
        CHECK(EVP_DigestUpdate(B, Y, y) == 1, "update B");
        CHECK(EVP_DigestUpdate(A, X, x) == 1, "update A");
        md_final_check("original", A, mi, X, x, NULL, 0);
        md_final_check("copy", B, mi, Y, y, NULL, 0);

        /* (c) final, then re-init the same ctx (NULL type and explicit) */
        where("test=digest-copy reinit alg=%s x=%zu y=%zu z=%zu",
              mds[mi].name, x, y, z);
        CHECK(EVP_DigestInit_ex2(A, NULL, NULL) == 1, "re-init (NULL md)");
        CHECK(EVP_DigestUpdate(A, P, p) == 1, "update");
        md_final_check("after re-init", A, mi, P, p, NULL, 0);
        CHECK(EVP_DigestInit_ex2(A, md, NULL) == 1, "re-init (same md)");
        CHECK(EVP_DigestUpdate(A, X, x) == 1, "update");
        CHECK(EVP_MD_CTX_copy_ex(B, A) == 1, "copy after re-init");
        CHECK(EVP_DigestUpdate(A, Y, y) == 1, "update A");
        CHECK(EVP_DigestUpdate(B, Z, z) == 1, "update B");
        md_final_check("re-init original", A, mi, X, x, Y, y);
        EVP_MD_CTX_free(A);
        md_final_check("re-init copy", B, mi, X, x, Z, z);
        /* re-init B, which was last used as a copy destination */
        CHECK(EVP_DigestInit_ex2(B, NULL, NULL) == 1, "re-init copy");
        CHECK(EVP_DigestUpdate(B, Z, 1) == 1, "update");
        md_final_check("re-init of a copy", B, mi, Z, 1, NULL, 0);

        EVP_MD_CTX_free(B);
        EVP_MD_CTX_free(C);
        EVP_MD_CTX_free(D);
        counters_end(&s);
    }
}

/* ------------------------------------------------------------------ */
/* 12. EVP_MD parameters                                                */
/* ------------------------------------------------------------------ */

void test_digest_params(void **state)
{
    size_t mi;

    (void)state;
    for (mi = 0; mi < NMDS; mi++) {
        const EVP_MD *S = subj_m[mi], *O = orac_m[mi];
        size_t ss = 0, so = 0, bs = 0, bo = 0;
        OSSL_PARAM p[3];
        EVP_MD_CTX *m;
        int rs, ro;

        where("test=digest-params alg=%s", mds[mi].name);
        CHECK(EVP_MD_get_size(S) == EVP_MD_get_size(O)
              && EVP_MD_get_size(S) == mds[mi].size, "size %d",
              EVP_MD_get_size(S));
        CHECK(EVP_MD_get_block_size(S) == EVP_MD_get_block_size(O)
              && EVP_MD_get_block_size(S) == mds[mi].block, "block size %d",
              EVP_MD_get_block_size(S));
        CHECK(EVP_MD_get_flags(S) == EVP_MD_get_flags(O), "flags 0x%lx vs "
              "0x%lx", EVP_MD_get_flags(S), EVP_MD_get_flags(O));
        p[0] = OSSL_PARAM_construct_size_t(OSSL_DIGEST_PARAM_SIZE, &ss);
        p[1] = OSSL_PARAM_construct_size_t(OSSL_DIGEST_PARAM_BLOCK_SIZE, &bs);
        p[2] = OSSL_PARAM_construct_end();
        rs = EVP_MD_get_params(S, p);
        p[0] = OSSL_PARAM_construct_size_t(OSSL_DIGEST_PARAM_SIZE, &so);
        p[1] = OSSL_PARAM_construct_size_t(OSSL_DIGEST_PARAM_BLOCK_SIZE, &bo);
        ro = EVP_MD_get_params(O, p);
        CHECK(rs == 1 && ro == 1 && ss == so && bs == bo
              && ss == (size_t)mds[mi].size, "EVP_MD_get_params: size "
              "%zu/%zu block %zu/%zu", ss, so, bs, bo);
        m = EVP_MD_CTX_new();
        assert_non_null(m);
        CHECK(EVP_DigestInit_ex2(m, S, NULL) == 1, "init");
        CHECK(EVP_MD_CTX_get_size(m) == mds[mi].size, "ctx size");
        CHECK(EVP_MD_CTX_get_block_size(m) == mds[mi].block, "ctx block");
        CHECK(EVP_MD_is_a(EVP_MD_CTX_get0_md(m), mds[mi].name), "ctx md");
        EVP_MD_CTX_free(m);
        ERR_clear_error();
    }
}
