/*
 * SHA-1 and SHA-2. Updates are buffered (at least 16 KiB, or offload-min) until the message
 * is known to be long enough for the kernel; a message that stays short runs in software.
 * Once a message is in the kernel it stays there: its state cannot leave the kernel.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

#include "prov.h"

#define HBUF 16384

enum { D_START, D_KERNEL, D_SOFT };

struct digest_ctx {
    struct ccree_prov *prov;
    size_t idx;
    const struct ccree_alg *alg;
    int state, finalised;
    unsigned char *buf;
    size_t buflen, cap;
    struct ccree_sock op; /* tracked across fork() while the kernel holds a message */
    EVP_MD_CTX *sw;
};

static int soft_start(struct digest_ctx *d)
{
    if ((d->sw == NULL && (d->sw = EVP_MD_CTX_new()) == NULL)
        || !EVP_DigestInit_ex2(d->sw, d->prov->sw_md[d->idx], NULL)) {
        CCREE_RAISE(d->prov, CCREE_R_SOFTWARE, "%s in the default provider", d->alg->kname);
        return 0;
    }
    d->state = D_SOFT;
    return 1;
}

static int soft_update(struct digest_ctx *d, const void *in, size_t len)
{
    if (len == 0)
        return 1;
    if (!EVP_DigestUpdate(d->sw, in, len)) {
        CCREE_RAISE(d->prov, CCREE_R_SOFTWARE, "%s in the default provider", d->alg->kname);
        return 0;
    }
    ccree_count(d->idx, 1, 0, len);
    return 1;
}

/* Sends the buffer and in to the kernel; on the first send a failure can still go to software. */
static int kernel_send(struct digest_ctx *d, const unsigned char *in, size_t len, int more)
{
    struct iovec iov[2] = { { d->buf, d->buflen }, { (void *)in, len } };
    int err = -EBADF, first = d->state == D_START;

    if (first) {
        int fd = ccree_sock_valid(&d->op) ? d->op.fd
                 : afalg_open(CCREE_HASH, d->prov->path[d->idx].driver, NULL, 0, 0);

        if (fd >= 0) {
            ccree_sock_set(&d->op, fd);
            d->state = D_KERNEL;
            ccree_sock_track(&d->op, 1);
        } else {
            err = fd;
        }
    }
    if (d->state == D_KERNEL && d->op.fd >= 0
        && (err = afalg_hash_send(d->op.fd, iov, len ? 2 : 1, more)) == 0) {
        ccree_count(d->idx, 0, 0, d->buflen + len);
        d->buflen = 0;
        return 1;
    }
    ccree_sock_close(&d->op);
    if (!first) {
        CCREE_RAISE(d->prov, CCREE_R_KERNEL, "%s (%s): %s; the message is lost", d->alg->kname,
                    d->prov->path[d->idx].driver, strerror(-err));
        return 0;
    }
    if (!ccree_kernel_failed(d->prov, d->idx, err) || !soft_start(d)
        || !soft_update(d, d->buf, d->buflen))
        return 0;
    d->buflen = 0;
    return soft_update(d, in, len);
}

static int digest_init(void *vctx, const OSSL_PARAM params[])
{
    struct digest_ctx *d = vctx;
    unsigned char md[EVP_MAX_MD_SIZE];

    (void)params;
    if (!ccree_check_path(d->prov, d->idx))
        return 0;
    /* A message left unfinished in the kernel: reading the digest resets the socket. */
    if (d->state == D_KERNEL && afalg_hash_read(d->op.fd, md, d->alg->mdsize) != 0)
        ccree_sock_close(&d->op);
    ccree_sock_track(&d->op, 0);
    d->state = D_START;
    d->finalised = 0;
    d->buflen = 0;
    return 1;
}

static int not_finalised(struct digest_ctx *d)
{
    if (!d->finalised)
        return 1;
    CCREE_RAISE(d->prov, CCREE_R_FINALISED, "%s", d->alg->kname);
    return 0;
}

static int digest_update(void *vctx, const unsigned char *in, size_t inl)
{
    struct digest_ctx *d = vctx;

    if (!not_finalised(d))
        return 0;
    if (in == NULL && inl > 0) {
        CCREE_RAISE(d->prov, CCREE_R_BAD_PARAM, "%s: NULL input", d->alg->kname);
        return 0;
    }
    if (inl > SIZE_MAX / 2) {
        CCREE_RAISE(d->prov, CCREE_R_BAD_LENGTH, "%s: %zu bytes", d->alg->kname, inl);
        return 0;
    }
    if (d->state == D_SOFT)
        return soft_update(d, in, inl);
    if (d->buflen + inl <= d->cap) {
        if (d->buf == NULL && (d->buf = OPENSSL_malloc(d->cap)) == NULL)
            return 0;
        memcpy(d->buf + d->buflen, in, inl);
        d->buflen += inl;
        return 1;
    }
    if (d->state == D_START && !ccree_use_kernel(d->prov, d->idx, d->buflen + inl)) {
        if (!soft_start(d) || !soft_update(d, d->buf, d->buflen))
            return 0;
        d->buflen = 0;
        return soft_update(d, in, inl);
    }
    return kernel_send(d, in, inl, 1);
}

