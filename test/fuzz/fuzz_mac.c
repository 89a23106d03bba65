/*
 * HMAC and CMAC in the differential fuzz target: a key of any length (CMAC: its cipher's,
 * now and then another), then operations: updates of any size, finals into buffers large and
 * too small, re-inits with the same key or a new one, copies (EVP_MAC_CTX_dup) and switches to
 * the copy, the size parameters, and the calls the default provider cannot take
 * (EVP_MAC_update(ctx, NULL, n), update or final after final), which ccree must refuse.
 * A fuzz byte per operation chooses a fault for ccree's kernel requests.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>

#include "fuzz.h"

struct pair {
    EVP_MAC_CTX *ctx[2];
    struct state s;
    int ok; /* the last call succeeded on both */
};

static int go(struct pair *p, struct call *c)
{
    enum verdict v = judge(&p->s, c);

    p->ok = c->r[0] && c->must == NULL && c->r[1];
    return v == SAME;
}

/* A key from the seeded bytes: of any length up to 300, or CMAC's (mostly). */
static size_t key_of(struct input *in, size_t cmac_keylen, const unsigned char **key)
{
    unsigned v = take(in, 2);

    *key = fuzz_src + (v >> 9);
    if (cmac_keylen != 0 && (v & 0x1f) != 0)
        return cmac_keylen;
    return (v & 0x1ff) % 301;
}

static int init(struct pair *p, const char *param, const char *alg, const unsigned char *key,
                size_t keylen, int with_alg)
{
    struct call c = { .kind = CALL_INIT, .what = "init" };
    OSSL_PARAM prm[] = { OSSL_PARAM_utf8_string(param, (char *)alg, 0), OSSL_PARAM_END };
    int i;

    note(" init(%s%zu%s)", key ? "key " : "", keylen, with_alg ? ", alg" : "");
    LOCKSTEP(&p->s, &c, i, c.r[i] = EVP_MAC_init(p->ctx[i], key, keylen, with_alg ? prm : NULL));
    if (!go(p, &c))
        return 0;
    if (p->ok)
        p->s.finished = 0;
    return 1;
}

static int update(struct pair *p, const unsigned char *in, size_t len)
{
    struct call c = { .kind = in ? CALL_MAC_UPDATE : CALL_MAC_NULL, .what = "update", .inlen = len };
    int i;

    note(" update(%s%zu)", in ? "" : "NULL, ", len);
    LOCKSTEP(&p->s, &c, i, c.r[i] = EVP_MAC_update(p->ctx[i], in, len));
    return go(p, &c);
}

static int final(struct pair *p, size_t outsize)
{
    static unsigned char out[2][EVP_MAX_MD_SIZE];
    struct call c = { .kind = CALL_MAC_FINAL, .what = "final" };
    int i;

    note(" final(%zu)", outsize);
    LOCKSTEP(&p->s, &c, i, c.r[i] = EVP_MAC_final(p->ctx[i], out[i], &c.n[i], outsize);
             c.out[i] = out[i]);
    if (!go(p, &c))
        return 0;
    if (p->ok)
        p->s.finished = 1;
    return 1;
}

/* size and block-size, as parameters */
static int sizes(struct pair *p)
{
    static size_t v[2][2];
    struct call c = { .kind = CALL_PARAM, .what = "size, block-size" };
    int i;

    note(" sizes");
    LOCKSTEP(&p->s, &c, i, OSSL_PARAM q[] = { OSSL_PARAM_size_t(OSSL_MAC_PARAM_SIZE, &v[i][0]),
                                              OSSL_PARAM_size_t(OSSL_MAC_PARAM_BLOCK_SIZE, &v[i][1]),
                                              OSSL_PARAM_END };
             v[i][0] = v[i][1] = 4242; c.r[i] = EVP_MAC_CTX_get_params(p->ctx[i], q);
             c.out[i] = (unsigned char *)v[i]; c.n[i] = sizeof(v[i]));
    return go(p, &c);
}

static int dup(struct pair *p, struct pair *q)
{
    struct call c = { .kind = CALL_COPY, .what = "EVP_MAC_CTX_dup" };
    EVP_MAC_CTX *d[2] = { NULL, NULL };
    int i;

    note(" dup");
    LOCKSTEP(&p->s, &c, i, c.r[i] = (d[i] = EVP_MAC_CTX_dup(p->ctx[i])) != NULL);
    if (!go(p, &c)) {
        EVP_MAC_CTX_free(d[0]);
        EVP_MAC_CTX_free(d[1]);
        return 0;
    }
    if (p->ok) {
        EVP_MAC_CTX_free(q->ctx[0]);
        EVP_MAC_CTX_free(q->ctx[1]);
        *q = *p;
        memcpy(q->ctx, d, sizeof(d));
    }
    return 1;
}

void run_mac(EVP_MAC *const mac[2], const char *name, const char *alg, size_t keylen,
             struct input *in)
{
    const char *param = strcmp(name, "CMAC") == 0 ? OSSL_MAC_PARAM_CIPHER : OSSL_MAC_PARAM_DIGEST;
    struct pair cur = { .ctx = { NULL, NULL } }, alt = { .ctx = { NULL, NULL } }, t;
    const unsigned char *key;
    size_t klen = key_of(in, keylen, &key);
    int step, i, on;

    for (i = 0; i < 2; i++)
        if ((cur.ctx[i] = EVP_MAC_CTX_new(mac[i])) == NULL)
            fuzz_die("cannot make a MAC context");
    fault_choose(in);
    on = init(&cur, param, alg, key, klen, 1);
    for (step = 1; on && in->n > 0 && step < 64; step++) {
        unsigned op = take(in, 1);

        fault_choose(in);
        switch (op % 8) {
        case 0:
        case 1:
            on = update(&cur, fuzz_src + (op >> 3), length(in));
            break;
        case 2: /* into a buffer large enough, or of 0 to 63 bytes */
            on = final(&cur, op & 8 ? EVP_MAX_MD_SIZE : op >> 2);
            break;
        case 3: /* the same key, or a new one; with the digest or cipher again or not */
            klen = op & 8 ? key_of(in, keylen, &key) : 0;
            on = init(&cur, param, alg, op & 8 ? key : NULL, klen, op & 16);
            break;
        case 4:
            on = dup(&cur, &alt);
            break;
        case 5:
            if (alt.ctx[0] != NULL)
                t = cur, cur = alt, alt = t;
            break;
        case 6:
            on = update(&cur, NULL, 1 + (op >> 3));
            break;
        case 7:
            on = sizes(&cur);
            break;
        }
    }
    for (i = 0; i < 2; i++) {
        EVP_MAC_CTX_free(cur.ctx[i]);
        EVP_MAC_CTX_free(alt.ctx[i]);
    }
}
