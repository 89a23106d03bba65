/*
 * What each mode does with an update, a final and EVP_Cipher: ECB and CBC buffer, pad and
 * take TLS records; CTR keeps a partial keystream block; XTS and CBC-CTS take each update as
 * one whole message.
 */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/prov_ssl.h>

#include "cipher.h"

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
    struct afalg_req rq = { .enc = c->enc, .iv = c->iv, .ivlen = c->e.alg->ivlen, .in = in,
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
    err = afalg_cipher(c->e.op.fd, &rq);
    *clobbered = rq.sent && ccree_overlap(u->in, u->len, u->out, u->len);
    if (err == 0 && is_cts(c))
        memcpy(c->iv, c->enc ? cn : next, 16);
    if (err == 0)
        ccree_count(c->e.idx, 0, 1, u->len);
    return err;
}

/* XTS and CBC-CTS: one update is one message, in one kernel request where it fits. */
static int unit_update(struct cipher_ctx *c, unsigned char *out, const unsigned char *in, size_t inl)
{
    struct unit u = { out, in, inl };
    struct ccree_choice ch;
    int k;

    if (c->updated) {
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_STATE, "%s takes one update per init", c->e.alg->kname);
        return 0;
    }
    if (c->mode->needs_iv && !c->iv_set) {
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_STATE, "%s: no IV (tweak) set", c->e.alg->kname);
        return 0;
    }
    if (inl < 16 || inl > c->mode->unit_max) {
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_LENGTH, "%s: %zu bytes", c->e.alg->kname, inl);
        return 0;
    }
    k = 0; /* 1 done, -1 failed, 0 not yet: software */
    if (inl > AFALG_MAX_REQUEST) { /* more than one kernel request can take */
        if (!c->e.prov->fallback) {
            CCREE_RAISE(c->e.prov, CCREE_R_NOT_OFFLOADED, "%s: %zu bytes in one message",
                        c->e.alg->kname, inl);
            return 0;
        }
        ch = (struct ccree_choice){ .kernel = 0 };
    } else if (ccree_engine_choose(&c->e, inl, &ch) && (k = cipher_in_kernel(c, &ch, run_unit, &u)) == 0) {
        ch.timed = 0;
    }
    if (k == 0)
        k = cipher_sw_process(c, &ch, out, NULL, 0, in, inl, NULL) ? 1 : -1;
    c->updated = is_cts(c) && k > 0; /* a failed update does not count */
    return k > 0;
}

/*
 * An update in software (ECB, CBC and CTR): the default provider's update, whose context holds
 * the stream (handed over first where ccree held it); n bytes out, as ccree's own buffering
 * gives. With nothing buffered, whole blocks of ECB and CBC (blocks) go to its cipher
 * function, which skips the buffering. buf and bufsz mirror the partial block it holds, copied
 * before an in-place update overwrites it.
 */
static int sw_stream(struct cipher_ctx *c, struct ccree_choice *ch, unsigned char *out, size_t n,
                     const unsigned char *in, size_t inl, int blocks)
{
    size_t k = 0, m, tail = c->bufsz + inl - n;
    int ok;

    ccree_start(ch);
    if (c->sw_holds != SW_STREAM && !cipher_sw_take(c, out, &k))
        return 0;
    if (blocks && c->bufsz == 0 && tail == 0) {
        ok = c->e.soft->cipher(c->e.sw, out, &m, n, in, inl);
    } else {
        if (tail > inl && inl > 0) /* nothing goes out */
            memcpy(c->buf + c->bufsz, in, inl);
        else if (tail > 0 && tail <= inl)
            memcpy(c->buf, in + inl - tail, tail);
        ok = c->e.soft->update(c->e.sw, out + k, &m, n - k, in, inl);
    }
    if (!ok || k + m != n)
        return cipher_sw_failed(c);
    c->bufsz = tail;
    ccree_ran(c->e.prov, ch);
    ccree_count(c->e.idx, 1, 1, n);
    return 1;
}

/*
 * The hot path of every request ccree runs in software: the default provider holds the stream
 * with nothing buffered, all of in goes out, and the request is not timed. Then the update is
 * one call of the default provider's function sw_stream would call, counted first, which sets
 * *outl.
 */
static inline int sw_direct(const struct cipher_ctx *c, const struct ccree_choice *ch, size_t n,
                            size_t inl)
{
    return !ch->timed && c->sw_holds == SW_STREAM && c->bufsz == 0 && n == inl;
}

