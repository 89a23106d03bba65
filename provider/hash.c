/*
 * Digests, and the MACs HMAC and CMAC, on one message engine. Updates are buffered (at least
 * 16 KiB, or offload-min) until the message is known to be long enough for the kernel; a
 * message that stays short runs in software. Once in the kernel a message stays there: its
 * state cannot leave the kernel. A MAC keeps the default provider's MAC beside it, keyed and
 * configured as itself: it validates every setting and serves what the kernel does not.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>

#include "prov.h"

#define HBUF 16384
#define NONE CCREE_NALGS /* a MAC on a digest or cipher the table lacks: software only */

enum { H_START, H_KERNEL, H_SOFT, H_LOST }; /* H_LOST: a failure lost part of the message */

struct hash_ctx {
    struct ccree_prov *prov;
    size_t idx;  /* the row; a MAC's follows its digest or cipher */
    size_t mac;  /* a MAC: its first row; NONE for a digest */
    int state, finalised;
    unsigned char *buf;
    size_t buflen, size, cap; /* the buffer grows to cap as a message needs it */
    size_t used;              /* the most of it this message used: wiped at its end */
    struct ccree_sock op;  /* tracked across fork() while the kernel holds a message */
    void *soft_md;         /* a digest in software: the software provider's context */
    EVP_MAC_CTX *soft_mac; /* a MAC in software, keyed and set up as this context */
    size_t named;          /* a MAC: the row of the digest or cipher named, in effect with a key */
    unsigned char *key;    /* a MAC's key, for the kernel */
    size_t keylen;
    unsigned int sw_only;  /* a MAC's settings the kernel lacks: a bit per setting */
};

static const char *hname(const struct hash_ctx *h)
{
    return h->idx == NONE ? ccree_algs[h->mac].names : ccree_algs[h->idx].kname;
}

static int fail(const struct hash_ctx *h, int reason, const char *what)
{
    CCREE_RAISE(h->prov, reason, "%s: %s", hname(h), what);
    return 0;
}

static void count(const struct hash_ctx *h, int software, size_t ops, size_t bytes)
{
    if (h->idx != NONE)
        ccree_count(h->idx, software, ops, bytes);
}

/* Whether the kernel can run this context's messages. */
static int kernel_able(const struct hash_ctx *h)
{
    return h->idx != NONE && !h->sw_only && h->prov->path[h->idx].offload;
}

/*
 * The path of a message of len bytes (or more): 1 the kernel, 0 software, -1 refused
 * (fallback = no, and settings changed since init that the kernel lacks).
 */
static int choose(const struct hash_ctx *h, size_t len, struct ccree_choice *ch)
{
    *ch = (struct ccree_choice){ .kernel = 0 };
    if (kernel_able(h))
        return ccree_choose(h->prov, h->idx, len, ch);
    return h->prov->fallback ? 0 : (fail(h, CCREE_R_NOT_OFFLOADED, "these settings run in software"), -1);
}

/* --- the message engine -------------------------------------------------------------------- */

static const struct ccree_sw_digest *soft_digest(const struct hash_ctx *h)
{
    return &h->prov->sw_digest[h->idx];
}

static int soft_start(struct hash_ctx *h)
{
    const struct ccree_sw_digest *sd;

    h->state = H_SOFT;
    if (h->mac != NONE) /* the software MAC was initialised with this message */
        return 1;
    sd = soft_digest(h);
    if ((h->soft_md == NULL && (h->soft_md = sd->newctx(sd->provctx)) == NULL) || !sd->init(h->soft_md, NULL))
        return fail(h, CCREE_R_SOFTWARE, "in the default provider");
    return 1;
}

static int soft_update(struct hash_ctx *h, const void *in, size_t len)
{
    if (len == 0)
        return 1;
    if (!(h->mac != NONE ? EVP_MAC_update(h->soft_mac, in, len) : soft_digest(h)->update(h->soft_md, in, len)))
        return fail(h, CCREE_R_SOFTWARE, "in the default provider");
    count(h, 1, 0, len);
    return 1;
}

