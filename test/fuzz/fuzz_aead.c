/*
 * AES-GCM and AES-CCM in the differential fuzz target: one direction and key per run, then
 * messages, each described by a few bytes of the input:
 *   kind     a message; a TLS 1.3-style record (new IV, tag first, header AAD, in place); a
 *            TLS 1.2 record (fixed IV, tlsaad, one in-place update or EVP_Cipher); a message
 *            whose nonce comes from tlsivgen (encryption) or tlsivinv (decryption)
 *   re-init  key and IV, IV only, key only, neither
 *   flags    tag after the data, a tampered tag, ciphertext or AAD, AAD and data split, in
 *            place, EVP_Cipher, no CCM length, CCM lengths set after the key, a copy at one of
 *            four points (and going on with it), the TLS fixed IV whole or 4 bytes
 *   lengths  IV and tag lengths each mode allows (and a few it refuses), AAD and data
 *   a fault  for ccree's kernel requests of the message
 * A decryption's ciphertext and tag are sealed by the default provider alone first, then
 * tampered or not: decryption is tried with the right and with a wrong tag.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>

#include "fuzz.h"

#define GCM_IV_MAX 128
#define TLS_AAD 13
#define TLS_EXPLICIT 8
#define TLS_MAXREC 16384 /* payloads up to here, and a few past */
#define MAXMSG 8

enum kind { PLAIN, TLS13, TLS12, IVGEN };
enum reinit { KEY_IV, IV_ONLY, KEY_ONLY, NEITHER, NONCE_PARAM };
enum flag {
    TAG_AFTER = 1 << 0,
    TAMPER = 1 << 1,
    SPLIT_AAD = 1 << 2,
    SPLIT_DATA = 1 << 3,
    INPLACE = 1 << 4,
    USE_CIPHER = 1 << 5, /* EVP_Cipher */
    NO_LENGTH = 1 << 6,  /* CCM without AAD: no length announced */
    LENS_LATE = 1 << 7,  /* CCM: IV and tag lengths set after the key */
};

static const size_t gcm_ivlens[] = { 12, 12, 12, 12, 1, 8, 13, 16, 64, 128, 12, 0, 129, 7, 12, 12 };
static const size_t ccm_ivlens[] = { 12, 7, 8, 9, 10, 11, 13, 12, 13, 6, 14, 12, 7, 13, 12, 8 };
static const size_t gcm_taglens[] = { 16, 16, 16, 4, 8, 12, 13, 14, 15, 1, 3, 17, 0, 16, 12, 16 };
static const size_t ccm_taglens[] = { 16, 16, 4, 6, 8, 10, 12, 14, 3, 5, 18, 2, 16, 8, 12, 16 };

struct msg {
    enum kind kind;
    enum reinit reinit;
    unsigned flags, tamper, copy_at, swap, tls_whole, tls_tag8;
    size_t ivlen, taglen, aadlen, len;
    const unsigned char *aad, *plain;
    unsigned char iv[GCM_IV_MAX];
};

/* A lockstep pair and what the run knows of it. */
struct pair {
    EVP_CIPHER_CTX *ctx[2];
    struct state s;
    int ok; /* the last call succeeded on both */
    unsigned char iv[GCM_IV_MAX], fixed[12];
    size_t ivlen, taglen, kivlen, ktaglen; /* now, and when the key was set */
    size_t data;                           /* data bytes of this message */
    int tls;                               /* a TLS fixed IV is set */
    int ccm_records;                       /* CCM: tlsaad was set: each data update is a record */
    int sealed;                            /* the last final succeeded on both */
    uint64_t seq;
};

struct run {
    EVP_CIPHER *const *cipher;
    int gcm, enc;
    size_t keylen;
    unsigned char key[32];
    struct pair cur, alt; /* alt: a copy, or none */
};

static unsigned char out[2][MAXLEN + 64], ct[MAXLEN + 64], tag[32], aadx[MAXLEN];

/* --- one call on both ---------------------------------------------------------------------- */

