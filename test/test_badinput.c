/*
 * Bad input, one table: each case runs on ccree's algorithms and must end in an OpenSSL error
 * (ccree's own reason where ccree sees the input) or, where the input is merely unusual, in the
 * default provider's result. Cases near INT_MAX run where there is no AF_ALG (in the VM, under
 * TCG, 2 GiB take minutes), unless CCREE_BADINPUT_BIG=0 (under qemu-user, likewise). Rows that show a bug in a file this test's owner does not own
 * are marked in the table (bug: the file) and still fail.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/mman.h>

#include <cmocka.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "testutil.h"

#define BIG ((size_t)INT_MAX + 17)

static const unsigned char key[32] = { 1, 2, 3 }, iv[16] = { 4, 5, 6 };
static unsigned char in[256];
static int big; /* run the cases near INT_MAX */

/* One run: the algorithm in one provider, and what it gave. */
struct run {
    EVP_CIPHER *c;
    EVP_MD *md;
    EVP_MAC *mac;
    const char *under; /* a MAC's digest or cipher */
    int kind;
    unsigned char out[512];
    int n; /* bytes of out to compare */
};

static EVP_CIPHER_CTX *cinit(struct run *r, int enc, int keyed)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

    assert_non_null(ctx);
    assert_true(EVP_CipherInit_ex2(ctx, r->c, keyed ? key : NULL, iv, enc, NULL));
    return ctx;
}

/* Runs one update then final; returns 1 on success and puts the output in r. */
static int cfinish(struct run *r, EVP_CIPHER_CTX *ctx, unsigned char *out, const unsigned char *src,
                   int len)
{
    int n = 0, m = 0, ok = EVP_CipherUpdate(ctx, out, &n, src, len)
                            && EVP_CipherFinal_ex(ctx, out == NULL ? NULL : out + n, &m);

    r->n = ok ? n + m : 0;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static int update_before_key(struct run *r)
{
    return cfinish(r, cinit(r, 1, 0), r->out, in, 16);
}

/* An update of no bytes, alone: the default provider's block and CTR ciphers ask for the key
 * first (its GCM does not). */
static int empty_update_before_key(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 0);
    int n = 0, ok = EVP_CipherUpdate(ctx, r->out, &n, in, 0);

    EVP_CIPHER_CTX_free(ctx);
    r->n = 0;
    return ok;
}

static int final_before_key(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 0);
    int n, ok = EVP_CipherFinal_ex(ctx, r->out, &n);

    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static int cipher_before_key(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 0);
    int ok = EVP_Cipher(ctx, r->out, in, 16) > 0;

    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static int null_input(struct run *r)
{
    return cfinish(r, cinit(r, 1, 1), r->out, NULL, 32);
}

static int null_output(struct run *r)
{
    return cfinish(r, cinit(r, 1, 1), NULL, in, 32);
}

static int null_zero_length(struct run *r)
{
    return cfinish(r, cinit(r, 1, 1), r->out, NULL, 0);
}

static int negative_length(struct run *r)
{
    return cfinish(r, cinit(r, 1, 1), r->out, in, -1);
}

static int cipher_partial_block(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n = EVP_Cipher(ctx, r->out, in, 15);

    EVP_CIPHER_CTX_free(ctx);
    r->n = n > 0 ? n : 0;
    return n > 0;
}

static int final_twice(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n = 0, m = 0, k = 0, ok = EVP_CipherUpdate(ctx, r->out, &n, in, 21)
                                   && EVP_CipherFinal_ex(ctx, r->out + n, &m)
                                   && EVP_CipherFinal_ex(ctx, r->out + n + m, &k);

    r->n = ok ? n + m + k : 0;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* In place, with 5 bytes buffered: the output would overwrite input not yet read. */
static int in_place_behind(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n;

    memcpy(r->out, in, 64);
    assert_true(EVP_CipherUpdate(ctx, r->out, &n, r->out, 5));
    return cfinish(r, ctx, r->out + 5, r->out + 5, 59);
}

/* In one update, the output 5 bytes ahead of its input: it would overwrite input not yet read. */
static int out_ahead(struct run *r)
{
    unsigned char buf[69];

    memcpy(buf, in, 64);
    return cfinish(r, cinit(r, 1, 1), buf + 5, buf, 64);
}

static int decrypt_partial_block(struct run *r)
{
    return cfinish(r, cinit(r, 0, 1), r->out, in, 31);
}

/* A decrypted last block ending in pad bytes p[0..1] (at 14, 15) under PKCS#7. */
static int unpad(struct run *r, unsigned char b14, unsigned char b15)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    unsigned char plain[32], ct[32];
    int n;

    memcpy(plain, in, 32);
    plain[30] = b14;
    plain[31] = b15;
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    assert_true(EVP_CipherUpdate(ctx, ct, &n, plain, 32) && n == 32);
    EVP_CIPHER_CTX_free(ctx);
    return cfinish(r, cinit(r, 0, 1), r->out, ct, 32);
}

