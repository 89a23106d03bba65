#include "stats.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct ccree_stats counters[CCREE_NALGS];
struct ccree_stats *ccree_stats = counters;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char stats_dir[PATH_MAX];
static struct ccree_stats_file *mapped;

/* The files of processes that are gone. */
static void prune(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_MAX];

    while (d != NULL && (e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);

        if (*end == '\0' && pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH
            && snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
            unlink(path);
    }
    if (d != NULL)
        closedir(d);
}

/* A new file for this process, laid out as *from; NULL with errno set. */
static struct ccree_stats_file *create(const char *dir, const struct ccree_stats_file *from)
{
    struct ccree_stats_file *f = MAP_FAILED;
    char path[PATH_MAX];
    int fd, err;

    if (snprintf(path, sizeof(path), "%s/%ld", dir, (long)getpid()) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
        return NULL;
    if (ftruncate(fd, sizeof(*f)) == 0)
        f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    err = errno;
    close(fd);
    if (f == MAP_FAILED) {
        unlink(path);
        errno = err;
        return NULL;
    }
    memcpy(f, from, offsetof(struct ccree_stats_file, stats));
    return f;
}

int ccree_stats_open(const char *dir, const struct ccree_path *paths)
{
    struct ccree_stats_file head = { .magic = CCREE_STATS_MAGIC, .nalgs = CCREE_NALGS }, *f;
    size_t i;
    int err = 0;

    for (i = 0; i < CCREE_NALGS; i++) {
        head.offload[i] = (uint8_t)paths[i].offload;
        ccree_name(i, head.name[i]);
        memcpy(head.driver[i], paths[i].driver, sizeof(head.driver[i]));
    }
    pthread_mutex_lock(&lock);
    if (mapped == NULL) { /* one file per process, whichever provider instance makes it */
        prune(dir);
        if ((f = create(dir, &head)) == NULL) {
            err = -errno;
        } else {
            memcpy(f->stats, counters, sizeof(counters));
            snprintf(stats_dir, sizeof(stats_dir), "%s", dir);
            mapped = f;
            ccree_stats = f->stats;
        }
    }
    pthread_mutex_unlock(&lock);
    return err;
}

void ccree_stats_forked(void)
{
    struct ccree_stats_file *f = mapped != NULL ? create(stats_dir, mapped) : NULL;

    memset(counters, 0, sizeof(counters));
    ccree_stats = f != NULL ? f->stats : counters;
    if (mapped != NULL) /* the parent's file is the parent's */
        munmap(mapped, sizeof(*mapped));
    mapped = f;
}

void ccree_stats_file(char *buf, size_t len)
{
    if (mapped != NULL)
        snprintf(buf, len, "%s/%ld", stats_dir, (long)getpid());
    else if (len > 0)
        *buf = '\0';
}
