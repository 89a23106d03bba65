/*
 * The statistics directory (stats = DIR): nothing planted in DIR redirects, reads or kills a
 * process; ccree-info --stats reads only what it can parse, without blocking; fork during the
 * statistics' set-up does not deadlock; prune leaves the files of other PID namespaces; no
 * count is lost while the counters move into the file. Run as root (it drops to nobody in
 * children); each case runs in child processes, as a new process using the provider would.
 * Usage: test_stats MODULE CCREE_INFO (MODULE: ccree.so).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/core_dispatch.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "sock.h"
#include "stats.h"
#include "testutil.h"

static char **info; /* ccree-info's command line (a cross build's emulator first), NULL-ended */
static OSSL_provider_init_fn *ccree_init;
static OSSL_FUNC_core_get_params_fn *core_get_params;
static const char *stats_setting; /* "stats" for the next load; NULL for none */

/* ------------------------------------------------------------------ */
/* the provider, loaded with a stats setting                            */
/* ------------------------------------------------------------------ */

/* The core's get_params, answering "stats" with stats_setting and "offer" with all (work()
 * runs SHA2-256 in ccree also where it is not offloaded). */
static int get_params(const OSSL_CORE_HANDLE *h, OSSL_PARAM params[])
{
    OSSL_PARAM *p = OSSL_PARAM_locate(params, "stats"), *o = OSSL_PARAM_locate(params, "offer");

    if (!core_get_params(h, params))
        return 0;
    return (o == NULL || OSSL_PARAM_set_utf8_ptr(o, "all"))
           && (p == NULL || stats_setting == NULL || OSSL_PARAM_set_utf8_ptr(p, stats_setting));
}

static int init(const OSSL_CORE_HANDLE *h, const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
                void **provctx)
{
    static OSSL_DISPATCH d[128];
    size_t i;

    for (i = 0; in[i].function_id != 0 && i + 1 < sizeof(d) / sizeof(d[0]); i++) {
        d[i] = in[i];
        if (in[i].function_id == OSSL_FUNC_CORE_GET_PARAMS) {
            core_get_params = OSSL_FUNC_core_get_params(&in[i]);
            d[i].function = (void (*)(void))get_params;
        }
    }
    d[i] = (OSSL_DISPATCH){ 0, NULL };
    return ccree_init(h, d, out, provctx);
}

/*
 * ccree in a library context of its own (*ctx where ctx is not NULL), with stats = dir (none
 * for NULL); NULL if not loaded.
 */
static OSSL_PROVIDER *load(const char *dir, OSSL_LIB_CTX **ctx)
{
    OSSL_LIB_CTX *c = OSSL_LIB_CTX_new();

    stats_setting = dir;
    if (ctx != NULL)
        *ctx = c;
    if (c == NULL || !OSSL_PROVIDER_add_builtin(c, "ccree", init))
        return NULL;
    return OSSL_PROVIDER_load(c, "ccree");
}

/* n SHA2-256 digests through ccree in ctx (in software natively); 0 on failure. */
static int work(OSSL_LIB_CTX *ctx, int n)
{
    EVP_MD *md = EVP_MD_fetch(ctx, "SHA256", "provider=ccree");
    unsigned char out[32];
    int ok = md != NULL;

    while (ok && n-- > 0)
        ok = EVP_Digest("abc", 3, out, NULL, md, NULL);
    EVP_MD_free(md);
    return ok;
}

/* ------------------------------------------------------------------ */
/* processes and files                                                  */
/* ------------------------------------------------------------------ */