static int go(struct pair *p, struct call *c)
{
    enum verdict v = judge(&p->s, c);

    p->ok = c->r[0] && c->must == NULL && c->r[1];
    return v == SAME;
}

static int set_params(struct pair *p, const char *what, OSSL_PARAM *prm)
{
    struct call c = { .kind = CALL_PARAM, .what = what };
    int i;

    note(" %s", what);
    LOCKSTEP(&p->s, &c, i, c.r[i] = EVP_CIPHER_CTX_set_params(p->ctx[i], prm));
    return go(p, &c);
}

static int set_size(struct pair *p, const char *name, size_t v)
{
    OSSL_PARAM prm[] = { OSSL_PARAM_size_t(name, &v), OSSL_PARAM_END };

    return set_params(p, name, prm);
}

static int set_octets(struct pair *p, const char *name, const void *v, size_t n)
{
    OSSL_PARAM prm[] = { OSSL_PARAM_octet_string(name, (void *)v, n), OSSL_PARAM_END };

    return set_params(p, name, prm);
}

/* An octet-string parameter of n bytes (or a size_t when n is 0), compared; expect: as in
 * struct call. */
static int get_param(struct pair *p, const char *name, size_t n, const unsigned char *expect)
{
    static unsigned char v[2][GCM_IV_MAX];
    struct call c = { .kind = CALL_PARAM, .what = name, .inlen = n, .expect = expect };
    int i;

    note(" get %s(%zu)", name, n);
    LOCKSTEP(&p->s, &c, i, size_t sz = 0;
             OSSL_PARAM prm[] = { n ? OSSL_PARAM_construct_octet_string(name, v[i], n)
                                    : OSSL_PARAM_construct_size_t(name, &sz), OSSL_PARAM_END };
             memset(v[i], 0, sizeof(v[i]));
             c.r[i] = EVP_CIPHER_CTX_get_params(p->ctx[i], prm);
             if (!n) memcpy(v[i], &sz, sizeof(sz));
             c.out[i] = v[i]; c.n[i] = n ? n : sizeof(sz));
    return go(p, &c);
}

/* The TLS fixed IV, 4 bytes or whole (-1), through the ctrl libssl uses. */
static int set_fixed(struct pair *p, const unsigned char *fixed, int len)
{
    struct call c = { .kind = CALL_PARAM, .what = "tlsivfixed" };
    int i;

    note(" tlsivfixed(%d)", len);
    LOCKSTEP(&p->s, &c, i, c.r[i] = EVP_CIPHER_CTX_ctrl(p->ctx[i], EVP_CTRL_AEAD_SET_IV_FIXED, len,
                                                      (void *)fixed) > 0);
    return go(p, &c);
}

/* A new nonce: this message starts, nothing is encrypted under it yet. */
static void new_nonce(struct pair *p)
{
    p->s.spent = p->s.reused = p->s.withheld = p->s.tag_first = p->s.gcm_final = 0;
    p->s.own_tag = p->s.data_fault = 0;
    p->data = 0;
}

static void lengths_known(struct pair *p)
{
    p->s.ccm_l = 15 - p->ivlen;
    p->s.odd_record_iv = !p->s.gcm && p->ivlen != 12;
    p->s.lens_after_key = !p->s.gcm && p->s.keyed
                          && (p->ivlen != p->kivlen || p->taglen != p->ktaglen);
}

static int init(struct pair *p, const unsigned char *key, const unsigned char *iv)
{
    struct call c = { .kind = CALL_INIT, .what = "init" };
    int i;

    note(" init(%s%s)", key ? "key" : "", iv ? " iv" : "");
    LOCKSTEP(&p->s, &c, i, c.r[i] = EVP_CipherInit_ex2(p->ctx[i], NULL, key, iv, -1, NULL));
    if (!go(p, &c))
        return 0;
    if (!p->ok)
        return 1;
    if (iv != NULL) { /* its first 4 bytes are TLS records' fixed part from now on */
        memcpy(p->iv, iv, p->ivlen);
        memcpy(p->fixed, iv, 4);
        new_nonce(p);
    }
    if (key != NULL) {
        p->s.reused |= iv == NULL && p->s.spent;
        p->s.spent = p->s.withheld = p->s.tag_first = p->s.own_tag = p->s.data_fault = 0;
        p->data = 0;
        p->s.keyed = 1;
        p->kivlen = p->ivlen;
        p->ktaglen = p->taglen;
    }
    lengths_known(p);
    return 1;
}

