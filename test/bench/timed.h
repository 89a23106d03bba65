/* The timed loop of evp_loop and kcapi_loop, timed as openssl speed times: alarm(SECONDS),
 * ops until SIGALRM, wall clock. Everything between alarm() and SIGALRM in a syscall trace
 * is the ops' (the callers set up before), which is how bench.sh counts syscalls per op. */
#ifndef BENCH_TIMED_H
#define BENCH_TIMED_H

#include <signal.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t timed_stop;

static void timed_alarm(int sig)
{
    (void)sig;
    timed_stop = 1;
}

/* Runs op(arg) until SECONDS have passed; stores the number of ops, returns the seconds
 * elapsed, or -1 when an op fails (returns 0). */
static double timed_run(unsigned seconds, int (*op)(void *), void *arg, long *ops)
{
    struct sigaction sa = { .sa_handler = timed_alarm, .sa_flags = SA_RESTART };
    struct timespec t0, t1;
    long n = 0;

    sigaction(SIGALRM, &sa, NULL);
    timed_stop = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);    /* before alarm(): a syscall where no vDSO serves */
    alarm(seconds);
    while (!timed_stop) {
        if (!op(arg)) {
            alarm(0);
            return -1;
        }
        n++;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *ops = n;
    return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

#endif
