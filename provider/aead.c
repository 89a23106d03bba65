/*
 * AES-GCM and AES-CCM. The kernel takes a whole message (AAD, data and tag) in one request, so
 * a message goes to it when its data comes in one update after the AAD and, on decrypt, after
 * the tag: every such encryption, libssl's TLS 1.3 records and TLS 1.2 records. Until the data
 * comes the context keeps the AAD (and GCM, after a one-shot, its data): a message that then
 * goes on differently is replayed into the default provider and goes on there.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "prov.h"

#define TAG_MAX 16
#define GCM_IV_MAX 128 /* as the default provider */
#define TLS_AAD 13     /* EVP_AEAD_TLS1_AAD_LEN */
#define TLS_FIXED 4    /* the implicit part of a TLS 1.2 nonce */
#define TLS_EXPLICIT 8 /* the part carried in the record */

enum { IV_NONE, IV_SET, IV_USED };
/* Where the data of the current message went. */
enum { MSG_AAD, MSG_ONESHOT, MSG_STREAM, MSG_FAILED };

struct aead_ctx {
    struct ccree_prov *prov;
    size_t idx;
    const struct ccree_alg *alg;
    int gcm, enc, keyed;
    unsigned char key[32];
    unsigned char iv[GCM_IV_MAX];
    size_t ivlen;
    int ivstate;
    unsigned char tag[TAG_MAX];
    size_t taglen; /* GCM: 0 until a tag is set or computed; CCM: M */
    int tagset;    /* CCM: the tag is given (decrypt) or computed (encrypt); GCM: given for
                    * this message (the default provider keeps an old one for final) */
    size_t msglen; /* CCM: the data length announced before the AAD */
    size_t kivlen, ktaglen; /* CCM: the IV and tag lengths when the key was set */
    int msglen_set;
    unsigned char tlsaad[TLS_AAD];
    int tls, ivgen;
    size_t tlspad;
    int msg;
    size_t naad;         /* non-empty AAD updates of this message */
    unsigned char *buf;  /* this message so far: AAD || one-shot data (GCM) */
    size_t cap, aadlen, datalen;
    unsigned char *aadout; /* where the kernel writes the AAD back, so that ours stays intact */
    size_t aadcap;
    int gen_next; /* tlsivgen gave out the explicit nonce: count it up before the next */
    unsigned char ivout[GCM_IV_MAX]; /* the IV as the default provider reports it */
    struct ccree_sock op;
    size_t op_authsize;
    int kernel_off; /* the kernel failed this key: software until the next key */
    EVP_CIPHER_CTX *sw;
    int sw_keyed, sw_enc;
};

static int fail(struct aead_ctx *c, int reason, const char *what)
{
    CCREE_RAISE(c->prov, reason, "%s: %s", c->alg->kname, what);
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

static int reserve(struct aead_ctx *c, size_t n)
{
    return grow(&c->buf, &c->cap, n);
}

/* What this message kept of its data goes: a one-shot GCM encryption's plaintext. */
static void forget_data(struct aead_ctx *c)
{
    if (c->gcm && c->datalen > 0 && c->msg == MSG_ONESHOT)
        OPENSSL_cleanse(c->buf + c->aadlen, c->datalen);
}

static void new_message(struct aead_ctx *c)
{
    forget_data(c);
    if (c->gcm)
        c->tagset = 0;
    c->msg = MSG_AAD;
    c->naad = c->aadlen = c->datalen = 0;
}

/* --- the kernel ---------------------------------------------------------------------------- */

/*
 * A decryption with neither AAD nor data has nothing to read back, and the kernel's recvmsg
 * then returns without running it (algif_aead works only while the reader has room): its tag
 * would go unchecked. Such a message runs in software.
 */
static int kernel_can(const struct aead_ctx *c, size_t total, size_t taglen)
{
    return c->prov->path[c->idx].offload && !c->kernel_off && (c->enc || total > 0)
           && total + taglen <= AFALG_MAX_REQUEST
           && (!c->gcm || (c->ivlen == 12 && (taglen == 4 || taglen == 8 || taglen >= 12)));
}

static int kernel_ready(struct aead_ctx *c, size_t authsize)
{
    int fd;

    if (ccree_sock_valid(&c->op) && c->op_authsize == authsize)
        return 1;
    ccree_sock_close(&c->op); /* the tag length belongs to the kernel transform */
    fd = ccree_open(c->prov, c->idx, c->key, c->alg->keylen, authsize, 1);
    if (fd < 0)
        return fd;
    ccree_sock_set(&c->op, fd);
    c->op_authsize = authsize;
    return 1;
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
    size_t kivlen = c->ivlen;
    int err;

    *sent = 0;
    if (!grow(&c->aadout, &c->aadcap, aadlen))
        return -ENOMEM;
    dst[0].iov_base = c->aadout;

    if (c->gcm)
        memcpy(kiv, c->iv, kivlen);
    else
        kivlen = afalg_ccm_iv(kiv, c->iv, c->ivlen);
    r.iv = kiv;
    r.ivlen = kivlen;
    err = afalg_cipher(c->op.fd, &r);
    *sent = r.sent;
    if (err != 0)
        ccree_sock_close(&c->op); /* what it still holds is unknown */
    return err;
}

/* --- the default provider ------------------------------------------------------------------ */

static int software_ok(struct aead_ctx *c)
{
    return c->prov->fallback || fail(c, CCREE_R_NOT_OFFLOADED, "this call pattern needs software");
}

static int sw_set_tag(struct aead_ctx *c, const unsigned char *tag, size_t taglen)
{
    OSSL_PARAM p[] = { OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, (void *)tag, taglen),
                       OSSL_PARAM_END };

    return EVP_CIPHER_CTX_set_params(c->sw, p) || fail(c, CCREE_R_SOFTWARE, "cannot set the tag");
}

