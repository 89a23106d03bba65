/*
 * AES-XTS and AES-CBC-CTS against the default provider, in lockstep: random call sequences
 * (XTS data units of 0 to 70000 bytes, several per init, each its own data unit under the IV
 * set at init; CTS messages of 0 to 70000 bytes in CS1, CS2 and CS3, in one update or more;
 * re-init with a new IV or key, copies, in place or not, EVP_Cipher for XTS, updates after
 * final), every return, length, output and IV compared, and every failure of ccree carrying
 * ccree's error (tu_failure_ok). Independent of the default provider's lockstep answer: known
 * answers (IEEE 1619, RFC 3962), each XTS update equal to a fresh context's one-shot, each CTS
 * encryption equal to its definition over CBC, each CTS decryption giving the plaintext. Then
 * duplicated XTS key halves, short updates, the cts_mode parameter, and the counter rule
 * (tu_counter_rule) for each algorithm.
 *
 * Environment: OPENSSL_CONF (ccree and default active), CCREE_TEST_SUBJECT (another provider
 * as the subject, e.g. "default" to check the test itself: no counters), CCREE_REQUIRE_OFFLOAD,
 * CCREE_TEST_SEED.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "lockstep.h"

#define MAXLEN 70000 /* past one kernel request */

struct mode {
    const char *name; /* also its line in ccree-algorithms */
    size_t keylen;
    int xts;
};

static const struct mode modes[] = {
    { "AES-128-XTS", 32, 1 },     { "AES-256-XTS", 64, 1 },     { "AES-128-CBC-CTS", 16, 0 },
    { "AES-192-CBC-CTS", 24, 0 }, { "AES-256-CBC-CTS", 32, 0 },
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

static const char *const cts_modes[] = { "CS1", "CS2", "CS3" };
static const char *const cts_modes_odd_case[] = { "cs1", "Cs2", "cS3" };
static const size_t lens[] = { 0,    1,    15,   16,    17,    31,    32,    33,    47,   48,
                               49,   100,  255,  512,   4095,  4096,  4097,  16383, 16399,
                               65535, 65536, 65537, MAXLEN };
#define NLENS (sizeof(lens) / sizeof(lens[0]))

static const char *subject = "ccree";
static int counters; /* the subject is ccree */
static OSSL_PROVIDER *prov;
static uint64_t seed = 1;
static unsigned char msg[MAXLEN];
static EVP_CIPHER *evp[NMODES][2]; /* [mode][subject, oracle] */
static unsigned long compared, independent; /* calls compared; outputs checked alone */

/* --- the lockstep pair ------------------------------------------------------------------------ */

struct pair {
    tu_pair t;
    const struct mode *m;
    EVP_CIPHER_CTX *ctx[2];
    unsigned char *out[2]; /* the last output of each */
    int outl;
};

static void pair_open(struct pair *p, size_t mi)
{
    int i;

    memset(p, 0, sizeof(*p));
    p->t = (tu_pair){ .subject = subject, .seed = seed, .compared = &compared };
    p->m = &modes[mi];
    for (i = 0; i < 2; i++) {
        p->ctx[i] = EVP_CIPHER_CTX_new();
        p->out[i] = malloc(MAXLEN + 64);
        assert_non_null(p->ctx[i]);
        assert_non_null(p->out[i]);
    }
    tu_note(&p->t.log, "%s:", p->m->name);
}

static void pair_close(struct pair *p)
{
    int i;

    for (i = 0; i < 2; i++) {
        EVP_CIPHER_CTX_free(p->ctx[i]);
        free(p->out[i]);
    }
    ERR_clear_error();
}

/* init; with_cipher: the cipher too (a new algorithm context), else only what is given */
static int both_init(struct pair *p, int with_cipher, const unsigned char *key, const unsigned char *iv,
                     int enc, const OSSL_PARAM *params)
{
    size_t mi = (size_t)(p->m - modes);
    tu_errs e[2];
    int r[2], i;

    tu_note(&p->t.log, " init(%s%s%s%s)", with_cipher ? "cipher " : "", key ? "key " : "",
            iv ? "iv " : "", enc ? "enc" : "dec");
    TU_BOTH(i, e, r[i] = EVP_CipherInit_ex2(p->ctx[i], with_cipher ? evp[mi][i] : NULL, key, iv, enc, params));
    return tu_same(&p->t, r[0], r[1], e, "init");
}

static int both_set(struct pair *p, const OSSL_PARAM *params, const char *what)
{
    tu_errs e[2];
    int r[2], i;

    tu_note(&p->t.log, " set(%s)", what);
    TU_BOTH(i, e, r[i] = EVP_CIPHER_CTX_set_params(p->ctx[i], params));
    return tu_same(&p->t, r[0], r[1], e, "set_params");
}

static int both_set_mode(struct pair *p, const char *mode)
{
    OSSL_PARAM q[] = { OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, (char *)mode, 0), OSSL_PARAM_END };

    return both_set(p, q, mode);
}