/* The message's whole buffer and then in, to software: the kernel failed with err before it
 * held any of the message. */
static int to_software(struct hash_ctx *h, int err, const unsigned char *in, size_t len)
{
    if (!ccree_kernel_failed(h->prov, h->idx, err, 0) || !soft_start(h)
        || !soft_update(h, h->buf, h->buflen))
        return 0;
    h->buflen = 0;
    return soft_update(h, in, len);
}

/* A socket for the message's first send: 0, or -errno. */
static int kernel_open(struct hash_ctx *h)
{
    int fd;

    if (ccree_sock_valid(&h->op))
        return 0;
    fd = h->mac == NONE ? ccree_pool_take(h->idx, h->prov) : -1;
    if (fd < 0 && (fd = ccree_open(h->prov, h->idx, h->key, h->keylen, 0, 0)) < 0)
        return fd;
    ccree_sock_set(&h->op, fd);
    return 0;
}

/* Sends the buffer and in to the kernel; on the first send a failure can still go to software. */
static int kernel_send(struct hash_ctx *h, const unsigned char *in, size_t len, int more)
{
    struct iovec iov[2] = { { h->buf, h->buflen }, { (void *)in, len } };
    int first = h->state == H_START;
    int err = first ? kernel_open(h) : ccree_sock_valid(&h->op) ? 0 : -EBADF;

    if (err == 0 && (err = afalg_hash_send(h->op.fd, iov, len ? 2 : 1, more)) == 0) {
        h->state = H_KERNEL;
        ccree_sock_track(&h->op, 1);
        count(h, 0, 0, h->buflen + len);
        h->buflen = 0;
        return 1;
    }
    ccree_sock_close(&h->op); /* its state is unknown now */
    if (first)
        return to_software(h, err, in, len);
    CCREE_RAISE(h->prov, CCREE_R_KERNEL, "%s (%s): %s; the message is lost", hname(h),
                h->prov->path[h->idx].driver, strerror(-err));
    return 0;
}

/* A message a failure lost part of: refused until the next init. */
static int lose(struct hash_ctx *h)
{
    ccree_sock_close(&h->op);
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
static void restart(struct hash_ctx *h)
{
    unsigned char md[EVP_MAX_MD_SIZE];

    /* A message left unfinished in the kernel: reading the digest resets the socket. */
    if (h->state == H_KERNEL && afalg_hash_read(h->op.fd, md, ccree_algs[h->idx].mdsize) != 0)
        ccree_sock_close(&h->op);
    ccree_sock_track(&h->op, 0);
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
            return fail(h, CCREE_R_SOFTWARE, "no memory");
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
    if (h->mac != NONE && h->key == NULL)
        return fail(h, CCREE_R_NO_KEY, "no key set");
    return h->state != H_LOST || fail(h, CCREE_R_BAD_STATE, "a failure lost this message: init again");
}

static int hash_update(void *vctx, const unsigned char *in, size_t inl)
{
    struct hash_ctx *h = vctx;

    if (h->finalised)
        return fail(h, CCREE_R_FINALISED, "update after final");
    if (in == NULL && inl > 0)
        return fail(h, CCREE_R_BAD_PARAM, "NULL input");
    if (inl > SIZE_MAX / 2)
        return fail(h, CCREE_R_BAD_LENGTH, "length out of range");
    return can_go_on(h) && (inl == 0 || take(h, in, inl) || lose(h));
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
        if (h->mac != NONE ? !EVP_MAC_final(h->soft_mac, out, mdsize, outsz)
                           : !soft_digest(h)->final(h->soft_md, out, &n, outsz))
            return fail(h, CCREE_R_SOFTWARE, "in the default provider");
        count(h, 1, 1, 0);
        return 1;
    }
    if ((err = afalg_hash_read(h->op.fd, out, *mdsize)) != 0) {
        OPENSSL_cleanse(out, *mdsize);
        CCREE_RAISE(h->prov, CCREE_R_KERNEL, "%s (%s): %s", hname(h), h->prov->path[h->idx].driver,
                    strerror(-err));
        return 0;
    }
    ccree_sock_track(&h->op, 0);
    count(h, 0, 1, 0);
    return 1;
}