static int set_ivlen(struct pair *p, size_t ivlen)
{
    if (!set_size(p, OSSL_CIPHER_PARAM_AEAD_IVLEN, ivlen))
        return 0;
    if (p->ok)
        p->ivlen = ivlen;
    lengths_known(p);
    return 1;
}

/* A tag (NULL: CCM's length only); for GCM decryption before the data, "tag first". */
static int set_tag(struct pair *p, const unsigned char *t, size_t taglen)
{
    if (!set_octets(p, OSSL_CIPHER_PARAM_AEAD_TAG, t, taglen))
        return 0;
    if (p->ok && !p->s.gcm)
        p->taglen = taglen;
    if (p->ok && p->s.gcm && !p->s.enc && p->data == 0)
        p->s.tag_first = 1;
    p->s.own_tag |= p->ok;
    lengths_known(p);
    return 1;
}

/* AAD (in), CCM's length (in NULL), data (with out: want is what it gives), or final (in
 * NULL, with out). */
static int update(struct pair *p, enum call_kind kind, const unsigned char *in, size_t len,
                  unsigned flags, const unsigned char *want)
{
    struct call c = { .kind = kind, .inlen = len, .inplace = kind == CALL_DATA && (flags & INPLACE),
                      .record = kind == CALL_DATA && p->ccm_records,
                      .plain = p->s.enc ? NULL : want,
                      .expect = !p->s.enc && (flags & TAMPER) ? NULL : want };
    int i, cipher = (flags & USE_CIPHER) && !(kind == CALL_AAD && in == NULL);

    c.what = kind == CALL_DATA ? "data" : kind == CALL_FINAL ? "final" : in ? "aad" : "length";
    note(" %s%s%zu%s", cipher ? "EVP_Cipher " : "", c.what, len, c.inplace ? "i" : "");
    LOCKSTEP(&p->s, &c, i, int n = -1; unsigned char *o = kind == CALL_AAD ? NULL : out[i];
             const unsigned char *src = in;
             if (kind == CALL_DATA && !p->s.enc) memset(o, 0xa5, len);
             if (kind == CALL_DATA && c.inplace) src = memcpy(o, in, len);
             c.r[i] = cipher ? (n = EVP_Cipher(p->ctx[i], o, src, (unsigned)len)) >= 0
                             : kind == CALL_FINAL ? EVP_CipherFinal_ex(p->ctx[i], o, &n)
                                                  : EVP_CipherUpdate(p->ctx[i], o, &n, src, (int)len);
             c.n[i] = (size_t)n; c.out[i] = kind == CALL_DATA ? o : NULL);
    if (!go(p, &c))
        return 0;
    if (kind == CALL_FINAL) {
        p->sealed = p->ok;
        p->s.gcm_final = p->s.gcm;
    }
    p->s.data_fault |= c.fault && kind == CALL_DATA && p->s.tag_first;
    if (p->ok && kind == CALL_DATA && len > 0) {
        p->data += len;
        p->s.spent |= p->s.enc && !p->ccm_records; /* a record has a nonce of its own */
    }
    return 1;
}

/* The first of two pieces of len bytes. */
static size_t first_piece(size_t len)
{
    return (len * 7 + 3) / 16;
}

/* Pieces: the whole, or a first piece and the rest. */
static int in_pieces(struct pair *p, enum call_kind kind, const unsigned char *in, size_t len,
                     unsigned flags, int split, const unsigned char *want)
{
    size_t first = split ? first_piece(len) : len;

    return update(p, kind, in, first, flags, want)
           && (!split || update(p, kind, in + first, len - first, flags, want ? want + first : NULL));
}

/* --- copies -------------------------------------------------------------------------------- */

