/*
 * Block ciphers in ECB, CBC, CTR, XTS and CBC-CTS mode. The context owns the state (key, IV or
 * counter, partial block, CTR keystream), so each request can go to the kernel or to the
 * default provider on its own. XTS and CBC-CTS take each update as one whole message.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include <openssl/prov_ssl.h>

#include "prov.h"

#define MAXBLK 16
#define XTS_UNIT_MAX (1 << 24) /* the default provider's data unit limit: 2^20 blocks */

enum { CS1, CS2, CS3 }; /* cts_mode: kernel's cts(cbc(aes)) is CS3 */
static const char *const cts_names[] = { OSSL_CIPHER_CTS_MODE_CS1, OSSL_CIPHER_CTS_MODE_CS2,
                                         OSSL_CIPHER_CTS_MODE_CS3 };

struct cipher_ctx {
    struct ccree_prov *prov;
    size_t idx;
    const struct ccree_alg *alg;
    size_t bs; /* the cipher's block: 8 or 16 bytes */
    int enc, pad, keyed, iv_set;
    int cts_mode, updated; /* CBC-CTS: one update per init */
    unsigned char key[64];
    unsigned char oiv[MAXBLK], iv[MAXBLK]; /* iv: next IV or counter, unless sw_iv */
    unsigned char buf[MAXBLK];             /* ECB/CBC: partial or held-back block */
    size_t bufsz;
    unsigned char ks[MAXBLK]; /* CTR: keystream of the current block, used up to num */
    unsigned int num;
    unsigned int tls_version;  /* TLS record mode (ECB and CBC) when not 0 */
    size_t tls_macsize, tls_maclen;
    unsigned char tls_mac[EVP_MAX_MD_SIZE]; /* the MAC of the last record decrypted */
    struct ccree_sock op;
    int kernel_off; /* the kernel failed this key: software until the next key */
    EVP_CIPHER_CTX *sw;
    int sw_keyed, sw_enc, sw_iv; /* sw_iv: the software context holds the current IV */
};

/* One segment list describes a request: input pre || in || zero block, output out || ks. */
struct seg {
    unsigned char *p;
    size_t n;
};

static int slice(const struct seg *s, int ns, size_t off, size_t len, struct iovec *iov)
{
    int i, k = 0;

    for (i = 0; i < ns && len > 0; i++) {
        size_t take;

        if (off >= s[i].n) {
            off -= s[i].n;
            continue;
        }
        take = s[i].n - off < len ? s[i].n - off : len;
        iov[k].iov_base = s[i].p + off;
        iov[k++].iov_len = take;
        len -= take;
        off = 0;
    }
    return k;
}

static void gather(const struct seg *s, int ns, size_t off, unsigned char *dst, size_t len)
{
    struct iovec iov[3];
    int i, k = slice(s, ns, off, len, iov);

    for (i = 0; i < k; dst += iov[i++].iov_len)
        memcpy(dst, iov[i].iov_base, iov[i].iov_len);
}

static void ctr_add(unsigned char *ctr, size_t len, size_t blocks)
{
    size_t i;

    for (i = len; i-- > 0 && blocks != 0; blocks >>= 8) {
        blocks += ctr[i];
        ctr[i] = (unsigned char)blocks;
    }
}

static int is_cts(const struct cipher_ctx *c)
{
    return (c->alg->flags & EVP_CIPH_FLAG_CTS) != 0;
}

/* The software context gives up the IV it holds. */
static int sync_iv(struct cipher_ctx *c)
{
    if (c->sw_iv && c->alg->ivlen
        && !EVP_CIPHER_CTX_get_updated_iv(c->sw, c->iv, c->alg->ivlen)) {
        CCREE_RAISE(c->prov, CCREE_R_SOFTWARE, "cannot read the software IV");
        return 0;
    }
    c->sw_iv = 0;
    return 1;
}

static int kernel_ready(struct cipher_ctx *c)
{
    int fd;

    if (ccree_sock_valid(&c->op))
        return 1;
    fd = ccree_open(c->prov, c->idx, c->key, c->alg->keylen, 0, ccree_whole(c->idx));
    if (fd < 0)
        return fd;
    ccree_sock_set(&c->op, fd);
    return 1;
}

/* The IV after n more bytes from off: CBC's last ciphertext block, CTR's counter. */
static void next_iv(struct cipher_ctx *c, const struct seg *is, const struct seg *os, size_t off,
                    size_t n)
{
    if (n > 0 && c->alg->mode == EVP_CIPH_CBC_MODE)
        gather(c->enc ? os : is, c->enc ? 2 : 3, off + n - c->bs, c->iv, c->bs);
    else if (c->alg->mode == EVP_CIPH_CTR_MODE)
        ctr_add(c->iv, c->alg->ivlen, n / c->bs);
}

