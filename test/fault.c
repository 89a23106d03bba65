/*
 * LD_PRELOAD shim for the VM tests: makes AF_ALG behave as restricted or failing kernels do,
 * and counts the keys sent to the kernel (ccree_fault_keys). CCREE_FAULT selects:
 *   bind-driver  binds of driver names (they contain '-') fail with ENOENT, as on Linux 7.2+
 *   bind-driver-testing  as bind-driver, and /proc/crypto says every implementation but the
 *                *-ccree ones is still in its self-test (selftest: unknown), as Linux 7.3 tests
 *                in the background what was registered at boot
 *   bind-all     every bind fails with ENOENT and af_alg_restrict reads 1, as on Linux 7.3+
 *   bind-unprivileged  af_alg_restrict reads 1, and a process that is not root binds only sha1
 *                and xts(aes) (ENOENT for other names), as Linux 7.3's unprivileged allowlist
 *   request-eio  requests (sendmsg) of more than 4 KiB fail with EIO (the self-test at load,
 *                smaller, passes)
 *   corrupt      the first byte of every answer (recv, recvmsg) is flipped
 *   any-tag      an answer refused with EBADMSG comes back whole instead: a driver that
 *                accepts any tag
 *   slow-kernel  every request (sendmsg) takes 2 ms more
 *   slow-software AES-128-CBC's update and cipher functions in the software provider, as ccree
 *                finds them there
 *                (OSSL_PROVIDER_query_operation), takes 2 ms more
 *   unset        no fault, only counting
 * and, on requests of AF_ALG op sockets only once armed, the faults a kernel produces:
 *   recv-short        recvmsg gets the destination cut to half its length, rounded down to 16
 *                     bytes (none where that is 0): the kernel writes what fits and keeps the
 *                     rest queued, as when the socket's receive budget (rmem) is spent
 *   recv-write-eio    the kernel writes the whole answer, then recvmsg or recv reports EIO
 *                     (recv: a digest, which the kernel copies out whole, is never short)
 *   recv-garbage-eio  as recv-write-eio, with the first 16 bytes of each destination buffer the
 *                     answer reached inverted (a DMA error after data moved)
 *   recv-short-eio    recv-short on the first read of a request, recv-write-eio on the next
 *   recv-ebadmsg      the kernel writes the answer, then EBADMSG (for a non-AEAD request)
 *   recv-enomem       recvmsg or recv fails with ENOMEM before the kernel runs the request
 *   send-ebusy, send-eagain, send-enomem   sendmsg fails with that error, nothing sent
 * Arming: the variable ccree_fault_armed set non-zero (tests set it through dlsym after loading
 * the provider, whose self-test at load must pass), or ccree_fault_mode set non-empty (it then
 * replaces CCREE_FAULT). ccree_fault_skip calls of the fault's kind (sendmsg for send-*, recvmsg
 * and recv for recv-*) pass first, counted down; then, with CCREE_FAULT_EVERY=N, one call in N
 * (default every call) gets the fault, until disarmed. ccree_fault_hits counts faults applied.
 * The counters are not atomic: the tests and the fuzzer that use them have one thread.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/if_alg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_dispatch.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

#define EXPORT __attribute__((visibility("default")))

EXPORT unsigned long ccree_fault_keys;
EXPORT int ccree_fault_armed;
EXPORT char ccree_fault_mode[32];
EXPORT unsigned long ccree_fault_skip;
EXPORT unsigned long ccree_fault_hits;
static int fresh; /* an AF_ALG request was sent and its answer not read yet */

static const char *mode(void)
{
    const char *m = getenv("CCREE_FAULT");

    return ccree_fault_mode[0] != '\0' ? ccree_fault_mode : m != NULL ? m : "";
}

static int fault(const char *name)
{
    return strcmp(mode(), name) == 0;
}

static int is_alg(int fd)
{
    int domain = 0;
    socklen_t len = sizeof(domain);

    return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_ALG;
}