/*
 * The software context at the start of this message; CCM's tag (decrypt) and length if known.
 * CCM takes its IV and tag lengths with the key, so it is keyed for each message.
 */
static int sw_start(struct aead_ctx *c, const unsigned char *tag, int known, size_t len)
{
    size_t ivlen = c->ivlen;
    OSSL_PARAM lens[] = { OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &ivlen),
                          OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, c->taglen),
                          OSSL_PARAM_END };
    int n, ok;

    if (c->sw == NULL && (c->sw = EVP_CIPHER_CTX_new()) == NULL)
        return fail(c, CCREE_R_SOFTWARE, "no memory");
    if (c->gcm && (!c->sw_keyed || c->sw_enc != c->enc)) {
        c->sw_keyed = EVP_CipherInit_ex2(c->sw, c->prov->sw_cipher[c->idx], c->key, NULL, c->enc,
                                         NULL);
        c->sw_enc = c->enc;
    }
    if (c->gcm)
        lens[1] = OSSL_PARAM_construct_end();
    ok = c->gcm ? c->sw_keyed && EVP_CIPHER_CTX_set_params(c->sw, lens)
                      && EVP_CipherInit_ex2(c->sw, NULL, NULL, c->iv, c->enc, NULL)
                : EVP_CipherInit_ex2(c->sw, c->prov->sw_cipher[c->idx], NULL, NULL, c->enc, lens)
                      && EVP_CipherInit_ex2(c->sw, NULL, c->key, c->iv, c->enc, NULL)
                      && (tag == NULL || sw_set_tag(c, tag, c->taglen))
                      && (!known || EVP_CipherUpdate(c->sw, NULL, &n, NULL, (int)len));
    return ok || fail(c, CCREE_R_SOFTWARE, "cannot start the default provider");
}

static int sw_aad(struct aead_ctx *c, const unsigned char *aad, size_t len)
{
    int n;

    return EVP_CipherUpdate(c->sw, NULL, &n, aad, (int)len)
           || fail(c, CCREE_R_SOFTWARE, "AAD in the default provider");
}

/* Data through the software context; a CCM decrypt that fails authentication wipes out. */
static int sw_data(struct aead_ctx *c, unsigned char *out, const unsigned char *in, size_t len)
{
    int n;

    if (!EVP_CipherUpdate(c->sw, out, &n, in, (int)len))
        return fail(c, c->gcm || c->enc ? CCREE_R_SOFTWARE : CCREE_R_BAD_DECRYPT,
                    "data in the default provider");
    ccree_count(c->idx, 1, 1, len);
    return 1;
}

static int sw_get_tag(struct aead_ctx *c, unsigned char *tag, size_t taglen)
{
    OSSL_PARAM p[] = { OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, taglen),
                       OSSL_PARAM_END };

    return EVP_CIPHER_CTX_get_params(c->sw, p) || fail(c, CCREE_R_SOFTWARE, "no tag");
}

/* GCM's end of message in software: the tag computed, or checked (-1: mismatch, no error). */
static int sw_gcm_final(struct aead_ctx *c, unsigned char *tag, size_t taglen)
{
    unsigned char none[TAG_MAX];
    int n, ok;

    if (!c->enc && !sw_set_tag(c, tag, taglen))
        return 0;
    ERR_set_mark();
    ok = EVP_CipherFinal_ex(c->sw, none, &n);
    if (!ok && !c->enc) {
        ERR_pop_to_mark();
        return -1;
    }
    ERR_clear_last_mark();
    if (!ok)
        return fail(c, CCREE_R_SOFTWARE, "GCM in the default provider");
    return !c->enc || sw_get_tag(c, tag, taglen);
}

/* 1, 0 with an error raised, or -1 when a decryption fails authentication (out wiped). */
static int sw_oneshot(struct aead_ctx *c, const unsigned char *aad, size_t aadlen,
                      const unsigned char *in, unsigned char *out, size_t len, unsigned char *tag,
                      size_t taglen)
{
    int n, ok;

    if (!sw_start(c, c->enc ? NULL : tag, 1, len) || (aadlen > 0 && !sw_aad(c, aad, aadlen)))
        return 0;
    if (c->gcm) {
        if ((len > 0 && !sw_data(c, out, in, len)) || (ok = sw_gcm_final(c, tag, taglen)) == 0)
            return 0;
        if (ok < 0)
            OPENSSL_cleanse(out, len);
        return ok;
    }
    ERR_set_mark();
    ok = EVP_CipherUpdate(c->sw, out, &n, in, (int)len); /* CCM: wipes out on a mismatch */
    if (!ok && !c->enc) {
        ERR_pop_to_mark();
        return -1;
    }
    ERR_clear_last_mark();
    if (!ok)
        return fail(c, CCREE_R_SOFTWARE, "CCM in the default provider");
    ccree_count(c->idx, 1, 1, len);
    return !c->enc || sw_get_tag(c, tag, taglen);
}