/* An update (EVP_Cipher when evp_cipher), in place or not; output in p->out, p->outl. */
static int both_update(struct pair *p, const unsigned char *in, size_t len, int inplace, int evp_cipher)
{
    tu_errs e[2];
    int r[2], n[2], i;

    tu_note(&p->t.log, " %s%zu%s", evp_cipher ? "cipher" : "u", len, inplace ? "i" : "");
    TU_BOTH(i, e, const unsigned char *src = in; n[i] = -1;
         if (inplace) { memcpy(p->out[i], in, len); src = p->out[i]; }
         if (evp_cipher) { r[i] = n[i] = EVP_Cipher(p->ctx[i], p->out[i], src, (unsigned int)len); }
         else r[i] = EVP_CipherUpdate(p->ctx[i], p->out[i], &n[i], src, (int)len));
    if (evp_cipher) { /* the length, or -1 */
        if (r[0] != r[1])
            tu_differ(&p->t, "EVP_Cipher's return");
        r[0] = r[0] > 0 || (r[0] == 0 && len == 0);
        r[1] = r[1] > 0 || (r[1] == 0 && len == 0);
    }
    if (tu_same(&p->t, r[0], r[1], e, "update")
        && (n[0] != n[1] || memcmp(p->out[0], p->out[1], (size_t)n[0]) != 0))
        tu_differ(&p->t, "the output");
    p->outl = r[0] ? n[0] : -1;
    return r[0];
}

static int both_final(struct pair *p)
{
    tu_errs e[2];
    int r[2], n[2], i;

    tu_note(&p->t.log, " final");
    TU_BOTH(i, e, n[i] = -1; r[i] = EVP_CipherFinal_ex(p->ctx[i], p->out[i], &n[i]));
    if (tu_same(&p->t, r[0], r[1], e, "final") && n[0] != n[1])
        tu_differ(&p->t, "final's length");
    return r[0];
}

/* The subject and the oracle continue with copies of themselves. */
static void both_copy(struct pair *p)
{
    tu_note(&p->t.log, " copy");
    if (!tu_copy_both(p->ctx))
        tu_differ(&p->t, "EVP_CIPHER_CTX_copy");
}