/* The status of child pid, or -1 (then killed) when it takes more than seconds. */
static int wait_for(pid_t pid, double seconds)
{
    int status;
    long waited;

    for (waited = 0; waited < seconds * 100; waited++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return status;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* fork(), with cmocka's signal handlers undone in the child: a fault there ends the child. */
static pid_t child(void)
{
    static const int sigs[] = { SIGBUS, SIGSEGV, SIGILL, SIGFPE, SIGSYS };
    pid_t pid = fork();
    size_t i;

    assert_true(pid >= 0);
    for (i = 0; pid == 0 && i < sizeof(sigs) / sizeof(sigs[0]); i++)
        signal(sigs[i], SIG_DFL);
    return pid;
}

/* Runs fn(arg) in a child process that exits with its result. */
static pid_t spawn(int (*fn)(void *), void *arg)
{
    pid_t pid = child();

    if (pid == 0)
        _exit(fn(arg));
    return pid;
}

static void expect_exit(pid_t pid, double seconds, const char *what)
{
    int status = wait_for(pid, seconds);

    if (status == -1)
        fail_msg("%s: still running after %.0f s", what, seconds);
    if (WIFSIGNALED(status))
        fail_msg("%s: killed by signal %d", what, WTERMSIG(status));
    if (WEXITSTATUS(status) != 0)
        fail_msg("%s: exit status %d", what, WEXITSTATUS(status));
}

/* Turns this process into nobody's. */
static void become_nobody(void)
{
    struct passwd *pw = getpwnam("nobody");

    if (pw == NULL || setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0
        || setuid(pw->pw_uid) != 0)
        _exit(90);
}

/* A new directory with this mode; *state for teardown. */
static char *new_dir(void **state, mode_t mode)
{
    char *dir = strdup("/tmp/ccree-stats-XXXXXX");

    assert_non_null(mkdtemp(dir));
    assert_int_equal(chmod(dir, mode), 0);
    *state = dir;
    return dir;
}

static int remove_dir(void **state)
{
    char *dir = *state;
    DIR *d = opendir(dir);
    struct dirent *e;

    while (d != NULL && (e = readdir(d)) != NULL)
        unlinkat(dirfd(d), e->d_name, 0);
    if (d != NULL)
        closedir(d);
    rmdir(dir);
    free(dir);
    return 0;
}

static void path_of(char *buf, size_t len, const char *dir, long pid)
{
    snprintf(buf, len, "%s/%ld", dir, pid);
}

/* ------------------------------------------------------------------ */
/* a process using the provider with stats = DIR                        */
/* ------------------------------------------------------------------ */

/*
 * It waits for "go" (a byte on its pipe) before loading the provider, reports "loaded" with
 * a byte back, and does more work and exits 0 when its pipe closes; 2: not loaded; 3: no work;
 * 4: the stats param neither names its regular file nor an error.
 */
struct user {
    pid_t pid;
    int to, from; /* our ends of its pipes */
    const char *dir;
};

static int user_work(struct user *u, int in, int out, OSSL_PROVIDER *prov, OSSL_LIB_CTX *ctx)
{
    char want[4096], c, *s;
    struct stat st;
    int rc = 4;

    if (!work(ctx, 10) || (s = tu_get_string(prov, "ccree-stats")) == NULL)
        return 3;
    path_of(want, sizeof(want), u->dir, getpid());
    if ((strcmp(s, want) == 0 && lstat(want, &st) == 0 && S_ISREG(st.st_mode))
        || (strncmp(s, u->dir, strlen(u->dir)) == 0 && strncmp(s + strlen(u->dir), ": ", 2) == 0)) {
        fprintf(stderr, "user %ld: ccree-stats: %s\n", (long)getpid(), s);
        rc = 3;
        if (write(out, "l", 1) == 1) {
            while (read(in, &c, 1) == 1)
                ;
            rc = work(ctx, 10) ? 0 : 3;
        }
    }
    free(s);
    return rc;
}

/* Its provider and library context are freed before it exits (valgrind checks the child). */
static int user_main(struct user *u, int in, int out)
{
    OSSL_LIB_CTX *ctx = NULL;
    OSSL_PROVIDER *prov = NULL;
    char c;
    int rc = 2;

    if (read(in, &c, 1) == 1 && (prov = load(u->dir, &ctx)) != NULL)
        rc = user_work(u, in, out, prov, ctx);
    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(ctx);
    return rc;
}

static void user_start(struct user *u, const char *dir)
{
    int to[2], from[2];

    assert_int_equal(pipe(to), 0);
    assert_int_equal(pipe(from), 0);
    u->dir = dir;
    if ((u->pid = child()) == 0) {
        close(to[1]);
        close(from[0]);
        _exit(user_main(u, to[0], from[1]));
    }
    close(to[0]);
    close(from[1]);
    u->to = to[1];
    u->from = from[0];
}

/* Lets it load the provider, and waits until it has. */
static void user_go(struct user *u)
{
    char c;

    assert_int_equal(write(u->to, "g", 1), 1);
    if (read(u->from, &c, 1) != 1) {
        close(u->to);
        expect_exit(u->pid, 10, "the process using the provider");
    }
}

static void user_end(struct user *u)
{
    close(u->to);
    close(u->from);
    expect_exit(u->pid, 30, "the process using the provider");
}

/* ------------------------------------------------------------------ */
/* ccree-info --stats                                                   */
/* ------------------------------------------------------------------ */

/* Its output (stdout and stderr) for dir, malloc'ed; it must finish within 10 s. */
static char *info_output(const char *dir)
{
    char out[] = "/tmp/ccree-info-XXXXXX", *buf = calloc(1, 1 << 20);
    int fd = mkstemp(out);
    pid_t pid;
    ssize_t n;

    assert_true(fd >= 0 && buf != NULL);
    unlink(out);
    if ((pid = child()) == 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        char *argv[8];
        int i;

        for (i = 0; info[i] != NULL && i < 5; i++)
            argv[i] = info[i];
        argv[i++] = "--stats";
        argv[i++] = (char *)dir;
        argv[i] = NULL;
        execv(argv[0], argv);
        _exit(127);
    }
    expect_exit(pid, 10, "ccree-info --stats");
    n = pread(fd, buf, (1 << 20) - 1, 0);
    close(fd);
    assert_true(n >= 0);
    fprintf(stderr, "ccree-info --stats %s:\n%s", dir, buf);
    return buf;
}

/* The lines of out for pid, or -1 if one algorithm of it is listed twice. */
static int lines_of(const char *out, long pid)
{
    char algs[64][CCREE_NAME_MAX + 1];
    int n = 0, i;
    const char *l;

    for (l = out; l != NULL && *l != '\0'; l = strchr(l, '\n'), l = l != NULL ? l + 1 : NULL) {
        long p;
        char alg[CCREE_NAME_MAX + 1];

        if (sscanf(l, "%ld %32s", &p, alg) != 2 || p != pid)
            continue;
        for (i = 0; i < n; i++)
            if (strcmp(algs[i], alg) == 0)
                return -1;
        if (n < 64)
            strcpy(algs[n++], alg);
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* the cases                                                            */
/* ------------------------------------------------------------------ */

/* A link planted at DIR/<pid to be> leads nowhere: its target is left as it was. */
static void planted_link(void **state)
{
    char *dir = new_dir(state, 0755), victim[] = "/tmp/ccree-victim-XXXXXX", link[4096];
    static const char text[] = "not a statistics file\n";
    char back[sizeof(text)] = "";
    struct user u;
    struct stat st;
    int fd = mkstemp(victim);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, sizeof(text) - 1), sizeof(text) - 1);
    user_start(&u, dir);
    path_of(link, sizeof(link), dir, u.pid);
    assert_int_equal(symlink(victim, link), 0);
    user_go(&u);
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(pread(fd, back, sizeof(back), 0), sizeof(text) - 1);
    close(fd);
    unlink(victim);
    assert_int_equal(st.st_size, sizeof(text) - 1);
    assert_string_equal(back, text);
    user_end(&u);
}

/* Truncates path as nobody. */
static int truncate_as_nobody(void *path)
{
    become_nobody();
    return truncate(path, 0) == 0 ? 0 : 1;
}

/*
 * A file planted at DIR/<pid to be> (nobody's, writable by all) is not used: when nobody
 * truncates it, the process goes on (a mapped file cut short would kill it with SIGBUS).
 */
static void planted_file(void **state)
{
    char *dir = new_dir(state, 0755), path[4096];
    struct user u;
    struct passwd *pw = getpwnam("nobody");
    int fd;

    assert_non_null(pw);
    user_start(&u, dir);
    path_of(path, sizeof(path), dir, u.pid);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
    assert_true(fd >= 0);
    assert_int_equal(fchown(fd, pw->pw_uid, pw->pw_gid), 0);
    assert_int_equal(fchmod(fd, 0666), 0);
    close(fd);
    user_go(&u);
    expect_exit(spawn(truncate_as_nobody, path), 10, "truncate as nobody");
    user_end(&u);
}

/* Opens path as nobody, for reading, then for writing: 0 when both are refused. */
static int open_as_nobody(void *path)
{
    become_nobody();
    if (open(path, O_RDONLY) >= 0 || errno != EACCES)
        return 1;
    return open(path, O_RDWR) >= 0 || errno != EACCES ? 2 : 0;
}

/* The file is the process user's alone: mode 0600, out of reach of nobody. */
static void file_mode(void **state)
{
    char *dir = new_dir(state, 0755), path[4096];
    struct user u;
    struct stat st;

    user_start(&u, dir);
    user_go(&u);
    path_of(path, sizeof(path), dir, u.pid);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(st.st_mode & 07777, 0600);
    expect_exit(spawn(open_as_nobody, path), 10, "open as nobody");
    user_end(&u);
}

/* A FIFO named after a live process: ccree-info does not wait on it. */
static void fifo(void **state)
{
    char *dir = new_dir(state, 0700), path[4096];

    path_of(path, sizeof(path), dir, getpid());
    assert_int_equal(mkfifo(path, 0600), 0);
    free(info_output(dir));
}

/* Whether out has a byte that is neither printable ASCII nor a newline. */
static int raw_bytes(const char *out)
{
    const unsigned char *c;

    for (c = (const unsigned char *)out; *c != '\0'; c++)
        if ((*c < 0x20 && *c != '\n') || *c >= 0x7f)
            return 1;
    return 0;
}

static void copy_file(const char *from, const char *to)
{
    static char buf[1 << 16];
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_EXCL, 0600);
    ssize_t n = in >= 0 && out >= 0 ? read(in, buf, sizeof(buf)) : -1;

    assert_true(n > 0);
    assert_int_equal(write(out, buf, (size_t)n), n);
    close(in);
    close(out);
}

/*
 * ccree-info lists a process by the file named after it, only: not through a link named after
 * another process, nor a copy named "0PID"; and prints no byte of a file it cannot parse.
 */
static void info_parses(void **state)
{
    char *dir = new_dir(state, 0700), path[4096], other[4096], *out;
    static const char esc[] = "\033]0;owned\007\033[2J";
    struct user u;
    int fd;

    user_start(&u, dir);
    user_go(&u);
    path_of(path, sizeof(path), dir, u.pid);
    path_of(other, sizeof(other), dir, getpid());
    assert_int_equal(symlink(path, other), 0);
    snprintf(other, sizeof(other), "%s/0%ld", dir, (long)u.pid);
    copy_file(path, other);
    out = info_output(dir);
    assert_true(lines_of(out, u.pid) >= 1);
    assert_int_equal(lines_of(out, getpid()), 0);
    free(out);

    fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, esc, sizeof(esc), offsetof(struct ccree_stats_file, name)),
                     sizeof(esc));
    assert_int_equal(pwrite(fd, esc, sizeof(esc), offsetof(struct ccree_stats_file, driver[1])),
                     sizeof(esc));
    close(fd);
    out = info_output(dir);
    assert_false(raw_bytes(out));
    free(out);
    user_end(&u);
}