/*
 * CTR where the default provider does not hold the stream already: in the kernel, the rest of
 * the current keystream block, then whole blocks, then a partial one, its keystream kept; in
 * software, the rest of the current keystream block, then the default provider's stream.
 */
static int ctr_update(struct cipher_ctx *c, struct ccree_choice *ch, unsigned char *out,
                      const unsigned char *in, size_t inl)
{
    size_t i, head = 0, whole, tail, bs = c->bs;

    if (ch->kernel && c->sw_holds == SW_STREAM && !cipher_take_stream(c))
        return 0;
    if (c->sw_holds != SW_STREAM)
        for (; c->num != 0 && head < inl; head++, c->num = (c->num + 1) % bs)
            out[head] = in[head] ^ c->ks[c->num];
    if (!ch->kernel) {
        return head == inl || sw_stream(c, ch, out + head, inl - head, in + head, inl - head, 0);
    }
    whole = (inl - head) & ~(bs - 1);
    tail = inl - head - whole;
    if (!cipher_run(c, ch, out + head, NULL, 0, in + head, whole, tail ? c->ks : NULL))
        return 0;
    for (i = 0; i < tail; i++)
        out[head + whole + i] = in[head + whole + i] ^ c->ks[i];
    c->num = (c->num + tail) % bs;
    return 1;
}

/* ECB/CBC: what an update of inl bytes gives out, as OpenSSL's block_update (which holds back
 * the last block of a padded decrypt). */
static size_t block_out(const struct cipher_ctx *c, size_t inl)
{
    size_t total = c->bufsz + inl, n = total & ~(c->bs - 1);

    return n > 0 && !c->enc && c->pad && n == total ? n - c->bs : n;
}

/* ECB/CBC in the kernel: the partial block ccree holds and whole blocks of in, n bytes. */
static int block_update(struct cipher_ctx *c, struct ccree_choice *ch, unsigned char *out,
                        const unsigned char *in, size_t inl, size_t n)
{
    size_t take = 0, pre = 0, bs = c->bs;

    if (c->bufsz != 0 && inl > 0) {
        take = bs - c->bufsz < inl ? bs - c->bufsz : inl;
        memcpy(c->buf + c->bufsz, in, take);
        c->bufsz += take;
        in += take;
        inl -= take;
    }
    if (c->bufsz == bs && n > 0)
        pre = bs;
    if (!cipher_run(c, ch, out, c->buf, pre, in, n - pre, NULL))
        return 0;
    if (pre)
        c->bufsz = 0;
    if (inl > n - pre) {
        memcpy(c->buf + c->bufsz, in + n - pre, inl - (n - pre));
        c->bufsz += inl - (n - pre);
    }
    return 1;
}

/* ECB/CBC: the path of an update giving n bytes out (none: it stays where the stream is). */
static int block_choose(struct cipher_ctx *c, size_t n, struct ccree_choice *ch)
{
    if (n > 0)
        return ccree_engine_choose(&c->e, n, ch);
    *ch = (struct ccree_choice){ .kernel = c->sw_holds != SW_STREAM };
    return ch->kernel;
}

/* ECB/CBC: an update giving n bytes out, on the path ch: ccree's own buffering and the kernel,
 * or the default provider's stream. */
static int block_run(struct cipher_ctx *c, struct ccree_choice *ch, unsigned char *out,
                     const unsigned char *in, size_t inl, size_t n)
{
    if (ch->kernel)
        return block_update(c, ch, out, in, inl, n);
    return sw_stream(c, ch, out, n, in, inl, 1);
}