/*
 * Kernel requests of at most AFALG_MAX_REQUEST bytes; *done counts what came back right, and
 * *sent whether the failed request may have written past it.
 */
static int kernel_run(struct cipher_ctx *c, const struct seg *is, const struct seg *os,
                      size_t total, size_t *done, int *sent)
{
    size_t off, n, bs = c->bs;
    int err = 0;

    for (off = 0; off < total; off += n) {
        struct iovec in[3], out[2];
        unsigned char last[MAXBLK];
        struct afalg_req r = { .enc = c->enc, .iv = c->iv, .ivlen = c->alg->ivlen, .in = in,
                               .out = out, .unit = bs };

        n = total - off < AFALG_MAX_REQUEST ? total - off : AFALG_MAX_REQUEST;
        r.nin = slice(is, 3, off, n, in);
        r.nout = slice(os, 2, off, n, out);
        r.inlen = r.outlen = n;
        if (c->alg->mode == EVP_CIPH_CBC_MODE && !c->enc)
            gather(is, 3, off + n - bs, last, bs); /* before an in-place request overwrites it */
        err = afalg_cipher(c->op.fd, &r);
        if (err != 0) { /* what came back right stays; the IV moves past it */
            next_iv(c, is, os, off, r.done);
            ccree_count(c->idx, 0, r.done > 0, r.done);
            off += r.done;
            *sent = r.sent;
            break;
        }
        if (c->alg->mode == EVP_CIPH_CBC_MODE && !c->enc)
            memcpy(c->iv, last, bs);
        else
            next_iv(c, is, os, off, n);
        ccree_count(c->idx, 0, 1, n);
    }
    *done = off;
    return err;
}

static int sw_update(struct cipher_ctx *c, unsigned char *out, const unsigned char *in, size_t len)
{
    int n;

    for (; len > 0; in += n, out += n, len -= n) {
        /* whole blocks a call; a CTS or XTS message (at most INT_MAX) in one */
        n = len > INT_MAX ? INT_MAX & ~(MAXBLK - 1) : (int)len;
        if (!EVP_CipherUpdate(c->sw, out, &n, in, n))
            return 0;
    }
    return 1;
}

/* The software context set up anew for this key, direction and IV. */
static int sw_init(struct cipher_ctx *c)
{
    unsigned int zero = 0;
    OSSL_PARAM params[] = { OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, &zero),
                            OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE,
                                                   (char *)cts_names[c->cts_mode], 0),
                            OSSL_PARAM_END };
    int rekey = !c->sw_keyed || c->sw_enc != c->enc;

    if (!is_cts(c))
        params[1] = OSSL_PARAM_construct_end();
    if (c->sw == NULL && (c->sw = EVP_CIPHER_CTX_new()) == NULL)
        return 0;
    c->sw_keyed = EVP_CipherInit_ex2(c->sw, rekey ? c->prov->sw_cipher[c->idx] : NULL,
                                     rekey ? c->key : NULL, c->alg->ivlen ? c->iv : NULL, c->enc,
                                     params);
    c->sw_enc = c->enc;
    return c->sw_iv = c->sw_keyed;
}

/* The software context ready for this key, direction and IV. */
static int sw_ready(struct cipher_ctx *c)
{
    return (c->sw_iv && c->sw_keyed && c->sw_enc == c->enc) || sw_init(c);
}

static int sw_run(struct cipher_ctx *c, const struct seg *is, const struct seg *os, size_t off)
{
    size_t total = 0;
    int i, ok = sw_ready(c);

    /* off: what the kernel already did; the input segments line up with the output ones. */
    for (i = 0; ok && i < 3; i++) {
        size_t skip = off < is[i].n ? off : is[i].n;
        unsigned char *o = i < 2 ? os[0].p + (i ? is[0].n : 0) : os[1].p;

        off -= skip;
        if (skip == is[i].n) /* done, or empty (its pointers may be NULL) */
            continue;
        ok = sw_update(c, o + skip, is[i].p + skip, is[i].n - skip);
        total += is[i].n - skip;
    }
    if (!ok) {
        CCREE_RAISE(c->prov, CCREE_R_SOFTWARE, "%s in the default provider", c->alg->kname);
        return 0;
    }
    ccree_count(c->idx, 1, 1, total);
    return 1;
}

/*
 * A request the policy sends to the kernel: 1 done, 0 it failed and software takes over, -1
 * it failed and software may not.
 */
static int in_kernel(struct cipher_ctx *c, struct ccree_choice *ch,
                     int (*run)(struct cipher_ctx *, void *, int *), void *arg)
{
    int err, clobbered = 0;

    if ((err = kernel_ready(c)) > 0) {
        if (!sync_iv(c))
            return -1;
        ccree_start(ch);
        if ((err = run(c, arg, &clobbered)) == 0) {
            ccree_ran(c->prov, ch);
            return 1;
        }
        ccree_sock_close(&c->op); /* its state is unknown now */
    }
    if (!ccree_kernel_failed(c->prov, c->idx, err, clobbered))
        return -1;
    c->kernel_off = 1;
    return 0;
}

