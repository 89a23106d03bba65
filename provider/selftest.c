/*
 * Self-test before trust: at load, each algorithm about to be offloaded runs one request
 * through its kernel driver, and the answer must equal the default provider's. One that
 * fails is not offloaded, and the report says why.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "prov.h"

#define MSG 80 /* five blocks: the CTR counter below carries across 64 bits */

/* AEAD: the message is AAD (AEAD_AAD bytes) and data; sealed, AAD || ciphertext || tag. */
#define AEAD_AAD 16
#define TAG 16

/* The key length a test uses: HMAC takes any. */
static size_t key_length(const struct ccree_alg *a)
{
    return a->keylen ? a->keylen : 32;
}

/* One request through the kernel, in (inlen bytes) to out: en- or decrypted, hashed, MACed. */
static int kernel_answer(struct ccree_prov *p, size_t idx, int enc, const unsigned char *key,
                         const unsigned char *iv, const unsigned char *in, size_t inlen,
                         unsigned char *out, size_t outlen)
{
    const struct ccree_alg *a = &ccree_algs[idx];
    int aead = a->kind == CCREE_AEAD;
    unsigned char ccm[16];
    struct iovec i = { (void *)in, inlen }, o = { out, outlen };
    struct afalg_req r = { .enc = enc, .iv = iv, .ivlen = a->ivlen, .assoclen = aead ? AEAD_AAD : 0,
                           .in = &i, .nin = 1, .inlen = inlen, .out = &o, .nout = 1,
                           .outlen = outlen };
    int fd, err;

    if (a->mode == EVP_CIPH_CCM_MODE) {
        r.ivlen = afalg_ccm_iv(ccm, iv, a->ivlen);
        r.iv = ccm;
    }
    fd = ccree_open(p, idx, ccree_op(idx) != CCREE_OP_DIGEST ? key : NULL, key_length(a),
                    aead ? TAG : 0, ccree_whole(idx));
    if (fd < 0)
        return fd;
    if (a->kind != CCREE_HASH)
        err = afalg_cipher(fd, &r);
    else if ((err = afalg_hash_send(fd, &i, 1, 0)) == 0)
        err = afalg_hash_read(fd, out, outlen);
    afalg_close(&fd);
    return err;
}

/* The AEAD message sealed by the default provider (CCM with the row's nonce length). */
static int aead_software(struct ccree_prov *p, size_t idx, const unsigned char *key,
                         const unsigned char *iv, const unsigned char *msg, unsigned char *out)
{
    const int len = MSG - AEAD_AAD;
    size_t ivlen = ccree_algs[idx].ivlen;
    OSSL_PARAM ccm[] = { OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &ivlen),
                         OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, TAG),
                         OSSL_PARAM_END };
    OSSL_PARAM tag[] = { OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, out + MSG, TAG),
                         OSSL_PARAM_END };
    int is_ccm = ccree_algs[idx].mode == EVP_CIPH_CCM_MODE, l, ok;
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

    memcpy(out, msg, AEAD_AAD);
    ok = c != NULL && EVP_EncryptInit_ex2(c, p->sw_evp_cipher[idx], NULL, NULL, is_ccm ? ccm : NULL)
         && EVP_EncryptInit_ex2(c, NULL, key, iv, NULL)
         && (!is_ccm || EVP_EncryptUpdate(c, NULL, &l, NULL, len))
         && EVP_EncryptUpdate(c, NULL, &l, msg, AEAD_AAD)
         && EVP_EncryptUpdate(c, out + AEAD_AAD, &l, msg + AEAD_AAD, len)
         && EVP_EncryptFinal_ex(c, out + MSG, &l) && EVP_CIPHER_CTX_get_params(c, tag);
    EVP_CIPHER_CTX_free(c);
    return ok;
}