/* A process that loads the provider with stats = arg, unloads it and exits 0. */
static int load_once(void *arg)
{
    OSSL_LIB_CTX *ctx = NULL;
    OSSL_PROVIDER *prov = load(arg, &ctx);

    OSSL_PROVIDER_unload(prov);
    OSSL_LIB_CTX_free(ctx);
    return prov != NULL ? 0 : 2;
}

/*
 * The fork and count cases call src/stats.c and src/sock.c as linked into this program: the
 * moments they need cannot be reached through OpenSSL (a fork while another thread is inside
 * OpenSSL can leave OpenSSL's own locks held in the child).
 */
static void *open_stats(void *dir)
{
    static struct ccree_path paths[CCREE_NALGS];

    return (void *)(long)ccree_stats_open(dir, paths);
}

static int open_stats_once(void *dir)
{
    return open_stats(dir) == NULL ? 0 : 2;
}

/*
 * One process: a thread makes its statistics file in DIR; as soon as it opens DIR (to remove
 * stale files, under the statistics' lock) the main thread forks, and the child makes its
 * statistics file again: it must finish.
 */
static int fork_while_opening(void *dir)
{
    int in = inotify_init1(IN_CLOEXEC), status;
    char ev[sizeof(struct inotify_event) + NAME_MAX + 1];
    pthread_t t;

    if (!ccree_fork_setup() || in < 0 || inotify_add_watch(in, dir, IN_OPEN) < 0
        || pthread_create(&t, NULL, open_stats, dir) != 0 || read(in, ev, sizeof(ev)) <= 0)
        return 2;
    status = wait_for(spawn(open_stats_once, dir), 20);
    pthread_join(t, NULL);
    if (status == -1)
        fprintf(stderr, "the child is still running after 20 s\n");
    return status == 0 ? 0 : 1;
}

