/*
 * evp.h - what the parts of test_evp share: the algorithm tables, the run's globals (set up in
 * test_evp.c), failure reporting, the provider counters, traces of EVP calls and the cipher
 * sequence (evp_common.c), and the tests each part defines.
 */
#ifndef CCREE_TEST_EVP_H
#define CCREE_TEST_EVP_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "testutil.h"

typedef struct {
    const char *name;
    int keylen, ivlen, block, mode;
    const char *oracle;         /* NULL: g_oracle */
} cipher_info;

/* The algorithms and sizes every part tests (each file has its copy). */
static const cipher_info ciphers[] = {
    { "AES-128-ECB", 16, 0, 16, EVP_CIPH_ECB_MODE, NULL },
    { "AES-192-ECB", 24, 0, 16, EVP_CIPH_ECB_MODE, NULL },
    { "AES-256-ECB", 32, 0, 16, EVP_CIPH_ECB_MODE, NULL },
    { "AES-128-CBC", 16, 16, 16, EVP_CIPH_CBC_MODE, NULL },
    { "AES-192-CBC", 24, 16, 16, EVP_CIPH_CBC_MODE, NULL },
    { "AES-256-CBC", 32, 16, 16, EVP_CIPH_CBC_MODE, NULL },
    { "AES-128-CTR", 16, 16, 1, EVP_CIPH_CTR_MODE, NULL },
    { "AES-192-CTR", 24, 16, 1, EVP_CIPH_CTR_MODE, NULL },
    { "AES-256-CTR", 32, 16, 1, EVP_CIPH_CTR_MODE, NULL },
    { "DES-EDE3-CBC", 24, 8, 8, EVP_CIPH_CBC_MODE, NULL },
    { "DES-EDE3-ECB", 24, 0, 8, EVP_CIPH_ECB_MODE, NULL },
    { "DES-CBC", 8, 8, 8, EVP_CIPH_CBC_MODE, "legacy" },
    { "DES-ECB", 8, 0, 8, EVP_CIPH_ECB_MODE, "legacy" },
    { "SM4-ECB", 16, 0, 16, EVP_CIPH_ECB_MODE, NULL },
    { "SM4-CBC", 16, 16, 16, EVP_CIPH_CBC_MODE, NULL },
    { "SM4-CTR", 16, 16, 1, EVP_CIPH_CTR_MODE, NULL },
};
#define NCIPHERS (sizeof(ciphers) / sizeof(ciphers[0]))

typedef struct {
    const char *name;
    int size, block;
} md_info;

static const md_info mds[] = {
    { "SHA1", 20, 64 },
    { "SHA2-224", 28, 64 },
    { "SHA2-256", 32, 64 },
    { "SHA2-384", 48, 128 },
    { "SHA2-512", 64, 128 },
    { "SM3", 32, 64 },
    { "MD5", 16, 64 },
};
#define NMDS (sizeof(mds) / sizeof(mds[0]))

static const size_t sizes[] = {
    0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000,
    4095, 4096, 4097, 16384, 65535, 65536, 65537, 100000, 200000, 300000
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

#define MAXSZ       300000          /* largest message */
#define DATASZ      (2 * MAXSZ)     /* shared random data */
#define OUTCAP      (MAXSZ + 4096)  /* output buffers */
#define MAXCHUNK    70000
#define MAXCHUNKS   2048
#define MAXCALLS    (MAXCHUNKS + 16)

extern const char *g_subject;
extern const char *const g_oracle;
extern int g_counters; /* subject is ccree: check counters */
extern int g_require_offload;
extern uint64_t g_seed;
extern OSSL_PROVIDER *g_ccree, *g_legacy;
extern EVP_CIPHER *subj_c[NCIPHERS], *orac_c[NCIPHERS];
extern EVP_MD *subj_m[NMDS], *orac_m[NMDS];
extern unsigned char *g_data; /* DATASZ bytes from the seeded PRNG */

/* Failure reporting: where a test is, and the checks that print it when they fail. */
void where(const char *fmt, ...) CMOCKA_PRINTF_ATTRIBUTE(1, 2);
void where_chunks(const size_t *c, size_t n);
void where_key(const unsigned char *key, size_t keylen, const unsigned char *iv, size_t ivlen);
void print_where(void);

#define FAILF(...) do {                                            \
        print_where();                                             \
        print_error(__VA_ARGS__);                                  \
        print_error("\n");                                         \
        fail();                                                    \
    } while (0)