/* The faults on requests: the error, and whether the kernel runs the request first. */
static const struct request_fault {
    const char *name;
    int err, runs;
} request_faults[] = {
    { "recv-short", 0, 1 },       { "recv-write-eio", EIO, 1 },   { "recv-garbage-eio", EIO, 1 },
    { "recv-short-eio", EIO, 1 }, { "recv-ebadmsg", EBADMSG, 1 }, { "recv-enomem", ENOMEM, 0 },
    { "send-ebusy", EBUSY, 0 },   { "send-eagain", EAGAIN, 0 },   { "send-enomem", ENOMEM, 0 },
};

/* The armed fault of this kind ("send-" or "recv-") for this call on fd, or NULL. */
static const struct request_fault *armed(int fd, const char *kind)
{
    static unsigned long seen;
    const char *m = mode(), *every = getenv("CCREE_FAULT_EVERY");
    unsigned long n = every != NULL ? strtoul(every, NULL, 10) : 1;
    size_t i;

    for (i = 0; i < sizeof(request_faults) / sizeof(request_faults[0])
                && strcmp(m, request_faults[i].name) != 0; i++)
        ;
    if ((!ccree_fault_armed && ccree_fault_mode[0] == '\0')
        || i == sizeof(request_faults) / sizeof(request_faults[0]) || strncmp(m, kind, 5) != 0
        || !is_alg(fd))
        return NULL;
    if (ccree_fault_skip > 0) {
        ccree_fault_skip--;
        return NULL;
    }
    return n <= 1 || seen++ % n == 0 ? &request_faults[i] : NULL;
}

/* The fault's error, counted. */
static ssize_t strike(const struct request_fault *f)
{
    ccree_fault_hits++;
    errno = f->err;
    return -1;
}

EXPORT int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
    int (*real)(int, const struct sockaddr *, socklen_t) = dlsym(RTLD_NEXT, "bind");
    const struct sockaddr_alg *a = (const struct sockaddr_alg *)sa;

    const char *name = (const char *)a->salg_name;

    if (sa->sa_family == AF_ALG
        && (fault("bind-all")
            || ((fault("bind-driver") || fault("bind-driver-testing")) && strchr(name, '-'))
            || (fault("bind-unprivileged") && geteuid() != 0 && strcmp(name, "sha1") != 0
                && strcmp(name, "xts(aes)") != 0))) {
        errno = ENOENT;
        return -1;
    }
    return real(fd, sa, len);
}

EXPORT int setsockopt(int fd, int level, int opt, const void *v,
                                                      socklen_t len)
{
    int (*real)(int, int, int, const void *, socklen_t) = dlsym(RTLD_NEXT, "setsockopt");

    if (level == SOL_ALG && opt == ALG_SET_KEY)
        __atomic_add_fetch(&ccree_fault_keys, 1, __ATOMIC_RELAXED);
    return real(fd, level, opt, v, len);
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    ssize_t (*real)(int, const struct msghdr *, int) = dlsym(RTLD_NEXT, "sendmsg");
    const struct request_fault *f = armed(fd, "send-");
    size_t len = 0, i;

    if (f != NULL)
        return strike(f);
    for (i = 0; i < msg->msg_iovlen; i++)
        len += msg->msg_iov[i].iov_len;
    if (fault("request-eio") && len > 4096 && is_alg(fd)) {
        errno = EIO;
        return -1;
    }
    if (fault("slow-kernel") && is_alg(fd))
        nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
    fresh = is_alg(fd);
    return real(fd, msg, flags);
}

static OSSL_FUNC_cipher_update_fn *cbc_update;
static OSSL_FUNC_cipher_cipher_fn *cbc_cipher;

static int slow_update(void *ctx, unsigned char *out, size_t *outl, size_t outsize,
                       const unsigned char *in, size_t inl)
{
    nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
    return cbc_update(ctx, out, outl, outsize, in, inl);
}

