/*
 * AES-ECB/CBC/CTR. The context owns the state (key, IV or counter, partial block, CTR
 * keystream), so each request can go to the kernel or to the default provider on its own.
 */
#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

#include "prov.h"

#define BLK 16

struct cipher_ctx {
    struct ccree_prov *prov;
    size_t idx;
    const struct ccree_alg *alg;
    int enc, pad, keyed;
    unsigned char key[32];
    unsigned char oiv[BLK], iv[BLK]; /* iv: next IV or counter, unless sw_iv */
    unsigned char buf[BLK];          /* ECB/CBC: partial or held-back block */
    size_t bufsz;
    unsigned char ks[BLK]; /* CTR: keystream of the current block, used up to num */
    unsigned int num;
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

static void gather(const struct seg *s, int ns, size_t off, unsigned char *dst)
{
    struct iovec iov[3];
    int i, k = slice(s, ns, off, BLK, iov);

    for (i = 0; i < k; dst += iov[i++].iov_len)
        memcpy(dst, iov[i].iov_base, iov[i].iov_len);
}

static void ctr_add(unsigned char *ctr, size_t blocks)
{
    int i;

    for (i = BLK - 1; i >= 0 && blocks != 0; i--, blocks >>= 8) {
        blocks += ctr[i];
        ctr[i] = (unsigned char)blocks;
    }
}

/* The software context gives up the IV it holds. */
static int sync_iv(struct cipher_ctx *c)
{
    if (c->sw_iv && c->alg->ivlen && !EVP_CIPHER_CTX_get_updated_iv(c->sw, c->iv, BLK)) {
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
    fd = afalg_open(CCREE_SKCIPHER, c->prov->path[c->idx].driver, c->key, c->alg->keylen, 0);
    if (fd < 0)
        return fd;
    ccree_sock_set(&c->op, fd);
    return 1;
}

/* Kernel requests of at most AFALG_MAX_REQUEST bytes; *done counts what was processed. */
static int kernel_run(struct cipher_ctx *c, const struct seg *is, const struct seg *os,
                      size_t total, size_t *done)
{
    size_t off, n;
    int err = 0;

    for (off = 0; off < total; off += n) {
        struct iovec in[3], out[2];
        unsigned char last[BLK];
        int ni, no;

        n = total - off < AFALG_MAX_REQUEST ? total - off : AFALG_MAX_REQUEST;
        ni = slice(is, 3, off, n, in);
        no = slice(os, 2, off, n, out);
        if (c->alg->mode == EVP_CIPH_CBC_MODE && !c->enc)
            gather(is, 3, off + n - BLK, last); /* before an in-place request overwrites it */
        err = afalg_cipher(c->op.fd, c->enc, c->iv, c->alg->ivlen, 0, in, ni, n, out, no, n);
        if (err != 0)
            break;
        if (c->alg->mode == EVP_CIPH_CBC_MODE && c->enc)
            gather(os, 2, off + n - BLK, c->iv);
        else if (c->alg->mode == EVP_CIPH_CBC_MODE)
            memcpy(c->iv, last, BLK);
        else if (c->alg->mode == EVP_CIPH_CTR_MODE)
            ctr_add(c->iv, n / BLK);
        ccree_count(c->idx, 0, 1, n);
    }
    *done = off;
    return err;
}

static int sw_update(struct cipher_ctx *c, unsigned char *out, const unsigned char *in, size_t len)
{
    int n;

    for (; len > 0; in += n, out += n, len -= n) {
        n = len > (1 << 30) ? 1 << 30 : (int)len;
        if (!EVP_CipherUpdate(c->sw, out, &n, in, n))
            return 0;
    }
    return 1;
}

static int sw_run(struct cipher_ctx *c, const struct seg *is, const struct seg *os, size_t off)
{
    unsigned int zero = 0;
    OSSL_PARAM nopad[] = { OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, &zero), OSSL_PARAM_END };
    const EVP_CIPHER *cipher = NULL;
    const unsigned char *key = NULL;
    size_t total = 0;
    int i, ok = 1;

    if (c->sw == NULL && (c->sw = EVP_CIPHER_CTX_new()) == NULL)
        ok = 0;
    else if (!c->sw_keyed || c->sw_enc != c->enc) {
        cipher = c->prov->sw_cipher[c->idx];
        key = c->key;
    }
    if (ok && (key != NULL || (!c->sw_iv && c->alg->ivlen))) {
        ok = EVP_CipherInit_ex2(c->sw, cipher, key, c->alg->ivlen ? c->iv : NULL, c->enc, nopad);
        c->sw_keyed = ok;
        c->sw_enc = c->enc;
    }
    c->sw_iv = ok;
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
 * Runs pre || in (whole blocks) into out and, for CTR when ks is given, one more keystream
 * block into ks: in the kernel when the policy says so, otherwise (or for what the kernel
 * failed to do) in the default provider.
 */
static int process(struct cipher_ctx *c, unsigned char *out, const unsigned char *pre, size_t prelen,
                   const unsigned char *in, size_t inlen, unsigned char *ks)
{
    static unsigned char zero[BLK];
    const struct seg is[3] = { { (unsigned char *)pre, prelen },
                               { (unsigned char *)in, inlen },
                               { zero, ks ? BLK : 0 } };
    const struct seg os[2] = { { out, prelen + inlen }, { ks, ks ? BLK : 0 } };
    size_t total = prelen + inlen + (ks ? BLK : 0), done = 0;
    int err;

    if (total == 0)
        return 1;
    if (!c->kernel_off && ccree_use_kernel(c->prov, c->idx, total)) {
        if ((err = kernel_ready(c)) > 0) {
            if (!sync_iv(c))
                return 0;
            if ((err = kernel_run(c, is, os, total, &done)) == 0)
                return 1;
            ccree_sock_close(&c->op); /* its state is unknown now */
        }
        c->kernel_off = 1;
        if (!ccree_kernel_failed(c->prov, c->idx, err))
            return 0;
    }
    return sw_run(c, is, os, done);
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

static int cipher_init(struct cipher_ctx *c, const unsigned char *key, size_t keylen,
                       const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[], int enc)
{
    if (!ccree_check_path(c->prov, c->idx) || !sync_iv(c))
        return 0;
    if (key != NULL) {
        if (keylen != c->alg->keylen) {
            CCREE_RAISE(c->prov, CCREE_R_BAD_KEY_LENGTH, "%zu bytes, %s takes %zu", keylen,
                        c->alg->kname, c->alg->keylen);
            return 0;
        }
        memcpy(c->key, key, keylen);
        c->keyed = 1;
        c->sw_keyed = 0;
        c->kernel_off = 0;
        ccree_sock_close(&c->op);
    }
    if (iv != NULL && c->alg->ivlen) {
        if (ivlen != c->alg->ivlen) {
            CCREE_RAISE(c->prov, CCREE_R_BAD_IV_LENGTH, "%zu bytes, %s takes %zu", ivlen,
                        c->alg->kname, c->alg->ivlen);
            return 0;
        }
        memcpy(c->oiv, iv, BLK);
        memcpy(c->iv, iv, BLK);
    } else if (c->alg->mode == EVP_CIPH_CBC_MODE) {
        memcpy(c->iv, c->oiv, BLK); /* as the default provider: CBC restarts from its IV */
    }
    c->enc = enc;
    c->bufsz = 0;
    c->num = 0;
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
    size_t i, head = 0, whole, tail;

    for (; c->num != 0 && head < inl; head++, c->num = (c->num + 1) % BLK)
        out[head] = in[head] ^ c->ks[c->num];
    whole = (inl - head) & ~(size_t)(BLK - 1);
    tail = inl - head - whole;
    if (!process(c, out + head, NULL, 0, in + head, whole, tail ? c->ks : NULL))
        return 0;
    for (i = 0; i < tail; i++)
        out[head + whole + i] = in[head + whole + i] ^ c->ks[i];
    c->num = (c->num + tail) % BLK;
    return 1;
}

/* ECB/CBC: as OpenSSL's block_update, holding back the last block of a padded decrypt. */
static int block_update(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                        const unsigned char *in, size_t inl)
{
    size_t take = 0, pre = 0, next;

    if (c->bufsz != 0 && inl > 0) {
        take = BLK - c->bufsz < inl ? BLK - c->bufsz : inl;
        memcpy(c->buf + c->bufsz, in, take);
        c->bufsz += take;
        in += take;
        inl -= take;
    }
    next = inl & ~(size_t)(BLK - 1);
    if (c->bufsz == BLK && (c->enc || inl > 0 || !c->pad))
        pre = BLK;
    if (next > 0 && !c->enc && c->pad && next == inl)
        next -= BLK;
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

static int cipher_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                         const unsigned char *in, size_t inl)
{
    struct cipher_ctx *c = vctx;

    *outl = 0;
    if (inl == 0 && c->bufsz == 0) /* a held-back block goes out once padding is off */
        return 1;
    if (!usable(c, in, inl) || !apart(c, out, c->bufsz, in, inl))
        return 0;
    if (c->alg->mode != EVP_CIPH_CTR_MODE)
        return block_update(c, out, outl, outsize, in, inl);
    if (!room(c, out, inl, outsize) || !ctr_update(c, out, in, inl))
        return 0;
    *outl = inl;
    return 1;
}

static int cipher_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    struct cipher_ctx *c = vctx;
    unsigned char block[BLK];
    unsigned int pad, bad, i;

    *outl = 0;
    if (!usable(c, NULL, 0))
        return 0;
    if (c->alg->mode == EVP_CIPH_CTR_MODE || (!c->pad && c->bufsz == 0))
        return 1;
    if (c->enc && c->pad) {
        memset(c->buf + c->bufsz, (int)(BLK - c->bufsz), BLK - c->bufsz);
        if (!room(c, out, BLK, outsize) || !process(c, out, c->buf, BLK, NULL, 0, NULL))
            return 0;
        c->bufsz = 0;
        *outl = BLK;
        return 1;
    }
    if (c->bufsz != BLK) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_LENGTH, "%s: %zu bytes left over", c->alg->kname, c->bufsz);
        return 0;
    }
    if (!process(c, block, c->buf, BLK, NULL, 0, NULL))
        return 0;
    c->bufsz = 0;
    /* Padding checked in constant time; with padding off the held-back block goes out whole. */
    pad = c->pad ? block[BLK - 1] : 0;
    bad = c->pad ? (unsigned int)((pad - 1) >> 8) | (unsigned int)((BLK - pad) >> 8) : 0;
    for (i = 0; i < BLK; i++) {
        unsigned int in_pad = (BLK - 1 - i - pad) >> 8; /* low 24 bits set iff i >= BLK - pad */

        bad |= in_pad & (block[i] ^ pad);
    }
    if (bad != 0) {
        OPENSSL_cleanse(block, BLK);
        CCREE_RAISE(c->prov, CCREE_R_BAD_DECRYPT, "%s", c->alg->kname);
        return 0;
    }
    if (!room(c, out, BLK - pad, outsize))
        return 0;
    memcpy(out, block, BLK - pad);
    OPENSSL_cleanse(block, BLK);
    *outl = BLK - pad;
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
    if (c->alg->mode != EVP_CIPH_CTR_MODE && inl % BLK != 0) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_LENGTH, "%s: %zu bytes is not whole blocks",
                    c->alg->kname, inl);
        return 0;
    }
    if (!room(c, out, inl, outsize)
        || !(c->alg->mode == EVP_CIPH_CTR_MODE ? ctr_update(c, out, in, inl)
                                                : process(c, out, NULL, 0, in, inl, NULL)))
        return 0;
    *outl = inl;
    return 1;
}

