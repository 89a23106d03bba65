/* test_evp: a cipher context's state: copies mid-stream and parameters. */
#include "evp.h"

/* ------------------------------------------------------------------ */
/* 5. EVP_CIPHER_CTX_copy mid-stream                                     */
/* ------------------------------------------------------------------ */

typedef struct {
    size_t p, x1, x2, y1, y2;   /* piece lengths; A = P X1 X2, B = P Y1 Y2 */
} copy_plan;

static void run_copy(const EVP_CIPHER *c, int enc, int pad,
                     const unsigned char *key, const unsigned char *iv,
                     const unsigned char *a, const unsigned char *b,
                     const copy_plan *pl, trace *ta, trace *tb)
{
    EVP_CIPHER_CTX *A = EVP_CIPHER_CTX_new(), *B = EVP_CIPHER_CTX_new();
    int rc;

    assert_true(A != NULL && B != NULL);
    tr_reset(ta);
    tr_reset(tb);
    tr_cinit(ta, A, c, key, iv, enc, NULL);
    tr_pad(ta, A, pad);
    tr_update(ta, A, a, pl->p / 2, 0);
    tr_update(ta, A, a + pl->p / 2, pl->p - pl->p / 2, 0);
    ERR_clear_error();
    rc = EVP_CIPHER_CTX_copy(B, A);
    tr_rec(tb, 'X', rc, rc != 1, 0);
    /* B's output starts with A's output so far (same prefix) */
    memcpy(tb->out, ta->out, ta->total);
    tb->total = ta->total;
    tr_update(ta, A, a + pl->p, pl->x1, 0);
    tr_update(tb, B, b + pl->p, pl->y1, 0);
    tr_update(ta, A, a + pl->p + pl->x1, pl->x2, 0);
    tr_final(ta, A);
    EVP_CIPHER_CTX_free(A);             /* original first */
    tr_update(tb, B, b + pl->p + pl->y1, pl->y2, 0);
    tr_final(tb, B);
    EVP_CIPHER_CTX_free(B);
}

void test_cipher_copy(void **state)
{
    trace sa, sb, oa, ob;
    unsigned char *bufa = malloc(OUTCAP), *bufb = malloc(OUTCAP);
    unsigned char *ref = malloc(OUTCAP);
    size_t ci;

    (void)state;
    assert_true(bufa && bufb && ref);
    tr_init(&sa, OUTCAP);
    tr_init(&sb, OUTCAP);
    tr_init(&oa, OUTCAP);
    tr_init(&ob, OUTCAP);
    for (ci = 0; ci < NCIPHERS; ci++) {
        const cipher_info *c = &ciphers[ci];
        unsigned char key[32], iv[16];
        csnap s;
        tu_rng r;
        int k;

        rng_for(&r, 5, ci);
        counters_begin(&s, c->name, 1);
        rand_key_iv(c, key, iv);
        for (k = 0; k < 4; k++) {
            /* k 0,1: encrypt, padding on; k 2,3: decrypt, padding off */
            int enc = k < 2, pad = enc, oks;
            copy_plan pl;
            size_t la, lb, rl;

            pl.p = tu_rng_range(&r, 1, 40000);
            if (k == 0 && c->block > 1 && pl.p % (size_t)c->block == 0)
                pl.p++;                     /* partial block pending */
            pl.x1 = tu_rng_range(&r, 0, 20000);
            pl.x2 = tu_rng_range(&r, 0, 20000);
            pl.y1 = tu_rng_range(&r, 0, 20000);
            pl.y2 = tu_rng_range(&r, 0, 20000);
            if (!enc && c->block > 1) {     /* whole blocks in total */
                size_t b = (size_t)c->block;

                pl.x2 += b - (pl.p + pl.x1 + pl.x2) % b;
                pl.y2 += b - (pl.p + pl.y1 + pl.y2) % b;
            }
            la = pl.p + pl.x1 + pl.x2;
            lb = pl.p + pl.y1 + pl.y2;
            /* same prefix, different continuations */
            memcpy(bufa, g_data, la);
            memcpy(bufb, g_data, pl.p);
            memcpy(bufb + pl.p, g_data + MAXSZ, lb - pl.p);
            where("test=copy alg=%s %s p=%zu x=%zu+%zu y=%zu+%zu", c->name,
                  enc ? "encrypt" : "decrypt", pl.p, pl.x1, pl.x2, pl.y1,
                  pl.y2);
            run_copy(subj_c[ci], enc, pad, key, iv, bufa, bufb, &pl, &sa,
                     &sb);
            run_copy(orac_c[ci], enc, pad, key, iv, bufa, bufb, &pl, &oa,
                     &ob);
            cmp_trace("original context", &sa, &oa);
            cmp_trace("copied context", &sb, &ob);
            oks = !sa.failed[last_call(&sa)] && !sb.failed[last_call(&sb)];
            CHECK(oks, "copy sequence failed");
            /* independent: one-shot oracle over each whole stream */
            rl = oracle_crypt(ci, enc, pad, key, iv, bufa, la, ref);
            expect_bytes("original vs one-shot", sa.out, sa.total, ref, rl);
            rl = oracle_crypt(ci, enc, pad, key, iv, bufb, lb, ref);
            expect_bytes("copy vs one-shot", sb.out, sb.total, ref, rl);
        }
        counters_end(&s);
    }
    tr_free(&sa);
    tr_free(&sb);
    tr_free(&oa);
    tr_free(&ob);
    free(bufa);
    free(bufb);
    free(ref);
}

