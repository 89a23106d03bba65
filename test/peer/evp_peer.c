/*
 * evp_peer.c - OpenSSL's own evp_test data (the Cipher, Digest and MAC stanzas of
 * evpciph_*.txt, evpmd_*.txt, evpmac_*.txt) run through EVP with "provider=ccree" only.
 *
 * The stanza keys, the Result error names and the order of calls follow OpenSSL 3.0's
 * test/evp_test.c. Each test runs in several variants (in place or not, aligned or not, whole
 * or in fragments, through a context copy), in both directions where the stanza allows. A test
 * is skipped only when ccree does not offer its algorithm (its fetch with provider=ccree fails;
 * the names are printed for test/peer/peer.sh to check against src/algs.c) or when evp_test
 * itself would skip it (Availablein naming no available provider).
 *
 * Usage: evp_peer [--mutate] [--algs ALGS_C] (--fetch FETCH_SH | FILE...)
 *   --mutate  every test with one expected value changed (a bit of Ciphertext, Tag or Output
 *             flipped, or an expected error changed to success) must fail in every variant.
 *   --algs    fail if a name skipped as not offered is a name or alias in src/algs.c's table.
 *   --fetch   run the files of the directory `sh FETCH_SH --dir` names (fetch.sh's cache).
 * Env: CCREE_REQUIRE_OFFLOAD=1: each file's offloadable algorithms must show kernel ops.
 * Exit: 0 when nothing failed.
 */
#include <ctype.h>
#include <dirent.h>
#include <stddef.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "../testutil.h"

#define PROPS "provider=ccree"
#define AAD_MAX 8
#define CTRL_MAX 16
#define INPUT_MAX 16
#define BIG (64u << 20) /* no expanded input or value may exceed this */

enum kind { CIPHER = 1, DIGEST = 2, MAC = 4, ANY = 7 };

typedef struct {
    unsigned char *p;
    size_t n;
    int set;
} bytes;

typedef struct {
    bytes b;
    size_t count;
    int count_set;
} piece;

/* One stanza. */
typedef struct {
    int line, kind;
    char *alg;                             /* the value of Cipher, Digest or MAC */
    char *result, *reason, *cts_mode, *sub; /* sub: a MAC's Algorithm */
    char *avail;                           /* Availablein */
    bytes key, iv, next_iv, pt, ct, tag, mac_key, custom, salt, output;
    bytes aad[AAD_MAX];
    int naad, tls_aad;
    piece in[INPUT_MAX];
    int nin;
    char *ctrl[CTRL_MAX];
    int nctrl;
    int op, tag_late, tls_version, rounds, key_bits, pad_type, xof, no_reinit;
    int output_size, block_size;
    char bad[160]; /* why the stanza is malformed */
} test;

/* ------------------------------------------------------------------ */
/* stanza keys                                                          */
/* ------------------------------------------------------------------ */

enum how { BIN, TEXT, NUM, FLAG, AAD, TLSAAD, INPUT, COUNT, NCOPY, OP, BOOL, CTRL, IGNORE };

static const struct key {
    const char *name;
    int kinds;
    enum how how;
    size_t off;
} keys[] = {
#define F(field) offsetof(test, field)
    { "Key", CIPHER | MAC, BIN, F(key) },
    { "IV", CIPHER | MAC, BIN, F(iv) },
    { "NextIV", CIPHER, BIN, F(next_iv) },
    { "Plaintext", CIPHER, BIN, F(pt) },
    { "Ciphertext", CIPHER, BIN, F(ct) },
    { "AAD", CIPHER, AAD, 0 },
    { "TLSAAD", CIPHER, TLSAAD, 0 },
    { "Tag", CIPHER, BIN, F(tag) },
    { "MACKey", CIPHER, BIN, F(mac_key) },
    { "SetTagLate", CIPHER, BOOL, F(tag_late) },
    { "TLSVersion", CIPHER, NUM, F(tls_version) },
    { "Operation", CIPHER, OP, F(op) },
    { "CTSMode", CIPHER, TEXT, F(cts_mode) },
    { "Rounds", CIPHER, NUM, F(rounds) },
    { "KeyBits", CIPHER, NUM, F(key_bits) },
    { "Input", DIGEST | MAC, INPUT, 0 },
    { "Count", DIGEST, COUNT, 0 },
    { "Ncopy", DIGEST, NCOPY, 0 },
    { "Padding", DIGEST, NUM, F(pad_type) },
    { "Output", DIGEST | MAC, BIN, F(output) },
    { "Custom", MAC, BIN, F(custom) },
    { "Salt", MAC, BIN, F(salt) },
    { "Algorithm", MAC, TEXT, F(sub) },
    { "XOF", MAC, FLAG, F(xof) },
    { "NoReinit", MAC, FLAG, F(no_reinit) },
    { "Ctrl", MAC, CTRL, 0 },
    { "OutputSize", MAC, NUM, F(output_size) },
    { "BlockSize", MAC, NUM, F(block_size) },
    { "Result", ANY, TEXT, F(result) },
    { "Reason", ANY, TEXT, F(reason) },
    { "Function", ANY, IGNORE, 0 },
#undef F
};

static void bad(test *t, const char *fmt, const char *arg)
{
    if (t->bad[0] == '\0')
        snprintf(t->bad, sizeof(t->bad), fmt, arg);
}

/* evp_test's values: "" (empty), NULL (absent), "text" with \n escapes, or hex. */
static int parse_bytes(const char *v, bytes *b)
{
    size_t n = strlen(v), i;
    long len;

    free(b->p);
    memset(b, 0, sizeof(*b));
    if (strcmp(v, "NULL") == 0)
        return 1;
    b->set = 1;
    if (v[0] != '"') {
        b->p = *v == '\0' ? calloc(1, 1) : OPENSSL_hexstr2buf(v, &len);
        b->n = *v == '\0' ? 0 : (size_t)len;
        ERR_clear_error();
        return b->p != NULL;
    }
    if (n < 2 || v[n - 1] != '"' || (b->p = malloc(n)) == NULL)
        return 0;
    for (i = 1; i < n - 1; i++) {
        unsigned char ch = (unsigned char)v[i];

        if (ch == '\\') { /* only \n */
            if (i + 1 >= n - 1 || v[i + 1] != 'n')
                return 0;
            ch = '\n', i++;
        }
        b->p[b->n++] = ch;
    }
    return 1;
}

static int parse_num(const char *v, int *out)
{
    char *end;
    long x = strtol(v, &end, 0);

    if (*v == '\0' || *end != '\0' || x < 0 || x > 0x7fffffff)
        return 0;
    *out = (int)x;
    return 1;
}

/* Count = n: the last Input repeated n times; Ncopy = n: it is replaced by n copies of it. */
static int repeat_input(test *t, enum how how, const char *v)
{
    piece *p = t->nin > 0 ? &t->in[t->nin - 1] : NULL;
    int n;
    unsigned char *q;

    if (p == NULL || !parse_num(v, &n) || n == 0 || (size_t)n > BIG / (p->b.n + 1))
        return 0;
    if (how == COUNT) {
        if (p->count_set)
            return 0;
        p->count = (size_t)n;
        return p->count_set = 1;
    }
    if ((q = malloc(p->b.n * (size_t)n + 1)) == NULL)
        return 0;
    for (int i = 0; i < n; i++)
        memcpy(q + p->b.n * (size_t)i, p->b.p, p->b.n);
    free(p->b.p);
    p->b.p = q;
    p->b.n *= (size_t)n;
    return 1;
}

