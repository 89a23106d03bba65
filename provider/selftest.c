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

/* AEAD: the message is AAD (AEAD_AAD bytes) and data; the answer, ciphertext || 16-byte tag. */
#define AEAD_AAD 16

/* The key length a test uses: HMAC takes any. */
static size_t key_length(const struct ccree_alg *a)
{
    return a->keylen ? a->keylen : 32;
}

/* One request of MSG bytes in through the kernel: encrypted or decrypted, hashed, MACed. */
static int kernel_answer(struct ccree_prov *p, size_t idx, int enc, const unsigned char *key,
                         const unsigned char *iv, const unsigned char *in, unsigned char *out,
                         size_t outlen)
{
    const struct ccree_alg *a = &ccree_algs[idx];
    struct iovec i = { (void *)in, MSG }, o = { out, outlen };
    struct afalg_req r = { .enc = enc, .iv = iv, .ivlen = a->ivlen, .in = &i, .nin = 1,
                           .inlen = MSG, .out = &o, .nout = 1, .outlen = MSG };
    int fd, err;

    fd = ccree_open(p, idx, ccree_op(idx) != CCREE_OP_DIGEST ? key : NULL, key_length(a), 0,
                    ccree_whole(idx));
    if (fd < 0)
        return fd;
    if (a->kind != CCREE_HASH)
        err = afalg_cipher(fd, &r);
    else if ((err = afalg_hash_send(fd, &i, 1, 0)) == 0)
        err = afalg_hash_read(fd, out, outlen);
    afalg_close(&fd);
    return err;
}

/*
 * An AEAD driver must seal as the default provider does (want: ct || tag), open that, refuse
 * it with a tampered tag, and an empty message with a tampered tag must be refused where such
 * a message goes (the kernel returns without checking it). NULL, or what failed.
 */
static const char *aead_check(struct ccree_prov *p, size_t idx, const unsigned char *key,
                              const unsigned char *iv, const unsigned char *msg,
                              const unsigned char *want, int *err)
{
    const size_t len = MSG - AEAD_AAD;
    unsigned char got[MSG], tag[16];

    if ((*err = ccree_aead_answer(p, idx, 1, 1, key, iv, msg, AEAD_AAD, msg + AEAD_AAD, len, got,
                                  tag)) != 0)
        return "sealing";
    if (memcmp(got, want, len) != 0 || memcmp(tag, want + len, 16) != 0)
        return "its sealed message differs from the default provider's";
    memcpy(tag, want + len, 16);
    if ((*err = ccree_aead_answer(p, idx, 1, 0, key, iv, msg, AEAD_AAD, want, len, got, tag)) != 0)
        return "opening";
    if (memcmp(got, msg + AEAD_AAD, len) != 0)
        return "its opened message differs from the default provider's";
    tag[0] ^= 1;
    if (ccree_aead_answer(p, idx, 1, 0, key, iv, msg, AEAD_AAD, want, len, got, tag) != -EBADMSG)
        return "it accepts a tampered tag";
    if (ccree_aead_answer(p, idx, -1, 0, key, iv, msg, 0, want, 0, got, tag) != -EBADMSG)
        return "an empty message with a tampered tag is accepted";
    *err = 0;
    return NULL;
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
        return ccree_aead_answer(p, idx, 0, 1, key, iv, msg, AEAD_AAD, msg + AEAD_AAD,
                                 MSG - AEAD_AAD, out, out + MSG - AEAD_AAD) == 0;
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
    ok = c != NULL && EVP_EncryptInit_ex2(c, p->sw_cipher[idx], key, iv, params)
         && EVP_EncryptUpdate(c, out, &l, msg, MSG);
    EVP_CIPHER_CTX_free(c);
    return ok;
}

/* The kernel's answers to the known request: NULL when right, or what failed (and *err). */
static const char *check(struct ccree_prov *p, size_t idx, const unsigned char *key,
                         const unsigned char *iv, const unsigned char *msg,
                         const unsigned char *want, int *err)
{
    const struct ccree_alg *a = &ccree_algs[idx];
    size_t len = a->kind == CCREE_HASH ? a->mdsize : MSG;
    unsigned char got[MSG];

    if (a->kind == CCREE_AEAD)
        return aead_check(p, idx, key, iv, msg, want, err);
    if ((*err = kernel_answer(p, idx, 1, key, iv, msg, got, len)) != 0)
        return a->kind == CCREE_HASH ? "hashing" : "encrypting";
    if (memcmp(got, want, len) != 0)
        return "its answer differs from the default provider's";
    if (a->kind == CCREE_HASH)
        return NULL;
    if ((*err = kernel_answer(p, idx, 0, key, iv, want, got, len)) != 0)
        return "decrypting";
    return memcmp(got, msg, len) != 0 ? "its decryption differs from the default provider's" : NULL;
}

void ccree_selftest(struct ccree_prov *p)
{
    unsigned char key[64], iv[16], msg[MSG], want[MSG + 16];
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