/* The context's parameters: iv, updated-iv, num, key and IV lengths, padding, cts_mode. */
static void both_get(struct pair *p)
{
    static const struct { const char *key; int type; } gets[] = {
        { OSSL_CIPHER_PARAM_IV, OSSL_PARAM_OCTET_STRING },
        { OSSL_CIPHER_PARAM_UPDATED_IV, OSSL_PARAM_OCTET_STRING },
        { OSSL_CIPHER_PARAM_NUM, OSSL_PARAM_UNSIGNED_INTEGER },
        { OSSL_CIPHER_PARAM_KEYLEN, OSSL_PARAM_UNSIGNED_INTEGER },
        { OSSL_CIPHER_PARAM_IVLEN, OSSL_PARAM_UNSIGNED_INTEGER },
        { OSSL_CIPHER_PARAM_PADDING, OSSL_PARAM_UNSIGNED_INTEGER },
        { OSSL_CIPHER_PARAM_CTS_MODE, OSSL_PARAM_UTF8_STRING },
    };
    size_t k;

    tu_note(&p->t.log, " get");
    for (k = 0; k < sizeof(gets) / sizeof(gets[0]); k++) {
        unsigned char v[2][32];
        size_t ret[2];
        OSSL_PARAM q[2];
        tu_errs e[2];
        int r[2], mod[2], i;

        TU_BOTH(i, e, memset(v[i], 0, sizeof(v[i]));
             q[0] = gets[k].type == OSSL_PARAM_OCTET_STRING ? OSSL_PARAM_construct_octet_string(gets[k].key, v[i], 16)
                    : gets[k].type == OSSL_PARAM_UTF8_STRING ? OSSL_PARAM_construct_utf8_string(gets[k].key, (char *)v[i], 8)
                    : OSSL_PARAM_construct_size_t(gets[k].key, (size_t *)(void *)v[i]);
             q[1] = OSSL_PARAM_construct_end(); r[i] = EVP_CIPHER_CTX_get_params(p->ctx[i], q);
             mod[i] = OSSL_PARAM_modified(q); ret[i] = q[0].return_size);
        if (tu_same(&p->t, r[0], r[1], e, gets[k].key)
            && (mod[0] != mod[1]
                || (mod[0] && (ret[0] != ret[1] || memcmp(v[0], v[1], sizeof(v[0])) != 0))))
            tu_differ(&p->t, gets[k].key);
    }
}

/* --- independent answers ---------------------------------------------------------------------- */

/* A fresh default-provider context's one-shot of cipher (by name), padding off; its length. */
static int oneshot(const char *name, const unsigned char *key, const unsigned char *iv, int enc,
                   const char *cts_mode, const unsigned char *in, size_t len, unsigned char *out)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, name, "provider=default");
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    OSSL_PARAM q[] = { OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, (char *)cts_mode, 0),
                       OSSL_PARAM_END };
    int n = 0, m = 0;

    assert_non_null(c);
    assert_non_null(ctx);
    assert_int_equal(EVP_CipherInit_ex2(ctx, c, key, iv, enc, cts_mode ? q : NULL), 1);
    assert_int_equal(EVP_CIPHER_CTX_set_padding(ctx, 0), 1);
    assert_int_equal(EVP_CipherUpdate(ctx, out, &n, in, (int)len), 1);
    assert_int_equal(EVP_CipherFinal_ex(ctx, out + n, &m), 1);
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    return n + m;
}

/* The CBC cipher under a CTS name: AES-128-CBC-CTS -> AES-128-CBC. */
static void cbc_name(const struct mode *m, char *name)
{
    memcpy(name, m->name, 11);
    name[11] = '\0';
}

/*
 * CTS encryption from its definition (SP 800-38A addendum) over CBC of the input zero-padded
 * to whole blocks, C1..Cn, with d bytes in the last block: CS1 is C1..Cn-2, the first d bytes
 * of Cn-1, Cn; CS3 swaps those last two; CS2 is CS1 when d = 16, else CS3. Returns Cn.
 */
static const unsigned char *cts_model(const struct mode *m, const unsigned char *key, const unsigned char *iv,
                                      int cs, const unsigned char *in, size_t len, unsigned char *out)
{
    static unsigned char pad[MAXLEN + 16], cbc[MAXLEN + 16];
    size_t nb = (len + 15) / 16, d = len - 16 * (nb - 1), head = 16 * (nb - 2);
    char name[16];

    cbc_name(m, name);
    memset(pad, 0, sizeof(pad));
    memcpy(pad, in, len);
    assert_int_equal(oneshot(name, key, iv, 1, NULL, pad, 16 * nb, cbc), 16 * nb);
    if (nb == 1) {
        memcpy(out, cbc, 16);
        return cbc;
    }
    memcpy(out, cbc, head);
    if (cs == 1 || (cs == 2 && d == 16)) {
        memcpy(out + head, cbc + head, d);
        memcpy(out + head + d, cbc + head + 16, 16);
    } else {
        memcpy(out + head, cbc + head + 16, 16);
        memcpy(out + head + 16, cbc + head, d);
    }
    return cbc + head + 16;
}

