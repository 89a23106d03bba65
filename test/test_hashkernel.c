/*
 * Digests, HMAC and CMAC through the kernel: short messages (0 to 3, 63 to 65 bytes) into a
 * poisoned output, against the default provider, with the counters showing the path; a kernel
 * that fails (this program stands in for sendmsg, recv and accept4: ccree.so binds to its
 * exported definitions) never gives a wrong result with success, and with fallback = no every
 * call fails; an HMAC left unfinished in the kernel takes a digest the table lacks; offload-min =
 * auto does not time socket set-up.
 * Usage: test_hashkernel STRICT_CNF AUTO_CNF, with OPENSSL_CONF drivers = any, offload-min = 0.
 * Without AF_ALG only the short messages run (in software).
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/socket.h>
#include <time.h>

#include <cmocka.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "testutil.h"

/* --- the kernel, failing on request ------------------------------------------------------- */

enum { NONE, SEND_FAILS, SEND_SHORT, RECV_FAILS, RECV_SHORT };
static int fault, fault_in; /* the fault, and how many AF_ALG calls of its kind pass first */
static int slow_accept;     /* ms each accept4 of an AF_ALG socket takes more */

static int is_alg(int fd)
{
    int domain = 0;
    socklen_t len = sizeof(domain);

    return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 && domain == AF_ALG;
}

/* Whether this AF_ALG call of the fault's kind (send or recv) is the one to fail. */
static int now(int fd, int send)
{
    if (fault == NONE || (send != (fault == SEND_FAILS || fault == SEND_SHORT)) || !is_alg(fd))
        return 0;
    return fault_in-- == 0;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    ssize_t (*real)(int, const struct msghdr *, int) = dlsym(RTLD_NEXT, "sendmsg");
    struct msghdr half = *msg;
    struct iovec iov = { NULL, 0 };
    size_t i;

    if (!now(fd, 1))
        return real(fd, msg, flags);
    for (i = 0; i < msg->msg_iovlen && iov.iov_len < 2; i++)
        iov = msg->msg_iov[i];
    if (fault == SEND_FAILS || iov.iov_len < 2) {
        errno = EIO;
        return -1;
    }
    iov.iov_len /= 2; /* the kernel took part of the first part */
    half.msg_iov = &iov;
    half.msg_iovlen = 1;
    return real(fd, &half, flags);
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    ssize_t (*real)(int, void *, size_t, int) = dlsym(RTLD_NEXT, "recv");
    ssize_t n;

    if (!now(fd, 0))
        return real(fd, buf, len, flags);
    n = real(fd, buf, fault == RECV_SHORT ? len / 2 : len, flags);
    if (fault == RECV_SHORT || n < 0)
        return n;
    memset(buf, 0x5a, len); /* wrote, then failed */
    errno = EIO;
    return -1;
}

int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
    int (*real)(int, struct sockaddr *, socklen_t *, int) = dlsym(RTLD_NEXT, "accept4");
    struct timespec t = { 0, slow_accept * 1000000L };

    if (slow_accept && is_alg(fd))
        nanosleep(&t, NULL);
    return real(fd, sa, len, flags);
}

/* --- one message, through ccree and the default provider ---------------------------------- */

static const char *strict_cnf, *auto_cnf;
static OSSL_LIB_CTX *strict; /* fallback = no: one provider instance for the tests (OpenSSL 3.0
                              * names the error library of only the first) */
static OSSL_PROVIDER *strict_prov;
static unsigned char key[32], in[70000];
static int kernel; /* AF_ALG is here */

/* An algorithm: a digest (under NULL), or a MAC on under; its row in ccree's table. */
struct alg {
    const char *name, *under, *row;
};

static const struct alg algs[] = {
    { "SHA1", NULL, "SHA1" },          { "SHA2-224", NULL, "SHA2-224" },
    { "SHA2-256", NULL, "SHA2-256" },  { "SHA2-384", NULL, "SHA2-384" },
    { "SHA2-512", NULL, "SHA2-512" },  { "MD5", NULL, "MD5" },
    { "HMAC", "SHA1", "HMAC-SHA1" },   { "HMAC", "SHA2-256", "HMAC-SHA2-256" },
    { "HMAC", "SHA2-512", "HMAC-SHA2-512" }, { "CMAC", "AES-128-CBC", "CMAC-AES-128-CBC" },
    { "CMAC", "AES-256-CBC", "CMAC-AES-256-CBC" },
};
#define NALGS (sizeof(algs) / sizeof(algs[0]))

/* A context of a's kind: a digest's or a MAC's. */
struct ctx {
    EVP_MD_CTX *md;
    EVP_MAC_CTX *mac;
};

