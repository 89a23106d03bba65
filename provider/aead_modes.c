/*
 * The mode table: what GCM and CCM do with a call, as the default provider's
 * gcm_cipher_internal and ccm_cipher_internal take it, and TLS 1.2 records (the message's
 * state, its IV and tag), with a TLS fixed IV, and the IV the kernel takes.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "aead.h"

/* --- GCM ----------------------------------------------------------------------------------- */

static int gcm_iv_generate(struct aead_ctx *c)
{
    if (c->ivlen < 12 || RAND_bytes_ex(c->e.prov->libctx, c->iv, c->ivlen, 0) <= 0)
        return aead_fail(c, CCREE_R_BAD_STATE, "no IV set and none can be generated");
    c->ivstate = IV_SET;
    return 1;
}

/* No IV set: an encryption gets a random one, as in the default provider. */
static int gcm_new_iv(struct aead_ctx *c)
{
    return c->enc && !c->tls ? gcm_iv_generate(c) : aead_fail(c, CCREE_R_BAD_STATE, "no IV set");
}

static int gcm_final(struct aead_ctx *c)
{
    size_t taglen = c->enc ? TAG_MAX : c->taglen;
    int ok;

    if (taglen == 0) /* as in the default provider, the IV is not spent */
        return aead_fail(c, CCREE_R_BAD_TAG, "no tag set for decryption");
    c->ivstate = IV_USED;
    if (c->msg == MSG_FAILED)
        return aead_fail(c, CCREE_R_BAD_DECRYPT, "tag mismatch");
    if (c->msg == MSG_ONESHOT) {
        if (c->enc)
            aead_forget_data(c);
        c->taglen = taglen;
        return 1;
    }
    ok = c->msg == MSG_STREAM
             ? aead_sw_gcm_final(c, c->tag, taglen)
             : aead_oneshot_final(c, c->buf, c->aadlen, NULL, NULL, 0, c->tag, taglen);
    if (ok > 0) /* an encryption's tag, computed */
        c->taglen = taglen;
    return ok < 0 ? aead_fail(c, CCREE_R_BAD_DECRYPT, "tag mismatch") : ok;
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
        return aead_fail(c, CCREE_R_BAD_STATE,
                         "with its tag set first, a decryption takes its data in one update");
    /* One-shot: encryption the kernel takes; decryption with its tag, so nothing unauthentic
     * is released. The data is kept for a replay should more come. */
    ch.timed = 0;
    if (first && (aead_choose(c, c->aadlen + len, taglen, &ch) || !c->enc)) {
        if (!aead_reserve(c, c->aadlen + len))
            return aead_fail(c, CCREE_R_SOFTWARE, "no memory");
        memcpy(c->buf + c->aadlen, in, len);
        c->datalen = len;
        ok = aead_oneshot(c, &ch, c->buf, c->aadlen, c->buf + c->aadlen, out, len, c->tag, taglen);
        if (ok == 0)
            return 0;
        /* A mismatch withholds the data (out is wiped): final fails, as in the default provider.
         * An encryption's tag is computed, but given out only after final. */
        c->msg = ok > 0 ? MSG_ONESHOT : MSG_FAILED;
        c->taglen = c->enc ? 0 : taglen;
        return 1;
    }
    /* An encryption in software: streamed, its data timed against the kernel's one-shots. */
    if (!aead_to_stream(c))
        return 0;
    ccree_start(&ch);
    if (!aead_sw_data(c, out, in, len))
        return 0;
    ccree_ran(c->e.prov, &ch);
    c->datalen += len;
    return 1;
}

/* As in the default provider, CCM's IV and tag lengths take effect when the key is set. */
static int ccm_lengths_keyed(struct aead_ctx *c)
{
    return (c->ivlen == c->kivlen && c->taglen == c->ktaglen)
           || aead_fail(c, CCREE_R_BAD_STATE, "set CCM's IV and tag lengths before its key");
}

/*
 * TLS 1.2: explicit nonce || payload || tag, in place, by the rules of the default provider's
 * gcm_tls_cipher and ccm_tls_cipher (gcm_record, ccm_record). A record sent carries GCM's
 * explicit IV, counted up after it, or CCM's sequence number; a record received brings its
 * own, in the IV. GCM takes one record per tlsaad.
 */
static int record_fits(struct aead_ctx *c, const unsigned char *out, const unsigned char *in,
                       size_t len, size_t taglen)
{
    return (in != NULL && out == in && len >= TLS_EXPLICIT + taglen)
           || aead_fail(c, CCREE_R_BAD_LENGTH, "a TLS record is in place and holds a nonce and a tag");
}