static void expect(struct pair *p, const char *what, const unsigned char *got, int gotlen,
                   const unsigned char *want, size_t wantlen)
{
    independent++;
    if (gotlen < 0 || (size_t)gotlen != wantlen || memcmp(got, want, wantlen) != 0)
        tu_differ(&p->t, what);
}

/* --- random sequences ------------------------------------------------------------------------ */

static size_t pick_len(tu_rng *r)
{
    size_t n = lens[tu_rng_range(r, 0, NLENS - 1)];

    return n > 1000 && n < MAXLEN ? n + tu_rng_range(r, 0, 15) : n;
}

/* Random key (XTS: halves equal now and then). */
static void new_key(const struct mode *m, tu_rng *r, unsigned char *key)
{
    tu_rng_fill(r, key, m->keylen);
    if (m->xts && tu_rng_range(r, 0, 7) == 0)
        memcpy(key + m->keylen / 2, key, m->keylen / 2);
}

/*
 * XTS: one key and direction, several data units per IV, new IVs and keys. Each update that
 * succeeds must equal a fresh context's one-shot of that data unit under the current IV.
 */
static void xts_sequence(size_t mi, tu_rng *r)
{
    static unsigned char ref[MAXLEN + 16];
    const struct mode *m = &modes[mi];
    unsigned char key[64], iv[16];
    int enc = (int)tu_rng_range(r, 0, 1), op, nops = (int)tu_rng_range(r, 1, 8), keyed, had_key;
    struct pair p;

    new_key(m, r, key);
    tu_rng_fill(r, iv, 16);
    pair_open(&p, mi);
    had_key = keyed = both_init(&p, 1, key, iv, enc, NULL);
    for (op = 0; op < nops; op++) {
        size_t len = pick_len(r), off = tu_rng_range(r, 0, 15);
        int what = (int)tu_rng_range(r, 0, 11), inplace = (int)tu_rng_range(r, 0, 1);

        if (what < 7 || what == 11) { /* a data unit, through EVP_Cipher now and then */
            if (both_update(&p, msg + off, len > MAXLEN - off ? MAXLEN - off : len, inplace, what == 11)
                && keyed)
                expect(&p, "a data unit against a fresh context", p.out[0], p.outl, ref,
                       oneshot(m->name, key, iv, enc, NULL, msg + off, (size_t)p.outl, ref));
        } else if (what == 7) {
            tu_rng_fill(r, iv, 16);
            both_init(&p, 0, NULL, iv, enc, NULL);
        } else if (what == 8) {
            new_key(m, r, key);
            had_key |= keyed = both_init(&p, 0, key, NULL, enc, NULL);
        } else if (what == 9 && had_key) { /* the default provider's copy of no key crashes */
            both_copy(&p);
        } else if (what == 10) {
            both_final(&p);
        }
        both_get(&p);
    }
    pair_close(&p);
}

/*
 * CTS: messages with a new IV or none (init then restores the last IV given), in a mode set
 * with the key, after it or not at all; in one update or more (what follows the first update
 * is as the default provider decides), then final and maybe an update after it. Where the IV
 * is known, encryptions must equal cts_model, decryptions (of cts_model's ciphertext) must
 * give the plaintext, and a one-update encryption leaves Cn as the updated IV.
 */