/* The path of a request of len bytes: 1 the kernel, 0 software. */
static int choose(struct cipher_ctx *c, size_t len, struct ccree_choice *ch)
{
    if (!c->kernel_off)
        return ccree_choose(c->prov, c->idx, len, ch);
    *ch = (struct ccree_choice){ .kernel = 0 };
    return 0;
}

struct request {
    const struct seg *is, *os;
    size_t total, done;
};

/* Only the caller's input can be overwritten: pre and the zero block are the context's. */
static int run_request(struct cipher_ctx *c, void *arg, int *clobbered)
{
    struct request *r = arg;
    int sent = 0, err = kernel_run(c, r->is, r->os, r->total, &r->done, &sent);

    *clobbered = sent && ccree_overlap(r->is[1].p, r->is[1].n, r->os[0].p, r->os[0].n);
    return err;
}

/* pre || in to out, and ks when given, in software; the kernel did none of it. */
static int sw_process(struct cipher_ctx *c, struct ccree_choice *ch, unsigned char *out,
                      const unsigned char *pre, size_t prelen, const unsigned char *in,
                      size_t inlen, unsigned char *ks)
{
    static const unsigned char zero[MAXBLK];

    ccree_start(ch);
    if (!sw_ready(c) || (prelen > 0 && !sw_update(c, out, pre, prelen))
        || (inlen > 0 && !sw_update(c, out + prelen, in, inlen))
        || (ks != NULL && !sw_update(c, ks, zero, c->bs))) {
        CCREE_RAISE(c->prov, CCREE_R_SOFTWARE, "%s in the default provider", c->alg->kname);
        return 0;
    }
    ccree_ran(c->prov, ch);
    ccree_count(c->idx, 1, 1, prelen + inlen + (ks ? c->bs : 0));
    return 1;
}

/*
 * Runs pre || in (whole blocks) into out and, for CTR when ks is given, one more keystream
 * block into ks: in the kernel when the policy says so, otherwise (or for what the kernel
 * failed to do) in the default provider.
 */
static int process(struct cipher_ctx *c, unsigned char *out, const unsigned char *pre, size_t prelen,
                   const unsigned char *in, size_t inlen, unsigned char *ks)
{
    static unsigned char zero[MAXBLK];
    size_t total = prelen + inlen + (ks ? c->bs : 0);
    struct ccree_choice ch;
    int k;

    if (total == 0)
        return 1;
    if (choose(c, total, &ch)) {
        const struct seg is[3] = { { (unsigned char *)pre, prelen },
                                   { (unsigned char *)in, inlen },
                                   { zero, ks ? c->bs : 0 } };
        const struct seg os[2] = { { out, prelen + inlen }, { ks, ks ? c->bs : 0 } };
        struct request r = { is, os, total, 0 };

        if ((k = in_kernel(c, &ch, run_request, &r)) != 0)
            return k > 0;
        if (r.done > 0)
            return sw_run(c, is, os, r.done);
        ch.timed = 0;
    }
    return sw_process(c, &ch, out, pre, prelen, in, inlen, ks);
}

/*
 * CBC-CTS in the kernel: cts(cbc(aes)) is CS3, ... || Cn || C(n-1)*. CS1, and CS2 on whole
 * blocks, put C(n-1)* first: the last two pieces are swapped on their way in or out. The next
 * IV is Cn, as in the default provider.
 */
struct unit {
    unsigned char *out;
    const unsigned char *in;
    size_t len;
};

static int run_unit(struct cipher_ctx *c, void *arg, int *clobbered)
{
    struct unit *u = arg;
    size_t r = u->len % 16 ? u->len % 16 : 16, head = u->len > 16 ? u->len - r - 16 : 0;
    int swap = is_cts(c) && u->len > 16 && (c->cts_mode == CS1 || (c->cts_mode == CS2 && r == 16));
    struct iovec plain[3] = { { (void *)u->in, u->len } }, cs3[3] = { { u->out, u->len } };
    struct iovec *in = c->enc ? plain : cs3, *out = c->enc ? cs3 : plain;
    /* one message: a short answer is no prefix of it (unit 0) */
    struct afalg_req rq = { .enc = c->enc, .iv = c->iv, .ivlen = c->alg->ivlen, .in = in,
                            .nin = 1, .inlen = u->len, .out = out, .nout = 1, .outlen = u->len };
    const unsigned char *cn;
    unsigned char next[16];
    int err;

    if (!c->enc) { /* the ciphertext is in and the plaintext out */
        plain[0].iov_base = u->out;
        cs3[0].iov_base = (void *)u->in;
    }
    if (swap) {
        unsigned char *ct = cs3[0].iov_base;

        cs3[0].iov_len = head;
        cs3[1] = (struct iovec){ ct + head + r, 16 };
        cs3[2] = (struct iovec){ ct + head, r };
        *(c->enc ? &rq.nout : &rq.nin) = 3;
    }
    cn = (const unsigned char *)cs3[0].iov_base + (swap ? head + r : head);
    if (is_cts(c) && !c->enc)
        memcpy(next, cn, 16); /* before an in-place request overwrites it */
    err = afalg_cipher(c->op.fd, &rq);
    *clobbered = rq.sent && ccree_overlap(u->in, u->len, u->out, u->len);
    if (err == 0 && is_cts(c))
        memcpy(c->iv, c->enc ? cn : next, 16);
    if (err == 0)
        ccree_count(c->idx, 0, 1, u->len);
    return err;
}