static int pad_zero(struct run *r)
{
    return unpad(r, 0, 0);
}

static int pad_too_long(struct run *r)
{
    return unpad(r, 17, 17);
}

static int pad_bytes_differ(struct run *r)
{
    return unpad(r, 0x38, 2);
}

static int pad_good(struct run *r)
{
    return unpad(r, 2, 2);
}

static int set(struct run *r, const OSSL_PARAM *p)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int ok = EVP_CIPHER_CTX_set_params(ctx, p);

    return cfinish(r, ctx, r->out, in, 40) && ok;
}

static int unknown_param(struct run *r)
{
    int v = 1;
    OSSL_PARAM p[] = { OSSL_PARAM_int("no-such-param", &v), OSSL_PARAM_END };

    return set(r, p);
}

static int padding_as_string(struct run *r)
{
    OSSL_PARAM p[] = { OSSL_PARAM_utf8_string(OSSL_CIPHER_PARAM_PADDING, "no", 2), OSSL_PARAM_END };

    return set(r, p);
}

static int num_out_of_range(struct run *r)
{
    unsigned int v = 16;
    OSSL_PARAM p[] = { OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, &v), OSSL_PARAM_END };

    return set(r, p);
}

/* TLS 1.2 record mode, then an update that is not in place. */
static int tls_record_mode(struct run *r)
{
    unsigned int v = 0x0303;
    OSSL_PARAM p[] = { OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, &v), OSSL_PARAM_END };

    return set(r, p);
}

/* A TLS 1.2 record of 31 bytes to decrypt, in place. */
static int tls_record_partial(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 0, 1);
    unsigned int v = 0x0303;
    OSSL_PARAM p[] = { OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, &v), OSSL_PARAM_END };
    int n = 0, ok;

    memcpy(r->out, in, 31);
    ok = EVP_CIPHER_CTX_set_params(ctx, p) && EVP_CipherUpdate(ctx, r->out, &n, r->out, 31);
    EVP_CIPHER_CTX_free(ctx);
    r->n = 0;
    return ok;
}

static int wrong_key_length(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 0);
    int ok = EVP_CIPHER_CTX_set_key_length(ctx, 17) && EVP_CipherInit_ex2(ctx, NULL, key, iv, 1, NULL);

    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static int iv_buffer_too_small(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int ok = EVP_CIPHER_CTX_get_updated_iv(ctx, r->out, 4);

    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* One update of len bytes in place over zero pages. */
static int zero_update(struct run *r, int len)
{
    unsigned char *m = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n = 0, ok;

    assert_true(m != MAP_FAILED);
    ok = EVP_CipherUpdate(ctx, m, &n, m, len);
    EVP_CIPHER_CTX_free(ctx);
    r->n = 0;
    if (ok) { /* the digest of the output stands for it */
        unsigned int l;

        assert_true(EVP_Digest(m, (size_t)n, r->out, &l, EVP_sha256(), NULL));
        r->n = (int)l;
    }
    munmap(m, BIG);
    return ok;
}

/* INT_MAX bytes: the software path cuts them for EVP's int. */
static int int_max_update(struct run *r)
{
    return zero_update(r, INT_MAX);
}

/* XTS: a data unit of 2^20 blocks, the default provider's longest, and one block more. */
static int xts_unit_max(struct run *r)
{
    return zero_update(r, 1 << 24);
}

static int xts_unit_past_max(struct run *r)
{
    return zero_update(r, (1 << 24) + 16);
}

static EVP_MD_CTX *dinit(struct run *r)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();

    assert_non_null(ctx);
    assert_true(EVP_DigestInit_ex2(ctx, r->md, NULL));
    return ctx;
}