/* The path of a message of total bytes: 1 the kernel, 0 software (timed where both can). */
static int choose(struct aead_ctx *c, size_t total, size_t taglen, struct ccree_choice *ch)
{
    if (kernel_can(c, total, taglen))
        return ccree_choose(c->prov, c->idx, total, ch);
    *ch = (struct ccree_choice){ .kernel = 0 };
    return 0;
}

/*
 * A whole message, aad || in to out with its tag, on the path chosen (choose), the kernel
 * failing over to the default provider: 1, 0 with an error raised, or -1 when a decryption
 * fails authentication (out wiped, no error raised: the caller's to say).
 */
static int oneshot(struct aead_ctx *c, struct ccree_choice *ch, unsigned char *aad, size_t aadlen,
                   const unsigned char *in, unsigned char *out, size_t len, unsigned char *tag,
                   size_t taglen)
{
    int err;

    if (ch->kernel) {
        int sent = 0;

        if ((err = kernel_ready(c, taglen)) > 0) {
            ccree_start(ch);
            err = kernel_oneshot(c, aad, aadlen, in, out, len, tag, taglen, &sent);
        }
        if (err == -EBADMSG && c->enc)
            err = -EIO; /* a verdict on a decryption only */
        if (err == 0 || err == -EBADMSG)
            ccree_count(c->idx, 0, 1, len);
        if (err == 0)
            ccree_ran(c->prov, ch);
        if (err == 0)
            return 1;
        if (sent) /* unauthenticated plaintext, or what a failed kernel wrote */
            OPENSSL_cleanse(out, len);
        if (err == -EBADMSG)
            return -1;
        ch->timed = 0;
        if (!ccree_kernel_failed(c->prov, c->idx, err, sent && ccree_overlap(in, len, out, len)))
            return 0;
        c->kernel_off = 1;
    } else if (!software_ok(c)) {
        return 0;
    }
    ccree_start(ch);
    err = sw_oneshot(c, aad, aadlen, in, out, len, tag, taglen);
    if (err > 0)
        ccree_ran(c->prov, ch);
    return err;
}

/* A one-shot as the end of an operation: an authentication failure is an error. */
static int oneshot_final(struct aead_ctx *c, unsigned char *aad, size_t aadlen,
                         const unsigned char *in, unsigned char *out, size_t len,
                         unsigned char *tag, size_t taglen)
{
    struct ccree_choice ch;
    int ok;

    choose(c, aadlen + len, taglen, &ch);
    ok = oneshot(c, &ch, aad, aadlen, in, out, len, tag, taglen);
    return ok < 0 ? fail(c, CCREE_R_BAD_DECRYPT, "tag mismatch") : ok;
}

/* The software context brought to where this message is, to go on there. */
static int to_stream(struct aead_ctx *c)
{
    if (c->msg == MSG_STREAM)
        return 1;
    if (!software_ok(c)
        || !sw_start(c, !c->enc && c->tagset ? c->tag : NULL, c->msglen_set, c->msglen)
        || (c->aadlen > 0 && !sw_aad(c, c->buf, c->aadlen))
        || (c->msg == MSG_ONESHOT
            && !sw_data(c, c->buf + c->aadlen, c->buf + c->aadlen, c->datalen)))
        return 0;
    c->msg = MSG_STREAM;
    return 1;
}

/* AAD kept while it fits one kernel request with the data still to come. */
static int add_aad(struct aead_ctx *c, const unsigned char *aad, size_t len)
{
    if (c->msg == MSG_AAD && c->aadlen + len + TAG_MAX <= AFALG_MAX_REQUEST
        && (c->gcm || c->naad == 0)) {
        if (!reserve(c, c->aadlen + len))
            return fail(c, CCREE_R_SOFTWARE, "no memory");
        memcpy(c->buf + c->aadlen, aad, len);
        c->aadlen += len;
    } else if (!to_stream(c) || !sw_aad(c, aad, len)) {
        return 0;
    }
    c->naad++;
    return 1;
}

/* --- GCM ----------------------------------------------------------------------------------- */

static int gcm_iv_generate(struct aead_ctx *c)
{
    if (c->ivlen < 12 || RAND_bytes_ex(c->prov->libctx, c->iv, c->ivlen, 0) <= 0)
        return fail(c, CCREE_R_BAD_STATE, "no IV set and none can be generated");
    c->ivstate = IV_SET;
    return 1;
}

/* No IV set: an encryption gets a random one, as in the default provider. */
static int gcm_new_iv(struct aead_ctx *c)
{
    return c->enc && !c->tls ? gcm_iv_generate(c) : fail(c, CCREE_R_BAD_STATE, "no IV set");
}

static void ctr64_inc(unsigned char *counter)
{
    int n = 8;

    while (n-- > 0 && ++counter[n] == 0)
        continue;
}