/* XTS and CBC-CTS: one update is one message, in one kernel request where it fits. */
static int unit_update(struct cipher_ctx *c, unsigned char *out, const unsigned char *in, size_t inl)
{
    struct unit u = { out, in, inl };
    struct ccree_choice ch;
    int k;

    if (c->updated) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_STATE, "%s takes one update per init", c->alg->kname);
        return 0;
    }
    if (c->alg->mode == EVP_CIPH_XTS_MODE && !c->iv_set) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_STATE, "%s: no IV (tweak) set", c->alg->kname);
        return 0;
    }
    if (inl < 16 || inl > (c->alg->mode == EVP_CIPH_XTS_MODE ? XTS_UNIT_MAX : INT_MAX)) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_LENGTH, "%s: %zu bytes", c->alg->kname, inl);
        return 0;
    }
    k = 0; /* 1 done, -1 failed, 0 not yet: software */
    if (inl > AFALG_MAX_REQUEST) { /* more than one kernel request can take */
        if (!c->prov->fallback) {
            CCREE_RAISE(c->prov, CCREE_R_NOT_OFFLOADED, "%s: %zu bytes in one message",
                        c->alg->kname, inl);
            return 0;
        }
        ch = (struct ccree_choice){ .kernel = 0 };
    } else if (choose(c, inl, &ch) && (k = in_kernel(c, &ch, run_unit, &u)) == 0) {
        ch.timed = 0;
    }
    if (k == 0)
        k = sw_process(c, &ch, out, NULL, 0, in, inl, NULL) ? 1 : -1;
    c->updated = is_cts(c) && k > 0; /* a failed update does not count */
    return k > 0;
}

static void *cipher_dupctx(void *vctx)
{
    struct cipher_ctx *c = vctx, *d = OPENSSL_malloc(sizeof(*d));

    if (d == NULL)
        return NULL;
    *d = *c;
    ccree_sock_init(&d->op);
    if (c->sw != NULL
        && ((d->sw = EVP_CIPHER_CTX_new()) == NULL || !EVP_CIPHER_CTX_copy(d->sw, c->sw))) {
        EVP_CIPHER_CTX_free(d->sw);
        OPENSSL_clear_free(d, sizeof(*d));
        return NULL;
    }
    return d;
}

static void cipher_freectx(void *vctx)
{
    struct cipher_ctx *c = vctx;

    if (c == NULL)
        return;
    ccree_sock_close(&c->op);
    EVP_CIPHER_CTX_free(c->sw);
    OPENSSL_clear_free(c, sizeof(*c));
}

static int cipher_set_ctx_params(void *vctx, const OSSL_PARAM params[]);

static int set_key(struct cipher_ctx *c, const unsigned char *key, size_t keylen, int enc)
{
    size_t half = keylen / 2;

    if (keylen != c->alg->keylen) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_KEY_LENGTH, "%zu bytes, %s takes %zu", keylen,
                    c->alg->kname, c->alg->keylen);
        return 0;
    }
    /* As the default provider: XTS encrypts only with two different key halves. */
    if (c->alg->mode == EVP_CIPH_XTS_MODE && enc && CRYPTO_memcmp(key, key + half, half) == 0) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_KEY_LENGTH, "%s: the two halves of the key are equal",
                    c->alg->kname);
        return 0;
    }
    if (c->keyed && CRYPTO_memcmp(c->key, key, keylen) == 0)
        return 1; /* the same key: the kernel socket and the software context stay */
    memcpy(c->key, key, keylen);
    c->keyed = 1;
    c->sw_keyed = 0;
    c->kernel_off = 0;
    ccree_sock_close(&c->op);
    return 1;
}

