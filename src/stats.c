/*
 * Why a file in DIR cannot be turned against the process. It is made with O_EXCL|O_NOFOLLOW,
 * so nothing planted at its name (a link, a FIFO, someone's file) is followed or reused, and
 * fstat must show a regular file of ours with one link and its size before it is mapped.
 * Mapped shared, its counters stay live for ccree-info (a private copy would not be). A mapped
 * file cut short kills the process with SIGBUS, so the real protection is who may open it for
 * writing: it is 0600, so only its owner (the user that made it, root for a process that made
 * it before dropping root) and root can, and they can kill the process anyway. A directory
 * every user may write to is refused: there anyone could rename a file away and plant another
 * for ccree-info, or plant names that block processes yet to come.
 */
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
#include <sys/stat.h>
#include <unistd.h>

static struct ccree_stats counters[CCREE_NALGS];
struct ccree_stats *_Atomic ccree_stats = counters;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char stats_dir[PATH_MAX];
static struct ccree_stats_file *mapped;

/* Moves what counters holds of algorithm idx to the file's counters at to. */
static void move(size_t idx, struct ccree_stats *to)
{
    int k;

    for (k = 0; k < 2; k++) {
        atomic_fetch_add(&to[idx].ops[k], atomic_exchange(&counters[idx].ops[k], 0));
        atomic_fetch_add(&to[idx].bytes[k], atomic_exchange(&counters[idx].bytes[k], 0));
    }
}

void ccree_count_late(size_t idx, struct ccree_stats *s)
{
    if (s == counters)
        move(idx, ccree_stats);
}

/* Counting goes to the file from now on, with what was counted in memory. */
static void publish(struct ccree_stats *to)
{
    size_t i;

    ccree_stats = to;
    for (i = 0; i < CCREE_NALGS; i++)
        move(i, to);
}

pid_t ccree_stats_pid(const char *name)
{
    long pid = 0;
    const char *c;

    for (c = name; *c >= '0' && *c <= '9' && pid <= (INT_MAX - 9) / 10; c++)
        pid = pid * 10 + (*c - '0');
    return *c == '\0' && name[0] != '0' ? (pid_t)pid : 0;
}

void ccree_stats_pidns(uint64_t ns[2])
{
    struct stat st;

    if (stat("/proc/self/ns/pid", &st) == 0) {
        ns[0] = st.st_dev;
        ns[1] = st.st_ino;
    } else {
        ns[0] = ns[1] = 0;
    }
}

int ccree_stats_read(int dirfd, pid_t pid, struct ccree_stats_file *f, uid_t *owner)
{
    char name[16];
    struct stat st;
    int fd, err = -EINVAL;

    snprintf(name, sizeof(name), "%ld", (long)pid);
    if ((fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
        return -errno;
    if (fstat(fd, &st) != 0)
        err = -errno;
    else if (S_ISREG(st.st_mode) && st.st_size == (off_t)sizeof(*f)
             && read(fd, f, sizeof(*f)) == (ssize_t)sizeof(*f)
             && memcmp(f->magic, CCREE_STATS_MAGIC, sizeof(f->magic)) == 0
             && f->nalgs == CCREE_NALGS && f->pid == pid)
        err = 0;
    close(fd);
    *owner = err == 0 ? st.st_uid : (uid_t)-1;
    return err;
}

/*
 * Whether DIR's entry for pid can be removed: a file this user made in this PID namespace
 * (known) for a process that is gone, or for this one (then it is a stale one). Other
 * namespaces number their processes anew: theirs may be alive.
 */
static int stale(int dirfd, pid_t pid, const uint64_t ns[2])
{
    struct ccree_stats_file f;
    uid_t owner;

    return ns[1] != 0 && ccree_stats_read(dirfd, pid, &f, &owner) == 0 && owner == geteuid()
           && memcmp(f.pidns, ns, sizeof(f.pidns)) == 0
           && (pid == getpid() || (kill(pid, 0) < 0 && errno == ESRCH));
}

static void remove_stale(int dirfd, pid_t pid, const uint64_t ns[2])
{
    char name[16];

    snprintf(name, sizeof(name), "%ld", (long)pid);
    if (stale(dirfd, pid, ns))
        unlinkat(dirfd, name, 0);
}

/* The stale files of DIR. */
static void prune(int dirfd, const uint64_t ns[2])
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *e;
    pid_t pid;

    while (d != NULL && (e = readdir(d)) != NULL)
        if ((pid = ccree_stats_pid(e->d_name)) != 0)
            remove_stale(dirfd, pid, ns);
    if (d != NULL)
        closedir(d);
    else if (fd >= 0)
        close(fd);
}

/* DIR, or -errno; -EPERM where every user may write to it. */
static int open_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;
    struct stat st;

    if (fd < 0)
        return -errno;
    err = fstat(fd, &st) != 0 ? -errno : st.st_mode & S_IWOTH ? -EPERM : 0;
    if (err == 0)
        return fd;
    close(fd);
    return err;
}

