/* The OpenSSL-facing side of ccree: provider context, errors, and the two operation kinds. */
#ifndef CCREE_PROV_H
#define CCREE_PROV_H

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/evp.h>

#include "afalg.h"
#include "algs.h"
#include "sock.h"
#include "stats.h"

/* Default offload-min: see README ("Choosing offload-min"). */
#define CCREE_OFFLOAD_MIN_DEFAULT 16384
#define CCREE_OFFLOAD_MIN_MAX 1048576

struct ccree_prov {
    const OSSL_CORE_HANDLE *handle;
    OSSL_LIB_CTX *libctx; /* child library context: the default provider, for software */
    OSSL_PROVIDER *deflt;
    struct ccree_drivers drivers;
    size_t offload_min;
    int fallback;
    char stats_dir[256]; /* the stats setting: "" for none */
    int stats_err;       /* -errno when the statistics file could not be made */
    OSSL_PROVIDER *legacy; /* single DES; NULL where it is not installed */
    struct ccree_path path[CCREE_NALGS];
    const char *sw_props[CCREE_NALGS]; /* where software has it (a MAC: its digest or cipher) */
    EVP_CIPHER *sw_cipher[CCREE_NALGS];
    EVP_MD *sw_md[CCREE_NALGS];
    EVP_MAC *sw_mac[CCREE_NALGS];
    OSSL_ALGORITHM lists[3][CCREE_NALGS + 1]; /* offered, by enum ccree_op */
};

enum {
    CCREE_R_BAD_CONFIG = 1,
    CCREE_R_NOT_OFFLOADED,
    CCREE_R_KERNEL,
    CCREE_R_SOFTWARE,
    CCREE_R_BAD_KEY_LENGTH,
    CCREE_R_BAD_IV_LENGTH,
    CCREE_R_NO_KEY,
    CCREE_R_BAD_LENGTH,
    CCREE_R_OUTPUT_TOO_SMALL,
    CCREE_R_BAD_DECRYPT,
    CCREE_R_BAD_PARAM,
    CCREE_R_FINALISED,
    CCREE_R_UNSUPPORTED,
    CCREE_R_OVERLAP,
    CCREE_R_BAD_TAG,
    CCREE_R_BAD_STATE,
};

void ccree_raise(const OSSL_CORE_HANDLE *h, int reason, const char *file, int line,
                 const char *func, const char *fmt, ...);
#define CCREE_RAISE(prov, reason, ...)                                                             \
    ccree_raise((prov)->handle, reason, __FILE__, __LINE__, __func__, __VA_ARGS__)

int ccree_read_config(const OSSL_CORE_HANDLE *h, OSSL_FUNC_core_get_params_fn *get_params,
                      struct ccree_prov *p);

/* Known answers through the kernel before trust: a driver that fails is not offloaded. */
void ccree_selftest(struct ccree_prov *p);

/* The property query under which software has this cipher (op) or digest, or NULL. */
const char *ccree_software(struct ccree_prov *p, int op, const char *name);

/* TLS CBC records (tlscbc.c): whether the version sends an explicit IV per record (-1: not a
 * version with CBC records); padding and MAC off a decrypted record in constant time (*len: the
 * record, then what it carries). */
int ccree_tls_explicit_iv(int version);
int ccree_tls_cbc_unpad(int version, unsigned char *rec, size_t *len, size_t bs, size_t macsize,
                        unsigned char *mac, OSSL_LIB_CTX *libctx);

/* 1 when a request of len bytes goes to the kernel, 0 when to the default provider. */
int ccree_use_kernel(const struct ccree_prov *p, size_t idx, size_t len);
/* At init: fails with an error when the algorithm has no kernel path and fallback = no. */
int ccree_check_path(const struct ccree_prov *p, size_t idx);
/* Raises the error of a failed kernel request; 1 when software may take over. */
int ccree_kernel_failed(const struct ccree_prov *p, size_t idx, int err);

extern const OSSL_DISPATCH ccree_cipher_functions[];
void *ccree_cipher_newctx(struct ccree_prov *p, size_t idx);
int ccree_cipher_get_params(OSSL_PARAM params[], size_t idx);
const OSSL_PARAM *ccree_cipher_gettable_params(void *provctx);
extern const OSSL_DISPATCH ccree_aead_functions[];
void *ccree_aead_newctx(struct ccree_prov *p, size_t idx);
/* The self-test's AEAD request: encrypts aad || msg with a 12-byte IV into ct || 16-byte tag. */
int ccree_aead_answer(struct ccree_prov *p, size_t idx, int kernel, const unsigned char *key,
                      const unsigned char *iv, const unsigned char *aad, size_t aadlen,
                      const unsigned char *msg, size_t len, unsigned char *out);
extern const OSSL_DISPATCH ccree_digest_functions[];
void *ccree_digest_newctx(struct ccree_prov *p, size_t idx);
int ccree_digest_get_params(OSSL_PARAM params[], size_t idx);
extern const OSSL_DISPATCH ccree_mac_functions[];
extern const OSSL_DISPATCH ccree_hmac_settings[], ccree_cmac_settings[];
void *ccree_mac_newctx(struct ccree_prov *p, size_t idx);

#endif