int ccree_cipher_get_params(OSSL_PARAM params[], size_t idx)
{
    static const char *const flags[] = { OSSL_CIPHER_PARAM_AEAD, OSSL_CIPHER_PARAM_CUSTOM_IV,
                                         OSSL_CIPHER_PARAM_CTS, OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK,
                                         OSSL_CIPHER_PARAM_HAS_RAND_KEY };
    const struct ccree_alg *a = &ccree_algs[idx];
    OSSL_PARAM *p;
    size_t i;

    for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) /* the first two: AEAD ones have them */
        if ((p = OSSL_PARAM_locate(params, flags[i])) != NULL
            && !OSSL_PARAM_set_int(p, i < 2 && a->kind == CCREE_AEAD))
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
        || !set_iv_param(OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IV), c->oiv, c->alg->ivlen)
        || !set_iv_param(OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_UPDATED_IV), c->iv,
                         c->alg->ivlen)) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "cannot return a parameter");
        return 0;
    }
    return 1;
}

static int cipher_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    struct cipher_ctx *c = vctx;
    const OSSL_PARAM *p;
    unsigned int v;

    if (params == NULL)
        return 1;
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_PADDING)) != NULL) {
        if (!OSSL_PARAM_get_uint(p, &v)) {
            CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "padding");
            return 0;
        }
        c->pad = v != 0;
    }
    if ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_NUM)) != NULL) {
        if (!OSSL_PARAM_get_uint(p, &v) || v >= BLK) {
            CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "num");
            return 0;
        }
        c->num = c->alg->mode == EVP_CIPH_CTR_MODE ? v : 0;
    }
    /* Without TLS record processing (padding and MAC removal) libssl must not use us for it. */
    if (OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_TLS_VERSION) != NULL) {
        CCREE_RAISE(c->prov, CCREE_R_UNSUPPORTED, "TLS record mode of %s", c->alg->kname);
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