/* ECB/CBC: an update giving n bytes out, on the path the policy chooses. */
static int block_step(struct cipher_ctx *c, unsigned char *out, const unsigned char *in,
                      size_t inl, size_t n)
{
    struct ccree_choice ch;

    block_choose(c, n, &ch);
    return block_run(c, &ch, out, in, inl, n);
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
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_PARAM, "%s: a TLS record is one padded update in place",
                    c->e.alg->kname);
        return 0;
    }
    if (c->enc) {
        memset(out + inl, c->tls_version == SSL3_VERSION ? 0 : (int)pad - 1, pad - 1);
        out[inl + pad - 1] = (unsigned char)(pad - 1);
        inl += pad;
    }
    if (inl % bs != 0 || inl < iv || (!c->enc && explicit < 0)) {
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_LENGTH, "%s: TLS record of %zu bytes", c->e.alg->kname, inl);
        return 0;
    }
    c->tls_maclen = 0;
    if (!cipher_process(c, out, NULL, 0, in, inl, NULL))
        return 0;
    *outl = inl - (c->enc ? 0 : iv);
    if (c->enc)
        return 1;
    if (!ccree_tls_cbc_unpad((int)c->tls_version, out + iv, outl, bs, c->tls_macsize, c->tls_mac,
                             c->e.prov->libctx)) {
        *outl = 0;
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_DECRYPT, "%s: TLS record", c->e.alg->kname);
        return 0;
    }
    c->tls_maclen = c->tls_macsize;
    return 1;
}

/* ECB and CBC: buffered, padded, or TLS records. */
static int block_mode_update(struct cipher_ctx *c, unsigned char *out, size_t *outl,
                             size_t outsize, const unsigned char *in, size_t inl)
{
    struct ccree_choice ch;
    size_t n;

    if (c->tls_version)
        return cipher_usable(c, in, inl) && tls_record(c, out, outl, outsize, in, inl);
    if (inl == 0 && c->bufsz == 0) /* a held-back block goes out once padding is off */
        return cipher_usable(c, in, inl);
    n = block_out(c, inl);
    if (!cipher_checks(c, out, c->bufsz, n, outsize, in, inl))
        return 0;
    if (!block_choose(c, n, &ch) && sw_direct(c, &ch, n, inl)) { /* whole blocks: no buffering */
        ccree_count(c->e.idx, 1, 1, n);
        return c->e.soft->cipher(c->e.sw, out, outl, outsize, in, inl);
    }
    if (!block_run(c, &ch, out, in, inl, n))
        return 0;
    *outl = n;
    return 1;
}

static int block_final(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize)
{
    unsigned char block[MAXBLK];
    unsigned int pad, bad, i, bs = (unsigned int)c->bs;
    int ok;

    if (!cipher_usable(c, NULL, 0))
        return 0;
    if (!c->pad && c->bufsz == 0)
        return 1;
    if (c->enc && c->pad) { /* the padding, as one more update */
        pad = bs - (unsigned int)c->bufsz;
        memset(block, (int)pad, pad);
        if (!ccree_check_room(c->e.prov, c->e.alg->kname, out, bs, outsize)
            || !block_step(c, out, block, pad, bs))
            return 0;
        *outl = bs;
        return 1;
    }
    if (c->bufsz != bs) {
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_LENGTH, "%s: %zu bytes left over", c->e.alg->kname, c->bufsz);
        return 0;
    }
    pad = (unsigned int)c->pad; /* the held-back block goes out as with padding off */
    ok = cipher_set_pad(c, 0) && block_step(c, block, block, 0, bs);
    if (!cipher_set_pad(c, (int)pad) || !ok)
        return 0;
    /* Padding checked in constant time; with padding off the held-back block goes out whole. */
    pad = c->pad ? block[bs - 1] : 0;
    bad = c->pad ? (unsigned int)((pad - 1) >> 8) | (unsigned int)((bs - pad) >> 8) : 0;
    for (i = 0; i < bs; i++) {
        unsigned int in_pad = (bs - 1 - i - pad) >> 8; /* low 24 bits set iff i >= bs - pad */

        bad |= in_pad & (block[i] ^ pad);
    }
    if (bad != 0) {
        OPENSSL_cleanse(block, bs);
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_DECRYPT, "%s", c->e.alg->kname);
        return 0;
    }
    if (!ccree_check_room(c->e.prov, c->e.alg->kname, out, bs - pad, outsize))
        return 0;
    memcpy(out, block, bs - pad);
    OPENSSL_cleanse(block, bs);
    *outl = bs - pad;
    return 1;
}

static int block_whole(struct cipher_ctx *c, unsigned char *out, size_t outsize,
                       const unsigned char *in, size_t inl)
{
    if (inl % c->bs != 0) {
        CCREE_RAISE(c->e.prov, CCREE_R_BAD_LENGTH, "%s: %zu bytes is not whole blocks",
                    c->e.alg->kname, inl);
        return 0;
    }
    return ccree_check_room(c->e.prov, c->e.alg->kname, out, inl, outsize)
           && cipher_process(c, out, NULL, 0, in, inl, NULL);
}