static int set_value(test *t, const struct key *k, const char *v)
{
    void *f = (char *)t + k->off;

    switch (k->how) {
    case BIN:
        return parse_bytes(v, f);
    case TEXT:
        free(*(char **)f);
        return (*(char **)f = strdup(v)) != NULL;
    case NUM:
        return parse_num(v, f);
    case FLAG:
        return *(int *)f = 1;
    case BOOL:
        *(int *)f = strcmp(v, "TRUE") == 0;
        return *(int *)f || strcmp(v, "FALSE") == 0;
    case OP:
        *(int *)f = strcmp(v, "ENCRYPT") == 0;
        return *(int *)f || strcmp(v, "DECRYPT") == 0;
    case TLSAAD:
        t->tls_aad = 1;
        /* fall through */
    case AAD:
        return t->naad < AAD_MAX && parse_bytes(v, &t->aad[t->naad++]);
    case INPUT:
        if (t->nin == INPUT_MAX)
            return 0;
        t->in[t->nin].count = 1;
        return parse_bytes(v, &t->in[t->nin++].b);
    case COUNT:
    case NCOPY:
        return repeat_input(t, k->how, v);
    case CTRL:
        return t->nctrl < CTRL_MAX && (t->ctrl[t->nctrl++] = strdup(v)) != NULL;
    case IGNORE:
        return 1;
    }
    return 0;
}

static void free_test(test *t)
{
    bytes *b[] = { &t->key, &t->iv, &t->next_iv, &t->pt, &t->ct, &t->tag, &t->mac_key,
                   &t->custom, &t->salt, &t->output };
    size_t i;

    for (i = 0; i < sizeof(b) / sizeof(b[0]); i++)
        free(b[i]->p);
    for (i = 0; i < AAD_MAX; i++)
        free(t->aad[i].p);
    for (i = 0; i < INPUT_MAX; i++)
        free(t->in[i].b.p);
    for (i = 0; i < CTRL_MAX; i++)
        free(t->ctrl[i]);
    free(t->alg), free(t->result), free(t->reason), free(t->cts_mode), free(t->sub);
    free(t->avail);
}

static void new_test(test *t)
{
    memset(t, 0, sizeof(*t));
    t->op = -1;
    t->output_size = t->block_size = -1;
}

/* One "key = value" line of a stanza. */
static void add_pair(test *t, const char *key, const char *v, int line)
{
    static const char *const types[] = { "Cipher", "Digest", "MAC" };
    size_t i;

    if (t->line == 0)
        t->line = line;
    if (t->kind == 0) {
        for (i = 0; i < 3; i++)
            if (strcmp(key, types[i]) == 0) {
                t->kind = 1 << i;
                t->alg = strdup(v);
                return;
            }
        if (strcmp(key, "Availablein") == 0 && t->avail == NULL)
            t->avail = strdup(v);
        else if (strcmp(key, "FIPSversion") != 0) /* only matters where a FIPS provider is */
            bad(t, "not a Cipher, Digest or MAC stanza (%s)", key);
        return;
    }
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if ((keys[i].kinds & t->kind) && strcmp(key, keys[i].name) == 0) {
            if (!set_value(t, &keys[i], v))
                bad(t, "bad value for %s", key);
            return;
        }
    bad(t, "unknown keyword %s", key);
}

static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* Reads the next stanza; 0 at the end of the file. *line counts the lines read. */
static int read_stanza(FILE *f, test *t, int *line)
{
    char *buf = NULL, *eq;
    size_t cap = 0;

    new_test(t);
    while (getline(&buf, &cap, f) != -1) {
        ++*line;
        if (*trim(buf) == '\0') {
            if (t->line != 0)
                break;
            continue;
        }
        if (buf[0] == '#')
            continue;
        if ((eq = strchr(buf, '=')) == NULL) {
            if (t->line == 0)
                t->line = *line;
            bad(t, "no '=' in a line%s", "");
            continue;
        }
        *eq = '\0';
        if (strcmp(trim(buf), "Title") != 0)
            add_pair(t, trim(buf), trim(eq + 1), *line);
    }
    free(buf);
    if (t->line != 0 && t->kind == 0)
        bad(t, "no Cipher, Digest or MAC line%s", "");
    return t->line != 0;
}

/* ------------------------------------------------------------------ */
/* variants                                                             */
/* ------------------------------------------------------------------ */

enum split { WHOLE, EVP3, BYTES, RANDOM };
enum copy { NO_COPY, COPY_INIT, COPY_MID };

typedef struct {
    const char *name;
    int in_place, out_mis, in_mis;
    enum split split;
    enum copy copy;
    int oneshot; /* EVP_Q_digest / EVP_Q_mac */
} variant;

/* evp_test runs in place or not, aligned or not, whole or as 1, n-2, 1 bytes, through a copy
 * after the key is set; here also 1-byte and random fragments and copies after an update. */
static const variant cipher_variants[] = {
    { "aligned, out of place, whole, copied at init", 0, 0, 0, WHOLE, COPY_INIT, 0 },
    { "misaligned, in place, whole, copied after the update", 1, 1, 0, WHOLE, COPY_MID, 0 },
    { "misaligned input, out of place, whole", 0, 0, 1, WHOLE, NO_COPY, 0 },
    { "misaligned output, fragments 1,n-2,1, copied at init", 0, 1, 0, EVP3, COPY_INIT, 0 },
    { "in place, 1-byte fragments, copied after the first", 1, 0, 0, BYTES, COPY_MID, 0 },
    { "misaligned, random fragments, copied after the first", 0, 1, 1, RANDOM, COPY_MID, 0 },
};

/* Digests and MACs: the copy goes on alongside the original, and both must be right. */
static const variant hash_variants[] = {
    { "whole", 0, 0, 0, WHOLE, NO_COPY, 0 },
    { "misaligned, 1-byte fragments, copied after the first", 0, 0, 1, BYTES, COPY_MID, 0 },
    { "random fragments, copied at init", 0, 0, 0, RANDOM, COPY_INIT, 0 },
    { "one shot", 0, 0, 0, WHOLE, NO_COPY, 1 },
};

#define NV(v) (sizeof(v) / sizeof(v[0]))

/* Chunk lengths for n bytes; *count gets their number. 1-byte pieces stop at 4 KiB (the rest
 * goes in one piece): the million-byte digests would take a million calls. */
static size_t *split(size_t n, enum split how, tu_rng *r, size_t *count)
{
    size_t i, max = how == BYTES ? (n < 4096 ? n : 4096) + 1 : 64;
    size_t *c = malloc((max + 3) * sizeof(*c));

    *count = 0;
    if (c == NULL)
        return NULL;
    if (how == WHOLE) {
        c[(*count)++] = n;
    } else if (how == EVP3) {
        if (n > 0)
            c[(*count)++] = 1;
        if (n > 2)
            c[(*count)++] = n - 2;
        if (n > 1)
            c[(*count)++] = 1;
    } else if (how == BYTES) {
        for (i = 0; i < n && i < 4096; i++)
            c[(*count)++] = 1;
        if (n > 4096)
            c[(*count)++] = n - 4096;
    } else {
        *count = tu_chunking(r, n, n > 0 ? n : 1, c, max);
    }
    return c;
}

