/*
 * Statistics a running process shows: with the "stats" setting its counters live in a file
 * DIR/PID, mapped shared, so ccree-info reads them without stopping it. A forked child starts
 * its own file, with its counters at zero.
 */
#ifndef CCREE_STATS_H
#define CCREE_STATS_H

#include <sys/types.h>

#include "afalg.h"

#define CCREE_STATS_MAGIC "ccree-s3"

struct ccree_stats_file {
    char magic[8];
    uint32_t nalgs;
    int32_t pid;       /* the process, as its PID namespace numbers it */
    uint64_t pidns[2]; /* that namespace: device and inode of /proc/self/ns/pid, or zeros */
    uint8_t offload[CCREE_NALGS];
    char name[CCREE_NALGS][CCREE_NAME_MAX];
    char driver[CCREE_NALGS][128];
    char reason[CCREE_NALGS][CCREE_REASON_MAX]; /* of a software algorithm */
    struct ccree_stats stats[CCREE_NALGS];
};

/*
 * Moves the counters into DIR/PID, with each algorithm's path and driver; it removes the files
 * this user made for processes of this PID namespace that are gone. 0, or -errno with nothing
 * changed (-EPERM: every user may write to DIR).
 */
int ccree_stats_open(const char *dir, const struct ccree_path *paths);
/* Algorithm idx runs in software in this process from now on, for this reason. */
void ccree_stats_software(size_t idx, const char *why);
/* This process's file, or "" when its counters are in memory only. */
void ccree_stats_file(char *buf, size_t len);
/* Around fork (src/sock.c): the parent holds the statistics still; the child gets its own. */
void ccree_stats_prepare(void);
void ccree_stats_parent(void);
/* In the child: the counters start at zero, in a file of its own where there is one. */
void ccree_stats_forked(void);

/* The PID an entry of DIR is named after: digits only, no leading zero; 0 for other names. */
pid_t ccree_stats_pid(const char *name);
/* This process's PID namespace, as the file records it. */
void ccree_stats_pidns(uint64_t ns[2]);
/*
 * Reads the entry of DIR (open as dirfd) named after pid, without following a link or
 * blocking: 0 for a regular file of this version and size, made by that process, with *owner
 * its owner; -EINVAL for anything else, or -errno.
 */
int ccree_stats_read(int dirfd, pid_t pid, struct ccree_stats_file *f, uid_t *owner);

#endif
