/* The request engine under ciphers and AEADs: their contexts' common part (engine.h). */
#include <stdint.h>
#include <string.h>

#include <openssl/crypto.h>

#include "engine.h"

/* sw_below: the algorithm's, or every length once the kernel failed this key. */
static void plan(struct ccree_engine *e)
{
    e->sw_below = e->kernel_off ? SIZE_MAX : ccree_sw_below(e->prov, e->idx);
}

void ccree_engine_init(struct ccree_engine *e, struct ccree_prov *p, size_t idx)
{
    e->prov = p;
    e->idx = idx;
    e->alg = &ccree_algs[idx];
    e->soft = &p->sw_cipher[idx];
    ccree_sock_init(&e->op);
    plan(e);
}

int ccree_engine_dup(struct ccree_engine *d, const struct ccree_engine *s)
{
    ccree_sock_init(&d->op);
    d->sw = NULL;
    return s->sw == NULL || (d->sw = s->soft->dupctx(s->sw)) != NULL;
}

void ccree_engine_free(struct ccree_engine *e)
{
    ccree_sock_close(&e->op);
    if (e->sw != NULL)
        e->soft->freectx(e->sw);
    e->sw = NULL;
}

int ccree_engine_key(struct ccree_engine *e, const unsigned char *key, size_t keylen)
{
    if (keylen != e->alg->keylen) {
        CCREE_RAISE(e->prov, CCREE_R_BAD_KEY_LENGTH, "%zu bytes, %s takes %zu", keylen,
                    e->alg->kname, e->alg->keylen);
        return 0;
    }
    if (e->keyed && CRYPTO_memcmp(e->key, key, keylen) == 0)
        return 1; /* the same key: the socket and the software context keep it */
    memcpy(e->key, key, keylen);
    e->keyed = 1;
    e->sw_keyed = 0;
    e->kernel_off = 0;
    plan(e);
    ccree_sock_close(&e->op);
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
    fd = ccree_open(e->prov, e->idx, e->key, e->alg->keylen, authsize, ccree_whole(e->idx));
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
