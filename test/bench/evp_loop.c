/* Direct EVP loops for what openssl speed cannot express, and a check of their results.
 * Usage: evp_loop [-q PROPQ] [-t SECONDS] msg|stream|check ALG SIZE...
 *   msg     one message per op: a cipher re-initialised with a new IV and the same key, then
 *           SIZE bytes (GCM: with a 13-byte AAD, final and tag, as speed -aead does); a digest
 *           initialised, SIZE bytes, final
 *   stream  one endless message, SIZE bytes per update (SHA-256 in 64-byte updates)
 *   check   msg and stream under PROPQ against provider=default, which must differ in provider
 * ALG: an OpenSSL cipher or digest name. Prints "ALG SIZE OPS SECONDS" per size ("ALG SIZE
 * ok PROVIDER" for check); exits 1 on any failure. Setup and warm-up (the first op, or 64 KiB
 * of a stream, past any buffering) come before the timed loop (timed.h). */
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timed.h"

#define MAXSIZE (1 << 20)
#define AADLEN 13
#define TAGLEN 16

struct loop {
    EVP_CIPHER *cipher;
    EVP_MD *md;
    EVP_CIPHER_CTX *cctx;
    EVP_MD_CTX *mctx;
    int stream, gcm;
    size_t size;
    unsigned char iv[16], *in, *out;
};

