/* test_evp: cipher sequences (one-shot, chunked, in place, re-init, EVP_Cipher, interleaved). */
#include "evp.h"

/* ------------------------------------------------------------------ */
/* 1. One-shot update+final, all sizes, padding on/off                   */
/* ------------------------------------------------------------------ */

void test_cipher_oneshot(void **state)
{
    trace es, eo, ds, dO;
    size_t ci, si;

    (void)state;
    tr_init(&es, OUTCAP);
    tr_init(&eo, OUTCAP);
    tr_init(&ds, OUTCAP);
    tr_init(&dO, OUTCAP);
    for (ci = 0; ci < NCIPHERS; ci++) {
        const cipher_info *c = &ciphers[ci];
        unsigned char key[32], iv[16];
        csnap s;
        int pad;

        counters_begin(&s, c->name, 0);
        rand_key_iv(c, key, iv);
        for (si = 0; si < NSIZES; si++) {
            for (pad = 1; pad >= 0; pad--) {
                size_t len = sizes[si], explen;
                cseq e = { 1, pad, key, iv, g_data, len, NULL, 0, 0 };
                cseq d = e;
                int oks, oko, bad;

                where("test=oneshot alg=%s size=%zu padding=%d", c->name,
                      len, pad);
                oks = run_cipher(subj_c[ci], &e, &es);
                oko = run_cipher(orac_c[ci], &e, &eo);
                cmp_trace("encrypt", &es, &eo);
                bad = !pad && c->block > 1 && len % (size_t)c->block != 0;
                d.enc = 0;
                if (bad) {
                    CHECK(!oks && !oko && es.kind[last_call(&es)] == 'F',
                          "non-block-multiple with padding off must fail "
                          "in EncryptFinal (%s %d, %s %d)", g_subject, oks,
                          g_oracle, oko);
                    /* decrypting a non-multiple must fail as well */
                    oks = run_cipher(subj_c[ci], &d, &ds);
                    oko = run_cipher(orac_c[ci], &d, &dO);
                    cmp_trace("decrypt non-multiple", &ds, &dO);
                    CHECK(!oks && !oko && ds.kind[last_call(&ds)] == 'F',
                          "DecryptFinal of a non-multiple must fail");
                    continue;
                }
                CHECK(oks && oko, "encrypt failed");
                explen = pad && c->block > 1
                    ? (len / (size_t)c->block + 1) * (size_t)c->block : len;
                CHECK(es.total == explen, "ciphertext length %zu, expected "
                      "%zu", es.total, explen);
                d.in = es.out;
                d.len = es.total;
                oks = run_cipher(subj_c[ci], &d, &ds);
                d.in = eo.out;
                d.len = eo.total;
                oko = run_cipher(orac_c[ci], &d, &dO);
                cmp_trace("decrypt", &ds, &dO);
                CHECK(oks, "decrypt failed");
                expect_bytes("round trip", ds.out, ds.total, g_data, len);
            }
        }
        counters_end(&s);
    }
    tr_free(&es);
    tr_free(&eo);
    tr_free(&ds);
    tr_free(&dO);
}

/* ------------------------------------------------------------------ */
/* 2. Random chunkings                                                  */
/* ------------------------------------------------------------------ */

