/*
 * Faults a kernel produces, also after it has written: the recv-* and send-* modes of the shim
 * test/fault.c (CCREE_FAULT, armed after the provider's self-test), the ccsim-* ones of the
 * simulated CryptoCell (test/ccsim, its fault parameter set for the call with the fault), or
 * with CCREE_FAULT unset the real kernel as test/rmem.sh sets its receive budget. For every
 * operation kind, size, placement (in place or not, aligned or one byte past) and policy
 * (any.cnf, and STRICT_CNF: fallback = no): a call before the fault, the call with it and the
 * call after it, each beside the default provider's. Allowed: success with the default
 * provider's bytes (output, length, tag, next IV), or failure with ccree's error ("kernel
 * request failed" for the call with the shim's fault); a failed AEAD decryption leaves no
 * plaintext; with fallback = no nothing runs in software. Success is required where nothing
 * was lost: a short read where the kernel's prefix is right (progress), a request refused
 * before the kernel wrote, and with fallback = yes any fault of a call whose input the kernel
 * cannot have overwritten (not in place). The call before the shim's fault must succeed; each
 * kind must have reached the kernel (the provider's counters) and met the fault. On a driver
 * of the simulated CryptoCell with no fault, the module's count of messages must grow as the
 * provider's kernel operations do.
 * Usage: test_kfaults STRICT_CNF, with OPENSSL_CONF giving any.cnf; CCREE_KFAULT_PLACES=in runs
 * the in-place calls only. Without AF_ALG it skips (77), unless CCREE_REQUIRE_OFFLOAD=1.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/prov_ssl.h>
#include <openssl/rand.h>
#include <unistd.h>

#include "testutil.h"

#define MAXLEN 100000
#define ROOM (MAXLEN + 128) /* a record's explicit IV, MAC, padding and tag */
#define TLS_IV 16           /* a TLS 1.2 CBC record's explicit IV */
#define TLS_MAC 32
#define PAGE 4096

enum family { CIPHER, AEAD, TLS12, TLSCBC, DIGEST, MAC };
enum { BLOCKS = 1, PREFIX = 2, REINIT = 4, INPLACE = 8 };