/* Fork while another thread is inside the statistics' set-up: the child does not deadlock. */
static void fork_during_open(void **state)
{
    char *dir = new_dir(state, 0700), name[4096];
    int fd, i;

    for (i = 0; i < 20000; i++) { /* entries to read: the set-up takes a while */
        snprintf(name, sizeof(name), "%s/x%d", dir, i);
        assert_true((fd = open(name, O_WRONLY | O_CREAT, 0600)) >= 0);
        close(fd);
    }
    for (i = 0; i < 3; i++)
        expect_exit(spawn(fork_while_opening, dir), 60, "fork while opening");
}

/* This process's PID namespace, as a statistics file records it. */
static void pidns(uint64_t ns[2])
{
    struct stat st;

    assert_int_equal(stat("/proc/self/ns/pid", &st), 0);
    ns[0] = st.st_dev;
    ns[1] = st.st_ino;
}

static int exit_now(void *arg)
{
    (void)arg;
    return 0;
}

/* DIR/PID as a process of that PID that is gone left it, in namespace ns. */
static void gone_file(const char *dir, const uint64_t ns[2], char *path, size_t len)
{
    static struct ccree_stats_file f;
    pid_t pid = spawn(exit_now, NULL);
    int fd;

    expect_exit(pid, 10, "a process");
    memcpy(f.magic, CCREE_STATS_MAGIC, sizeof(f.magic));
    f.nalgs = CCREE_NALGS;
    f.pid = pid;
    memcpy(f.pidns, ns, sizeof(f.pidns));
    path_of(path, len, dir, pid);
    assert_true((fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600)) >= 0);
    assert_int_equal(write(fd, &f, sizeof(f)), sizeof(f));
    close(fd);
}