static void cts_sequence(size_t mi, tu_rng *r)
{
    static unsigned char ct[MAXLEN + 16];
    const struct mode *m = &modes[mi];
    unsigned char key[32], iv[16] = { 0 }, updated[16];
    int enc = (int)tu_rng_range(r, 0, 1), msgs = (int)tu_rng_range(r, 1, 3), k, cs = 1;
    int iv_given = 0; /* until then the IV is zeros, then whatever the last message left */
    OSSL_PARAM q[] = { OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, NULL, 0), OSSL_PARAM_END };
    struct pair p;

    tu_rng_fill(r, key, sizeof(key));
    pair_open(&p, mi);
    if (tu_rng_range(r, 0, 1)) {
        cs = (int)tu_rng_range(r, 1, 3);
        q[0].data = (char *)(tu_rng_range(r, 0, 3) ? cts_modes : cts_modes_odd_case)[cs - 1];
        q[0].data_size = 3;
    }
    if (!both_init(&p, 1, key, NULL, enc, q[0].data != NULL ? q : NULL))
        goto done;
    for (k = 0; k < msgs; k++) {
        size_t len = pick_len(r), piece = len, done_len;
        const unsigned char *in = msg, *cn = NULL;
        int inplace = (int)tu_rng_range(r, 0, 1), new_iv = tu_rng_range(r, 0, 3) != 0;

        if (new_iv) /* else init restores the last IV given */
            tu_rng_fill(r, iv, 16);
        iv_given |= new_iv;
        if (!both_init(&p, 0, NULL, new_iv ? iv : NULL, enc, NULL))
            break;
        if (tu_rng_range(r, 0, 3) == 0) {
            cs = (int)tu_rng_range(r, 1, 3);
            both_set_mode(&p, cts_modes[cs - 1]);
        }
        if (len >= 16 && (iv_given || k == 0))
            cn = cts_model(m, key, iv, cs, msg, len, ct);
        if (!enc && cn != NULL)
            in = ct;
        if (tu_rng_range(r, 0, 3) == 0) /* more than one update */
            piece = tu_rng_range(r, 0, len);
        for (done_len = 0; done_len < len || done_len == 0; done_len += piece, piece = len - done_len) {
            if (both_update(&p, in + done_len, piece, inplace, 0) && piece == len && cn != NULL)
                expect(&p, enc ? "CTS against its definition" : "CTS decryption against the plaintext",
                       p.out[0], p.outl, enc ? ct : msg, len);
            if (piece == len)
                break;
        }
        both_get(&p);
        if (enc && piece == len && p.outl > 0 && cn != NULL
            && EVP_CIPHER_CTX_get_updated_iv(p.ctx[0], updated, 16) == 1 && memcmp(updated, cn, 16) != 0)
            tu_differ(&p.t, "the updated IV after CTS encryption (Cn)");
        both_final(&p);
        if (tu_rng_range(r, 0, 5) == 0)
            both_update(&p, in, 32, 0, 0);
        if (tu_rng_range(r, 0, 5) == 0)
            both_copy(&p);
    }
done:
    pair_close(&p);
}

static void differential(void **state)
{
    size_t mi;
    int i, n = tu_require_offload() ? 100 : 400;

    (void)state;
    for (mi = 0; mi < NMODES; mi++) {
        tu_rng r;

        tu_rng_seed(&r, tu_seed_mix(seed, mi, 2));
        for (i = 0; i < n; i++)
            (modes[mi].xts ? xts_sequence : cts_sequence)(mi, &r);
    }
    printf("%d random sequences per algorithm, %lu calls compared, %lu outputs checked alone\n", n,
           compared, independent);
}

/* --- known answers -------------------------------------------------------------------------- */

static void kat(const char *name, const char *cts_mode, const char *key, const char *iv, const char *pt,
                const char *ct)
{
    unsigned char k[64], v[16] = { 0 }, p[64], c[64], out[64];
    size_t mi, n = strlen(pt) / 2;
    int enc;

    for (mi = 0; strcmp(modes[mi].name, name) != 0; mi++)
        ;
    assert_true(tu_unhex(key, k, modes[mi].keylen) && tu_unhex(pt, p, n) && tu_unhex(ct, c, n));
    assert_true(iv == NULL || tu_unhex(iv, v, 16));
    for (enc = 1; enc >= 0; enc--) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        OSSL_PARAM q[] = { OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, (char *)cts_mode, 0),
                           OSSL_PARAM_END };
        int l = 0;

        assert_int_equal(EVP_CipherInit_ex2(ctx, evp[mi][0], k, v, enc, cts_mode ? q : NULL), 1);
        assert_int_equal(EVP_CipherUpdate(ctx, out, &l, enc ? p : c, (int)n), 1);
        assert_int_equal(l, n);
        assert_memory_equal(out, enc ? c : p, n);
        EVP_CIPHER_CTX_free(ctx);
    }
}