/* What a call does; its name in ccree's table is alg, or alg-under for a MAC. */
static const struct kind {
    const char *what, *alg, *under;
    enum family fam;
    int enc;
    unsigned flags; /* BLOCKS: whole blocks (padding off); PREFIX: what a short kernel read
                     * wrote is right (a short read is progress); REINIT: one update per init;
                     * INPLACE: in place only */
    size_t aad, min, max; /* AEAD: AAD bytes; the lengths one kernel request takes (max 0: any) */
} kinds[] = {
    { "AES-128-ECB", "AES-128-ECB", NULL, CIPHER, 1, BLOCKS | PREFIX, 0, 0, 0 },
    { "AES-128-CBC encryption", "AES-128-CBC", NULL, CIPHER, 1, BLOCKS | PREFIX, 0, 0, 0 },
    { "AES-128-CBC decryption", "AES-128-CBC", NULL, CIPHER, 0, BLOCKS | PREFIX, 0, 0, 0 },
    { "AES-128-CTR", "AES-128-CTR", NULL, CIPHER, 1, PREFIX, 0, 0, 0 },
    { "AES-128-XTS", "AES-128-XTS", NULL, CIPHER, 1, 0, 0, 16, 65536 },
    { "AES-128-CBC-CTS", "AES-128-CBC-CTS", NULL, CIPHER, 1, REINIT, 0, 16, 65536 },
    { "DES-EDE3-CBC", "DES-EDE3-CBC", NULL, CIPHER, 1, BLOCKS | PREFIX, 0, 0, 0 },
    { "AES-128-GCM encryption", "AES-128-GCM", NULL, AEAD, 1, 0, 20, 0, 65000 },
    { "AES-128-GCM decryption", "AES-128-GCM", NULL, AEAD, 0, 0, 20, 0, 65000 },
    { "AES-128-CCM encryption", "AES-128-CCM", NULL, AEAD, 1, 0, 20, 0, 65000 },
    { "AES-128-CCM decryption", "AES-128-CCM", NULL, AEAD, 0, 0, 20, 0, 65000 },
    { "TLS 1.2 GCM record sent", "AES-128-GCM", NULL, TLS12, 1, INPLACE, 0, 0, 65000 },
    { "TLS 1.2 GCM record received", "AES-128-GCM", NULL, TLS12, 0, INPLACE, 0, 0, 65000 },
    { "TLS 1.2 CCM record sent", "AES-128-CCM", NULL, TLS12, 1, INPLACE, 0, 0, 65000 },
    { "TLS 1.2 CCM record received", "AES-128-CCM", NULL, TLS12, 0, INPLACE, 0, 0, 65000 },
    { "TLS 1.3 GCM record sent", "AES-128-GCM", NULL, AEAD, 1, INPLACE, 5, 0, 65000 },
    { "TLS 1.3 GCM record received", "AES-128-GCM", NULL, AEAD, 0, INPLACE, 5, 0, 65000 },
    { "TLS 1.3 CCM record sent", "AES-128-CCM", NULL, AEAD, 1, INPLACE, 5, 0, 65000 },
    { "TLS 1.3 CCM record received", "AES-128-CCM", NULL, AEAD, 0, INPLACE, 5, 0, 65000 },
    { "TLS 1.2 AES-CBC record sent", "AES-128-CBC", NULL, TLSCBC, 1, INPLACE | PREFIX, 0, 0, 0 },
    { "TLS 1.2 AES-CBC record received", "AES-128-CBC", NULL, TLSCBC, 0, INPLACE | PREFIX, 0, 0,
      0 },
    { "SHA2-256", "SHA2-256", NULL, DIGEST, 1, 0, 0, 0, 0 },
    { "HMAC-SHA2-256", "HMAC", "SHA2-256", MAC, 1, 0, 0, 0, 0 },
    { "CMAC-AES-128-CBC", "CMAC", "AES-128-CBC", MAC, 1, 0, 0, 0, 0 },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* When a fault strikes: a short read, a request refused unsent, a read failing. */
enum when { SHORT, SEND, RECV };

static const struct fault {
    const char *name; /* CCREE_FAULT; "": the real kernel */
    enum when when;
    int aead, digest; /* whether it applies to AEAD requests, to digests (read by recv) */
} faults[] = {
    { "", SHORT, 1, 1 },
    { "recv-short", SHORT, 1, 0 },
    { "recv-write-eio", RECV, 1, 1 },
    { "recv-garbage-eio", RECV, 1, 1 },
    { "recv-short-eio", RECV, 1, 0 },
    { "recv-ebadmsg", RECV, 0, 1 },
    { "recv-enomem", RECV, 1, 1 },
    { "send-ebusy", SEND, 1, 1 },
    { "send-eagain", SEND, 1, 1 },
    { "send-enomem", SEND, 1, 1 },
    { "ccsim-eio", RECV, 1, 1 },
    { "ccsim-enomem", RECV, 1, 1 },
    { "ccsim-ebusy", RECV, 1, 1 },
    { "ccsim-ebadmsg", RECV, 0, 1 },
    { "ccsim-partial-garbage", RECV, 1, 1 },
    { "ccsim-partial-prefix", RECV, 1, 1 },
};
#define CCSIM_FAULT "/sys/module/ccsim/parameters/fault"

/* Message lengths, each taken down to the most one kernel request of the kind takes. */
static const size_t sizes[] = { 0, 16, 4097, 65536, 100000 };

static struct policy {
    const char *name;
    OSSL_LIB_CTX *libctx;
    OSSL_PROVIDER *prov;
    int fallback;
} policies[2] = { { "fallback = yes", NULL, NULL, 1 }, { "fallback = no", NULL, NULL, 0 } };

static const struct fault *fault;
static int *armed;
static unsigned long *skip, *hits;
static int in_place_only;
static const char *skip_why; /* set: the kernel forbade every kind (it skips) */
static unsigned char key[64], iv0[16], aad[32], msg[ROOM];
static _Alignas(PAGE) unsigned char arena[2][2][ROOM + PAGE];

static int via_module(void)
{
    return strncmp(fault->name, "ccsim-", 6) == 0;
}

/* The fault armed (skipping sk requests first) for the call with it, or not. */
static void arm(int on, unsigned long sk)
{
    const char *mode = on ? fault->name + 6 : "none";
    int fd;

    if (!via_module()) {
        *skip = on ? sk : 0;
        *armed = on;
    } else if ((fd = open(CCSIM_FAULT, O_WRONLY)) < 0
               || write(fd, mode, strlen(mode)) != (ssize_t)strlen(mode) || close(fd) != 0) {
        fail_msg("cannot set " CCSIM_FAULT " to %s", mode);
    }
}

/* How often the fault struck, so far. */
static unsigned long struck(const char *driver)
{
    return via_module() ? (unsigned long)tu_ccsim_counter(driver, "errors") : *hits;
}

/* One provider's side of a call, and what the call gave. */
struct side {
    EVP_CIPHER_CTX *c;
    EVP_MD_CTX *md;
    EVP_MD *mdalg;
    EVP_MAC_CTX *mac;
    unsigned char *in, *buf; /* input when not in place; output */
    int rc, ret;             /* the call's result and the length it returned */
    unsigned char *out, *pt; /* what is compared; where a decryption puts plaintext */
    size_t outl, ptlen;
    unsigned char tag[16], iv[16], tlsmac[TLS_MAC];
    unsigned int num;
    tu_errs errs;
};

/* A case: one kind under one fault, policy, length and placement. */
struct ccase {
    const struct kind *k;
    const struct policy *p;
    size_t len;
    int inplace, off;
    unsigned long skip; /* kernel requests of the call let through before the fault */
};

/* Per kind: the cases run, the ones that reached the kernel and were faulted, refusals, errors
 * (shown: those said, per policy and placement). */
static struct tally {
    unsigned cases, reached, faulted, refused, bad, shown[2][2];
} tally[NKINDS];

static int is_ccm(const struct kind *k)
{
    return strstr(k->alg, "CCM") != NULL;
}

static int ctrl(EVP_CIPHER_CTX *c, int type, int arg, const void *p)
{
    return EVP_CIPHER_CTX_ctrl(c, type, arg, (void *)p) > 0;
}

/* A keyed context of kind k, encrypting or not, in libctx under props. */
static void open_side(const struct kind *k, int enc, OSSL_LIB_CTX *libctx, const char *props,
                      struct side *s)
{
    static const unsigned char fixed[12] = { 0xf1, 0xf2, 0xf3, 0xf4, 0, 0, 0, 0, 0, 0, 0, 9 };
    unsigned int version = TLS1_2_VERSION;
    size_t macsize = TLS_MAC;
    OSSL_PARAM tls[] = { OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, &version),
                         OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &macsize),
                         OSSL_PARAM_END };
    OSSL_PARAM under[] = { OSSL_PARAM_utf8_string(strcmp(k->alg, "CMAC") == 0
                                                      ? OSSL_MAC_PARAM_CIPHER
                                                      : OSSL_MAC_PARAM_DIGEST,
                                                  (char *)k->under, 0),
                           OSSL_PARAM_END };
    EVP_CIPHER *cipher = NULL;
    EVP_MAC *mac = NULL;
    int ok;

    memset(s, 0, sizeof(*s));
    if (k->fam == DIGEST) {
        s->md = EVP_MD_CTX_new();
        s->mdalg = EVP_MD_fetch(libctx, k->alg, props);
        ok = s->md != NULL && s->mdalg != NULL;
    } else if (k->fam == MAC) {
        mac = EVP_MAC_fetch(libctx, k->alg, props);
        s->mac = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL;
        ok = s->mac != NULL && EVP_MAC_init(s->mac, key, 16, under);
    } else {
        cipher = EVP_CIPHER_fetch(libctx, k->alg, props);
        s->c = EVP_CIPHER_CTX_new();
        ok = cipher != NULL && s->c != NULL;
        if (ok && (k->fam == AEAD || k->fam == TLS12))
            ok = EVP_CipherInit_ex2(s->c, cipher, NULL, NULL, enc, NULL)
                 && ctrl(s->c, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL)
                 && (!is_ccm(k) || ctrl(s->c, EVP_CTRL_AEAD_SET_TAG, 16, NULL))
                 && EVP_CipherInit_ex2(s->c, NULL, key, NULL, enc, NULL)
                 && (k->fam != TLS12
                     || ctrl(s->c, EVP_CTRL_AEAD_SET_IV_FIXED, is_ccm(k) ? 4 : -1, fixed));
        else if (ok)
            ok = EVP_CipherInit_ex2(s->c, cipher, key, iv0, enc, NULL)
                 && EVP_CIPHER_CTX_set_padding(s->c, !(k->flags & BLOCKS))
                 && (k->fam != TLSCBC || EVP_CIPHER_CTX_set_params(s->c, tls));
    }
    EVP_CIPHER_free(cipher);
    EVP_MAC_free(mac);
    if (!ok) {
        ERR_print_errors_fp(stderr);
        fail_msg("%s: no context under %s", k->what, props);
    }
}