static int gcm_final(struct aead_ctx *c)
{
    size_t taglen = c->enc ? TAG_MAX : c->taglen;
    int ok;

    c->ivstate = IV_USED;
    if (taglen == 0)
        return fail(c, CCREE_R_BAD_TAG, "no tag set for decryption");
    if (c->msg == MSG_FAILED)
        return fail(c, CCREE_R_BAD_DECRYPT, "tag mismatch");
    if (c->msg == MSG_ONESHOT) {
        if (c->enc)
            forget_data(c);
        c->taglen = taglen;
        return 1;
    }
    ok = c->msg == MSG_STREAM ? sw_gcm_final(c, c->tag, taglen)
                              : oneshot_final(c, c->buf, c->aadlen, NULL, NULL, 0, c->tag, taglen);
    c->taglen = taglen;
    return ok < 0 ? fail(c, CCREE_R_BAD_DECRYPT, "tag mismatch") : ok;
}

static int gcm_data(struct aead_ctx *c, unsigned char *out, const unsigned char *in, size_t len)
{
    size_t taglen = c->enc ? TAG_MAX : c->taglen;
    struct ccree_choice ch;
    int ok, first = c->msg == MSG_AAD && (c->enc || c->tagset)
                    && c->aadlen + len + TAG_MAX <= AFALG_MAX_REQUEST;

    if (len == 0) /* no step, as in the default provider: not a one-shot of no data */
        return 1;
    if (c->msg == MSG_FAILED)
        return fail(c, CCREE_R_BAD_STATE, "with its tag set first, a decryption takes its data in "
                                          "one update");
    /* One-shot: encryption the kernel takes; decryption with its tag, so nothing unauthentic
     * is released. The data is kept for a replay should more come. */
    ch.timed = 0;
    if (first && (choose(c, c->aadlen + len, taglen, &ch) || !c->enc)) {
        if (!reserve(c, c->aadlen + len))
            return fail(c, CCREE_R_SOFTWARE, "no memory");
        memcpy(c->buf + c->aadlen, in, len);
        c->datalen = len;
        if ((ok = oneshot(c, &ch, c->buf, c->aadlen, c->buf + c->aadlen, out, len, c->tag, taglen))
            == 0)
            return 0;
        /* A mismatch withholds the data (out is wiped): final fails, as in the default provider.
         * An encryption's tag is computed, but given out only after final. */
        c->msg = ok > 0 ? MSG_ONESHOT : MSG_FAILED;
        c->taglen = c->enc ? 0 : taglen;
        return 1;
    }
    /* An encryption in software: streamed, its data timed against the kernel's one-shots. */
    if (!to_stream(c))
        return 0;
    ccree_start(&ch);
    if (!sw_data(c, out, in, len))
        return 0;
    ccree_ran(c->prov, &ch);
    c->datalen += len;
    return 1;
}

/* As in the default provider, CCM's IV and tag lengths take effect when the key is set. */
static int ccm_lengths_keyed(struct aead_ctx *c)
{
    return (c->ivlen == c->kivlen && c->taglen == c->ktaglen)
           || fail(c, CCREE_R_BAD_STATE, "set CCM's IV and tag lengths before its key");
}

/*
 * TLS 1.2: explicit nonce || payload || tag, in place, by the rules of the default provider's
 * gcm_tls_cipher and ccm_tls_cipher. A record sent carries GCM's explicit IV, counted up after
 * it, or CCM's sequence number; a record received brings its own. GCM takes one record per
 * tlsaad.
 */
static int tls_record(struct aead_ctx *c, unsigned char *out, size_t *outl, const unsigned char *in,
                      size_t len)
{
    size_t taglen = c->gcm ? TAG_MAX : c->taglen, plen = len - TLS_EXPLICIT - taglen;
    unsigned char *explicit;
    int ok;

    if (in == NULL || out != in || len < TLS_EXPLICIT + taglen)
        return fail(c, CCREE_R_BAD_LENGTH, "a TLS record is in place and holds a nonce and a tag");
    if (c->gcm ? !c->ivgen || c->ivlen < TLS_EXPLICIT : c->ivlen != TLS_FIXED + TLS_EXPLICIT)
        return fail(c, CCREE_R_BAD_STATE, "TLS record without a 12-byte fixed IV");
    if (!c->gcm && !ccm_lengths_keyed(c))
        return 0;
    explicit = c->iv + c->ivlen - TLS_EXPLICIT;
    if (c->gcm && c->enc && c->gen_next) /* tlsivgen gave out the last one */
        ctr64_inc(explicit);
    c->gen_next = 0;
    if (c->enc)
        memcpy(out, c->gcm ? explicit : c->tlsaad, TLS_EXPLICIT);
    memcpy(explicit, in, TLS_EXPLICIT);
    ok = oneshot_final(c, c->tlsaad, TLS_AAD, in + TLS_EXPLICIT, out + TLS_EXPLICIT, plen,
                       out + TLS_EXPLICIT + plen, taglen);
    if (c->gcm && c->enc)
        ctr64_inc(explicit);
    *outl = ok ? (c->enc ? len : plen) : 0;
    return ok;
}

/* One GCM call (keyed, not a TLS record) as the default provider's gcm_cipher_internal takes it. */
static int gcm_message(struct aead_ctx *c, unsigned char *out, size_t *outl, const unsigned char *in,
                       size_t len)
{
    if (c->ivstate == IV_USED)
        return fail(c, CCREE_R_BAD_STATE, "the IV is used: set a new one");
    if (c->ivstate == IV_NONE && !gcm_new_iv(c))
        return 0;
    if (in == NULL)
        return gcm_final(c);
    if (out == NULL && c->datalen > 0)
        return fail(c, CCREE_R_BAD_STATE, "AAD after the data");
    if (out == NULL ? !add_aad(c, in, len) : !gcm_data(c, out, in, len))
        return 0;
    *outl = len; /* AAD too, as the default provider counts it */
    return 1;
}