static int hash_final(void *vctx, unsigned char *out, size_t *outl, size_t outsz)
{
    struct hash_ctx *h = vctx;
    size_t mdsize = h->idx == NONE ? 0 : ccree_algs[h->idx].mdsize;
    struct ccree_choice ch = { .timed = 0 };

    *outl = 0;
    if (h->finalised)
        return fail(h, CCREE_R_FINALISED, "final twice");
    if (out == NULL)
        return fail(h, CCREE_R_BAD_PARAM, "NULL output");
    if (outsz < mdsize)
        return fail(h, CCREE_R_OUTPUT_TOO_SMALL, "output buffer");
    if (!can_go_on(h))
        return 0;
    if ((h->state == H_START && !start_whole(h, &ch)) || !finish(h, out, &mdsize, outsz))
        return lose(h);
    if (ch.timed && ch.kernel == (h->state == H_KERNEL))
        ccree_ran(h->prov, &ch);
    h->state = H_START;
    h->finalised = 1;
    wipe(h);
    *outl = mdsize;
    return 1;
}

static void hash_freectx(void *vctx)
{
    struct hash_ctx *h = vctx;

    if (h == NULL)
        return;
    if (h->mac == NONE && h->state != H_KERNEL)
        ccree_pool_put(h->idx, h->prov, &h->op);
    ccree_sock_close(&h->op);
    if (h->soft_md != NULL)
        soft_digest(h)->freectx(h->soft_md);
    EVP_MAC_CTX_free(h->soft_mac);
    OPENSSL_clear_free(h->buf, h->used);
    OPENSSL_clear_free(h->key, h->keylen);
    OPENSSL_free(h);
}

static void *hash_dupctx(void *vctx)
{
    struct hash_ctx *s = vctx, *d = OPENSSL_malloc(sizeof(*s));
    int fd;

    if (d == NULL)
        return NULL;
    *d = *s;
    ccree_sock_init(&d->op);
    d->buf = d->key = NULL;
    d->soft_md = NULL;
    d->soft_mac = NULL;
    if ((s->buf != NULL && (d->buf = OPENSSL_memdup(s->buf, s->size)) == NULL)
        || (s->key != NULL && (d->key = OPENSSL_memdup(s->key, s->keylen + 1)) == NULL)
        || (s->soft_mac != NULL && (d->soft_mac = EVP_MAC_CTX_dup(s->soft_mac)) == NULL)
        || (s->soft_md != NULL && (d->soft_md = soft_digest(s)->dupctx(s->soft_md)) == NULL))
        goto err;
    if (s->state == H_KERNEL) {
        /* accept() on a hash op socket clones the message state. */
        if ((fd = ccree_sock_valid(&s->op) ? afalg_clone(s->op.fd) : -EBADF) < 0) {
            CCREE_RAISE(s->prov, CCREE_R_KERNEL, "%s: cannot copy the kernel state: %s", hname(s),
                        strerror(-fd));
            goto err;
        }
        ccree_sock_set(&d->op, fd);
        ccree_sock_track(&d->op, 1);
    }
    return d;
err:
    hash_freectx(d);
    return NULL;
}

static struct hash_ctx *hash_newctx(struct ccree_prov *p, size_t idx, size_t mac)
{
    struct hash_ctx *h = OPENSSL_zalloc(sizeof(*h));