/* The same request in the default provider; CBC-CTS as the kernel's, CS3. */
static int software_answer(struct ccree_prov *p, size_t idx, const unsigned char *key,
                           const unsigned char *iv, const unsigned char *msg, unsigned char *out)
{
    const struct ccree_alg *a = &ccree_algs[idx];
    unsigned int zero = 0;
    OSSL_PARAM params[] = { OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, &zero),
                            OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, "CS3", 0),
                            OSSL_PARAM_END };
    EVP_CIPHER_CTX *c;
    EVP_MAC_CTX *m;
    size_t len;
    int ok, l;

    if (a->kind == CCREE_AEAD)
        return aead_software(p, idx, key, iv, msg, out);
    if (ccree_op(idx) == CCREE_OP_DIGEST) {
        const struct ccree_sw_digest *sd = &p->sw_digest[idx];
        void *md = sd->newctx(sd->provctx);

        ok = md != NULL && sd->init(md, NULL) && sd->update(md, msg, MSG)
             && sd->final(md, out, &len, a->mdsize);
        if (md != NULL)
            sd->freectx(md);
        return ok;
    }
    if (ccree_op(idx) == CCREE_OP_MAC) {
        params[0] = OSSL_PARAM_construct_utf8_string(ccree_under(idx) == CCREE_OP_CIPHER
                                                         ? OSSL_MAC_PARAM_CIPHER
                                                         : OSSL_MAC_PARAM_DIGEST,
                                                     (char *)a->under, 0);
        params[1] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_PROPERTIES,
                                                     (char *)p->sw_props[idx], 0);
        m = EVP_MAC_CTX_new(p->sw_mac[idx]);
        ok = m != NULL && EVP_MAC_init(m, key, key_length(a), params)
             && EVP_MAC_update(m, msg, MSG) && EVP_MAC_final(m, out, &len, a->mdsize);
        EVP_MAC_CTX_free(m);
        return ok;
    }
    if (!(a->flags & EVP_CIPH_FLAG_CTS))
        params[1] = OSSL_PARAM_construct_end();
    c = EVP_CIPHER_CTX_new();
    ok = c != NULL && EVP_EncryptInit_ex2(c, p->sw_evp_cipher[idx], key, iv, params)
         && EVP_EncryptUpdate(c, out, &l, msg, MSG);
    EVP_CIPHER_CTX_free(c);
    return ok;
}

/*
 * The kernel's answers to the known request: NULL when right, or what failed (and *err). An
 * AEAD driver must also refuse the sealed message with a tampered tag.
 */
static const char *check(struct ccree_prov *p, size_t idx, const unsigned char *key,
                         const unsigned char *iv, const unsigned char *msg, unsigned char *want,
                         int *err)
{
    const struct ccree_alg *a = &ccree_algs[idx];
    size_t tag = a->kind == CCREE_AEAD ? TAG : 0, len = a->kind == CCREE_HASH ? a->mdsize : MSG;
    unsigned char got[MSG + TAG];

    if ((*err = kernel_answer(p, idx, 1, key, iv, msg, MSG, got, len + tag)) != 0)
        return a->kind == CCREE_HASH ? "hashing" : "encrypting";
    if (memcmp(got, want, len + tag) != 0)
        return "its answer differs from the default provider's";
    if (a->kind == CCREE_HASH)
        return NULL;
    if ((*err = kernel_answer(p, idx, 0, key, iv, want, MSG + tag, got, MSG)) != 0)
        return "decrypting";
    if (memcmp(got, msg, MSG) != 0)
        return "its decryption differs from the default provider's";
    if (tag == 0)
        return NULL;
    want[MSG] ^= 1;
    return kernel_answer(p, idx, 0, key, iv, want, MSG + tag, got, MSG) != -EBADMSG
               ? "it accepts a tampered tag"
               : NULL;
}

void ccree_selftest(struct ccree_prov *p)
{
    unsigned char key[64], iv[16], msg[MSG], want[MSG + TAG];
    const char *what;
    size_t i;
    int err;

    for (i = 0; i < sizeof(key); i++)
        key[i] = (unsigned char)(0x80 + 7 * i);
    for (i = 0; i < sizeof(msg); i++)
        msg[i] = (unsigned char)(3 * i + 1);
    memset(iv, 0, 8);
    memset(iv + 8, 0xff, 7);
    iv[15] = 0xfe;
    for (i = 0; i < CCREE_NALGS; i++) {
        struct ccree_path *pa = &p->path[i];
        char driver[sizeof(pa->driver)];

        if (!pa->offload)
            continue;
        memcpy(driver, pa->driver, sizeof(driver)); /* named in the reason, beside it in *pa */
        if (!software_answer(p, i, key, iv, msg, want))
            snprintf(pa->reason, sizeof(pa->reason), "self-test: the default provider failed");
        else if ((what = check(p, i, key, iv, msg, want, &err)) == NULL)
            continue;
        else if (err != 0)
            snprintf(pa->reason, sizeof(pa->reason), "self-test of %s failed: %s: %s", driver,
                     what, strerror(-err));
        else
            snprintf(pa->reason, sizeof(pa->reason), "self-test of %s failed: %s", driver, what);
        pa->offload = 0;
    }
}
