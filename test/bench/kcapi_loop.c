/* The floor of AF_ALG: minimal one-shot libkcapi requests in a loop, timed as openssl speed
 * times (timed.h). Ciphers: encrypt SIZE bytes with a new IV per op (KCAPI_ACCESS_SENDMSG);
 * GCM: one AEAD encryption of a 13-byte AAD and SIZE bytes with a 16-byte tag; SHA-256: one
 * digest. The first result is checked against libcrypto's default provider.
 * Usage: kcapi_loop SECONDS ALG SIZE...   Prints "ALG SIZE OPS SECONDS" per size.
 * libkcapi needs the crypto_user module (NETLINK_CRYPTO). */
#include <kcapi.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timed.h"

#define AADLEN 13
#define TAGLEN 16

enum kind { SKCIPHER, AEAD, HASH };
static const struct alg {
    const char *name, *kernel;
    enum kind kind;
} algs[] = {
    { "AES-128-CBC", "cbc(aes)", SKCIPHER },
    { "AES-128-CTR", "ctr(aes)", SKCIPHER },
    { "AES-128-GCM", "gcm(aes)", AEAD },
    { "SHA-256", "sha256", HASH },
};

struct loop {
    const struct alg *alg;
    struct kcapi_handle *h;
    size_t size;                /* SIZE, and the AAD before it for GCM */
    unsigned char iv[16], *in, *out;
};

static const unsigned char key[16] = "0123456789abcdef";

static void die(const char *what)
{
    fprintf(stderr, "kcapi_loop: %s\n", what);
    exit(1);
}

static size_t outlen(const struct loop *l)
{
    switch (l->alg->kind) {
    case SKCIPHER: return l->size;
    case AEAD: return AADLEN + l->size + TAGLEN;
    default: return 32;
    }
}

static int op(void *arg)
{
    struct loop *l = arg;
    ssize_t n;
    int k;

    for (k = 0; k < 8 && ++l->iv[k] == 0; k++)
        ;                       /* a new IV */
    switch (l->alg->kind) {
    case SKCIPHER:
        n = kcapi_cipher_encrypt(l->h, l->in, l->size, l->iv, l->out, l->size,
                                 KCAPI_ACCESS_SENDMSG);
        break;
    case AEAD:
        n = kcapi_aead_encrypt(l->h, l->in, AADLEN + l->size, l->iv, l->out, outlen(l),
                               KCAPI_ACCESS_SENDMSG);
        break;
    default:
        n = kcapi_md_digest(l->h, l->in, l->size, l->out, 32);
    }
    return n == (ssize_t)outlen(l);
}

/* The same op through the default provider: ciphertext (GCM: after the AAD, with the tag). */
static void check(const struct loop *l)
{
    unsigned char *ref = calloc(1, outlen(l)), *in = l->in, *out = l->out;
    EVP_CIPHER *c = NULL;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n, fin, ok;

    if (l->alg->kind == HASH) {
        ok = EVP_Digest(in, l->size, ref, NULL, EVP_sha256(), NULL);
    } else {
        c = EVP_CIPHER_fetch(NULL, l->alg->name, "provider=default");
        ok = c != NULL && EVP_EncryptInit_ex2(ctx, c, key, l->iv, NULL)
             && EVP_CIPHER_CTX_set_padding(ctx, 0);
        if (ok && l->alg->kind == AEAD) {
            ok = EVP_EncryptUpdate(ctx, NULL, &n, in, AADLEN);
            in += AADLEN;
            out += AADLEN;
        }
        ok = ok && EVP_EncryptUpdate(ctx, ref, &n, in, (int)l->size)
             && EVP_EncryptFinal_ex(ctx, ref + n, &fin)
             && (l->alg->kind != AEAD
                 || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAGLEN, ref + n + fin));
    }
    if (!ok || memcmp(ref, out, outlen(l) - (size_t)(out - l->out)) != 0)
        die("result differs from the default provider's");
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    free(ref);
}

int main(int argc, char **argv)
{
    const struct alg *a = NULL;
    struct loop l;
    unsigned seconds;
    long ops;
    double secs;
    size_t i;
    int r, arg;

    if (argc < 4 || (seconds = (unsigned)atoi(argv[1])) == 0) {
        fprintf(stderr, "usage: kcapi_loop SECONDS ALG SIZE...\n");
        return 2;
    }
    for (i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
        if (strcmp(argv[2], algs[i].name) == 0)
            a = &algs[i];
    if (a == NULL)
        die("unknown algorithm");
    kcapi_set_verbosity(KCAPI_LOG_NONE);
    for (arg = 3; arg < argc; arg++) {
        memset(&l, 0, sizeof(l));
        l.alg = a;
        l.size = strtoul(argv[arg], NULL, 10);
        l.in = calloc(1, AADLEN + l.size);
        l.out = calloc(1, AADLEN + l.size + TAGLEN);
        if (l.size == 0 || l.in == NULL || l.out == NULL)
            die("bad size");
        switch (a->kind) {
        case SKCIPHER:
            r = kcapi_cipher_init(&l.h, a->kernel, 0) || kcapi_cipher_setkey(l.h, key, 16);
            break;
        case AEAD:
            r = kcapi_aead_init(&l.h, a->kernel, 0) || kcapi_aead_setkey(l.h, key, 16)
                || kcapi_aead_settaglen(l.h, TAGLEN);
            if (!r)
                kcapi_aead_setassoclen(l.h, AADLEN);
            break;
        default:
            r = kcapi_md_init(&l.h, a->kernel, 0);
        }
        if (r)
            die("libkcapi setup failed (is crypto_user loaded?)");
        if (!op(&l))    /* the warm-up op, checked */
            die("request failed");
        check(&l);
        if ((secs = timed_run(seconds, op, &l, &ops)) < 0)
            die("request failed");
        printf("%s %zu %ld %.3f\n", a->name, l.size, ops, secs);
        fflush(stdout);
        kcapi_cipher_destroy(l.h);
        free(l.in);
        free(l.out);
    }
    return 0;
}