static int copy(struct run *r, int swap)
{
    struct call c = { .kind = CALL_COPY, .what = "copy" };
    struct pair t;
    int i;

    note(" copy%s", swap ? "+swap" : "");
    LOCKSTEP(&r->cur.s, &c, i,
             if (r->alt.ctx[i] == NULL && (r->alt.ctx[i] = EVP_CIPHER_CTX_new()) == NULL) abort();
             c.r[i] = EVP_CIPHER_CTX_copy(r->alt.ctx[i], r->cur.ctx[i]));
    if (!go(&r->cur, &c))
        return 0;
    if (!r->cur.ok)
        return 1;
    t = r->cur;
    memcpy(t.ctx, r->alt.ctx, sizeof(t.ctx));
    r->alt = t;
    if (swap) {
        t = r->cur;
        r->cur = r->alt;
        r->alt = t;
    }
    return 1;
}

static int copy_at(struct run *r, const struct msg *m, unsigned at)
{
    return m->copy_at != at || copy(r, m->swap);
}

/* --- the default provider alone: a decryption's ciphertext and tag ------------------------ */

static int seal_with(EVP_CIPHER_CTX *x, EVP_CIPHER *cipher, const struct run *r, const struct msg *m,
                     const unsigned char *iv, size_t ivlen, size_t taglen, const unsigned char *aad,
                     size_t aadlen)
{
    size_t tl = r->gcm ? 16 : taglen;
    OSSL_PARAM lens[] = { OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &ivlen),
                          OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, tl),
                          OSSL_PARAM_END };
    OSSL_PARAM get[] = { OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, tl),
                         OSSL_PARAM_END };
    int n, k;

    if (r->gcm)
        lens[1] = OSSL_PARAM_construct_end();
    return EVP_CipherInit_ex2(x, cipher, NULL, NULL, 1, lens)
           && EVP_CipherInit_ex2(x, NULL, r->key, iv, 1, NULL)
           && (r->gcm || EVP_CipherUpdate(x, NULL, &n, NULL, (int)m->len))
           && EVP_CipherUpdate(x, NULL, &n, aad, (int)aadlen)
           && EVP_CipherUpdate(x, ct, &n, m->plain, (int)m->len)
           && EVP_CipherFinal_ex(x, ct + n, &k) && tl <= sizeof(tag)
           && EVP_CIPHER_CTX_get_params(x, get);
}

/* What a tampered message has changed: 0 the tag, 1 the ciphertext, 2 the AAD; -1 nothing. */
static int tampered(const struct msg *m)
{
    if (!(m->flags & TAMPER))
        return -1;
    return (m->tamper == 1 && m->len == 0) || (m->tamper == 2 && m->aadlen == 0) ? 0
                                                                                 : (int)m->tamper;
}

/* ct and tag of m's plaintext under iv, or zeros (not the plaintext, which a failed
 * decryption in place must not leave); then tampered as m says. */
static void seal(const struct run *r, const struct msg *m, const unsigned char *iv, size_t ivlen,
                 size_t taglen, const unsigned char *aad, size_t aadlen)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();

    if (x == NULL || !seal_with(x, r->cipher[1], r, m, iv, ivlen, taglen, aad, aadlen)) {
        memset(ct, 0, m->len);
        memset(tag, 0, sizeof(tag));
    }
    EVP_CIPHER_CTX_free(x);
    ERR_clear_error();
    if (tampered(m) == 1)
        ct[m->len - 1] ^= 1;
    else if (tampered(m) == 0)
        tag[0] ^= 0x80;
}

/* --- messages ------------------------------------------------------------------------------ */

/* The TLS fixed IV (CCM: with its lengths and the key): whole for GCM encryption, whose
 * explicit part would otherwise be random. */
