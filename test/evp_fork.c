/* test_evp: fork() with live contexts. */
#include "evp.h"

/* ------------------------------------------------------------------ */
/* 13. fork() with live contexts                                        */
/* ------------------------------------------------------------------ */

#define FORK_CBC   3            /* AES-128-CBC */
#define FORK_CTR   8            /* AES-256-CTR */
#define FORK_MD    2            /* SHA2-256 */
#define FORK_PRE   (100 * 1024)
#define FORK_TAIL  (200 * 1024)

typedef struct {
    EVP_CIPHER_CTX *cbc, *ctr;
    EVP_MD_CTX *md;
    unsigned char key_cbc[32], iv_cbc[16], key_ctr[32], iv_ctr[16];
    size_t pre_cbc, pre_ctr, pre_md;   /* input bytes fed before fork */
    unsigned char *out_cbc, *out_ctr;  /* output so far */
    size_t outl_cbc, outl_ctr;
} fork_state;

/*
 * Continue the three contexts with process-specific data and compare with
 * the oracle computed from scratch in this process. Plain C (no cmocka):
 * runs in the child too. Returns 0 on success, else a bitmask.
 */
static int fork_continue(fork_state *f, int child)
{
    unsigned char *msg = malloc(FORK_PRE + FORK_TAIL + 64);
    unsigned char *ref = malloc(FORK_PRE + FORK_TAIL + 64);
    unsigned char d[EVP_MAX_MD_SIZE], e[EVP_MAX_MD_SIZE];
    unsigned int dl = 0, el = 0;
    int fails = 0, k;
    tu_rng r;

    if (msg == NULL || ref == NULL)
        return 0x80;
    rng_for(&r, child ? 1301 : 1300, 0);
    for (k = 0; k < 3; k++) {
        size_t pre = k == 0 ? f->pre_cbc : k == 1 ? f->pre_ctr : f->pre_md;
        size_t total = pre + FORK_TAIL, off = pre;
        EVP_CIPHER_CTX *ctx = k == 0 ? f->cbc : f->ctr;
        unsigned char *out = k == 0 ? f->out_cbc : f->out_ctr;
        size_t outl = k == 0 ? f->outl_cbc : f->outl_ctr, rl;
        int ok = 1, l;

        /* same prefix as before fork, then data unique to this process */
        memcpy(msg, g_data, pre);
        tu_rng_fill(&r, msg + pre, FORK_TAIL);
        while (ok && off < total) {
            size_t n = tu_rng_range(&r, 1, 70000);

            if (n > total - off)
                n = total - off;
            if (k == 2) {
                ok = EVP_DigestUpdate(f->md, msg + off, n) == 1;
            } else {
                ok = EVP_EncryptUpdate(ctx, out + outl, &l, msg + off,
                                       (int)n) == 1;
                outl += ok ? (size_t)l : 0;
            }
            off += n;
        }
        if (k == 2) {
            ok = ok && EVP_DigestFinal_ex(f->md, d, &dl) == 1;
            ok = ok && EVP_Digest(msg, total, e, &el, orac_m[FORK_MD], NULL);
            if (!ok || dl != el || memcmp(d, e, dl) != 0)
                fails |= 4;
            continue;
        }
        ok = ok && EVP_EncryptFinal_ex(ctx, out + outl, &l) == 1;
        outl += ok ? (size_t)l : 0;
        rl = 0;
        ok = ok && oracle_crypt_plain(k == 0 ? FORK_CBC : FORK_CTR, 1, 1,
                                      k == 0 ? f->key_cbc : f->key_ctr,
                                      k == 0 ? f->iv_cbc : f->iv_ctr, msg,
                                      total, ref, &rl);
        if (!ok || rl != outl || memcmp(out, ref, rl) != 0)
            fails |= 1 << k;
    }
    if (fails)
        fprintf(stderr, "fork: %s: mismatch in%s%s%s (seed 0x%llx)\n",
                child ? "child" : "parent", fails & 1 ? " AES-128-CBC" : "",
                fails & 2 ? " AES-256-CTR" : "", fails & 4 ? " SHA2-256" : "",
                (unsigned long long)g_seed);
    free(msg);
    free(ref);
    return fails;
}

