/*
 * AF_ALG requests on raw sockets. Every socket is CLOEXEC; one keyed op socket per
 * context; a cipher request is one sendmsg (op, IV, AAD length and data) and one recvmsg;
 * an AEAD authentication failure is -EBADMSG.
 */
#include "afalg.h"

#include <errno.h>
#include <linux/if_alg.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

static const char *const kind_type[] = { [CCREE_SKCIPHER] = "skcipher", [CCREE_HASH] = "hash",
                                         [CCREE_AEAD] = "aead" };

const char *afalg_type(enum ccree_kind kind)
{
    return kind_type[kind];
}

int afalg_available(void)
{
    int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

int afalg_bind(enum ccree_kind kind, const char *name)
{
    struct sockaddr_alg sa = { .salg_family = AF_ALG };
    int tfm, err;

    strncpy((char *)sa.salg_type, kind_type[kind], sizeof(sa.salg_type) - 1);
    strncpy((char *)sa.salg_name, name, sizeof(sa.salg_name) - 1);
    tfm = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (tfm < 0)
        return -errno;
    if (bind(tfm, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        err = -errno;
        close(tfm);
        return err;
    }
    return tfm;
}

/*
 * recvmsg maps the caller's pages as the destination until the socket's receive budget
 * (net.core.rmem_default) is spent, and the rest of the answer comes at the next recvmsg. Cipher
 * and AEAD sockets ask for a few requests' worth, up to rmem_max. An AEAD, XTS or CBC-CTS answer
 * cut short is no prefix (for AEAD the kernel runs a shorter message), so their sockets must get
 * a whole request's: the kernel maps while a page of budget is left, counting bytes.
 */
static int answer_room(int op, int whole)
{
    int want = 4 * AFALG_MAX_REQUEST, got = 0;
    socklen_t len = sizeof(got);
    long page = sysconf(_SC_PAGESIZE);

    setsockopt(op, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
    if (!whole)
        return 0;
    if (getsockopt(op, SOL_SOCKET, SO_RCVBUF, &got, &len) < 0)
        return -errno;
    return (got & ~(page - 1)) >= AFALG_MAX_REQUEST + page ? 0 : -ENOBUFS;
}

int afalg_open(int tfm, enum ccree_kind kind, const unsigned char *key, size_t keylen,
               size_t authsize, int whole)
{
    int op, err;

    if ((key != NULL && setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, keylen) < 0)
        || (authsize != 0 && setsockopt(tfm, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, authsize) < 0)
        || (op = accept4(tfm, NULL, NULL, SOCK_CLOEXEC)) < 0) {
        err = -errno;
        close(tfm);
        return err;
    }
    close(tfm); /* the op socket keeps the transform and its key alive */
    if (kind != CCREE_HASH && (err = answer_room(op, whole)) != 0) {
        close(op);
        return err;
    }
    return op;
}

int afalg_clone(int op)
{
    int fd = accept4(op, NULL, NULL, SOCK_CLOEXEC);

    return fd < 0 ? -errno : fd;
}

void afalg_close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void put_cmsg(struct msghdr *msg, struct cmsghdr **c, int type, const void *data, size_t len)
{
    *c = *c == NULL ? CMSG_FIRSTHDR(msg) : CMSG_NXTHDR(msg, *c);
    (*c)->cmsg_level = SOL_ALG;
    (*c)->cmsg_type = type;
    (*c)->cmsg_len = CMSG_LEN(len);
    memcpy(CMSG_DATA(*c), data, len);
}

/* iov from byte off of out (at most 3 pieces). */
static int skip(const struct iovec *out, int nout, size_t off, struct iovec *iov)
{
    int i, k = 0;

    for (i = 0; i < nout; i++) {
        if (off >= out[i].iov_len) {
            off -= out[i].iov_len;
            continue;
        }
        iov[k].iov_base = (char *)out[i].iov_base + off;
        iov[k++].iov_len = out[i].iov_len - off;
        off = 0;
    }
    return k;
}

/* The answer, over as many reads as the kernel takes (see struct afalg_req). */
static int read_answer(int op, struct afalg_req *r)
{
    struct iovec iov[3];

    while (r->done < r->outlen) {
        struct msghdr m = { .msg_iov = iov, .msg_iovlen = skip(r->out, r->nout, r->done, iov) };
        /* MSG_DONTWAIT: asking for more than the request produced must not block forever. */
        ssize_t n = recvmsg(op, &m, MSG_DONTWAIT);

        if (n < 0)
            return -errno;
        if (n == 0 || (size_t)n > r->outlen - r->done)
            return -EIO;
        if ((size_t)n < r->outlen - r->done && (r->unit == 0 || n % r->unit != 0)) {
            if (r->unit != 0)
                r->done += n - n % r->unit; /* the whole units came right */
            return -EIO;
        }
        r->done += n;
    }
    return 0;
}

size_t afalg_ccm_iv(unsigned char kiv[16], const unsigned char *nonce, size_t len)
{
    memset(kiv, 0, 16);
    kiv[0] = (unsigned char)(14 - len);
    memcpy(kiv + 1, nonce, len);
    return 16;
}

int afalg_cipher(int op, struct afalg_req *r)
{
    union {
        char buf[2 * CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(struct af_alg_iv) + 16)];
        struct cmsghdr align;
    } ctl;
    struct msghdr msg = { .msg_iov = (struct iovec *)r->in, .msg_iovlen = r->nin,
                          .msg_control = ctl.buf };
    struct cmsghdr *c = NULL;
    struct { struct af_alg_iv h; unsigned char iv[16]; } aiv;
    uint32_t op_type = r->enc ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT, alen = (uint32_t)r->assoclen;
    size_t ivlen = r->ivlen, assoclen = r->assoclen;
    ssize_t n;

    r->done = 0;
    r->sent = 0;
    if (r->outlen == 0)
        return -EINVAL;
    memset(&ctl, 0, sizeof(ctl));
    msg.msg_controllen = CMSG_SPACE(sizeof(uint32_t)) + (ivlen ? CMSG_SPACE(sizeof(aiv.h) + ivlen) : 0)
                         + (assoclen ? CMSG_SPACE(sizeof(uint32_t)) : 0);
    put_cmsg(&msg, &c, ALG_SET_OP, &op_type, sizeof(op_type));
    if (ivlen) {
        aiv.h.ivlen = (uint32_t)ivlen;
        memcpy(aiv.iv, r->iv, ivlen);
        put_cmsg(&msg, &c, ALG_SET_IV, &aiv, sizeof(aiv.h) + ivlen);
    }
    if (assoclen)
        put_cmsg(&msg, &c, ALG_SET_AEAD_ASSOCLEN, &alen, sizeof(alen));
    n = sendmsg(op, &msg, 0);
    if (n < 0)
        return -errno;
    if ((size_t)n != r->inlen)
        return -EIO; /* the kernel holds part of it, and writes nothing until it has all */
    r->sent = 1;
    return read_answer(op, r);
}

int afalg_hash_send(int op, const struct iovec *in, int nin, int more)
{
    struct msghdr msg = { .msg_iov = (struct iovec *)in, .msg_iovlen = nin };
    size_t len = 0;
    ssize_t n;
    int i;

    for (i = 0; i < nin; i++)
        len += in[i].iov_len;
    n = sendmsg(op, &msg, more ? MSG_MORE : 0);
    if (n < 0)
        return -errno;
    return (size_t)n == len ? 0 : -EIO;
}

/* Reads the digest; the socket is then ready for a new message. */
int afalg_hash_read(int op, unsigned char *md, size_t mdlen)
{
    ssize_t n = recv(op, md, mdlen, 0);

    if (n < 0)
        return -errno;
    return (size_t)n == mdlen ? 0 : -EIO;
}