/* ------------------------------------------------------------------ */
/* 6. Parameters                                                        */
/* ------------------------------------------------------------------ */

typedef struct {
    int rc, modified;
    size_t ret;
    unsigned char buf[64];
} pval;

typedef struct {
    const char *key;
    char type;                  /* s size_t, u uint, o octet string */
} pdesc;

static const pdesc ctx_params[] = {
    { OSSL_CIPHER_PARAM_KEYLEN, 's' },
    { OSSL_CIPHER_PARAM_IVLEN, 's' },
    { OSSL_CIPHER_PARAM_PADDING, 'u' },
    { OSSL_CIPHER_PARAM_NUM, 'u' },
    { OSSL_CIPHER_PARAM_IV, 'o' },
    { OSSL_CIPHER_PARAM_UPDATED_IV, 'o' },
};
#define NCTXPARAMS (sizeof(ctx_params) / sizeof(ctx_params[0]))

static void get_ctx_param(EVP_CIPHER_CTX *ctx, const pdesc *d, pval *v)
{
    OSSL_PARAM p[2];

    memset(v, 0, sizeof(*v));
    if (d->type == 's')
        p[0] = OSSL_PARAM_construct_size_t(d->key, (size_t *)(void *)v->buf);
    else if (d->type == 'u')
        p[0] = OSSL_PARAM_construct_uint(d->key,
                                         (unsigned int *)(void *)v->buf);
    else
        p[0] = OSSL_PARAM_construct_octet_string(d->key, v->buf,
                                                 sizeof(v->buf));
    p[1] = OSSL_PARAM_construct_end();
    ERR_clear_error();
    v->rc = EVP_CIPHER_CTX_get_params(ctx, p);
    v->modified = OSSL_PARAM_modified(&p[0]);
    v->ret = p[0].return_size;
    ERR_clear_error();
}

/* all the getters, compared between two contexts at the same point */
static void cmp_ctx_state(const char *point, EVP_CIPHER_CTX *cs,
                          EVP_CIPHER_CTX *co)
{
    unsigned char ivs[EVP_MAX_IV_LENGTH], ivo[EVP_MAX_IV_LENGTH];
    size_t i;
    int rs, ro;

    for (i = 0; i < NCTXPARAMS; i++) {
        pval vs, vo;

        get_ctx_param(cs, &ctx_params[i], &vs);
        get_ctx_param(co, &ctx_params[i], &vo);
        if (vs.rc != vo.rc || vs.modified != vo.modified)
            FAILF("%s: get_params(%s): %s rc=%d set=%d, %s rc=%d set=%d",
                  point, ctx_params[i].key, g_subject, vs.rc, vs.modified,
                  g_oracle, vo.rc, vo.modified);
        if (!vo.modified)
            continue;
        if (ctx_params[i].type == 'o') {
            if (vs.ret != vo.ret)
                FAILF("%s: %s length %zu on %s vs %zu on %s", point,
                      ctx_params[i].key, vs.ret, g_subject, vo.ret,
                      g_oracle);
            if (vo.ret <= sizeof(vo.buf)
                && memcmp(vs.buf, vo.buf, vo.ret) != 0) {
                fprintf(stderr, "  ");
                tu_hex(stderr, g_subject, vs.buf, vs.ret);
                fprintf(stderr, "  ");
                tu_hex(stderr, g_oracle, vo.buf, vo.ret);
                FAILF("%s: %s differs", point, ctx_params[i].key);
            }
        } else {
            unsigned long long s, o;

            if (ctx_params[i].type == 's') {
                s = *(size_t *)(void *)vs.buf;
                o = *(size_t *)(void *)vo.buf;
            } else {
                s = *(unsigned int *)(void *)vs.buf;
                o = *(unsigned int *)(void *)vo.buf;
            }
            if (s != o)
                FAILF("%s: %s is %llu on %s vs %llu on %s", point,
                      ctx_params[i].key, s, g_subject, o, g_oracle);
        }
    }
    CHECK(EVP_CIPHER_CTX_get_key_length(cs)
          == EVP_CIPHER_CTX_get_key_length(co), "%s", point);
    CHECK(EVP_CIPHER_CTX_get_iv_length(cs)
          == EVP_CIPHER_CTX_get_iv_length(co), "%s", point);
    CHECK(EVP_CIPHER_CTX_get_block_size(cs)
          == EVP_CIPHER_CTX_get_block_size(co), "%s", point);
    CHECK(EVP_CIPHER_CTX_get_num(cs) == EVP_CIPHER_CTX_get_num(co),
          "%s: num %d vs %d", point, EVP_CIPHER_CTX_get_num(cs),
          EVP_CIPHER_CTX_get_num(co));
    CHECK(EVP_CIPHER_CTX_is_encrypting(cs) == EVP_CIPHER_CTX_is_encrypting(co),
          "%s", point);
    memset(ivs, 0, sizeof(ivs));
    memset(ivo, 0, sizeof(ivo));
    rs = EVP_CIPHER_CTX_get_updated_iv(cs, ivs, sizeof(ivs));
    ro = EVP_CIPHER_CTX_get_updated_iv(co, ivo, sizeof(ivo));
    CHECK(rs == ro && memcmp(ivs, ivo, sizeof(ivs)) == 0,
          "%s: EVP_CIPHER_CTX_get_updated_iv differs", point);
    rs = EVP_CIPHER_CTX_get_original_iv(cs, ivs, sizeof(ivs));
    ro = EVP_CIPHER_CTX_get_original_iv(co, ivo, sizeof(ivo));
    CHECK(rs == ro && memcmp(ivs, ivo, sizeof(ivs)) == 0,
          "%s: EVP_CIPHER_CTX_get_original_iv differs", point);
    ERR_clear_error();
}