void test_cipher_chunked(void **state)
{
    trace ts, to;
    unsigned char *ref = malloc(OUTCAP);
    size_t *chunks = malloc(MAXCHUNKS * sizeof(size_t));
    size_t ci;

    (void)state;
    assert_true(ref && chunks);
    tr_init(&ts, OUTCAP);
    tr_init(&to, OUTCAP);
    for (ci = 0; ci < NCIPHERS; ci++) {
        const cipher_info *c = &ciphers[ci];
        unsigned char key[32], iv[16];
        size_t lens[5], li;
        csnap s;
        tu_rng r;

        rng_for(&r, 2, ci);
        lens[0] = tu_rng_range(&r, 1, 600);
        lens[1] = 4097;
        lens[2] = 65537 + tu_rng_range(&r, 0, 40);
        lens[3] = 150000 + tu_rng_range(&r, 0, 15);
        lens[4] = 16 * tu_rng_range(&r, 2000, 9000);   /* padding off */
        counters_begin(&s, c->name, 1);
        rand_key_iv(c, key, iv);
        for (li = 0; li < 5; li++) {
            size_t len = lens[li], reflen, k;
            int pad = li == 4 ? 0 : 1;

            reflen = oracle_crypt(ci, 1, pad, key, iv, g_data, len, ref);
            for (k = 0; k < 2; k++) {
                cseq q = { 1, pad, key, iv, g_data, len, chunks, 0, 0 };
                int oks;

                /* encrypt plaintext in random chunks */
                q.nchunks = tu_chunking(&r, len, MAXCHUNK, chunks, MAXCHUNKS);
                where("test=chunked encrypt alg=%s size=%zu padding=%d "
                      "chunking#%zu", c->name, len, pad, k);
                where_chunks(chunks, q.nchunks);
                oks = run_cipher(subj_c[ci], &q, &ts);
                run_cipher(orac_c[ci], &q, &to);
                cmp_trace("chunked encrypt", &ts, &to);
                CHECK(oks, "encrypt failed");
                expect_bytes("chunked encrypt vs one-shot oracle", ts.out,
                             ts.total, ref, reflen);

                /* decrypt the ciphertext in (other) random chunks */
                q.enc = 0;
                q.in = ref;
                q.len = reflen;
                q.nchunks = tu_chunking(&r, reflen, MAXCHUNK, chunks,
                                        MAXCHUNKS);
                where("test=chunked decrypt alg=%s size=%zu padding=%d "
                      "chunking#%zu", c->name, reflen, pad, k);
                where_chunks(chunks, q.nchunks);
                oks = run_cipher(subj_c[ci], &q, &ts);
                run_cipher(orac_c[ci], &q, &to);
                cmp_trace("chunked decrypt", &ts, &to);
                CHECK(oks, "decrypt failed");
                expect_bytes("chunked decrypt vs plaintext", ts.out,
                             ts.total, g_data, len);
            }
        }
        counters_end(&s);
    }
    tr_free(&ts);
    tr_free(&to);
    free(ref);
    free(chunks);
}

/* ------------------------------------------------------------------ */
/* 3. In-place                                                          */
/* ------------------------------------------------------------------ */

void test_cipher_inplace(void **state)
{
    trace ts, to;
    unsigned char *ref = malloc(OUTCAP);
    size_t *chunks = malloc(MAXCHUNKS * sizeof(size_t));
    size_t ci;

    (void)state;
    assert_true(ref && chunks);
    tr_init(&ts, OUTCAP);
    tr_init(&to, OUTCAP);
    for (ci = 0; ci < NCIPHERS; ci++) {
        const cipher_info *c = &ciphers[ci];
        unsigned char key[32], iv[16];
        size_t k;
        csnap s;
        tu_rng r;

        rng_for(&r, 3, ci);
        counters_begin(&s, c->name, 1);
        rand_key_iv(c, key, iv);
        for (k = 0; k < 4; k++) {
            /*
             * Block modes: whole-block chunks (EVP only allows out == in
             * when output does not lag input); k odd: padding on for
             * encrypt (Final's padding block goes after the data).
             * CTR: any chunking.
             */
            size_t len, i;
            int pad = c->block > 1 ? (int)(k & 1) : 1, enc, oks;
            cseq q = { 1, pad, key, iv, g_data, 0, chunks, 0, 1 };

            if (c->block > 1) {
                len = 16 * tu_rng_range(&r, 1, 8000);
                q.nchunks = tu_chunking(&r, len / 16, MAXCHUNK / 16, chunks,
                                        MAXCHUNKS);
                for (i = 0; i < q.nchunks; i++)
                    chunks[i] *= 16;
            } else {
                len = tu_rng_range(&r, 1, 130000);
                q.nchunks = tu_chunking(&r, len, MAXCHUNK, chunks, MAXCHUNKS);
            }
            for (enc = 1; enc >= 0; enc--) {
                q.enc = enc;
                q.pad = enc ? pad : (c->block > 1 ? 0 : 1);
                q.len = len;
                q.in = enc ? g_data : ref;
                if (enc)
                    oracle_crypt(ci, 1, 0, key, iv, g_data, len, ref);
                where("test=inplace alg=%s %s size=%zu padding=%d",
                      c->name, enc ? "encrypt" : "decrypt", len, q.pad);
                where_chunks(chunks, q.nchunks);
                oks = run_cipher(subj_c[ci], &q, &ts);
                run_cipher(orac_c[ci], &q, &to);
                cmp_trace("in-place", &ts, &to);
                CHECK(oks, "in-place operation failed");
                /* independent: not-in-place oracle result */
                if (enc)
                    expect_bytes("in-place encrypt vs oracle", ts.out,
                                 len, ref, len);
                else
                    expect_bytes("in-place decrypt vs plaintext", ts.out,
                                 ts.total, g_data, len);
            }
        }
        counters_end(&s);
    }
    tr_free(&ts);
    tr_free(&to);
    free(ref);
    free(chunks);
}