static int cipher_init(struct cipher_ctx *c, const unsigned char *key, size_t keylen,
                       const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[], int enc)
{
    if (!ccree_check_path(c->prov, c->idx) || !sync_iv(c))
        return 0;
    /* As the default provider: the IV is taken before the key, which may be refused. */
    if (iv != NULL && c->alg->ivlen) {
        if (ivlen != c->alg->ivlen) {
            CCREE_RAISE(c->prov, CCREE_R_BAD_IV_LENGTH, "%zu bytes, %s takes %zu", ivlen,
                        c->alg->kname, c->alg->ivlen);
            return 0;
        }
        memcpy(c->oiv, iv, ivlen);
        memcpy(c->iv, iv, ivlen);
        c->iv_set = 1;
    } else if (c->alg->mode == EVP_CIPH_CBC_MODE && c->iv_set) {
        memcpy(c->iv, c->oiv, c->alg->ivlen); /* CBC restarts from the IV last given */
    }
    if (key != NULL && !set_key(c, key, keylen, enc))
        return 0;
    c->enc = enc;
    c->bufsz = 0;
    c->num = 0;
    c->updated = 0;
    return cipher_set_ctx_params(c, params);
}

static int cipher_einit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                        size_t ivlen, const OSSL_PARAM params[])
{
    return cipher_init(vctx, key, keylen, iv, ivlen, params, 1);
}

static int cipher_dinit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                        size_t ivlen, const OSSL_PARAM params[])
{
    return cipher_init(vctx, key, keylen, iv, ivlen, params, 0);
}

/* A key is set, and in and inl are a buffer a caller can mean (EVP turns a negative int huge). */
static int usable(struct cipher_ctx *c, const unsigned char *in, size_t inl)
{
    if (in == NULL && inl > 0) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "%s: NULL input", c->alg->kname);
        return 0;
    }
    if (!c->keyed) {
        CCREE_RAISE(c->prov, CCREE_R_NO_KEY, "%s", c->alg->kname);
        return 0;
    }
    if (inl > SIZE_MAX / 2) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_LENGTH, "%s: %zu bytes", c->alg->kname, inl);
        return 0;
    }
    return 1;
}

/*
 * Output running ahead bytes ahead of its input must not overwrite input before it is read
 * (OpenSSL's legacy EVP refused it; the default provider then works on overwritten input).
 */
static int apart(struct cipher_ctx *c, const unsigned char *out, size_t ahead,
                 const unsigned char *in, size_t inl)
{
    if (inl == 0 || (uintptr_t)out + ahead <= (uintptr_t)in || (uintptr_t)out >= (uintptr_t)in + inl)
        return 1;
    CCREE_RAISE(c->prov, CCREE_R_OVERLAP, "%s: output %td bytes ahead of the input", c->alg->kname,
                out + ahead - in);
    return 0;
}

static int room(struct cipher_ctx *c, const unsigned char *out, size_t need, size_t outsize)
{
    if (out == NULL && need > 0) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "%s: NULL output", c->alg->kname);
        return 0;
    }
    if (need <= outsize)
        return 1;
    CCREE_RAISE(c->prov, CCREE_R_OUTPUT_TOO_SMALL, "%zu bytes for %zu", outsize, need);
    return 0;
}

/* CTR: the rest of the current keystream block, then whole blocks, then a partial one. */
static int ctr_update(struct cipher_ctx *c, unsigned char *out, const unsigned char *in, size_t inl)
{
    size_t i, head = 0, whole, tail, bs = c->bs;

    for (; c->num != 0 && head < inl; head++, c->num = (c->num + 1) % bs)
        out[head] = in[head] ^ c->ks[c->num];
    whole = (inl - head) & ~(bs - 1);
    tail = inl - head - whole;
    if (!process(c, out + head, NULL, 0, in + head, whole, tail ? c->ks : NULL))
        return 0;
    for (i = 0; i < tail; i++)
        out[head + whole + i] = in[head + whole + i] ^ c->ks[i];
    c->num = (c->num + tail) % bs;
    return 1;
}

/* ECB/CBC: as OpenSSL's block_update, holding back the last block of a padded decrypt. */
static int block_update(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                        const unsigned char *in, size_t inl)
{
    size_t take = 0, pre = 0, next, bs = c->bs;

    if (c->bufsz != 0 && inl > 0) {
        take = bs - c->bufsz < inl ? bs - c->bufsz : inl;
        memcpy(c->buf + c->bufsz, in, take);
        c->bufsz += take;
        in += take;
        inl -= take;
    }
    next = inl & ~(bs - 1);
    if (c->bufsz == bs && (c->enc || inl > 0 || !c->pad))
        pre = bs;
    if (next > 0 && !c->enc && c->pad && next == inl)
        next -= bs;
    if (!room(c, out, pre + next, outsize) || !process(c, out, c->buf, pre, in, next, NULL))
        return 0;
    if (pre)
        c->bufsz = 0;
    if (inl > next) {
        memcpy(c->buf + c->bufsz, in + next, inl - next);
        c->bufsz += inl - next;
    }
    *outl = pre + next;
    return 1;
}

