/*
 * How a digest's or MAC's message is buffered, sent and finished, on the request engine (mac.c:
 * the MACs' keys and settings), and the digests. Updates are buffered (at least 16 KiB, or
 * offload-min) until the message is known to be long enough for the kernel; a message that
 * stays short runs in software. Once in the kernel a message stays there: its state cannot
 * leave the kernel.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>

#include "hash.h"

#define HBUF 16384

static const char *hname(const struct hash_ctx *h)
{
    return h->e.alg == NULL ? ccree_algs[h->family].names : h->e.alg->kname;
}

int hash_fail(const struct hash_ctx *h, int reason, const char *what)
{
    CCREE_RAISE(h->e.prov, reason, "%s: %s", hname(h), what);
    return 0;
}

static void count(const struct hash_ctx *h, int software, size_t ops, size_t bytes)
{
    if (h->e.alg != NULL)
        ccree_count(h->e.idx, software, ops, bytes);
}

/* Whether the kernel can run this context's messages. */
static int kernel_able(const struct hash_ctx *h)
{
    return h->e.alg != NULL && !h->sw_only && h->e.prov->path[h->e.idx].offload;
}

/*
 * The path of a message of len bytes (or more): 1 the kernel, 0 software, -1 refused
 * (fallback = no, and settings changed since init that the kernel lacks).
 */
static int choose(const struct hash_ctx *h, size_t len, struct ccree_choice *ch)
{
    *ch = (struct ccree_choice){ .kernel = 0 };
    if (kernel_able(h))
        return ccree_choose(h->e.prov, h->e.idx, len, ch);
    return h->e.prov->fallback ? 0 : (hash_fail(h, CCREE_R_NOT_OFFLOADED, "these settings run in software"), -1);
}

/* --- a message ---------------------------------------------------------------------------- */

static const struct ccree_sw_digest *soft_digest(const struct hash_ctx *h)
{
    return &h->e.prov->sw_digest[h->e.idx];
}

static int soft_start(struct hash_ctx *h)
{
    const struct ccree_sw_digest *sd;

    h->state = H_SOFT;
    if (h->family != NONE) /* the software MAC was initialised with this message */
        return 1;
    sd = soft_digest(h);
    if ((h->soft_md == NULL && (h->soft_md = sd->newctx(sd->provctx)) == NULL) || !sd->init(h->soft_md, NULL))
        return hash_fail(h, CCREE_R_SOFTWARE, "in the default provider");
    return 1;
}

static int soft_update(struct hash_ctx *h, const void *in, size_t len)
{
    if (len == 0)
        return 1;
    if (!(h->family != NONE ? EVP_MAC_update(h->soft_mac, in, len) : soft_digest(h)->update(h->soft_md, in, len)))
        return hash_fail(h, CCREE_R_SOFTWARE, "in the default provider");
    count(h, 1, 0, len);
    return 1;
}

/* The message's whole buffer and then in, to software: the kernel failed with err before it
 * held any of the message. Unlike a cipher's, the next message tries the kernel again. */
static int to_software(struct hash_ctx *h, int err, const unsigned char *in, size_t len)
{
    if (!ccree_kernel_failed(h->e.prov, h->e.idx, err, 0) || !soft_start(h)
        || !soft_update(h, h->buf, h->buflen))
        return 0;
    h->buflen = 0;
    return soft_update(h, in, len);
}

/* A socket for the message's first send (a digest's: one its provider kept, if any): 0, or
 * -errno. */
static int kernel_open(struct hash_ctx *h)
{
    int fd = -1;

    if (h->family == NONE && !ccree_sock_valid(&h->e.op)
        && (fd = ccree_pool_take(h->e.idx, h->e.prov)) >= 0)
        ccree_sock_set(&h->e.op, fd);
    fd = ccree_engine_socket(&h->e, 0);
    return fd < 0 ? fd : 0;
}

/* Sends the buffer and in to the kernel; on the first send a failure can still go to software. */
static int kernel_send(struct hash_ctx *h, const unsigned char *in, size_t len, int more)
{
    struct iovec iov[2] = { { h->buf, h->buflen }, { (void *)in, len } };
    int first = h->state == H_START;
    int err = first ? kernel_open(h) : ccree_sock_valid(&h->e.op) ? 0 : -EBADF;

    if (err == 0 && (err = afalg_hash_send(h->e.op.fd, iov, len ? 2 : 1, more)) == 0) {
        h->state = H_KERNEL;
        ccree_sock_track(&h->e.op, 1);
        count(h, 0, 0, h->buflen + len);
        h->buflen = 0;
        return 1;
    }
    ccree_sock_close(&h->e.op); /* its state is unknown now */
    if (first)
        return to_software(h, err, in, len);
    CCREE_RAISE(h->e.prov, CCREE_R_KERNEL, "%s (%s): %s; the message is lost", hname(h),
                h->e.prov->path[h->e.idx].driver, strerror(-err));
    return 0;
}