/* Where a test's buffers go: input at in (aligned to 16 plus in_mis, or the output buffer
 * itself when in place), output at out (16-aligned plus out_mis). */
typedef struct {
    unsigned char *mem, *in, *out;
} place;

static int make_place(place *pl, const variant *v, const unsigned char *in, size_t n, size_t room)
{
    size_t total = 16 + room + 16 + 16 + n;
    uintptr_t a;

    if ((pl->mem = malloc(total + 16)) == NULL)
        return 0;
    a = ((uintptr_t)pl->mem + 15) & ~(uintptr_t)15;
    pl->out = (unsigned char *)a + v->out_mis;
    pl->in = v->in_place ? pl->out
                         : (unsigned char *)((a + 16 + room + 15) & ~(uintptr_t)15) + v->in_mis;
    if (n > 0)
        memcpy(pl->in, in, n);
    return 1;
}

/* ------------------------------------------------------------------ */
/* ciphers                                                              */
/* ------------------------------------------------------------------ */

typedef struct {
    const test *t;
    const EVP_CIPHER *c;
    const variant *v;
    EVP_CIPHER_CTX *ctx;
    int aead, enc, copied;
    tu_rng rng;
} crun;

static int mode_of(const EVP_CIPHER *c)
{
    return EVP_CIPHER_get_mode(c);
}

/* evp_test's AEAD kind: the mode, or -1 for a stream AEAD (ChaCha20-Poly1305). */
static int aead_of(const EVP_CIPHER *c)
{
    if (!(EVP_CIPHER_get_flags(c) & EVP_CIPH_FLAG_AEAD_CIPHER))
        return 0;
    return mode_of(c) != 0 ? mode_of(c) : -1;
}

/* evp_test's rule: CCM, stitched, stream AEAD, CTS, SIV, XTS and wrap take data whole. */
static int fragmentable(const EVP_CIPHER *c)
{
    int m = mode_of(c), a = aead_of(c);

    return !(a == EVP_CIPH_CCM_MODE || a == EVP_CIPH_CBC_MODE
             || (a == -1 && m == EVP_CIPH_STREAM_CIPHER)
             || (EVP_CIPHER_get_flags(c) & EVP_CIPH_FLAG_CTS) || m == EVP_CIPH_SIV_MODE
             || m == EVP_CIPH_XTS_MODE || m == EVP_CIPH_WRAP_MODE);
}

static int copy_ctx(crun *r)
{
    EVP_CIPHER_CTX *d = EVP_CIPHER_CTX_new();

    if (d == NULL || !EVP_CIPHER_CTX_copy(d, r->ctx)) {
        EVP_CIPHER_CTX_free(d);
        return 0;
    }
    EVP_CIPHER_CTX_free(r->ctx);
    r->ctx = d;
    r->copied = 1;
    return 1;
}

/* One EVP_CipherUpdate per chunk of n bytes of in (out NULL: AAD); *done: the output. */
static int cipher_update(crun *r, unsigned char *out, const unsigned char *in, size_t n, int *done)
{
    size_t count, i, off = 0;
    size_t *c = split(n, r->v->split, &r->rng, &count);
    int ok = c != NULL, len;

    for (i = 0; ok && i < count; off += c[i++]) {
        ok = EVP_CipherUpdate(r->ctx, out != NULL ? out + *done : NULL, &len, in + off, (int)c[i]);
        *done += out != NULL ? len : 0;
        if (ok && r->v->copy == COPY_MID && !r->copied)
            ok = copy_ctx(r) ? 1 : -1;
    }
    free(c);
    return ok;
}

static int ctrl(EVP_CIPHER_CTX *ctx, int type, size_t arg, void *p)
{
    return EVP_CIPHER_CTX_ctrl(ctx, type, (int)arg, p) > 0;
}

static int set_str_param(EVP_CIPHER_CTX *ctx, const char *name, const char *s)
{
    OSSL_PARAM p[] = { OSSL_PARAM_utf8_string(name, (char *)s, 0), OSSL_PARAM_END };

    return EVP_CIPHER_CTX_set_params(ctx, p);
}

static int set_int_param(EVP_CIPHER_CTX *ctx, const char *name, int v)
{
    OSSL_PARAM p[] = { OSSL_PARAM_int(name, &v), OSSL_PARAM_END };

    return EVP_CIPHER_CTX_set_params(ctx, p);
}

/* The IV the context reports, where the cipher has no custom IV, must be want. */
static int iv_is(crun *r, const bytes *want)
{
    unsigned char iv[128];

    if (!EVP_CIPHER_CTX_get_updated_iv(r->ctx, iv, sizeof(iv)))
        return 0;
    return (EVP_CIPHER_get_flags(r->c) & EVP_CIPH_CUSTOM_IV) != 0 || want->n > sizeof(iv)
           || memcmp(iv, want->p, want->n) == 0;
}

/* Everything before the data: evp_test's order, its error names. */
static const char *cipher_setup(crun *r, size_t out_len)
{
    const test *t = r->t;
    int a = r->aead, len;

    if (!EVP_CipherInit_ex(r->ctx, r->c, NULL, NULL, NULL, r->enc))
        return "CIPHERINIT_ERROR";
    if (t->cts_mode != NULL && !set_str_param(r->ctx, OSSL_CIPHER_PARAM_CTS_MODE, t->cts_mode))
        return "INVALID_CTS_MODE";
    if (t->iv.set && (a ? !ctrl(r->ctx, EVP_CTRL_AEAD_SET_IVLEN, t->iv.n, NULL)
                        : t->iv.n != (size_t)EVP_CIPHER_CTX_get_iv_length(r->ctx)))
        return "INVALID_IV_LENGTH";
    if (a && !t->tls_aad) {
        int late = r->enc || a == EVP_CIPH_OCB_MODE || t->tag_late;

        if ((!late || a != EVP_CIPH_GCM_MODE)
            && !ctrl(r->ctx, EVP_CTRL_AEAD_SET_TAG, t->tag.n, late ? NULL : t->tag.p))
            return late ? "TAG_LENGTH_SET_ERROR" : "TAG_SET_ERROR";
    }
    if (t->rounds > 0 && !ctrl(r->ctx, EVP_CTRL_SET_RC5_ROUNDS, (size_t)t->rounds, NULL))
        return "INVALID_ROUNDS";
    if (!EVP_CIPHER_CTX_set_key_length(r->ctx, (int)t->key.n))
        return "INVALID_KEY_LENGTH";
    if (t->key_bits > 0 && !ctrl(r->ctx, EVP_CTRL_SET_RC2_KEY_BITS, (size_t)t->key_bits, NULL))
        return "INVALID KEY BITS";
    if (!EVP_CipherInit_ex(r->ctx, NULL, NULL, t->key.p, t->iv.p, -1))
        return "KEY_SET_ERROR";
    if (t->iv.set && !iv_is(r, &t->iv))
        return "INVALID_IV";
    if (r->v->copy == COPY_INIT && !copy_ctx(r))
        return "COPY_ERROR";
    if (t->mac_key.set && !ctrl(r->ctx, EVP_CTRL_AEAD_SET_MAC_KEY, t->mac_key.n, t->mac_key.p))
        return "SET_MAC_KEY_ERROR";
    if (t->tls_version
        && !set_int_param(r->ctx, OSSL_CIPHER_PARAM_TLS_VERSION, t->tls_version))
        return "SET_TLS_VERSION_ERROR";
    if (a == EVP_CIPH_CCM_MODE && !EVP_CipherUpdate(r->ctx, NULL, &len, NULL, (int)out_len))
        return "CCM_PLAINTEXT_LENGTH_SET_ERROR";
    return NULL;
}