/*
 * A TLS record: one update, in place. Encryption pads it; decryption takes off the explicit IV,
 * then the padding and the MAC, which the tls-mac param returns (provider/tlscbc.c).
 */
static int tls_record(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                      const unsigned char *in, size_t inl)
{
    int explicit = ccree_tls_explicit_iv((int)c->tls_version);
    size_t bs = c->bs, pad = bs - inl % bs, iv = explicit > 0 ? bs : 0;

    if (in == NULL || out != in || !c->pad || outsize < inl + (c->enc ? pad : 0)) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "%s: a TLS record is one padded update in place",
                    c->alg->kname);
        return 0;
    }
    if (c->enc) {
        memset(out + inl, c->tls_version == SSL3_VERSION ? 0 : (int)pad - 1, pad - 1);
        out[inl + pad - 1] = (unsigned char)(pad - 1);
        inl += pad;
    }
    if (inl % bs != 0 || inl < iv || (!c->enc && explicit < 0)) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_LENGTH, "%s: TLS record of %zu bytes", c->alg->kname, inl);
        return 0;
    }
    c->tls_maclen = 0;
    if (!process(c, out, NULL, 0, in, inl, NULL))
        return 0;
    *outl = inl - (c->enc ? 0 : iv);
    if (c->enc)
        return 1;
    if (!ccree_tls_cbc_unpad((int)c->tls_version, out + iv, outl, bs, c->tls_macsize, c->tls_mac,
                             c->prov->libctx)) {
        *outl = 0;
        CCREE_RAISE(c->prov, CCREE_R_BAD_DECRYPT, "%s: TLS record", c->alg->kname);
        return 0;
    }
    c->tls_maclen = c->tls_macsize;
    return 1;
}

static int cipher_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                         const unsigned char *in, size_t inl)
{
    struct cipher_ctx *c = vctx;

    *outl = 0;
    if (is_cts(c) && out == NULL) { /* as the default provider: the length it would write */
        *outl = inl;
        return 1;
    }
    if (c->tls_version && c->alg->blocksize > 1 && !is_cts(c))
        return usable(c, in, inl) && tls_record(c, out, outl, outsize, in, inl);
    /* a held-back block goes out once padding is off */
    if (!ccree_whole(c->idx) && inl == 0 && c->bufsz == 0)
        return 1;
    if (!usable(c, in, inl) || !apart(c, out, c->bufsz, in, inl))
        return 0;
    if (c->alg->blocksize > 1 && !is_cts(c))
        return block_update(c, out, outl, outsize, in, inl);
    if (!room(c, out, inl, outsize)
        || !(ccree_whole(c->idx) ? unit_update(c, out, in, inl) : ctr_update(c, out, in, inl)))
        return 0;
    *outl = inl;
    return 1;
}

static int cipher_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    struct cipher_ctx *c = vctx;
    unsigned char block[MAXBLK];
    unsigned int pad, bad, i, bs = (unsigned int)c->bs;

    *outl = 0;
    if (ccree_whole(c->idx)) /* as the default provider: nothing to finish, key or not */
        return 1;
    if (!usable(c, NULL, 0))
        return 0;
    if (c->alg->blocksize == 1 || (!c->pad && c->bufsz == 0))
        return 1;
    if (c->enc && c->pad) {
        memset(c->buf + c->bufsz, (int)(bs - c->bufsz), bs - c->bufsz);
        if (!room(c, out, bs, outsize) || !process(c, out, c->buf, bs, NULL, 0, NULL))
            return 0;
        c->bufsz = 0;
        *outl = bs;
        return 1;
    }
    if (c->bufsz != bs) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_LENGTH, "%s: %zu bytes left over", c->alg->kname, c->bufsz);
        return 0;
    }
    if (!process(c, block, c->buf, bs, NULL, 0, NULL))
        return 0;
    c->bufsz = 0;
    /* Padding checked in constant time; with padding off the held-back block goes out whole. */
    pad = c->pad ? block[bs - 1] : 0;
    bad = c->pad ? (unsigned int)((pad - 1) >> 8) | (unsigned int)((bs - pad) >> 8) : 0;
    for (i = 0; i < bs; i++) {
        unsigned int in_pad = (bs - 1 - i - pad) >> 8; /* low 24 bits set iff i >= bs - pad */

        bad |= in_pad & (block[i] ^ pad);
    }
    if (bad != 0) {
        OPENSSL_cleanse(block, bs);
        CCREE_RAISE(c->prov, CCREE_R_BAD_DECRYPT, "%s", c->alg->kname);
        return 0;
    }
    if (!room(c, out, bs - pad, outsize))
        return 0;
    memcpy(out, block, bs - pad);
    OPENSSL_cleanse(block, bs);
    *outl = bs - pad;
    return 1;
}