void test_fork(void **state)
{
    fork_state f;
    csnap s[3];
    int l, status = 0, pfails, barrier[2];
    pid_t pid;
    char b;

    (void)state;
    memset(&f, 0, sizeof(f));
    where("test=fork");
    counters_begin(&s[0], ciphers[FORK_CBC].name, 1);
    counters_begin(&s[1], ciphers[FORK_CTR].name, 1);
    counters_begin(&s[2], mds[FORK_MD].name, 1);
    for (l = 0; l < 3; l++) /* the child's kernel requests count in its own provider */
        s[l].a.sim_messages = -1;
    assert_int_equal(RAND_bytes(f.key_cbc, 32), 1);
    assert_int_equal(RAND_bytes(f.iv_cbc, 16), 1);
    assert_int_equal(RAND_bytes(f.key_ctr, 32), 1);
    assert_int_equal(RAND_bytes(f.iv_ctr, 16), 1);
    f.out_cbc = malloc(FORK_PRE + FORK_TAIL + 64);
    f.out_ctr = malloc(FORK_PRE + FORK_TAIL + 64);
    f.cbc = EVP_CIPHER_CTX_new();
    f.ctr = EVP_CIPHER_CTX_new();
    f.md = EVP_MD_CTX_new();
    assert_true(f.out_cbc && f.out_ctr && f.cbc && f.ctr && f.md);
    f.pre_cbc = FORK_PRE + 7;           /* partial block buffered */
    f.pre_ctr = FORK_PRE + 5;           /* partial keystream block */
    f.pre_md = FORK_PRE + 3;
    CHECK(EVP_EncryptInit_ex2(f.cbc, subj_c[FORK_CBC], f.key_cbc, f.iv_cbc,
                              NULL) == 1, "init cbc");
    CHECK(EVP_EncryptUpdate(f.cbc, f.out_cbc, &l, g_data, (int)f.pre_cbc)
          == 1, "update cbc");
    f.outl_cbc = (size_t)l;
    CHECK(EVP_EncryptInit_ex2(f.ctr, subj_c[FORK_CTR], f.key_ctr, f.iv_ctr,
                              NULL) == 1, "init ctr");
    CHECK(EVP_EncryptUpdate(f.ctr, f.out_ctr, &l, g_data, (int)f.pre_ctr)
          == 1, "update ctr");
    f.outl_ctr = (size_t)l;
    CHECK(EVP_DigestInit_ex2(f.md, subj_m[FORK_MD], NULL) == 1, "md init");
    CHECK(EVP_DigestUpdate(f.md, g_data, f.pre_md) == 1, "md update");

    assert_int_equal(pipe(barrier), 0);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int rc;

        /* never return into cmocka in the child: default signal actions */
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        signal(SIGILL, SIG_DFL);
        signal(SIGFPE, SIG_DFL);
        signal(SIGSYS, SIG_DFL);
        signal(SIGABRT, SIG_DFL);
        close(barrier[1]);
        /* start together with the parent, to overlap their kernel use */
        if (read(barrier[0], &b, 1) < 0)
            _exit(0x40);
        rc = fork_continue(&f, 1);
        EVP_CIPHER_CTX_free(f.cbc);
        EVP_CIPHER_CTX_free(f.ctr);
        EVP_MD_CTX_free(f.md);
        fflush(stderr);
        exit(rc);                       /* runs OpenSSL's atexit cleanup */
    }
    close(barrier[0]);
    close(barrier[1]);                  /* releases the child */
    pfails = fork_continue(&f, 0);
    CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
    EVP_CIPHER_CTX_free(f.cbc);
    EVP_CIPHER_CTX_free(f.ctr);
    EVP_MD_CTX_free(f.md);
    free(f.out_cbc);
    free(f.out_ctr);
    CHECK(WIFEXITED(status), "child died (signal %d)",
          WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    CHECK(WEXITSTATUS(status) == 0, "child results differ from the oracle "
          "(mask 0x%x)", WEXITSTATUS(status));
    CHECK(pfails == 0, "parent results differ from the oracle (mask 0x%x)",
          pfails);
    counters_end(&s[0]);
    counters_end(&s[1]);
    counters_end(&s[2]);
}
