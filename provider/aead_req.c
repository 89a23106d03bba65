/*
 * A GCM or CCM message on its path: whole in one kernel request, or in the default provider,
 * where a message the kernel cannot take goes on (replayed from what the context kept).
 */
#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>

#include "aead.h"

int aead_fail(struct aead_ctx *c, int reason, const char *what)
{
    CCREE_RAISE(c->e.prov, reason, "%s: %s", c->e.alg->kname, what);
    return 0;
}

/* At least n bytes at *buf, and a buffer even for none (pointer arithmetic on NULL is UB). */
static int grow(unsigned char **buf, size_t *cap, size_t n)
{
    unsigned char *b;

    if (n == 0)
        n = 1;
    if (n <= *cap)
        return 1;
    if ((b = OPENSSL_clear_realloc(*buf, *cap, n)) == NULL)
        return 0;
    *buf = b;
    *cap = n;
    return 1;
}

int aead_reserve(struct aead_ctx *c, size_t n)
{
    return grow(&c->buf, &c->cap, n);
}

void aead_forget_data(struct aead_ctx *c)
{
    if (c->mode->keeps_data && c->datalen > 0 && c->msg == MSG_ONESHOT)
        OPENSSL_cleanse(c->buf + c->aadlen, c->datalen);
}

void aead_new_message(struct aead_ctx *c)
{
    aead_forget_data(c);
    if (c->mode->new_drops_tag)
        c->tagset = 0;
    c->msg = MSG_AAD;
    c->naad = c->aadlen = c->datalen = 0;
    c->data_done = 0;
}

/* --- the kernel ---------------------------------------------------------------------------- */

/*
 * A decryption with neither AAD nor data has nothing to read back, and the kernel's recvmsg
 * then returns without running it (algif_aead works only while the reader has room): its tag
 * would go unchecked. Such a message runs in software.
 */
static int kernel_can(const struct aead_ctx *c, size_t total, size_t taglen)
{
    return (c->enc || total > 0) && total + taglen <= AFALG_MAX_REQUEST
           && (c->mode->kernel_ivlen == 0 || c->ivlen == c->mode->kernel_ivlen)
           && (c->mode->kernel_tags >> taglen & 1);
}

/*
 * aad || in to out and tag, on a ready socket. 0, -EBADMSG or -errno, *sent as in struct
 * afalg_req.
 */
static int kernel_oneshot(struct aead_ctx *c, const unsigned char *aad, size_t aadlen,
                          const unsigned char *in, unsigned char *out, size_t len,
                          unsigned char *tag, size_t taglen, int *sent)
{
    struct iovec src[3] = { { (void *)aad, aadlen }, { (void *)in, len }, { tag, taglen } };
    struct iovec dst[3] = { { c->aadout, aadlen }, { out, len }, { tag, taglen } };
    struct afalg_req r = { .enc = c->enc, .assoclen = aadlen, .in = src, .nin = c->enc ? 2 : 3,
                           .inlen = aadlen + len + (c->enc ? 0 : taglen), .out = dst,
                           .nout = c->enc ? 3 : 2, .outlen = aadlen + len + (c->enc ? taglen : 0) };
    unsigned char kiv[16];
    int err;

    *sent = 0;
    if (!grow(&c->aadout, &c->aadcap, aadlen))
        return -ENOMEM;
    dst[0].iov_base = c->aadout;

    r.iv = kiv;
    r.ivlen = c->mode->kernel_iv(c, kiv);
    err = afalg_cipher(c->e.op.fd, &r);
    *sent = r.sent;
    if (err != 0)
        ccree_sock_close(&c->e.op); /* what it still holds is unknown */
    return err;
}

/* --- the default provider ------------------------------------------------------------------ */

static int software_ok(struct aead_ctx *c)
{
    return c->e.prov->fallback
           || aead_fail(c, CCREE_R_NOT_OFFLOADED, "this call pattern needs software");
}

int aead_sw_set_tag(struct aead_ctx *c, const unsigned char *tag, size_t taglen)
{
    OSSL_PARAM p[] = { OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, (void *)tag, taglen),
                       OSSL_PARAM_END };

    return c->e.soft->set_ctx_params(c->e.sw, p)
           || aead_fail(c, CCREE_R_SOFTWARE, "cannot set the tag");
}

int aead_sw_update(struct aead_ctx *c, unsigned char *out, const unsigned char *in, size_t len)
{
    size_t n;

    return c->e.soft->update(c->e.sw, out, &n, len, in, len);
}

static int sw_started(struct aead_ctx *c, int ok)
{
    return ok || aead_fail(c, CCREE_R_SOFTWARE, "cannot start the default provider");
}