static void close_side(struct side *s)
{
    EVP_CIPHER_CTX_free(s->c);
    EVP_MD_CTX_free(s->md);
    EVP_MD_free(s->mdalg);
    EVP_MAC_CTX_free(s->mac);
}

/* The bytes a call of kind k reads for a message of len bytes, when it encrypts. */
static size_t input_length(const struct kind *k, size_t len)
{
    if (k->flags & BLOCKS)
        return (len + 15) & ~(size_t)15;
    return k->fam == TLSCBC ? TLS_IV + len + TLS_MAC : len; /* explicit IV, payload, MAC */
}

/* The n-th call of kind k on side s, over src[len] (and tag, decrypting); resync: a new IV. */
static void run(const struct kind *k, int enc, struct side *s, int n, int inplace, int resync,
                const unsigned char *src, size_t len, const unsigned char *tag)
{
    unsigned char iv[16], ad[13], *in = inplace || (k->flags & INPLACE) ? s->buf : s->in;
    void *got = NULL;
    OSSL_PARAM mac[] = { OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC, &got, TLS_MAC),
                         OSSL_PARAM_END };
    size_t i, rec = len + 8 + 16; /* TLS 1.2 AEAD: explicit nonce || payload || tag */
    unsigned int u = 0;
    int l = 0, m = 0, ok = 0;

    memcpy(iv, iv0, 16);
    iv[11] ^= (unsigned char)n;
    memset(s->buf, 0x5a, len + 64); /* no plaintext of an earlier call */
    memcpy(in, src, len);
    s->out = s->buf;
    s->pt = NULL;
    ERR_clear_error();
    switch (k->fam) {
    case CIPHER:
    case TLSCBC:
        ok = (!(resync || (k->flags & REINIT))
              || EVP_CipherInit_ex2(s->c, NULL, NULL, iv, enc, NULL))
             && EVP_CipherUpdate(s->c, s->buf, &l, in, (int)len);
        if (k->fam == TLSCBC && !enc && (ok = ok && EVP_CIPHER_CTX_get_params(s->c, mac)
                                                  && got != NULL))
            memcpy(s->tlsmac, got, TLS_MAC);
        s->outl = k->fam == TLSCBC && !enc ? len : (size_t)l; /* a record received: all of it */
        if (EVP_CIPHER_CTX_get_iv_length(s->c) > 0)
            EVP_CIPHER_CTX_get_updated_iv(s->c, s->iv, (size_t)EVP_CIPHER_CTX_get_iv_length(s->c));
        s->num = (unsigned int)EVP_CIPHER_CTX_get_num(s->c);
        break;
    case AEAD:
        ok = EVP_CipherInit_ex2(s->c, NULL, NULL, iv, enc, NULL)
             && (enc || ctrl(s->c, EVP_CTRL_AEAD_SET_TAG, 16, tag))
             && (!is_ccm(k) || EVP_CipherUpdate(s->c, NULL, &l, NULL, (int)len))
             && EVP_CipherUpdate(s->c, NULL, &l, aad, (int)k->aad)
             && EVP_CipherUpdate(s->c, s->buf, &l, in, (int)len)
             && EVP_CipherFinal_ex(s->c, s->buf + l, &m)
             && (!enc || ctrl(s->c, EVP_CTRL_AEAD_GET_TAG, 16, s->tag));
        s->outl = (size_t)(l + m);
        s->pt = enc ? NULL : s->buf;
        s->ptlen = len;
        l += m;
        break;
    case TLS12: /* in place: the record is built in buf */
        if (enc) {
            memmove(s->buf + 8, s->buf, len);
            memset(s->buf, n, 8); /* CCM's explicit nonce; GCM writes its own */
        } else {
            rec = len;
        }
        for (i = 0; i < 8; i++)
            ad[i] = (unsigned char)((uint64_t)n >> (56 - 8 * i));
        ad[8] = 23, ad[9] = 3, ad[10] = 3;
        ad[11] = (unsigned char)((rec - (enc ? 16 : 0)) >> 8);
        ad[12] = (unsigned char)(rec - (enc ? 16 : 0));
        ok = ctrl(s->c, EVP_CTRL_AEAD_TLS1_AAD, 13, ad)
             && EVP_CipherUpdate(s->c, s->buf, &l, s->buf, (int)rec);
        s->out = enc ? s->buf : s->buf + 8;
        s->pt = enc ? NULL : s->out;
        s->outl = (size_t)l;
        s->ptlen = rec - 24;
        break;
    case DIGEST:
        ok = EVP_DigestInit_ex2(s->md, s->mdalg, NULL) && EVP_DigestUpdate(s->md, in, len)
             && EVP_DigestFinal_ex(s->md, s->buf, &u);
        s->outl = u;
        break;
    case MAC:
        ok = EVP_MAC_init(s->mac, NULL, 0, NULL) && EVP_MAC_update(s->mac, in, len)
             && EVP_MAC_final(s->mac, s->buf, &s->outl, 64);
        break;
    }
    s->rc = ok;
    s->ret = l;
    tu_take_errors(&s->errs);
}

