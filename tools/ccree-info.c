/*
 * ccree-info: what the ccree provider offloads in this process's configuration, and why not;
 * with --stats DIR, the live counters of the processes that keep statistics in DIR.
 */
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

static int report(void)
{
    OSSL_PROVIDER *prov = OSSL_PROVIDER_load(NULL, "ccree");
    static const char *const head[] = { "algorithm", "kernel", "path", "driver", "why not" };
    char *report = prov != NULL ? get(prov, "ccree-algorithms") : NULL;
    char *stats = prov != NULL ? get(prov, "ccree-stats") : NULL;
    char *line, *save = NULL;
    int i;

    if (report == NULL || stats == NULL) {
        fprintf(stderr, "ccree-info: the ccree provider did not load\n");
        ERR_print_errors_fp(stderr);
        return 1;
    }
    printf("%-16s %-13s %-8s %-18s %s\n", head[0], head[1], head[2], head[3], head[4]);
    for (line = strtok_r(report, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *f[9], *s2 = NULL, *t = strtok_r(line, "\t", &s2);

        for (i = 0; i < 9 && t != NULL; i++, t = strtok_r(NULL, "\t", &s2))
            f[i] = t;
        if (i == 9)
            printf("%-16s %-13s %-8s %-18s %s\n", f[0], f[1], f[2], f[3], f[4]);
    }
    printf("statistics: %s\n", stats);
    OPENSSL_free(report);
    OPENSSL_free(stats);
    OSSL_PROVIDER_unload(prov);
    return 0;
}

/* One line per process and algorithm with counts, from the files of live processes. */
static int live(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    struct ccree_stats_file f;

    if (d == NULL) {
        fprintf(stderr, "ccree-info: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    printf("pid algorithm path driver kernel-ops kernel-bytes sw-ops sw-bytes\n");
    while ((e = readdir(d)) != NULL) {
        char path[4096], *end;
        long pid = strtol(e->d_name, &end, 10);
        int fd, i;
        ssize_t n;

        if (*end != '\0' || pid <= 0 || (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
            || snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path)
            || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            continue;
        n = read(fd, &f, sizeof(f));
        close(fd);
        if (n != (ssize_t)sizeof(f) || memcmp(f.magic, CCREE_STATS_MAGIC, sizeof(f.magic)) != 0
            || f.nalgs != CCREE_NALGS) {
            fprintf(stderr, "ccree-info: %s: not a statistics file of this version\n", path);
            continue;
        }
        for (i = 0; i < CCREE_NALGS; i++) {
            const struct ccree_stats *s = &f.stats[i];

            if (s->ops[0] + s->ops[1] + s->bytes[0] + s->bytes[1] == 0)
                continue;
            printf("%ld %.*s %s %.*s %llu %llu %llu %llu\n", pid, CCREE_NAME_MAX, f.name[i],
                   f.offload[i] ? "offload" : "software", (int)sizeof(f.driver[i]),
                   f.driver[i][0] ? f.driver[i] : "-", (unsigned long long)s->ops[0],
                   (unsigned long long)s->bytes[0], (unsigned long long)s->ops[1],
                   (unsigned long long)s->bytes[1]);
        }
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