static const char *cipher_aad(crun *r)
{
    const test *t = r->t;
    int i, done = 0, ok = 1;
    OSSL_PARAM p[2];

    if (t->tls_aad) {
        unsigned char copy[64]; /* the implementation may write to it */

        if (t->aad[0].n > sizeof(copy))
            return "TLS1_AAD_ERROR";
        memcpy(copy, t->aad[0].p, t->aad[0].n);
        p[0] = OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, copy,
                                                 t->aad[0].n);
        p[1] = OSSL_PARAM_construct_end();
        return EVP_CIPHER_CTX_set_params(r->ctx, p) ? NULL : "TLS1_AAD_ERROR";
    }
    for (i = 0; ok > 0 && i < t->naad; i++)
        ok = cipher_update(r, NULL, t->aad[i].p, t->aad[i].n, &done);
    if (ok <= 0)
        return ok < 0 ? "COPY_ERROR" : "AAD_SET_ERROR";
    if (!r->enc && (r->aead == EVP_CIPH_OCB_MODE || t->tag_late)
        && !ctrl(r->ctx, EVP_CTRL_AEAD_SET_TAG, t->tag.n, t->tag.p))
        return "TAG_SET_ERROR";
    return NULL;
}

/* The output, the tag (AEAD encryption) and the next IV against the stanza. */
static const char *cipher_check(crun *r, const unsigned char *got, size_t got_len,
                                const bytes *want)
{
    const test *t = r->t;
    unsigned char tag[16];
    size_t want_len = want->n;

    if (!r->enc && t->tls_aad && want_len > got_len)
        want_len = got_len; /* evp_test: a TLS record's MAC and padding are not returned */
    if (got_len != want_len || (want_len > 0 && memcmp(got, want->p, want_len) != 0))
        return "VALUE_MISMATCH";
    if (r->enc && r->aead && !t->tls_aad) {
        if (t->tag.n > sizeof(tag))
            return "TAG_LENGTH_INTERNAL_ERROR";
        if (!ctrl(r->ctx, EVP_CTRL_AEAD_GET_TAG, t->tag.n, tag))
            return "TAG_RETRIEVE_ERROR";
        if (memcmp(tag, t->tag.p, t->tag.n) != 0)
            return "TAG_VALUE_MISMATCH";
    }
    if (t->next_iv.set && !iv_is(r, &t->next_iv))
        return "INVALID_NEXT_IV";
    return NULL;
}