/* ------------------------------------------------------------------ */
/* 4. Re-init with a new IV or none, keeping the key                    */
/* ------------------------------------------------------------------ */

/*
 * variant 0: message 1 finalized, then re-init
 * variant 1: message 1 abandoned with a partial block pending
 * variant 2: re-init right after the first init, no data
 * variant 3: message 1 finalized, then re-init without an IV (iv2 NULL)
 * variant 4 (CTR): message 1 abandoned mid-block, re-init, then num 8 (refused)
 * variant 5 (CTR): the same with the key given again at the re-init
 * variant 6 (CTR): as variant 4, then a re-init without an IV and num 4 (refused)
 * Records message 1 and message 2 in one trace; *m2off gets the output
 * offset where message 2 starts.
 */
static void run_reinit(const EVP_CIPHER *c, int enc, int variant,
                       const unsigned char *key, const unsigned char *iv1,
                       const unsigned char *iv2, const unsigned char *m1,
                       size_t m1len, const unsigned char *m2, size_t m2len,
                       trace *t, size_t *m2off)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int rc;

    assert_non_null(ctx);
    tr_reset(t);
    tr_cinit(t, ctx, c, key, iv1, enc, NULL);
    if (variant == 0) {
        tr_update(t, ctx, m1, m1len, 0);
        tr_final(t, ctx);
    } else if (variant == 1 || variant >= 4) {
        tr_update(t, ctx, m1, m1len, 0);
    } else if (variant == 3) {
        tr_update(t, ctx, m1, m1len, 0);
        tr_final(t, ctx);
        iv2 = NULL;
    }
    *m2off = t->total;
    ERR_clear_error();
    rc = EVP_CipherInit_ex2(ctx, NULL, variant == 5 ? key : NULL, iv2, enc, NULL);
    tr_rec(t, 'I', rc, rc != 1, 0);
    if (variant >= 4) {
        rc = EVP_CIPHER_CTX_set_num(ctx, 8);
        tr_rec(t, 'N', rc, rc != 1, 0);
    }
    if (variant == 6) {
        rc = EVP_CipherInit_ex2(ctx, NULL, NULL, NULL, enc, NULL);
        tr_rec(t, 'I', rc, rc != 1, 0);
        rc = EVP_CIPHER_CTX_set_num(ctx, 4);
        tr_rec(t, 'N', rc, rc != 1, 0);
    }
    /* message 2 in two pieces */
    tr_update(t, ctx, m2, m2len / 3, 0);
    tr_update(t, ctx, m2 + m2len / 3, m2len - m2len / 3, 0);
    tr_final(t, ctx);
    EVP_CIPHER_CTX_free(ctx);
}

/*
 * Whether the default provider refuses a CTR num other than 0, as ccree does (OpenSSL 3.0.20
 * on); before, it took any, and read keystream it may never have computed.
 */
static int oracle_refuses_num(size_t ci)
{
    static const unsigned char key[32], iv[16];
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int refuses;

    assert_non_null(ctx);
    refuses = EVP_EncryptInit_ex2(ctx, orac_c[ci], key, iv, NULL) == 1
              && EVP_CIPHER_CTX_set_num(ctx, 1) != 1;
    EVP_CIPHER_CTX_free(ctx);
    ERR_clear_error();
    if (!refuses)
        print_message("# %s: this default provider takes num: re-init variants 4 to 6 skipped\n",
                      ciphers[ci].name);
    return refuses;
}