static int tls_setup(struct run *r, const struct msg *m)
{
    struct pair *p = &r->cur;
    int whole = r->gcm && (r->enc || m->tls_whole);
    size_t taglen = m->tls_tag8 ? 8 : 16;

    if (!r->gcm && !(set_ivlen(p, 12) && set_tag(p, NULL, taglen) && init(p, r->key, NULL)))
        return 0;
    if (r->gcm && p->ivlen != 12 && !set_ivlen(p, 12))
        return 0;
    if (!set_fixed(p, m->iv, whole ? -1 : 4))
        return 0;
    if (p->ok) {
        memcpy(p->fixed, m->iv, 12);
        memcpy(p->iv, m->iv, 12);
        p->tls = 1;
        new_nonce(p);
    }
    return 1;
}

/*
 * A TLS fixed IV is set; for GCM under an IV as long as the explicit nonce at least: with a
 * shorter one the default provider's TLS records, tlsivgen and tlsivinv write before its IV
 * buffer, over its state (OpenSSL 3.0.20), and it is not asked.
 */
static int tls_ready(const struct pair *p)
{
    return p->tls && (!p->s.gcm || p->ivlen >= TLS_EXPLICIT);
}

/* The nonce from tlsivgen (encryption) or tlsivinv (decryption). */
static int nonce_param(struct run *r, const struct msg *m)
{
    struct pair *p = &r->cur;

    if (!tls_ready(p) && !tls_setup(r, m))
        return 0;
    if (r->enc ? !get_param(p, OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN, TLS_EXPLICIT, NULL)
               : !set_octets(p, OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV, m->iv + 4, TLS_EXPLICIT))
        return 0;
    if (p->ok) {
        memcpy(p->iv, p->fixed, 4);
        memcpy(p->iv + 4, m->iv + 4, TLS_EXPLICIT);
        new_nonce(p);
    }
    return 1;
}

/* CCM: the lengths before the key, or after it (which ccree refuses). */
static int reinit(struct run *r, const struct msg *m)
{
    struct pair *p = &r->cur;
    const unsigned char *key = m->reinit == KEY_IV || m->reinit == KEY_ONLY ? r->key : NULL;
    const unsigned char *iv = m->reinit == KEY_IV || m->reinit == IV_ONLY ? m->iv : NULL;
    int ccm_lens = !r->gcm && (key != NULL || (m->flags & LENS_LATE));
    int late = m->flags & LENS_LATE;

    if (m->reinit == NONCE_PARAM)
        return nonce_param(r, m);
    if (((r->gcm && iv != NULL) || (ccm_lens && !late)) && !set_ivlen(p, m->ivlen))
        return 0;
    if (ccm_lens && !late && !set_tag(p, NULL, m->taglen))
        return 0;
    if (!init(p, key, iv))
        return 0;
    return !(ccm_lens && late) || (set_ivlen(p, m->ivlen) && set_tag(p, NULL, m->taglen));
}