static const char *cipher_once(const test *t, const EVP_CIPHER *c, int enc, const variant *v,
                               uint64_t seed)
{
    const bytes *in = enc ? &t->pt : &t->ct, *want = enc ? &t->ct : &t->pt;
    crun r = { t, c, v, EVP_CIPHER_CTX_new(), aead_of(c), enc, 0, { seed } };
    const char *err = "TEST_FAILURE";
    place pl = { NULL, NULL, NULL };
    int done = 0, fin, ok;

    if (r.ctx == NULL || !make_place(&pl, v, in->p, in->n, in->n + 2 * EVP_MAX_BLOCK_LENGTH))
        goto end;
    EVP_CIPHER_CTX_set_flags(r.ctx, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
    if ((err = cipher_setup(&r, want->n)) != NULL || (err = cipher_aad(&r)) != NULL)
        goto end;
    EVP_CIPHER_CTX_set_padding(r.ctx, 0);
    if ((ok = cipher_update(&r, pl.out, pl.in, in->n, &done)) <= 0) {
        err = ok < 0 ? "COPY_ERROR" : "CIPHERUPDATE_ERROR";
        goto end;
    }
    if (v->copy == COPY_MID && !r.copied && !copy_ctx(&r)) {
        err = "COPY_ERROR";
        goto end;
    }
    if (!EVP_CipherFinal_ex(r.ctx, pl.out + done, &fin)) {
        err = "CIPHERFINAL_ERROR";
        goto end;
    }
    err = cipher_check(&r, pl.out, (size_t)done + (size_t)fin, want);
end:
    free(pl.mem);
    EVP_CIPHER_CTX_free(r.ctx);
    return err;
}

/* ------------------------------------------------------------------ */
/* digests                                                              */
/* ------------------------------------------------------------------ */

/* The whole Input of a test (each piece Count times) at 16-aligned + mis in *mem. */
static unsigned char *flat_input(const test *t, size_t mis, unsigned char **mem, size_t *n)
{
    size_t i, k, total = 0;
    unsigned char *p;

    for (i = 0; i < (size_t)t->nin; i++)
        total += t->in[i].b.n * t->in[i].count;
    if ((*mem = malloc(total + 32)) == NULL)
        return NULL;
    p = (unsigned char *)(((uintptr_t)*mem + 15) & ~(uintptr_t)15) + mis;
    *n = 0;
    for (i = 0; i < (size_t)t->nin; i++)
        for (k = 0; k < t->in[i].count; k++, *n += t->in[i].b.n)
            memcpy(p + *n, t->in[i].b.p, t->in[i].b.n);
    return p;
}

/* Output of a digest or MAC against the stanza's. */
static int same(const bytes *want, const unsigned char *got, size_t n)
{
    return n == want->n && (n == 0 || memcmp(got, want->p, n) == 0);
}

typedef struct {
    EVP_MD_CTX *md[2];   /* the context, and its copy */
    EVP_MAC_CTX *mac[2];
} hctx;

static int hash_update(hctx *h, const unsigned char *p, size_t n)
{
    int i, ok = 1;

    for (i = 0; i < 2; i++)
        if (h->md[i] != NULL)
            ok &= EVP_DigestUpdate(h->md[i], p, n);
        else if (h->mac[i] != NULL)
            ok &= EVP_MAC_update(h->mac[i], p, n);
    return ok;
}

static int hash_copy(hctx *h)
{
    if (h->md[0] != NULL)
        return (h->md[1] = EVP_MD_CTX_new()) != NULL && EVP_MD_CTX_copy_ex(h->md[1], h->md[0]);
    return (h->mac[1] = EVP_MAC_CTX_dup(h->mac[0])) != NULL;
}

/* The Input through the context (and, once copied, its copy too) as the variant says. */
static const char *hash_input(const test *t, hctx *h, const variant *v, uint64_t seed)
{
    unsigned char *mem = NULL, *p;
    size_t n = 0, i, k, count = 0, off = 0, *c = NULL;
    tu_rng r = { seed };
    const char *err = "UPDATE_ERROR";

    if (v->copy == COPY_INIT && !hash_copy(h))
        return "COPY_ERROR";
    if (v->split == WHOLE) { /* as evp_test: one update per piece and count */
        for (i = 0; i < (size_t)t->nin; i++)
            for (k = 0; k < t->in[i].count; k++)
                if (!hash_update(h, t->in[i].b.p, t->in[i].b.n))
                    return err;
        return NULL;
    }
    if ((p = flat_input(t, v->in_mis, &mem, &n)) == NULL || (c = split(n, v->split, &r, &count)) == NULL)
        goto end;
    for (i = 0; i < count; off += c[i++]) {
        if (!hash_update(h, p + off, c[i]))
            goto end;
        if (v->copy == COPY_MID && i == 0 && !hash_copy(h)) {
            err = "COPY_ERROR";
            goto end;
        }
    }
    err = NULL;
end:
    free(c);
    free(mem);
    return err;
}

static const char *digest_final(const test *t, EVP_MD_CTX *ctx)
{
    unsigned char got[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    if (EVP_MD_get_flags(EVP_MD_CTX_get0_md(ctx)) & EVP_MD_FLAG_XOF) {
        unsigned char *x = malloc(t->output.n + 1);
        int ok = x != NULL && EVP_DigestFinalXOF(ctx, x, t->output.n) && same(&t->output, x, t->output.n);

        free(x);
        return ok ? NULL : "DIGESTFINALXOF_ERROR";
    }
    if (!EVP_DigestFinal_ex(ctx, got, &n))
        return "DIGESTFINAL_ERROR";
    if (n != t->output.n)
        return "DIGEST_LENGTH_MISMATCH";
    return same(&t->output, got, n) ? NULL : "DIGEST_MISMATCH";
}

static const char *digest_oneshot(const test *t, const EVP_MD *md)
{
    unsigned char *mem = NULL, *p, got[EVP_MAX_MD_SIZE];
    size_t n = 0, len = 0;
    const char *err = "TEST_FAILURE";

    if ((p = flat_input(t, 0, &mem, &n)) != NULL)
        err = !EVP_Q_digest(NULL, EVP_MD_get0_name(md), PROPS, p, n, got, &len) ? "DIGESTINIT_ERROR"
              : same(&t->output, got, len) ? NULL : "DIGEST_MISMATCH";
    free(mem);
    return err;
}

static const char *digest_once(const test *t, const EVP_MD *md, const variant *v, uint64_t seed)
{
    hctx h = { { EVP_MD_CTX_new(), NULL }, { NULL, NULL } };
    OSSL_PARAM p[] = { OSSL_PARAM_int(OSSL_DIGEST_PARAM_PAD_TYPE, (int *)&t->pad_type),
                       OSSL_PARAM_END };
    const char *err = NULL;
    int i;

    if (v->oneshot) {
        EVP_MD_CTX_free(h.md[0]);
        return EVP_MD_get_flags(md) & EVP_MD_FLAG_XOF ? "skip" : digest_oneshot(t, md);
    }
    if (h.md[0] == NULL || !EVP_DigestInit_ex2(h.md[0], md, NULL))
        err = "DIGESTINIT_ERROR";
    else if (t->pad_type > 0 && !EVP_MD_CTX_set_params(h.md[0], p))
        err = "PARAMS_ERROR";
    else if ((err = hash_input(t, &h, v, seed)) != NULL)
        err = strcmp(err, "UPDATE_ERROR") == 0 ? "DIGESTUPDATE_ERROR" : err;
    for (i = 1; i >= 0; i--) {
        if (err == NULL && h.md[i] != NULL)
            err = digest_final(t, h.md[i]);
        EVP_MD_CTX_free(h.md[i]);
    }
    return err;
}

/* ------------------------------------------------------------------ */
/* MACs                                                                 */
/* ------------------------------------------------------------------ */

typedef struct {
    OSSL_PARAM p[CTRL_MAX + 8];
    int n, first_alloc;
    size_t size; /* a "size" Ctrl */
} mparams;

static void free_params(mparams *m)
{
    while (m->n > m->first_alloc)
        OPENSSL_free(m->p[--m->n].data);
}

/* evp_test's parameters: the digest or cipher (whichever the MAC takes), Custom, Salt, IV,
 * then each Ctrl as text. */
static const char *mac_params(const test *t, const EVP_MAC *mac, mparams *m)
{
    const OSSL_PARAM *known = EVP_MAC_settable_ctx_params(mac);
    char key[64];
    const char *val;
    int i;

    m->n = m->first_alloc = 0;
    m->size = 0;
    if (t->sub != NULL) {
        const char *which = OSSL_PARAM_locate_const(known, OSSL_MAC_PARAM_CIPHER) != NULL
                            ? OSSL_MAC_PARAM_CIPHER
                            : OSSL_PARAM_locate_const(known, OSSL_MAC_PARAM_DIGEST) != NULL
                            ? OSSL_MAC_PARAM_DIGEST : NULL;

        if (which == NULL)
            return "MAC_BAD_PARAMS";
        m->p[m->n++] = OSSL_PARAM_construct_utf8_string(which, t->sub, 0);
    }
    if (t->custom.set)
        m->p[m->n++] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_CUSTOM, t->custom.p, t->custom.n);
    if (t->salt.set)
        m->p[m->n++] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_SALT, t->salt.p, t->salt.n);
    if (t->iv.set)
        m->p[m->n++] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_IV, t->iv.p, t->iv.n);
    m->first_alloc = m->n;
    for (i = 0; i < t->nctrl; i++) {
        if ((val = strchr(t->ctrl[i], ':')) == NULL || (size_t)(val - t->ctrl[i]) >= sizeof(key))
            return "MAC_PARAM_ERROR";
        snprintf(key, sizeof(key), "%.*s", (int)(val - t->ctrl[i]), t->ctrl[i]);
        val++;
        if (!OSSL_PARAM_allocate_from_text(&m->p[m->n], known, key, val, strlen(val), NULL))
            return "MAC_PARAM_ERROR";
        m->n++;
        if (strcmp(key, "size") == 0)
            m->size = strtoul(val, NULL, 0);
    }
    m->p[m->n] = OSSL_PARAM_construct_end();
    return NULL;
}

/* evp_test's checks after init: a MAC size, the one a "size" Ctrl set, OutputSize, BlockSize. */
static const char *mac_sizes(const test *t, EVP_MAC_CTX *ctx, size_t size)
{
    int out = -1, block = -1;
    OSSL_PARAM p[] = { OSSL_PARAM_int(OSSL_MAC_PARAM_SIZE, &out),
                       OSSL_PARAM_int(OSSL_MAC_PARAM_BLOCK_SIZE, &block), OSSL_PARAM_END };
    size_t got = EVP_MAC_CTX_get_mac_size(ctx);

    if (got == 0 || (size != 0 && got != size))
        return "MAC SIZE check failed";
    if (t->output_size < 0 && t->block_size < 0)
        return NULL;
    if (!EVP_MAC_CTX_get_params(ctx, p))
        return "INTERNAL_ERROR";
    if ((t->output_size >= 0 && out != t->output_size) || (t->block_size >= 0 && block != t->block_size))
        return "TEST_FAILURE";
    return NULL;
}