void test_cipher_reinit_iv(void **state)
{
    trace ts, to;
    unsigned char *ct1 = malloc(OUTCAP), *ct2 = malloc(OUTCAP);
    unsigned char *fresh = malloc(OUTCAP);
    size_t ci;

    (void)state;
    assert_true(ct1 && ct2 && fresh);
    tr_init(&ts, OUTCAP);
    tr_init(&to, OUTCAP);
    for (ci = 0; ci < NCIPHERS; ci++) {
        const cipher_info *c = &ciphers[ci];
        unsigned char key[32], iv1[16], iv2[16];
        int variant, enc, variants;
        csnap s;
        tu_rng r;

        rng_for(&r, 4, ci);
        counters_begin(&s, c->name, 1);
        rand_key_iv(c, key, iv1);
        assert_int_equal(RAND_bytes(iv2, 16), 1);
        variants = c->mode == EVP_CIPH_CTR_MODE && oracle_refuses_num(ci) ? 7 : 4;
        for (variant = 0; variant < variants; variant++) {
            /* without an IV, CBC restarts from the IV last given; CTR's counter goes on */
            const unsigned char *iv_m2 = variant < 3 ? iv2 : c->mode == EVP_CIPH_CBC_MODE ? iv1 : NULL;

            for (enc = 1; enc >= 0; enc--) {
                size_t p1len = tu_rng_range(&r, 1, 5000);
                size_t p2len = tu_rng_range(&r, 1, 70000);
                const unsigned char *p1 = g_data, *p2 = g_data + MAXSZ;
                const unsigned char *m1 = p1, *m2 = p2;
                size_t m1len = p1len, m2len = p2len, off_s, off_o, flen;

                if (variant == 1 && c->block > 1
                    && p1len % (size_t)c->block == 0)
                    p1len++, m1len++;       /* keep a partial block */
                if (variant >= 4 && p1len % 16 == 0)
                    p1len++, m1len++;
                if (!enc) {
                    m1len = oracle_crypt(ci, 1, 1, key, iv1, p1, p1len, ct1);
                    m2len = oracle_crypt(ci, 1, 1, key, iv_m2 != NULL ? iv_m2 : iv2, p2,
                                         p2len, ct2);
                    m1 = ct1;
                    m2 = ct2;
                    if (variant == 1)
                        m1len -= c->block > 1 ? 7 : 0;
                }
                where("test=reinit-iv alg=%s %s variant=%d m1=%zu m2=%zu",
                      c->name, enc ? "encrypt" : "decrypt", variant, m1len,
                      m2len);
                run_reinit(subj_c[ci], enc, variant, key, iv1, iv2, m1,
                           m1len, m2, m2len, &ts, &off_s);
                run_reinit(orac_c[ci], enc, variant, key, iv1, iv2, m1,
                           m1len, m2, m2len, &to, &off_o);
                cmp_trace("re-init sequence", &ts, &to);
                if ((iv_m2 == NULL && c->mode != EVP_CIPH_ECB_MODE) || variant >= 4)
                    continue;
                /* independent: a fresh context with the key and message 2's IV */
                flen = oracle_crypt(ci, enc, 1, key, iv_m2, m2, m2len, fresh);
                expect_bytes("message 2 after re-init vs fresh context",
                             ts.out + off_s, ts.total - off_s, fresh, flen);
                if (!enc)
                    expect_bytes("message 2 decrypt vs plaintext",
                                 ts.out + off_s, ts.total - off_s, p2,
                                 p2len);
                (void)off_o;
            }
        }
        counters_end(&s);
    }
    tr_free(&ts);
    tr_free(&to);
    free(ct1);
    free(ct2);
    free(fresh);
}

/* ------------------------------------------------------------------ */
/* 7. EVP_Cipher (the `openssl speed` path)                              */
/* ------------------------------------------------------------------ */

static void run_evp_cipher(const EVP_CIPHER *c, int enc,
                           const unsigned char *key, const unsigned char *iv,
                           const unsigned char *in, const size_t *lens,
                           size_t n, trace *t)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    size_t i, off = 0;

    assert_non_null(ctx);
    tr_reset(t);
    if (tr_cinit(t, ctx, c, key, iv, enc, NULL))
        for (i = 0; i < n; i++) {
            if (!tr_evp_cipher(t, ctx, in + off, lens[i]))
                break;
            off += lens[i];
        }
    EVP_CIPHER_CTX_free(ctx);
}

