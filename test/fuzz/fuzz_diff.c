/*
 * libFuzzer differential target: the input is an algorithm, a key, an IV and a sequence of
 * operations (updates of any size, in place or not, EVP_Cipher, copies, switching to the copy,
 * re-inits with a new IV or key or mid-message, padding changes, finals). Each operation runs
 * on a ccree context and on a default-provider context; any difference in result, output or
 * state aborts.
 * ccree is linked in as a built-in provider and configured from fuzz.cnf (FUZZ_CNF).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "../testutil.h"

OSSL_provider_init_fn OSSL_provider_init;

static const char *const names[] = {
    "AES-128-ECB", "AES-192-ECB", "AES-256-ECB", "AES-128-CBC", "AES-192-CBC", "AES-256-CBC",
    "AES-128-CTR", "AES-192-CTR", "AES-256-CTR", "SHA1", "SHA2-224", "SHA2-256", "SHA2-384",
    "SHA2-512",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))
#define MAXLEN (256 * 1024)

static OSSL_LIB_CTX *libctx;
static OSSL_PROVIDER *prov;
static EVP_CIPHER *cipher[NNAMES][2];
static EVP_MD *md[NNAMES][2];
static unsigned char src[MAXLEN + 64];

/* The input, consumed from the front; reads past its end give zeros. */
struct input {
    const uint8_t *p;
    size_t n;
};

static unsigned take(struct input *in, size_t k)
{
    unsigned v = 0;

    while (k--) {
        v = v << 8 | (in->n ? *in->p : 0);
        if (in->n) {
            in->p++;
            in->n--;
        }
    }
    return v;
}

static void bytes(struct input *in, unsigned char *b, size_t k)
{
    while (k--)
        *b++ = (unsigned char)take(in, 1);
}

/* Mostly small lengths; the top bits select up to MAXLEN - 1, past 64 KiB. */
static size_t length(struct input *in)
{
    unsigned v = take(in, 2);

    return (v & 0xc000) == 0xc000 ? (v & 0x3fff) * 16 : v & 0x1fff;
}

static void die(const char *what, const char *name)
{
    fprintf(stderr, "%s: %s\n", what, name);
    ERR_print_errors_fp(stderr);
    abort();
}

static void differ(const char *name, int step, const char *what, unsigned op, const int *r,
                   const int *n)
{
    fprintf(stderr, "step %d (op %u): %s (ccree %d/%d, default %d/%d)\n", step, op, what, r[0],
            n[0], r[1], n[1]);
    die("ccree differs from the default provider", name);
}

static void report(void)
{
    tu_totals t;

    if (tu_get_totals(prov, &t))
        printf("ccree fuzz: offload-ops %llu fallback-ops %llu\n",
               (unsigned long long)t.offload_ops, (unsigned long long)t.fallback_ops);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    size_t i;
    int k;

    (void)argc;
    (void)argv;
    libctx = OSSL_LIB_CTX_new();
    if (libctx == NULL || !OSSL_PROVIDER_add_builtin(libctx, "ccree", OSSL_provider_init)
        || !OSSL_LIB_CTX_load_config(libctx, FUZZ_CNF)
        || (prov = OSSL_PROVIDER_load(libctx, "ccree")) == NULL)
        die("cannot load ccree with", FUZZ_CNF);
    for (i = 0; i < NNAMES; i++)
        for (k = 0; k < 2; k++) {
            const char *props = k ? "provider=default" : "provider=ccree";

            if ((cipher[i][k] = EVP_CIPHER_fetch(libctx, names[i], props)) == NULL
                && (md[i][k] = EVP_MD_fetch(libctx, names[i], props)) == NULL)
                die("cannot fetch", names[i]);
            ERR_clear_error();
        }
    for (i = 0; i < sizeof(src); i++)
        src[i] = (unsigned char)(i * 131 + (i >> 8));
    atexit(report);
    return 0;
}

