/* The OpenSSL-facing side of ccree: provider context, errors, and the two operation kinds. */
#ifndef CCREE_PROV_H
#define CCREE_PROV_H

#include <stdint.h>
#include <time.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/evp.h>

#include "afalg.h"
#include "algs.h"
#include "sock.h"
#include "stats.h"

#define CCREE_OFFLOAD_MIN_MAX 1048576
#define CCREE_AUTO SIZE_MAX /* offload-min = auto, the default: see choose.c */
#define CCREE_CLASSES 18    /* request sizes by powers of two: 1 B to 128 KiB and more */

/* offload-min = auto: per size class, a request's time [0] in the kernel, [1] in software. */
struct ccree_timing {
    _Atomic uint32_t ns[CCREE_CLASSES][2]; /* a moving average; 0: not measured yet */
    _Atomic uint32_t left[CCREE_CLASSES];  /* requests until the slower path gets one */
};

/* A request's path, and its timing (choose.c). */
struct ccree_choice {
    size_t idx, cls;
    int kernel, timed;
    clockid_t clock; /* offload-goal: wall-clock (time) or the calling thread's (cpu) */
    uint64_t start;
};

/* The software provider's digest, called through its dispatch table: no EVP layer per message. */
struct ccree_sw_digest {
    void *provctx;
    OSSL_FUNC_digest_newctx_fn *newctx;
    OSSL_FUNC_digest_init_fn *init;
    OSSL_FUNC_digest_update_fn *update;
    OSSL_FUNC_digest_final_fn *final;
    OSSL_FUNC_digest_dupctx_fn *dupctx;
    OSSL_FUNC_digest_freectx_fn *freectx;
};

/* The same for a cipher. */
struct ccree_sw_cipher {
    void *provctx;
    OSSL_FUNC_cipher_newctx_fn *newctx;
    OSSL_FUNC_cipher_encrypt_init_fn *einit;
    OSSL_FUNC_cipher_decrypt_init_fn *dinit;
    OSSL_FUNC_cipher_update_fn *update;
    OSSL_FUNC_cipher_cipher_fn *cipher;
    OSSL_FUNC_cipher_final_fn *final;
    OSSL_FUNC_cipher_get_ctx_params_fn *get_ctx_params;
    OSSL_FUNC_cipher_set_ctx_params_fn *set_ctx_params;
    OSSL_FUNC_cipher_dupctx_fn *dupctx;
    OSSL_FUNC_cipher_freectx_fn *freectx;
};

struct ccree_prov {
    const OSSL_CORE_HANDLE *handle;
    OSSL_LIB_CTX *libctx; /* child library context: the default provider, for software */
    OSSL_PROVIDER *deflt;
    struct ccree_drivers drivers;
    size_t offload_min;
    clockid_t clock; /* what offload-min = auto measures: offload-goal */
    int fallback;
    int offer_all; /* offer = all: ccree offers what it does not offload too */
    unsigned char listed[CCREE_NALGS]; /* offered at load: stays, as OpenSSL keeps the lists */
    char stats_dir[256]; /* the stats setting: "" for none */
    int stats_err;       /* -errno when the statistics file could not be made */
    OSSL_PROVIDER *legacy; /* single DES; NULL where it is not installed */
    struct ccree_path path[CCREE_NALGS];
    struct ccree_ident ident; /* the process discovery ran in */
    const char *sw_props[CCREE_NALGS]; /* where software has it (a MAC: its digest or cipher) */
    EVP_CIPHER *sw_evp_cipher[CCREE_NALGS];
    /* an AEAD whose software refuses a parameter given twice (OpenSSL 3.6 on; 3.0 takes it) */
    int sw_refuses_repeats[CCREE_NALGS];
    /* CCM whose software final takes a message without data as the empty one: its tag
     * computed, or checked (OpenSSL 3.0.22 on; before, such a final did nothing) */
    int sw_final_seals_empty[CCREE_NALGS];
    struct ccree_sw_digest sw_digest[CCREE_NALGS];
    struct ccree_sw_cipher sw_cipher[CCREE_NALGS];
    EVP_MAC *sw_mac[CCREE_NALGS];
    OSSL_ALGORITHM lists[3][CCREE_NALGS + 1]; /* offered, by enum ccree_op */
    struct ccree_timing timing[CCREE_NALGS];
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

/* core.c: errors (the core's error functions from in), and the reason strings. */
void ccree_errors_init(const OSSL_DISPATCH *in);
const OSSL_ITEM *ccree_reason_strings(void *provctx);
void ccree_raise(const OSSL_CORE_HANDLE *h, int reason, const char *file, int line,
                 const char *func, const char *fmt, ...);
#define CCREE_RAISE(prov, reason, ...)                                                             \
    ccree_raise((prov)->handle, reason, __FILE__, __LINE__, __func__, __VA_ARGS__)

int ccree_read_config(const OSSL_CORE_HANDLE *h, OSSL_FUNC_core_get_params_fn *get_params,
                      struct ccree_prov *p);

/* Known answers through the kernel before trust: a driver that fails is not offloaded. */
void ccree_selftest(struct ccree_prov *p);

/* Whether the child library context has this cipher (op) or digest under props. */
int ccree_fetchable(struct ccree_prov *p, int op, const char *name, const char *props);
/* The property query under which software has this cipher (op) or digest, or NULL. */
const char *ccree_software(struct ccree_prov *p, int op, const char *name);

/* TLS CBC records (tlscbc.c): whether the version sends an explicit IV per record (-1: not a
 * version with CBC records); padding and MAC off a decrypted record in constant time (*len: the
 * record, then what it carries). */
int ccree_tls_explicit_iv(int version);
int ccree_tls_cbc_unpad(int version, unsigned char *rec, size_t *len, size_t bs, size_t macsize,
                        unsigned char *mac, OSSL_LIB_CTX *libctx);

/* offload-min = auto (choose.c): the choice by what each path measured, the clock it reads,
 * and a request's time recorded. */
int ccree_measured(struct ccree_prov *p, size_t idx, size_t len, struct ccree_choice *ch);
uint64_t ccree_now(clockid_t clock);
void ccree_timed(struct ccree_prov *p, const struct ccree_choice *ch);

/*
 * The length below which requests of algorithm idx go to software with nothing to measure:
 * every length where it is not offloaded; offload-min where that is a number and fallback is
 * on; none with fallback = no, nor under auto (which measures).
 */
static inline size_t ccree_sw_below(const struct ccree_prov *p, size_t idx)
{
    if (!p->path[idx].offload)
        return SIZE_MAX;
    return p->fallback && p->offload_min != CCREE_AUTO ? p->offload_min : 0;
}

/*
 * The path of a request of len bytes: 1 the kernel, 0 the default provider. Where it goes on
 * to run, ccree_start just before the request (after any socket set-up) and ccree_ran after it
 * succeeded time it for offload-min = auto.
 */
static inline int ccree_choose(struct ccree_prov *p, size_t idx, size_t len,
                               struct ccree_choice *ch)
{
    int offload = p->path[idx].offload;