/* A message a failure lost part of: refused until the next init. */
static int lose(struct hash_ctx *h)
{
    ccree_sock_close(&h->e.op);
    h->state = H_LOST;
    return 0;
}

/* The end of a message: what it left in the buffer is wiped. */
static void wipe(struct hash_ctx *h)
{
    OPENSSL_cleanse(h->buf, h->used);
    h->used = h->buflen = 0;
}

/* A new message. */
void hash_restart(struct hash_ctx *h)
{
    unsigned char md[EVP_MAX_MD_SIZE];

    /* A message left unfinished in the kernel: reading the digest resets the socket (closed
     * already if a MAC's row changed, maybe to none). */
    if (h->state == H_KERNEL && ccree_sock_valid(&h->e.op)
        && afalg_hash_read(h->e.op.fd, md, h->e.alg->mdsize) != 0)
        ccree_sock_close(&h->e.op);
    ccree_sock_track(&h->e.op, 0);
    h->state = H_START;
    h->finalised = 0;
    wipe(h);
}

static int reserve(struct hash_ctx *h, size_t n)
{
    size_t size = h->size ? h->size : 256;
    unsigned char *b;

    if (n <= h->size)
        return 1;
    while (size < n)
        size *= 2;
    size = size < h->cap ? size : h->cap;
    if ((b = OPENSSL_clear_realloc(h->buf, h->used, size)) == NULL)
        return 0;
    h->buf = b;
    h->size = size;
    return 1;
}

/* Takes inl > 0 bytes of the message: buffered, or sent on its path. */
static int take(struct hash_ctx *h, const unsigned char *in, size_t inl)
{
    struct ccree_choice ch;

    if (h->state == H_SOFT)
        return soft_update(h, in, inl);
    if (h->buflen + inl <= h->cap && kernel_able(h)) {
        if (!reserve(h, h->buflen + inl))
            return hash_fail(h, CCREE_R_SOFTWARE, "no memory");
        memcpy(h->buf + h->buflen, in, inl);
        h->buflen += inl;
        h->used = h->buflen > h->used ? h->buflen : h->used;
        return 1;
    }
    if (h->state == H_START) /* a long message: untimed */
        switch (choose(h, h->buflen + inl, &ch)) {
        case -1:
            return 0;
        case 0:
            if (!soft_start(h) || !soft_update(h, h->buf, h->buflen))
                return 0;
            h->buflen = 0;
            return soft_update(h, in, inl);
        }
    return kernel_send(h, in, inl, 1);
}

/* Whether the message can go on: a MAC has a key (as in the default provider, even for no
 * bytes), and no failure lost part of it. */
static int can_go_on(const struct hash_ctx *h)
{
    if (h->family != NONE && h->e.key == NULL)
        return hash_fail(h, CCREE_R_NO_KEY, "no key set");
    return h->state != H_LOST || hash_fail(h, CCREE_R_BAD_STATE, "a failure lost this message: init again");
}

int hash_update(void *vctx, const unsigned char *in, size_t inl)
{
    struct hash_ctx *h = vctx;

    if (h->finalised)
        return hash_fail(h, CCREE_R_FINALISED, "update after final");
    return ccree_check_input(h->e.prov, hname(h), in, inl) && can_go_on(h)
           && (inl == 0 || take(h, in, inl) || lose(h));
}

/* A message all in the buffer: timed as a whole on the path it takes, after any socket set-up. */
static int start_whole(struct hash_ctx *h, struct ccree_choice *ch)
{
    int err, path = choose(h, h->buflen, ch);

    if (path > 0 && (err = kernel_open(h)) != 0)
        return to_software(h, err, NULL, 0);
    ccree_start(ch);
    return path == 0 ? soft_start(h) && soft_update(h, h->buf, h->buflen) : path > 0;
}

/* The message's digest or MAC into out, *mdsize bytes (a MAC in software: set here). */
static int finish(struct hash_ctx *h, unsigned char *out, size_t *mdsize, size_t outsz)
{
    size_t n;
    int err;

    if (h->state != H_SOFT && (h->state == H_START || h->buflen > 0) && !kernel_send(h, NULL, 0, 0))
        return 0;
    if (h->state == H_SOFT) {
        if (h->family != NONE ? !EVP_MAC_final(h->soft_mac, out, mdsize, outsz)
                           : !soft_digest(h)->final(h->soft_md, out, &n, outsz))
            return hash_fail(h, CCREE_R_SOFTWARE, "in the default provider");
        count(h, 1, 1, 0);
        return 1;
    }
    if ((err = afalg_hash_read(h->e.op.fd, out, *mdsize)) != 0) {
        OPENSSL_cleanse(out, *mdsize);
        CCREE_RAISE(h->e.prov, CCREE_R_KERNEL, "%s (%s): %s", hname(h), h->e.prov->path[h->e.idx].driver,
                    strerror(-err));
        return 0;
    }
    ccree_sock_track(&h->e.op, 0);
    count(h, 0, 1, 0);
    return 1;
}