static int param_listed(const OSSL_PARAM *list, const char *key)
{
    return list != NULL && OSSL_PARAM_locate_const(list, key) != NULL;
}

void test_cipher_params(void **state)
{
    static const char *const cparams[] = {
        OSSL_CIPHER_PARAM_MODE, OSSL_CIPHER_PARAM_KEYLEN,
        OSSL_CIPHER_PARAM_IVLEN, OSSL_CIPHER_PARAM_BLOCK_SIZE,
        OSSL_CIPHER_PARAM_AEAD, OSSL_CIPHER_PARAM_CUSTOM_IV,
        OSSL_CIPHER_PARAM_CTS, OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK,
        OSSL_CIPHER_PARAM_HAS_RAND_KEY,
    };
    trace ts, to;
    size_t ci, i;

    (void)state;
    tr_init(&ts, 4096);
    tr_init(&to, 4096);
    for (ci = 0; ci < NCIPHERS; ci++) {
        const cipher_info *c = &ciphers[ci];
        const EVP_CIPHER *S = subj_c[ci], *O = orac_c[ci];
        unsigned char key[32], iv[16];
        csnap s;
        int enc;

        where("test=params alg=%s", c->name);
        where_key(NULL, 0, NULL, 0);
        /* static properties: vs oracle and vs the expected values */
        CHECK(EVP_CIPHER_get_block_size(S) == EVP_CIPHER_get_block_size(O)
              && EVP_CIPHER_get_block_size(S) == c->block, "block size %d",
              EVP_CIPHER_get_block_size(S));
        CHECK(EVP_CIPHER_get_iv_length(S) == EVP_CIPHER_get_iv_length(O)
              && EVP_CIPHER_get_iv_length(S) == c->ivlen, "iv length %d",
              EVP_CIPHER_get_iv_length(S));
        CHECK(EVP_CIPHER_get_key_length(S) == EVP_CIPHER_get_key_length(O)
              && EVP_CIPHER_get_key_length(S) == c->keylen, "key length %d",
              EVP_CIPHER_get_key_length(S));
        CHECK(EVP_CIPHER_get_mode(S) == EVP_CIPHER_get_mode(O)
              && EVP_CIPHER_get_mode(S) == c->mode, "mode %d",
              EVP_CIPHER_get_mode(S));
        CHECK(EVP_CIPHER_get_flags(S) == EVP_CIPHER_get_flags(O),
              "flags 0x%lx vs 0x%lx", EVP_CIPHER_get_flags(S),
              EVP_CIPHER_get_flags(O));
        for (i = 0; i < sizeof(cparams) / sizeof(cparams[0]); i++) {
            OSSL_PARAM p[2];
            size_t vs = 12345, vo = 12345;
            int rs, ro, ms, mo, is_int = i >= 4;
            int is = -7, io = -7;
            unsigned int us = 777, uo = 777;

            if (i == 0)
                p[0] = OSSL_PARAM_construct_uint(cparams[i], &us);
            else if (is_int)
                p[0] = OSSL_PARAM_construct_int(cparams[i], &is);
            else
                p[0] = OSSL_PARAM_construct_size_t(cparams[i], &vs);
            p[1] = OSSL_PARAM_construct_end();
            rs = EVP_CIPHER_get_params(subj_c[ci], p);
            ms = OSSL_PARAM_modified(&p[0]);
            if (i == 0)
                p[0] = OSSL_PARAM_construct_uint(cparams[i], &uo);
            else if (is_int)
                p[0] = OSSL_PARAM_construct_int(cparams[i], &io);
            else
                p[0] = OSSL_PARAM_construct_size_t(cparams[i], &vo);
            ro = EVP_CIPHER_get_params(orac_c[ci], p);
            mo = OSSL_PARAM_modified(&p[0]);
            ERR_clear_error();
            if (is_int) {       /* flag params: not reported means 0 */
                if (!ms)
                    is = 0;
                if (!mo)
                    io = 0;
                ms = mo;
            }
            CHECK(rs == ro && ms == mo && vs == vo && is == io && us == uo,
                  "EVP_CIPHER_get_params(%s): %s rc=%d set=%d val=%zu/%d/%u,"
                  " %s rc=%d set=%d val=%zu/%d/%u", cparams[i], g_subject,
                  rs, ms, vs, is, us, g_oracle, ro, mo, vo, io, uo);
        }
        /* gettable ctx params: the ones we read must be listed alike */
        for (i = 0; i < NCTXPARAMS; i++)
            CHECK(param_listed(EVP_CIPHER_gettable_ctx_params(S),
                               ctx_params[i].key)
                  == param_listed(EVP_CIPHER_gettable_ctx_params(O),
                                  ctx_params[i].key),
                  "gettable ctx param %s listed differently",
                  ctx_params[i].key);
        CHECK(param_listed(EVP_CIPHER_settable_ctx_params(S),
                           OSSL_CIPHER_PARAM_PADDING)
              == param_listed(EVP_CIPHER_settable_ctx_params(O),
                              OSSL_CIPHER_PARAM_PADDING),
              "settable padding listed differently");

        /* ctx params along the same sequence on both providers */
        counters_begin(&s, c->name, 1);
        rand_key_iv(c, key, iv);
        for (enc = 1; enc >= 0; enc--) {
            EVP_CIPHER_CTX *cs = EVP_CIPHER_CTX_new();
            EVP_CIPHER_CTX *co = EVP_CIPHER_CTX_new();
            static const size_t steps[] = { 37, 20, 1, 0, 16, 300, 7 };
            size_t k, off = 0;
            char point[64];

            assert_true(cs && co);
            tr_reset(&ts);
            tr_reset(&to);
            tr_cinit(&ts, cs, S, key, iv, enc, NULL);
            tr_cinit(&to, co, O, key, iv, enc, NULL);
            cmp_ctx_state(enc ? "encrypt after init" : "decrypt after init",
                          cs, co);
            if (enc) {
                tr_pad(&ts, cs, 0);
                tr_pad(&to, co, 0);
                cmp_ctx_state("after set_padding(0)", cs, co);
                tr_pad(&ts, cs, 1);
                tr_pad(&to, co, 1);
            }
            for (k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
                tr_update(&ts, cs, g_data + off, steps[k], 0);
                tr_update(&to, co, g_data + off, steps[k], 0);
                off += steps[k];
                snprintf(point, sizeof(point), "%s after %zu bytes",
                         enc ? "encrypt" : "decrypt", off);
                cmp_trace(point, &ts, &to);
                cmp_ctx_state(point, cs, co);
                if (k == 0 && c->mode == EVP_CIPH_CTR_MODE)
                    CHECK(EVP_CIPHER_CTX_get_num(co) == 5
                          && EVP_CIPHER_CTX_get_num(cs) == 5,
                          "CTR num after 37 bytes: %d (oracle %d)",
                          EVP_CIPHER_CTX_get_num(cs),
                          EVP_CIPHER_CTX_get_num(co));
            }
            if (enc) {
                tr_final(&ts, cs);
                tr_final(&to, co);
                cmp_trace("final", &ts, &to);
                cmp_ctx_state("encrypt after final", cs, co);
            }
            EVP_CIPHER_CTX_free(cs);
            EVP_CIPHER_CTX_free(co);
        }
        counters_end(&s);
    }
    tr_free(&ts);
    tr_free(&to);
}