/* GCM keeps its keyed context: a message sets the IV, and with it the IV length (iv_sets_len). */
int aead_gcm_sw_start(struct aead_ctx *c, const unsigned char *tag, int known, size_t len)
{
    OSSL_FUNC_cipher_encrypt_init_fn *init = ccree_engine_sw_init(&c->e, c->enc);

    (void)tag, (void)known, (void)len; /* its tag comes at the end */
    if (!ccree_engine_sw(&c->e))
        return aead_fail(c, CCREE_R_SOFTWARE, "no memory");
    if (!c->e.sw_keyed || c->e.sw_enc != c->enc) {
        c->e.sw_keyed = init(c->e.sw, c->e.key, c->e.keylen, NULL, 0, NULL);
        c->e.sw_enc = c->enc;
    }
    return sw_started(c, c->e.sw_keyed && init(c->e.sw, NULL, 0, c->iv, c->ivlen, NULL));
}

/* CCM takes its IV and tag lengths with the key, so each of its messages gets a new context. */
int aead_ccm_sw_start(struct aead_ctx *c, const unsigned char *tag, int known, size_t len)
{
    size_t ivlen = c->ivlen;
    OSSL_PARAM lens[] = { OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &ivlen),
                          OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, c->taglen),
                          OSSL_PARAM_END };
    OSSL_FUNC_cipher_encrypt_init_fn *init = ccree_engine_sw_init(&c->e, c->enc);

    if (c->e.sw != NULL) {
        c->e.soft->freectx(c->e.sw);
        c->e.sw = NULL;
    }
    if (!ccree_engine_sw(&c->e))
        return aead_fail(c, CCREE_R_SOFTWARE, "no memory");
    return sw_started(c, init(c->e.sw, NULL, 0, NULL, 0, lens)
                             && init(c->e.sw, c->e.key, c->e.keylen, c->iv, c->ivlen, NULL)
                             && (tag == NULL || aead_sw_set_tag(c, tag, c->taglen))
                             && (!known || aead_sw_update(c, NULL, NULL, len)));
}

static int sw_aad(struct aead_ctx *c, const unsigned char *aad, size_t len)
{
    return aead_sw_update(c, NULL, aad, len)
           || aead_fail(c, CCREE_R_SOFTWARE, "AAD in the default provider");
}

int aead_sw_data(struct aead_ctx *c, unsigned char *out, const unsigned char *in, size_t len)
{
    if (!aead_sw_update(c, out, in, len))
        return aead_fail(c, c->mode->data_verifies && !c->enc ? CCREE_R_BAD_DECRYPT
                                                               : CCREE_R_SOFTWARE,
                         "data in the default provider");
    ccree_count(c->e.idx, 1, 1, len);
    return 1;
}

int aead_sw_get_tag(struct aead_ctx *c, unsigned char *tag, size_t taglen)
{
    OSSL_PARAM p[] = { OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, taglen),
                       OSSL_PARAM_END };

    return c->e.soft->get_ctx_params(c->e.sw, p) || aead_fail(c, CCREE_R_SOFTWARE, "no tag");
}

/*
 * What a software call that authenticates returned (ok): an encryption's failure is an error
 * (what); a decryption's, made after ERR_set_mark, a verdict, -1 with the default provider's
 * errors dropped.
 */
static int verdict(struct aead_ctx *c, int ok, const char *what)
{
    if (c->enc)
        return ok || aead_fail(c, CCREE_R_SOFTWARE, what);
    if (!ok) {
        ERR_pop_to_mark();
        return -1;
    }
    ERR_clear_last_mark();
    return 1;
}

int aead_sw_gcm_final(struct aead_ctx *c, unsigned char *tag, size_t taglen)
{
    unsigned char none[TAG_MAX];
    size_t n;
    int ok;

    if (!c->enc && !aead_sw_set_tag(c, tag, taglen))
        return 0;
    if (!c->enc)
        ERR_set_mark();
    ok = verdict(c, c->e.soft->final(c->e.sw, none, &n, 0), "GCM in the default provider");
    return ok <= 0 ? ok : !c->enc || aead_sw_get_tag(c, tag, taglen);
}

int aead_gcm_sw_seal(struct aead_ctx *c, const unsigned char *in, unsigned char *out, size_t len,
                     unsigned char *tag, size_t taglen)
{
    int ok;

    if ((len > 0 && !aead_sw_data(c, out, in, len))
        || (ok = aead_sw_gcm_final(c, tag, taglen)) == 0)
        return 0;
    if (ok < 0)
        OPENSSL_cleanse(out, len);
    return ok;
}