/* The message after its nonce: tag, length, AAD, data, tag, final, IV and tag read back. */
static int body(struct run *r, const struct msg *m)
{
    const unsigned char *aad = m->aad, *in = m->plain;
    size_t gcm_tag = m->taglen;

    if (!r->gcm && r->enc) { /* what a stale default context may fail to give (fuzz_model.c) */
        struct msg took = *m; /* CCM takes the last AAD update, and the data update of the */
        size_t a0 = m->flags & SPLIT_AAD ? first_piece(m->aadlen) : 0; /* length announced */

        took.flags &= ~TAMPER; /* a decryption's only */
        if ((m->flags & SPLIT_DATA) && (m->flags & NO_LENGTH) && m->aadlen == 0)
            took.len = first_piece(m->len); /* none announced: the first */
        seal(r, &took, r->cur.iv, r->cur.ivlen, r->cur.taglen, m->aad + a0, m->aadlen - a0);
    }
    if (!r->enc) {
        seal(r, m, r->cur.iv, r->cur.ivlen, r->gcm ? 16 : m->taglen, m->aad, m->aadlen);
        if (tampered(m) == 2) {
            aad = memcpy(aadx, m->aad, m->aadlen);
            aadx[0] ^= 1;
        }
        in = ct;
    }
    if (!r->enc && (!r->gcm || !(m->flags & TAG_AFTER)) && !set_tag(&r->cur, tag, gcm_tag))
        return 0;
    if (!r->gcm && !((m->flags & NO_LENGTH) && m->aadlen == 0)
        && !update(&r->cur, CALL_AAD, NULL, m->len, 0, NULL))
        return 0;
    if (!copy_at(r, m, 0)
        || (m->aadlen > 0
            && !in_pieces(&r->cur, CALL_AAD, aad, m->aadlen, m->flags, m->flags & SPLIT_AAD, NULL))
        || !copy_at(r, m, 1)
        || !in_pieces(&r->cur, CALL_DATA, in, m->len, m->flags, m->flags & SPLIT_DATA,
                      r->enc ? ct : m->plain)
        || (!r->enc && r->gcm && (m->flags & TAG_AFTER) && !set_tag(&r->cur, tag, gcm_tag))
        || !copy_at(r, m, 2) || !update(&r->cur, CALL_FINAL, NULL, 0, m->flags, NULL)
        || !copy_at(r, m, 3)
        || (r->cur.sealed
            && !get_param(&r->cur, OSSL_CIPHER_PARAM_UPDATED_IV, r->cur.ivlen, NULL)))
        return 0;
    /* the IV and tag of a message whose final failed are stale on both sides (and differ) */
    return !r->enc || !r->cur.sealed
           || get_param(&r->cur, OSSL_CIPHER_PARAM_AEAD_TAG, r->gcm ? gcm_tag : r->cur.taglen,
                        r->gcm ? NULL : tag);
}

/* TLS 1.2: explicit nonce || payload || tag, in place, after tlsaad. */
static int tls12(struct run *r, const struct msg *m)
{
    static unsigned char rec[2][TLS_MAXREC * 4 + 64];
    struct pair *p = &r->cur;
    size_t plen = m->len % (TLS_MAXREC + 64), taglen, reclen, alen;
    struct call c = { .kind = CALL_DATA, .what = "TLS record", .inplace = 1, .record = 1 };
    unsigned char ad[TLS_AAD], nonce[12];
    int i, k;

    if (!tls_ready(p) && !tls_setup(r, m))
        return 0;
    taglen = r->gcm ? 16 : p->taglen;
    reclen = plen + TLS_EXPLICIT + taglen;
    alen = plen + TLS_EXPLICIT + (r->enc ? 0 : taglen);
    for (k = 0; k < 8; k++)
        ad[k] = (unsigned char)(p->seq >> (56 - 8 * k));
    ad[8] = 23, ad[9] = 3, ad[10] = 3;
    ad[11] = (unsigned char)(plen >> 8), ad[12] = (unsigned char)plen;
    if (!r->enc) { /* sealed as the peer would: nonce = fixed || explicit, AAD with plen */
        memcpy(nonce, p->fixed, 4);
        memcpy(nonce + 4, m->iv + 4, TLS_EXPLICIT);
        seal(r, &(struct msg){ .plain = m->plain, .len = plen, .flags = m->flags,
                               .tamper = m->tamper }, nonce, 12, taglen, ad, TLS_AAD);
    }
    ad[11] = (unsigned char)(alen >> 8), ad[12] = (unsigned char)alen;
    p->seq++;
    if (!set_octets(p, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, ad, TLS_AAD))
        return 0;
    if (p->ok) {
        new_nonce(p);
        p->ccm_records = !r->gcm;
    }
    if (!get_param(p, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, 0, NULL))
        return 0;
    c.inlen = plen;
    c.plain = r->enc ? NULL : m->plain;
    c.expect = r->enc || tampered(m) >= 0 ? NULL : m->plain;
    c.outlen = r->enc ? reclen : plen;
    note(" %srecord%zu", m->flags & USE_CIPHER ? "EVP_Cipher " : "", plen);
    LOCKSTEP(&p->s, &c, i, int n = -1; unsigned char *b = rec[i];
             memcpy(b, m->iv + 4, TLS_EXPLICIT);
             memcpy(b + TLS_EXPLICIT, r->enc ? m->plain : ct, plen);
             memcpy(b + TLS_EXPLICIT + plen, tag, r->enc ? 0 : taglen);
             c.r[i] = m->flags & USE_CIPHER ? (n = EVP_Cipher(p->ctx[i], b, b, (unsigned)reclen)) >= 0
                                            : EVP_CipherUpdate(p->ctx[i], b, &n, b, (int)reclen);
             c.n[i] = (size_t)n; c.out[i] = r->enc ? b : plen ? b + TLS_EXPLICIT : NULL);
    return go(p, &c);
}