#define CHECK(cond, fmt, ...) do {                                 \
        if (!(cond))                                               \
            FAILF("check failed: %s: " fmt, #cond, ##__VA_ARGS__); \
    } while (0)

void rng_for(tu_rng *r, int test, size_t alg);
void rand_key_iv(const cipher_info *ci, unsigned char *key, unsigned char *iv);

/* Provider counters around a test's work on one algorithm. */
typedef struct {
    int on;
    int small;                  /* little data per call, see counters_end */
    const char *name;
    tu_alg_info a;
    tu_totals t;
} csnap;

void counters_begin(csnap *s, const char *name, int small);
void counters_end(csnap *s);

/* Traces: everything observable about a sequence of EVP calls. */
typedef struct {
    size_t n, cap;
    char *kind;                 /* I init, P padding, U update, F final,
                                 * C EVP_Cipher, X copy, other: misc */
    int *rc, *outl;
    unsigned char *failed, *err;
    unsigned char *out;
    size_t outcap, total;
} trace;

#define OUTL_UNSET (-424242)

void tr_init(trace *t, size_t outcap);
void tr_free(trace *t);
void tr_reset(trace *t);
void tr_rec(trace *t, char kind, int rc, int failed, int outl);
int tr_cinit(trace *t, EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, const unsigned char *key,
             const unsigned char *iv, int enc, const OSSL_PARAM *params);
int tr_pad(trace *t, EVP_CIPHER_CTX *ctx, int pad);
int tr_update(trace *t, EVP_CIPHER_CTX *ctx, const unsigned char *in, size_t inl, int inplace);
int tr_final(trace *t, EVP_CIPHER_CTX *ctx);
int tr_evp_cipher(trace *t, EVP_CIPHER_CTX *ctx, const unsigned char *in, size_t inl);
int tr_feed(trace *t, EVP_CIPHER_CTX *ctx, const unsigned char *in, size_t len,
            const size_t *chunks, size_t nchunks, int inplace);
void cmp_trace_ex(const char *what, const trace *s, const trace *o, int bytes, long lenient);
void cmp_trace(const char *what, const trace *s, const trace *o);
void expect_bytes(const char *what, const unsigned char *got, size_t gotlen,
                  const unsigned char *exp, size_t explen);

/* The shared cipher sequence, and the oracle's one-shot answers. */
typedef struct {
    int enc;
    int pad;                    /* 1 on, 0 off, -1 don't call set_padding */
    const unsigned char *key, *iv;
    const unsigned char *in;
    size_t len;
    const size_t *chunks;       /* NULL: one update of len bytes */
    size_t nchunks;
    int inplace;
} cseq;

int run_cipher(const EVP_CIPHER *c, const cseq *s, trace *t);
int oracle_crypt_plain(size_t ci, int enc, int pad, const unsigned char *key,
                       const unsigned char *iv, const unsigned char *in, size_t len,
                       unsigned char *out, size_t *outlen);
size_t oracle_crypt(size_t ci, int enc, int pad, const unsigned char *key,
                    const unsigned char *iv, const unsigned char *in, size_t len,
                    unsigned char *out);
size_t last_call(const trace *t);

/* The tests, by file. */
void test_kat(void **state);                                        /* evp_kat.c */
void test_cipher_oneshot(void **state);                             /* evp_cipher.c */
void test_cipher_chunked(void **state);
void test_cipher_inplace(void **state);
void test_cipher_reinit_iv(void **state);
void test_cipher_evp_cipher(void **state);
void test_cipher_interleave(void **state);
void test_cipher_copy(void **state);                                /* evp_state.c */
void test_cipher_params(void **state);
void test_cipher_bad_decrypt(void **state);                         /* evp_bad.c */
void test_bad_input(void **state);
void test_digest_sizes(void **state);                               /* evp_digest.c */
void test_digest_copy(void **state);
void test_digest_params(void **state);
void test_fork(void **state);                                       /* evp_fork.c */

#endif /* CCREE_TEST_EVP_H */