/* EVP_Cipher: whole blocks for ECB/CBC, no buffering or padding. */
static int cipher_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                         const unsigned char *in, size_t inl)
{
    struct cipher_ctx *c = vctx;

    *outl = 0;
    if (!usable(c, in, inl) || !apart(c, out, 0, in, inl))
        return 0;
    if (c->alg->blocksize > 1 && !is_cts(c) && inl % c->bs != 0) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_LENGTH, "%s: %zu bytes is not whole blocks",
                    c->alg->kname, inl);
        return 0;
    }
    if (!room(c, out, inl, outsize)
        || !(ccree_whole(c->idx) ? unit_update(c, out, in, inl)
             : c->alg->mode == EVP_CIPH_CTR_MODE ? ctr_update(c, out, in, inl)
                                                 : process(c, out, NULL, 0, in, inl, NULL)))
        return 0;
    *outl = inl;
    return 1;
}

int ccree_cipher_get_params(OSSL_PARAM params[], size_t idx)
{
    static const struct {
        const char *key;
        unsigned long flag;
    } flags[] = {
        { OSSL_CIPHER_PARAM_AEAD, EVP_CIPH_FLAG_AEAD_CIPHER },
        { OSSL_CIPHER_PARAM_CUSTOM_IV, EVP_CIPH_CUSTOM_IV },
        { OSSL_CIPHER_PARAM_CTS, EVP_CIPH_FLAG_CTS },
        { OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, EVP_CIPH_FLAG_TLS1_1_MULTIBLOCK },
        { OSSL_CIPHER_PARAM_HAS_RAND_KEY, EVP_CIPH_RAND_KEY },
    };
    const struct ccree_alg *a = &ccree_algs[idx];
    OSSL_PARAM *p;
    size_t i;

    for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if ((p = OSSL_PARAM_locate(params, flags[i].key)) != NULL
            && !OSSL_PARAM_set_int(p, (a->flags & flags[i].flag) != 0))
            return 0;
    return ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_MODE)) == NULL
            || OSSL_PARAM_set_uint(p, (unsigned int)a->mode))
           && ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_KEYLEN)) == NULL
               || OSSL_PARAM_set_size_t(p, a->keylen))
           && ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IVLEN)) == NULL
               || OSSL_PARAM_set_size_t(p, a->ivlen))
           && ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_BLOCK_SIZE)) == NULL
               || OSSL_PARAM_set_size_t(p, a->blocksize));
}

const OSSL_PARAM *ccree_cipher_gettable_params(void *provctx)
{
    static const OSSL_PARAM params[] = {
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_CTS, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, NULL),
        OSSL_PARAM_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, NULL),
        OSSL_PARAM_END,
    };

    (void)provctx;
    return params;
}

static int set_iv_param(OSSL_PARAM *p, const unsigned char *iv, size_t len)
{
    return p == NULL || OSSL_PARAM_set_octet_ptr(p, iv, len) || OSSL_PARAM_set_octet_string(p, iv, len);
}

/* A random key with DES's rules (odd parity, not weak), from the default or legacy provider. */
static int rand_key(struct cipher_ctx *c, OSSL_PARAM *p)
{
    OSSL_PARAM q[] = { *p, OSSL_PARAM_END };

    if (c->sw == NULL && (c->sw = EVP_CIPHER_CTX_new()) == NULL)
        return 0;
    if (!c->sw_keyed && !EVP_CipherInit_ex2(c->sw, c->prov->sw_cipher[c->idx], NULL, NULL, c->enc,
                                            NULL))
        return 0;
    if (!EVP_CIPHER_CTX_get_params(c->sw, q))
        return 0;
    p->return_size = q[0].return_size;
    return 1;
}

static int cipher_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    struct cipher_ctx *c = vctx;
    OSSL_PARAM *p;

    if (OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_UPDATED_IV) != NULL && !sync_iv(c))
        return 0;
    if (((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_KEYLEN)) != NULL
         && !OSSL_PARAM_set_size_t(p, c->alg->keylen))
        || ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IVLEN)) != NULL
            && !OSSL_PARAM_set_size_t(p, c->alg->ivlen))
        || ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_PADDING)) != NULL
            && !OSSL_PARAM_set_uint(p, (unsigned int)c->pad))
        || ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_NUM)) != NULL
            && !OSSL_PARAM_set_uint(p, c->num))
        || ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_CTS_MODE)) != NULL && is_cts(c)
            && !OSSL_PARAM_set_utf8_string(p, cts_names[c->cts_mode]))
        || ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_TLS_MAC)) != NULL
            && !OSSL_PARAM_set_octet_ptr(p, c->tls_mac, c->tls_maclen))
        || ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_RANDOM_KEY)) != NULL
            && (!(c->alg->flags & EVP_CIPH_RAND_KEY) || !rand_key(c, p)))
        || !set_iv_param(OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IV), c->oiv, c->alg->ivlen)
        || !set_iv_param(OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_UPDATED_IV), c->iv,
                         c->alg->ivlen)) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "cannot return a parameter");
        return 0;
    }
    return 1;
}

