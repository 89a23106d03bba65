/* N calls of one operation from one provider inside measure(), for callgrind to count alone
 * (test/bench/insn.sh: --collect-atstart=no --toggle-collect=measure).
 * Usage: insn list                      the operations: ALG SIZE CALL TARGET, one a line
 *        insn ALG SIZE CALL PROVIDER N  N calls of that operation, fetched "provider=PROVIDER"
 *                                       (default or ccree), or "?provider=ccree" (preferred)
 * The default provider and the one measured run the operation first: each must serve its own
 * fetch (preferred: whichever does) and their outputs must agree, or it exits 1 before
 * measuring. Prints the provider measured. */
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXSIZE 1024
#define WARMUP 100

enum kind { UPDATE, DIGEST, MESSAGE };

/* One operation a row; TARGET: the most its ccree/default ratio may be (insn.sh marks it). */
static const struct row {
    const char *alg;
    size_t size;
    enum kind kind;
    const char *target;
} rows[] = {
    { "AES-128-CBC", 16, UPDATE, "1.3" },
    { "AES-128-CBC", 1024, UPDATE, "1.03" },
    { "AES-128-CBC", 16, MESSAGE, "1.3" },
    { "AES-128-CBC", 1024, MESSAGE, "1.03" },
    { "AES-128-CTR", 16, UPDATE, "1.3" },
    { "AES-128-CTR", 1024, UPDATE, "1.03" },
    { "AES-128-CTR", 16, MESSAGE, "1.3" },
    { "AES-128-CTR", 1024, MESSAGE, "1.03" },
    { "AES-128-GCM", 16, UPDATE, "1.3" },
    { "AES-128-GCM", 1024, UPDATE, "1.03" },
    { "AES-128-GCM", 16, MESSAGE, "1.3" },
    { "AES-128-GCM", 1024, MESSAGE, "1.03" },
    { "SHA-256", 16, DIGEST, "1.3" },
    { "SHA-256", 1024, DIGEST, "1.03" },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/*
 * UPDATE: EVP_EncryptUpdate into one context, one endless message; DIGEST: EVP_Digest;
 * MESSAGE: a new IV and the data under the same key; for an AEAD, as openssl speed -aead
 * and the VM benchmark's loop, 13 bytes of AAD before the data, then final and the tag.
 */
static const char *const calls[] = { "EVP_EncryptUpdate", "EVP_Digest", "message" };

static const char *const providers[] = { "default", "ccree", "preferred" };
static const char *const props[] = { "provider=default", "provider=ccree", "?provider=ccree" };

struct bench {
    const struct row *row;
    EVP_CIPHER *cipher;
    EVP_MD *md;
    EVP_CIPHER_CTX *ctx;
    unsigned char in[MAXSIZE], out[MAXSIZE + EVP_MAX_MD_SIZE], iv[16];
    unsigned long ivs; /* MESSAGE: the IVs given, the next one's first bytes */
    size_t outlen;
};

static __attribute__((noreturn)) void die(const char *what)
{
    fprintf(stderr, "insn: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

/* The operation from providers[p]; returns the name of the provider that serves it. */
static const char *setup(struct bench *b, const struct row *row, int p)
{
    static const unsigned char key[] = "0123456789abcdef", iv[16]; /* AES-128: the first 16 bytes */
    const char *propq = props[p];
    const OSSL_PROVIDER *from;

    memset(b, 0, sizeof(*b));
    b->row = row;
    if (row->kind == DIGEST) {
        if ((b->md = EVP_MD_fetch(NULL, row->alg, propq)) == NULL)
            die("digest fetch failed");
        from = EVP_MD_get0_provider(b->md);
    } else {
        if ((b->cipher = EVP_CIPHER_fetch(NULL, row->alg, propq)) == NULL
            || (b->ctx = EVP_CIPHER_CTX_new()) == NULL
            || !EVP_EncryptInit_ex2(b->ctx, b->cipher, key, iv, NULL)
            || !EVP_CIPHER_CTX_set_padding(b->ctx, 0))
            die("cipher setup failed");
        from = EVP_CIPHER_get0_provider(b->cipher);
    }
    if (p < 2 && strcmp(OSSL_PROVIDER_get0_name(from), providers[p]) != 0)
        die("the algorithm comes from another provider than the one asked for");
    return OSSL_PROVIDER_get0_name(from);
}

/* One message (MESSAGE); its output is b->out, b->outlen bytes: ciphertext (then a tag). */
static int message(struct bench *b)
{
    int n, m, aead = (EVP_CIPHER_get_flags(b->cipher) & EVP_CIPH_FLAG_AEAD_CIPHER) != 0;

    b->ivs++;
    memcpy(b->iv, &b->ivs, sizeof(b->ivs));
    if (!EVP_EncryptInit_ex2(b->ctx, NULL, NULL, b->iv, NULL)
        || (aead && !EVP_EncryptUpdate(b->ctx, NULL, &m, b->in, 13))
        || !EVP_EncryptUpdate(b->ctx, b->out, &n, b->in, (int)b->row->size))
        return 0;
    b->outlen = (size_t)n;
    if (!aead)
        return 1;
    if (!EVP_EncryptFinal_ex(b->ctx, b->out + n, &m)
        || EVP_CIPHER_CTX_ctrl(b->ctx, EVP_CTRL_AEAD_GET_TAG, 16, b->out + n + m) <= 0)
        return 0;
    b->outlen = (size_t)(n + m) + 16;
    return 1;
}

/* One call; its output is b->out, b->outlen bytes. */
static int call(struct bench *b)
{
    unsigned int mdlen;
    int n;

    if (b->md != NULL) {
        if (!EVP_Digest(b->in, b->row->size, b->out, &mdlen, b->md, NULL))
            return 0;
        b->outlen = mdlen;
        return 1;
    }
    if (!EVP_EncryptUpdate(b->ctx, b->out, &n, b->in, (int)b->row->size))
        return 0;
    b->outlen = (size_t)n;
    return 1;
}

/*
 * What callgrind counts: not static and only run-time arguments, so that it keeps its name.
 * The kind is tested once, outside the loop that calls.
 */
__attribute__((noinline)) int measure(struct bench *b, long n)
{
    int ok = 1;

    if (b->row->kind == MESSAGE) {
        while (n-- > 0)
            ok &= message(b);
        return ok;
    }
    while (n-- > 0)
        ok &= call(b);
    return ok;
}

/* The warm-up: calls of both providers on the same inputs, which must give the same outputs
 * (of the expected length). */
static void check(struct bench b[2])
{
    size_t want = b[0].md                      ? (size_t)EVP_MD_get_size(b[0].md)
                  : b[0].row->kind == MESSAGE
                      && (EVP_CIPHER_get_flags(b[0].cipher) & EVP_CIPH_FLAG_AEAD_CIPHER)
                      ? b[0].row->size + 16
                                              : b[0].row->size;
    int i, p;

    for (i = 0; i < WARMUP; i++)
        for (p = 0; p < 2; p++) {
            memset(b[p].in, 'a' + i, b[p].row->size);
            if (!(b[p].row->kind == MESSAGE ? message(&b[p]) : call(&b[p])) || b[p].outlen != want)
                die("a call failed");
            if (p == 1 && memcmp(b[0].out, b[1].out, want) != 0)
                die("the providers' outputs differ");
        }
}

static void list(void)
{
    size_t i;

    for (i = 0; i < NROWS; i++)
        printf("%s %zu %s %s\n", rows[i].alg, rows[i].size, calls[rows[i].kind], rows[i].target);
}

static const struct row *find(const char *alg, const char *size, const char *call)
{
    size_t i;

    for (i = 0; i < NROWS; i++)
        if (strcmp(rows[i].alg, alg) == 0 && rows[i].size == strtoul(size, NULL, 10)
            && strcmp(calls[rows[i].kind], call) == 0)
            return &rows[i];
    die("no such operation (insn list)");
}

int main(int argc, char **argv)
{
    struct bench b[2];
    const struct row *row;
    const char *from;
    long n;
    int p;

    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        list();
        return 0;
    }
    if (argc != 6 || (n = atol(argv[5])) <= 0) {
        fprintf(stderr, "usage: insn list | insn ALG SIZE CALL PROVIDER N\n");
        return 2;
    }
    row = find(argv[1], argv[2], argv[3]);
    for (p = 0; p < 3 && strcmp(argv[4], providers[p]) != 0; p++)
        ;
    if (p == 3)
        die("PROVIDER: default, ccree or preferred");
    setup(&b[0], row, 0);
    from = setup(&b[1], row, p);
    check(b);
    if (!measure(&b[1], n))
        die("a call failed");
    printf("%s\n", from);
    return 0;
}