static int digest_final(void *vctx, unsigned char *out, size_t *outl, size_t outsz)
{
    struct digest_ctx *d = vctx;
    unsigned int n;
    int err;

    *outl = 0;
    if (!not_finalised(d))
        return 0;
    if (out == NULL) {
        CCREE_RAISE(d->prov, CCREE_R_BAD_PARAM, "%s: NULL output", d->alg->kname);
        return 0;
    }
    if (outsz < d->alg->mdsize) {
        CCREE_RAISE(d->prov, CCREE_R_OUTPUT_TOO_SMALL, "%zu bytes for %zu", outsz, d->alg->mdsize);
        return 0;
    }
    if (d->state == D_START && !ccree_use_kernel(d->prov, d->idx, d->buflen)
        && (!soft_start(d) || !soft_update(d, d->buf, d->buflen)))
        return 0;
    if (d->state != D_SOFT && (d->state == D_START || d->buflen > 0)
        && !kernel_send(d, NULL, 0, 0))
        return 0;
    if (d->state == D_SOFT) {
        if (!EVP_DigestFinal_ex(d->sw, out, &n)) {
            CCREE_RAISE(d->prov, CCREE_R_SOFTWARE, "%s in the default provider", d->alg->kname);
            return 0;
        }
        ccree_count(d->idx, 1, 1, 0);
    } else {
        if ((err = d->op.fd < 0 ? -EBADF : afalg_hash_read(d->op.fd, out, d->alg->mdsize)) != 0) {
            ccree_sock_close(&d->op);
            CCREE_RAISE(d->prov, CCREE_R_KERNEL, "%s (%s): %s", d->alg->kname,
                        d->prov->path[d->idx].driver, strerror(-err));
            return 0;
        }
        ccree_sock_track(&d->op, 0);
        ccree_count(d->idx, 0, 1, 0);
    }
    d->state = D_START;
    d->finalised = 1;
    d->buflen = 0;
    *outl = d->alg->mdsize;
    return 1;
}

static void digest_freectx(void *vctx)
{
    struct digest_ctx *d = vctx;

    if (d == NULL)
        return;
    ccree_sock_close(&d->op);
    EVP_MD_CTX_free(d->sw);
    OPENSSL_clear_free(d->buf, d->cap);
    OPENSSL_free(d);
}

static void *digest_dupctx(void *vctx)
{
    struct digest_ctx *s = vctx, *d = OPENSSL_zalloc(sizeof(*s));
    int fd;

    if (d == NULL)
        return NULL;
    *d = *s;
    ccree_sock_init(&d->op);
    d->buf = NULL;
    d->sw = NULL;
    if (s->buf != NULL && (d->buf = OPENSSL_memdup(s->buf, s->cap)) == NULL)
        goto err;
    if (s->state == D_SOFT
        && ((d->sw = EVP_MD_CTX_new()) == NULL || !EVP_MD_CTX_copy_ex(d->sw, s->sw)))
        goto err;
    if (s->state == D_KERNEL) {
        /* accept() on a hash op socket clones the message state. */
        if ((fd = ccree_sock_valid(&s->op) ? afalg_clone(s->op.fd) : -EBADF) < 0) {
            CCREE_RAISE(s->prov, CCREE_R_KERNEL, "%s: cannot copy the kernel state: %s",
                        s->alg->kname, strerror(-fd));
            goto err;
        }
        ccree_sock_set(&d->op, fd);
        ccree_sock_track(&d->op, 1);
    }
    return d;
err:
    digest_freectx(d);
    return NULL;
}

int ccree_digest_get_params(OSSL_PARAM params[], size_t idx)
{
    const struct ccree_alg *a = &ccree_algs[idx];
    OSSL_PARAM *p;

    return ((p = OSSL_PARAM_locate(params, OSSL_DIGEST_PARAM_BLOCK_SIZE)) == NULL
            || OSSL_PARAM_set_size_t(p, a->blocksize))
           && ((p = OSSL_PARAM_locate(params, OSSL_DIGEST_PARAM_SIZE)) == NULL
               || OSSL_PARAM_set_size_t(p, a->mdsize))
           && ((p = OSSL_PARAM_locate(params, OSSL_DIGEST_PARAM_XOF)) == NULL
               || OSSL_PARAM_set_int(p, 0))
           && ((p = OSSL_PARAM_locate(params, OSSL_DIGEST_PARAM_ALGID_ABSENT)) == NULL
               || OSSL_PARAM_set_int(p, 1));
}

static const OSSL_PARAM *digest_gettable_params(void *provctx)
{
    static const OSSL_PARAM params[] = {
        OSSL_PARAM_size_t(OSSL_DIGEST_PARAM_BLOCK_SIZE, NULL),
        OSSL_PARAM_size_t(OSSL_DIGEST_PARAM_SIZE, NULL),
        OSSL_PARAM_int(OSSL_DIGEST_PARAM_XOF, NULL),
        OSSL_PARAM_int(OSSL_DIGEST_PARAM_ALGID_ABSENT, NULL),
        OSSL_PARAM_END,
    };

    (void)provctx;
    return params;
}

void *ccree_digest_newctx(struct ccree_prov *p, size_t idx)
{
    struct digest_ctx *d = OPENSSL_zalloc(sizeof(*d));

    if (d == NULL)
        return NULL;
    d->prov = p;
    d->idx = idx;
    d->alg = &ccree_algs[idx];
    d->cap = p->offload_min > HBUF ? p->offload_min : HBUF;
    ccree_sock_init(&d->op);
    return d;
}

typedef void (*fn)(void);
const OSSL_DISPATCH ccree_digest_functions[] = {
    { OSSL_FUNC_DIGEST_INIT, (fn)digest_init },
    { OSSL_FUNC_DIGEST_UPDATE, (fn)digest_update },
    { OSSL_FUNC_DIGEST_FINAL, (fn)digest_final },
    { OSSL_FUNC_DIGEST_FREECTX, (fn)digest_freectx },
    { OSSL_FUNC_DIGEST_DUPCTX, (fn)digest_dupctx },
    { OSSL_FUNC_DIGEST_GETTABLE_PARAMS, (fn)digest_gettable_params },
    { 0, NULL },
};