/* Whether ccree raised an error (with this reason string, unless NULL). */
static int ccree_error(const tu_errs *e, const char *reason)
{
    const char *lib, *r;
    int i;

    for (i = 0; i < e->n; i++)
        if ((lib = ERR_lib_error_string(e->e[i])) != NULL && strcmp(lib, "ccree") == 0
            && (r = ERR_reason_error_string(e->e[i])) != NULL
            && (reason == NULL || strcmp(r, reason) == 0))
            return 1;
    return 0;
}

/* Whether a plaintext block (16 bytes, or a tail of 8 or more) of want is in got. */
static int holds_plaintext(const unsigned char *got, const unsigned char *want, size_t len)
{
    size_t i;

    for (i = 0; i + 8 <= len; i += 16)
        if (memcmp(got + i, want + i, len - i < 16 ? len - i : 16) == 0)
            return 1;
    return 0;
}

/* Whether the fault cannot lose what the call needs, so that it must succeed. */
static int must_succeed(const struct ccase *c)
{
    if (fault->when == SHORT && (c->k->flags & PREFIX))
        return 1; /* progress */
    /*
     * The shim cutting an AEAD decryption's answer short makes the kernel check a shorter
     * message against the tag: EBADMSG, which ccree takes as the verdict. A real kernel does
     * not cut it: ccree's sockets hold a receive budget for a whole request (rmem.sh).
     */
    if (*fault->name && strstr(fault->name, "short") && (c->k->fam == AEAD || c->k->fam == TLS12)
        && !c->k->enc)
        return 0;
    if (!c->p->fallback)
        return 0;
    return fault->when == SEND || (!c->inplace && c->k->fam != DIGEST && c->k->fam != MAC);
}

