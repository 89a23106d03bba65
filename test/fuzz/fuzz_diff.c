/*
 * libFuzzer differential target: each call runs on a ccree context and on a default-provider
 * context; any difference the model (fuzz_model.c) does not allow aborts.
 *
 * The input's first byte picks the target. Below 252 it picks one of the first NOLD rows
 * (byte % NOLD, as the corpus was made): AES-ECB/CBC/CTR and the SHA digests, without faults.
 * From 252 the next byte picks any row; there a fuzz byte per operation (per message for AEAD)
 * chooses a fault for ccree's kernel requests (test/fault.c).
 * - ciphers: a key and an IV, then operations: updates of any size, in place or not,
 *   EVP_Cipher, copies and switches to the copy, re-inits with a new IV or key, padding
 *   changes, finals; the updated IV and num after each;
 * - digests: updates, finals, re-inits, copies and switches to the copy;
 * - AEAD (fuzz_aead.c): GCM and CCM messages, TLS 1.2 and 1.3 records, IV_GEN and IV_INV;
 * - MACs (fuzz_mac.c): HMAC and CMAC with keys of any length, updates, finals, copies, re-inits.
 * ccree is linked in as a built-in provider and configured from fuzz.cnf (FUZZ_CNF).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "fuzz.h"

OSSL_provider_init_fn OSSL_provider_init;

enum family { CIPHER, DIGEST, AEAD, MAC };

struct target {
    const char *name; /* the cipher or digest; a MAC's digest or cipher */
    enum family family;
    const char *mac;  /* "HMAC" or "CMAC" */
    size_t keylen;    /* CMAC: its cipher's key length */
};

static const struct target targets[] = {
    { "AES-128-ECB", CIPHER, NULL, 0 },  { "AES-192-ECB", CIPHER, NULL, 0 },
    { "AES-256-ECB", CIPHER, NULL, 0 },  { "AES-128-CBC", CIPHER, NULL, 0 },
    { "AES-192-CBC", CIPHER, NULL, 0 },  { "AES-256-CBC", CIPHER, NULL, 0 },
    { "AES-128-CTR", CIPHER, NULL, 0 },  { "AES-192-CTR", CIPHER, NULL, 0 },
    { "AES-256-CTR", CIPHER, NULL, 0 },  { "SHA1", DIGEST, NULL, 0 },
    { "SHA2-224", DIGEST, NULL, 0 },     { "SHA2-256", DIGEST, NULL, 0 },
    { "SHA2-384", DIGEST, NULL, 0 },     { "SHA2-512", DIGEST, NULL, 0 },
    /* reached from a first byte of 252 to 255 only */
    { "AES-128-GCM", AEAD, NULL, 0 },    { "AES-192-GCM", AEAD, NULL, 0 },
    { "AES-256-GCM", AEAD, NULL, 0 },    { "AES-128-CCM", AEAD, NULL, 0 },
    { "AES-192-CCM", AEAD, NULL, 0 },    { "AES-256-CCM", AEAD, NULL, 0 },
    { "SHA1", MAC, "HMAC", 0 },          { "SHA2-224", MAC, "HMAC", 0 },
    { "SHA2-256", MAC, "HMAC", 0 },      { "SHA2-384", MAC, "HMAC", 0 },
    { "SHA2-512", MAC, "HMAC", 0 },      { "MD5", MAC, "HMAC", 0 },
    { "AES-128-CBC", MAC, "CMAC", 16 },  { "AES-192-CBC", MAC, "CMAC", 24 },
    { "AES-256-CBC", MAC, "CMAC", 32 },
};
#define NTARGETS (sizeof(targets) / sizeof(targets[0]))
#define NOLD 14
#define ESCAPE (256 / NOLD * NOLD) /* 252: first bytes from here reach every row */

OSSL_LIB_CTX *fuzz_libctx;
unsigned char fuzz_src[MAXLEN + 64];
static OSSL_PROVIDER *prov;
static int old_rows; /* CCREE_FUZZ_OLD=1: every input as one below 252 (run-all.sh) */
static EVP_CIPHER *cipher[NTARGETS][2]; /* [ccree, default] */
static EVP_MD *md[NTARGETS][2];
static EVP_MAC *mac[NTARGETS][2];

static void report(void)
{
    tu_totals t;

    if (tu_get_totals(prov, &t))
        printf("ccree fuzz: offload-ops %llu fallback-ops %llu\n",
               (unsigned long long)t.offload_ops, (unsigned long long)t.fallback_ops);
    printf("ccree fuzz: faults %s\n", faults_available() ? "chosen by the input" : "unavailable");
    model_report();
}

