/* The request engine under ciphers, AEADs, digests and MACs: their contexts' common part. */
#include <stdint.h>
#include <string.h>

#include <openssl/crypto.h>

#include "engine.h"

/* sw_below: the algorithm's, or every length once the kernel failed this key (or with no row). */
static void plan(struct ccree_engine *e)
{
    e->sw_below = e->kernel_off || e->alg == NULL ? SIZE_MAX : ccree_sw_below(e->prov, e->idx);
}

static void set_row(struct ccree_engine *e, size_t idx)
{
    e->idx = idx;
    e->alg = idx < CCREE_NALGS ? &ccree_algs[idx] : NULL;
    e->soft = idx < CCREE_NALGS ? &e->prov->sw_cipher[idx] : NULL;
    e->kernel_off = 0;
    plan(e);
}

void ccree_engine_init(struct ccree_engine *e, struct ccree_prov *p, size_t idx)
{
    e->prov = p;
    ccree_sock_init(&e->op);
    set_row(e, idx);
}

void ccree_engine_row(struct ccree_engine *e, size_t idx)
{
    ccree_sock_close(&e->op);
    set_row(e, idx);
}

/* A copy of a key, with a byte even for none. */
static unsigned char *key_copy(const unsigned char *key, size_t keylen)
{
    unsigned char *k = OPENSSL_malloc(keylen + 1);

    if (k != NULL && keylen > 0)
        memcpy(k, key, keylen);
    return k;
}

int ccree_engine_dup(struct ccree_engine *d, const struct ccree_engine *s)
{
    ccree_sock_init(&d->op);
    d->sw = NULL;
    d->key = NULL;
    if ((s->key == NULL || (d->key = key_copy(s->key, s->keylen)) != NULL)
        && (s->sw == NULL || (d->sw = s->soft->dupctx(s->sw)) != NULL))
        return 1;
    ccree_engine_free(d);
    return 0;
}

void ccree_engine_drop_key(struct ccree_engine *e)
{
    ccree_sock_close(&e->op);
    OPENSSL_clear_free(e->key, e->keylen);
    e->key = NULL;
    e->keylen = 0;
}

void ccree_engine_free(struct ccree_engine *e)
{
    if (e->key != NULL)
        ccree_engine_drop_key(e);
    ccree_sock_close(&e->op);
    if (e->sw != NULL)
        e->soft->freectx(e->sw);
    e->sw = NULL;
}

int ccree_engine_key(struct ccree_engine *e, const unsigned char *key, size_t keylen)
{
    unsigned char *k;

    if (e->alg != NULL && e->alg->kind != CCREE_HASH && keylen != e->alg->keylen) {
        CCREE_RAISE(e->prov, CCREE_R_BAD_KEY_LENGTH, "%zu bytes, %s takes %zu", keylen,
                    e->alg->kname, e->alg->keylen);
        return 0;
    }
    if (e->key != NULL && e->keylen == keylen && CRYPTO_memcmp(e->key, key, keylen) == 0)
        return 1; /* the same key: the socket and the software context keep it */
    if ((k = key_copy(key, keylen)) == NULL) {
        CCREE_RAISE(e->prov, CCREE_R_SOFTWARE, "no memory for the key");
        return 0;
    }
    ccree_engine_drop_key(e);
    e->key = k;
    e->keylen = keylen;
    e->sw_keyed = 0;
    e->kernel_off = 0;
    plan(e);
    return 1;
}

int ccree_engine_sw(struct ccree_engine *e)
{
    return e->sw != NULL || (e->sw = e->soft->newctx(e->soft->provctx)) != NULL;
}

int ccree_engine_socket(struct ccree_engine *e, size_t authsize)
{
    int fd;

    if (ccree_sock_valid(&e->op) && e->op_authsize == authsize)
        return 1;
    ccree_sock_close(&e->op); /* the tag length belongs to the kernel transform */
    fd = ccree_open(e->prov, e->idx, e->key, e->keylen, authsize, ccree_whole(e->idx));
    if (fd < 0)
        return fd;
    ccree_sock_set(&e->op, fd);
    e->op_authsize = authsize;
    return 1;
}

int ccree_engine_failed(struct ccree_engine *e, int err, int clobbered)
{
    ccree_sock_close(&e->op); /* what it holds is unknown now */
    if (!ccree_kernel_failed(e->prov, e->idx, err, clobbered))
        return 0;
    e->kernel_off = 1;
    plan(e);
    return 1;
}