/* The file of a gone process of this namespace goes; that of another namespace stays. */
static void prune_namespaces(void **state)
{
    char *dir = new_dir(state, 0700), here[4096], there[4096];
    uint64_t ns[2], elsewhere[2];
    struct stat st;

    pidns(ns);
    elsewhere[0] = ns[0];
    elsewhere[1] = ns[1] + 1;
    gone_file(dir, ns, here, sizeof(here));
    gone_file(dir, elsewhere, there, sizeof(there));
    expect_exit(spawn(load_once, dir), 30, "load");
    assert_int_equal(lstat(there, &st), 0);
    assert_int_equal(lstat(here, &st), -1);
}

/* Counts of the first algorithm until stop; how many. */
static volatile int stop;

static void *count(void *arg)
{
    long n = 0;

    (void)arg;
    for (; !stop; n++)
        ccree_count(0, 1, 1, 1);
    return (void *)n;
}

/*
 * One process: two threads count while the counters move into DIR/PID; every count must be
 * in the file.
 */
static int count_while_opening(void *dir)
{
    pthread_t t[2];
    long done = 0;
    void *n;
    int i, err;

    for (i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, count, NULL);
    usleep(1000);
    err = (int)(long)open_stats(dir);
    usleep(1000);
    stop = 1;
    for (i = 0; i < 2; i++, done += (long)n)
        pthread_join(t[i], &n);
    if (err != 0)
        return 2;
    if (ccree_stats[0].ops[1] != (uint64_t)done || ccree_stats[0].bytes[1] != (uint64_t)done) {
        fprintf(stderr, "%ld counts, %llu in the file\n", done,
                (unsigned long long)ccree_stats[0].ops[1]);
        return 1;
    }
    return 0;
}

static void counts_kept(void **state)
{
    char *dir = new_dir(state, 0700);
    int i;

    for (i = 0; i < 20; i++)
        expect_exit(spawn(count_while_opening, dir), 30, "count while opening");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(planted_link, remove_dir),
        cmocka_unit_test_teardown(planted_file, remove_dir),
        cmocka_unit_test_teardown(file_mode, remove_dir),
        cmocka_unit_test_teardown(fifo, remove_dir),
        cmocka_unit_test_teardown(info_parses, remove_dir),
        cmocka_unit_test_teardown(fork_during_open, remove_dir),
        cmocka_unit_test_teardown(prune_namespaces, remove_dir),
        cmocka_unit_test_teardown(counts_kept, remove_dir),
    };
    void *module;

    if (argc < 3 || argc > 8 || (module = dlopen(argv[1], RTLD_NOW)) == NULL
        || (ccree_init = (OSSL_provider_init_fn *)dlsym(module, "OSSL_provider_init")) == NULL) {
        fprintf(stderr, "usage: test_stats MODULE [EMULATOR...] CCREE_INFO\n");
        return 2;
    }
    info = &argv[2];
    if (geteuid() != 0) {
        fprintf(stderr, "test_stats: needs root (it runs processes as nobody)\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