/* [k] is ccree's (0) or the default provider's (1); cur and alt are two contexts of each. */
static void run_cipher(size_t a, struct input *in)
{
    static unsigned char out[2][MAXLEN + 32];
    EVP_CIPHER_CTX *cur[2], *alt[2] = { NULL, NULL }, *t;
    unsigned char key[32], iv[16];
    int enc = take(in, 1) & 1, step, k, r[2], n[2];

    bytes(in, key, sizeof(key));
    bytes(in, iv, sizeof(iv));
    for (k = 0; k < 2; k++)
        if ((cur[k] = EVP_CIPHER_CTX_new()) == NULL
            || !EVP_CipherInit_ex2(cur[k], cipher[a][k], key, iv, enc, NULL))
            die("cannot initialise", names[a]);
    for (step = 1; in->n > 0 && step < 64; step++) {
        unsigned op = take(in, 1);
        size_t len = op % 8 < 3 ? length(in) : 0;
        unsigned char ivlen;

        if (op % 8 == 2) /* EVP_Cipher takes whole blocks only */
            len -= len % (size_t)EVP_CIPHER_CTX_get_block_size(cur[0]);
        if (op % 8 == 4)
            bytes(in, iv, sizeof(iv));
        if (op % 8 == 5)
            bytes(in, key, sizeof(key));
        for (k = 0; k < 2; k++) {
            unsigned char *o = out[k];
            const unsigned char *i = src + (op & 0x80 ? 0 : step);

            n[k] = -1;
            switch (op % 8) {
            case 0: /* update, in place when bit 3 is set */
            case 1:
                if (op & 8) {
                    memcpy(o, i, len);
                    i = o;
                }
                r[k] = EVP_CipherUpdate(cur[k], o, &n[k], i, (int)len);
                /* In place with bytes buffered the default provider's output is undefined. */
                if (k == 0 && !r[0] && (op & 8) && tu_error_says("partially overlapping"))
                    goto refused;
                break;
            case 2: /* the one-shot path of openssl speed */
                r[k] = EVP_Cipher(cur[k], o, i, (unsigned int)len);
                break;
            case 3: /* final, then a fresh IV as a user must do */
                r[k] = EVP_CipherFinal_ex(cur[k], o, &n[k]);
                r[k] = r[k] << 1 | EVP_CipherInit_ex2(cur[k], NULL, NULL, iv, -1, NULL);
                break;
            case 4:
                r[k] = EVP_CipherInit_ex2(cur[k], NULL, NULL, iv, -1, NULL);
                break;
            case 5:
                r[k] = EVP_CipherInit_ex2(cur[k], NULL, key, op & 0x40 ? iv : NULL, -1, NULL);
                break;
            case 6: /* copy into alt, or swap cur and alt */
                if (op & 0x10) {
                    t = cur[k], cur[k] = alt[k], alt[k] = t;
                    r[k] = cur[k] != NULL;
                    if (!r[k])
                        cur[k] = t, alt[k] = NULL;
                } else {
                    if (alt[k] == NULL && (alt[k] = EVP_CIPHER_CTX_new()) == NULL)
                        abort();
                    r[k] = EVP_CIPHER_CTX_copy(alt[k], cur[k]);
                }
                break;
            case 7:
                r[k] = EVP_CIPHER_CTX_set_padding(cur[k], op & 0x10);
                break;
            }
            ERR_clear_error();
        }
        if (r[0] != r[1] || n[0] != n[1])
            differ(names[a], step, "result or output length", op, r, n);
        if (op % 8 == 2)
            n[0] = r[0];
        if (n[0] > 0 && memcmp(out[0], out[1], n[0]) != 0)
            differ(names[a], step, "output", op, r, n);
        ivlen = (unsigned char)EVP_CIPHER_CTX_get_iv_length(cur[0]);
        for (k = 0; k < 2 && ivlen; k++)
            r[k] = EVP_CIPHER_CTX_get_updated_iv(cur[k], out[k], ivlen);
        if (r[0] != r[1] || (ivlen && memcmp(out[0], out[1], ivlen) != 0)
            || EVP_CIPHER_CTX_get_num(cur[0]) != EVP_CIPHER_CTX_get_num(cur[1]))
            differ(names[a], step, "updated-iv or num", op, r, n);
    }
refused:
    for (k = 0; k < 2; k++) {
        EVP_CIPHER_CTX_free(cur[k]);
        EVP_CIPHER_CTX_free(alt[k]);
    }
}

static void run_digest(size_t a, struct input *in)
{
    static unsigned char out[2][EVP_MAX_MD_SIZE];
    EVP_MD_CTX *cur[2], *alt[2] = { NULL, NULL }, *t;
    unsigned int n[2];
    int step, k, r[2];

    for (k = 0; k < 2; k++)
        if ((cur[k] = EVP_MD_CTX_new()) == NULL || !EVP_DigestInit_ex2(cur[k], md[a][k], NULL))
            die("cannot initialise", names[a]);
    for (step = 1; in->n > 0 && step < 64; step++) {
        unsigned op = take(in, 1);
        size_t len = op % 4 == 0 ? length(in) : 0;

        for (k = 0; k < 2; k++) {
            n[k] = 0;
            switch (op % 4) {
            case 0:
                r[k] = EVP_DigestUpdate(cur[k], src + (op & 0x80 ? 0 : step), len);
                break;
            case 1: /* final, then init again; or init, leaving the message unfinished */
                r[k] = op & 0x10 ? 1 : EVP_DigestFinal_ex(cur[k], out[k], &n[k]);
                r[k] = r[k] << 1 | EVP_DigestInit_ex2(cur[k], NULL, NULL);
                break;
            case 2:
                if (alt[k] == NULL && (alt[k] = EVP_MD_CTX_new()) == NULL)
                    abort();
                r[k] = EVP_MD_CTX_copy_ex(alt[k], cur[k]);
                break;
            case 3:
                t = cur[k], cur[k] = alt[k], alt[k] = t;
                r[k] = cur[k] != NULL;
                if (!r[k])
                    cur[k] = t, alt[k] = NULL;
                break;
            }
            ERR_clear_error();
        }
        if (r[0] != r[1] || n[0] != n[1] || memcmp(out[0], out[1], n[0]) != 0)
            differ(names[a], step, "result or digest", op, r, (const int *)n);
    }
    for (k = 0; k < 2; k++) {
        EVP_MD_CTX_free(cur[k]);
        EVP_MD_CTX_free(alt[k]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct input in = { data, size };
    size_t a = take(&in, 1) % NNAMES;

    if (cipher[a][0] != NULL)
        run_cipher(a, &in);
    else
        run_digest(a, &in);
    return 0;
}