/* CTR: one call of the default provider's update, which holds the stream; counted first. */
static inline int ctr_direct(struct cipher_ctx *c, unsigned char *out, size_t *outl,
                             size_t outsize, const unsigned char *in, size_t inl)
{
    ccree_count(c->e.idx, 1, 1, inl);
    return c->e.soft->update(c->e.sw, out, outl, outsize, in, inl);
}

/* CTR: an update as ctr_mode_update takes it; out of line, so its frame is not the hot path's. */
static __attribute__((noinline)) int ctr_step(struct cipher_ctx *c, unsigned char *out,
                                              size_t *outl, size_t outsize,
                                              const unsigned char *in, size_t inl)
{
    struct ccree_choice ch;

    if (inl == 0) /* as the default provider: the key first */
        return cipher_usable(c, in, inl);
    if (!cipher_checks(c, out, 0, inl, outsize, in, inl))
        return 0;
    if (!ccree_engine_choose(&c->e, inl, &ch) && sw_direct(c, &ch, inl, inl))
        return ctr_direct(c, out, outl, outsize, in, inl);
    if (!ctr_update(c, &ch, out, in, inl))
        return 0;
    *outl = inl;
    return 1;
}

/* The hot path first: checks that pass, a software stream, a path nothing measures. */
static int ctr_mode_update(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                           const unsigned char *in, size_t inl)
{
    if (inl != 0 && c->sw_holds == SW_STREAM && ccree_buffers_fine(out, 0, inl, outsize, in, inl)
        && ccree_engine_plain_software(&c->e, inl))
        return ctr_direct(c, out, outl, outsize, in, inl);
    return ctr_step(c, out, outl, outsize, in, inl);
}

/* CTR: a stream, EVP_Cipher as an update. */
static int ctr_whole(struct cipher_ctx *c, unsigned char *out, size_t outsize,
                     const unsigned char *in, size_t inl)
{
    size_t outl;

    return ctr_mode_update(c, out, &outl, outsize, in, inl);
}

static int ctr_final(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize)
{
    (void)out, (void)outl, (void)outsize;
    return cipher_usable(c, NULL, 0);
}

/* XTS and CBC-CTS: each update one whole message. */
static int unit_whole(struct cipher_ctx *c, unsigned char *out, size_t outsize,
                      const unsigned char *in, size_t inl)
{
    return ccree_check_room(c->e.prov, c->e.alg->kname, out, inl, outsize)
           && unit_update(c, out, in, inl);
}

static int unit_mode_update(struct cipher_ctx *c, unsigned char *out, size_t *outl,
                            size_t outsize, const unsigned char *in, size_t inl)
{
    if (is_cts(c) && out == NULL) { /* as the default provider: the length it would write */
        *outl = inl;
        return 1;
    }
    if (!cipher_usable(c, in, inl)
        || !ccree_check_apart(c->e.prov, c->e.alg->kname, out, 0, in, inl)
        || !unit_whole(c, out, outsize, in, inl))
        return 0;
    *outl = inl;
    return 1;
}

static int unit_final(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize)
{
    (void)c, (void)out, (void)outl, (void)outsize; /* as the default provider: key or not */
    return 1;
}

const struct mode cipher_ecb_mode = { .update = block_mode_update, .final = block_final,
                                     .whole = block_whole, .chain = CHAIN_NONE },
                  cipher_cbc_mode = { .update = block_mode_update, .final = block_final,
                                      .whole = block_whole, .chain = CHAIN_CBC, .restarts_iv = 1 },
                  cipher_ctr_mode = { .update = ctr_mode_update, .final = ctr_final,
                                      .whole = ctr_whole, .chain = CHAIN_CTR },
                  /* the default provider's XTS data unit limit: 2^20 blocks */
                  cipher_xts_mode = { .update = unit_mode_update, .final = unit_final,
                                      .whole = unit_whole, .chain = CHAIN_NONE, .needs_iv = 1,
                                      .two_keys = 1, .unit_max = 1 << 24 },
                  cipher_cts_mode = { .update = unit_mode_update, .final = unit_final,
                                      .whole = unit_whole, .chain = CHAIN_NONE, .restarts_iv = 1,
                                      .cts = 1, .unit_max = INT_MAX };