static int start(OSSL_LIB_CTX *lib, const struct alg *a, const char *props, struct ctx *c)
{
    OSSL_PARAM p[] = { OSSL_PARAM_utf8_string(strcmp(a->name, "CMAC") == 0 ? "cipher" : "digest",
                                              (char *)a->under, 0),
                       OSSL_PARAM_END };
    EVP_MD *md;
    EVP_MAC *m;
    int ok;

    *c = (struct ctx){ NULL, NULL };
    if (a->under == NULL) {
        md = EVP_MD_fetch(lib, a->name, props);
        ok = (c->md = EVP_MD_CTX_new()) != NULL && EVP_DigestInit_ex2(c->md, md, NULL);
        EVP_MD_free(md);
        return ok;
    }
    m = EVP_MAC_fetch(lib, a->name, props);
    ok = (c->mac = EVP_MAC_CTX_new(m)) != NULL
         && EVP_MAC_init(c->mac, key, strcmp(a->name, "CMAC") == 0 && strstr(a->under, "128") ? 16 : 32, p);
    EVP_MAC_free(m);
    return ok;
}

static int again(struct ctx *c)
{
    return c->md != NULL ? EVP_DigestInit_ex2(c->md, NULL, NULL) : EVP_MAC_init(c->mac, NULL, 0, NULL);
}

static int update(struct ctx *c, const unsigned char *b, size_t n)
{
    return c->md != NULL ? EVP_DigestUpdate(c->md, b, n) : EVP_MAC_update(c->mac, b, n);
}

/* The result into out (poisoned first): its length, or 0 on failure. */
static size_t final(struct ctx *c, unsigned char out[64])
{
    unsigned int l = 0;
    size_t m = 0;

    memset(out, 0xa5, 64);
    if (c->md != NULL)
        return EVP_DigestFinal_ex(c->md, out, &l) ? l : 0;
    return EVP_MAC_final(c->mac, out, &m, 64) ? m : 0;
}

static void done(struct ctx *c)
{
    EVP_MD_CTX_free(c->md);
    EVP_MAC_CTX_free(c->mac);
}

/* The default provider's result for in[off .. off + len). */
static size_t oracle(const struct alg *a, size_t off, size_t len, unsigned char out[64])
{
    struct ctx c;
    size_t n;

    assert_true(start(NULL, a, "provider=default", &c) && update(&c, in + off, len));
    n = final(&c, out);
    done(&c);
    assert_true(n > 0);
    return n;
}

/* Whether got (n bytes, 0 on failure) is the default provider's result for in[off, off + len). */
static int right(const struct alg *a, size_t off, size_t len, const unsigned char *got, size_t n)
{
    unsigned char want[64];
    size_t m = oracle(a, off, len, want);

    if (n == m && memcmp(got, want, m) == 0)
        return 1;
    fprintf(stderr, "%s: %zu bytes at %zu: %s\n", a->row, len, off, n ? "wrong result" : "failed");
    tu_hex(stderr, "ccree", got, n);
    tu_hex(stderr, "default", want, m);
    return 0;
}

/* Whether the error queue holds ccree's error (each printed with print); clears it. */
static int ccree_error(int print)
{
    tu_errs e, none = { 0, { 0 } };
    int i;

    tu_take_errors(&e);
    for (i = 0; print && i < e.n; i++)
        fprintf(stderr, "  error: %s\n", ERR_error_string(e.e[i], NULL));
    return tu_failure_ok("ccree", &e, &none);
}

/* --- short messages ----------------------------------------------------------------------- */

static const size_t lens[] = { 0, 1, 2, 3, 63, 64, 65 };
#define NLENS (sizeof(lens) / sizeof(lens[0]))

/*
 * Each length on a fresh context, then again with other bytes on the same context after a
 * re-init (a socket kept from the first message), and as a one-shot on a new context (a pooled
 * socket): each result right, into a poisoned buffer.
 */
static int short_messages(OSSL_PROVIDER *prov, const struct alg *a)
{
    tu_alg_info before = tu_alg(prov, a->row), after;
    unsigned char out[64];
    size_t i, n;
    int ok = 1, k;
    struct ctx c;

    for (i = 0; i < NLENS; i++)
        for (k = 0; k < 3; k++) {
            if (k != 1)
                assert_true(start(NULL, a, "provider=ccree", &c));
            else
                assert_true(again(&c));
            assert_true(lens[i] == 0 || update(&c, in + k * 100, lens[i]));
            n = final(&c, out);
            ok &= right(a, k * 100, lens[i], out, n);
            if (k != 0)
                done(&c);
        }
    after = tu_alg(prov, a->row);
    return tu_counter_rule(&before, &after, 0) && ok;
}

static void short_lengths(void **state)
{
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(NULL, "ccree");
    size_t i;
    int ok = 1;

    (void)state;
    for (i = 0; i < NALGS; i++)
        ok &= short_messages(prov, &algs[i]);
    OSSL_PROVIDER_unload(prov);
    assert_true(ok);
}

