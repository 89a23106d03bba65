/*
 * A cipher request on its path: in the kernel when the policy says so, otherwise (or for what
 * the kernel failed to do) in the default provider; and whether a call has a key and input.
 */
#include <string.h>

#include <openssl/crypto.h>

#include "cipher.h"

const char *const cts_names[] = { OSSL_CIPHER_CTS_MODE_CS1, OSSL_CIPHER_CTS_MODE_CS2,
                                  OSSL_CIPHER_CTS_MODE_CS3 };

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

int cipher_read_iv(struct cipher_ctx *c)
{
    OSSL_PARAM p[] = { OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, c->iv,
                                               c->e.alg->ivlen),
                       OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, &c->num), OSSL_PARAM_END };

    if (c->sw_holds != SW_STREAM || c->mode->chain != CHAIN_CTR)
        p[1] = OSSL_PARAM_construct_end();
    if (c->sw_holds != SW_STALE && c->e.alg->ivlen && !c->e.soft->get_ctx_params(c->e.sw, p)) {
        CCREE_RAISE(c->e.prov, CCREE_R_SOFTWARE, "cannot read the software IV");
        return 0;
    }
    return 1;
}

int cipher_take_stream(struct cipher_ctx *c)
{
    static const unsigned char zero[MAXBLK];
    size_t n, left;

    if (!cipher_read_iv(c))
        return 0;
    /* CTR: the rest of the keystream block the stream is in, for ccree's partial block */
    left = c->bs - c->num;
    if (c->sw_holds == SW_STREAM && c->num != 0
        && !(c->e.soft->update(c->e.sw, c->ks + c->num, &n, left, zero, left) && n == left)) {
        CCREE_RAISE(c->e.prov, CCREE_R_SOFTWARE, "cannot read the software keystream");
        return 0;
    }
    c->sw_holds = SW_STALE;
    return 1;
}

/* The IV after n more bytes from off: CBC's last ciphertext block, CTR's counter. */
static void next_iv(struct cipher_ctx *c, const struct seg *is, const struct seg *os, size_t off,
                    size_t n)
{
    if (n > 0 && c->mode->chain == CHAIN_CBC)
        gather(c->enc ? os : is, c->enc ? 2 : 3, off + n - c->bs, c->iv, c->bs);
    else if (c->mode->chain == CHAIN_CTR)
        ctr_add(c->iv, c->e.alg->ivlen, n / c->bs);
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
        struct afalg_req r = { .enc = c->enc, .iv = c->iv, .ivlen = c->e.alg->ivlen, .in = in,
                               .out = out, .unit = bs };

        n = total - off < AFALG_MAX_REQUEST ? total - off : AFALG_MAX_REQUEST;
        r.nin = slice(is, 3, off, n, in);
        r.nout = slice(os, 2, off, n, out);
        r.inlen = r.outlen = n;
        if (c->mode->chain == CHAIN_CBC && !c->enc)
            gather(is, 3, off + n - bs, last, bs); /* before an in-place request overwrites it */
        err = afalg_cipher(c->e.op.fd, &r);
        if (err != 0) { /* what came back right stays; the IV moves past it */
            next_iv(c, is, os, off, r.done);
            ccree_count(c->e.idx, 0, r.done > 0, r.done);
            off += r.done;
            *sent = r.sent;
            break;
        }
        if (c->mode->chain == CHAIN_CBC && !c->enc)
            memcpy(c->iv, last, bs);
        else
            next_iv(c, is, os, off, n);
        ccree_count(c->e.idx, 0, 1, n);
    }
    *done = off;
    return err;
}

/* Whole blocks in, as many out: the software context with padding off. */
static int sw_update(struct cipher_ctx *c, unsigned char *out, const unsigned char *in, size_t len)
{
    size_t n;

    return c->e.soft->update(c->e.sw, out, &n, len, in, len) && n == len;
}

/* The software context set up anew for this key, direction and IV: the stream under ccree's
 * padding, or whole blocks (padding off). */
static int sw_init(struct cipher_ctx *c, int stream)
{
    unsigned int pad = stream ? (unsigned int)c->pad : 0;
    OSSL_PARAM params[] = { OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, &pad),
                            OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE,
                                                   (char *)cts_names[c->cts_mode], 0),
                            OSSL_PARAM_END };
    int rekey = !c->e.sw_keyed || c->e.sw_enc != c->enc;

    if (!is_cts(c))
        params[1] = OSSL_PARAM_construct_end();
    if (!ccree_engine_sw(&c->e))
        return 0;
    c->e.sw_keyed = ccree_engine_sw_init(&c->e, c->enc)(
        c->e.sw, rekey ? c->e.key : NULL, rekey ? c->e.keylen : 0,
        c->e.alg->ivlen ? c->iv : NULL, c->e.alg->ivlen, params);
    c->e.sw_enc = c->enc;
    c->sw_holds = !c->e.sw_keyed ? SW_STALE : stream ? SW_STREAM : SW_IV;
    return c->e.sw_keyed;
}

int cipher_sw_restart(struct cipher_ctx *c, const unsigned char *iv)
{
    if (ccree_engine_sw_init(&c->e, c->enc)(c->e.sw, NULL, 0, iv, c->e.alg->ivlen, NULL))
        return 1;
    c->sw_holds = SW_STALE;
    return cipher_sw_failed(c);
}

/* The software context ready for whole blocks under this key, direction and IV. */
static int sw_ready(struct cipher_ctx *c)
{
    return c->sw_holds == SW_IV || (cipher_take_stream(c) && sw_init(c, 0));
}