static void known_answers(void **state)
{
    (void)state;
    /* IEEE 1619-2007 vector 2 */
    kat("AES-128-XTS", NULL, "11111111111111111111111111111111" "22222222222222222222222222222222",
        "33333333330000000000000000000000",
        "4444444444444444444444444444444444444444444444444444444444444444",
        "c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0");
    /* RFC 3962 appendix B: CS3, zero IV */
    kat("AES-128-CBC-CTS", "CS3", "636869636b656e207465726979616b69", NULL,
        "4920776f756c64206c696b652074686520", "c6353568f2bf8cb4d8a580362da7ff7f97");
    kat("AES-128-CBC-CTS", "CS3", "636869636b656e207465726979616b69", NULL,
        "4920776f756c64206c696b65207468652047656e6572616c20476175277320",
        "fc00783e0efdb2c1d445d4c8eff7ed2297687268d6ecccc0c07b25e25ecfe5");
    kat("AES-128-CBC-CTS", "CS3", "636869636b656e207465726979616b69", NULL,
        "4920776f756c64206c696b65207468652047656e6572616c2047617527732043",
        "39312523a78662d5be7fcbcc98ebf5a897687268d6ecccc0c07b25e25ecfe584");
}

/* --- edges ------------------------------------------------------------------------------------ */

/*
 * XTS keys with equal halves (and halves one bit apart), to encrypt and to decrypt, given at
 * the first init or at a re-init; a key without an IV, then the IV.
 */
static void xts_keys(void **state)
{
    unsigned char key[64], iv[16] = { 7 };
    size_t mi;
    int enc, at_reinit, apart;

    (void)state;
    for (mi = 0; mi < NMODES; mi++) {
        size_t half = modes[mi].keylen / 2;

        if (!modes[mi].xts)
            continue;
        for (enc = 0; enc < 2; enc++)
            for (at_reinit = 0; at_reinit < 2; at_reinit++)
                for (apart = 0; apart < 2; apart++) {
                    struct pair p;

                    memcpy(key, msg, half);
                    memcpy(key + half, msg, half);
                    key[2 * half - 1] ^= (unsigned char)apart;
                    pair_open(&p, mi);
                    if (at_reinit)
                        both_init(&p, 1, msg + 100, iv, enc, NULL);
                    both_init(&p, !at_reinit, key, iv, enc, NULL);
                    both_update(&p, msg, 100, 0, 0);
                    both_get(&p);
                    pair_close(&p);
                }
        for (enc = 0; enc < 2; enc++) {
            struct pair p;

            pair_open(&p, mi);
            both_init(&p, 1, msg + 100, NULL, enc, NULL);
            both_update(&p, msg, 32, 0, 0);
            both_init(&p, 0, NULL, iv, enc, NULL);
            both_update(&p, msg, 32, 0, 0);
            pair_close(&p);
        }
    }
}

/* Updates (and EVP_Cipher for XTS) of 0 to 16 bytes, each then a whole block. */
static void short_updates(void **state)
{
    unsigned char iv[16] = { 1 };
    size_t mi, len;
    int enc, cs;

    (void)state;
    for (mi = 0; mi < NMODES; mi++)
        for (enc = 0; enc < 2; enc++)
            for (cs = 0; cs < (modes[mi].xts ? 2 : 3); cs++)
                for (len = 0; len <= 16; len++) {
                    struct pair p;

                    pair_open(&p, mi);
                    both_init(&p, 1, msg + 200, iv, enc, NULL);
                    if (!modes[mi].xts)
                        both_set_mode(&p, cts_modes[cs]);
                    both_update(&p, msg, len, 0, modes[mi].xts && cs == 1);
                    both_update(&p, msg, 16, 0, 0);
                    both_final(&p);
                    pair_close(&p);
                }
}

