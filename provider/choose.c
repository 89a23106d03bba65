/*
 * Which path a request takes. With a number for offload-min, a threshold. With "auto", each
 * algorithm measures, per size class, how long a request takes in the kernel and in software
 * (offload-goal: wall-clock, or the calling thread's CPU time), and sends each request the
 * cheaper way; now and then it sends one the other way to keep that
 * measurement current, more rarely the slower that way is.
 */
#include <time.h>

#include "prov.h"

#define EXPLORE 32     /* the slower path gets one request in EXPLORE times how much slower */
#define RATIO_MAX 1024 /* ... it is, up to this */
#define REFRESH 32     /* one request in REFRESH on the faster path is timed too */

static size_t size_class(size_t len)
{
    size_t c = len > 1 ? 63 - (size_t)__builtin_clzll(len) : 0;

    return c < CCREE_CLASSES - 1 ? c : CCREE_CLASSES - 1;
}

uint64_t ccree_now(clockid_t clock)
{
    struct timespec t;

    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int ccree_measured(struct ccree_prov *p, size_t idx, size_t len, struct ccree_choice *ch)
{
    struct ccree_timing *t = &p->timing[idx];
    uint32_t k, s, left, ratio;
    size_t c;

    ch->idx = idx;
    ch->clock = p->clock;
    ch->cls = c = size_class(len);
    k = atomic_load_explicit(&t->ns[c][0], memory_order_relaxed);
    s = atomic_load_explicit(&t->ns[c][1], memory_order_relaxed);
    left = atomic_load_explicit(&t->left[c], memory_order_relaxed);
    ch->timed = 1;
    if (k == 0 || s == 0) /* measure each path once first */
        return ch->kernel = k == 0;
    if (left == 0) { /* the slower path's turn; the next in EXPLORE times the ratio */
        ratio = k < s ? (s + k - 1) / k : (k + s - 1) / s;
        left = EXPLORE * (ratio < RATIO_MAX ? ratio : RATIO_MAX);
        atomic_store_explicit(&t->left[c], left, memory_order_relaxed);
        return ch->kernel = k >= s;
    }
    atomic_store_explicit(&t->left[c], left - 1, memory_order_relaxed); /* a lost count is fine */
    ch->timed = left % REFRESH == 0;
    return ch->kernel = k < s;
}

void ccree_timed(struct ccree_prov *p, const struct ccree_choice *ch)
{
    _Atomic uint32_t *avg;
    uint64_t ns;
    uint32_t old;

    ns = ccree_now(ch->clock) - ch->start;
    ns = ns == 0 ? 1 : ns > UINT32_MAX ? UINT32_MAX : ns;
    avg = &p->timing[ch->idx].ns[ch->cls][!ch->kernel];
    old = atomic_load_explicit(avg, memory_order_relaxed);
    /* A moving average: one request moves it an eighth of the way. */
    atomic_store_explicit(avg, old == 0 ? (uint32_t)ns : old - old / 8 + (uint32_t)(ns / 8),
                          memory_order_relaxed);
}