static int dfinish(struct run *r, EVP_MD_CTX *ctx, int ok)
{
    unsigned int l = 0;

    ok = ok && EVP_DigestFinal_ex(ctx, r->out, &l);
    r->n = ok ? (int)l : 0;
    EVP_MD_CTX_free(ctx);
    return ok;
}

static int digest_null_input(struct run *r)
{
    EVP_MD_CTX *ctx = dinit(r);

    return dfinish(r, ctx, EVP_DigestUpdate(ctx, NULL, 10));
}

static int digest_null_zero_length(struct run *r)
{
    EVP_MD_CTX *ctx = dinit(r);

    return dfinish(r, ctx, EVP_DigestUpdate(ctx, NULL, 0));
}

static int digest_null_output(struct run *r)
{
    EVP_MD_CTX *ctx = dinit(r);
    unsigned int l;
    int ok = EVP_DigestUpdate(ctx, in, 10) && EVP_DigestFinal_ex(ctx, NULL, &l);

    EVP_MD_CTX_free(ctx);
    return ok;
}

static int digest_final_twice(struct run *r)
{
    EVP_MD_CTX *ctx = dinit(r);

    assert_true(EVP_DigestUpdate(ctx, in, 10) && EVP_DigestFinal_ex(ctx, r->out, NULL));
    return dfinish(r, ctx, 1);
}

static int digest_update_after_final(struct run *r)
{
    EVP_MD_CTX *ctx = dinit(r);

    return dfinish(r, ctx, EVP_DigestFinal_ex(ctx, r->out, NULL) && EVP_DigestUpdate(ctx, in, 1));
}

static int digest_huge_length(struct run *r)
{
    EVP_MD_CTX *ctx = dinit(r);

    return dfinish(r, ctx, EVP_DigestUpdate(ctx, in, SIZE_MAX - 8));
}

static int digest_past_int_max(struct run *r)
{
    unsigned char *m = mmap(NULL, BIG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    EVP_MD_CTX *ctx = dinit(r);
    int ok;

    assert_true(m != MAP_FAILED);
    ok = dfinish(r, ctx, EVP_DigestUpdate(ctx, in, 3) && EVP_DigestUpdate(ctx, m, BIG));
    munmap(m, BIG);
    return ok;
}


/* --- MACs -------------------------------------------------------------------------------- */

enum { CIPHER = 1, BLOCK = 2, IV = 4, CTR = 8, DIGEST = 16, MAC = 32, GCM = 64, CCM = 128,
       XTS = 256, CTS = 512 }; /* BLOCK: ECB, CBC; IV: CBC, CTR */
#define AEAD (GCM | CCM)
#define MODES (AEAD | XTS | CTS)

/* The parameter naming a MAC's digest or cipher. */
static const char *under(const struct run *r)
{
    return EVP_MAC_is_a(r->mac, "CMAC") ? OSSL_MAC_PARAM_CIPHER : OSSL_MAC_PARAM_DIGEST;
}

/* A MAC context with params (NULL: its digest or cipher, and the key). */
static EVP_MAC_CTX *minit(struct run *r, const OSSL_PARAM *params, int *ok)
{
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(r->mac);
    OSSL_PARAM p[] = { OSSL_PARAM_utf8_string(under(r), (char *)r->under, 0), OSSL_PARAM_END };

    assert_non_null(ctx);
    *ok = EVP_MAC_init(ctx, params == NULL ? key : NULL, 16, params == NULL ? p : params);
    return ctx;
}

/* ok, then final into r; frees ctx. */
static int mfinish(struct run *r, EVP_MAC_CTX *ctx, int ok)
{
    size_t l = 0;

    ok = ok && EVP_MAC_final(ctx, r->out, &l, sizeof(r->out));
    r->n = ok ? (int)l : 0;
    EVP_MAC_CTX_free(ctx);
    return ok;
}

/* n params: the digest or cipher n - 1 times, then the key; 40 bytes MACed. */
static int mac_params(struct run *r, size_t n)
{
    OSSL_PARAM p[33];
    size_t i;
    int ok;
    EVP_MAC_CTX *ctx;

    for (i = 0; i + 1 < n; i++)
        p[i] = OSSL_PARAM_construct_utf8_string(under(r), (char *)r->under, 0);
    p[i++] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, (void *)key, 16);
    p[i] = OSSL_PARAM_construct_end();
    ctx = minit(r, p, &ok);
    return mfinish(r, ctx, ok && EVP_MAC_update(ctx, in, 40));
}

