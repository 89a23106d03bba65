/*
 * Statistics a running process shows: with the "stats" setting its counters live in a file
 * DIR/PID, mapped shared, so ccree-info reads them without stopping it. A forked child starts
 * its own file, with its counters at zero.
 */
#ifndef CCREE_STATS_H
#define CCREE_STATS_H

#include "afalg.h"

#define CCREE_STATS_MAGIC "ccree-s1"

struct ccree_stats_file {
    char magic[8];
    uint32_t nalgs;
    uint8_t offload[CCREE_NALGS];
    char name[CCREE_NALGS][CCREE_NAME_MAX];
    char driver[CCREE_NALGS][128];
    struct ccree_stats stats[CCREE_NALGS];
};

/*
 * Moves the counters into DIR/PID, with each algorithm's path and driver; it removes the files
 * of processes that are gone. 0, or -errno with nothing changed.
 */
int ccree_stats_open(const char *dir, const struct ccree_path *paths);
/* This process's file, or "" when its counters are in memory only. */
void ccree_stats_file(char *buf, size_t len);
/* In a forked child: the counters start at zero, in a file of its own where there is one. */
void ccree_stats_forked(void);

#endif