    if (h == NULL)
        return NULL;
    h->prov = p;
    h->idx = idx;
    h->mac = mac;
    h->cap = p->offload_min != CCREE_AUTO && p->offload_min > HBUF ? p->offload_min : HBUF;
    ccree_sock_init(&h->op);
    return h;
}

/* --- digests ------------------------------------------------------------------------------- */

static int digest_init(void *vctx, const OSSL_PARAM params[])
{
    struct hash_ctx *h = vctx;

    (void)params;
    if (!ccree_check_path(h->prov, h->idx))
        return 0;
    restart(h);
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

typedef void (*fn)(void);
const OSSL_DISPATCH ccree_digest_functions[] = {
    { OSSL_FUNC_DIGEST_INIT, (fn)digest_init },
    { OSSL_FUNC_DIGEST_UPDATE, (fn)hash_update },
    { OSSL_FUNC_DIGEST_FINAL, (fn)hash_final },
    { OSSL_FUNC_DIGEST_FREECTX, (fn)hash_freectx },
    { OSSL_FUNC_DIGEST_DUPCTX, (fn)hash_dupctx },
    { OSSL_FUNC_DIGEST_GETTABLE_PARAMS, (fn)digest_gettable_params },
    { 0, NULL },
};

/* --- MACs ---------------------------------------------------------------------------------- */

/*
 * The digest or cipher named: the row of this MAC that runs on it, or NONE; *props, where
 * software has it. Aliases count: "SHA256" is the row of "SHA2-256".
 */
static size_t find_row(struct hash_ctx *h, const char *name, const char **props)
{
    int op = ccree_under(h->mac);
    EVP_CIPHER *c = NULL;
    EVP_MD *md = NULL;
    size_t i;

    if ((*props = ccree_software(h->prov, op, name)) == NULL)
        return NONE;
    if (op == CCREE_OP_CIPHER)
        c = EVP_CIPHER_fetch(h->prov->libctx, name, *props);
    else
        md = EVP_MD_fetch(h->prov->libctx, name, *props);
    for (i = h->mac; i < CCREE_NALGS && strcmp(ccree_algs[i].names, ccree_algs[h->mac].names) == 0;
         i++)
        if (c != NULL ? EVP_CIPHER_is_a(c, ccree_algs[i].under) : EVP_MD_is_a(md, ccree_algs[i].under))
            break;
    EVP_CIPHER_free(c);
    EVP_MD_free(md);
    return i < CCREE_NALGS && strcmp(ccree_algs[i].names, ccree_algs[h->mac].names) == 0 ? i : NONE;
}

/* A MAC's settings that only software serves, and their bits in sw_only. */
static const char *const sw_settings[] = { OSSL_MAC_PARAM_TLS_DATA_SIZE, OSSL_MAC_PARAM_DIGEST_NOINIT,
                                           OSSL_MAC_PARAM_DIGEST_ONESHOT };

static int set_key(struct hash_ctx *h, const OSSL_PARAM *p)
{
    unsigned char *key;

    if (p->data == NULL) /* as the default provider: the key stays */
        return 1;
    if ((key = OPENSSL_malloc(p->data_size + 1)) == NULL) /* an empty key is a key */
        return fail(h, CCREE_R_SOFTWARE, "no memory");
    if (p->data_size > 0)
        memcpy(key, p->data, p->data_size);
    OPENSSL_clear_free(h->key, h->keylen);
    h->key = key;
    h->keylen = p->data_size;
    ccree_sock_close(&h->op); /* the kernel socket holds the old key */
    h->idx = h->named; /* as the default provider: a digest or cipher takes effect with a key */
    restart(h);
    return 1;
}

/*
 * params for the software MAC, in sw (room for each of them and two more): as they are, but for
 * "properties": software fetches the digest or cipher where it found it. *row: the row of the
 * digest or cipher named; *name: its name, or NULL.
 */
static int to_sw(struct hash_ctx *h, const OSSL_PARAM params[], OSSL_PARAM *sw, size_t *row,
                 const char **name)
{
    const char *under = ccree_under(h->mac) == CCREE_OP_CIPHER ? OSSL_MAC_PARAM_CIPHER : OSSL_MAC_PARAM_DIGEST;
    const char *props = NULL, *asked = NULL;
    const OSSL_PARAM *p;
    size_t n = 0;

    for (p = params; p->key != NULL; p++) {
        if (strcmp(p->key, OSSL_MAC_PARAM_PROPERTIES) == 0) {
            if (!OSSL_PARAM_get_utf8_string_ptr(p, &asked))
                return fail(h, CCREE_R_BAD_PARAM, "properties");
            continue;
        }
        if (strcmp(p->key, under) == 0) {
            if (!OSSL_PARAM_get_utf8_string_ptr(p, name))
                return fail(h, CCREE_R_BAD_PARAM, under);
            *row = find_row(h, *name, &props);
        }
        sw[n++] = *p;
    }
    /* Properties asked for must find the digest or cipher, as in the default provider. */
    if (*name != NULL && asked != NULL
        && !ccree_fetchable(h->prov, ccree_under(h->mac), *name, asked))
        return fail(h, CCREE_R_BAD_PARAM, "no such digest or cipher with these properties");
    if (props != NULL)
        sw[n++] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_PROPERTIES, (char *)props, 0);
    sw[n] = OSSL_PARAM_construct_end();
    if (n > 0 && !EVP_MAC_CTX_set_params(h->soft_mac, sw)) {
        CCREE_RAISE(h->prov, CCREE_R_BAD_PARAM, "%s: %s %s", ccree_algs[h->mac].names,
                    *name != NULL ? under : "settings", *name != NULL ? *name : "refused");
        return 0;
    }
    return 1;
}