/* What is wrong with a case's call (step 0 to 2; 3: all three), said for the first few. */
static void say(const struct ccase *c, int step, const char *fmt, ...)
{
    static const char *const steps[] = { "the call before the fault", "the call with the fault",
                                         "the call after the fault", "the three calls" };
    struct tally *t = &tally[c->k - kinds];
    va_list ap;

    t->bad++;
    if (t->shown[c->p - policies][c->inplace]++ >= 2)
        return;
    printf("WRONG %s, %s, %s, %zu bytes, %s, %s, %lu request(s) before the fault, %s: ",
           c->k->what, *fault->name ? fault->name : "the real kernel", c->p->name, c->len,
           c->inplace ? "in place" : "not in place", c->off ? "1 byte past aligned" : "aligned",
           c->skip, *fault->name || step == 3 ? steps[step] : "a call");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/*
 * ccree's call (s[0]) beside the default provider's (s[1]). may_fail: a refusal is allowed,
 * with ccree's error of this reason (any, when NULL), or for an AEAD decryption "bad decrypt":
 * the kernel checks a message cut short by its receive budget against the wrong tag. What is
 * wrong is said.
 */
static void judge(const struct ccase *c, struct side s[2], int step, int may_fail,
                  const char *reason)
{
    int aead_dec = (c->k->fam == AEAD || c->k->fam == TLS12) && !c->k->enc;

    size_t i, differ = 0, first = 0;

    if (!s[1].rc) {
        ERR_print_errors_fp(stderr);
        fail_msg("%s, %zu bytes: the default provider failed", c->k->what, c->len);
    }
    if (!s[0].rc) {
        if (!may_fail)
            say(c, step, "failure where nothing was lost");
        else if (!ccree_error(&s[0].errs, reason)
                 && !(aead_dec && reason != NULL && ccree_error(&s[0].errs, "bad decrypt")))
            say(c, step, "failure without ccree's \"%s\"", reason ? reason : "error");
        else if (s[0].pt != NULL && holds_plaintext(s[0].pt, msg, s[0].ptlen))
            say(c, step, "a failed decryption left plaintext in its output");
        else
            return;
        for (i = 0; i < (size_t)s[0].errs.n; i++)
            printf("    ccree's error: %s\n", ERR_reason_error_string(s[0].errs.e[i]));
        return;
    }
    for (i = 0; i < s[0].outl && i < s[1].outl; i++)
        if (s[0].out[i] != s[1].out[i] && differ++ == 0)
            first = i;
    if (s[0].outl != s[1].outl || s[0].ret != s[1].ret)
        say(c, step, "success with %zu bytes (returned %d), not %zu (%d)", s[0].outl, s[0].ret,
            s[1].outl, s[1].ret);
    else if (differ > 0)
        say(c, step, "success with wrong bytes: %zu of %zu differ, the first at %zu", differ,
            s[0].outl, first);
    else if (memcmp(s[0].tag, s[1].tag, 16) != 0)
        say(c, step, "success with a wrong tag");
    else if (memcmp(s[0].iv, s[1].iv, 16) != 0 || s[0].num != s[1].num)
        say(c, step, "success with a wrong next IV");
    else if (memcmp(s[0].tlsmac, s[1].tlsmac, TLS_MAC) != 0)
        say(c, step, "success with a wrong record MAC");
}

/* Kind k's line of ccree's table (its state and counters). */
static tu_alg_info alg_line(const struct kind *k, OSSL_PROVIDER *prov)
{
    char name[64];

    snprintf(name, sizeof(name), k->under ? "%s-%s" : "%s", k->alg, k->under);
    return tu_alg(prov, name);
}

/*
 * Three calls on a ccree context and a default one: before the fault, with it (armed in the
 * shim), after it (with a new IV if ccree's failed). With the real kernel every call meets
 * what the kernel does.
 */
static void one_case(const struct ccase *c)
{
    static _Alignas(16) unsigned char sealbuf[2][ROOM];
    const struct kind *k = c->k;
    struct tally *t = &tally[k - kinds];
    struct side s[2], seal;
    tu_alg_info before, warm, after;
    unsigned long h = 0;
    int step, j, failed = 0, real = *fault->name == '\0';

    open_side(k, k->enc, c->p->libctx, "provider=ccree", &s[0]);
    open_side(k, k->enc, NULL, "provider=default", &s[1]);
    for (j = 0; j < 2; j++) {
        s[j].in = arena[j][0] + c->off;
        s[j].buf = arena[j][1] + c->off;
    }
    before = warm = alg_line(k, c->p->prov);
    t->cases++;
    for (step = 0; step < 3; step++) {
        const unsigned char *src = msg, *tag = NULL;
        size_t len = input_length(k, c->len);

        if (!k->enc && k->fam != CIPHER) { /* a message the default provider sealed */
            open_side(k, 1, NULL, "provider=default", &seal);
            seal.in = sealbuf[0];
            seal.buf = sealbuf[1];
            run(k, 1, &seal, step, 1, 0, msg, len, NULL);
            assert_true(seal.rc);
            src = seal.out, len = seal.outl, tag = seal.tag;
            close_side(&seal);
        }
        if (step == 1 && !real) {
            h = struck(before.driver);
            arm(1, c->skip);
        }
        run(k, k->enc, &s[0], step, c->inplace, failed, src, len, tag);
        if (step == 1 && !real) {
            arm(0, 0);
            h = struck(before.driver) - h;
        }
        run(k, k->enc, &s[1], step, c->inplace, failed, src, len, tag);
        /* the call after a failure may fail too; the real kernel may be refused before it
         * runs (a request too large for the receive budget): any ccree error */
        if (step == 1 && !real)
            judge(c, s, step, !must_succeed(c), "kernel request failed");
        else
            judge(c, s, step, failed || (real && !must_succeed(c)), NULL);
        t->refused += (step == 1 || real) && !s[0].rc;
        failed = !s[0].rc;
        if (step == 0)
            warm = alg_line(k, c->p->prov);
    }
    after = alg_line(k, c->p->prov);
    t->reached += warm.offload_ops > before.offload_ops;
    t->faulted += h > 0;
    if (real && before.sim_messages >= 0
        && (unsigned long long)(after.sim_messages - before.sim_messages)
               != after.offload_ops - before.offload_ops)
        say(c, 3, "%s counted %lld messages, the provider %llu kernel operations", before.driver,
            after.sim_messages - before.sim_messages,
            (unsigned long long)(after.offload_ops - before.offload_ops));
    if (!c->p->fallback && after.fallback_ops != before.fallback_ops)
        say(c, 3, "%llu calls in software with fallback = no",
            (unsigned long long)(after.fallback_ops - before.fallback_ops));
    for (j = 0; j < 2; j++)
        close_side(&s[j]);
}

/* A length taken down to the most one kernel request of kind k takes. */
static size_t clamp(const struct kind *k, size_t len)
{
    return k->max != 0 && len > k->max ? k->max : len;
}

/* Whether the fault applies to kind k's requests. */
static int applies(const struct kind *k)
{
    int aead = k->fam == AEAD || k->fam == TLS12, digest = k->fam == DIGEST || k->fam == MAC;

    return (!aead || fault->aead) && (!digest || fault->digest);
}

/* Every kind the fault applies to, under every policy, length and placement. */
static void every_case(void **state)
{
    size_t k, z, len;
    int p, inplace, off, bad = 0, ran = 0, real = *fault->name == '\0';
    unsigned long sk;
    const char *forbids;

    (void)state;
    for (k = 0; k < NKINDS; k++) {
        const struct kind *kd = &kinds[k];
        struct tally *t = &tally[k];
        int hashing = kd->fam == DIGEST || kd->fam == MAC;
        tu_alg_info a = alg_line(kd, policies[0].prov);

        if (!applies(kd))
            continue;
        if ((forbids = tu_kernel_forbids(&a)) != NULL) {
            printf("%s not offloaded: the kernel forbids it (%s): its cases are skipped\n",
                   kd->what, forbids);
            skip_why = forbids;
            continue;
        }
        /* a small receive budget can fail the self-test at load: the kind stays in software */
        if (strcmp(a.state, "offload") != 0) {
            printf("%s not offloaded (%s)%s\n", kd->what, a.reason,
                   real ? ": its cases are not run" : "");
            bad += !real;
            continue;
        }
        for (p = 0; p < 2; p++)
            for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
                len = clamp(kd, sizes[z]);
                if (len < kd->min || (z > 0 && len == clamp(kd, sizes[z - 1])))
                    continue;
                for (inplace = (kd->flags & INPLACE) || in_place_only; inplace <= !hashing;
                     inplace++)
                    /* the shim's faults do not depend on alignment: one of the two a case */
                    for (off = real ? 0 : (int)((z + p + inplace) & 1); off < 2;
                         off += real ? 1 : 2)
                        for (sk = 0; sk <= (*fault->name && !via_module() && len > 65536
                                            && !hashing);
                             sk++) {
                            struct ccase c = { kd, &policies[p], len, inplace, off, sk };

                            one_case(&c);
                        }
            }
        if (t->cases == 0)
            continue;
        ran++;
        printf("%-32s %3u cases, %3u reached the kernel, %3u faulted, %3u refused, %u wrong\n",
               kd->what, t->cases, t->reached, t->faulted, t->refused, t->bad);
        if (t->reached == 0 || (*fault->name && t->faulted == 0))
            printf("WRONG %s: %s\n", kd->what,
                   t->reached == 0 ? "no case reached the kernel" : "the fault never struck");
        bad += t->bad > 0 || t->reached == 0 || (*fault->name && t->faulted == 0);
    }
    fflush(stdout);
    if (ran == 0 && bad == 0 && skip_why != NULL)
        return; /* the kernel forbade every kind: main skips */
    skip_why = NULL;
    if (ran == 0)
        fail_msg("no operation kind was offloaded");
    if (bad > 0)
        fail_msg("%d operation kinds went wrong under %s", bad,
                 *fault->name ? fault->name : "the real kernel");
}

