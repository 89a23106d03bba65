/*
 * Self-test before trust: at load, each algorithm about to be offloaded runs one request
 * through its kernel driver, and the answer must equal the default provider's. One that
 * fails is not offloaded, and the report says why.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "prov.h"

#define MSG 80 /* five blocks: the CTR counter below carries across 64 bits */

/* AEAD: the message is AAD (AEAD_AAD bytes) and data; the answer, ciphertext || 16-byte tag. */
#define AEAD_AAD 16

static int kernel_answer(struct ccree_prov *p, size_t idx, const unsigned char *key,
                         const unsigned char *iv, const unsigned char *msg, unsigned char *out,
                         size_t outlen)
{
    const struct ccree_alg *a = &ccree_algs[idx];
    struct iovec in = { (void *)msg, MSG }, o = { out, outlen };
    int fd, err;

    if (a->kind == CCREE_AEAD)
        return ccree_aead_answer(p, idx, 1, key, iv, msg, AEAD_AAD, msg + AEAD_AAD,
                                 MSG - AEAD_AAD, out);
    fd = afalg_open(a->kind, p->path[idx].driver, a->keylen ? key : NULL, a->keylen, 0);
    if (fd < 0)
        return fd;
    if (a->kind != CCREE_HASH)
        err = afalg_cipher(fd, 1, iv, a->ivlen, 0, &in, 1, MSG, &o, 1, MSG);
    else if ((err = afalg_hash_send(fd, &in, 1, 0)) == 0)
        err = afalg_hash_read(fd, out, outlen);
    afalg_close(&fd);
    return err;
}

static int software_answer(struct ccree_prov *p, size_t idx, const unsigned char *key,
                           const unsigned char *iv, const unsigned char *msg, unsigned char *out)
{
    EVP_CIPHER_CTX *c;
    unsigned int n;
    int ok, l;

    if (ccree_algs[idx].kind == CCREE_AEAD)
        return ccree_aead_answer(p, idx, 0, key, iv, msg, AEAD_AAD, msg + AEAD_AAD,
                                 MSG - AEAD_AAD, out) == 0;
    if (ccree_algs[idx].kind == CCREE_HASH)
        return EVP_Digest(msg, MSG, out, &n, p->sw_md[idx], NULL);
    c = EVP_CIPHER_CTX_new();
    ok = c != NULL && EVP_EncryptInit_ex2(c, p->sw_cipher[idx], key, iv, NULL)
         && EVP_CIPHER_CTX_set_padding(c, 0) && EVP_EncryptUpdate(c, out, &l, msg, MSG);
    EVP_CIPHER_CTX_free(c);
    return ok;
}

void ccree_selftest(struct ccree_prov *p)
{
    unsigned char key[32], iv[16], msg[MSG], want[MSG + 16], got[MSG + 16];
    size_t i, len;
    int err;

    for (i = 0; i < sizeof(key); i++)
        key[i] = (unsigned char)(0x80 + 7 * i);
    for (i = 0; i < sizeof(msg); i++)
        msg[i] = (unsigned char)(3 * i + 1);
    memset(iv, 0, 8);
    memset(iv + 8, 0xff, 7);
    iv[15] = 0xfe;
    for (i = 0; i < CCREE_NALGS; i++) {
        const struct ccree_alg *a = &ccree_algs[i];
        struct ccree_path *pa = &p->path[i];
        char driver[sizeof(pa->driver)];

        if (!pa->offload)
            continue;
        memcpy(driver, pa->driver, sizeof(driver)); /* named in the reason, beside it in *pa */
        len = a->kind == CCREE_HASH ? a->mdsize : MSG;
        if (!software_answer(p, i, key, iv, msg, want))
            snprintf(pa->reason, sizeof(pa->reason), "self-test: the default provider failed");
        else if ((err = kernel_answer(p, i, key, iv, msg, got, len)) != 0)
            snprintf(pa->reason, sizeof(pa->reason), "self-test of %s failed: %s", driver,
                     strerror(-err));
        else if (memcmp(got, want, len) != 0)
            snprintf(pa->reason, sizeof(pa->reason),
                     "self-test of %s failed: its answer differs from the default provider's",
                     driver);
        else
            continue;
        pa->offload = 0;
    }
}