int aead_ccm_sw_seal(struct aead_ctx *c, const unsigned char *in, unsigned char *out, size_t len,
                     unsigned char *tag, size_t taglen)
{
    int ok;

    if (!c->enc)
        ERR_set_mark();
    ok = verdict(c, aead_sw_update(c, out, in, len), "CCM in the default provider");
    if (ok <= 0) /* a mismatch wipes out */
        return ok;
    ccree_count(c->e.idx, 1, 1, len);
    return !c->enc || aead_sw_get_tag(c, tag, taglen);
}

/* 1, 0 with an error raised, or -1 when a decryption fails authentication (out wiped). */
static int sw_oneshot(struct aead_ctx *c, const unsigned char *aad, size_t aadlen,
                      const unsigned char *in, unsigned char *out, size_t len, unsigned char *tag,
                      size_t taglen)
{
    if (!c->mode->sw_start(c, c->enc ? NULL : tag, 1, len)
        || (aadlen > 0 && !sw_aad(c, aad, aadlen)))
        return 0;
    return c->mode->sw_seal(c, in, out, len, tag, taglen);
}

int aead_choose(struct aead_ctx *c, size_t total, size_t taglen, struct ccree_choice *ch)
{
    if (kernel_can(c, total, taglen))
        return ccree_engine_choose(&c->e, total, ch);
    *ch = (struct ccree_choice){ .kernel = 0 };
    return 0;
}

int aead_oneshot(struct aead_ctx *c, struct ccree_choice *ch, unsigned char *aad, size_t aadlen,
                 const unsigned char *in, unsigned char *out, size_t len, unsigned char *tag,
                 size_t taglen)
{
    int err;

    if (ch->kernel) {
        int sent = 0;

        if ((err = ccree_engine_socket(&c->e, taglen)) > 0) {
            ccree_start(ch);
            err = kernel_oneshot(c, aad, aadlen, in, out, len, tag, taglen, &sent);
        }
        if (err == -EBADMSG && c->enc)
            err = -EIO; /* a verdict on a decryption only */
        if (err == 0 || err == -EBADMSG)
            ccree_count(c->e.idx, 0, 1, len);
        if (err == 0)
            ccree_ran(c->e.prov, ch);
        if (err == 0)
            return 1;
        if (sent) /* unauthenticated plaintext, or what a failed kernel wrote */
            OPENSSL_cleanse(out, len);
        if (err == -EBADMSG)
            return -1;
        ch->timed = 0;
        if (!ccree_engine_failed(&c->e, err, sent && ccree_overlap(in, len, out, len)))
            return 0;
    } else if (!software_ok(c)) {
        return 0;
    }
    ccree_start(ch);
    err = sw_oneshot(c, aad, aadlen, in, out, len, tag, taglen);
    if (err > 0)
        ccree_ran(c->e.prov, ch);
    return err;
}

int aead_oneshot_final(struct aead_ctx *c, unsigned char *aad, size_t aadlen,
                       const unsigned char *in, unsigned char *out, size_t len, unsigned char *tag,
                       size_t taglen)
{
    struct ccree_choice ch;
    int ok;

    aead_choose(c, aadlen + len, taglen, &ch);
    ok = aead_oneshot(c, &ch, aad, aadlen, in, out, len, tag, taglen);
    return ok < 0 ? aead_fail(c, CCREE_R_BAD_DECRYPT, "tag mismatch") : ok;
}

int aead_to_stream(struct aead_ctx *c)
{
    if (c->msg == MSG_STREAM)
        return 1;
    if (!software_ok(c)
        || !c->mode->sw_start(c, !c->enc && c->tagset ? c->tag : NULL, c->msglen_set, c->msglen)
        || (c->aadlen > 0 && !sw_aad(c, c->buf, c->aadlen))
        || (c->msg == MSG_ONESHOT
            && !aead_sw_data(c, c->buf + c->aadlen, c->buf + c->aadlen, c->datalen)))
        return 0;
    c->msg = MSG_STREAM;
    return 1;
}

int aead_add_aad(struct aead_ctx *c, const unsigned char *aad, size_t len)
{
    if (c->msg == MSG_AAD && c->aadlen + len + TAG_MAX <= AFALG_MAX_REQUEST
        && (c->mode->streams || c->naad == 0)) {
        if (!aead_reserve(c, c->aadlen + len))
            return aead_fail(c, CCREE_R_SOFTWARE, "no memory");
        memcpy(c->buf + c->aadlen, aad, len);
        c->aadlen += len;
    } else if (!aead_to_stream(c) || !sw_aad(c, aad, len)) {
        return 0;
    }
    c->naad++;
    return 1;
}