/* --- a failing kernel --------------------------------------------------------------------- */

/* A provider of its own configuration, in a library context of its own. */
static OSSL_LIB_CTX *lib_with(const char *cnf, OSSL_PROVIDER **prov)
{
    OSSL_LIB_CTX *lib = OSSL_LIB_CTX_new();

    assert_non_null(lib);
    assert_int_equal(OSSL_LIB_CTX_load_config(lib, cnf), 1);
    assert_non_null(*prov = OSSL_PROVIDER_load(lib, "ccree"));
    return lib;
}

/* A case of a kernel failure: the fault, after how many calls of its kind, the message's
 * updates (0: none), and whether ccree may still give the result (the whole message kept). */
static const struct {
    const char *name;
    int fault, after;
    size_t len[2];
    int recoverable;
} faults[] = {
    { "a one-shot's send fails", SEND_FAILS, 0, { 100, 0 }, 1 },
    { "a one-shot's send is short", SEND_SHORT, 0, { 100, 0 }, 1 },
    { "an empty message's send fails", SEND_FAILS, 0, { 0, 0 }, 1 },
    { "the second send of a long message fails", SEND_FAILS, 1, { 20000, 20000 }, 0 },
    { "the second send of a long message is short", SEND_SHORT, 1, { 20000, 20000 }, 0 },
    { "the last send of a long message fails", SEND_FAILS, 1, { 20000, 100 }, 0 },
    { "the digest's read fails after writing", RECV_FAILS, 0, { 100, 0 }, 0 },
    { "the digest's read is short", RECV_SHORT, 0, { 100, 0 }, 0 },
    { "a long message's read fails after writing", RECV_FAILS, 0, { 20000, 20000 }, 0 },
};

/* Prints what went wrong; 0. */
static int wrong(const struct alg *a, size_t f, const char *what)
{
    fprintf(stderr, "%s, %s: %s\n", a->row, faults[f].name, what);
    return 0;
}

/*
 * Fault f on one message of a, in lib (fallback: its policy): success only with the right
 * result, a failure with ccree's error; with fallback = no, failures only, and no software op;
 * then, the fault gone, the next message on the same context is right and in the kernel.
 */
static int one_fault(OSSL_LIB_CTX *lib, OSSL_PROVIDER *prov, int fallback, const struct alg *a,
                     size_t f)
{
    tu_alg_info before = tu_alg(prov, a->row), mid, after;
    unsigned char out[64];
    size_t n = 0, total = faults[f].len[0] + faults[f].len[1];
    int ok = 1;
    struct ctx c;

    assert_true(start(lib, a, "provider=ccree", &c));
    ERR_clear_error();
    fault = faults[f].fault;
    fault_in = faults[f].after;
    if (update(&c, in, faults[f].len[0]) && update(&c, in + faults[f].len[0], faults[f].len[1]))
        n = final(&c, out);
    fault = NONE;
    if (n > 0)
        ok &= right(a, 0, total, out, n);
    else if (!ccree_error(0))
        ok = wrong(a, f, "failed without ccree's error");
    mid = tu_alg(prov, a->row);
    if (n > 0 && !(fallback && faults[f].recoverable))
        ok = wrong(a, f, "succeeded");
    if (!fallback && mid.fallback_ops != before.fallback_ops)
        ok = wrong(a, f, "software ran with fallback = no");
    ERR_clear_error();
    assert_true(again(&c) && update(&c, in + 7, 300));
    n = final(&c, out);
    ok &= right(a, 7, 300, out, n);
    after = tu_alg(prov, a->row);
    if (after.offload_ops == mid.offload_ops)
        ok = wrong(a, f, "the next message did not run in the kernel");
    done(&c);
    return ok;
}

static void failing_kernel(void **state)
{
    OSSL_PROVIDER *prov;
    size_t i, f, k;
    int ok = 1;

    (void)state;
    if (!kernel)
        skip();
    prov = OSSL_PROVIDER_load(NULL, "ccree");
    for (k = 0; k < 2; k++)
        for (i = 0; i < NALGS; i++)
            for (f = 0; f < sizeof(faults) / sizeof(faults[0]); f++)
                ok &= one_fault(k ? strict : NULL, k ? strict_prov : prov, k == 0, &algs[i], f);
    OSSL_PROVIDER_unload(prov);
    assert_true(ok);
}