/* The record's payload and tag, its nonce in the IV. */
static int record_run(struct aead_ctx *c, unsigned char *out, size_t *outl, size_t len,
                      size_t taglen)
{
    size_t plen = len - TLS_EXPLICIT - taglen;
    int ok = aead_oneshot_final(c, c->tlsaad, TLS_AAD, out + TLS_EXPLICIT, out + TLS_EXPLICIT,
                                plen, out + TLS_EXPLICIT + plen, taglen);

    *outl = ok ? (c->enc ? len : plen) : 0;
    return ok;
}

/* A GCM record (a final too: it has no input, and fails). */
static int gcm_record(struct aead_ctx *c, unsigned char *out, size_t *outl,
                      const unsigned char *in, size_t len, int final)
{
    unsigned char *explicit;
    int ok;

    (void)final;
    if (!record_fits(c, out, in, len, TAG_MAX))
        return 0;
    if (!c->ivgen || c->ivlen < TLS_EXPLICIT)
        return aead_fail(c, CCREE_R_BAD_STATE, "TLS record without a 12-byte fixed IV");
    explicit = c->iv + c->ivlen - TLS_EXPLICIT;
    if (c->enc && c->gen_next) /* tlsivgen gave out the last one */
        aead_ctr64_inc(explicit);
    c->gen_next = 0;
    if (c->enc)
        memcpy(out, explicit, TLS_EXPLICIT);
    else
        memcpy(explicit, in, TLS_EXPLICIT);
    ok = record_run(c, out, outl, len, TAG_MAX);
    if (c->enc)
        aead_ctr64_inc(explicit);
    return ok;
}

/* TLS 1.2's fixed IV (SIZE_MAX bytes: the whole IV, as the default provider): from now the
 * context makes the explicit part of each nonce it sends, random at first. */
static int gcm_tls_fixed(struct aead_ctx *c, const unsigned char *fixed, size_t len)
{
    if (len == SIZE_MAX) {
        memcpy(c->iv, fixed, c->ivlen);
    } else {
        if (len < TLS_FIXED || len > c->ivlen || c->ivlen - len < TLS_EXPLICIT)
            return aead_fail(c, CCREE_R_BAD_IV_LENGTH, "TLS fixed IV");
        memcpy(c->iv, fixed, len);
        if (c->enc && RAND_bytes_ex(c->e.prov->libctx, c->iv + len, c->ivlen - len, 0) <= 0)
            return aead_fail(c, CCREE_R_SOFTWARE, "no random explicit IV");
    }
    c->ivgen = 1;
    c->gen_next = 0;
    c->ivstate = IV_SET;
    aead_new_message(c);
    return 1;
}

/* The IV as the kernel takes it: GCM's, of 12 bytes (kernel_ivlen). */
static size_t gcm_kernel_iv(const struct aead_ctx *c, unsigned char kiv[16])
{
    memcpy(kiv, c->iv, c->ivlen);
    return c->ivlen;
}

/* One GCM call (keyed, not a TLS record) as the default provider's gcm_cipher_internal takes
 * it: without input, an update is a final too. */
static int gcm_message(struct aead_ctx *c, unsigned char *out, size_t *outl,
                       const unsigned char *in, size_t len, int final)
{
    (void)final;
    if (c->ivstate == IV_USED)
        return aead_fail(c, CCREE_R_BAD_STATE, "the IV is used: set a new one");
    if (c->ivstate == IV_NONE && !gcm_new_iv(c))
        return 0;
    if (in == NULL)
        return gcm_final(c);
    if (out == NULL && c->datalen > 0)
        return aead_fail(c, CCREE_R_BAD_STATE, "AAD after the data");
    if (out == NULL ? !aead_add_aad(c, in, len) : !gcm_data(c, out, in, len))
        return 0;
    *outl = len; /* AAD too, as the default provider counts it */
    return 1;
}

/* The tag, once final computed it, at any length. */
static int gcm_get_tag(struct aead_ctx *c, OSSL_PARAM *p)
{
    return aead_give_tag(c, p, c->taglen != 0, 0);
}

/* --- CCM ----------------------------------------------------------------------------------- */

/* As in the default provider, a message is done: its IV and length are spent. */
static void ccm_done(struct aead_ctx *c)
{
    c->ivstate = IV_NONE;
    c->msglen_set = 0;
}

static int ccm_length_fits(struct aead_ctx *c, size_t len)
{
    size_t l = 15 - c->ivlen;

    return l >= sizeof(len) || (len >> (8 * l)) == 0 /* a shift past the width is UB: 32 bits */
           || aead_fail(c, CCREE_R_BAD_LENGTH, "the data length does not fit the nonce's L");
}