static const char *mac_final(const test *t, EVP_MAC_CTX *ctx)
{
    unsigned char *got = NULL;
    size_t n = 0;
    const char *err = "MAC_FINAL_LENGTH_ERROR";

    if (t->xof) {
        got = malloc(t->output.n + 1);
        err = got != NULL && EVP_MAC_finalXOF(ctx, got, t->output.n) && same(&t->output, got, t->output.n)
              ? NULL : "MAC_FINAL_ERROR";
    } else if (EVP_MAC_final(ctx, NULL, &n, 0) && (got = malloc(n + 1)) != NULL) {
        err = EVP_MAC_final(ctx, got, &n, n) && same(&t->output, got, n) ? NULL : "TEST_MAC_ERR";
    }
    free(got);
    return err;
}

/* Re-init with no key (the IV again): evp_test's second pass, or a failure with NoReinit. */
static const char *mac_reinit(const test *t, hctx *h, uint64_t seed)
{
    OSSL_PARAM iv[] = { OSSL_PARAM_END, OSSL_PARAM_END };
    int ok;

    if (t->iv.set)
        iv[0] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_IV, t->iv.p, t->iv.n);
    ok = EVP_MAC_init(h->mac[0], NULL, 0, iv);
    ERR_clear_error();
    if (t->no_reinit)
        return ok ? "MAC_REINIT_SHOULD_FAIL" : NULL;
    if (!ok)
        return "MAC_REINIT_ERROR";
    if (hash_input(t, h, &hash_variants[0], seed) != NULL)
        return "MAC_UPDATE_ERROR";
    return mac_final(t, h->mac[0]);
}

static const char *mac_oneshot(const test *t, mparams *m)
{
    unsigned char *mem = NULL, *p, *got = malloc(t->output.n + 64);
    size_t n = 0, len = 0;
    const char *err = "EVP_Q_mac failed";

    if (got != NULL && (p = flat_input(t, 0, &mem, &n)) != NULL
        /* "?": OpenSSL 4.0's EVP_Q_mac gives its properties to the digest fetch too, and
         * "provider=ccree" cannot fetch a digest ccree does not offer (SHA3 for HMAC) */
        && EVP_Q_mac(NULL, t->alg, "?" PROPS, t->sub, m->p, t->key.p, t->key.n, p, n, got,
                     t->output.n + 64, &len) != NULL
        && same(&t->output, got, len))
        err = NULL;
    free(mem);
    free(got);
    return err;
}

static const char *mac_once(const test *t, EVP_MAC *mac, const variant *v, uint64_t seed)
{
    hctx h = { { NULL, NULL }, { NULL, NULL } };
    mparams m;
    const char *err = mac_params(t, mac, &m);
    int i;

    if (err == NULL && v->oneshot) {
        /* evp_test runs EVP_Q_mac after a success only; it cannot tell where a failure was */
        err = t->result == NULL && !t->xof ? mac_oneshot(t, &m) : "skip";
        free_params(&m);
        return err;
    }
    if (err == NULL && (h.mac[0] = EVP_MAC_CTX_new(mac)) == NULL)
        err = "MAC_CREATE_ERROR";
    if (err == NULL && !EVP_MAC_init(h.mac[0], t->key.p, t->key.n, m.p))
        err = "MAC_INIT_ERROR";
    if (err == NULL)
        err = mac_sizes(t, h.mac[0], m.size);
    if (err == NULL && (err = hash_input(t, &h, v, seed)) != NULL)
        err = strcmp(err, "UPDATE_ERROR") == 0 ? "MAC_UPDATE_ERROR" : err;
    for (i = 1; i >= 0; i--)
        if (err == NULL && h.mac[i] != NULL)
            err = mac_final(t, h.mac[i]);
    if (err == NULL && v->split == WHOLE)
        err = mac_reinit(t, &h, seed);
    EVP_MAC_CTX_free(h.mac[0]);
    EVP_MAC_CTX_free(h.mac[1]);
    free_params(&m);
    return err;
}

/* ------------------------------------------------------------------ */
/* one test                                                             */
/* ------------------------------------------------------------------ */

/* What a test runs on: the algorithm fetched from ccree, or the reason there is none. */
typedef struct {
    EVP_CIPHER *c;
    EVP_MD *md;
    EVP_MAC *mac;
    char counter[80]; /* its row in ccree's table, where it has one */
} subject;

static void free_subject(subject *s)
{
    EVP_CIPHER_free(s->c);
    EVP_MD_free(s->md);
    EVP_MAC_free(s->mac);
}

/* The ccree-algorithms row a MAC counts in: HMAC-<digest> or CMAC-<cipher>, canonical names. */
static void mac_row(const test *t, subject *s)
{
    EVP_MD *md = NULL;
    EVP_CIPHER *c = NULL;
    int hmac = EVP_MAC_is_a(s->mac, "HMAC");

    if (t->sub == NULL || (!hmac && !EVP_MAC_is_a(s->mac, "CMAC")))
        return;
    ERR_set_mark();
    if (hmac && (md = EVP_MD_fetch(NULL, t->sub, NULL)) != NULL)
        snprintf(s->counter, sizeof(s->counter), "HMAC-%s", EVP_MD_get0_name(md));
    if (!hmac && (c = EVP_CIPHER_fetch(NULL, t->sub, NULL)) != NULL)
        snprintf(s->counter, sizeof(s->counter), "CMAC-%s", EVP_CIPHER_get0_name(c));
    ERR_pop_to_mark();
    EVP_MD_free(md);
    EVP_CIPHER_free(c);
}

/* 1 when ccree serves the test's algorithm, 0 when it does not offer it, -1 for an EVP_PKEY
 * MAC ("X by EVP_PKEY") that ccree could serve (it has key management for X) but this runner
 * cannot run. */
static int fetch_subject(const test *t, subject *s)
{
    const char *pk = strstr(t->alg, " by EVP_PKEY");
    const OSSL_PROVIDER *p = NULL;
    int pkey = 0;

    memset(s, 0, sizeof(*s));
    ERR_set_mark();
    if (t->kind == CIPHER && (s->c = EVP_CIPHER_fetch(NULL, t->alg, PROPS)) != NULL) {
        p = EVP_CIPHER_get0_provider(s->c);
        snprintf(s->counter, sizeof(s->counter), "%s", EVP_CIPHER_get0_name(s->c));
    } else if (t->kind == DIGEST && (s->md = EVP_MD_fetch(NULL, t->alg, PROPS)) != NULL) {
        p = EVP_MD_get0_provider(s->md);
        snprintf(s->counter, sizeof(s->counter), "%s", EVP_MD_get0_name(s->md));
    } else if (t->kind == MAC && pk != NULL) {
        char name[64];
        EVP_KEYMGMT *km;

        snprintf(name, sizeof(name), "%.*s", (int)(pk - t->alg), t->alg);
        pkey = (km = EVP_KEYMGMT_fetch(NULL, name, PROPS)) != NULL;
        EVP_KEYMGMT_free(km);
    } else if (t->kind == MAC && (s->mac = EVP_MAC_fetch(NULL, t->alg, PROPS)) != NULL) {
        p = EVP_MAC_get0_provider(s->mac);
        mac_row(t, s);
    }
    ERR_pop_to_mark();
    if (p != NULL && strcmp(OSSL_PROVIDER_get0_name(p), "ccree") != 0) {
        fprintf(stderr, "%s came from %s\n", t->alg, OSSL_PROVIDER_get0_name(p));
        exit(1);
    }
    return pkey ? -1 : p != NULL;
}

