#include "algs.h"

#include <openssl/evp.h>

/* names, kernel name, kind, mode, key length, IV length, block size, digest size */
const struct ccree_alg ccree_algs[] = { /* its size is checked against CCREE_NALGS */
    { "AES-128-ECB:2.16.840.1.101.3.4.1.1", "ecb(aes)", CCREE_SKCIPHER, EVP_CIPH_ECB_MODE, 16, 0, 16, 0 },
    { "AES-192-ECB:2.16.840.1.101.3.4.1.21", "ecb(aes)", CCREE_SKCIPHER, EVP_CIPH_ECB_MODE, 24, 0, 16, 0 },
    { "AES-256-ECB:2.16.840.1.101.3.4.1.41", "ecb(aes)", CCREE_SKCIPHER, EVP_CIPH_ECB_MODE, 32, 0, 16, 0 },
    { "AES-128-CBC:AES128:2.16.840.1.101.3.4.1.2", "cbc(aes)", CCREE_SKCIPHER, EVP_CIPH_CBC_MODE, 16, 16, 16, 0 },
    { "AES-192-CBC:AES192:2.16.840.1.101.3.4.1.22", "cbc(aes)", CCREE_SKCIPHER, EVP_CIPH_CBC_MODE, 24, 16, 16, 0 },
    { "AES-256-CBC:AES256:2.16.840.1.101.3.4.1.42", "cbc(aes)", CCREE_SKCIPHER, EVP_CIPH_CBC_MODE, 32, 16, 16, 0 },
    { "AES-128-CTR", "ctr(aes)", CCREE_SKCIPHER, EVP_CIPH_CTR_MODE, 16, 16, 1, 0 },
    { "AES-192-CTR", "ctr(aes)", CCREE_SKCIPHER, EVP_CIPH_CTR_MODE, 24, 16, 1, 0 },
    { "AES-256-CTR", "ctr(aes)", CCREE_SKCIPHER, EVP_CIPH_CTR_MODE, 32, 16, 1, 0 },
    { "AES-128-GCM:id-aes128-GCM:2.16.840.1.101.3.4.1.6", "gcm(aes)", CCREE_AEAD, EVP_CIPH_GCM_MODE, 16, 12, 1, 0 },
    { "AES-192-GCM:id-aes192-GCM:2.16.840.1.101.3.4.1.26", "gcm(aes)", CCREE_AEAD, EVP_CIPH_GCM_MODE, 24, 12, 1, 0 },
    { "AES-256-GCM:id-aes256-GCM:2.16.840.1.101.3.4.1.46", "gcm(aes)", CCREE_AEAD, EVP_CIPH_GCM_MODE, 32, 12, 1, 0 },
    { "AES-128-CCM:id-aes128-CCM:2.16.840.1.101.3.4.1.7", "ccm(aes)", CCREE_AEAD, EVP_CIPH_CCM_MODE, 16, 12, 1, 0 },
    { "AES-192-CCM:id-aes192-CCM:2.16.840.1.101.3.4.1.27", "ccm(aes)", CCREE_AEAD, EVP_CIPH_CCM_MODE, 24, 12, 1, 0 },
    { "AES-256-CCM:id-aes256-CCM:2.16.840.1.101.3.4.1.47", "ccm(aes)", CCREE_AEAD, EVP_CIPH_CCM_MODE, 32, 12, 1, 0 },
    { "SHA1:SHA-1:SSL3-SHA1:1.3.14.3.2.26", "sha1", CCREE_HASH, 0, 0, 0, 64, 20 },
    { "SHA2-224:SHA-224:SHA224:2.16.840.1.101.3.4.2.4", "sha224", CCREE_HASH, 0, 0, 0, 64, 28 },
    { "SHA2-256:SHA-256:SHA256:2.16.840.1.101.3.4.2.1", "sha256", CCREE_HASH, 0, 0, 0, 64, 32 },
    { "SHA2-384:SHA-384:SHA384:2.16.840.1.101.3.4.2.2", "sha384", CCREE_HASH, 0, 0, 0, 128, 48 },
    { "SHA2-512:SHA-512:SHA512:2.16.840.1.101.3.4.2.3", "sha512", CCREE_HASH, 0, 0, 0, 128, 64 },
};

struct ccree_stats ccree_stats[CCREE_NALGS];

void ccree_count(size_t idx, int software, size_t ops, size_t bytes)
{
    atomic_fetch_add_explicit(&ccree_stats[idx].ops[software], ops, memory_order_relaxed);
    atomic_fetch_add_explicit(&ccree_stats[idx].bytes[software], bytes, memory_order_relaxed);
}