static int ccm_data(struct aead_ctx *c, unsigned char *out, const unsigned char *in, size_t len)
{
    if (c->msg == MSG_ONESHOT || c->datalen > 0)
        return aead_fail(c, CCREE_R_BAD_STATE, "CCM takes its data in one update");
    if (c->msglen_set && c->msglen != len)
        return aead_fail(c, CCREE_R_BAD_LENGTH, "not the announced data length");
    if (!ccm_length_fits(c, len))
        return 0;
    if (!c->enc && !c->tagset)
        return aead_fail(c, CCREE_R_BAD_TAG, "no tag set for decryption");
    if (c->msg == MSG_AAD && c->aadlen + len + c->taglen <= AFALG_MAX_REQUEST) {
        if (!aead_oneshot_final(c, c->buf, c->aadlen, in, out, len, c->tag, c->taglen))
            return 0;
        c->msg = MSG_ONESHOT;
    } else if (!aead_to_stream(c) || !aead_sw_data(c, out, in, len)
               || (c->enc && !aead_sw_get_tag(c, c->tag, c->taglen))) {
        return 0;
    }
    c->datalen = len;
    c->data_done = 1;
    c->tagset = c->enc;
    if (!c->enc)
        ccm_done(c);
    return 1;
}

/*
 * A final as OpenSSL 3.0.22's default provider takes it (ossl_ccm_stream_final): nothing to do
 * once the data came; before that, the message is taken as the empty one, its tag computed or
 * checked: it goes on in the default provider to its final.
 */
static int ccm_final(struct aead_ctx *c)
{
    OSSL_PARAM tag[] = { OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, c->tag, c->taglen),
                         OSSL_PARAM_END };
    unsigned char none[TAG_MAX];
    size_t n;

    if (c->ivstate != IV_SET || c->data_done)
        return 1;
    if (!ccm_lengths_keyed(c) || !aead_to_stream(c)) /* refused as the data would be */
        return 0;
    if (!c->e.soft->final(c->e.sw, none, &n, 0)) {
        if (c->enc)
            return aead_fail(c, CCREE_R_BAD_STATE, "the data announced never came");
        return aead_fail(c, c->tagset ? CCREE_R_BAD_DECRYPT : CCREE_R_BAD_TAG,
                         c->tagset ? "tag mismatch" : "no tag set for decryption");
    }
    c->data_done = 1;
    if (c->enc) { /* the tag, where the default provider computed one */
        ERR_set_mark();
        c->tagset = c->e.soft->get_ctx_params(c->e.sw, tag);
        ERR_pop_to_mark();
    } else { /* as after the data */
        ccm_done(c);
    }
    return 1;
}

/* The tag computed with the data, at its length: getting it ends the message. */
static int ccm_get_tag(struct aead_ctx *c, OSSL_PARAM *p)
{
    if (!aead_give_tag(c, p, c->tagset, c->taglen))
        return 0;
    c->tagset = 0;
    ccm_done(c);
    return 1;
}

/* TLS 1.2's fixed IV: a record brings the rest (ccm_record). */
static int ccm_tls_fixed(struct aead_ctx *c, const unsigned char *fixed, size_t len)
{
    if (len != TLS_FIXED)
        return aead_fail(c, CCREE_R_BAD_IV_LENGTH, "TLS fixed IV is 4 bytes");
    memcpy(c->iv, fixed, len);
    return 1;
}

static size_t ccm_kernel_iv(const struct aead_ctx *c, unsigned char kiv[16])
{
    return afalg_ccm_iv(kiv, c->iv, c->ivlen);
}

/*
 * A CCM record. Its final runs a record of no data, which fails: from OpenSSL 3.0.22 only
 * where an IV is set and it decrypts or has no tag yet (ossl_ccm_stream_final); before, always.
 */
static int ccm_record(struct aead_ctx *c, unsigned char *out, size_t *outl,
                      const unsigned char *in, size_t len, int final)
{
    if (final)
        return (c->e.prov->sw_final_seals_empty[c->e.idx]
                && !(c->ivstate == IV_SET && (!c->enc || !c->tagset)))
               || aead_fail(c, CCREE_R_BAD_STATE, "a final after tlsaad runs a record of no data");
    if (!record_fits(c, out, in, len, c->taglen))
        return 0;
    if (c->enc)
        memcpy(out, c->tlsaad, TLS_EXPLICIT);
    memcpy(c->iv + TLS_FIXED, in, TLS_EXPLICIT); /* as the default provider, whatever the IV */
    if (c->ivlen != TLS_FIXED + TLS_EXPLICIT)
        return aead_fail(c, CCREE_R_BAD_STATE, "TLS record without a 12-byte fixed IV");
    return ccm_lengths_keyed(c) && record_run(c, out, outl, len, c->taglen);
}