static void die(const char *what)
{
    fprintf(stderr, "evp_loop: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

static const char *provider(const struct loop *l)
{
    return OSSL_PROVIDER_get0_name(l->cipher ? EVP_CIPHER_get0_provider(l->cipher)
                                             : EVP_MD_get0_provider(l->md));
}

static void setup(struct loop *l, const char *alg, const char *propq, int stream, size_t size)
{
    static const unsigned char key[16] = "0123456789abcdef";

    memset(l, 0, sizeof(*l));
    l->stream = stream;
    l->size = size;
    l->in = calloc(1, size);
    l->out = calloc(1, size + TAGLEN + 16);
    if (l->in == NULL || l->out == NULL)
        die("out of memory");
    ERR_set_mark();
    l->cipher = EVP_CIPHER_fetch(NULL, alg, propq);
    l->md = l->cipher ? NULL : EVP_MD_fetch(NULL, alg, propq);
    ERR_pop_to_mark();
    if (l->cipher != NULL) {
        l->gcm = EVP_CIPHER_get_mode(l->cipher) == EVP_CIPH_GCM_MODE;
        if ((l->cctx = EVP_CIPHER_CTX_new()) == NULL
            || !EVP_EncryptInit_ex2(l->cctx, l->cipher, key, l->iv, NULL)
            || !EVP_CIPHER_CTX_set_padding(l->cctx, 0))
            die("cipher setup failed");
    } else if (l->md != NULL) {
        if ((l->mctx = EVP_MD_CTX_new()) == NULL || !EVP_DigestInit_ex2(l->mctx, l->md, NULL))
            die("digest setup failed");
    } else {
        die("no such cipher or digest");
    }
}

static void cleanup(struct loop *l)
{
    EVP_CIPHER_CTX_free(l->cctx);
    EVP_MD_CTX_free(l->mctx);
    EVP_CIPHER_free(l->cipher);
    EVP_MD_free(l->md);
    free(l->in);
    free(l->out);
}

/* One op; the output (ciphertext and tag, or digest) is left in l->out. */
static int op(void *arg)
{
    struct loop *l = arg;
    static const unsigned char aad[AADLEN];
    int n, fin, k;

    if (l->md != NULL) {
        if (l->stream)
            return EVP_DigestUpdate(l->mctx, l->in, l->size);
        return EVP_DigestInit_ex2(l->mctx, NULL, NULL)
               && EVP_DigestUpdate(l->mctx, l->in, l->size)
               && EVP_DigestFinal_ex(l->mctx, l->out, NULL);
    }
    if (!l->stream) {
        for (k = 0; k < 8 && ++l->iv[k] == 0; k++)
            ;               /* a new IV, the same key */
        if (!EVP_EncryptInit_ex2(l->cctx, NULL, NULL, l->iv, NULL)
            || (l->gcm && !EVP_EncryptUpdate(l->cctx, NULL, &n, aad, AADLEN)))
            return 0;
    }
    if (!EVP_EncryptUpdate(l->cctx, l->out, &n, l->in, (int)l->size))
        return 0;
    if (!l->gcm || l->stream)
        return 1;
    return EVP_EncryptFinal_ex(l->cctx, l->out + n, &fin)
           && EVP_CIPHER_CTX_ctrl(l->cctx, EVP_CTRL_AEAD_GET_TAG, TAGLEN, l->out + n + fin);
}

static size_t outlen(const struct loop *l)
{
    return l->md ? (size_t)EVP_MD_get_size(l->md) : l->size + (l->gcm ? TAGLEN : 0);
}

/* Each op's output under PROPQ equals the default provider's, in msg and stream mode
 * (a stream long enough to reach the kernel, then its final). */
static void check(const char *alg, const char *propq, size_t size)
{
    struct loop t, d;
    int stream, ops, i;
    unsigned int n1, n2;

    for (stream = 0; stream <= 1; stream++) {
        setup(&t, alg, propq, stream, size);
        setup(&d, alg, "provider=default", stream, size);
        if (strcmp(provider(&t), "default") == 0)
            die("the tested algorithm comes from the default provider");
        ops = stream ? (int)(2 * 65536 / size + 1) : 3;
        for (i = 0; i < ops; i++) {
            memset(t.in, i, size);
            memset(d.in, i, size);
            if (!op(&t) || !op(&d))
                die("operation failed");
            if ((!stream || t.cipher) && memcmp(t.out, d.out, outlen(&t)) != 0)
                die("result differs from the default provider's");
        }
        if (stream && t.md != NULL
            && (!EVP_DigestFinal_ex(t.mctx, t.out, &n1) || !EVP_DigestFinal_ex(d.mctx, d.out, &n2)
                || n1 != n2 || memcmp(t.out, d.out, n1) != 0))
            die("stream digest differs from the default provider's");
        if (stream)
            printf("%s %zu ok %s\n", alg, size, provider(&t));
        cleanup(&t);
        cleanup(&d);
    }
}

int main(int argc, char **argv)
{
    const char *propq = NULL, *mode, *alg;
    unsigned seconds = 1;
    struct loop l;
    long ops, warm;
    double secs;
    int c, i;

    while ((c = getopt(argc, argv, "q:t:")) != -1) {
        if (c == 'q')
            propq = optarg;
        else if (c == 't')
            seconds = (unsigned)atoi(optarg);
        else
            return 2;
    }
    if (argc - optind < 3 || seconds == 0) {
        fprintf(stderr, "usage: evp_loop [-q PROPQ] [-t SECONDS] msg|stream|check ALG SIZE...\n");
        return 2;
    }
    mode = argv[optind];
    alg = argv[optind + 1];
    for (i = optind + 2; i < argc; i++) {
        size_t size = strtoul(argv[i], NULL, 10);

        if (size == 0 || size > MAXSIZE)
            die("bad size");
        if (strcmp(mode, "check") == 0) {
            check(alg, propq ? propq : "", size);
            continue;
        }
        setup(&l, alg, propq, strcmp(mode, "stream") == 0, size);
        for (warm = l.stream ? (long)(65536 / size) + 1 : 1; warm > 0; warm--)
            if (!op(&l))
                die("operation failed");
        if ((secs = timed_run(seconds, op, &l, &ops)) < 0)
            die("operation failed");
        printf("%s %zu %ld %.3f\n", alg, size, ops, secs);
        fflush(stdout);
        cleanup(&l);
    }
    return 0;
}