/* --- CCM ----------------------------------------------------------------------------------- */

static int ccm_length_fits(struct aead_ctx *c, size_t len)
{
    size_t l = 15 - c->ivlen;

    return l >= sizeof(len) || (len >> (8 * l)) == 0 /* a shift past the width is UB: 32 bits */
           || fail(c, CCREE_R_BAD_LENGTH, "the data length does not fit the nonce's L");
}

static int ccm_data(struct aead_ctx *c, unsigned char *out, const unsigned char *in, size_t len)
{
    if (c->msg == MSG_ONESHOT || c->datalen > 0)
        return fail(c, CCREE_R_BAD_STATE, "CCM takes its data in one update");
    if (c->msglen_set && c->msglen != len)
        return fail(c, CCREE_R_BAD_LENGTH, "not the announced data length");
    if (!ccm_length_fits(c, len))
        return 0;
    if (!c->enc && !c->tagset)
        return fail(c, CCREE_R_BAD_TAG, "no tag set for decryption");
    if (c->msg == MSG_AAD && c->aadlen + len + c->taglen <= AFALG_MAX_REQUEST) {
        if (!oneshot_final(c, c->buf, c->aadlen, in, out, len, c->tag, c->taglen))
            return 0;
        c->msg = MSG_ONESHOT;
    } else if (!to_stream(c) || !sw_data(c, out, in, len)
               || (c->enc && !sw_get_tag(c, c->tag, c->taglen))) {
        return 0;
    }
    c->datalen = len;
    c->tagset = c->enc;
    if (!c->enc) { /* as the default provider: this message is done */
        c->ivstate = IV_NONE;
        c->msglen_set = 0;
    }
    return 1;
}

/* One CCM call (keyed, not a TLS record) as the default provider's ccm_cipher_internal takes it. */
static int ccm_message(struct aead_ctx *c, unsigned char *out, size_t *outl, const unsigned char *in,
                       size_t len)
{
    if (in == NULL && out != NULL) /* final: nothing to do */
        return 1;
    if (c->ivstate != IV_SET)
        return fail(c, CCREE_R_BAD_STATE, "no IV set");
    if (!ccm_lengths_keyed(c)) /* its length and AAD too, as the default provider refuses them */
        return 0;
    if (out == NULL && in == NULL) {
        if (!ccm_length_fits(c, len))
            return 0;
        if (c->msg != MSG_AAD || c->naad > 0) { /* announced late: as the default provider */
            int n;

            if (!to_stream(c) || !EVP_CipherUpdate(c->sw, NULL, &n, NULL, (int)len))
                return fail(c, CCREE_R_SOFTWARE, "length in the default provider");
        }
        c->msglen = len;
        c->msglen_set = 1;
    } else if (out == NULL) {
        if (!c->msglen_set && len > 0)
            return fail(c, CCREE_R_BAD_STATE, "CCM needs the data length before the AAD");
        if (c->msg == MSG_ONESHOT)
            return fail(c, CCREE_R_BAD_STATE, "AAD after the data");
        if (len > 0 && !add_aad(c, in, len))
            return 0;
    } else if (!ccm_data(c, out, in, len)) {
        return 0;
    }
    *outl = len; /* the length and AAD too, as the default provider counts them */
    return 1;
}

static int message(struct aead_ctx *c, unsigned char *out, size_t *outl, const unsigned char *in,
                   size_t len)
{
    int record = c->tls;

    *outl = 0;
    if (record && c->gcm) { /* as in the default provider: a GCM record, even refused, spends
                             * its tlsaad and IV */
        c->tls = 0;
        c->ivstate = IV_USED;
    }
    if (!c->keyed)
        return fail(c, CCREE_R_NO_KEY, "no key set");
    if (len > SIZE_MAX / 2) /* sums of lengths below stay in range, on 32 bits too */
        return fail(c, CCREE_R_BAD_LENGTH, "too long");
    if (record)
        return tls_record(c, out, outl, in, len);
    return c->gcm ? gcm_message(c, out, outl, in, len) : ccm_message(c, out, outl, in, len);
}

/* --- dispatch ------------------------------------------------------------------------------ */

static int aead_set_ctx_params(void *vctx, const OSSL_PARAM params[]);