/* Whether fd is the file create() made: a regular file of ours, one link, its size. */
static int made(int fd)
{
    struct stat st;

    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()
           && st.st_nlink == 1 && st.st_size == (off_t)sizeof(struct ccree_stats_file);
}

/* Fills a new file's header from *from, its magic last: ccree-info reads only whole ones. */
static void fill(struct ccree_stats_file *f, const struct ccree_stats_file *from,
                 const uint64_t ns[2])
{
    size_t skip = sizeof(f->magic);

    memcpy((char *)f + skip, (const char *)from + skip,
           offsetof(struct ccree_stats_file, stats) - skip);
    f->pid = getpid();
    memcpy(f->pidns, ns, sizeof(f->pidns));
    atomic_thread_fence(memory_order_release);
    memcpy(f->magic, CCREE_STATS_MAGIC, sizeof(f->magic));
}

/* A new file in DIR for this process, laid out as *from; NULL with errno set. */
static struct ccree_stats_file *create(int dirfd, const struct ccree_stats_file *from,
                                       const uint64_t ns[2])
{
    struct ccree_stats_file *f = MAP_FAILED;
    char name[16];
    int fd, err;

    snprintf(name, sizeof(name), "%ld", (long)getpid());
    remove_stale(dirfd, getpid(), ns);
    fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return NULL;
    errno = EPERM;
    if (ftruncate(fd, sizeof(*f)) == 0 && made(fd))
        f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    err = errno;
    close(fd);
    if (f == MAP_FAILED) {
        unlinkat(dirfd, name, 0);
        errno = err;
        return NULL;
    }
    fill(f, from, ns);
    return f;
}

/* The file of this process in DIR, after the stale files of DIR where prune; NULL with errno. */
static struct ccree_stats_file *make(const char *dir, const struct ccree_stats_file *from,
                                     int prune_too)
{
    struct ccree_stats_file *f = NULL;
    uint64_t ns[2];
    int dirfd = open_dir(dir), err;

    if (dirfd < 0) {
        errno = -dirfd;
        return NULL;
    }
    ccree_stats_pidns(ns);
    if (prune_too)
        prune(dirfd, ns);
    f = create(dirfd, from, ns);
    err = errno;
    close(dirfd);
    errno = err;
    return f;
}

int ccree_stats_open(const char *dir, const struct ccree_path *paths)
{
    static struct ccree_stats_file head = { .magic = CCREE_STATS_MAGIC, .nalgs = CCREE_NALGS };
    struct ccree_stats_file *f;
    size_t i;
    int err = 0;

    pthread_mutex_lock(&lock);
    if (mapped == NULL) { /* one file per process, whichever provider instance makes it */
        for (i = 0; i < CCREE_NALGS; i++) {
            head.offload[i] = (uint8_t)paths[i].offload;
            ccree_name(i, head.name[i]);
            memcpy(head.driver[i], paths[i].driver, sizeof(head.driver[i]));
            snprintf(head.reason[i], sizeof(head.reason[i]), "%s",
                     head.offload[i] ? "" : paths[i].reason);
        }
        if ((f = make(dir, &head, 1)) == NULL) {
            err = -errno;
        } else {
            snprintf(stats_dir, sizeof(stats_dir), "%s", dir);
            mapped = f;
            publish(f->stats);
        }
    }
    pthread_mutex_unlock(&lock);
    return err;
}

void ccree_stats_prepare(void)
{
    pthread_mutex_lock(&lock);
}

void ccree_stats_parent(void)
{
    pthread_mutex_unlock(&lock);
}

void ccree_stats_forked(void)
{
    struct ccree_stats_file *f = mapped != NULL ? make(stats_dir, mapped, 0) : NULL;

    memset(counters, 0, sizeof(counters));
    ccree_stats = f != NULL ? f->stats : counters;
    if (mapped != NULL) /* the parent's file is the parent's */
        munmap(mapped, sizeof(*mapped));
    mapped = f;
    pthread_mutex_unlock(&lock); /* taken by ccree_stats_prepare() */
}

void ccree_stats_software(size_t idx, const char *why)
{
    pthread_mutex_lock(&lock);
    if (mapped != NULL) {
        snprintf(mapped->reason[idx], sizeof(mapped->reason[idx]), "%s", why);
        atomic_thread_fence(memory_order_release); /* a reader sees the reason with the path */
        mapped->offload[idx] = 0;
    }
    pthread_mutex_unlock(&lock);
}

void ccree_stats_file(char *buf, size_t len)
{
    if (mapped != NULL)
        snprintf(buf, len, "%s/%ld", stats_dir, (long)getpid());
    else if (len > 0)
        *buf = '\0';
}
