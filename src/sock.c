#include "sock.h"

#include <dlfcn.h>
#include <pthread.h>

#include "afalg.h"
#include "stats.h"

static pthread_mutex_t tracked_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ccree_sock *tracked;
static unsigned int generation;

void ccree_pool_init(struct ccree_pool *p)
{
    pthread_mutex_init(&p->lock, NULL);
    p->n = 0;
}

void ccree_pool_clear(struct ccree_pool *p)
{
    while (p->n > 0)
        afalg_close(&p->fd[--p->n]);
    pthread_mutex_destroy(&p->lock);
}

int ccree_pool_take(struct ccree_pool *p)
{
    int fd = -1;

    pthread_mutex_lock(&p->lock);
    while (fd < 0 && p->n > 0) {
        p->n--;
        if (p->gen[p->n] == generation)
            fd = p->fd[p->n];
        else
            afalg_close(&p->fd[p->n]); /* the parent's */
    }
    pthread_mutex_unlock(&p->lock);
    return fd;
}

void ccree_pool_put(struct ccree_pool *p, struct ccree_sock *s)
{
    if (!ccree_sock_valid(s))
        return;
    ccree_sock_track(s, 0);
    pthread_mutex_lock(&p->lock);
    if (p->n < CCREE_POOL) {
        p->gen[p->n] = s->gen;
        p->fd[p->n++] = s->fd;
        s->fd = -1;
    }
    pthread_mutex_unlock(&p->lock);
    afalg_close(&s->fd);
}

void ccree_sock_init(struct ccree_sock *s)
{
    *s = (struct ccree_sock){ .fd = -1, .clone = -1 };
}

/* False when there is no socket; a socket inherited across fork() is dropped here. */
int ccree_sock_valid(struct ccree_sock *s)
{
    if (s->fd >= 0 && s->gen != generation)
        afalg_close(&s->fd);
    return s->fd >= 0;
}

void ccree_sock_set(struct ccree_sock *s, int fd)
{
    s->fd = fd;
    s->gen = generation;
}

void ccree_sock_track(struct ccree_sock *s, int on)
{
    if (s->tracked == on)
        return;
    pthread_mutex_lock(&tracked_lock);
    if (on) {
        s->prev = NULL;
        s->next = tracked;
        if (tracked != NULL)
            tracked->prev = s;
        tracked = s;
    } else {
        if (s->prev != NULL)
            s->prev->next = s->next;
        else
            tracked = s->next;
        if (s->next != NULL)
            s->next->prev = s->prev;
    }
    s->tracked = on;
    pthread_mutex_unlock(&tracked_lock);
}

void ccree_sock_close(struct ccree_sock *s)
{
    ccree_sock_track(s, 0);
    afalg_close(&s->fd);
}

static void prepare(void)
{
    struct ccree_sock *s;

    pthread_mutex_lock(&tracked_lock);
    for (s = tracked; s != NULL; s = s->next)
        s->clone = afalg_clone(s->fd);
}

static void parent(void)
{
    struct ccree_sock *s;

    for (s = tracked; s != NULL; s = s->next)
        afalg_close(&s->clone);
    pthread_mutex_unlock(&tracked_lock);
}

static void child(void)
{
    struct ccree_sock *s;

    generation++;
    ccree_stats_forked();
    for (s = tracked; s != NULL; s = s->next) {
        afalg_close(&s->fd);
        ccree_sock_set(s, s->clone < 0 ? -1 : s->clone);
        s->clone = -1;
    }
    pthread_mutex_unlock(&tracked_lock);
}

static int fork_ok;

static void setup_once(void)
{
    Dl_info info;

    /*
     * Fork handlers cannot be removed: keep this module mapped for the life of the process
     * (dlopen finds nothing to pin when it is linked into the program itself).
     */
    if (dladdr((void *)ccree_fork_setup, &info) != 0)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    fork_ok = pthread_atfork(prepare, parent, child) == 0;
}

int ccree_fork_setup(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, setup_once);
    return fork_ok;
}