int hash_final(void *vctx, unsigned char *out, size_t *outl, size_t outsz)
{
    struct hash_ctx *h = vctx;
    size_t mdsize = h->e.alg == NULL ? 0 : h->e.alg->mdsize;
    struct ccree_choice ch = { .timed = 0 };

    *outl = 0;
    if (h->finalised)
        return hash_fail(h, CCREE_R_FINALISED, "final twice");
    /* A MAC the table lacks checks its size in software: here, at least a byte. */
    if (!ccree_check_room(h->e.prov, hname(h), out, mdsize ? mdsize : 1, outsz) || !can_go_on(h))
        return 0;
    if ((h->state == H_START && !start_whole(h, &ch)) || !finish(h, out, &mdsize, outsz))
        return lose(h);
    if (ch.timed && ch.kernel == (h->state == H_KERNEL))
        ccree_ran(h->e.prov, &ch);
    h->state = H_START;
    h->finalised = 1;
    wipe(h);
    *outl = mdsize;
    return 1;
}

void hash_freectx(void *vctx)
{
    struct hash_ctx *h = vctx;

    if (h == NULL)
        return;
    if (h->family == NONE && h->state != H_KERNEL)
        ccree_pool_put(h->e.idx, h->e.prov, &h->e.op);
    ccree_engine_free(&h->e);
    if (h->soft_md != NULL)
        soft_digest(h)->freectx(h->soft_md);
    EVP_MAC_CTX_free(h->soft_mac);
    OPENSSL_clear_free(h->buf, h->used);
    OPENSSL_free(h);
}

void *hash_dupctx(void *vctx)
{
    struct hash_ctx *s = vctx, *d = OPENSSL_malloc(sizeof(*s));
    int fd;

    if (d == NULL)
        return NULL;
    *d = *s;
    d->buf = NULL;
    d->soft_md = NULL;
    d->soft_mac = NULL;
    if (!ccree_engine_dup(&d->e, &s->e)
        || (s->buf != NULL && (d->buf = OPENSSL_memdup(s->buf, s->size)) == NULL)
        || (s->soft_mac != NULL && (d->soft_mac = EVP_MAC_CTX_dup(s->soft_mac)) == NULL)
        || (s->soft_md != NULL && (d->soft_md = soft_digest(s)->dupctx(s->soft_md)) == NULL))
        goto err;
    if (s->state == H_KERNEL) {
        /* accept() on a hash op socket clones the message state. */
        if ((fd = ccree_sock_valid(&s->e.op) ? afalg_clone(s->e.op.fd) : -EBADF) < 0) {
            CCREE_RAISE(s->e.prov, CCREE_R_KERNEL, "%s: cannot copy the kernel state: %s", hname(s),
                        strerror(-fd));
            goto err;
        }
        ccree_sock_set(&d->e.op, fd);
        ccree_sock_track(&d->e.op, 1);
    }
    return d;
err:
    hash_freectx(d);
    return NULL;
}

struct hash_ctx *hash_newctx(struct ccree_prov *p, size_t row, size_t family)
{
    struct hash_ctx *h = OPENSSL_zalloc(sizeof(*h));

    if (h == NULL)
        return NULL;
    ccree_engine_init(&h->e, p, row);
    h->family = family;
    h->cap = p->offload_min != CCREE_AUTO && p->offload_min > HBUF ? p->offload_min : HBUF;
    return h;
}

/* --- digests ------------------------------------------------------------------------------- */

static int digest_init(void *vctx, const OSSL_PARAM params[])
{
    struct hash_ctx *h = vctx;

    (void)params;
    if (!ccree_check_path(h->e.prov, h->e.idx))
        return 0;
    hash_restart(h);
    return 1;
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
               || OSSL_PARAM_set_int(p, (a->flags & EVP_MD_FLAG_DIGALGID_ABSENT) != 0));
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
    return hash_newctx(p, idx, NONE);
}

const OSSL_DISPATCH ccree_digest_functions[] = {
    { OSSL_FUNC_DIGEST_INIT, (fn)digest_init },
    { OSSL_FUNC_DIGEST_UPDATE, (fn)hash_update },
    { OSSL_FUNC_DIGEST_FINAL, (fn)hash_final },
    { OSSL_FUNC_DIGEST_FREECTX, (fn)hash_freectx },
    { OSSL_FUNC_DIGEST_DUPCTX, (fn)hash_dupctx },
    { OSSL_FUNC_DIGEST_GETTABLE_PARAMS, (fn)digest_gettable_params },
    { 0, NULL },
};