/*
 * cts_mode: read after init without a key, every value set and read back (case, bad values, the
 * wrong type, a short buffer), kept across re-init without the cipher, reset with it, and set
 * before the key.
 */
static void cts_param(void **state)
{
    static const char *const values[] = { "CS1", "CS2", "CS3", "cs1", "cS3", "CS4", "CS0", "", "CS1 ",
                                          "CS", "CS33", "cts1" };
    unsigned char iv[16] = { 2 };
    size_t mi, v;

    (void)state;
    for (mi = 0; mi < NMODES; mi++) {
        OSSL_PARAM q[2];
        struct pair p;
        tu_errs e[2];
        char small[2][3];
        int n = 2, r[2], i;

        if (modes[mi].xts)
            continue;
        pair_open(&p, mi);
        both_init(&p, 1, NULL, NULL, 1, NULL);
        both_get(&p);
        for (v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
            both_set_mode(&p, values[v]);
            both_get(&p);
        }
        q[0] = OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_CTS_MODE, &n);
        q[1] = OSSL_PARAM_construct_end();
        both_set(&p, q, "cts_mode as an int");
        tu_note(&p.t.log, " get(cts_mode, 3 bytes)");
        TU_BOTH(i, e, q[0] = OSSL_PARAM_construct_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, small[i], sizeof(small[i]));
             r[i] = EVP_CIPHER_CTX_get_params(p.ctx[i], q));
        tu_same(&p.t, r[0], r[1], e, "get with a short buffer");
        both_set_mode(&p, "CS3");
        both_init(&p, 0, msg, iv, 1, NULL);
        both_get(&p);
        both_update(&p, msg, 40, 0, 0);
        both_set_mode(&p, "CS2"); /* after the data */
        both_get(&p);
        both_init(&p, 0, NULL, iv, 1, NULL);
        both_update(&p, msg, 40, 0, 0);
        both_init(&p, 1, msg, iv, 1, NULL);
        both_get(&p);
        both_update(&p, msg, 40, 0, 0);
        pair_close(&p);
    }
}

/*
 * Data before any key: the default provider crashes on it (CTS; XTS in a copy of a context
 * without a key), so ccree alone runs it, and must fail with its error.
 */
static void no_key(void **state)
{
    unsigned char iv[16] = { 4 }, out[64];
    tu_errs e, none = { 0 };
    size_t mi;
    int n;

    (void)state;
    if (!counters) {
        printf("subject %s: data before a key not tried, the default provider crashes on it\n", subject);
        skip();
    }
    for (mi = 0; mi < NMODES; mi++) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new(), *copy = EVP_CIPHER_CTX_new();

        assert_int_equal(EVP_EncryptInit_ex2(ctx, evp[mi][0], NULL, iv, NULL), 1);
        assert_int_equal(EVP_CIPHER_CTX_copy(copy, ctx), 1);
        ERR_clear_error();
        assert_int_equal(EVP_EncryptUpdate(modes[mi].xts ? copy : ctx, out, &n, msg, 32), 0);
        tu_take_errors(&e);
        if (!tu_failure_ok(subject, &e, &none)) {
            fprintf(stderr, "%s: data before a key failed without ccree's error\n", modes[mi].name);
            fail();
        }
        EVP_CIPHER_CTX_free(ctx);
        EVP_CIPHER_CTX_free(copy);
    }
}

/* --- counters -------------------------------------------------------------------------------- */

/* Work of one kernel request or less per call: XTS data units, a CTS message each way. */

/*
 * The shortest messages (16 and 17 bytes; CTS also 31 and 32) into a poisoned buffer, each a
 * kernel request that shows its work: the default provider's answer, and the counters.
 */