/* The stanza's verdict on what happened: NULL when it is what the stanza expects. */
static const char *verdict(const test *t, const char *err, char *why, size_t n)
{
    const char *reason;

    if (err == NULL && t->result == NULL)
        return NULL;
    if (t->result == NULL)
        snprintf(why, n, "unexpected error %s", err);
    else if (err == NULL)
        snprintf(why, n, "succeeded but was expecting %s", t->result);
    else if (strcmp(err, t->result) != 0)
        snprintf(why, n, "expected %s, got %s", t->result, err);
    else if (t->reason == NULL)
        return NULL;
    else if ((reason = ERR_reason_error_string(ERR_peek_error())) != NULL
             && strcmp(reason, t->reason) != 0)
        snprintf(why, n, "expected reason \"%s\", got \"%s\"", t->reason, reason);
    else
        return NULL;
    return why;
}

/* Runs variant number i (directions counted in); *more is 0 past the last. Returns the error,
 * or "skip" where the variant does not apply. */
static const char *run_variant(const test *t, const subject *s, size_t i, int *more,
                               const char **vname, const char **dirname)
{
    uint64_t seed = tu_seed_mix(0x70656572, (uint64_t)t->line, i);
    size_t nv = NV(cipher_variants), dir, vi;

    *more = 0;
    *vname = "before any variant";
    *dirname = "";
    if (t->kind != CIPHER) {
        *more = i + 1 < NV(hash_variants);
        *vname = hash_variants[i].name;
        return s->md != NULL ? digest_once(t, s->md, &hash_variants[i], seed)
                             : mac_once(t, s->mac, &hash_variants[i], seed);
    }
    if (!t->key.set)
        return "NO_KEY";
    if (!t->iv.set && EVP_CIPHER_get_iv_length(s->c) > 0 && mode_of(s->c) != EVP_CIPH_WRAP_MODE)
        return "NO_IV";
    if (aead_of(s->c) && !t->tag.set && !t->tls_aad)
        return "NO_TAG";
    if (!fragmentable(s->c))
        nv = 3; /* the whole-data variants come first */
    dir = i / nv, vi = i % nv;
    *more = i + 1 < 2 * nv;
    *vname = cipher_variants[vi].name;
    *dirname = dir == 0 ? ", encrypt" : ", decrypt";
    /* encryption first, as evp_test; Operation limits the directions */
    if ((t->op == 0 && dir == 0) || (t->op == 1 && dir == 1))
        return "skip";
    return cipher_once(t, s->c, dir == 0, &cipher_variants[vi], seed);
}

/* Runs every variant; NULL when all gave what the stanza expects, else why one did not.
 * stop: the first that does not; else (mutants) the first that does. */