static int aead_init(struct aead_ctx *c, const unsigned char *key, size_t keylen,
                     const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[], int enc)
{
    /* As OpenSSL's IV state: data encrypted under this IV spends it, for the next key too. */
    int spent = c->enc && c->datalen > 0;

    if (!ccree_check_path(c->prov, c->idx))
        return 0;
    c->enc = enc;
    if (iv != NULL) {
        if (c->gcm ? ivlen == 0 || ivlen > GCM_IV_MAX : ivlen != c->ivlen) {
            CCREE_RAISE(c->prov, CCREE_R_BAD_IV_LENGTH, "%s: %zu bytes", c->alg->kname, ivlen);
            return 0;
        }
        memcpy(c->iv, iv, ivlen);
        c->ivlen = ivlen;
        c->ivstate = IV_SET;
        c->gen_next = 0; /* tlsivgen gives out this IV first */
        new_message(c);
    }
    if (key != NULL) {
        if (keylen != c->alg->keylen) {
            CCREE_RAISE(c->prov, CCREE_R_BAD_KEY_LENGTH, "%zu bytes, %s takes %zu", keylen,
                        c->alg->kname, c->alg->keylen);
            return 0;
        }
        if (!c->keyed || CRYPTO_memcmp(c->key, key, keylen) != 0) { /* the same key: keep all */
            memcpy(c->key, key, keylen);
            c->keyed = 1;
            c->sw_keyed = 0;
            c->kernel_off = 0;
            ccree_sock_close(&c->op);
        }
        c->kivlen = c->ivlen;
        c->ktaglen = c->taglen;
        if (iv == NULL && spent)
            c->ivstate = IV_USED;
        if (c->gcm) /* as the default provider: GCM's next TLS record needs its tlsaad again */
            c->tls = 0;
        new_message(c);
    }
    return aead_set_ctx_params(c, params);
}

static int aead_einit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                      size_t ivlen, const OSSL_PARAM params[])
{
    return aead_init(vctx, key, keylen, iv, ivlen, params, 1);
}

static int aead_dinit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
                      size_t ivlen, const OSSL_PARAM params[])
{
    return aead_init(vctx, key, keylen, iv, ivlen, params, 0);
}

static int aead_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                       const unsigned char *in, size_t inl)
{
    struct aead_ctx *c = vctx;

    *outl = 0;
    if (c->gcm && inl == 0)
        return 1;
    if (outsize < inl)
        return fail(c, CCREE_R_OUTPUT_TOO_SMALL, "output buffer");
    return message(c, out, outl, in, inl);
}

static int aead_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    struct aead_ctx *c = vctx;

    (void)outsize;
    if (!message(c, out, outl, NULL, 0))
        return 0;
    *outl = 0;
    return 1;
}

/* EVP_Cipher: as update, or final when in is NULL; the length returned is inl. */
static int aead_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                       const unsigned char *in, size_t inl)
{
    struct aead_ctx *c = vctx;

    *outl = 0;
    if (outsize < inl)
        return fail(c, CCREE_R_OUTPUT_TOO_SMALL, "output buffer");
    if (!message(c, out, outl, in, inl))
        return 0;
    *outl = inl;
    return 1;
}

static void *aead_dupctx(void *vctx)
{
    struct aead_ctx *c = vctx, *d = OPENSSL_malloc(sizeof(*d));

    if (d == NULL)
        return NULL;
    *d = *c;
    ccree_sock_init(&d->op);
    d->buf = d->aadout = NULL;
    d->aadcap = 0;
    d->sw = NULL;
    if ((c->cap > 0 && (d->buf = OPENSSL_memdup(c->buf, c->cap)) == NULL)
        || (c->sw != NULL
            && ((d->sw = EVP_CIPHER_CTX_new()) == NULL || !EVP_CIPHER_CTX_copy(d->sw, c->sw)))) {
        EVP_CIPHER_CTX_free(d->sw);
        OPENSSL_clear_free(d->buf, d->cap);
        OPENSSL_clear_free(d, sizeof(*d));
        return NULL;
    }
    return d;
}

static void aead_freectx(void *vctx)
{
    struct aead_ctx *c = vctx;

    if (c == NULL)
        return;
    ccree_sock_close(&c->op);
    EVP_CIPHER_CTX_free(c->sw);
    OPENSSL_clear_free(c->buf, c->cap);
    OPENSSL_free(c->aadout);
    OPENSSL_clear_free(c, sizeof(*c));
}

static int set_octets(OSSL_PARAM *p, const unsigned char *v, size_t len)
{
    return OSSL_PARAM_set_octet_string(p, v, len) || OSSL_PARAM_set_octet_ptr(p, v, len);
}

static int get_tag(struct aead_ctx *c, OSSL_PARAM *p)
{
    size_t sz = p->data_size;

    if (!c->enc || (c->gcm ? c->taglen == 0 : !c->tagset))
        return fail(c, CCREE_R_BAD_TAG, "no tag computed");
    if (p->data_type != OSSL_PARAM_OCTET_STRING || sz == 0 || sz > TAG_MAX
        || (!c->gcm && sz != c->taglen))
        return fail(c, CCREE_R_BAD_TAG, "bad tag length asked for");
    if (!OSSL_PARAM_set_octet_string(p, c->tag, sz))
        return fail(c, CCREE_R_BAD_PARAM, "cannot return the tag");
    if (!c->gcm) { /* as the default provider: the message is done */
        c->tagset = 0;
        c->ivstate = IV_NONE;
        c->msglen_set = 0;
    }
    return 1;
}