    if (offload && p->fallback && p->offload_min == CCREE_AUTO)
        return ccree_measured(p, idx, len, ch);
    ch->timed = 0; /* ccree_sw_below's rule, in the fewest instructions */
    return ch->kernel = offload && (!p->fallback || len >= p->offload_min);
}

static inline void ccree_start(struct ccree_choice *ch)
{
    if (ch->timed)
        ch->start = ccree_now(ch->clock);
}

static inline void ccree_ran(struct ccree_prov *p, const struct ccree_choice *ch)
{
    if (ch->timed)
        ccree_timed(p, ch);
}
/*
 * A keyed op socket of algorithm idx, or -errno. A bind the kernel refuses (ENOENT) in a
 * process other than discovery's, or after its credentials changed, makes the algorithm
 * software in this process (ccree_refused).
 */
int ccree_open(struct ccree_prov *p, size_t idx, const unsigned char *key, size_t keylen,
               size_t authsize, int whole);
/* At init: fails with an error when the algorithm has no kernel path and fallback = no. */
int ccree_check_path(const struct ccree_prov *p, size_t idx);
/*
 * A kernel request failed: 1 when software may take over, else 0 with the error raised. The
 * rule: never with fallback = no, and never when clobbered: the kernel had the request and its
 * output overlaps input still needed (a redo would read what the kernel wrote).
 */
int ccree_kernel_failed(const struct ccree_prov *p, size_t idx, int err, int clobbered);
int ccree_overlap(const void *a, size_t alen, const void *b, size_t blen);

/*
 * The checks of a request's buffers, one set for every operation; each raises ccree's error,
 * naming the algorithm. Input: not NULL with bytes, nor a length EVP made of a negative int.
 * Apart: output running ahead bytes ahead of its input does not overwrite input before it is
 * read (OpenSSL's legacy EVP refused it; the default provider works on overwritten input).
 * Room: need bytes of output fit.
 */
int ccree_check_input(const struct ccree_prov *p, const char *name, const void *in, size_t inl);
int ccree_check_apart(const struct ccree_prov *p, const char *name, const void *out, size_t ahead,
                      const void *in, size_t inl);
int ccree_check_room(const struct ccree_prov *p, const char *name, const void *out, size_t need,
                     size_t outsize);

/* Whether a request passes all three: a few compares, no error raised. */
static inline int ccree_buffers_fine(const void *out, size_t ahead, size_t need, size_t outsize,
                                     const void *in, size_t inl)
{
    return in != NULL && out != NULL && inl <= SIZE_MAX / 2 && need <= outsize
           && ((uintptr_t)out + ahead <= (uintptr_t)in || (uintptr_t)out >= (uintptr_t)in + inl);
}

/*
 * What OSSL_PARAM_locate would find of each of the n keys (the first parameter of that name,
 * or NULL) into at[], in one pass over params: EVP asks for the IV length and sets the padding
 * at every init, and each locate is a pass. Const params are cast, as OSSL_PARAM_locate_const
 * casts them.
 */
void ccree_params_find(OSSL_PARAM params[], const char *const keys[], size_t n, OSSL_PARAM *at[]);

extern const OSSL_DISPATCH ccree_cipher_functions[];
void *ccree_cipher_newctx(struct ccree_prov *p, size_t idx);
int ccree_cipher_get_params(OSSL_PARAM params[], size_t idx);
const OSSL_PARAM *ccree_cipher_gettable_params(void *provctx);
extern const OSSL_DISPATCH ccree_aead_functions[];
void *ccree_aead_newctx(struct ccree_prov *p, size_t idx);
extern const OSSL_DISPATCH ccree_digest_functions[];
void *ccree_digest_newctx(struct ccree_prov *p, size_t idx);
int ccree_digest_get_params(OSSL_PARAM params[], size_t idx);
extern const OSSL_DISPATCH ccree_mac_functions[];
extern const OSSL_DISPATCH ccree_hmac_settings[], ccree_cmac_settings[];
void *ccree_mac_newctx(struct ccree_prov *p, size_t idx);

#endif