static const char *run_test(const test *t, const subject *s, int want_fail, char *why, size_t n)
{
    const char *err, *vname, *dir, *v;
    char tmp[200];
    size_t i;
    int more = 1;

    for (i = 0; more; i++) {
        ERR_clear_error();
        err = run_variant(t, s, i, &more, &vname, &dir);
        if (err != NULL && strcmp(err, "skip") == 0)
            continue;
        v = verdict(t, err, tmp, sizeof(tmp));
        ERR_clear_error();
        if ((v != NULL) != want_fail) {
            snprintf(why, n, "%s (%s%s)", v != NULL ? v : "passed", vname, dir);
            return why;
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* mutants                                                              */
/* ------------------------------------------------------------------ */

static void flip(bytes *b)
{
    b->p[b->n / 2] ^= 0x01;
}

/* Mutant k of a test (0, 1, ...): applies it and returns its name, or NULL past the last. */
static const char *mutate(test *t, int k, char **saved)
{
    bytes *b[3] = { NULL, NULL, NULL };
    const char *names[3] = { NULL, NULL, NULL };
    int n = 0;

    if (t->result != NULL) {
        if (k > 0)
            return NULL;
        *saved = t->result, t->result = NULL;
        return "expected error made success";
    }
    if (t->kind == CIPHER) {
        if (t->ct.n > 0)
            b[n] = &t->ct, names[n++] = "Ciphertext";
        if (t->tag.n > 0 && !t->tls_aad)
            b[n] = &t->tag, names[n++] = "Tag";
        if (n == 0 && t->pt.n > 0)
            b[n] = &t->pt, names[n++] = "Plaintext";
    } else if (t->output.n > 0) {
        b[n] = &t->output, names[n++] = "Output";
    }
    if (k >= n)
        return NULL;
    flip(b[k]);
    return names[k];
}

static void unmutate(test *t, int k, char *saved)
{
    if (saved != NULL) {
        t->result = saved;
        return;
    }
    mutate(t, k, &saved); /* flipping again restores it */
}

/* ------------------------------------------------------------------ */
/* files                                                                */
/* ------------------------------------------------------------------ */

typedef struct {
    int passed, failed, skipped;
} tally;

/* ccree's counters for the algorithms a file used, read before its first test. */
typedef struct {
    int n;
    tu_alg_info before[64];
} watch;

static OSSL_PROVIDER *ccree, *legacy;
static int mutants;

/* Names skipped because ccree does not offer them, once each. */
static char skipped_names[8192];

static void note_skip(const char *name)
{
    char tag[140];

    snprintf(tag, sizeof(tag), "\n%s\n", name);
    if (strstr(skipped_names, tag) == NULL && strlen(skipped_names) + strlen(tag) < sizeof(skipped_names))
        strcat(skipped_names, tag + (skipped_names[0] != '\0'));
}

static void watch_alg(watch *w, const char *name)
{
    char *table;
    int i;

    for (i = 0; i < w->n; i++)
        if (strcmp(w->before[i].name, name) == 0)
            return;
    if (w->n == 64 || (table = tu_get_string(ccree, "ccree-algorithms")) == NULL)
        return;
    if (tu_find_alg(table, name, &w->before[w->n], NULL) == 1)
        w->n++;
    free(table);
}

/* CCREE_REQUIRE_OFFLOAD=1: every algorithm the kernel has must have run there for this file. */
static int check_offload(const char *file, const watch *w)
{
    int i, bad = 0;

    for (i = 0; tu_require_offload() && i < w->n; i++) {
        tu_alg_info a = tu_alg(ccree, w->before[i].name);
        const char *want = tu_expected_state(&a);
        uint64_t oo = a.offload_ops - w->before[i].offload_ops;
        uint64_t fo = a.fallback_ops - w->before[i].fallback_ops;
        int ok = strcmp(a.state, want) == 0 && (strcmp(want, "offload") != 0 || oo > 0);

        printf("  %s %s: kernel ops +%llu, software ops +%llu%s\n", file, a.name,
               (unsigned long long)oo, (unsigned long long)fo,
               ok ? "" : strcmp(a.state, want) != 0 ? " FAILED: wrong state" : " FAILED: no kernel op");
        bad += !ok;
    }
    return bad;
}

/* Whether one of the providers Availablein names is loaded (evp_test's rule). */
static int available(const char *list)
{
    char buf[256], *p, *save = NULL;

    snprintf(buf, sizeof(buf), "%s", list);
    for (p = strtok_r(buf, " \t", &save); p != NULL; p = strtok_r(NULL, " \t", &save))
        if (OSSL_PROVIDER_available(NULL, p))
            return 1;
    return 0;
}

static void fail(tally *c, const char *file, int line, const char *why)
{
    printf("  %s:%d: %s\n", file, line, why);
    c->failed++;
}

static void run_mutants(test *t, const subject *s, const char *file, tally *c)
{
    char why[300], *saved = NULL, msg[400];
    const char *name, *r;
    int k;

    for (k = 0; (name = mutate(t, k, &saved)) != NULL; k++, saved = NULL) {
        r = run_test(t, s, 1, why, sizeof(why));
        unmutate(t, k, saved);
        if (r == NULL) {
            c->passed++;
            continue;
        }
        snprintf(msg, sizeof(msg), "mutant (%s) %s", name, r);
        fail(c, file, t->line, msg);
    }
}

static void run_one(test *t, const char *file, tally *c, watch *w)
{
    char why[300];
    subject s;

    if (t->bad[0] != '\0') {
        fail(c, file, t->line, t->bad);
        return;
    }
    if (t->avail != NULL && !available(t->avail)) {
        c->skipped++;
        return;
    }
    switch (fetch_subject(t, &s)) {
    case 0:
        note_skip(t->alg);
        c->skipped++;
        return;
    case -1:
        fail(c, file, t->line, "ccree has key management for it: this runner has no EVP_PKEY path");
        return;
    }
    if (s.counter[0] != '\0')
        watch_alg(w, s.counter);
    if (mutants)
        run_mutants(t, &s, file, c);
    else if (run_test(t, &s, 0, why, sizeof(why)) != NULL)
        fail(c, file, t->line, why);
    else
        c->passed++;
    free_subject(&s);
}

/* The number of names skipped as not offered that src/algs.c's rows name (first string of
 * each row, split at ':'); -1 when it has none. */
static int skipped_in_table(const char *algs_c)
{
    FILE *f = fopen(algs_c, "re");
    char *buf = NULL, *p, *q;
    size_t cap = 0;
    int rows = 0, found = 0;

    while (f != NULL && getline(&buf, &cap, f) != -1) {
        if (strncmp(p = trim(buf), "{ \"", 3) != 0 || (q = strchr(p + 3, '"')) == NULL)
            continue;
        *q = '\0', rows++;
        for (p = strtok(p + 3, ":"); p != NULL; p = strtok(NULL, ":")) {
            for (q = skipped_names; (q = strcasestr(q, p)) != NULL; q++)
                if ((q == skipped_names || q[-1] == '\n') && (q[strlen(p)] == '\n' || q[strlen(p)] == '\0')) {
                    printf("%s is skipped as not offered, but %s has it\n", p, algs_c);
                    found++;
                    break;
                }
        }
    }
    free(buf);
    if (f != NULL)
        fclose(f);
    return rows == 0 ? -1 : found;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int data_file(const struct dirent *d)
{
    return strncmp(d->d_name, "evp", 3) == 0 && strstr(d->d_name, ".txt") != NULL
           && (strncmp(d->d_name + 3, "ciph_", 5) == 0 || strncmp(d->d_name + 3, "md_", 3) == 0
               || strncmp(d->d_name + 3, "mac_", 4) == 0);
}

static void run_file(const char *path, tally *all);

/* The files of fetch.sh's cache; 0 (with the way to get them) when there are none. */
static int run_cache(const char *fetch_sh, tally *all)
{
    char cmd[512], dir[512] = "", path[1024], src[64] = "?";
    struct dirent **list = NULL;
    FILE *f;
    int i, n;

    snprintf(cmd, sizeof(cmd), "sh '%s' --dir", fetch_sh);
    if ((f = popen(cmd, "r")) == NULL || fgets(dir, sizeof(dir), f) == NULL)
        dir[0] = '\0';
    if (f != NULL)
        pclose(f);
    dir[strcspn(dir, "\n")] = '\0';
    if ((n = dir[0] != '\0' ? scandir(dir, &list, data_file, by_name) : -1) <= 0) {
        fprintf(stderr, "peer: no evp_test data in %s: run sh test/peer/fetch.sh\n", dir);
        free(list);
        return 0;
    }
    snprintf(path, sizeof(path), "%s/SOURCE", dir);
    if ((f = fopen(path, "re")) != NULL && fgets(src, sizeof(src), f) != NULL)
        src[strcspn(src, "\n")] = '\0';
    if (f != NULL)
        fclose(f);
    printf("evp_test data of openssl %s in %s\n", src, dir);
    for (i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
        run_file(path, all);
        free(list[i]);
    }
    free(list);
    return 1;
}

static void run_file(const char *path, tally *all)
{
    const char *file = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
    FILE *f = fopen(path, "re");
    tally c = { 0, 0, 0 };
    watch w = { 0 };
    test t;
    int line = 0;

    if (f == NULL) {
        perror(path);
        all->failed++;
        return;
    }
    while (read_stanza(f, &t, &line)) {
        run_one(&t, file, &c, &w);
        free_test(&t);
    }
    free_test(&t);
    fclose(f);
    c.failed += check_offload(file, &w);
    printf("%s: %d %s, %d failed, %d skipped\n", file, c.passed, mutants ? "mutants caught" : "passed",
           c.failed, c.skipped);
    fflush(stdout);
    all->passed += c.passed, all->failed += c.failed, all->skipped += c.skipped;
}

int main(int argc, char **argv)
{
    tally all = { 0, 0, 0 };
    const char *p, *algs = NULL, *fetch = NULL;
    int i, in_table = 0;

    for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++)
        if (strcmp(argv[i], "--mutate") == 0)
            mutants = 1;
        else if (strcmp(argv[i], "--algs") == 0 && i + 1 < argc)
            algs = argv[++i];
        else if (strcmp(argv[i], "--fetch") == 0 && i + 1 < argc)
            fetch = argv[++i];
        else
            break;
    if ((fetch == NULL) == (i >= argc)) {
        fprintf(stderr, "usage: %s [--mutate] [--algs ALGS_C] (--fetch FETCH_SH | FILE...)\n", argv[0]);
        return 2;
    }
    if ((ccree = OSSL_PROVIDER_load(NULL, "ccree")) == NULL) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    /* evp_test's recipe loads legacy for the stanzas marked "Availablein = legacy" */
    if ((legacy = OSSL_PROVIDER_try_load(NULL, "legacy", 1)) == NULL)
        printf("the legacy provider does not load: its stanzas are skipped\n");
    if (fetch != NULL && !run_cache(fetch, &all))
        return 1;
    for (; i < argc; i++)
        run_file(argv[i], &all);
    for (p = skipped_names; *p != '\0'; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != '\0'))
        printf("not offered by ccree: %.*s\n", (int)strcspn(p, "\n"), p);
    if (algs != NULL && (in_table = skipped_in_table(algs)) < 0)
        printf("no algorithm names read from %s\n", algs);
    printf("%d passed, %d failed, %d skipped\n", all.passed, all.failed, all.skipped);
    OSSL_PROVIDER_unload(legacy);
    OSSL_PROVIDER_unload(ccree);
    return all.failed != 0 || in_table != 0;
}
