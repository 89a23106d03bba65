#include "algs.h"

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#define CTR EVP_CIPH_CTR_MODE
#define ECB EVP_CIPH_ECB_MODE
#define CBC EVP_CIPH_CBC_MODE
#define AEAD_FLAGS (EVP_CIPH_FLAG_AEAD_CIPHER | EVP_CIPH_CUSTOM_IV)
#define SHA_FLAGS EVP_MD_FLAG_DIGALGID_ABSENT

/* names, under, kernel name, kind, mode, flags, key length, IV length, block size, digest size */
const struct ccree_alg ccree_algs[] = { /* its size is checked against CCREE_NALGS */
    { "AES-128-ECB:2.16.840.1.101.3.4.1.1", NULL, "ecb(aes)", CCREE_SKCIPHER, ECB, 0, 16, 0, 16, 0 },
    { "AES-192-ECB:2.16.840.1.101.3.4.1.21", NULL, "ecb(aes)", CCREE_SKCIPHER, ECB, 0, 24, 0, 16, 0 },
    { "AES-256-ECB:2.16.840.1.101.3.4.1.41", NULL, "ecb(aes)", CCREE_SKCIPHER, ECB, 0, 32, 0, 16, 0 },
    { "AES-128-CBC:AES128:2.16.840.1.101.3.4.1.2", NULL, "cbc(aes)", CCREE_SKCIPHER, CBC, 0, 16, 16, 16, 0 },
    { "AES-192-CBC:AES192:2.16.840.1.101.3.4.1.22", NULL, "cbc(aes)", CCREE_SKCIPHER, CBC, 0, 24, 16, 16, 0 },
    { "AES-256-CBC:AES256:2.16.840.1.101.3.4.1.42", NULL, "cbc(aes)", CCREE_SKCIPHER, CBC, 0, 32, 16, 16, 0 },
    { "AES-128-CTR", NULL, "ctr(aes)", CCREE_SKCIPHER, CTR, 0, 16, 16, 1, 0 },
    { "AES-192-CTR", NULL, "ctr(aes)", CCREE_SKCIPHER, CTR, 0, 24, 16, 1, 0 },
    { "AES-256-CTR", NULL, "ctr(aes)", CCREE_SKCIPHER, CTR, 0, 32, 16, 1, 0 },
    { "AES-128-XTS:1.3.111.2.1619.0.1.1", NULL, "xts(aes)", CCREE_SKCIPHER, EVP_CIPH_XTS_MODE,
      EVP_CIPH_CUSTOM_IV, 32, 16, 1, 0 },
    { "AES-256-XTS:1.3.111.2.1619.0.1.2", NULL, "xts(aes)", CCREE_SKCIPHER, EVP_CIPH_XTS_MODE,
      EVP_CIPH_CUSTOM_IV, 64, 16, 1, 0 },
    { "AES-128-CBC-CTS", NULL, "cts(cbc(aes))", CCREE_SKCIPHER, CBC, EVP_CIPH_FLAG_CTS, 16, 16, 16, 0 },
    { "AES-192-CBC-CTS", NULL, "cts(cbc(aes))", CCREE_SKCIPHER, CBC, EVP_CIPH_FLAG_CTS, 24, 16, 16, 0 },
    { "AES-256-CBC-CTS", NULL, "cts(cbc(aes))", CCREE_SKCIPHER, CBC, EVP_CIPH_FLAG_CTS, 32, 16, 16, 0 },
    { "DES-EDE3-ECB:DES-EDE3", NULL, "ecb(des3_ede)", CCREE_SKCIPHER, ECB, EVP_CIPH_RAND_KEY, 24, 0, 8, 0 },
    { "DES-EDE3-CBC:DES3:1.2.840.113549.3.7", NULL, "cbc(des3_ede)", CCREE_SKCIPHER, CBC,
      EVP_CIPH_RAND_KEY, 24, 8, 8, 0 },
    { "DES-ECB:1.3.14.3.2.6", NULL, "ecb(des)", CCREE_SKCIPHER, ECB, EVP_CIPH_RAND_KEY, 8, 0, 8, 0 },
    { "DES-CBC:DES:1.3.14.3.2.7", NULL, "cbc(des)", CCREE_SKCIPHER, CBC, EVP_CIPH_RAND_KEY, 8, 8, 8, 0 },
    { "SM4-ECB:1.2.156.10197.1.104.1", NULL, "ecb(sm4)", CCREE_SKCIPHER, ECB, 0, 16, 0, 16, 0 },
    { "SM4-CBC:SM4:1.2.156.10197.1.104.2", NULL, "cbc(sm4)", CCREE_SKCIPHER, CBC, 0, 16, 16, 16, 0 },
    { "SM4-CTR:1.2.156.10197.1.104.7", NULL, "ctr(sm4)", CCREE_SKCIPHER, CTR, 0, 16, 16, 1, 0 },
    { "AES-128-GCM:id-aes128-GCM:2.16.840.1.101.3.4.1.6", NULL, "gcm(aes)", CCREE_AEAD,
      EVP_CIPH_GCM_MODE, AEAD_FLAGS, 16, 12, 1, 0 },
    { "AES-192-GCM:id-aes192-GCM:2.16.840.1.101.3.4.1.26", NULL, "gcm(aes)", CCREE_AEAD,
      EVP_CIPH_GCM_MODE, AEAD_FLAGS, 24, 12, 1, 0 },
    { "AES-256-GCM:id-aes256-GCM:2.16.840.1.101.3.4.1.46", NULL, "gcm(aes)", CCREE_AEAD,
      EVP_CIPH_GCM_MODE, AEAD_FLAGS, 32, 12, 1, 0 },
    { "AES-128-CCM:id-aes128-CCM:2.16.840.1.101.3.4.1.7", NULL, "ccm(aes)", CCREE_AEAD,
      EVP_CIPH_CCM_MODE, AEAD_FLAGS, 16, 12, 1, 0 },
    { "AES-192-CCM:id-aes192-CCM:2.16.840.1.101.3.4.1.27", NULL, "ccm(aes)", CCREE_AEAD,
      EVP_CIPH_CCM_MODE, AEAD_FLAGS, 24, 12, 1, 0 },
    { "AES-256-CCM:id-aes256-CCM:2.16.840.1.101.3.4.1.47", NULL, "ccm(aes)", CCREE_AEAD,
      EVP_CIPH_CCM_MODE, AEAD_FLAGS, 32, 12, 1, 0 },
    { "SHA1:SHA-1:SSL3-SHA1:1.3.14.3.2.26", NULL, "sha1", CCREE_HASH, 0, SHA_FLAGS, 0, 0, 64, 20 },
    { "SHA2-224:SHA-224:SHA224:2.16.840.1.101.3.4.2.4", NULL, "sha224", CCREE_HASH, 0, SHA_FLAGS, 0,
      0, 64, 28 },
    { "SHA2-256:SHA-256:SHA256:2.16.840.1.101.3.4.2.1", NULL, "sha256", CCREE_HASH, 0, SHA_FLAGS, 0,
      0, 64, 32 },
    { "SHA2-384:SHA-384:SHA384:2.16.840.1.101.3.4.2.2", NULL, "sha384", CCREE_HASH, 0, SHA_FLAGS, 0,
      0, 128, 48 },
    { "SHA2-512:SHA-512:SHA512:2.16.840.1.101.3.4.2.3", NULL, "sha512", CCREE_HASH, 0, SHA_FLAGS, 0,
      0, 128, 64 },
    { "MD5:SSL3-MD5:1.2.840.113549.2.5", NULL, "md5", CCREE_HASH, 0, 0, 0, 0, 64, 16 },
    { "SM3:1.2.156.10197.1.401", NULL, "sm3", CCREE_HASH, 0, 0, 0, 0, 64, 32 },
    { "HMAC", "SHA1", "hmac(sha1)", CCREE_HASH, 0, 0, 0, 0, 64, 20 },
    { "HMAC", "SHA2-224", "hmac(sha224)", CCREE_HASH, 0, 0, 0, 0, 64, 28 },
    { "HMAC", "SHA2-256", "hmac(sha256)", CCREE_HASH, 0, 0, 0, 0, 64, 32 },
    { "HMAC", "SHA2-384", "hmac(sha384)", CCREE_HASH, 0, 0, 0, 0, 128, 48 },
    { "HMAC", "SHA2-512", "hmac(sha512)", CCREE_HASH, 0, 0, 0, 0, 128, 64 },
    { "HMAC", "MD5", "hmac(md5)", CCREE_HASH, 0, 0, 0, 0, 64, 16 },
    { "CMAC", "AES-128-CBC", "cmac(aes)", CCREE_HASH, 0, 0, 16, 0, 16, 16 },
    { "CMAC", "AES-192-CBC", "cmac(aes)", CCREE_HASH, 0, 0, 24, 0, 16, 16 },
    { "CMAC", "AES-256-CBC", "cmac(aes)", CCREE_HASH, 0, 0, 32, 0, 16, 16 },
};

