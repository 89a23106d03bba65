/* The lockstep pair of the differential cmocka tests (test_aead, test_modes, test_mac). */
#ifndef CCREE_LOCKSTEP_H
#define CCREE_LOCKSTEP_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>

#include <cmocka.h>

#include "testutil.h"

/*
 * What every lockstep pair has: the subject (side 0) and the oracle (side 1, the default
 * provider) take the same calls, logged. strict: a failure of the subject must carry ccree's
 * own error (tu_failure_ok also takes exactly the oracle's). compared: the test's count of
 * calls compared.
 */
typedef struct {
    const char *subject;
    uint64_t seed;
    int strict;
    unsigned long *compared;
    tu_log log;
} tu_pair;

/* A difference from the oracle, reported with the calls that led to it and the seed: fails. */
static inline void tu_differ(const tu_pair *t, const char *what)
{
    fprintf(stderr, "%s and the default provider differ in %s\ncalls: %s\nseed: CCREE_TEST_SEED=%llu\n",
            t->subject, what, t->log.s, (unsigned long long)t->seed);
    fail();
}

/* One call's returns on both sides, the same, and its errors e[2] as they must be; returns r0. */
static inline int tu_same(tu_pair *t, int r0, int r1, const tu_errs e[2], const char *what)
{
    (*t->compared)++;
    tu_note(&t->log, "=%d", r1);
    if (r0 != r1)
        tu_differ(t, what);
    if (!r0 && t->strict && !tu_ccree_raised(&e[0]))
        tu_differ(t, "the error of a failure: none of ccree's");
    if (!r0 && !tu_failure_ok(t->subject, &e[0], &e[1]))
        tu_differ(t, "the error of a failure");
    return r0;
}

#endif