static void minimum(void **state)
{
    static const size_t mins[] = { 16, 17, 31, 32 };
    unsigned char key[64], iv[16] = { 9 }, want[32], got[32];
    size_t mi, i;
    int enc, n, m;

    (void)state;
    memcpy(key, msg + 1000, sizeof(key));
    for (mi = 0; mi < NMODES; mi++) {
        EVP_CIPHER *c = EVP_CIPHER_fetch(NULL, modes[mi].name, "provider=ccree");
        tu_alg_info before = tu_alg(prov, modes[mi].name), after;

        assert_non_null(c);
        for (enc = 0; enc < 2; enc++)
            for (i = 0; i < (modes[mi].xts ? 2 : 4); i++) {
                EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

                oneshot(modes[mi].name, key, iv, enc, modes[mi].xts ? NULL : "CS1", msg, mins[i],
                        want);
                memset(got, 0xa5, sizeof(got));
                assert_int_equal(EVP_CipherInit_ex2(ctx, c, key, iv, enc, NULL), 1);
                assert_int_equal(EVP_CIPHER_CTX_set_padding(ctx, 0), 1);
                assert_int_equal(EVP_CipherUpdate(ctx, got, &n, msg, (int)mins[i]), 1);
                assert_int_equal(EVP_CipherFinal_ex(ctx, got + n, &m), 1);
                assert_int_equal(n + m, (int)mins[i]);
                if (memcmp(got, want, mins[i]) != 0)
                    fail_msg("%s, %zu bytes, %s: not the default provider's answer",
                             modes[mi].name, mins[i], enc ? "encrypting" : "decrypting");
                EVP_CIPHER_CTX_free(ctx);
            }
        after = tu_alg(prov, modes[mi].name);
        if (counters)
            assert_true(tu_counter_rule(&before, &after, 1));
        EVP_CIPHER_free(c);
    }
}

static void offload(void **state)
{
    unsigned char key[64], iv[16] = { 3 };
    size_t mi;

    (void)state;
    if (!counters) {
        printf("subject %s: counters not checked\n", subject);
        skip();
    }
    for (mi = 0; mi < NMODES; mi++) {
        tu_alg_info before = tu_alg(prov, modes[mi].name), after;
        int enc, k;

        memcpy(key, msg + 500, sizeof(key));
        for (enc = 1; enc >= 0; enc--) {
            struct pair p;

            pair_open(&p, mi);
            assert_true(both_init(&p, 1, key, iv, enc, NULL));
            for (k = 0; k < (modes[mi].xts ? 4 : 1); k++)
                assert_true(both_update(&p, msg + k, 16384 + 7 * k + 3, 0, 0));
            assert_true(both_final(&p));
            pair_close(&p);
        }
        after = tu_alg(prov, modes[mi].name);
        printf("%s: %llu kernel ops, %llu software ops\n", modes[mi].name,
               (unsigned long long)(after.offload_ops - before.offload_ops),
               (unsigned long long)(after.fallback_ops - before.fallback_ops));
        assert_true(tu_counter_rule(&before, &after, 0));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(known_answers), cmocka_unit_test(differential), cmocka_unit_test(xts_keys),
        cmocka_unit_test(short_updates), cmocka_unit_test(cts_param),    cmocka_unit_test(no_key),
        cmocka_unit_test(minimum),       cmocka_unit_test(offload),
    };
    char props[2][64] = { "", "provider=default" };
    size_t mi;
    tu_rng r;
    int i, rc;

    if (!tu_subject(&subject, &prov, props[0], &seed))
        return 1;
    counters = prov != NULL;
    for (mi = 0; mi < NMODES; mi++)
        for (i = 0; i < 2; i++)
            if ((evp[mi][i] = EVP_CIPHER_fetch(NULL, modes[mi].name, props[i])) == NULL) {
                fprintf(stderr, "cannot fetch %s with %s\n", modes[mi].name, props[i]);
                ERR_print_errors_fp(stderr);
                return 1;
            }
    tu_rng_seed(&r, seed);
    tu_rng_fill(&r, msg, sizeof(msg));
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    for (mi = 0; mi < NMODES; mi++)
        for (i = 0; i < 2; i++)
            EVP_CIPHER_free(evp[mi][i]);
    if (prov != NULL)
        OSSL_PROVIDER_unload(prov);
    return rc;
}