static int mac_params_16(struct run *r)
{
    return mac_params(r, 16);
}

static int mac_params_17(struct run *r)
{
    return mac_params(r, 17);
}

static int mac_params_32(struct run *r)
{
    return mac_params(r, 32);
}

static int mac_before_key(struct run *r)
{
    OSSL_PARAM p[] = { OSSL_PARAM_utf8_string(under(r), (char *)r->under, 0), OSSL_PARAM_END };
    int ok;
    EVP_MAC_CTX *ctx = minit(r, p, &ok);

    return mfinish(r, ctx, ok && EVP_MAC_update(ctx, in, 10));
}

static int mac_null_input(struct run *r)
{
    int ok;
    EVP_MAC_CTX *ctx = minit(r, NULL, &ok);

    return mfinish(r, ctx, ok && EVP_MAC_update(ctx, NULL, 10));
}

static int mac_null_zero_length(struct run *r)
{
    int ok;
    EVP_MAC_CTX *ctx = minit(r, NULL, &ok);

    return mfinish(r, ctx, ok && EVP_MAC_update(ctx, NULL, 0));
}

/* EVP_MAC_final with no output asks for the size. */
static int mac_null_output(struct run *r)
{
    int ok;
    EVP_MAC_CTX *ctx = minit(r, NULL, &ok);
    size_t l = 0;

    ok = ok && EVP_MAC_update(ctx, in, 10) && EVP_MAC_final(ctx, NULL, &l, 0);
    r->n = (int)l; /* the size, compared */
    memset(r->out, 0, l);
    EVP_MAC_CTX_free(ctx);
    return ok;
}

static int mac_output_too_small(struct run *r)
{
    int ok;
    EVP_MAC_CTX *ctx = minit(r, NULL, &ok);
    size_t l = 0;

    ok = ok && EVP_MAC_update(ctx, in, 10) && EVP_MAC_final(ctx, r->out, &l, 8);
    EVP_MAC_CTX_free(ctx);
    r->n = 0;
    return ok;
}

static int mac_final_twice(struct run *r)
{
    int ok;
    EVP_MAC_CTX *ctx = minit(r, NULL, &ok);
    size_t l;

    assert_true(ok && EVP_MAC_update(ctx, in, 10) && EVP_MAC_final(ctx, r->out, &l, sizeof(r->out)));
    return mfinish(r, ctx, 1);
}

static int mac_update_after_final(struct run *r)
{
    int ok;
    EVP_MAC_CTX *ctx = minit(r, NULL, &ok);
    size_t l;

    assert_true(ok && EVP_MAC_final(ctx, r->out, &l, sizeof(r->out)));
    return mfinish(r, ctx, EVP_MAC_update(ctx, in, 1));
}

static int mac_huge_length(struct run *r)
{
    int ok;
    EVP_MAC_CTX *ctx = minit(r, NULL, &ok);

    return mfinish(r, ctx, ok && EVP_MAC_update(ctx, in, SIZE_MAX - 8));
}