static int fetch(size_t i, int k)
{
    const char *props = k ? "provider=default" : "provider=ccree";
    const struct target *t = &targets[i];

    switch (t->family) {
    case CIPHER:
    case AEAD:
        return (cipher[i][k] = EVP_CIPHER_fetch(fuzz_libctx, t->name, props)) != NULL;
    case DIGEST:
        return (md[i][k] = EVP_MD_fetch(fuzz_libctx, t->name, props)) != NULL;
    case MAC:
        return (mac[i][k] = EVP_MAC_fetch(fuzz_libctx, t->mac, props)) != NULL;
    }
    return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    size_t i;
    int k;

    (void)argc;
    (void)argv;
    old_rows = getenv("CCREE_FUZZ_OLD") != NULL && strcmp(getenv("CCREE_FUZZ_OLD"), "1") == 0;
    fuzz_libctx = OSSL_LIB_CTX_new();
    if (fuzz_libctx == NULL || !OSSL_PROVIDER_add_builtin(fuzz_libctx, "ccree", OSSL_provider_init)
        || !OSSL_LIB_CTX_load_config(fuzz_libctx, FUZZ_CNF)
        || (prov = OSSL_PROVIDER_load(fuzz_libctx, "ccree")) == NULL)
        fuzz_die("cannot load ccree with " FUZZ_CNF);
    for (i = 0; i < NTARGETS; i++)
        for (k = 0; k < 2; k++)
            if (!fetch(i, k)) {
                fprintf(stderr, "cannot fetch %s\n", targets[i].name);
                fuzz_die("fetch");
            }
    for (i = 0; i < sizeof(fuzz_src); i++)
        fuzz_src[i] = (unsigned char)(i * 131 + (i >> 8));
    atexit(report);
    return 0;
}

/* --- ciphers ------------------------------------------------------------------------------- */

/* The updated IV and num, compared after every operation. */
static enum verdict cipher_state(struct state *s, EVP_CIPHER_CTX *const cur[2])
{
    static unsigned char iv[2][16];
    struct call c = { .kind = CALL_PARAM, .what = "updated-iv" };
    size_t ivlen = (size_t)EVP_CIPHER_CTX_get_iv_length(cur[0]);
    int i;

    if (ivlen > 0) {
        LOCKSTEP(s, &c, i, c.r[i] = EVP_CIPHER_CTX_get_updated_iv(cur[i], iv[i], ivlen);
                 c.out[i] = iv[i]; c.n[i] = ivlen);
        if (judge(s, &c) == REFUSED)
            return REFUSED;
    }
    c = (struct call){ .kind = CALL_PARAM, .what = "num" };
    LOCKSTEP(s, &c, i, c.n[i] = (size_t)EVP_CIPHER_CTX_get_num(cur[i]); c.r[i] = 1);
    return judge(s, &c);
}

/* [i] is ccree's (0) or the default provider's (1); cur and alt are two contexts of each. */
static void run_cipher(size_t a, struct input *in, int faults)
{
    static unsigned char out[2][MAXLEN + 32];
    EVP_CIPHER_CTX *cur[2], *alt[2] = { NULL, NULL }, *t;
    unsigned char key[32], iv[16];
    struct state s = { 0 };
    int enc = take(in, 1) & 1, step, i, ret;

    bytes(in, key, sizeof(key));
    bytes(in, iv, sizeof(iv));
    for (i = 0; i < 2; i++)
        if ((cur[i] = EVP_CIPHER_CTX_new()) == NULL
            || !EVP_CipherInit_ex2(cur[i], cipher[a][i], key, iv, enc, NULL))
            fuzz_die("cannot initialise the cipher");
    for (step = 1; in->n > 0 && step < 64; step++) {
        unsigned op = take(in, 1);
        size_t len = op % 8 < 3 ? length(in) : 0;
        const unsigned char *src = fuzz_src + (op & 0x80 ? 0 : step);
        struct call c = { .kind = CALL_DATA, .inlen = len, .inplace = op % 8 < 2 && (op & 8) };

        if (faults)
            fault_choose(in);
        if (op % 8 == 2) /* EVP_Cipher takes whole blocks only */
            len -= len % (size_t)EVP_CIPHER_CTX_get_block_size(cur[0]);
        if (op % 8 == 4)
            bytes(in, iv, sizeof(iv));
        if (op % 8 == 5)
            bytes(in, key, sizeof(key));
        note(" op%u(%zu)", op, len);
        switch (op % 8) {
        case 0: /* update, in place when bit 3 is set */
        case 1:
            c.what = "update";
            LOCKSTEP(&s, &c, i, int n = -1; const unsigned char *p = src;
                     if (c.inplace) p = memcpy(out[i], src, len);
                     c.r[i] = EVP_CipherUpdate(cur[i], out[i], &n, p, (int)len);
                     c.n[i] = (size_t)n; c.out[i] = out[i]);
            break;
        case 2: /* the one-shot path of openssl speed */
            c.what = "EVP_Cipher";
            LOCKSTEP(&s, &c, i, ret = EVP_Cipher(cur[i], out[i], src, (unsigned int)len);
                     c.r[i] = ret >= 0; c.n[i] = (size_t)ret; c.out[i] = out[i]);
            break;
        case 3: /* final, then a fresh IV as a user must do */
            c = (struct call){ .kind = CALL_FINAL, .what = "final" };
            LOCKSTEP(&s, &c, i, int n = -1; c.r[i] = EVP_CipherFinal_ex(cur[i], out[i], &n);
                     c.n[i] = (size_t)n; c.out[i] = out[i]);
            if (judge(&s, &c) == REFUSED)
                goto done;
            /* fall through */
        case 4:
        case 5:
            c = (struct call){ .kind = CALL_INIT, .what = "init" };
            LOCKSTEP(&s, &c, i, c.r[i] = EVP_CipherInit_ex2(cur[i], NULL, op % 8 == 5 ? key : NULL,
                                                            op % 8 != 5 || (op & 0x40) ? iv : NULL,
                                                            -1, NULL));
            break;
        case 6: /* copy into alt, or swap cur and alt */
            if (op & 0x10) {
                if (alt[0] == NULL)
                    continue;
                for (i = 0; i < 2; i++)
                    t = cur[i], cur[i] = alt[i], alt[i] = t;
                continue;
            }
            c = (struct call){ .kind = CALL_COPY, .what = "copy" };
            LOCKSTEP(&s, &c, i, if (alt[i] == NULL && (alt[i] = EVP_CIPHER_CTX_new()) == NULL) abort();
                     c.r[i] = EVP_CIPHER_CTX_copy(alt[i], cur[i]));
            break;
        case 7:
            c = (struct call){ .kind = CALL_PARAM, .what = "set_padding" };
            LOCKSTEP(&s, &c, i, c.r[i] = EVP_CIPHER_CTX_set_padding(cur[i], op & 0x10));
            break;
        }
        if (judge(&s, &c) == REFUSED || cipher_state(&s, cur) == REFUSED)
            break;
    }
done:
    for (i = 0; i < 2; i++) {
        EVP_CIPHER_CTX_free(cur[i]);
        EVP_CIPHER_CTX_free(alt[i]);
    }
}