static int set_cts_mode(struct cipher_ctx *c, const OSSL_PARAM *p)
{
    const char *name = NULL;
    int i;

    if (OSSL_PARAM_get_utf8_string_ptr(p, &name))
        for (i = CS1; i <= CS3; i++)
            if (OPENSSL_strcasecmp(name, cts_names[i]) == 0) {
                c->cts_mode = i;
                return sync_iv(c); /* the software context takes the mode at its next start */
            }
    CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "cts_mode");
    return 0;
}

static int cipher_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    struct cipher_ctx *c = vctx;
    const OSSL_PARAM *p;
    unsigned int v;

    if (params == NULL)
        return 1;
    /*
     * The key length is fixed: refuse another, as OpenSSL's XTS and SIV do. After 3.0 (so in 3.5)
     * EVP_CIPHER_CTX_set_params keeps a KEYLEN that set_ctx_params accepted as the context's
     * key length, so one accepted and ignored would be what EVP_CIPHER_CTX_get_key_length says.
     */
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_KEYLEN)) != NULL) {
        size_t keylen;

        if (!OSSL_PARAM_get_size_t(p, &keylen) || keylen != c->alg->keylen) {
            CCREE_RAISE(c->prov, CCREE_R_BAD_KEY_LENGTH, "keylen: %s takes %zu bytes",
                        c->alg->kname, c->alg->keylen);
            return 0;
        }
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_PADDING)) != NULL) {
        if (!OSSL_PARAM_get_uint(p, &v)) {
            CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "padding");
            return 0;
        }
        c->pad = v != 0;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_NUM)) != NULL) {
        if (!OSSL_PARAM_get_uint(p, &v) || v >= c->bs) {
            CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "num");
            return 0;
        }
        c->num = c->alg->mode == EVP_CIPH_CTR_MODE ? v : 0;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_CTS_MODE)) != NULL && is_cts(c)
        && !set_cts_mode(c, p))
        return 0;
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_TLS_VERSION)) != NULL
        && !OSSL_PARAM_get_uint(p, &c->tls_version)) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "tls-version");
        return 0;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_TLS_MAC_SIZE)) != NULL
        && (!OSSL_PARAM_get_size_t(p, &c->tls_macsize) || c->tls_macsize > EVP_MAX_MD_SIZE)) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "tls-mac-size");
        return 0;
    }
    return 1;
}

static const OSSL_PARAM *cipher_gettable_ctx_params(void *cctx, void *provctx)
{
    static const OSSL_PARAM params[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
        OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_RANDOM_KEY, NULL, 0),
        OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC, NULL, 0),
        OSSL_PARAM_END,
    };

    (void)cctx;
    (void)provctx;
    return params;
}

static const OSSL_PARAM *cipher_settable_ctx_params(void *cctx, void *provctx)
{
    static const OSSL_PARAM params[] = {
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
        OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, NULL, 0),
        OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, NULL),
        OSSL_PARAM_END,
    };

    (void)cctx;
    (void)provctx;
    return params;
}

void *ccree_cipher_newctx(struct ccree_prov *p, size_t idx)
{
    struct cipher_ctx *c = OPENSSL_zalloc(sizeof(*c));

    if (c == NULL)
        return NULL;
    c->prov = p;
    c->idx = idx;
    c->alg = &ccree_algs[idx];
    c->bs = c->alg->blocksize > 1 ? c->alg->blocksize : c->alg->ivlen;
    c->pad = 1;
    ccree_sock_init(&c->op);
    return c;
}

typedef void (*fn)(void);
const OSSL_DISPATCH ccree_cipher_functions[] = {
    { OSSL_FUNC_CIPHER_ENCRYPT_INIT, (fn)cipher_einit },
    { OSSL_FUNC_CIPHER_DECRYPT_INIT, (fn)cipher_dinit },
    { OSSL_FUNC_CIPHER_UPDATE, (fn)cipher_update },
    { OSSL_FUNC_CIPHER_FINAL, (fn)cipher_final },
    { OSSL_FUNC_CIPHER_CIPHER, (fn)cipher_cipher },
    { OSSL_FUNC_CIPHER_FREECTX, (fn)cipher_freectx },
    { OSSL_FUNC_CIPHER_DUPCTX, (fn)cipher_dupctx },
    { OSSL_FUNC_CIPHER_GETTABLE_PARAMS, (fn)ccree_cipher_gettable_params },
    { OSSL_FUNC_CIPHER_GET_CTX_PARAMS, (fn)cipher_get_ctx_params },
    { OSSL_FUNC_CIPHER_SET_CTX_PARAMS, (fn)cipher_set_ctx_params },
    { OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, (fn)cipher_gettable_ctx_params },
    { OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, (fn)cipher_settable_ctx_params },
    { 0, NULL },
};
