/*
 * LD_PRELOAD shim for the VM tests: makes AF_ALG behave as restricted or failing kernels do,
 * and counts the keys sent to the kernel (ccree_fault_keys). CCREE_FAULT selects:
 *   bind-driver  binds of driver names (they contain '-') fail with ENOENT, as on Linux 7.2+
 *   bind-all     every bind fails with ENOENT and af_alg_restrict reads 1, as on Linux 7.3+
 *   request-eio  requests (sendmsg) of more than 4 KiB fail with EIO (the self-test at load,
 *                smaller, passes)
 *   corrupt      the first byte of every answer (recv, recvmsg) is flipped
 *   slow-kernel  every request (sendmsg) takes 2 ms more
 *   slow-software every EVP_CipherUpdate (ccree's way into the default provider) takes 2 ms more
 *   unset        no fault, only counting
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/if_alg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <openssl/evp.h>

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

__attribute__((visibility("default"))) unsigned long ccree_fault_keys;

static int fault(const char *name)
{
    const char *m = getenv("CCREE_FAULT");

    return m != NULL && strcmp(m, name) == 0;
}

static int is_alg(int fd)
{
    int domain = 0;
    socklen_t len = sizeof(domain);

    return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_ALG;
}

__attribute__((visibility("default"))) int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
    int (*real)(int, const struct sockaddr *, socklen_t) = dlsym(RTLD_NEXT, "bind");
    const struct sockaddr_alg *a = (const struct sockaddr_alg *)sa;

    if (sa->sa_family == AF_ALG
        && (fault("bind-all") || (fault("bind-driver") && strchr((const char *)a->salg_name, '-')))) {
        errno = ENOENT;
        return -1;
    }
    return real(fd, sa, len);
}

__attribute__((visibility("default"))) int setsockopt(int fd, int level, int opt, const void *v,
                                                      socklen_t len)
{
    int (*real)(int, int, int, const void *, socklen_t) = dlsym(RTLD_NEXT, "setsockopt");

    if (level == SOL_ALG && opt == ALG_SET_KEY)
        __atomic_add_fetch(&ccree_fault_keys, 1, __ATOMIC_RELAXED);
    return real(fd, level, opt, v, len);
}

__attribute__((visibility("default"))) ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    ssize_t (*real)(int, const struct msghdr *, int) = dlsym(RTLD_NEXT, "sendmsg");

    size_t len = 0, i;

    for (i = 0; i < msg->msg_iovlen; i++)
        len += msg->msg_iov[i].iov_len;
    if (fault("request-eio") && len > 4096 && is_alg(fd)) {
        errno = EIO;
        return -1;
    }
    if (fault("slow-kernel") && is_alg(fd))
        nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
    return real(fd, msg, flags);
}

__attribute__((visibility("default"))) int EVP_CipherUpdate(EVP_CIPHER_CTX *ctx, unsigned char *out,
                                                            int *outl, const unsigned char *in,
                                                            int inl)
{
    int (*real)(EVP_CIPHER_CTX *, unsigned char *, int *, const unsigned char *, int)
        = dlsym(RTLD_NEXT, "EVP_CipherUpdate");

    if (fault("slow-software"))
        nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
    return real(ctx, out, outl, in, inl);
}

__attribute__((visibility("default"))) FILE *fopen(const char *path, const char *mode)
{
    FILE *(*real)(const char *, const char *) = dlsym(RTLD_NEXT, "fopen");
    static char restricted[] = "1\n";

    if (fault("bind-all") && strcmp(path, "/proc/sys/crypto/af_alg_restrict") == 0)
        return fmemopen(restricted, sizeof(restricted) - 1, "r");
    return real(path, mode);
}

__attribute__((visibility("default"))) ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    ssize_t (*real)(int, struct msghdr *, int) = dlsym(RTLD_NEXT, "recvmsg");
    ssize_t n = real(fd, msg, flags);

    if (n > 0 && fault("corrupt") && is_alg(fd))
        *(unsigned char *)msg->msg_iov[0].iov_base ^= 1;
    return n;
}

__attribute__((visibility("default"))) ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    ssize_t (*real)(int, void *, size_t, int) = dlsym(RTLD_NEXT, "recv");
    ssize_t n = real(fd, buf, len, flags);

    if (n > 0 && fault("corrupt") && is_alg(fd))
        *(unsigned char *)buf ^= 1;
    return n;
}