/*
 * One CCM call (keyed, not a TLS record) as the default provider takes it: an update as
 * ccm_cipher_internal (with output and no input, it does nothing); a final (EVP_Cipher without
 * input too) as ossl_ccm_stream_final from OpenSSL 3.0.22, before as an update of no input.
 */
static int ccm_message(struct aead_ctx *c, unsigned char *out, size_t *outl,
                       const unsigned char *in, size_t len, int final)
{
    if (final && c->e.prov->sw_final_seals_empty[c->e.idx])
        return ccm_final(c);
    if (in == NULL && out != NULL)
        return 1;
    if (c->ivstate != IV_SET)
        return aead_fail(c, CCREE_R_BAD_STATE, "no IV set");
    if (!ccm_lengths_keyed(c)) /* its length and AAD too, as the default provider refuses them */
        return 0;
    if (out == NULL && in == NULL) {
        if (!ccm_length_fits(c, len))
            return 0;
        if (c->data_done) /* an encryption's next message, same nonce, as ccm_set_iv starts */
            aead_new_message(c);
        if (c->msg != MSG_AAD || c->naad > 0) { /* announced late: as the default provider */
            if (!aead_to_stream(c) || !aead_sw_update(c, NULL, NULL, len))
                return aead_fail(c, CCREE_R_SOFTWARE, "length in the default provider");
        }
        c->msglen = len;
        c->msglen_set = 1;
    } else if (out == NULL) {
        if (!c->msglen_set && len > 0)
            return aead_fail(c, CCREE_R_BAD_STATE, "CCM needs the data length before the AAD");
        if (c->msg == MSG_ONESHOT)
            return aead_fail(c, CCREE_R_BAD_STATE, "AAD after the data");
        if (len > 0 && !aead_add_aad(c, in, len))
            return 0;
    } else if (!ccm_data(c, out, in, len)) {
        return 0;
    }
    *outl = len; /* the length and AAD too, as the default provider counts them */
    return 1;
}

int aead_message(struct aead_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                 const unsigned char *in, size_t len, int final)
{
    int record = c->tls;

    *outl = 0; /* room for what the call writes: AAD (out NULL) writes nothing */
    if (!ccree_check_room(c->e.prov, c->e.alg->kname, out, out != NULL ? len : 0, outsize))
        return 0;
    if (record && c->mode->tlsaad_once) { /* as in the default provider: a GCM record, even
                                           * refused, spends its tlsaad and IV */
        c->tls = 0;
        c->ivstate = IV_USED;
    }
    if (!ccree_check_apart(c->e.prov, c->e.alg->kname, out, 0, in, len))
        return 0;
    if (c->e.key == NULL)
        return aead_fail(c, CCREE_R_NO_KEY, "no key set");
    /* At most INT_MAX bytes a call, as EVP's updates take, EVP_Cipher's (an unsigned int)
     * too; sums of lengths below stay in range, on 32 bits too. */
    if (len > INT_MAX)
        return aead_fail(c, CCREE_R_BAD_LENGTH, "too long");
    return (record ? c->mode->record : c->mode->message)(c, out, outl, in, len, final);
}

const struct aead_mode aead_gcm_mode = {
    .message = gcm_message, .record = gcm_record, .tls_fixed = gcm_tls_fixed,
    .sw_start = aead_gcm_sw_start, .sw_seal = aead_gcm_sw_seal, .ivlen = 12, .taglen = 0,
    .iv_min = 1, .iv_max = GCM_IV_MAX, .tag_min = 1, .tag_odd = 1, .ivlen_voids = IV_USED,
    .iv_sets_len = 1, .streams = 1, .keeps_data = 1, .new_drops_tag = 1, .tlsaad_once = 1,
    .iv_read_set = 1, .tls_taglen = TAG_MAX, .get_tag = gcm_get_tag,
    .kernel_iv = gcm_kernel_iv, .kernel_ivlen = 12,
    /* the tag lengths of the kernel's crypto_gcm_check_authsize */
    .kernel_tags = 1u << 4 | 1u << 8 | 1u << 12 | 1u << 13 | 1u << 14 | 1u << 15 | 1u << 16,
};
const struct aead_mode aead_ccm_mode = {
    .message = ccm_message, .record = ccm_record, .tls_fixed = ccm_tls_fixed,
    .sw_start = aead_ccm_sw_start, .sw_seal = aead_ccm_sw_seal, .ivlen = 7, .taglen = 12,
    .iv_min = 7, .iv_max = 13, .tag_min = 4, .tag_odd = 0, .ivlen_voids = IV_NONE,
    .tag_len_alone = 1, .data_verifies = 1, .get_tag = ccm_get_tag,
    .kernel_iv = ccm_kernel_iv, .kernel_ivlen = 0, .kernel_tags = ~0u, /* all CCM's */
};