void test_cipher_evp_cipher(void **state)
{
    static const size_t blens[] = { 16, 4096, 32, 65536, 160, 16000, 1024 };
    static const size_t clens[] = { 16, 5, 4096, 27, 65536, 1, 1000, 64 };
    trace ts, to;
    unsigned char *ref = malloc(OUTCAP), *ct = malloc(OUTCAP);
    size_t ci;

    (void)state;
    assert_true(ref && ct);
    tr_init(&ts, OUTCAP);
    tr_init(&to, OUTCAP);
    for (ci = 0; ci < NCIPHERS; ci++) {
        const cipher_info *c = &ciphers[ci];
        const size_t *lens = c->block > 1 ? blens : clens;
        size_t n = c->block > 1 ? sizeof(blens) / sizeof(blens[0])
            : sizeof(clens) / sizeof(clens[0]);
        unsigned char key[32], iv[16];
        size_t i, total = 0, rl;
        csnap s;
        int enc;

        for (i = 0; i < n; i++)
            total += lens[i];
        counters_begin(&s, c->name, 0);
        rand_key_iv(c, key, iv);
        for (enc = 1; enc >= 0; enc--) {
            const unsigned char *in = g_data;

            if (!enc) {
                in = ct;
                oracle_crypt(ci, 1, 0, key, iv, g_data, total, ct);
            }
            where("test=EVP_Cipher alg=%s %s total=%zu", c->name,
                  enc ? "encrypt" : "decrypt", total);
            run_evp_cipher(subj_c[ci], enc, key, iv, in, lens, n, &ts);
            run_evp_cipher(orac_c[ci], enc, key, iv, in, lens, n, &to);
            cmp_trace("EVP_Cipher calls", &ts, &to);
            CHECK(ts.n == n + 1, "EVP_Cipher sequence stopped early");
            /* independent: update path, padding off */
            rl = oracle_crypt(ci, enc, 0, key, iv, in, total, ref);
            expect_bytes("EVP_Cipher vs EVP_CipherUpdate", ts.out, ts.total,
                         ref, rl);
            if (!enc)
                expect_bytes("EVP_Cipher decrypt vs plaintext", ts.out,
                             ts.total, g_data, total);
        }
        counters_end(&s);
    }
    tr_free(&ts);
    tr_free(&to);
    free(ref);
    free(ct);
}

/* ------------------------------------------------------------------ */
/* Interleaved independent contexts of one algorithm                    */
/* ------------------------------------------------------------------ */

void test_cipher_interleave(void **state)
{
#define NIL 4
    trace ts[NIL];
    unsigned char *ref = malloc(OUTCAP);
    size_t ci, j;

    (void)state;
    assert_non_null(ref);
    for (j = 0; j < NIL; j++)
        tr_init(&ts[j], 65536 + 4096);
    for (ci = 0; ci < NCIPHERS; ci++) {
        const cipher_info *c = &ciphers[ci];
        EVP_CIPHER_CTX *ctx[NIL];
        unsigned char key[NIL][32], iv[NIL][16];
        size_t off[NIL] = { 0 }, len = 40000, rl;
        int enc[NIL];
        csnap s;
        tu_rng r;

        rng_for(&r, 14, ci);
        counters_begin(&s, c->name, 1);
        where("test=interleave alg=%s", c->name);
        for (j = 0; j < NIL; j++) {
            assert_int_equal(RAND_bytes(key[j], 32), 1);
            assert_int_equal(RAND_bytes(iv[j], 16), 1);
            enc[j] = j != 3;             /* one decrypting context */
            ctx[j] = EVP_CIPHER_CTX_new();
            assert_non_null(ctx[j]);
            tr_reset(&ts[j]);
            CHECK(tr_cinit(&ts[j], ctx[j], subj_c[ci], key[j], iv[j], enc[j],
                           NULL), "init %zu", j);
            if (!enc[j] && c->block > 1)
                CHECK(tr_pad(&ts[j], ctx[j], 0), "padding %zu", j);
        }
        while (off[0] < len || off[1] < len || off[2] < len || off[3] < len) {
            j = tu_rng_range(&r, 0, NIL - 1);
            if (off[j] < len) {
                size_t n = tu_rng_range(&r, 0, 3000);

                if (n > len - off[j])
                    n = len - off[j];
                CHECK(tr_update(&ts[j], ctx[j], g_data + j * 50000 + off[j],
                                n, 0), "update ctx %zu", j);
                off[j] += n;
            }
        }
        for (j = 0; j < NIL; j++) {
            int pad = enc[j] || c->block == 1;

            CHECK(tr_final(&ts[j], ctx[j]), "final ctx %zu", j);
            EVP_CIPHER_CTX_free(ctx[j]);
            where_key(key[j], (size_t)c->keylen, iv[j], (size_t)c->ivlen);
            rl = oracle_crypt(ci, enc[j], pad, key[j], iv[j],
                              g_data + j * 50000, len, ref);
            expect_bytes("interleaved context vs one-shot", ts[j].out,
                         ts[j].total, ref, rl);
        }
        counters_end(&s);
    }
    for (j = 0; j < NIL; j++)
        tr_free(&ts[j]);
    free(ref);
#undef NIL
}
