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
    } else if (cipher_choose(c, inl, &ch) && (k = cipher_in_kernel(c, &ch, run_unit, &u)) == 0) {
        ch.timed = 0;
    }
    if (k == 0)
        k = cipher_sw_process(c, &ch, out, NULL, 0, in, inl, NULL) ? 1 : -1;
    c->updated = is_cts(c) && k > 0; /* a failed update does not count */
    return k > 0;
}

/* CTR: the rest of the current keystream block, then whole blocks, then a partial one. */
static int ctr_update(struct cipher_ctx *c, unsigned char *out, const unsigned char *in, size_t inl)
{
    size_t i, head = 0, whole, tail, bs = c->bs;

    for (; c->num != 0 && head < inl; head++, c->num = (c->num + 1) % bs)
        out[head] = in[head] ^ c->ks[c->num];
    whole = (inl - head) & ~(bs - 1);
    tail = inl - head - whole;
    if (!cipher_process(c, out + head, NULL, 0, in + head, whole, tail ? c->ks : NULL))
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
    if (!cipher_room(c, out, pre + next, outsize) || !cipher_process(c, out, c->buf, pre, in, next, NULL))
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
    if (!cipher_process(c, out, NULL, 0, in, inl, NULL))
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

/* ECB and CBC: buffered, padded, or TLS records. */
static int block_mode_update(struct cipher_ctx *c, unsigned char *out, size_t *outl,
                             size_t outsize, const unsigned char *in, size_t inl)
{
    if (c->tls_version)
        return cipher_usable(c, in, inl) && tls_record(c, out, outl, outsize, in, inl);
    if (inl == 0 && c->bufsz == 0) /* a held-back block goes out once padding is off */
        return 1;
    return cipher_usable(c, in, inl) && cipher_apart(c, out, c->bufsz, in, inl)
           && block_update(c, out, outl, outsize, in, inl);
}

static int block_final(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize)
{
    unsigned char block[MAXBLK];
    unsigned int pad, bad, i, bs = (unsigned int)c->bs;

    if (!cipher_usable(c, NULL, 0))
        return 0;
    if (!c->pad && c->bufsz == 0)
        return 1;
    if (c->enc && c->pad) {
        memset(c->buf + c->bufsz, (int)(bs - c->bufsz), bs - c->bufsz);
        if (!cipher_room(c, out, bs, outsize) || !cipher_process(c, out, c->buf, bs, NULL, 0, NULL))
            return 0;
        c->bufsz = 0;
        *outl = bs;
        return 1;
    }
    if (c->bufsz != bs) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_LENGTH, "%s: %zu bytes left over", c->alg->kname, c->bufsz);
        return 0;
    }
    if (!cipher_process(c, block, c->buf, bs, NULL, 0, NULL))
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
    if (!cipher_room(c, out, bs - pad, outsize))
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
        CCREE_RAISE(c->prov, CCREE_R_BAD_LENGTH, "%s: %zu bytes is not whole blocks",
                    c->alg->kname, inl);
        return 0;
    }
    return cipher_room(c, out, inl, outsize) && cipher_process(c, out, NULL, 0, in, inl, NULL);
}

/* CTR: a stream, with the keystream of a partial block kept. */
static int ctr_whole(struct cipher_ctx *c, unsigned char *out, size_t outsize,
                     const unsigned char *in, size_t inl)
{
    return cipher_room(c, out, inl, outsize) && ctr_update(c, out, in, inl);
}

static int ctr_mode_update(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                           const unsigned char *in, size_t inl)
{
    if (inl == 0)
        return 1;
    if (!cipher_usable(c, in, inl) || !cipher_apart(c, out, 0, in, inl) || !ctr_whole(c, out, outsize, in, inl))
        return 0;
    *outl = inl;
    return 1;
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
    return cipher_room(c, out, inl, outsize) && unit_update(c, out, in, inl);
}

static int unit_mode_update(struct cipher_ctx *c, unsigned char *out, size_t *outl,
                            size_t outsize, const unsigned char *in, size_t inl)
{
    if (is_cts(c) && out == NULL) { /* as the default provider: the length it would write */
        *outl = inl;
        return 1;
    }
    if (!cipher_usable(c, in, inl) || !cipher_apart(c, out, 0, in, inl) || !unit_whole(c, out, outsize, in, inl))
        return 0;
    *outl = inl;
    return 1;
}

static int unit_final(struct cipher_ctx *c, unsigned char *out, size_t *outl, size_t outsize)
{
    (void)c, (void)out, (void)outl, (void)outsize; /* as the default provider: key or not */
    return 1;
}

const struct mode cipher_block_mode = { block_mode_update, block_final, block_whole },
                  cipher_ctr_mode = { ctr_mode_update, ctr_final, ctr_whole },
                  cipher_unit_mode = { unit_mode_update, unit_final, unit_whole };