/* tlsivgen: the explicit part of the next TLS nonce, which starts a message. */
static int get_ivgen(struct aead_ctx *c, OSSL_PARAM *p)
{
    size_t n = p->data_size == 0 || p->data_size > c->ivlen ? c->ivlen : p->data_size;

    if (!c->gcm || p->data == NULL || p->data_type != OSSL_PARAM_OCTET_STRING || !c->ivgen
        || !c->keyed || c->ivlen < TLS_EXPLICIT)
        return fail(c, CCREE_R_BAD_STATE, "no TLS fixed IV set");
    if (c->gen_next)
        ctr64_inc(c->iv + c->ivlen - TLS_EXPLICIT);
    memcpy(p->data, c->iv + c->ivlen - n, n); /* this message's nonce */
    p->return_size = n;
    c->gen_next = 1;
    c->ivstate = IV_SET;
    new_message(c);
    return 1;
}

static int aead_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    struct aead_ctx *c = vctx;
    OSSL_PARAM *p;

    if (((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IVLEN)) != NULL
         && !OSSL_PARAM_set_size_t(p, c->ivlen))
        || ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_KEYLEN)) != NULL
            && !OSSL_PARAM_set_size_t(p, c->alg->keylen))
        || ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD_TAGLEN)) != NULL
            && !OSSL_PARAM_set_size_t(p, c->taglen != 0 ? c->taglen : TAG_MAX))
        || ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD)) != NULL
            && !OSSL_PARAM_set_size_t(p, c->tlspad)))
        return fail(c, CCREE_R_BAD_PARAM, "cannot return a parameter");
    for (p = params; p != NULL && p->key != NULL; p++) {
        if (strcmp(p->key, OSSL_CIPHER_PARAM_IV) != 0
            && strcmp(p->key, OSSL_CIPHER_PARAM_UPDATED_IV) != 0)
            continue;
        if (c->gcm && c->ivstate == IV_NONE && !gcm_new_iv(c))
            return 0;
        memcpy(c->ivout, c->iv, c->ivlen);
        if (c->gen_next) /* the default provider has counted up the nonce it gave out */
            ctr64_inc(c->ivout + c->ivlen - TLS_EXPLICIT);
        if ((p->data != NULL && p->data_size < c->ivlen) || !set_octets(p, c->ivout, c->ivlen))
            return fail(c, CCREE_R_BAD_IV_LENGTH, "IV buffer too small");
    }
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD_TAG)) != NULL && !get_tag(c, p))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN)) != NULL
        && !get_ivgen(c, p))
        return 0;
    return 1;
}

static int set_tag(struct aead_ctx *c, const OSSL_PARAM *p)
{
    size_t sz = p->data_size;

    if (p->data_type != OSSL_PARAM_OCTET_STRING || sz > TAG_MAX
        || (c->gcm ? sz == 0 : (sz & 1) || sz < 4))
        return fail(c, CCREE_R_BAD_TAG, "bad tag length");
    if (p->data == NULL && c->gcm)
        return fail(c, CCREE_R_BAD_TAG, "no tag given");
    if (p->data != NULL) {
        if (c->enc)
            return fail(c, CCREE_R_BAD_TAG, "a tag is set for decryption only");
        memcpy(c->tag, p->data, sz);
        c->tagset = 1;
    }
    if (c->msg == MSG_FAILED)
        return fail(c, CCREE_R_BAD_STATE, "the data failed authentication and was withheld");
    c->taglen = sz;
    /* A new tag after a one-shot decryption: verified again, in software. */
    if (c->msg == MSG_ONESHOT && c->gcm && !to_stream(c))
        return 0;
    return c->msg != MSG_STREAM || sw_set_tag(c, p->data, sz);
}

static int set_ivlen(struct aead_ctx *c, const OSSL_PARAM *p)
{
    size_t sz;

    if (!OSSL_PARAM_get_size_t(p, &sz) || (c->gcm ? sz == 0 || sz > GCM_IV_MAX : sz < 7 || sz > 13))
        return fail(c, CCREE_R_BAD_IV_LENGTH, "bad IV length");
    if (sz != c->ivlen && c->ivstate != IV_NONE) /* as the default provider: the IV set is void */
        c->ivstate = c->gcm ? IV_USED : IV_NONE;
    c->ivlen = sz;
    return 1;
}

static int set_tls_aad(struct aead_ctx *c, const OSSL_PARAM *p)
{
    size_t len, tail = c->gcm ? TAG_MAX : c->taglen;

    if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data_size != TLS_AAD)
        return fail(c, CCREE_R_BAD_PARAM, "TLS AAD is 13 bytes");
    memcpy(c->tlsaad, p->data, TLS_AAD);
    c->tls = 1;
    len = (size_t)c->tlsaad[TLS_AAD - 2] << 8 | c->tlsaad[TLS_AAD - 1];
    if (len < TLS_EXPLICIT + (c->enc ? 0 : tail))
        return fail(c, CCREE_R_BAD_LENGTH, "TLS record too short");
    len -= TLS_EXPLICIT + (c->enc ? 0 : tail);
    c->tlsaad[TLS_AAD - 2] = (unsigned char)(len >> 8);
    c->tlsaad[TLS_AAD - 1] = (unsigned char)len;
    c->tlspad = tail;
    return 1;
}