/* --- digests ------------------------------------------------------------------------------- */

static void run_digest(size_t a, struct input *in, int faults)
{
    static unsigned char out[2][EVP_MAX_MD_SIZE];
    EVP_MD_CTX *cur[2], *alt[2] = { NULL, NULL }, *t;
    struct state s = { 0 };
    int step, i;

    for (i = 0; i < 2; i++)
        if ((cur[i] = EVP_MD_CTX_new()) == NULL || !EVP_DigestInit_ex2(cur[i], md[a][i], NULL))
            fuzz_die("cannot initialise the digest");
    for (step = 1; in->n > 0 && step < 64; step++) {
        unsigned op = take(in, 1);
        size_t len = op % 4 == 0 ? length(in) : 0;
        struct call c = { .kind = CALL_DATA, .what = "update", .inlen = len };

        if (faults)
            fault_choose(in);
        note(" op%u(%zu)", op, len);
        switch (op % 4) {
        case 0:
            LOCKSTEP(&s, &c, i, c.r[i] = EVP_DigestUpdate(cur[i], fuzz_src + (op & 0x80 ? 0 : step),
                                                          len));
            break;
        case 1: /* final, then init again; or init, leaving the message unfinished */
            if (!(op & 0x10)) {
                c = (struct call){ .kind = CALL_FINAL, .what = "final" };
                LOCKSTEP(&s, &c, i, unsigned n = 0; c.r[i] = EVP_DigestFinal_ex(cur[i], out[i], &n);
                         c.n[i] = n; c.out[i] = out[i]);
                if (judge(&s, &c) == REFUSED)
                    goto done;
            }
            c = (struct call){ .kind = CALL_INIT, .what = "init" };
            LOCKSTEP(&s, &c, i, c.r[i] = EVP_DigestInit_ex2(cur[i], NULL, NULL));
            break;
        case 2:
            c = (struct call){ .kind = CALL_COPY, .what = "copy" };
            LOCKSTEP(&s, &c, i, if (alt[i] == NULL && (alt[i] = EVP_MD_CTX_new()) == NULL) abort();
                     c.r[i] = EVP_MD_CTX_copy_ex(alt[i], cur[i]));
            break;
        case 3:
            if (alt[0] != NULL)
                for (i = 0; i < 2; i++)
                    t = cur[i], cur[i] = alt[i], alt[i] = t;
            continue;
        }
        if (judge(&s, &c) == REFUSED)
            break;
    }
done:
    for (i = 0; i < 2; i++) {
        EVP_MD_CTX_free(cur[i]);
        EVP_MD_CTX_free(alt[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct input in = { data, size };
    unsigned first = take(&in, 1);
    int faults = first >= ESCAPE && !old_rows;
    size_t a = !faults ? first % NOLD : take(&in, 1) % NTARGETS;

    fuzz_log.n = 0;
    fuzz_log.s[0] = '\0';
    fault_none();
    note("%s%s:", targets[a].mac ? targets[a].mac : "", targets[a].name);
    switch (targets[a].family) {
    case CIPHER:
        run_cipher(a, &in, faults);
        break;
    case DIGEST:
        run_digest(a, &in, faults);
        break;
    case AEAD:
        run_aead(cipher[a], &in);
        break;
    case MAC:
        run_mac(mac[a], targets[a].mac, targets[a].name, targets[a].keylen, &in);
        break;
    }
    fault_none();
    return 0;
}