/* The message's bytes from the input; TLS 1.3 records as libssl makes them. */
static void parse(struct run *r, struct input *in, struct msg *m, int first)
{
    unsigned b0 = take(in, 1), b1 = take(in, 1), b2 = take(in, 1), b3 = take(in, 1);

    m->kind = (enum kind)(b0 & 3);
    m->reinit = first ? KEY_IV : (enum reinit)(b0 >> 2 & 3);
    m->copy_at = b0 >> 4 & 7; /* 0 to 3: a copy at that point; else none */
    m->swap = b0 >> 7;
    m->flags = b1;
    m->ivlen = (r->gcm ? gcm_ivlens : ccm_ivlens)[b2 & 15];
    m->taglen = (r->gcm ? gcm_taglens : ccm_taglens)[b2 >> 4];
    m->tamper = b3 % 3;
    m->tls_whole = b3 >> 2 & 1;
    m->tls_tag8 = b3 >> 3 & 1;
    m->aad = fuzz_src + (b3 >> 4);
    m->plain = fuzz_src + 16 + (b3 >> 4) * 3;
    m->aadlen = length(in);
    m->len = length(in);
    bytes(in, m->iv, 12);
    memcpy(m->iv + 12, fuzz_src + 1000, sizeof(m->iv) - 12);
    fault_choose(in);
    if (m->kind == TLS13) {
        m->reinit = first ? KEY_IV : IV_ONLY;
        m->flags = (m->flags & (TAMPER | USE_CIPHER)) | INPLACE;
        m->aadlen = 5;
        m->ivlen = 12;
        m->taglen = 16;
    }
    if (m->kind == IVGEN && r->gcm && !first)
        m->reinit = NONCE_PARAM;
}

static int message(struct run *r, struct input *in, int first)
{
    struct msg m;

    parse(r, in, &m, first);
    note(" |");
    if (m.kind == TLS12 || (m.kind == IVGEN && !r->gcm))
        return tls12(r, &m);
    return reinit(r, &m) && (!first || r->cur.ok) && body(r, &m);
}

static void pair_free(struct pair *p)
{
    EVP_CIPHER_CTX_free(p->ctx[0]);
    EVP_CIPHER_CTX_free(p->ctx[1]);
}

void run_aead(EVP_CIPHER *const cipher[2], struct input *in)
{
    struct run r = { .cipher = cipher };
    int i, k;

    r.gcm = EVP_CIPHER_get_mode(cipher[1]) == EVP_CIPH_GCM_MODE;
    r.enc = take(in, 1) & 1;
    r.keylen = (size_t)EVP_CIPHER_get_key_length(cipher[1]);
    bytes(in, r.key, sizeof(r.key));
    r.cur.s = (struct state){ .aead = 1, .gcm = r.gcm, .enc = r.enc };
    r.cur.ivlen = r.cur.kivlen = r.gcm ? 12 : 7;
    r.cur.taglen = r.cur.ktaglen = r.gcm ? 16 : 12;
    note(" %s", r.enc ? "enc" : "dec");
    for (i = 0; i < 2; i++)
        if ((r.cur.ctx[i] = EVP_CIPHER_CTX_new()) == NULL
            || !EVP_CipherInit_ex2(r.cur.ctx[i], cipher[i], NULL, NULL, r.enc, NULL))
            fuzz_die("cannot make an AEAD context");
    for (k = 0; k < MAXMSG && in->n > 0 && message(&r, in, k == 0); k++)
        ;
    pair_free(&r.cur);
    pair_free(&r.alt);
}