enum ccree_op ccree_op(size_t idx)
{
    if (ccree_algs[idx].kind != CCREE_HASH)
        return CCREE_OP_CIPHER;
    return ccree_algs[idx].under == NULL ? CCREE_OP_DIGEST : CCREE_OP_MAC;
}

enum ccree_op ccree_under(size_t idx)
{
    const char *under = ccree_algs[idx].under;
    size_t i, n = strlen(under);

    for (i = 0; i < CCREE_NALGS; i++) /* the row whose first name is under */
        if (strncmp(ccree_algs[i].names, under, n) == 0 && strchr(":", ccree_algs[i].names[n]))
            return ccree_op(i);
    return CCREE_OP_DIGEST;
}

int ccree_whole(size_t idx)
{
    const struct ccree_alg *a = &ccree_algs[idx];

    return a->kind == CCREE_AEAD || a->mode == EVP_CIPH_XTS_MODE || (a->flags & EVP_CIPH_FLAG_CTS);
}

const char *ccree_name(size_t idx, char buf[CCREE_NAME_MAX])
{
    const struct ccree_alg *a = &ccree_algs[idx];

    if (a->under != NULL)
        snprintf(buf, CCREE_NAME_MAX, "%s-%s", a->names, a->under);
    else
        snprintf(buf, CCREE_NAME_MAX, "%.*s", (int)strcspn(a->names, ":"), a->names);
    return buf;
}