static int mac_past_int_max(struct run *r)
{
    unsigned char *m = mmap(NULL, BIG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int ok;
    EVP_MAC_CTX *ctx = minit(r, NULL, &ok);

    assert_true(m != MAP_FAILED);
    ok = mfinish(r, ctx, ok && EVP_MAC_update(ctx, in, 3) && EVP_MAC_update(ctx, m, BIG));
    munmap(m, BIG);
    return ok;
}

/* --- AEAD, XTS and CBC-CTS ------------------------------------------------------------------ */

/* n settings at once (the IV length for AEAD, the CTS variant, an unknown one for XTS), then
 * 40 bytes. */
static int cipher_params(struct run *r, size_t n)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    size_t i, ivlen = 12;
    OSSL_PARAM p[33];
    int ok;

    for (i = 0; i < n; i++)
        p[i] = r->kind & AEAD ? OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &ivlen)
               : r->kind & CTS ? OSSL_PARAM_construct_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE, "CS3", 0)
                               : OSSL_PARAM_construct_size_t("no-such-param", &ivlen);
    p[n] = OSSL_PARAM_construct_end();
    ok = EVP_CIPHER_CTX_set_params(ctx, p) && EVP_CipherInit_ex2(ctx, NULL, key, iv, 1, NULL);
    return cfinish(r, ctx, r->out, in, 40) && ok;
}

static int cipher_params_16(struct run *r)
{
    return cipher_params(r, 16);
}

static int cipher_params_17(struct run *r)
{
    return cipher_params(r, 17);
}

static int cipher_params_32(struct run *r)
{
    return cipher_params(r, 32);
}

/* The tag (16 bytes) into r->out + r->n after an encryption; 0 if there is none. */
static int get_tag(struct run *r, EVP_CIPHER_CTX *ctx)
{
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, r->out + 256) > 0;
}

static int aead_tag_before_final(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n = 0, ok = EVP_CipherUpdate(ctx, r->out, &n, in, r->kind & CCM ? 40 : 20) && get_tag(r, ctx);

    EVP_CIPHER_CTX_free(ctx);
    r->n = 0;
    return ok;
}