static int slow_cipher(void *ctx, unsigned char *out, size_t *outl, size_t outsize,
                       const unsigned char *in, size_t inl)
{
    nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
    return cbc_cipher(ctx, out, outl, outsize, in, inl);
}

/* The software provider's ciphers with AES-128-CBC's update and cipher functions made slow;
 * the rest as they are. */
static OSSL_ALGORITHM slow_ciphers[512];
static OSSL_DISPATCH slow_cbc[64];
static const OSSL_ALGORITHM *queried; /* what slow_ciphers copies, for the unquery */

EXPORT const OSSL_ALGORITHM *OSSL_PROVIDER_query_operation(const OSSL_PROVIDER *prov,
                                                           int operation_id, int *no_cache)
{
    const OSSL_ALGORITHM *(*real)(const OSSL_PROVIDER *, int, int *)
        = dlsym(RTLD_NEXT, "OSSL_PROVIDER_query_operation");
    const OSSL_ALGORITHM *all = real(prov, operation_id, no_cache);
    size_t i, j;

    if (!fault("slow-software") || operation_id != OSSL_OP_CIPHER || all == NULL)
        return all;
    for (i = 0; all[i].algorithm_names != NULL; i++) {
        if (i + 1 == sizeof(slow_ciphers) / sizeof(slow_ciphers[0]))
            abort(); /* the shim's table is too small: fail loudly */
        slow_ciphers[i] = all[i];
        if (strncmp(all[i].algorithm_names, "AES-128-CBC:", 12) != 0)
            continue;
        for (j = 0; (slow_cbc[j] = all[i].implementation[j]).function_id != 0; j++) {
            if (j + 1 == sizeof(slow_cbc) / sizeof(slow_cbc[0]))
                abort();
            if (slow_cbc[j].function_id == OSSL_FUNC_CIPHER_UPDATE) {
                cbc_update = OSSL_FUNC_cipher_update(&slow_cbc[j]);
                slow_cbc[j].function = (void (*)(void))slow_update;
            } else if (slow_cbc[j].function_id == OSSL_FUNC_CIPHER_CIPHER) {
                cbc_cipher = OSSL_FUNC_cipher_cipher(&slow_cbc[j]);
                slow_cbc[j].function = (void (*)(void))slow_cipher;
            }
        }
        slow_ciphers[i].implementation = slow_cbc;
    }
    slow_ciphers[i] = all[i];
    queried = all;
    return slow_ciphers;
}

EXPORT void OSSL_PROVIDER_unquery_operation(const OSSL_PROVIDER *prov, int operation_id,
                                            const OSSL_ALGORITHM *algs)
{
    void (*real)(const OSSL_PROVIDER *, int, const OSSL_ALGORITHM *)
        = dlsym(RTLD_NEXT, "OSSL_PROVIDER_unquery_operation");

    real(prov, operation_id, algs == slow_ciphers ? queried : algs);
}

/* /proc/crypto (f) with every implementation but the *-ccree ones in its self-test. */
static FILE *testing(FILE *f)
{
    char line[256], driver[128] = "";
    FILE *out;

    if (f == NULL || (out = tmpfile()) == NULL)
        return f;
    while (fgets(line, sizeof(line), f) != NULL) {
        size_t n = strlen(driver);

        if (strncmp(line, "driver", 6) == 0)
            sscanf(line, "driver : %127s", driver);
        else if (strncmp(line, "selftest", 8) == 0 && (n < 6 || strcmp(driver + n - 6, "-ccree")))
            snprintf(line, sizeof(line), "selftest     : unknown\n");
        fputs(line, out);
    }
    fclose(f);
    rewind(out);
    return out;
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
    FILE *(*real)(const char *, const char *) = dlsym(RTLD_NEXT, "fopen");
    static char restricted[] = "1\n";

    if ((fault("bind-all") || fault("bind-unprivileged"))
        && strcmp(path, "/proc/sys/crypto/af_alg_restrict") == 0)
        return fmemopen(restricted, sizeof(restricted) - 1, "r");
    if (fault("bind-driver-testing") && strcmp(path, "/proc/crypto") == 0)
        return testing(real(path, mode));
    return real(path, mode);
}