/* Whether the software MAC takes data, asked of a copy (a TLS HMAC takes an update as a record). */
static int sw_keyed(const struct hash_ctx *h)
{
    EVP_MAC_CTX *t = EVP_MAC_CTX_dup(h->soft_mac);
    int ok = t != NULL && EVP_MAC_update(t, NULL, 0);

    EVP_MAC_CTX_free(t);
    return ok;
}

/* Settings go to the software MAC first; then this context follows: its row, key and settings. */
static int mac_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    struct hash_ctx *h = vctx;
    const OSSL_PARAM *p;
    OSSL_PARAM *sw;
    const char *name = NULL;
    size_t i, n = 0, row = h->named;
    uint64_t v;
    int ok;

    for (p = params; p != NULL && p->key != NULL; p++)
        n++;
    if (n == 0)
        return 1;
    if ((sw = OPENSSL_malloc((n + 2) * sizeof(*sw))) == NULL) /* and "properties", and the end */
        return fail(h, CCREE_R_SOFTWARE, "no memory");
    ok = to_sw(h, params, sw, &row, &name);
    OPENSSL_free(sw);
    if (!ok && OSSL_PARAM_locate_const(params, OSSL_MAC_PARAM_KEY) != NULL && !sw_keyed(h)) {
        /* the default provider's MAC refused the key and kept none (CMAC): neither do we */
        OPENSSL_clear_free(h->key, h->keylen);
        h->key = NULL;
        h->keylen = 0;
    }
    if (!ok)
        return 0;
    h->named = row;
    for (i = 0; i < sizeof(sw_settings) / sizeof(sw_settings[0]); i++)
        if ((p = OSSL_PARAM_locate_const(params, sw_settings[i])) != NULL) {
            h->sw_only &= ~(1u << i);
            if (OSSL_PARAM_get_uint64(p, &v) && v != 0)
                h->sw_only |= 1u << i;
        }
    return (p = OSSL_PARAM_locate_const(params, OSSL_MAC_PARAM_KEY)) == NULL || set_key(h, p);
}