/* An encryption of 40 bytes whose tag is compared too. */
static int aead_seal(struct run *r, EVP_CIPHER_CTX *ctx, int ok)
{
    int n = 0, m = 0;

    ok = ok && EVP_CipherUpdate(ctx, r->out, &n, in, 40) && EVP_CipherFinal_ex(ctx, r->out + n, &m)
         && get_tag(r, ctx);
    if (ok)
        memmove(r->out + n + m, r->out + 256, 16);
    r->n = ok ? n + m + 16 : 0;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static int aead_aad_after_data(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n;

    assert_true(EVP_CipherUpdate(ctx, NULL, &n, in, 13) && EVP_CipherUpdate(ctx, r->out, &n, in, 20));
    return aead_seal(r, ctx, EVP_CipherUpdate(ctx, NULL, &n, in, 13));
}

/* 20 bytes, a new IV (no key), then a whole message under it. */
static int iv_mid_message(struct run *r)
{
    static const unsigned char iv2[16] = { 9, 9, 9 };
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n, ok = EVP_CipherUpdate(ctx, r->out, &n, in, 20)
                && EVP_CipherInit_ex2(ctx, NULL, NULL, iv2, -1, NULL);

    return r->kind & AEAD ? aead_seal(r, ctx, ok) : cfinish(r, ctx, r->out, in, 40) && ok;
}

static int aead_update_after_final(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n = 0, m = 0, ok = EVP_CipherUpdate(ctx, r->out, &n, in, 20)
                           && EVP_CipherFinal_ex(ctx, r->out + n, &m)
                           && EVP_CipherUpdate(ctx, r->out + n + m, &m, in, 20);

    EVP_CIPHER_CTX_free(ctx);
    r->n = 0;
    return ok;
}

static int aead_decrypt_without_tag(struct run *r)
{
    return cfinish(r, cinit(r, 0, 1), r->out, in, 40);
}

static int ccm_two_updates(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n;

    assert_true(EVP_CipherUpdate(ctx, r->out, &n, in, 20));
    return cfinish(r, ctx, r->out + 20, in, 20);
}

/* EVP_Cipher with a length near UINT_MAX (size_t-huge on 32-bit targets) from 256 bytes. */
static int cipher_uint_max(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n = EVP_Cipher(ctx, r->out, in, UINT_MAX - 15);

    EVP_CIPHER_CTX_free(ctx);
    r->n = 0;
    return n > 0;
}

/* EVP_Cipher's AAD (no output) of a length near UINT_MAX. */
static int aad_uint_max(struct run *r)
{
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n = EVP_Cipher(ctx, NULL, in, UINT_MAX - 15);

    EVP_CIPHER_CTX_free(ctx);
    r->n = 0;
    return n >= 0;
}

static int int_max_aad(struct run *r)
{
    unsigned char *m = mmap(NULL, BIG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    EVP_CIPHER_CTX *ctx = cinit(r, 1, 1);
    int n = 0, ok;

    assert_true(m != MAP_FAILED);
    ok = EVP_CipherUpdate(ctx, NULL, &n, m, INT_MAX);
    munmap(m, BIG);
    return aead_seal(r, ctx, ok);
}

/* fails: a reason or text ccree's error must carry, "" for any error, NULL: as the default. */
static const struct {
    const char *name;
    int (*run)(struct run *);
    int kinds, big;
    const char *fails;
    const char *bug; /* a known bug this row shows, in a file this test's owner does not own */
} cases[] = {
    { "update before a key", update_before_key, CIPHER | MODES, 0, "no key set", NULL },
    { "empty update before a key", empty_update_before_key, CIPHER | MODES, 0, NULL, NULL },
    { "final before a key", final_before_key, CIPHER | AEAD, 0, "no key set", NULL },
    { "final before a key, XTS and CTS", final_before_key, XTS | CTS, 0, NULL, NULL },
    { "EVP_Cipher before a key", cipher_before_key, CIPHER | MODES, 0, "no key set", NULL },
    { "NULL input", null_input, CIPHER | XTS | CTS, 0, "NULL input", NULL },
    { "NULL input (GCM: final; CCM: the length)", null_input, AEAD, 0, NULL, NULL },
    { "NULL output", null_output, CIPHER | XTS, 0, "NULL output", NULL },
    { "NULL output, CTS", null_output, CTS, 0, NULL, NULL },
    { "NULL output (AAD)", null_output, AEAD, 0, NULL, NULL },
    { "NULL input of length 0", null_zero_length, CIPHER | MODES, 0, NULL, NULL },
    { "negative length", negative_length, CIPHER | MODES, 0, "", NULL },
    { "EVP_Cipher on a partial block", cipher_partial_block, BLOCK, 0, "bad data length", NULL },
    { "final twice", final_twice, CIPHER | MODES, 0, NULL, NULL },
    { "in place with bytes buffered", in_place_behind, BLOCK, 0, "partially overlapping buffers", NULL },
    { "output ahead of its input", out_ahead, CIPHER | MODES, 0, "partially overlapping buffers", NULL },
    { "decrypt a partial block", decrypt_partial_block, BLOCK, 0, "bad data length", NULL },
    { "padding byte 0", pad_zero, BLOCK, 0, "bad decrypt", NULL },
    { "padding byte 17", pad_too_long, BLOCK, 0, "bad decrypt", NULL },
    { "padding bytes differ", pad_bytes_differ, BLOCK, 0, "bad decrypt", NULL },
    { "padding good", pad_good, BLOCK, 0, NULL, NULL },
    { "unknown parameter", unknown_param, CIPHER | MODES, 0, NULL, NULL },
    { "padding as a string", padding_as_string, CIPHER, 0, "bad parameter", NULL },
    { "num out of range", num_out_of_range, CIPHER, 0, "bad parameter", NULL },
    { "TLS record not in place", tls_record_mode, BLOCK, 0, "one padded update in place", NULL },
    { "TLS record mode of CTR", tls_record_mode, CTR, 0, NULL, NULL },
    { "TLS record of a partial block", tls_record_partial, BLOCK, 0, "bad data length", NULL },
    { "wrong key length", wrong_key_length, CIPHER | MODES, 0, "", NULL },
    { "IV buffer too small", iv_buffer_too_small, IV | MODES, 0, "", NULL },
    { "INT_MAX bytes in one update", int_max_update, CTR, 1, NULL, NULL },
    { "an XTS data unit of 2^20 blocks", xts_unit_max, XTS, 0, NULL, NULL },
    { "an XTS data unit of 2^20 blocks and one more", xts_unit_past_max, XTS, 0, "bad data length", NULL },
    { "16 settings", cipher_params_16, MODES, 0, NULL, NULL },
    { "17 settings", cipher_params_17, MODES, 0, NULL, NULL },
    { "32 settings", cipher_params_32, MODES, 0, NULL, NULL },
    { "a new IV mid-message", iv_mid_message, MODES, 0, NULL, NULL },
    { "tag before final", aead_tag_before_final, CCM, 0, "bad tag", NULL },
    { "tag before final, GCM", aead_tag_before_final, GCM, 0, "bad tag", "aead.c, in the kernel" },
    { "AAD after the data", aead_aad_after_data, GCM, 0, "AAD after the data", NULL },
    { "update after final", aead_update_after_final, AEAD | XTS | CTS, 0, NULL, NULL },
    { "decrypt without a tag", aead_decrypt_without_tag, AEAD, 0, "no tag set for decryption", NULL },
    { "CCM data in two updates", ccm_two_updates, CCM, 0, "CCM takes its data in one update", NULL },
    { "EVP_Cipher of UINT_MAX - 15 bytes", cipher_uint_max, MODES, 0, "", NULL },
    { "EVP_Cipher AAD of UINT_MAX - 15 bytes", aad_uint_max, AEAD, 0, "", NULL },
    { "INT_MAX bytes of AAD", int_max_aad, GCM, 1, NULL, NULL },
    { "INT_MAX bytes in one update, AEAD", int_max_update, CCM, 1, NULL, NULL },
    { "INT_MAX bytes in one update, CTS", int_max_update, CTS, 1, NULL, "cipher.c" },
    { "digest NULL input", digest_null_input, DIGEST, 0, "NULL input", NULL },
    { "digest NULL input of length 0", digest_null_zero_length, DIGEST, 0, NULL, NULL },
    { "digest NULL output", digest_null_output, DIGEST, 0, "NULL output", NULL },
    { "digest final twice", digest_final_twice, DIGEST, 0, "operation already finalised", NULL },
    { "digest update after final", digest_update_after_final, DIGEST, 0,
      "operation already finalised", NULL },
    { "digest of SIZE_MAX - 8 bytes", digest_huge_length, DIGEST, 0, "bad data length", NULL },
    { "digest past INT_MAX bytes", digest_past_int_max, DIGEST, 1, NULL, NULL },
    { "MAC with 16 settings", mac_params_16, MAC, 0, NULL, NULL },
    { "MAC with 17 settings", mac_params_17, MAC, 0, NULL, NULL },
    { "MAC with 32 settings", mac_params_32, MAC, 0, NULL, NULL },
    { "MAC before a key", mac_before_key, MAC, 0, "is it keyed", NULL },
    { "MAC NULL input", mac_null_input, MAC, 0, "NULL input", NULL },
    { "MAC NULL input of length 0", mac_null_zero_length, MAC, 0, NULL, NULL },
    { "MAC size asked with no output", mac_null_output, MAC, 0, NULL, NULL },
    { "MAC output too small", mac_output_too_small, MAC, 0, NULL, NULL },
    { "MAC final twice", mac_final_twice, MAC, 0, "operation already finalised", NULL },
    { "MAC update after final", mac_update_after_final, MAC, 0, "operation already finalised", NULL },
    { "MAC of SIZE_MAX - 8 bytes", mac_huge_length, MAC, 0, "bad data length", NULL },
    { "MAC past INT_MAX bytes", mac_past_int_max, MAC, 1, NULL, NULL },
};

static const struct {
    const char *name, *under;
    int kind;
} algs[] = {
    { "AES-128-ECB", NULL, CIPHER | BLOCK }, { "AES-192-CBC", NULL, CIPHER | BLOCK | IV },
    { "AES-256-CTR", NULL, CIPHER | IV | CTR }, { "SHA1", NULL, DIGEST }, { "SHA2-384", NULL, DIGEST },
    { "HMAC", "SHA2-256", MAC }, { "CMAC", "AES-128-CBC", MAC }, { "AES-128-GCM", NULL, GCM },
    { "AES-256-CCM", NULL, CCM }, { "AES-128-XTS", NULL, XTS }, { "AES-256-CBC-CTS", NULL, CTS },
};

/* The algorithm of row a in one provider. */
static void fetch(struct run *r, size_t a, const char *props)
{
    int kind = algs[a].kind;

    r->kind = kind;
    r->under = algs[a].under;
    r->c = kind & (CIPHER | MODES) ? EVP_CIPHER_fetch(NULL, algs[a].name, props) : NULL;
    r->md = kind & DIGEST ? EVP_MD_fetch(NULL, algs[a].name, props) : NULL;
    r->mac = kind & MAC ? EVP_MAC_fetch(NULL, algs[a].name, props) : NULL;
    assert_true(r->c != NULL || r->md != NULL || r->mac != NULL);
}

static void release(struct run *r)
{
    EVP_CIPHER_free(r->c);
    EVP_MD_free(r->md);
    EVP_MAC_free(r->mac);
}

/*
 * Whether libcrypto refused row i itself, before any provider: the default provider (in r) fails
 * it too, with only EVP's errors, and those are ccree's errors s. OpenSSL 3.0 passes a second
 * EVP_DigestFinal_ex, or an EVP_DigestUpdate after it, to the provider; 3.5 refuses
 * them in crypto/evp/digest.c (EVP_MD_CTX_FLAG_FINALISED) and the provider never sees them.
 */
static int evp_refuses(size_t i, struct run *r, const tu_errs *s)
{
    tu_errs o;
    int k;

    ERR_clear_error();
    if (cases[i].run(r)) {
        ERR_clear_error();
        return 0;
    }
    tu_take_errors(&o);
    if (o.n == 0 || o.n != s->n)
        return 0;
    for (k = 0; k < o.n; k++)
        if (ERR_GET_LIB(o.e[k]) != ERR_LIB_EVP || o.e[k] != s->e[k])
            return 0;
    return 1;
}

/* Row i on algorithm a; 1 if it is right. */
static int check(size_t i, size_t a)
{
    static struct run r[2];
    const char *name = algs[a].name;
    int k, ok[2], right = 1;
    tu_errs e;

    for (k = 0; k < 2; k++)
        fetch(&r[k], a, k ? "provider=default" : "provider=ccree");
    ok[0] = cases[i].run(&r[0]);
    if (cases[i].fails != NULL
        && (ok[0] || (!tu_take_errors_say(&e, cases[i].fails) && !evp_refuses(i, &r[1], &e)))) {
        print_error("%s, %s: %s, not the error \"%s\"\n", cases[i].name, name,
                    ok[0] ? "succeeded" : "another error", cases[i].fails);
        right = 0;
    }
    ERR_clear_error();
    if (cases[i].fails == NULL) {
        ok[1] = cases[i].run(&r[1]);
        if (ok[0] != ok[1] || r[0].n != r[1].n || memcmp(r[0].out, r[1].out, r[0].n)) {
            print_error("%s, %s: differs from the default provider (%d, %d bytes; default %d, %d)\n",
                        cases[i].name, name, ok[0], r[0].n, ok[1], r[1].n);
            right = 0;
        }
        ERR_clear_error();
    }
    if (!right && cases[i].bug != NULL)
        print_error("  known: a bug in %s\n", cases[i].bug);
    for (k = 0; k < 2; k++)
        release(&r[k]);
    return right;
}

static void bad_input(void **state)
{
    int failures = 0;
    size_t i, a;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int ran = 0; /* a case near INT_MAX runs on one algorithm */

        if (cases[i].big && !big) {
            printf("skipped here: %s\n", cases[i].name);
            continue;
        }
        for (a = 0; a < sizeof(algs) / sizeof(algs[0]); a++)
            if ((cases[i].kinds & algs[a].kind) != 0 && !(cases[i].big && ran++))
                failures += !check(i, a);
    }
    assert_int_equal(failures, 0);
}

int main(void)
{
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(NULL, "ccree");
    int rc;
    const struct CMUnitTest tests[] = { cmocka_unit_test(bad_input) };

    if (prov == NULL) {
        fprintf(stderr, "ccree not loaded through OPENSSL_CONF\n");
        return 1;
    }
    big = strstr(tu_alg(prov, "SHA1").reason, "no AF_ALG") != NULL
          && (getenv("CCREE_BADINPUT_BIG") == NULL || strcmp(getenv("CCREE_BADINPUT_BIG"), "0") != 0);
    memset(in, 0xa5, sizeof(in));
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    OSSL_PROVIDER_unload(prov);
    return rc;
}