/* The destination cut to its first len bytes, in cut[] (at most 8 buffers, as ccree sends). */
static size_t cut_iov(const struct msghdr *msg, size_t len, struct iovec *cut)
{
    size_t i;

    for (i = 0; i < msg->msg_iovlen && i < 8 && len > 0; i++) {
        cut[i] = msg->msg_iov[i];
        if (cut[i].iov_len > len)
            cut[i].iov_len = len;
        len -= cut[i].iov_len;
    }
    return i;
}

/* The real recvmsg, or recv (a digest: one buffer). */
static ssize_t real_recv(int fd, struct msghdr *msg, int flags, int digest)
{
    ssize_t (*rm)(int, struct msghdr *, int) = dlsym(RTLD_NEXT, "recvmsg");
    ssize_t (*r)(int, void *, size_t, int) = dlsym(RTLD_NEXT, "recv");

    return digest ? r(fd, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len, flags)
                  : rm(fd, msg, flags);
}

/* The fault f on a read of an answer: the count to return, or -1 with errno set. */
static ssize_t recv_fault(const struct request_fault *f, int fd, struct msghdr *msg, int flags,
                          int digest)
{
    struct iovec cut[8];
    struct msghdr m = *msg;
    size_t want = 0, i, k;
    ssize_t n, left;

    for (i = 0; i < msg->msg_iovlen; i++)
        want += msg->msg_iov[i].iov_len;
    if (!f->runs)
        return strike(f);
    /* recv-short-eio: short on the first read of a request, failing on the next */
    if (f->err == 0 || (strcmp(f->name, "recv-short-eio") == 0 && fresh)) {
        /* a digest is copied out whole, and the kernel fills a page at least */
        if (digest || (want / 2 & ~(size_t)15) == 0 || msg->msg_iovlen > 8)
            return real_recv(fd, msg, flags, digest);
        m.msg_iov = cut;
        m.msg_iovlen = cut_iov(msg, want / 2 & ~(size_t)15, cut);
        ccree_fault_hits++;
        return real_recv(fd, &m, flags, 0);
    }
    if ((n = real_recv(fd, msg, flags, digest)) < 0)
        return n;
    /* recv-garbage-eio: the first 16 bytes the answer reached in each buffer inverted */
    for (i = 0, left = n; !strcmp(f->name, "recv-garbage-eio") && left > 0; i++) {
        for (k = 0; k < msg->msg_iov[i].iov_len && k < 16 && (ssize_t)k < left; k++)
            ((unsigned char *)msg->msg_iov[i].iov_base)[k] ^= 0xff;
        left -= (ssize_t)msg->msg_iov[i].iov_len;
    }
    return strike(f);
}

/* A read of an answer: recvmsg, or recv for a digest. */
static ssize_t answer(int fd, struct msghdr *msg, int flags, int digest)
{
    const struct request_fault *f = armed(fd, "recv-");
    ssize_t n = f != NULL ? recv_fault(f, fd, msg, flags, digest)
                          : real_recv(fd, msg, flags, digest);

    fresh = 0;
    if (n < 0 && errno == EBADMSG && fault("any-tag") && is_alg(fd)) {
        size_t i;

        for (i = 0, n = 0; i < msg->msg_iovlen; i++)
            n += (ssize_t)msg->msg_iov[i].iov_len;
    }
    if (n > 0 && fault("corrupt") && is_alg(fd))
        *(unsigned char *)msg->msg_iov[0].iov_base ^= 1;
    return n;
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    return answer(fd, msg, flags, 0);
}

EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    struct iovec iov = { buf, len };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

    return answer(fd, &msg, flags, 1);
}