/* fallback = no: an HMAC given a digest the kernel lacks and a new key after its init fails. */
static void strict_after_init(void **state)
{
    const struct alg *a = &algs[7]; /* HMAC-SHA2-256 */
    OSSL_PARAM p[] = { OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA3-256", 0),
                       OSSL_PARAM_octet_string(OSSL_MAC_PARAM_KEY, key, 32), OSSL_PARAM_END };
    unsigned char out[64];
    struct ctx c;
    int ran;

    (void)state;
    if (!kernel)
        skip();
    assert_true(start(strict, a, "provider=ccree", &c));
    ran = EVP_MAC_CTX_set_params(c.mac, p) && update(&c, in, 100) && final(&c, out) > 0;
    done(&c);
    if (ran || !ccree_error(1))
        fail_msg("HMAC on SHA3-256 set after init %s with fallback = no",
                 ran ? "ran in software" : "failed without ccree's error");
}

/*
 * An HMAC message left unfinished in the kernel, then init with a key and a digest ccree's table
 * lacks: the next message runs in software, right.
 */
static void unfinished_then_other_digest(void **state)
{
    static const struct alg sha3 = { "HMAC", "SHA3-256", "HMAC-SHA3-256" };
    const struct alg *a = &algs[7]; /* HMAC-SHA2-256 */
    OSSL_PARAM p[] = { OSSL_PARAM_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA3-256", 0), OSSL_PARAM_END };
    OSSL_PROVIDER *prov;
    tu_alg_info before, after;
    unsigned char out[64];
    struct ctx c;
    size_t n;

    (void)state;
    if (!kernel)
        skip();
    prov = OSSL_PROVIDER_load(NULL, "ccree");
    before = tu_alg(prov, a->row);
    assert_true(start(NULL, a, "provider=ccree", &c) && update(&c, in, 20000));
    after = tu_alg(prov, a->row);
    assert_int_equal(after.offload_bytes - before.offload_bytes, 20000); /* in the kernel */
    assert_true(EVP_MAC_init(c.mac, key, 32, p) && update(&c, in, 100));
    n = final(&c, out);
    done(&c);
    OSSL_PROVIDER_unload(prov);
    assert_true(right(&sha3, 0, 100, out, n));
}

/* --- offload-min = auto: what is timed ---------------------------------------------------- */

/* The kernel's time (ns) for row's requests of the class starting at bytes, or 0. */
static unsigned long kernel_ns(OSSL_PROVIDER *prov, const char *row, size_t bytes)
{
    char *s = tu_get_string(prov, "ccree-timings"), *line, *f, want[32];
    unsigned long k = 0;
    size_t n = strlen(row);

    assert_non_null(s);
    snprintf(want, sizeof(want), "\t%zu:", bytes);
    for (line = strtok(s, "\n"); line != NULL; line = strtok(NULL, "\n"))
        if (strncmp(line, row, n) == 0 && line[n] == '\t' && (f = strstr(line, want)) != NULL)
            k = strtoul(f + strlen(want), NULL, 10);
    free(s);
    return k;
}

/* Socket set-up 100 ms slower: the first HMAC of 100 bytes (measured in the kernel) is timed
 * without it. */
static void setup_not_timed(void **state)
{
    const struct alg *a = &algs[7];
    OSSL_PROVIDER *prov;
    OSSL_LIB_CTX *lib;
    unsigned char out[64];
    unsigned long ns;
    struct ctx c;

    (void)state;
    if (!kernel)
        skip();
    lib = lib_with(auto_cnf, &prov);
    slow_accept = 100;
    assert_true(start(lib, a, "provider=ccree", &c) && update(&c, in, 100) && final(&c, out) > 0);
    slow_accept = 0;
    done(&c);
    ns = kernel_ns(prov, a->row, 64);
    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(lib);
    printf("%s, 100 bytes, kernel: %lu ns\n", a->row, ns);
    if (ns == 0 || ns >= 50000000)
        fail_msg("the kernel's time %lu ns includes the socket's set-up (100 ms)", ns);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(short_lengths), cmocka_unit_test(failing_kernel),
                                        cmocka_unit_test(strict_after_init),
                                        cmocka_unit_test(unfinished_then_other_digest),
                                        cmocka_unit_test(setup_not_timed) };
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(NULL, "ccree");
    size_t i;
    int rc;

    if (argc != 3 || prov == NULL) {
        fprintf(stderr, "usage: %s STRICT_CNF AUTO_CNF, with ccree loaded through OPENSSL_CONF\n", argv[0]);
        return 1;
    }
    strict_cnf = argv[1];
    auto_cnf = argv[2];
    kernel = strstr(tu_alg(prov, "SHA1").reason, "no AF_ALG") == NULL;
    for (i = 0; i < sizeof(key); i++)
        key[i] = (unsigned char)(i * 7 + 1);
    for (i = 0; i < sizeof(in); i++)
        in[i] = (unsigned char)(i * 31 + (i >> 8));
    if (kernel)
        strict = lib_with(strict_cnf, &strict_prov);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    OSSL_PROVIDER_unload(strict_prov);
    OSSL_LIB_CTX_free(strict);
    OSSL_PROVIDER_unload(prov);
    return rc;
}