int main(int argc, char **argv)
{
    const char *f = getenv("CCREE_FAULT"), *req = getenv("CCREE_REQUIRE_OFFLOAD");
    const char *places = getenv("CCREE_KFAULT_PLACES");
    const struct CMUnitTest tests[] = { cmocka_unit_test(every_case) };
    size_t i;
    int rc;

    for (i = 0; i < sizeof(faults) / sizeof(faults[0]) && strcmp(faults[i].name, f ? f : ""); i++)
        ;
    if (argc != 2 || i == sizeof(faults) / sizeof(faults[0])) {
        fprintf(stderr, "usage: %s STRICT_CNF, with OPENSSL_CONF and CCREE_FAULT one of the "
                "recv-* and send-* modes of test/fault.c, the ccsim-* ones of test/ccsim, or unset (the "
                "real kernel)\n", argv[0]);
        return 1;
    }
    fault = &faults[i];
    in_place_only = places != NULL && strcmp(places, "in") == 0;
    policies[1].libctx = OSSL_LIB_CTX_new();
    if ((policies[0].prov = OSSL_PROVIDER_load(NULL, "ccree")) == NULL
        || !OSSL_LIB_CTX_load_config(policies[1].libctx, argv[1])
        || (policies[1].prov = OSSL_PROVIDER_load(policies[1].libctx, "ccree")) == NULL) {
        ERR_print_errors_fp(stderr);
        return 1;
    }
    if (strstr(tu_alg(policies[0].prov, "SHA2-256").reason, "no AF_ALG") != NULL
        && (req == NULL || strcmp(req, "1") != 0)) {
        printf("skipped: this kernel has no AF_ALG (these tests run in the VM)\n");
        return 77;
    }
    armed = dlsym(RTLD_DEFAULT, "ccree_fault_armed");
    skip = dlsym(RTLD_DEFAULT, "ccree_fault_skip");
    hits = dlsym(RTLD_DEFAULT, "ccree_fault_hits");
    if (*fault->name && !via_module() && (armed == NULL || skip == NULL || hits == NULL)) {
        fprintf(stderr, "CCREE_FAULT=%s without the shim test/fault.c preloaded\n", fault->name);
        return 1;
    }
    if (via_module() && access(CCSIM_FAULT, W_OK) != 0) {
        fprintf(stderr, "CCREE_FAULT=%s without the simulated CryptoCell (test/ccsim)\n",
                fault->name);
        return 1;
    }
    if (!RAND_bytes(key, sizeof(key)) || !RAND_bytes(iv0, sizeof(iv0))
        || !RAND_bytes(aad, sizeof(aad)) || !RAND_bytes(msg, sizeof(msg)))
        return 1;
    rc = _cmocka_run_group_tests(*fault->name ? fault->name : "real-kernel", tests, 1, NULL, NULL);
    OSSL_PROVIDER_unload(policies[0].prov);
    OSSL_PROVIDER_unload(policies[1].prov);
    OSSL_LIB_CTX_free(policies[1].libctx);
    if (rc == 0 && skip_why != NULL) {
        printf("skipped: the kernel forbids offload of every kind (%s)\n", skip_why);
        return 77;
    }
    return rc;
}