static int mac_init(void *vctx, const unsigned char *key, size_t keylen, const OSSL_PARAM params[])
{
    struct hash_ctx *h = vctx;
    OSSL_PARAM k[] = { OSSL_PARAM_octet_string(OSSL_MAC_PARAM_KEY, (void *)key, keylen),
                       OSSL_PARAM_END };
    int kernel;

    if (!mac_set_ctx_params(h, params) || (key != NULL && !mac_set_ctx_params(h, k)))
        return 0;
    kernel = h->idx != NONE && !h->sw_only;
    if (!kernel && !h->prov->fallback)
        return fail(h, CCREE_R_NOT_OFFLOADED, "these settings run in software");
    if (kernel && !ccree_check_path(h->prov, h->idx))
        return 0;
    if (!EVP_MAC_init(h->soft_mac, NULL, 0, NULL))
        return fail(h, CCREE_R_SOFTWARE, "cannot start the MAC: is it keyed?");
    restart(h);
    return 1;
}

static int mac_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    struct hash_ctx *h = vctx;

    return EVP_MAC_CTX_get_params(h->soft_mac, params)
           || fail(h, CCREE_R_BAD_PARAM, "cannot return a parameter");
}

/* OpenSSL asks for a MAC's settings without a context: one pair of functions per MAC. */
static const OSSL_PARAM *settings(void *provctx, const char *mac, int settable)
{
    struct ccree_prov *p = provctx;
    size_t i;

    for (i = 0; ccree_op(i) != CCREE_OP_MAC || strcmp(ccree_algs[i].names, mac) != 0; i++)
        ;
    return settable ? EVP_MAC_settable_ctx_params(p->sw_mac[i])
                    : EVP_MAC_gettable_ctx_params(p->sw_mac[i]);
}

static const OSSL_PARAM *hmac_gettable(void *vctx, void *provctx)
{
    (void)vctx;
    return settings(provctx, "HMAC", 0);
}

static const OSSL_PARAM *hmac_settable(void *vctx, void *provctx)
{
    (void)vctx;
    return settings(provctx, "HMAC", 1);
}

static const OSSL_PARAM *cmac_gettable(void *vctx, void *provctx)
{
    (void)vctx;
    return settings(provctx, "CMAC", 0);
}

static const OSSL_PARAM *cmac_settable(void *vctx, void *provctx)
{
    (void)vctx;
    return settings(provctx, "CMAC", 1);
}

const OSSL_DISPATCH ccree_hmac_settings[] = {
    { OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS, (fn)hmac_gettable },
    { OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS, (fn)hmac_settable },
    { 0, NULL },
};

const OSSL_DISPATCH ccree_cmac_settings[] = {
    { OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS, (fn)cmac_gettable },
    { OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS, (fn)cmac_settable },
    { 0, NULL },
};

void *ccree_mac_newctx(struct ccree_prov *p, size_t idx)
{
    struct hash_ctx *h = hash_newctx(p, NONE, idx);

    if (h != NULL)
        h->named = NONE;
    if (h != NULL && (h->soft_mac = EVP_MAC_CTX_new(p->sw_mac[idx])) == NULL) {
        hash_freectx(h);
        return NULL;
    }
    return h;
}

const OSSL_DISPATCH ccree_mac_functions[] = {
    { OSSL_FUNC_MAC_INIT, (fn)mac_init },
    { OSSL_FUNC_MAC_UPDATE, (fn)hash_update },
    { OSSL_FUNC_MAC_FINAL, (fn)hash_final },
    { OSSL_FUNC_MAC_FREECTX, (fn)hash_freectx },
    { OSSL_FUNC_MAC_DUPCTX, (fn)hash_dupctx },
    { OSSL_FUNC_MAC_GET_CTX_PARAMS, (fn)mac_get_ctx_params },
    { OSSL_FUNC_MAC_SET_CTX_PARAMS, (fn)mac_set_ctx_params },
    { 0, NULL },
};
