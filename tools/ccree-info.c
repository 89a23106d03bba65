/*
 * ccree-info: what the ccree provider offloads in this process's configuration, and why not;
 * with --stats DIR, the live counters of the processes that keep statistics in DIR.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "stats.h"

static char *get(OSSL_PROVIDER *prov, const char *key)
{
    OSSL_PARAM params[] = { OSSL_PARAM_utf8_string(key, NULL, 0), OSSL_PARAM_END };
    char *s;

    if (!OSSL_PROVIDER_get_params(prov, params)
        || (s = OPENSSL_zalloc(params[0].return_size + 1)) == NULL)
        return NULL;
    params[0].data = s;
    params[0].data_size = params[0].return_size + 1;
    if (!OSSL_PROVIDER_get_params(prov, params)) {
        OPENSSL_free(s);
        return NULL;
    }
    return s;
}

/* Splits a report line at its tabs into at most max fields; their number. */
static int fields(char *line, char **f, int max)
{
    char *save = NULL, *t = strtok_r(line, "\t", &save);
    int i;

    for (i = 0; i < max && t != NULL; i++, t = strtok_r(NULL, "\t", &save))
        f[i] = t;
    return i;
}

/*
 * The kernel TLS path (the provider's ccree-ktls): the implementation the kernel would take
 * for each kTLS cipher, whether it completes asynchronously, and the kernel's kTLS counters.
 */
static void ktls(OSSL_PROVIDER *prov)
{
    char *text = get(prov, "ccree-ktls"), *line, *save = NULL;
    int counters = 0;

    if (text == NULL)
        return;
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *f[8];
        int i = fields(line, f, 8);

        if (i == 2 && strcmp(f[0], "module") == 0)
            printf("\nkernel TLS: tls module %s\n%-18s %-27s %-20s %-8s %-9s %-8s %s\n", f[1],
                   "cipher", "kernel", "driver", "priority", "completes", "path", "why not");
        else if (i == 8 && strcmp(f[0], "cipher") == 0)
            printf("%-18s %-27s %-20s %-8s %-9s %-8s %s\n", f[1], f[2], f[3], f[4], f[5], f[6],
                   f[7]);
        else if (i == 3 && strcmp(f[0], "counter") == 0)
            printf("%s%-18s %s\n", counters++ ? "" : "kernel TLS counters (/proc/net/tls_stat):\n",
                   f[1], f[2]);
    }
    OPENSSL_free(text);
}

static int report(void)
{
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(NULL, "ccree");
    static const char *const head[] = { "algorithm", "kernel", "path", "driver", "why not" };
    char *report = prov != NULL ? get(prov, "ccree-algorithms") : NULL;
    char *stats = prov != NULL ? get(prov, "ccree-stats") : NULL;
    char *line, *save = NULL;

    if (report == NULL || stats == NULL) {
        fprintf(stderr, "ccree-info: the ccree provider did not load\n");
        ERR_print_errors_fp(stderr);
        return 1;
    }
    printf("%-16s %-13s %-8s %-18s %s\n", head[0], head[1], head[2], head[3], head[4]);
    for (line = strtok_r(report, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *f[9];

        if (fields(line, f, 9) == 9)
            printf("%-16s %-13s %-8s %-18s %s\n", f[0], f[1], f[2], f[3], f[4]);
    }
    printf("statistics: %s\n", stats);
    OPENSSL_free(report);
    OPENSSL_free(stats);
    ktls(prov);
    OSSL_PROVIDER_unload(prov);
    return 0;
}

/* Whether a driver name holds only what kernel driver names are made of, and ends. */
static int driver_ok(const char *d, size_t len)
{
    size_t n = strnlen(d, len);

    return n < len && strspn(d, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                "0123456789-_.,()") == n;
}

/* Whether a reason is printable text, and ends. */
static int reason_ok(const char *r, size_t len)
{
    size_t n = strnlen(r, len), i;

    for (i = 0; i < n && isprint((unsigned char)r[i]); i++)
        ;
    return n < len && i == n;
}

/* Whether every algorithm of f is this version's, with a path, a valid driver name and reason. */
static int parsed(const struct ccree_stats_file *f)
{
    char name[CCREE_NAME_MAX];
    size_t i;

    for (i = 0; i < CCREE_NALGS; i++)
        if (strncmp(f->name[i], ccree_name(i, name), CCREE_NAME_MAX) != 0 || f->offload[i] > 1
            || !driver_ok(f->driver[i], sizeof(f->driver[i]))
            || !reason_ok(f->reason[i], sizeof(f->reason[i])))
            return 0;
    return 1;
}

/* The lines of one process's file: only what parsed() checked, and numbers. */
static void print_file(const struct ccree_stats_file *f)
{
    char name[CCREE_NAME_MAX];
    size_t i;

    for (i = 0; i < CCREE_NALGS; i++) {
        const struct ccree_stats *s = &f->stats[i];

        if (s->ops[0] + s->ops[1] + s->bytes[0] + s->bytes[1] == 0)
            continue;
        printf("%ld %s %s %s %llu %llu %llu %llu %s\n", (long)f->pid, ccree_name(i, name),
               f->offload[i] ? "offload" : "software", f->driver[i][0] ? f->driver[i] : "-",
               (unsigned long long)s->ops[0], (unsigned long long)s->bytes[0],
               (unsigned long long)s->ops[1], (unsigned long long)s->bytes[1],
               f->offload[i] || !f->reason[i][0] ? "-" : f->reason[i]);
    }
}

/*
 * One line per process and algorithm with counts, from the files named after live processes
 * of this PID namespace (others number their processes anew). Entries are opened without
 * following links or blocking (src/stats.c, ccree_stats_read).
 */
static int live(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct ccree_stats_file f;
    struct dirent *e;
    uint64_t ns[2];

    if (d == NULL) {
        fprintf(stderr, "ccree-info: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    ccree_stats_pidns(ns);
    printf("pid algorithm path driver kernel-ops kernel-bytes sw-ops sw-bytes why-not\n");
    while ((e = readdir(d)) != NULL) {
        pid_t pid = ccree_stats_pid(e->d_name);
        uid_t owner;
        int err;

        if (pid == 0 || (kill(pid, 0) < 0 && errno == ESRCH))
            continue;
        if ((err = ccree_stats_read(fd, pid, &f, &owner)) == 0 && !parsed(&f))
            err = -EINVAL;
        if (err != 0)
            fprintf(stderr, "ccree-info: %s/%ld: %s\n", dir, (long)pid,
                    err == -EINVAL ? "not a statistics file of this version" : strerror(-err));
        else if (memcmp(f.pidns, ns, sizeof(ns)) == 0)
            print_file(&f);
    }
    closedir(d);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--stats") == 0)
        return live(argv[2]);
    if (argc != 1) {
        fprintf(stderr, "usage: ccree-info [--stats DIR]\n");
        return 2;
    }
    return report();
}