int cipher_sw_forward(struct cipher_ctx *c, const OSSL_PARAM *p)
{
    OSSL_PARAM q[] = { *p, OSSL_PARAM_END };

    if (c->sw_holds != SW_STREAM || c->e.soft->set_ctx_params(c->e.sw, q))
        return 1;
    CCREE_RAISE(c->e.prov, CCREE_R_SOFTWARE, "%s: cannot set %s", c->e.alg->kname, p->key);
    return 0;
}

/* The software stream's padding set to ccree's. */
static int forward_pad(struct cipher_ctx *c)
{
    unsigned int v = (unsigned int)c->pad;
    OSSL_PARAM p = OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_PADDING, &v);

    return cipher_sw_forward(c, &p);
}

int cipher_set_pad(struct cipher_ctx *c, int pad)
{
    if (pad == c->pad) /* a stream in software has it: EVP sets it at every init */
        return 1;
    c->pad = pad;
    return forward_pad(c);
}

int cipher_sw_take(struct cipher_ctx *c, unsigned char *out, size_t *k)
{
    enum sw_holds was = c->sw_holds; /* not the stream: ccree holds the partial block */

    if (was == SW_STALE && !sw_init(c, 1))
        return cipher_sw_failed(c);
    c->sw_holds = SW_STREAM; /* from SW_IV, with padding off */
    if (was == SW_IV && c->pad && !forward_pad(c)) /* raises its own error */
        return 0;
    if (c->bufsz > 0 && !c->e.soft->update(c->e.sw, out, k, c->bs, c->buf, c->bufsz))
        return cipher_sw_failed(c);
    return 1;
}

int cipher_sw_failed(struct cipher_ctx *c)
{
    CCREE_RAISE(c->e.prov, CCREE_R_SOFTWARE, "%s in the default provider", c->e.alg->kname);
    return 0;
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
        CCREE_RAISE(c->e.prov, CCREE_R_SOFTWARE, "%s in the default provider", c->e.alg->kname);
        return 0;
    }
    ccree_count(c->e.idx, 1, 1, total);
    return 1;
}

int cipher_in_kernel(struct cipher_ctx *c, struct ccree_choice *ch,
                     int (*run)(struct cipher_ctx *, void *, int *), void *arg)
{
    int err, clobbered = 0;

    if ((err = ccree_engine_socket(&c->e, 0)) > 0) {
        if (!cipher_take_stream(c))
            return -1;
        ccree_start(ch);
        if ((err = run(c, arg, &clobbered)) == 0) {
            ccree_ran(c->e.prov, ch);
            return 1;
        }
    }
    return ccree_engine_failed(&c->e, err, clobbered) ? 0 : -1;
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

int cipher_sw_process(struct cipher_ctx *c, struct ccree_choice *ch, unsigned char *out,
                      const unsigned char *pre, size_t prelen, const unsigned char *in,
                      size_t inlen, unsigned char *ks)
{
    static const unsigned char zero[MAXBLK];

    ccree_start(ch);
    if (!sw_ready(c) || (prelen > 0 && !sw_update(c, out, pre, prelen))
        || (inlen > 0 && !sw_update(c, out + prelen, in, inlen))
        || (ks != NULL && !sw_update(c, ks, zero, c->bs))) {
        CCREE_RAISE(c->e.prov, CCREE_R_SOFTWARE, "%s in the default provider", c->e.alg->kname);
        return 0;
    }
    ccree_ran(c->e.prov, ch);
    ccree_count(c->e.idx, 1, 1, prelen + inlen + (ks ? c->bs : 0));
    return 1;
}

int cipher_run(struct cipher_ctx *c, struct ccree_choice *ch, unsigned char *out,
               const unsigned char *pre, size_t prelen, const unsigned char *in, size_t inlen,
               unsigned char *ks)
{
    static unsigned char zero[MAXBLK];
    size_t total = prelen + inlen + (ks ? c->bs : 0);
    int k;

    if (total == 0)
        return 1;
    if (ch->kernel) {
        const struct seg is[3] = { { (unsigned char *)pre, prelen },
                                   { (unsigned char *)in, inlen },
                                   { zero, ks ? c->bs : 0 } };
        const struct seg os[2] = { { out, prelen + inlen }, { ks, ks ? c->bs : 0 } };
        struct request r = { is, os, total, 0 };

        if ((k = cipher_in_kernel(c, ch, run_request, &r)) != 0)
            return k > 0;
        if (r.done > 0)
            return sw_run(c, is, os, r.done);
        ch->timed = 0;
    }
    return cipher_sw_process(c, ch, out, pre, prelen, in, inlen, ks);
}

int cipher_process(struct cipher_ctx *c, unsigned char *out, const unsigned char *pre,
                   size_t prelen, const unsigned char *in, size_t inlen, unsigned char *ks)
{
    size_t total = prelen + inlen + (ks ? c->bs : 0);
    struct ccree_choice ch;

    if (total == 0)
        return 1;
    ccree_engine_choose(&c->e, total, &ch);
    return cipher_run(c, &ch, out, pre, prelen, in, inlen, ks);
}

/* The input as ccree_check_input takes it, and a key set. */
int cipher_usable(struct cipher_ctx *c, const unsigned char *in, size_t inl)
{
    if (!ccree_check_input(c->e.prov, c->e.alg->kname, in, inl))
        return 0;
    if (c->e.key != NULL)
        return 1;
    CCREE_RAISE(c->e.prov, CCREE_R_NO_KEY, "%s", c->e.alg->kname);
    return 0;
}