static int set_tls_fixed(struct aead_ctx *c, const OSSL_PARAM *p)
{
    size_t len = p->data_size;

    if (p->data_type != OSSL_PARAM_OCTET_STRING)
        return fail(c, CCREE_R_BAD_PARAM, "TLS fixed IV");
    if (!c->gcm) {
        if (len != TLS_FIXED)
            return fail(c, CCREE_R_BAD_IV_LENGTH, "TLS fixed IV is 4 bytes");
        memcpy(c->iv, p->data, len);
        return 1;
    }
    if (len == SIZE_MAX) { /* the whole IV, as the default provider */
        memcpy(c->iv, p->data, c->ivlen);
    } else {
        if (len < TLS_FIXED || len > c->ivlen || c->ivlen - len < TLS_EXPLICIT)
            return fail(c, CCREE_R_BAD_IV_LENGTH, "TLS fixed IV");
        memcpy(c->iv, p->data, len);
        if (c->enc && RAND_bytes_ex(c->prov->libctx, c->iv + len, c->ivlen - len, 0) <= 0)
            return fail(c, CCREE_R_SOFTWARE, "no random explicit IV");
    }
    c->ivgen = 1;
    c->gen_next = 0;
    c->ivstate = IV_SET;
    new_message(c);
    return 1;
}

/* tlsivinv: the explicit part of a received TLS nonce, which starts a message. */
static int set_tls_inv(struct aead_ctx *c, const OSSL_PARAM *p)
{
    if (!c->gcm || p->data == NULL || p->data_type != OSSL_PARAM_OCTET_STRING || !c->ivgen
        || !c->keyed || c->enc || p->data_size > c->ivlen)
        return fail(c, CCREE_R_BAD_STATE, "no TLS fixed IV set for decryption");
    memcpy(c->iv + c->ivlen - p->data_size, p->data, p->data_size);
    c->ivstate = IV_SET;
    new_message(c);
    return 1;
}

/* A key params gives twice (the first of them), or NULL. */
static const char *repeated(const OSSL_PARAM params[])
{
    const OSSL_PARAM *p, *q;

    for (p = params; p->key != NULL; p++)
        for (q = p + 1; q->key != NULL; q++)
            if (strcmp(p->key, q->key) == 0)
                return p->key;
    return NULL;
}

static int aead_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    struct aead_ctx *c = vctx;
    const OSSL_PARAM *p;
    const char *key;

    /* as the default provider of this OpenSSL: from 3.6 it refuses a repeated parameter */
    if (params != NULL && c->prov->sw_refuses_repeats[c->idx]
        && (key = repeated(params)) != NULL) {
        CCREE_RAISE(c->prov, CCREE_R_BAD_PARAM, "%s: %s is repeated", c->alg->kname, key);
        return 0;
    }
    return params == NULL
           || (((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_TAG)) == NULL
                || set_tag(c, p))
               && ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_IVLEN)) == NULL
                   || set_ivlen(c, p))
               && ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD)) == NULL
                   || set_tls_aad(c, p))
               && ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED))
                       == NULL
                   || set_tls_fixed(c, p))
               && ((p = OSSL_PARAM_locate_const(params, OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV))
                       == NULL
                   || set_tls_inv(c, p)));
}

static const OSSL_PARAM *aead_gettable_ctx_params(void *cctx, void *provctx)
{
    static const OSSL_PARAM params[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN, NULL, 0),
        OSSL_PARAM_END,
    };

    (void)cctx;
    (void)provctx;
    return params;
}

static const OSSL_PARAM *aead_settable_ctx_params(void *cctx, void *provctx)
{
    static const OSSL_PARAM params[] = {
        OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, NULL),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, NULL, 0),
        OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV, NULL, 0),
        OSSL_PARAM_END,
    };

    (void)cctx;
    (void)provctx;
    return params;
}

void *ccree_aead_newctx(struct ccree_prov *p, size_t idx)
{
    struct aead_ctx *c = OPENSSL_zalloc(sizeof(*c));

    if (c == NULL)
        return NULL;
    c->prov = p;
    c->idx = idx;
    c->alg = &ccree_algs[idx];
    c->gcm = c->alg->mode == EVP_CIPH_GCM_MODE;
    c->ivlen = c->gcm ? 12 : 7;  /* the default provider's: CCM starts with L = 8 */
    c->taglen = c->gcm ? 0 : 12; /* and M = 12 */
    ccree_sock_init(&c->op);
    return c;
}

typedef void (*fn)(void);
const OSSL_DISPATCH ccree_aead_functions[] = {
    { OSSL_FUNC_CIPHER_ENCRYPT_INIT, (fn)aead_einit },
    { OSSL_FUNC_CIPHER_DECRYPT_INIT, (fn)aead_dinit },
    { OSSL_FUNC_CIPHER_UPDATE, (fn)aead_update },
    { OSSL_FUNC_CIPHER_FINAL, (fn)aead_final },
    { OSSL_FUNC_CIPHER_CIPHER, (fn)aead_cipher },
    { OSSL_FUNC_CIPHER_FREECTX, (fn)aead_freectx },
    { OSSL_FUNC_CIPHER_DUPCTX, (fn)aead_dupctx },
    { OSSL_FUNC_CIPHER_GETTABLE_PARAMS, (fn)ccree_cipher_gettable_params },
    { OSSL_FUNC_CIPHER_GET_CTX_PARAMS, (fn)aead_get_ctx_params },
    { OSSL_FUNC_CIPHER_SET_CTX_PARAMS, (fn)aead_set_ctx_params },
    { OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, (fn)aead_gettable_ctx_params },
    { OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, (fn)aead_settable_ctx_params },
    { 0, NULL },
};
